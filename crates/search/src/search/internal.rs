//! Internal search (paper §4, Figure 6): the explicit minimax over model calls written as the protocol's
//! linearized trace (the reference a model imitates), and a model's own trace read back into a tree and
//! compared with it.
//!
//! [`explicit_search`] runs [`minimax`] and writes its trace with [`write_trace`]. The trace is written in
//! value buckets: each node's moves are listed best first by the search's scoring (so the trace expands the
//! same children as the search, ties in the model's order), and each node's `%best_action` is the move the
//! search itself picks there (its best-valued move), so the trace, the tree and the decision agree. Where
//! two children's backed-up values fall in one bucket, the trace keeps the first of them while the search
//! compares the exact values; the tree and [`ExplicitSearch::choice`] are the search's.
//!
//! [`judge_trace`] reads a model-written trace with [`parse_trace`] (illegal moves, wrong states,
//! inconsistent backed-up values are the parser's issues, attached to their nodes) and compares its tree
//! with the explicit one; [`model_trace`] first asks a [`Completer`] to write it from the explicit trace's
//! prompt. Everything here is plain data for the CLI, its JSON and the app's panel.

use std::collections::HashMap;

use crate::inference::complete::{Completer, Completion, TraceModel};
use crate::inference::completer::TraceDecoding;
use crate::inference::evaluator::{EvalError, Evaluator, Scoring};
use crate::mav::buckets::{BucketError, Buckets};
use crate::mav::command::{StateFormat, TopK};
use crate::mav::state::MavState;
use crate::mav::trace::{
    NodeEval, ParsedTrace, SearchNode, TraceConfig, TraceError, TraceIssueKind, parse_trace, write_trace,
};
use crate::search::SearchError;
use crate::search::mcts::WorldModel;
use crate::search::minimax::{MinimaxNode, MinimaxParams, NodeEvaluation, minimax};
pub use crate::search::tree_node::TreeNode;

/// Why an internal search could not be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InternalError {
    /// The minimax itself failed (bad parameters, the root could not be evaluated).
    #[error(transparent)]
    Search(#[from] SearchError),
    /// The search's tree cannot be written as a trace.
    #[error("the explicit search's trace cannot be written: {0}")]
    Trace(#[from] TraceError),
    /// A model value that is no win probability.
    #[error("a model value cannot be put in a bucket: {0}")]
    Bucket(#[from] BucketError),
}

/// What to search and how to write it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InternalConfig {
    /// b: children per expanded node (≥ 1).
    pub breadth: usize,
    /// d: plies expanded below the root.
    pub depth: u32,
    /// Which value each move contributes.
    pub scoring: Scoring,
    /// The state lines of the node calls (`%FEN` for the shipped chess models).
    pub state_format: StateFormat,
    /// The model's value buckets.
    pub buckets: Buckets,
    /// How a trace-writing model decodes its own trace (free by default).
    pub decoding: TraceDecoding,
}

impl InternalConfig {
    /// The trace format's parameters.
    pub fn trace_config(&self) -> TraceConfig {
        TraceConfig {
            breadth: u32::try_from(self.breadth).unwrap_or(u32::MAX),
            depth: self.depth,
            state_format: self.state_format,
            top: TopK::All,
            buckets: self.buckets,
        }
    }

    /// The minimax parameters (rules world model, every move asked for, best action too).
    pub fn minimax_params(&self) -> MinimaxParams {
        MinimaxParams {
            breadth: self.breadth,
            depth: self.depth,
            scoring: self.scoring,
            world_model: WorldModel::Rules,
            ..MinimaxParams::default()
        }
    }
}

/// The explicit minimax with its tree and its trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExplicitSearch {
    /// The tree.
    pub tree: TreeNode,
    /// The whole trace (prompt and response), as the model would be trained to write it.
    pub trace: String,
    /// The trace's prompt: what an internal-search model is given.
    pub prompt: String,
    /// The move chosen at the root (UCI).
    pub choice: Option<String>,
    /// The root's backed-up value for the player to move.
    pub value: Option<f64>,
    /// Model requests made.
    pub model_calls: u64,
}

/// Runs the explicit minimax from `root` and writes its trace (see the module documentation).
pub fn explicit_search<S: MavState, E: Evaluator<S> + ?Sized>(
    evaluator: &mut E,
    root: S,
    config: &InternalConfig,
) -> Result<ExplicitSearch, InternalError> {
    let result = minimax(evaluator, root, &config.minimax_params())?;
    let trace_root = trace_tree(&result.root, config.scoring, config.buckets)?;
    let example = write_trace(&trace_root, &config.trace_config())?;
    let mut tree = minimax_tree(&result.root, None);
    tree.mark_chosen_line();
    Ok(ExplicitSearch {
        choice: result.root.decision.as_ref().map(|d| d.text.clone()),
        value: result.value,
        tree,
        trace: example.text(),
        prompt: example.prompt(),
        model_calls: result.model_calls,
    })
}

/// The trace-format tree of a minimax tree: values as buckets, moves listed best first by `scoring`, the
/// best action the best-valued move; failed nodes left out (they took no part in the decision).
pub fn trace_tree<S: MavState>(
    node: &MinimaxNode<S>,
    scoring: Scoring,
    buckets: Buckets,
) -> Result<SearchNode<S>, BucketError> {
    let eval = match &node.evaluation {
        NodeEvaluation::Model(r) => {
            let mut scored: Vec<(f64, S::Action)> =
                r.moves.iter().filter_map(|m| Some((m.value(scoring)?, m.action))).collect();
            // Stable: equal values keep the model's order, as the search's expansion does.
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            let values = scored
                .iter()
                .map(|&(v, a)| Ok((a, buckets.bucket_of(v.clamp(0.0, 1.0))?)))
                .collect::<Result<Vec<_>, BucketError>>()?;
            NodeEval { best: scored.first().map(|x| x.1), values }
        }
        NodeEvaluation::Terminal(_) | NodeEvaluation::Failed(_) => {
            NodeEval { values: Vec::new(), best: None }
        }
    };
    let mut children = Vec::new();
    for c in &node.children {
        if matches!(c.evaluation, NodeEvaluation::Failed(_)) {
            continue;
        }
        if let Some(a) = c.action {
            children.push((a, trace_tree(c, scoring, buckets)?));
        }
    }
    Ok(SearchNode { state: node.state.clone(), eval, children })
}

/// The display tree of a minimax node; `parent` gives the move's model values.
fn minimax_tree<S: MavState>(node: &MinimaxNode<S>, parent: Option<&MinimaxNode<S>>) -> TreeNode {
    let (mut move_max, mut move_mean) = (None, None);
    if let (Some(p), Some(a)) = (parent, node.action)
        && let NodeEvaluation::Model(r) = &p.evaluation
        && let Some(m) = r.moves.iter().find(|m| m.action == a)
    {
        move_max = m.dist.as_ref().map(|d| d.max_value());
        move_mean = m.dist.as_ref().map(|d| d.mean_value());
    }
    let note = match &node.evaluation {
        NodeEvaluation::Terminal(o) => Some(format!("game over: {}", o.result_str())),
        NodeEvaluation::Failed(why) => Some(format!("failed: {why}")),
        NodeEvaluation::Model(_) => None,
    };
    TreeNode {
        path: node.path.clone(),
        action: node.path.last().cloned(),
        move_max,
        move_mean,
        value: node.value,
        choice: node.decision.as_ref().map(|d| d.text.clone()),
        on_chosen_line: false,
        note,
        issues: Vec::new(),
        children: node.children.iter().map(|c| minimax_tree(c, Some(node))).collect(),
    }
}

/// One issue of a model-written trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IssueLine {
    /// The line of the whole trace (prompt included), 1-based.
    pub line: usize,
    /// The node it concerns.
    pub node: String,
    /// What is wrong.
    pub text: String,
    /// Whether it breaks the tree itself rather than being the model's judgement of a legal tree
    /// ([`crate::mav::trace::TraceIssueKind::breaks_the_tree`]).
    pub breaks_tree: bool,
}

/// How a model-written tree differs from the explicit one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The explicit search's move.
    pub explicit_choice: Option<String>,
    /// The model's move (its `Playing` line).
    pub model_choice: Option<String>,
    /// Whether both play the same move.
    pub same_choice: bool,
    /// Each difference, naming the node.
    pub differences: Vec<String>,
}

/// A model-written trace, judged.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelTraceReport {
    /// What the model wrote after the prompt.
    pub written: String,
    /// Tokens it wrote.
    pub tokens: usize,
    /// It ran out of context before finishing.
    pub truncated: bool,
    /// Moves the repeat guard kept the model from listing twice (see `Completion::repeats_avoided`).
    pub repeats_avoided: usize,
    /// How the trace was decoded (free, or constrained by the rules).
    pub decoding: TraceDecoding,
    /// Why the trace could not be read at all (its preamble or root prompt unusable).
    pub parse_error: Option<String>,
    /// The tree it describes (issues attached to their nodes).
    pub tree: Option<TreeNode>,
    /// Every issue, in line order.
    pub issues: Vec<IssueLine>,
    /// How it compares with the explicit search.
    pub comparison: Option<Comparison>,
    /// Its tree and the explicit one aligned node by node, with where they part.
    pub aligned: Option<super::trace_align::AlignedNode>,
}

/// The model's side of an internal search.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ModelSide {
    /// The package cannot write a trace; why, and what would.
    Unsupported {
        /// The explanation for the user.
        why: String,
    },
    /// The model wrote a trace.
    Written(Box<ModelTraceReport>),
    /// Asking the model failed.
    Failed {
        /// Why.
        why: String,
    },
}

/// Describes a trace issue for the user.
pub fn describe_issue(kind: &TraceIssueKind) -> String {
    match kind {
        TraceIssueKind::Malformed(why) => format!("malformed: {why}"),
        TraceIssueKind::IllegalMove(m) => format!("illegal move {m}"),
        TraceIssueKind::Evaluation(h) => format!("in its evaluation: {h}"),
        TraceIssueKind::UnknownNode(n) => format!("node {n} was not expanded from its parent (or repeats)"),
        TraceIssueKind::ExpansionMismatch { expected, got } => {
            format!("expanded [{}] but its own values give [{}]", got.join(" "), expected.join(" "))
        }
        TraceIssueKind::DecisionMismatch(why) => format!("decision: {why}"),
        TraceIssueKind::BackedUpValue { child, expected, got } => format!(
            "inconsistent backed-up value for {child}: wrote <ctrl{got}>, but the child's own selection seen from here is <ctrl{expected}>"
        ),
        TraceIssueKind::SelectionMismatch { expected, got } => {
            format!("selection: wrote {got}, expected {expected}")
        }
        TraceIssueKind::Missing(what) => format!("missing: {what}"),
    }
}

/// The display tree of a parsed trace (node 0 is the root).
pub fn parsed_tree<S: MavState>(t: &ParsedTrace<S>, buckets: Buckets) -> Option<TreeNode> {
    t.nodes.first()?;
    let mut by_node: HashMap<String, Vec<String>> = HashMap::new();
    for i in &t.issues {
        by_node.entry(i.node.clone()).or_default().push(format!(
            "line {}: {}",
            i.line,
            describe_issue(&i.kind)
        ));
    }
    let mut root = parsed_node(t, 0, buckets, &mut by_node, 0);
    root.mark_chosen_line();
    Some(root)
}

fn parsed_node<S: MavState>(
    t: &ParsedTrace<S>,
    i: usize,
    buckets: Buckets,
    issues: &mut HashMap<String, Vec<String>>,
    depth: usize,
) -> TreeNode {
    let n = &t.nodes[i];
    let centre = |b: u32| buckets.centre(b).ok();
    let mut move_value = None;
    if let Some(last) = n.path.last()
        && let Some(parent) =
            t.nodes.iter().find(|p| p.path.len() + 1 == n.path.len() && n.path.starts_with(&p.path))
        && let (Some(state), Some(eval)) = (&parent.state, &parent.eval)
        && let Some((_, b)) = eval.top.iter().find(|(a, _)| &state.action_to_text(*a) == last)
    {
        move_value = centre(*b);
    }
    let mut note = match &n.state {
        None if !n.path.is_empty() => Some("the path to this node is not legal".to_owned()),
        Some(s) => s.outcome().map(|o| format!("game over: {}", o.result_str())),
        None => None,
    };
    if n.selected.is_none() && note.is_none() {
        note = Some("no decision written".to_owned());
    }
    // Guard against a cycle of child indices in a malformed trace (each node sits one ply deeper).
    let children = if depth > t.nodes.len() {
        Vec::new()
    } else {
        n.children.iter().map(|&c| parsed_node(t, c, buckets, issues, depth + 1)).collect()
    };
    TreeNode {
        path: n.path.clone(),
        action: n.path.last().cloned(),
        move_max: move_value,
        move_mean: move_value,
        value: n.selected.as_ref().and_then(|(_, b)| centre(*b)),
        choice: n.selected.as_ref().map(|(m, _)| m.clone()).filter(|m| m != "invalid"),
        on_chosen_line: false,
        note,
        issues: issues.remove(&crate::mav::trace::node_name(&n.path)).unwrap_or_default(),
        children,
    }
}

/// Compares a model's tree with the explicit one, node by node along the paths both have.
pub fn compare(explicit: &TreeNode, model: &TreeNode, model_playing: Option<&str>) -> Comparison {
    let mut differences = Vec::new();
    diff_nodes(explicit, model, &mut differences);
    let explicit_choice = explicit.choice.clone();
    let model_choice = model_playing.map(str::to_owned);
    if model_choice.is_none() {
        differences.push("the model wrote no `Playing` line".to_owned());
    }
    Comparison {
        same_choice: explicit_choice.is_some() && explicit_choice == model_choice,
        explicit_choice,
        model_choice,
        differences,
    }
}

fn diff_nodes(e: &TreeNode, m: &TreeNode, out: &mut Vec<String>) {
    let name = e.name();
    let kids = |n: &TreeNode| n.children.iter().filter_map(|c| c.action.clone()).collect::<Vec<_>>();
    let (ek, mk) = (kids(e), kids(m));
    if ek != mk {
        out.push(format!("{name}: the search expands [{}], the model [{}]", ek.join(" "), mk.join(" ")));
    }
    if e.choice != m.choice {
        out.push(format!(
            "{name}: the search chooses {}, the model {}",
            e.choice.as_deref().unwrap_or("nothing"),
            m.choice.as_deref().unwrap_or("nothing")
        ));
    }
    for c in &e.children {
        if let Some(a) = &c.action
            && let Some(mc) = m.child(a)
        {
            diff_nodes(c, mc, out);
        }
    }
}

/// Reads a model-written trace (`prompt` followed by `completion`) and compares it with `explicit`.
pub fn judge_trace<S: MavState>(
    prompt: &str,
    completion: &Completion,
    explicit: &TreeNode,
    buckets: Buckets,
) -> ModelTraceReport {
    let text = format!("{prompt}{}", completion.text);
    let mut report = ModelTraceReport {
        written: completion.text.clone(),
        tokens: completion.tokens,
        truncated: completion.truncated,
        repeats_avoided: completion.repeats_avoided,
        decoding: completion.decoding,
        parse_error: None,
        tree: None,
        issues: Vec::new(),
        comparison: None,
        aligned: None,
    };
    match parse_trace::<S>(&text, buckets) {
        Err(e) => report.parse_error = Some(e.to_string()),
        Ok(t) => {
            report.issues = t
                .issues
                .iter()
                .map(|i| IssueLine {
                    line: i.line,
                    node: i.node.clone(),
                    text: describe_issue(&i.kind),
                    breaks_tree: i.kind.breaks_the_tree(completion.truncated),
                })
                .collect();
            report.tree = parsed_tree(&t, buckets);
            report.comparison =
                report.tree.as_ref().map(|tree| compare(explicit, tree, t.playing.as_deref()));
            report.aligned =
                report.tree.as_ref().map(|tree| super::trace_align::align(explicit, tree, buckets.k()));
        }
    }
    report
}

/// Asks `completer` to write its trace from the explicit search's prompt, then judges it.
pub fn model_trace<S: MavState>(
    completer: &mut (impl Completer + ?Sized),
    explicit: &ExplicitSearch,
    buckets: Buckets,
) -> Result<ModelTraceReport, EvalError> {
    let completion = completer.complete(&explicit.prompt)?;
    Ok(judge_trace::<S>(&explicit.prompt, &completion, &explicit.tree, buckets))
}

/// The model's side as data: its judged trace, or why there is none.
pub fn model_side<S: MavState>(
    completer: Option<&mut (dyn Completer + '_)>,
    unsupported: &str,
    explicit: &ExplicitSearch,
    buckets: Buckets,
) -> ModelSide {
    match completer {
        None => ModelSide::Unsupported { why: unsupported.to_owned() },
        Some(c) => match model_trace::<S>(c, explicit, buckets) {
            Ok(r) => ModelSide::Written(Box::new(r)),
            Err(e) => ModelSide::Failed { why: e.to_string() },
        },
    }
}

/// A whole internal search: the explicit one and the model's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InternalReport {
    /// The root position (FEN for chess).
    pub root: String,
    /// b.
    pub breadth: usize,
    /// d.
    pub depth: u32,
    /// The scoring of the explicit search.
    pub scoring: Scoring,
    /// The explicit minimax.
    pub explicit: ExplicitSearch,
    /// The model's own trace, or why there is none.
    pub model: ModelSide,
}

fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", 100.0 * v))
}

/// The tree as indented text lines: each node's move, the model's max and mean value of it, the backed-up
/// value and the choice; `*` marks the chosen line, `!` lines list a node's issues.
pub fn tree_lines(root: &TreeNode) -> Vec<String> {
    let mut out = Vec::new();
    tree_lines_rec(root, 0, &mut out);
    out
}

fn tree_lines_rec(n: &TreeNode, depth: usize, out: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    let mark = if n.on_chosen_line { "*" } else { " " };
    let head = match &n.action {
        None => "<root>".to_owned(),
        Some(a) if n.move_max == n.move_mean => format!("{a:<6} value {}", percent(n.move_max)),
        Some(a) => format!("{a:<6} max {} mean {}", percent(n.move_max), percent(n.move_mean)),
    };
    let mut line = format!("{mark} {indent}{head}  backed-up {}", percent(n.value));
    if let Some(c) = &n.choice {
        line.push_str(&format!("  chooses {c}"));
    }
    if let Some(note) = &n.note {
        line.push_str(&format!("  ({note})"));
    }
    out.push(line);
    for i in &n.issues {
        out.push(format!("! {indent}  {i}"));
    }
    for c in &n.children {
        tree_lines_rec(c, depth + 1, out);
    }
}

/// Runs a whole internal search with an opened package: the explicit minimax, then the model's own trace
/// when the package writes one (else the package's explanation).
pub fn run_internal<S: MavState>(
    model: &mut TraceModel<S>,
    root: S,
    config: &InternalConfig,
) -> Result<InternalReport, InternalError> {
    let fen = root.to_text();
    let (explicit, side) = match model {
        TraceModel::Writer(lm) => {
            let explicit = explicit_search::<S, _>(lm.as_mut(), root.clone(), config)?;
            let side = match config.decoding {
                TraceDecoding::Free => model_side::<S>(Some(lm.as_mut()), "", &explicit, config.buckets),
                TraceDecoding::Rules => {
                    match lm.complete_by_rules(&explicit.prompt, &root, &config.trace_config()) {
                        Ok(c) => ModelSide::Written(Box::new(judge_trace::<S>(
                            &explicit.prompt,
                            &c,
                            &explicit.tree,
                            config.buckets,
                        ))),
                        Err(e) => ModelSide::Failed { why: e.to_string() },
                    }
                }
            };
            (explicit, side)
        }
        TraceModel::ValuesOnly(e, why) => {
            let explicit = explicit_search(e.as_mut(), root, config)?;
            let side = ModelSide::Unsupported { why: why.clone() };
            (explicit, side)
        }
    };
    Ok(InternalReport {
        root: fen,
        breadth: config.breadth,
        depth: config.depth,
        scoring: config.scoring,
        explicit,
        model: side,
    })
}
