//! Internal-search traces (paper Figure 6): a minimax tree written depth-first as text, and read back.
//!
//! # Format
//!
//! ```text
//! Minimax breadth=3 depth=1
//! Evaluation for node: <root>
//! <mav game=chess> %state %top_all %best_action </mav>
//! [%state …]
//! [%top_all g3g6:<ctrl33> c2e2:<ctrl32> g3d6:<ctrl35> …]
//! [%best_action g3d6]
//! Expand from node <root>:
//! <root g3d6>
//! <root g3g6>
//! <root c2e2>
//! Evaluation for node: <root g3d6>
//! <mav game=chess> %prev_state %prev_action %state %top_all %best_action </mav>
//! [%prev_state …]
//! [%prev_action g3d6]
//! [%state …]
//! [%top_all …]
//! [%best_action d5d6]
//! Decision for node: <root g3d6>
//! Selecting: d5d6 : "<ctrl32>"
//! …
//! Decision for node: <root> g3d6 : "<ctrl31>" g3g6 : "<ctrl41>" c2e2 : "<ctrl31>"
//! Selecting: g3g6 : "<ctrl41>"
//! Playing g3g6!
//! ```
//!
//! Choices where the figure's text (an extracted model output) is ambiguous or inconsistent:
//!
//! - Commands use underscores (`%top_all`, `%best_action`, `%prev_state`) as everywhere else in the
//!   format (the PDF text lost them); the state lines use the configured format, `%state` (our chess
//!   `%state` string, not the figure's abbreviated FEN) or `%FEN`.
//! - A node is named by its move path: `<root>`, `<root g3d6>`, `<root g3d6 d5d6>`.
//! - Every node gets one full MAV call: the root `%S %top_K %best_action`, the others
//!   `%prev_S %prev_action %S %top_K %best_action` (the state after the move is an output: state tracking).
//! - A node above the depth limit that is not terminal is expanded into its `breadth` best moves by its
//!   own values, best first (ties in listing order), each on its own line as a node name. Children follow
//!   depth-first, each ending with its own decision.
//! - Decisions: a leaf selects its best action with its own listed value (the highest-valued listed move
//!   when the best action is not listed); a terminal node selects `invalid` with the value of the result
//!   for its player to move (win → bucket K−1, draw → the bucket of 0.5, loss → 0); an inner node lists
//!   each child with the child's selected value seen from this node, i.e. bucket K−1−v, and selects the
//!   highest (first among equals). The figure's inner decision uses `Selecting g3g6` without a colon and
//!   numbers that do not follow any consistent flip (and a move `g3g5` that is no child): it is a model
//!   output, and this parser flags exactly such slips.
//! - The root ends with `Playing MOVE!` (no `Playing` line when the root is terminal).
//! - The prompt is the preamble, the root's `Evaluation for node: <root>` line, its header and its input
//!   line(s); the response is everything after.

use std::collections::HashMap;

use super::buckets::Buckets;
use super::command::{Command, Layout, StateFormat, TopK};
use super::example::{Example, ExampleError, ExampleSpec, MoveOrder, MoveValue, render_example};
use super::response::{Hallucination, HallucinationKind, ParsedResponse, parse_response, read_prompt};
use super::state::MavState;
use super::vocab::parse_value_token;

/// The search parameters and the format of the node calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// How many children an expanded node gets.
    pub breadth: u32,
    /// How many plies below the root are expanded (depth 0 is a plain MAV call).
    pub depth: u32,
    /// `%state` or `%FEN` in the node calls.
    pub state_format: StateFormat,
    /// The `%top_k` of the node calls.
    pub top: TopK,
    /// The value buckets.
    pub buckets: Buckets,
}

/// One node's MAV answer: (move, bucket) in listing order, and the best action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEval<A> {
    /// Listed moves with their value buckets (for the player to move at the node).
    pub values: Vec<(A, u32)>,
    /// The best action (none in a terminal state).
    pub best: Option<A>,
}

/// A search tree node with its evaluation and expanded children.
#[derive(Debug, Clone)]
pub struct SearchNode<S: MavState> {
    /// The state.
    pub state: S,
    /// Its MAV evaluation (empty in a terminal state).
    pub eval: NodeEval<S::Action>,
    /// Expanded children, in expansion order.
    pub children: Vec<(S::Action, SearchNode<S>)>,
}

/// A tree that cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// A node's MAV call is invalid.
    #[error("node {node}: {error}")]
    Node {
        /// The node name.
        node: String,
        /// Why.
        error: ExampleError,
    },
    /// A child whose state is not its parent's state after the move.
    #[error("node {0}: the child's state is not the parent's state after the move")]
    ChildMismatch(String),
    /// The trace's first lines cannot be read (no preamble or no usable root prompt).
    #[error("line {line}: {reason}")]
    Prompt {
        /// The line.
        line: usize,
        /// Why.
        reason: String,
    },
    /// A header for the node calls that cannot be built.
    #[error(transparent)]
    Header(#[from] super::command::HeaderError),
}

/// A node's name in a trace: `<root>`, `<root e2e4 e7e5>`.
pub fn node_name(path: &[String]) -> String {
    if path.is_empty() { "<root>".to_owned() } else { format!("<root {}>", path.join(" ")) }
}

fn value_of_outcome<S: MavState>(state: &S, buckets: Buckets) -> Option<u32> {
    let o = state.outcome()?;
    buckets.bucket_of(o.value_for(state.to_move())).ok()
}

/// The decision of a leaf: its best action if listed, else its highest-valued listed move.
fn leaf_choice<A: Copy + PartialEq>(eval: &NodeEval<A>) -> Option<(A, u32)> {
    if let Some(b) = eval.best
        && let Some(&(a, v)) = eval.values.iter().find(|(a, _)| *a == b)
    {
        return Some((a, v));
    }
    let mut best: Option<(A, u32)> = None;
    for &(a, v) in &eval.values {
        if best.is_none_or(|(_, bv)| v > bv) {
            best = Some((a, v));
        }
    }
    best
}

/// The headers of the root call and of the other node calls.
pub fn node_layouts(game: crate::game::GameKind, cfg: &TraceConfig) -> Result<(Layout, Layout), TraceError> {
    let f = cfg.state_format;
    let root = Layout::new(game, &[Command::State(f), Command::Top(cfg.top), Command::BestAction])?;
    let child = Layout::new(
        game,
        &[
            Command::Prev(f),
            Command::PrevAction,
            Command::State(f),
            Command::Top(cfg.top),
            Command::BestAction,
        ],
    )?;
    Ok((root, child))
}

/// Where the node at `path` is written in a trace's `text` (a whole trace, or what a model wrote after the
/// prompt): from its `Evaluation for node:` line (the start of the text for the root when that line is in
/// the prompt) to the end of its `Selecting:` line, children included. `None` when its lines are not there.
pub fn node_span(text: &str, path: &[String]) -> Option<std::ops::Range<usize>> {
    let name = node_name(path);
    let evaluation = format!("Evaluation for node: {name}\n");
    let start = match text.find(&evaluation) {
        Some(i) => i,
        None if path.is_empty() => 0,
        None => return None,
    };
    let decision = start + text[start..].find(&format!("Decision for node: {name}"))?;
    let selecting = text[decision..].find('\n').map_or(text.len(), |i| decision + i + 1);
    let end = text[selecting..].find('\n').map_or(text.len(), |i| selecting + i);
    Some(start..end)
}

/// Builds a minimax tree: every node is evaluated with `eval`; nodes above `cfg.depth` that are not
/// terminal get their `cfg.breadth` best moves as children (best first, ties in listing order).
pub fn build_tree<S: MavState>(
    state: S,
    cfg: &TraceConfig,
    eval: &mut impl FnMut(&S) -> NodeEval<S::Action>,
) -> SearchNode<S> {
    build_rec(state, cfg, cfg.depth, eval)
}

fn build_rec<S: MavState>(
    state: S,
    cfg: &TraceConfig,
    left: u32,
    eval: &mut impl FnMut(&S) -> NodeEval<S::Action>,
) -> SearchNode<S> {
    let e =
        if state.outcome().is_some() { NodeEval { values: Vec::new(), best: None } } else { eval(&state) };
    let mut children = Vec::new();
    if left > 0 && state.outcome().is_none() {
        for a in expansion(&e.values, cfg.breadth) {
            if let Ok(next) = state.play(a) {
                children.push((a, build_rec(next, cfg, left - 1, eval)));
            }
        }
    }
    SearchNode { state, eval: e, children }
}

/// The `breadth` best listed moves, best first (ties in listing order).
pub fn expansion<A: Copy>(values: &[(A, u32)], breadth: u32) -> Vec<A> {
    let mut v: Vec<(A, u32)> = values.to_vec();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    v.into_iter().take(breadth as usize).map(|(a, _)| a).collect()
}

/// Writes a trace (see the module documentation) as an [`Example`] whose prompt ends after the root's
/// input lines.
pub fn write_trace<S: MavState>(root: &SearchNode<S>, cfg: &TraceConfig) -> Result<Example, TraceError> {
    let (root_layout, child_layout) = node_layouts(root.state.kind(), cfg)?;
    let mut lines = vec![format!("Minimax breadth={} depth={}", cfg.breadth, cfg.depth)];
    let mut path = Vec::new();
    let mut prompt_lines = 0;
    let (sel, _) =
        write_node(root, None, &mut path, cfg, (&root_layout, &child_layout), &mut lines, &mut prompt_lines)?;
    if let Some(m) = sel {
        lines.push(format!("Playing {m}!"));
    }
    Ok(Example::from_lines(lines, prompt_lines))
}

type Layouts<'a> = (&'a Layout, &'a Layout);

fn write_node<S: MavState>(
    node: &SearchNode<S>,
    parent: Option<(&S, S::Action)>,
    path: &mut Vec<String>,
    cfg: &TraceConfig,
    layouts: Layouts<'_>,
    lines: &mut Vec<String>,
    prompt_lines: &mut usize,
) -> Result<(Option<String>, u32), TraceError> {
    let name = node_name(path);
    let err = |error| TraceError::Node { node: name.clone(), error };
    lines.push(format!("Evaluation for node: {name}"));
    let layout = if parent.is_some() { layouts.1 } else { layouts.0 };
    let values: Vec<(S::Action, MoveValue)> =
        node.eval.values.iter().map(|(a, b)| (*a, MoveValue::Bucket(*b))).collect();
    let spec = ExampleSpec {
        layout,
        previous: parent,
        state: &node.state,
        values: &values,
        best: node.eval.best,
        order: MoveOrder::AsGiven,
        buckets: cfg.buckets,
    };
    let call = render_example(&spec).map_err(err)?;
    if parent.is_none() {
        *prompt_lines = lines.len() + call.prompt_line_count();
    }
    lines.extend(call.lines().iter().cloned());
    let text = |a| node.state.action_to_text(a);
    if !node.children.is_empty() {
        lines.push(format!("Expand from node {name}:"));
        for (a, _) in &node.children {
            path.push(text(*a));
            lines.push(node_name(path));
            path.pop();
        }
    }
    let mut decision = Vec::new();
    for (a, child) in &node.children {
        let next = node.state.play(*a).map_err(|_| TraceError::ChildMismatch(name.clone()))?;
        if next.hash64() != child.state.hash64() {
            return Err(TraceError::ChildMismatch(name.clone()));
        }
        path.push(text(*a));
        let (_, v) = write_node(child, Some((&node.state, *a)), path, cfg, layouts, lines, prompt_lines)?;
        path.pop();
        decision.push((text(*a), cfg.buckets.k() - 1 - v.min(cfg.buckets.k() - 1)));
    }
    let mut line = format!("Decision for node: {name}");
    for (m, v) in &decision {
        line.push_str(&format!(" {m} : \"<ctrl{v}>\""));
    }
    lines.push(line);
    let (selected, value) = if let Some(v) = value_of_outcome(&node.state, cfg.buckets) {
        (None, v)
    } else if decision.is_empty() {
        let (a, v) = leaf_choice(&node.eval)
            .ok_or_else(|| TraceError::Node { node: name.clone(), error: ExampleError::MissingBest })?;
        (Some(text(a)), v)
    } else {
        let mut best = &decision[0];
        for d in &decision[1..] {
            if d.1 > best.1 {
                best = d;
            }
        }
        (Some(best.0.clone()), best.1)
    };
    lines.push(format!("Selecting: {} : \"<ctrl{value}>\"", selected.as_deref().unwrap_or("invalid")));
    Ok((selected, value))
}

/// An inconsistency in a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceIssueKind {
    /// A line that is not part of the format, or not where it is.
    Malformed(String),
    /// A move that is not legal where it is played (node path, expansion, decision, selection, `Playing`).
    IllegalMove(String),
    /// A problem inside a node's MAV call (wrong state, illegal listed move, …).
    Evaluation(Hallucination),
    /// A node that was not expanded from its parent, or evaluated twice.
    UnknownNode(String),
    /// The expanded children are not the node's `breadth` best moves (or a node is expanded below the
    /// depth limit, or not expanded above it).
    ExpansionMismatch {
        /// The expected children.
        expected: Vec<String>,
        /// The children listed.
        got: Vec<String>,
    },
    /// A decision that does not list exactly the node's children.
    DecisionMismatch(String),
    /// A child value in a decision that is not the child's selected value seen from the parent.
    BackedUpValue {
        /// The child move.
        child: String,
        /// K − 1 − the child's selected bucket.
        expected: u32,
        /// The bucket written.
        got: u32,
    },
    /// A selection that is not the best of what it chooses from.
    SelectionMismatch {
        /// The expected `move : bucket`.
        expected: String,
        /// What was written.
        got: String,
    },
    /// A node without its evaluation or decision.
    Missing(String),
}

impl TraceIssueKind {
    /// Whether the issue breaks the tree itself — a move that is not legal where it stands, a wrong state or
    /// illegal listed move in a node's call, a line out of the format, an unknown node, a decision that does
    /// not list the node's children, or a node left without its lines in a trace that was not cut — rather
    /// than being the model's judgement of a legal tree (values, backed-up values, which children it expands,
    /// what it selects). Rules-constrained decoding rules out the first kind; only the model decides the
    /// second. A trace cut by the context misses its last nodes by design: `truncated` says so.
    pub fn breaks_the_tree(&self, truncated: bool) -> bool {
        match self {
            TraceIssueKind::Malformed(_)
            | TraceIssueKind::IllegalMove(_)
            | TraceIssueKind::Evaluation(_)
            | TraceIssueKind::UnknownNode(_)
            | TraceIssueKind::DecisionMismatch(_) => true,
            TraceIssueKind::Missing(_) => !truncated,
            TraceIssueKind::ExpansionMismatch { .. }
            | TraceIssueKind::BackedUpValue { .. }
            | TraceIssueKind::SelectionMismatch { .. } => false,
        }
    }
}

/// An inconsistency and its line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceIssue {
    /// The line.
    pub line: usize,
    /// The node it concerns.
    pub node: String,
    /// What is inconsistent.
    pub kind: TraceIssueKind,
}

/// A node as read from a trace.
#[derive(Debug, Clone)]
pub struct ParsedNode<S: MavState> {
    /// The move path from the root.
    pub path: Vec<String>,
    /// The state, when the path is legal.
    pub state: Option<S>,
    /// The MAV answer, when the evaluation block was readable.
    pub eval: Option<ParsedResponse<S>>,
    /// Children named in `Expand from node`.
    pub expanded: Vec<String>,
    /// The decision's (child, bucket) list.
    pub decision: Vec<(String, u32)>,
    /// The `Selecting` line: move (or `invalid`) and bucket.
    pub selected: Option<(String, u32)>,
    /// Indices of the child nodes in [`ParsedTrace::nodes`].
    pub children: Vec<usize>,
    line: usize,
}

/// A trace read back: the tree (node 0 is the root), the move played and every inconsistency.
#[derive(Debug, Clone)]
pub struct ParsedTrace<S: MavState> {
    /// The `breadth` of the preamble.
    pub breadth: u32,
    /// The `depth` of the preamble.
    pub depth: u32,
    /// All nodes, root first, in order of appearance.
    pub nodes: Vec<ParsedNode<S>>,
    /// The `Playing` move.
    pub playing: Option<String>,
    /// Every inconsistency found.
    pub issues: Vec<TraceIssue>,
}

/// Reads `"MOVE : "<ctrlN>""` pairs.
fn read_pairs(text: &str) -> Option<Vec<(String, u32)>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if !words.len().is_multiple_of(3) {
        return None;
    }
    words
        .chunks(3)
        .map(|c| {
            let v = c[2].strip_prefix('"')?.strip_suffix('"')?;
            (c[1] == ":").then_some(())?;
            Some((c[0].to_owned(), parse_value_token(v)?))
        })
        .collect()
}

fn read_path(name: &str) -> Option<Vec<String>> {
    if name == "<root>" {
        return Some(Vec::new());
    }
    let inner = name.strip_prefix("<root ")?.strip_suffix('>')?;
    Some(inner.split(' ').map(str::to_owned).collect())
}

/// Reads a trace tolerantly. Fails only when the preamble or the root prompt is unusable.
pub fn parse_trace<S: MavState>(text: &str, buckets: Buckets) -> Result<ParsedTrace<S>, TraceError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let (breadth, depth) = read_preamble(&lines)?;
    let rest = lines[2..].join("\n");
    let (root_layout, root_state, n) =
        read_prompt::<S>(&rest).map_err(|e| TraceError::Prompt { line: 3, reason: e.to_string() })?;
    let mut reader = TraceReader {
        lines: &lines,
        buckets,
        t: ParsedTrace { breadth, depth, nodes: Vec::new(), playing: None, issues: Vec::new() },
        index: HashMap::new(),
        current: Some(0),
    };
    // The root call: outputs follow its prompt.
    let mut i = 2 + n;
    let end = block_end(&lines, i);
    let eval = parse_response(&root_layout, &root_state, buckets, &lines[i..end].join("\n"), i + 1);
    let mut root = new_node(Vec::new(), Some(root_state), 2);
    root.eval = Some(eval);
    reader.t.nodes.push(root);
    reader.index.insert(Vec::new(), 0);
    i = end;
    while i < lines.len() {
        let line = lines[i];
        if line.is_empty() {
            i += 1;
        } else if let Some(name) = line.strip_prefix("Evaluation for node: ") {
            i = reader.evaluation(i, name);
        } else if let Some(name) = line.strip_prefix("Expand from node ").and_then(|r| r.strip_suffix(':')) {
            i = reader.expansion(i, name);
        } else if let Some(rest) = line.strip_prefix("Decision for node: ") {
            i = reader.decision(i, rest);
        } else if let Some(m) = line.strip_prefix("Playing ").and_then(|r| r.strip_suffix('!')) {
            reader.t.playing = Some(m.to_owned());
            i += 1;
        } else {
            let node = reader.current.map(|c| node_name(&reader.t.nodes[c].path)).unwrap_or_default();
            reader.issue(i, node, TraceIssueKind::Malformed(format!("unexpected line '{line}'")));
            i += 1;
        }
    }
    let mut t = reader.t;
    check_tree(&mut t, buckets);
    t.issues.sort_by_key(|x| x.line);
    Ok(t)
}

/// A node read from a trace at line `line` (1-based), before its evaluation, expansion and decision.
fn new_node<S: MavState>(path: Vec<String>, state: Option<S>, line: usize) -> ParsedNode<S> {
    ParsedNode {
        path,
        state,
        eval: None,
        expanded: Vec::new(),
        decision: Vec::new(),
        selected: None,
        children: Vec::new(),
        line,
    }
}

/// Where [`parse_trace`] is after the root's call: the lines, the tree so far, its nodes by path and the
/// node whose lines are being read.
struct TraceReader<'a, S: MavState> {
    /// The trace's lines.
    lines: &'a [&'a str],
    /// The value buckets.
    buckets: Buckets,
    /// The trace read so far.
    t: ParsedTrace<S>,
    /// Node indices by move path.
    index: HashMap<Vec<String>, usize>,
    /// The node the lines now belong to.
    current: Option<usize>,
}

impl<S: MavState> TraceReader<'_, S> {
    /// Records an issue at line index `i` (0-based) about node `node`.
    fn issue(&mut self, i: usize, node: String, kind: TraceIssueKind) {
        self.t.issues.push(TraceIssue { line: i + 1, node, kind });
    }

    /// Reads the node call that begins with `Evaluation for node: NAME` at line index `i`; returns the
    /// index of the line after it.
    fn evaluation(&mut self, i: usize, name: &str) -> usize {
        let lines = self.lines;
        let Some(path) = read_path(name) else {
            self.issue(i, name.to_owned(), TraceIssueKind::Malformed("bad node name".to_owned()));
            return block_end(lines, i + 2);
        };
        let parent = self.index.get(&path[..path.len().saturating_sub(1)]).copied();
        let known = parent.is_some_and(|p| path.last().is_some_and(|m| self.t.nodes[p].expanded.contains(m)));
        if path.is_empty() || !known || self.index.contains_key(&path) {
            self.issue(i, name.to_owned(), TraceIssueKind::UnknownNode(name.to_owned()));
        }
        let last = path.last().cloned().unwrap_or_default();
        let played = self.play_last(i, name, parent, &last);
        let header = lines.get(i + 1).copied().unwrap_or("");
        let end = block_end(lines, i + 2);
        let mut node = new_node(path.clone(), played.as_ref().map(|(_, s)| s.clone()), i + 1);
        match Layout::parse(header) {
            Err(e) => self.issue(i, name.to_owned(), TraceIssueKind::Malformed(e.to_string())),
            Ok(layout) => {
                let k = layout.input_count();
                if let Some((ps, s)) = &played {
                    for h in wrong_inputs(lines, i + 2, &layout, ps, &last) {
                        self.issue(i, name.to_owned(), TraceIssueKind::Evaluation(h));
                    }
                    let from = (i + 2 + k).min(end);
                    let text = lines[from..end].join("\n");
                    node.eval = Some(parse_response(&layout, s, self.buckets, &text, from + 1));
                }
            }
        }
        let id = self.t.nodes.len();
        if let Some(p) = parent {
            self.t.nodes[p].children.push(id);
        }
        self.index.entry(path).or_insert(id);
        self.t.nodes.push(node);
        self.current = Some(id);
        end
    }

    /// The move `last` played in the state of node `parent` (when it has one): (the parent's state, the
    /// state after it), or an issue at line index `i` when it is not legal there.
    fn play_last(&mut self, i: usize, name: &str, parent: Option<usize>, last: &str) -> Option<(S, S)> {
        let ps = parent.and_then(|p| self.t.nodes[p].state.clone())?;
        match ps.parse_action(last) {
            Ok(a) => ps.play(a).ok().map(|s| (ps.clone(), s)),
            Err(_) => {
                self.issue(i, name.to_owned(), TraceIssueKind::IllegalMove(last.to_owned()));
                None
            }
        }
    }

    /// Reads `Expand from node NAME:` at line index `i` and the child names after it; returns the index of
    /// the line after them.
    fn expansion(&mut self, i: usize, name: &str) -> usize {
        let node = read_path(name).and_then(|p| self.index.get(&p).copied());
        let mut next = i + 1;
        let mut kids = Vec::new();
        while let Some(path) = self.lines.get(next).and_then(|l| read_path(l)) {
            kids.push(path.last().cloned().unwrap_or_default());
            next += 1;
        }
        match node {
            Some(id) => self.t.nodes[id].expanded = kids,
            None => self.issue(i, name.to_owned(), TraceIssueKind::UnknownNode(name.to_owned())),
        }
        next
    }

    /// Reads `Decision for node: NAME PAIRS` (`rest`: what follows the colon) at line index `i` and its
    /// `Selecting` line; returns the index of the line after them.
    fn decision(&mut self, i: usize, rest: &str) -> usize {
        let (name, pairs) = match rest.split_once('>') {
            Some((n, p)) => (format!("{n}>"), p),
            None => (rest.to_owned(), ""),
        };
        let node = read_path(&name).and_then(|p| self.index.get(&p).copied());
        let selecting =
            self.lines.get(i + 1).and_then(|l| l.strip_prefix("Selecting: ")).and_then(read_pairs);
        let mut next = i + 1;
        match (node, read_pairs(pairs)) {
            (Some(id), Some(d)) => {
                self.t.nodes[id].decision = d;
                match selecting.as_deref() {
                    Some([one]) => {
                        self.t.nodes[id].selected = Some(one.clone());
                        next += 1;
                    }
                    _ => self.issue(
                        i,
                        name.clone(),
                        TraceIssueKind::Malformed(
                            "expected `Selecting: MOVE : \"<ctrlN>\"` after the decision".to_owned(),
                        ),
                    ),
                }
                let path = &self.t.nodes[id].path;
                self.current =
                    path.len().checked_sub(1).and_then(|_| self.index.get(&path[..path.len() - 1]).copied());
            }
            (None, _) => self.issue(i, name.clone(), TraceIssueKind::UnknownNode(name.clone())),
            (_, None) => self.issue(
                i,
                name.clone(),
                TraceIssueKind::Malformed("a decision lists `MOVE : \"<ctrlN>\"` pairs".to_owned()),
            ),
        }
        next
    }
}

/// The first two lines of a trace: `Minimax breadth=B depth=D` (returned) and the root's
/// `Evaluation for node: <root>`.
fn read_preamble(lines: &[&str]) -> Result<(u32, u32), TraceError> {
    let pre = lines.first().copied().unwrap_or("");
    let (breadth, depth) = pre
        .strip_prefix("Minimax breadth=")
        .and_then(|r| r.split_once(" depth="))
        .and_then(|(b, d)| Some((b.parse().ok()?, d.parse().ok()?)))
        .ok_or(TraceError::Prompt { line: 1, reason: "expected `Minimax breadth=B depth=D`".to_owned() })?;
    if lines.get(1).copied() != Some("Evaluation for node: <root>") {
        return Err(TraceError::Prompt {
            line: 2,
            reason: "expected `Evaluation for node: <root>`".to_owned(),
        });
    }
    Ok((breadth, depth))
}

/// The inputs of a node's prompt (its lines from index `first`, as `layout` lists them) that do not repeat
/// what the trace already knows: the parent's state `parent` in each format asked, and the move `last` that
/// led here.
fn wrong_inputs<S: MavState>(
    lines: &[&str],
    first: usize,
    layout: &Layout,
    parent: &S,
    last: &str,
) -> Vec<Hallucination> {
    let mut out = Vec::new();
    for (j, role) in layout.inputs().iter().enumerate() {
        let got = lines.get(first + j).copied().unwrap_or("");
        let want = match role {
            super::command::Role::PrevState(f) => parent.render(*f).ok(),
            super::command::Role::PrevAction => Some(last.to_owned()),
            _ => None,
        };
        let Some(want) = want else { continue };
        let want = format!("[{} {want}]", role.command());
        if got != want {
            out.push(Hallucination {
                line: first + j + 1,
                column: 1,
                command: Some(role.command().to_string()),
                kind: HallucinationKind::WrongState { expected: want, got: got.to_owned() },
            });
        }
    }
    out
}

/// The end of a run of `[` lines starting at `from`.
fn block_end(lines: &[&str], from: usize) -> usize {
    let mut e = from.min(lines.len());
    while e < lines.len() && lines[e].starts_with('[') {
        e += 1;
    }
    e
}

fn check_tree<S: MavState>(t: &mut ParsedTrace<S>, buckets: Buckets) {
    let k = buckets.k();
    let mut issues = Vec::new();
    for n in &t.nodes {
        let name = node_name(&n.path);
        let mut push = |kind| issues.push(TraceIssue { line: n.line, node: name.clone(), kind });
        if let Some(e) = &n.eval {
            for h in &e.hallucinations {
                push(TraceIssueKind::Evaluation(h.clone()));
            }
        }
        let Some(state) = &n.state else { continue };
        let text = |a| state.action_to_text(a);
        let terminal = state.outcome().is_some();
        let values: Vec<(S::Action, u32)> = n.eval.as_ref().map(|e| e.top.clone()).unwrap_or_default();
        let depth = n.path.len() as u32;
        let expected: Vec<String> = if terminal || depth >= t.depth {
            Vec::new()
        } else {
            expansion(&values, t.breadth).into_iter().map(text).collect()
        };
        if expected != n.expanded {
            push(TraceIssueKind::ExpansionMismatch { expected, got: n.expanded.clone() });
        }
        for m in &n.expanded {
            if state.parse_action(m).is_err() {
                push(TraceIssueKind::IllegalMove(m.clone()));
            }
        }
        let Some((sel_move, sel_value)) = n.selected.clone() else {
            push(TraceIssueKind::Missing("no decision".to_owned()));
            continue;
        };
        let decided: Vec<&String> = n.decision.iter().map(|(m, _)| m).collect();
        let kids: Vec<&String> = n.expanded.iter().collect();
        if decided != kids {
            push(TraceIssueKind::DecisionMismatch(format!(
                "the decision lists [{}] but the children are [{}]",
                n.decision.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>().join(" "),
                n.expanded.join(" ")
            )));
        }
        for (m, v) in &n.decision {
            let child = n.children.iter().map(|&c| &t.nodes[c]).find(|c| c.path.last() == Some(m));
            if let Some((_, cv)) = child.and_then(|c| c.selected.clone()) {
                let expected = k.saturating_sub(1).saturating_sub(cv.min(k - 1));
                if expected != *v {
                    push(TraceIssueKind::BackedUpValue { child: m.clone(), expected, got: *v });
                }
            }
        }
        let expected = if terminal {
            value_of_outcome(state, buckets).map(|v| ("invalid".to_owned(), v))
        } else if n.decision.is_empty() {
            let eval = NodeEval { values: values.clone(), best: n.eval.as_ref().and_then(|e| e.best) };
            leaf_choice(&eval).map(|(a, v)| (text(a), v))
        } else {
            let mut best = n.decision[0].clone();
            for d in &n.decision[1..] {
                if d.1 > best.1 {
                    best = d.clone();
                }
            }
            Some(best)
        };
        if let Some((em, ev)) = expected
            && (em != sel_move || ev != sel_value)
        {
            push(TraceIssueKind::SelectionMismatch {
                expected: format!("{em} : <ctrl{ev}>"),
                got: format!("{sel_move} : <ctrl{sel_value}>"),
            });
        }
    }
    if let Some(root) = t.nodes.first() {
        let sel = root.selected.as_ref().map(|(m, _)| m.clone()).filter(|m| m != "invalid");
        if sel != t.playing {
            issues.push(TraceIssue {
                line: root.line,
                node: "<root>".to_owned(),
                kind: TraceIssueKind::SelectionMismatch {
                    expected: format!("Playing {}", sel.unwrap_or_else(|| "nothing".to_owned())),
                    got: format!("Playing {}", t.playing.clone().unwrap_or_else(|| "nothing".to_owned())),
                },
            });
        }
    }
    t.issues.extend(issues);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_span_runs_from_its_evaluation_to_its_selection() {
        let text = "Minimax breadth=1 depth=1\nEvaluation for node: <root>\n[%top_all a:<ctrl1>]\n\
                    Expand from node <root>:\n<root a>\nEvaluation for node: <root a>\n[%top_all b:<ctrl2>]\n\
                    Decision for node: <root a>\nSelecting: b : \"<ctrl2>\"\n\
                    Decision for node: <root> a : \"<ctrl61>\"\nSelecting: a : \"<ctrl61>\"\nPlaying a!";
        let a = node_span(text, &["a".to_owned()]).expect("the child");
        assert!(text[a.clone()].starts_with("Evaluation for node: <root a>\n"));
        assert!(text[a].ends_with("Selecting: b : \"<ctrl2>\""));
        let root = node_span(text, &[]).expect("the root");
        assert!(text[root].ends_with("Selecting: a : \"<ctrl61>\""));
        // What a model wrote after the prompt: the root starts the text.
        let written = &text[text.find("[%top_all a").expect("in the text")..];
        assert_eq!(node_span(written, &[]).map(|r| r.start), Some(0));
        assert_eq!(node_span(text, &["z".to_owned()]), None);
    }
}
