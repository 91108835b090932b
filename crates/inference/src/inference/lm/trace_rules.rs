//! Rules-constrained trace decoding (`--trace-decoding rules`): the model writes its internal-search trace
//! (paper §4; layout in [`crate::mav::trace`]) one token at a time as in free decoding, but wherever the
//! trace's grammar says a move of a node's position comes, only that position's legal moves can be written,
//! and the lines the rules know are written by the rules:
//!
//! - **by the rules:** the trace's fixed words, node names, each node's call header and input lines, the
//!   state line of every child (its parent's state after the move), a finished game's `%top` line and
//!   `invalid` selection, and the child list of each decision (the expanded children, in order);
//! - **by the model, among what the rules allow:** each node's `%top` list (every legal move once, in the
//!   order the model writes them, as constrained decoding of one call does), its `%best_action` (one of the
//!   listed moves), the children it expands (`breadth` legal moves not yet expanded, in the model's order),
//!   each `Selecting` move (a child, or a listed move at a leaf) and the root's `Playing` move;
//! - **by the model alone:** every value token (the most likely of the K bucket tokens, wherever a value
//!   goes: listed moves, backed-up values, selections). These are the model's own judgements and are not
//!   corrected: an inconsistent backup still shows as an issue of the trace.
//!
//! So the tree is always a legal tree of the asked breadth and depth, and what the trace says about it is
//! the model's. It is no measure of the model's world model: free decoding is that reference.
//!
//! A trace that would run past the model's context is cut at the last node boundary (the end of a node's
//! decision, or just before a node's `Evaluation for node:` line) and marked truncated.

use super::constrained::ConstrainedRow;
use super::prompt::{PromptError, prompt_text, tracked_lines};
use super::tokens::{FormatTokens, TokensError};
use crate::inference::evaluator::{EvalError, EvalRequest};
use crate::mav::example::{ExampleSpec, MoveOrder, render_example};
use crate::mav::state::MavState;
use crate::mav::trace::{TraceConfig, TraceError, node_layouts, node_name};

/// Why a rules-constrained trace could not be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceRulesError {
    /// The model call failed.
    #[error("the model failed while writing the trace: {0}")]
    Model(String),
    /// A piece of the trace the vocabulary cannot write (a tokenizer that does not match the format).
    #[error(transparent)]
    Tokens(#[from] TokensError),
    /// A node call's lines cannot be written.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The trace's layout cannot be built.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A move the vocabulary has no token for.
    #[error("the model's vocabulary cannot write the move {0}")]
    Move(String),
    /// The prompt alone fills the context.
    #[error("the prompt takes {needed} tokens; the model's context is {context}")]
    PromptTooLong {
        /// Tokens in the prompt.
        needed: usize,
        /// The context length.
        context: usize,
    },
}

impl From<TraceRulesError> for EvalError {
    fn from(e: TraceRulesError) -> EvalError {
        match e {
            TraceRulesError::PromptTooLong { needed, context } => {
                EvalError::ContextTooLong { needed, context }
            }
            other => EvalError::Backend(other.to_string()),
        }
    }
}

/// What a rules-constrained trace came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesTrace {
    /// The text written after the prompt.
    pub text: String,
    /// Tokens written after the prompt (the cut ones included when truncated).
    pub tokens: usize,
    /// The context ran out: `text` ends at the last node boundary.
    pub truncated: bool,
}

/// The context ran out (internal signal).
struct Full;

enum Stop {
    Full,
    Error(TraceRulesError),
}

impl From<TraceRulesError> for Stop {
    fn from(e: TraceRulesError) -> Stop {
        Stop::Error(e)
    }
}

impl From<TokensError> for Stop {
    fn from(e: TokensError) -> Stop {
        Stop::Error(e.into())
    }
}

impl From<PromptError> for Stop {
    fn from(e: PromptError) -> Stop {
        Stop::Error(e.into())
    }
}

impl From<Full> for Stop {
    fn from(_: Full) -> Stop {
        Stop::Full
    }
}

/// The decoder's side: the logits after the tokens fed so far.
struct Writer<'a, F> {
    tokens: &'a FormatTokens,
    step: F,
    logits: Vec<f32>,
    /// Tokens in the context (prompt included).
    used: usize,
    context: usize,
    /// Ids written after the prompt.
    written: Vec<u32>,
    /// `written.len()` at the last node boundary.
    boundary: usize,
}

impl<F: FnMut(u32) -> Result<Vec<f32>, String>> Writer<'_, F> {
    fn feed(&mut self, token: u32) -> Result<(), Stop> {
        if self.used >= self.context {
            return Err(Stop::Full);
        }
        self.written.push(token);
        self.used += 1;
        if self.used < self.context {
            self.logits = (self.step)(token).map_err(|e| Stop::Error(TraceRulesError::Model(e)))?;
        }
        Ok(())
    }

    fn force(&mut self, text: &str) -> Result<(), Stop> {
        for t in self.tokens.text(text)? {
            self.feed(t)?;
        }
        Ok(())
    }

    /// The most likely of the bucket tokens, written; its bucket.
    fn value(&mut self) -> Result<u32, Stop> {
        let values = &self.tokens.values;
        let mut best = 0;
        for (i, &id) in values.iter().enumerate() {
            let l = |id: u32| self.logits.get(id as usize).copied().unwrap_or(f32::NEG_INFINITY);
            if l(id) > l(values[best]) {
                best = i;
            }
        }
        self.feed(values[best])?;
        Ok(u32::try_from(best).unwrap_or(u32::MAX))
    }

    /// Writes one of `options` (token sequences, each ending with its follower token so that no option is a
    /// prefix of another), one token at a time, each the most likely of the tokens that keep an option
    /// open; the index of the one written.
    fn choose(&mut self, options: &[Vec<u32>]) -> Result<usize, Stop> {
        let mut open: Vec<usize> = (0..options.len()).collect();
        let mut depth = 0;
        loop {
            let mut best: Option<(u32, f32)> = None;
            for &i in &open {
                if let Some(&t) = options[i].get(depth) {
                    let l = self.logits.get(t as usize).copied().unwrap_or(f32::NEG_INFINITY);
                    if best.is_none_or(|(_, b)| l > b) {
                        best = Some((t, l));
                    }
                }
            }
            let Some((t, _)) = best else {
                return open.first().copied().ok_or(Stop::Error(TraceRulesError::Move("(none)".into())));
            };
            open.retain(|&i| options[i].get(depth) == Some(&t));
            self.feed(t)?;
            depth += 1;
            if let [only] = open.as_slice()
                && options[*only].len() == depth
            {
                return Ok(*only);
            }
        }
    }

    /// Token sequences of `moves`, each followed by `follower`'s tokens.
    fn move_options(&self, moves: &[String], follower: &str) -> Result<Vec<Vec<u32>>, Stop> {
        let end = self.tokens.text(follower)?;
        moves
            .iter()
            .map(|m| {
                let mut t = self.tokens.move_tokens(m).ok_or_else(|| TraceRulesError::Move(m.clone()))?;
                t.extend(&end);
                Ok(t)
            })
            .collect()
    }
}

/// Writes the trace that follows `prompt_len` prompt tokens, from `root`, as the module describes.
/// `logits` are the model's after the prompt; `step` feeds one token and returns the logits after it.
pub fn write_rules_trace<S: MavState>(
    tokens: &FormatTokens,
    root: &S,
    cfg: &TraceConfig,
    prompt_len: usize,
    context: usize,
    logits: Vec<f32>,
    step: impl FnMut(u32) -> Result<Vec<f32>, String>,
) -> Result<RulesTrace, TraceRulesError> {
    if prompt_len >= context {
        return Err(TraceRulesError::PromptTooLong { needed: prompt_len + 1, context });
    }
    let mut w = Writer { tokens, step, logits, used: prompt_len, context, written: Vec::new(), boundary: 0 };
    let layouts = node_layouts(root.kind(), cfg)?;
    let mut path = Vec::new();
    let result = (|| -> Result<(), Stop> {
        let selected = node(&mut w, root, None, &mut path, cfg.depth, cfg, &layouts)?;
        if let Some(options) = selected {
            w.force("\nPlaying ")?;
            let opts = w.move_options(&options, "!")?;
            w.choose(&opts)?;
            w.boundary = w.written.len();
        }
        Ok(())
    })();
    let truncated = match result {
        Ok(()) => false,
        Err(Stop::Full) => true,
        Err(Stop::Error(e)) => return Err(e),
    };
    let tokens_written = w.written.len();
    let kept = if truncated { &w.written[..w.boundary] } else { &w.written[..] };
    let text = tokens
        .tokenizer
        .decode(kept)
        .map_err(|e| TraceRulesError::Model(format!("the trace's tokens cannot be decoded: {e}")))?;
    Ok(RulesTrace { text, tokens: tokens_written, truncated })
}

type Layouts = (crate::mav::command::Layout, crate::mav::command::Layout);

/// Writes one node (its evaluation, expansion, children and decision); returns the moves its parent's
/// `Playing` line may name (for the root: what it chooses among) and nothing for a finished game.
fn node<S: MavState, F: FnMut(u32) -> Result<Vec<f32>, String>>(
    w: &mut Writer<'_, F>,
    state: &S,
    parent: Option<(&S, S::Action)>,
    path: &mut Vec<String>,
    left: u32,
    cfg: &TraceConfig,
    layouts: &Layouts,
) -> Result<Option<Vec<String>>, Stop> {
    let name = node_name(path);
    let layout = if parent.is_some() { &layouts.1 } else { &layouts.0 };
    if parent.is_some() {
        w.boundary = w.written.len();
        w.force(&format!("\nEvaluation for node: {name}\n"))?;
    }
    let text = |a: S::Action| state.action_to_text(a);
    let legal = if state.outcome().is_some() { Vec::new() } else { state.legal_actions() };
    if legal.is_empty() {
        finished_node(w, state, parent, layout, &name, cfg)?;
        return Ok(None);
    }
    if let Some((prev, a)) = parent {
        let mut req = EvalRequest::values(state.clone());
        req.previous = Some((prev.clone(), a));
        let mut lines = prompt_text(layout, &req)?;
        for l in tracked_lines(layout, state)? {
            lines.push_str(&l);
            lines.push('\n');
        }
        w.force(&lines)?;
    }
    // The %top line and %best_action: constrained decoding of one call.
    let names: Vec<String> = legal.iter().map(|&a| text(a)).collect();
    let listed = top_line(w, &names, cfg)?;
    let children = if left > 0 { expand(w, state, &legal, path, cfg, &name)? } else { Vec::new() };
    for &a in &children {
        let Ok(next) = state.play(a) else { continue };
        path.push(text(a));
        node(w, &next, Some((state, a)), path, left - 1, cfg, layouts)?;
        path.pop();
    }
    w.force(&format!("\nDecision for node: {name}"))?;
    for &a in &children {
        w.force(&format!(" {} : \"", text(a)))?;
        w.value()?;
        w.force("\"")?;
    }
    w.force("\nSelecting: ")?;
    let among: Vec<String> = if children.is_empty() {
        if listed.is_empty() { names.clone() } else { listed }
    } else {
        children.iter().map(|&a| text(a)).collect()
    };
    let opts = w.move_options(&among, " ")?;
    w.choose(&opts)?;
    w.force(": \"")?;
    w.value()?;
    w.force("\"")?;
    w.boundary = w.written.len();
    Ok(Some(among))
}

/// Writes a finished game's node after its name: the call's lines as the rules write them
/// (`[%top_all invalid : "1-0"]`) and its `invalid` selection.
fn finished_node<S: MavState, F: FnMut(u32) -> Result<Vec<f32>, String>>(
    w: &mut Writer<'_, F>,
    state: &S,
    parent: Option<(&S, S::Action)>,
    layout: &crate::mav::command::Layout,
    name: &str,
    cfg: &TraceConfig,
) -> Result<(), Stop> {
    let spec = ExampleSpec {
        layout,
        previous: parent,
        state,
        values: &[],
        best: None,
        order: MoveOrder::AsGiven,
        buckets: cfg.buckets,
    };
    let call = render_example(&spec)
        .map_err(|error| TraceError::Node { node: name.to_owned(), error })
        .map_err(TraceRulesError::from)?;
    let skip = if parent.is_some() { 0 } else { call.prompt_line_count() };
    let lines = &call.lines()[skip..];
    if !lines.is_empty() {
        w.force(&lines.join("\n"))?;
    }
    w.force(&format!("\nDecision for node: {name}\nSelecting: invalid : \""))?;
    w.value()?;
    w.force("\"")?;
    w.boundary = w.written.len();
    Ok(())
}

/// Writes a node's `%top` list and `%best_action` by constrained decoding of one call among the legal
/// moves `names`; the moves listed, in the order written.
fn top_line<F: FnMut(u32) -> Result<Vec<f32>, String>>(
    w: &mut Writer<'_, F>,
    names: &[String],
    cfg: &TraceConfig,
) -> Result<Vec<String>, Stop> {
    let candidates: Vec<Vec<u32>> = names
        .iter()
        .map(|m| w.tokens.move_tokens(m).ok_or_else(|| TraceRulesError::Move(m.clone())))
        .collect::<Result<_, _>>()?;
    let mut row = ConstrainedRow::new(w.tokens, Vec::new(), cfg.top, candidates, true, None)?;
    loop {
        let logits = std::mem::take(&mut w.logits);
        let next = row.next(&logits);
        w.logits = logits;
        match next {
            Some(t) => w.feed(t)?,
            None => break,
        }
        if row.finished() {
            break;
        }
    }
    Ok(row.written.iter().map(|(i, _)| names[*i].clone()).collect())
}

/// Writes a node's expansion (`Expand from node …:` and one `<root …>` line per child): `breadth` legal
/// moves not yet expanded, in the model's order; the children chosen.
fn expand<S: MavState, F: FnMut(u32) -> Result<Vec<f32>, String>>(
    w: &mut Writer<'_, F>,
    state: &S,
    legal: &[S::Action],
    path: &[String],
    cfg: &TraceConfig,
    name: &str,
) -> Result<Vec<S::Action>, Stop> {
    let mut children: Vec<S::Action> = Vec::new();
    w.force(&format!("\nExpand from node {name}:"))?;
    let count = usize::try_from(cfg.breadth).unwrap_or(usize::MAX).min(legal.len());
    for _ in 0..count {
        let open: Vec<S::Action> = legal.iter().copied().filter(|a| !children.contains(a)).collect();
        let open_names: Vec<String> = open.iter().map(|&a| state.action_to_text(a)).collect();
        let mut head = String::from("\n<root");
        for p in path.iter() {
            head.push(' ');
            head.push_str(p);
        }
        head.push(' ');
        w.force(&head)?;
        let opts = w.move_options(&open_names, ">")?;
        let i = w.choose(&opts)?;
        children.push(open[i]);
    }
    Ok(children)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::hex::HexState;
    use crate::mav::buckets::Buckets;
    use crate::mav::command::{StateFormat, TopK};
    use crate::mav::tokenizer::Tokenizer;
    use crate::mav::trace::{SearchNode, TraceIssueKind, build_tree, parse_trace, write_trace};

    fn format_tokens(k: u32) -> FormatTokens {
        let t = Tokenizer::new();
        let values: Vec<u32> =
            (0..k).map(|i| t.id_of(&format!("<ctrl{i}>")).expect("a value token")).collect();
        let eos = t.eos_id();
        FormatTokens::new(t, &values, eos).expect("tokens")
    }

    fn cfg(breadth: u32, depth: u32, state_format: StateFormat) -> TraceConfig {
        TraceConfig { breadth, depth, state_format, top: TopK::All, buckets: Buckets::mav() }
    }

    /// The prompt of a trace from `root`: the explicit writer's over any tree.
    fn prompt<S: MavState>(root: &S, c: &TraceConfig) -> String {
        let tree: SearchNode<S> = build_tree(root.clone(), &TraceConfig { depth: 0, ..*c }, &mut |s: &S| {
            let values: Vec<(S::Action, u32)> = s.legal_actions().into_iter().map(|a| (a, 10)).collect();
            crate::mav::trace::NodeEval { best: values.first().map(|v| v.0), values }
        });
        // The prompt ends after the root's input lines: the tree below it does not matter, its preamble does.
        let p = write_trace(&tree, c).expect("writes").prompt();
        assert!(p.starts_with(&format!("Minimax breadth={} depth={}\n", c.breadth, c.depth)), "{p}");
        p
    }

    /// A model whose logits are a fixed pseudo-random function of the last token fed (deterministic).
    fn noise(vocab: usize) -> impl FnMut(u32) -> Result<Vec<f32>, String> {
        seeded_noise(vocab, 0)
    }

    /// [`noise`] with another seed: another model.
    fn seeded_noise(vocab: usize, seed: u64) -> impl FnMut(u32) -> Result<Vec<f32>, String> {
        move |t: u32| {
            Ok((0..vocab)
                .map(|i| {
                    let x = (i as u64).wrapping_mul(2_654_435_761)
                        ^ u64::from(t).wrapping_mul(40_503)
                        ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    (x % 1000) as f32 / 100.0
                })
                .collect())
        }
    }

    fn written<S: MavState>(root: &S, c: &TraceConfig, context: usize) -> (String, RulesTrace) {
        written_by(root, c, context, 0)
    }

    /// The trace the noise model of `seed` writes by the rules from `root` within `context` tokens.
    fn written_by<S: MavState>(root: &S, c: &TraceConfig, context: usize, seed: u64) -> (String, RulesTrace) {
        let tokens = format_tokens(c.buckets.k());
        let p = prompt(root, c);
        let ids = tokens.tokenizer.encode(&p);
        let vocab = tokens.tokenizer.vocab_size();
        let mut step = seeded_noise(vocab, seed);
        let first = step(*ids.last().expect("a prompt")).expect("logits");
        let t = write_rules_trace(&tokens, root, c, ids.len(), context, first, step).expect("written");
        // What was written reads back as the tokens fed.
        let again = tokens.tokenizer.encode(&format!("{p}{}", t.text));
        assert_eq!(tokens.tokenizer.decode(&again).expect("decodes"), format!("{p}{}", t.text));
        (p, t)
    }

    /// The issues of a trace the context did not cut that break its tree.
    fn legal_issues(text: &str) -> Vec<String> {
        let parsed = parse_trace::<ChessState>(text, Buckets::mav()).expect("reads");
        parsed
            .issues
            .iter()
            .filter(|i| i.kind.breaks_the_tree(false))
            .map(|i| format!("{:?}", i.kind))
            .collect()
    }

    #[test]
    fn a_noisy_model_still_writes_a_legal_tree_of_the_asked_shape() {
        let root = ChessState::default();
        for (b, d) in [(2, 1), (3, 2), (1, 0)] {
            let c = cfg(b, d, StateFormat::Fen);
            let (p, t) = written(&root, &c, 100_000);
            assert!(!t.truncated);
            let text = format!("{p}{}", t.text);
            assert!(legal_issues(&text).is_empty(), "{:?}\n{text}", legal_issues(&text));
            let parsed = parse_trace::<ChessState>(&text, Buckets::mav()).expect("reads");
            assert!(parsed.playing.is_some(), "{text}");
            let nodes = text.matches("Evaluation for node:").count();
            let expected: u32 = (0..=d).map(|i| b.pow(i)).sum();
            assert_eq!(nodes as u32, expected, "b={b} d={d}\n{text}");
        }
    }

    /// Every chess position of the repo's fixtures: the perft suites (standard chess and Chess960), the
    /// heads of the opening books (Stockfish's 2moves, Chess960 openings) and the Lichess puzzles.
    fn fixture_positions() -> Vec<(String, ChessState)> {
        use crate::game::perft_suite::parse_suite;
        let dir = crate::checkout_dir().join("tests/fixtures");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let fen = |f: &str, fen: &str| {
            let state = ChessState::from_fen(fen).unwrap_or_else(|e| panic!("{f}: {fen}: {e}"));
            (format!("{f}: {fen}"), state)
        };
        let mut out = Vec::new();
        for f in ["perft/perftsuite.epd", "perft/fischer.epd", "perft/tricky.perft"] {
            let suite = parse_suite(&read(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
            out.extend(suite.cases.into_iter().map(|c| (format!("{f}: {}", c.fen), c.state)));
        }
        for f in ["datagen/2moves_v1_head40.epd", "datagen/FRC_openings_head12.epd"] {
            out.extend(read(f).lines().filter(|l| !l.trim().is_empty()).map(|l| fen(f, l.trim())));
        }
        let f = "puzzles/lichess-puzzles-dev.csv";
        out.extend(read(f).lines().skip(1).filter_map(|l| l.split(',').nth(1)).map(|p| fen(f, p)));
        out
    }

    /// Rules decoding gives a legal tree from every chess fixture position, whatever the model writes (a
    /// different noise model for each position): no issue that breaks the tree, with room for the whole
    /// trace and with the shipped text model's 1024 tokens (where a cut trace misses only its last nodes).
    #[test]
    fn every_chess_fixture_position_gives_a_legal_tree() {
        let positions = fixture_positions();
        assert!(positions.len() > 1500, "{} positions", positions.len());
        let c = cfg(2, 1, StateFormat::Fen);
        let (mut cut, mut chess960, mut impossible) = (0, 0, 0);
        for (seed, (name, root)) in positions.iter().enumerate() {
            chess960 += usize::from(root.kind() == crate::game::GameKind::Chess960);
            for context in [100_000, 1024] {
                let (p, t) = written_by(root, &c, context, seed as u64);
                let text = format!("{p}{}", t.text);
                let parsed = match parse_trace::<ChessState>(&text, Buckets::mav()) {
                    Ok(parsed) => parsed,
                    // The perft suites hold a few positions no game reaches (two checks along one
                    // diagonal), there to test move generators; the trace reader reads positions strictly.
                    Err(e) if e.to_string().contains("impossible check") => {
                        impossible += 1;
                        break;
                    }
                    Err(e) => panic!("{name}: {e}\n{text}"),
                };
                let broken: Vec<_> =
                    parsed.issues.iter().filter(|i| i.kind.breaks_the_tree(t.truncated)).collect();
                assert!(broken.is_empty(), "{name}, context {context}: {broken:?}\n{text}");
                if t.truncated {
                    cut += 1;
                } else if !root.legal_actions().is_empty() {
                    assert!(parsed.playing.is_some(), "{name}: {text}");
                }
                assert!(context == 1024 || !t.truncated, "{name}: room for the whole trace");
            }
        }
        assert!(chess960 > 950, "the Chess960 suite is read as Chess960 ({chess960})");
        assert!(cut > 0, "some traces outgrow 1024 tokens");
        assert!(impossible * 100 < positions.len(), "{impossible} positions the trace reader refuses");
    }

    #[test]
    fn connect_four_and_hex_traces_are_legal_too() {
        let start = ConnectFourState::default();
        let c4 = start.play(start.parse_action("4").expect("a column")).expect("legal");
        let (p, t) = written(&c4, &cfg(2, 1, StateFormat::State), 100_000);
        let parsed =
            parse_trace::<ConnectFourState>(&format!("{p}{}", t.text), Buckets::mav()).expect("reads");
        assert!(!parsed.issues.iter().any(|i| matches!(i.kind, TraceIssueKind::IllegalMove(_))), "{t:?}");
        // Hex cells take several tokens (c10 and c1 share a prefix).
        let hex = HexState::new(11).expect("11x11");
        let (p, t) = written(&hex, &cfg(3, 1, StateFormat::State), 100_000);
        let parsed = parse_trace::<HexState>(&format!("{p}{}", t.text), Buckets::mav()).expect("reads");
        assert!(
            !parsed.issues.iter().any(|i| matches!(
                i.kind,
                TraceIssueKind::IllegalMove(_) | TraceIssueKind::Evaluation(_) | TraceIssueKind::Malformed(_)
            )),
            "{:?}",
            parsed.issues
        );
        assert_eq!(t.text.matches("Evaluation for node:").count(), 3);
    }

    #[test]
    fn a_trace_out_of_context_is_cut_at_a_node_boundary() {
        let root = ChessState::default();
        let c = cfg(3, 1, StateFormat::Fen);
        let (p, whole) = written(&root, &c, 100_000);
        let prompt_tokens = format_tokens(64).tokenizer.encode(&p).len();
        let (_, cut) = written(&root, &c, prompt_tokens + whole.tokens / 2);
        assert!(cut.truncated);
        assert!(whole.text.starts_with(&cut.text));
        assert!(cut.text.len() < whole.text.len());
        // The cut falls where a node ended: the next thing in the whole trace is a new node's line.
        let rest = &whole.text[cut.text.len()..];
        assert!(rest.starts_with("\nEvaluation for node:"), "{rest:.80}");
        // No room at all after the prompt is a named error.
        let tokens = format_tokens(64);
        let err = write_rules_trace(&tokens, &root, &c, 10, 10, vec![0.0; 10], |_| Ok(vec![]));
        assert!(matches!(err, Err(TraceRulesError::PromptTooLong { .. })), "{err:?}");
    }

    #[test]
    fn a_finished_game_is_written_by_the_rules() {
        // Fool's mate: the root is decided; depth 1 has nothing to expand.
        let mut s = ChessState::default();
        for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            s = s.play(s.parse_action(m).expect("legal")).expect("plays");
        }
        let tokens = format_tokens(64);
        let c = cfg(2, 1, StateFormat::Fen);
        let p = prompt(&s, &c);
        let ids = tokens.tokenizer.encode(&p);
        let mut step = noise(tokens.tokenizer.vocab_size());
        let first = step(0).expect("logits");
        let t = write_rules_trace(&tokens, &s, &c, ids.len(), 100_000, first, step).expect("written");
        assert!(t.text.contains("invalid : \"0-1\""), "{}", t.text);
        assert!(t.text.contains("Selecting: invalid"), "{}", t.text);
        assert!(!t.text.contains("Playing"), "{}", t.text);
    }
}
