//! Internal search measured (`mavboard eval --internal B,D`): over labelled positions, how well a model
//! writes the linearized minimax trace that the explicit search over its own values writes (paper §4), and
//! how often either search plays the labels' best move.

use serde::Serialize;

use super::metrics::Mean;
use crate::datagen::record::LabelRecord;
use crate::datagen::render::label_state;
use crate::game::chess::ChessState;
use crate::inference::complete::TraceModel;
use crate::search::internal::{InternalConfig, InternalReport, ModelSide, run_internal};

/// Measures of the model-written traces over a set of positions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InternalMetrics {
    /// Children per expanded node.
    pub breadth: usize,
    /// Plies below the root.
    pub depth: u32,
    /// Positions searched.
    pub positions: u64,
    /// Positions where the model wrote no trace (the package cannot, or asking it failed); the first
    /// reason is in [`InternalMetrics::unavailable_why`].
    pub unavailable: u64,
    /// Why the model wrote no trace, the first time it did not.
    pub unavailable_why: Option<String>,
    /// Positions whose search failed (not counted in `positions`); the first reason is in `failed_why`.
    pub failed: u64,
    /// Why a search failed, the first time one did.
    pub failed_why: Option<String>,
    /// The trace could be read (its preamble and root call parse), of the traces written.
    pub parsed: Mean,
    /// The model ran out of context before finishing, of the traces written.
    pub truncated: Mean,
    /// Read with no issue at all, of the traces written.
    pub clean: Mean,
    /// Issues per readable trace (duplicate or illegal moves, values that disagree with the node's own
    /// lines, wrong backed-up values, …).
    pub issues: Mean,
    /// Issue counts of the readable traces, in position order (for the median).
    pub issue_counts: Vec<usize>,
    /// Issues per readable trace that break the tree itself (illegal moves, wrong states, lines out of the
    /// format, nodes missing from a trace that was not cut: [`crate::mav::trace::TraceIssueKind::breaks_the_tree`]),
    /// as opposed to the model's judgement of a legal tree.
    pub tree_issues: Mean,
    /// Readable traces with no issue that breaks the tree, of the readable traces.
    pub legal_tree: Mean,
    /// The same tree as the explicit search (same expansions and choices at every node both have), of the
    /// readable traces.
    pub same_tree: Mean,
    /// The model's `Playing` move is the explicit search's choice, of the traces written.
    pub same_choice: Mean,
    /// The model's `Playing` move is the labels' best move, of the traces written.
    pub model_best: Mean,
    /// The explicit search's choice is the labels' best move, of all positions (the reference).
    pub explicit_best: Mean,
    /// Tokens the model wrote per trace.
    pub tokens: Mean,
    /// Moves per trace that the repeat guard kept the model from listing twice.
    pub repeats_avoided: Mean,
    /// Whether the traces were decoded with the repeat guard (false when none was written).
    pub repeat_guard: bool,
    /// How the model decoded its traces.
    pub decoding: crate::inference::completer::TraceDecoding,
}

impl InternalMetrics {
    /// Empty measures for searches of this shape.
    pub fn new(breadth: usize, depth: u32) -> Self {
        Self { breadth, depth, ..Self::default() }
    }

    /// The median issue count of the readable traces (the upper one of an even count).
    pub fn median_issues(&self) -> Option<usize> {
        let mut v = self.issue_counts.clone();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    }

    /// Adds one position's report; `best` is the labels' best move (UCI).
    pub fn add(&mut self, report: &InternalReport, best: &str) {
        self.positions += 1;
        let explicit_choice = report.explicit.tree.choice.as_deref();
        self.explicit_best.add(f64::from(u8::from(explicit_choice == Some(best))));
        let written = match &report.model {
            ModelSide::Written(w) => w,
            ModelSide::Unsupported { why } | ModelSide::Failed { why } => {
                self.unavailable += 1;
                self.unavailable_why.get_or_insert_with(|| why.clone());
                return;
            }
        };
        let flag = |b: bool| f64::from(u8::from(b));
        self.tokens.add(written.tokens as f64);
        self.repeats_avoided.add(written.repeats_avoided as f64);
        self.truncated.add(flag(written.truncated));
        let readable = written.parse_error.is_none();
        self.parsed.add(flag(readable));
        self.clean.add(flag(readable && written.issues.is_empty()));
        let choice = written.comparison.as_ref().and_then(|c| c.model_choice.as_deref());
        self.same_choice.add(flag(written.comparison.as_ref().is_some_and(|c| c.same_choice)));
        self.model_best.add(flag(choice == Some(best)));
        if readable {
            self.issues.add(written.issues.len() as f64);
            self.issue_counts.push(written.issues.len());
            let broken = written.issues.iter().filter(|i| i.breaks_tree).count();
            self.tree_issues.add(broken as f64);
            self.legal_tree.add(flag(broken == 0));
            self.same_tree.add(flag(written.comparison.as_ref().is_some_and(|c| c.differences.is_empty())));
        }
    }
}

/// Runs the internal search of `config` on each chess label's position and measures the model's traces.
/// Terminal positions (no move to play) and labels whose position cannot be read (they were checked when
/// written) are skipped; a search that fails is counted in [`InternalMetrics::failed`] and the rest go on.
/// `progress` gets the number of labels done.
pub fn eval_internal(
    model: &mut TraceModel<ChessState>,
    labels: &[LabelRecord],
    config: &InternalConfig,
    mut progress: impl FnMut(u64),
) -> InternalMetrics {
    let mut m = InternalMetrics::new(config.breadth, config.depth);
    m.decoding = config.decoding;
    for (i, rec) in labels.iter().enumerate() {
        if let (false, Ok(state)) = (rec.moves.is_empty(), label_state(rec)) {
            match run_internal(model, state, config) {
                Ok(report) => m.add(&report, &rec.best),
                Err(e) => {
                    m.failed += 1;
                    m.failed_why.get_or_insert_with(|| e.to_string());
                }
            }
        }
        progress(i as u64 + 1);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::{LabelGame, Split};
    use crate::inference::complete::Completion;
    use crate::inference::evaluator::Scoring;
    use crate::inference::mock::HashEvaluator;
    use crate::mav::buckets::Buckets;
    use crate::mav::command::StateFormat;
    use crate::search::internal::{ExplicitSearch, explicit_search, judge_trace};

    const FEN: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";

    fn config() -> InternalConfig {
        InternalConfig {
            breadth: 2,
            depth: 1,
            scoring: Scoring::Mean,
            state_format: StateFormat::Fen,
            buckets: Buckets::mav(),
            decoding: Default::default(),
        }
    }

    fn search() -> ExplicitSearch {
        let root = ChessState::from_fen(FEN).expect("valid FEN");
        explicit_search(&mut HashEvaluator::new(11), root, &config()).expect("the search runs")
    }

    /// The report of a model that wrote `response` after the explicit search's prompt.
    fn report_with(s: &ExplicitSearch, response: String) -> InternalReport {
        let completion = Completion {
            tokens: response.len(),
            text: response,
            truncated: false,
            repeats_avoided: 0,
            decoding: Default::default(),
        };
        let judged = judge_trace::<ChessState>(&s.prompt, &completion, &s.tree, Buckets::mav());
        InternalReport {
            root: FEN.into(),
            breadth: 2,
            depth: 1,
            scoring: Scoring::Mean,
            explicit: s.clone(),
            model: ModelSide::Written(Box::new(judged)),
        }
    }

    #[test]
    fn a_perfect_trace_is_clean_and_agrees_and_an_edited_one_is_counted() {
        let s = search();
        let choice = s.tree.choice.clone().expect("the search chooses");
        let perfect = s.trace[s.prompt.len()..].to_owned();
        let mut m = InternalMetrics::new(2, 1);
        m.add(&report_with(&s, perfect.clone()), &choice);
        assert_eq!((m.positions, m.unavailable), (1, 0));
        assert_eq!((m.parsed.mean, m.clean.mean, m.same_choice.mean, m.same_tree.mean), (1.0, 1.0, 1.0, 1.0));
        assert_eq!((m.model_best.mean, m.explicit_best.mean), (1.0, 1.0));
        assert_eq!(m.median_issues(), Some(0));
        assert_eq!((m.tree_issues.mean, m.legal_tree.mean), (0.0, 1.0));

        // The model plays the other expanded move: an issue at the root, another choice, another tree.
        let other = s.tree.children.iter().filter_map(|c| c.action.clone()).find(|a| *a != choice);
        let other = other.expect("two children");
        let edited = perfect.replace(&format!("Playing {choice}!"), &format!("Playing {other}!"));
        assert_ne!(edited, perfect, "the trace ends with its Playing line");
        m.add(&report_with(&s, edited), &choice);
        assert_eq!(m.positions, 2);
        assert_eq!(m.same_choice.mean, 0.5);
        assert_eq!(m.model_best.mean, 0.5);
        assert_eq!(m.explicit_best.mean, 1.0);

        // Text that is no trace at all after the prompt: still read (the prompt holds the root), with issues
        // and no move played.
        m.add(&report_with(&s, "e2e4 e7e5".into()), &choice);
        assert_eq!(m.parsed.count, 3);
        assert_eq!(m.clean.count, 3);
        assert!((m.clean.mean - 1.0 / 3.0).abs() < 1e-12, "{:?}", m.clean);
        assert!((m.model_best.mean - 1.0 / 3.0).abs() < 1e-12, "{:?}", m.model_best);
        assert!(m.median_issues().is_some_and(|n| n >= 1), "{:?}", m.issues);
        // Its nodes are missing from a trace that was not cut: that breaks the tree, not a judgement of it.
        assert_eq!(m.legal_tree.count, 3);
        assert!(m.legal_tree.mean <= 2.0 / 3.0 + 1e-12, "{:?}", m.legal_tree);
        assert!(m.tree_issues.mean > 0.0, "{:?}", m.tree_issues);
    }

    #[test]
    fn a_values_only_package_writes_no_trace_but_its_explicit_search_is_measured() {
        let s = search();
        let best = s.tree.choice.clone().expect("the search chooses");
        let one_move = vec![crate::datagen::record::MoveLabel {
            uci: best.clone(),
            score: crate::datagen::score::LabelScore::Cp(20),
        }];
        let label = |fen: &str, best: &str| LabelRecord {
            game: LabelGame::Chess,
            fen: fen.to_owned(),
            chess960: false,
            moves: if fen.contains("6Pq") { Vec::new() } else { one_move.clone() },
            best: best.to_owned(),
            depth: 6,
            nodes: 1,
            source: "test".into(),
            ply: 0,
            split: Split::Val,
            search_path: Vec::new(),
        };
        let mate = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        let labels = vec![label(FEN, &best), label(FEN, "a2a3"), label("not a FEN", "e2e4"), label(mate, "")];
        let mut model = TraceModel::ValuesOnly(Box::new(HashEvaluator::new(11)), "values only".into());
        let mut done = 0;
        let m = eval_internal(&mut model, &labels, &config(), |n| done = n);
        assert_eq!(done, 4, "progress reaches every label");
        assert_eq!(m.positions, 2, "the unreadable and the terminal positions are skipped");
        assert_eq!(m.failed, 0);
        assert_eq!(m.unavailable, 2);
        assert_eq!(m.unavailable_why.as_deref(), Some("values only"));
        assert_eq!(m.parsed.count, 0);
        assert_eq!(m.explicit_best.mean, 0.5);
    }
}
