//! What the app knows about the model's view of the board position: the loaded model, the latest search
//! report for the position on the board, and the rows of the action-values panel derived from it.
//!
//! This is runtime state (never saved); the engine glue ([`super::engine_link`]) fills it from engine
//! events, and the panels read it.

use std::path::PathBuf;
use std::time::Duration;

use shakmaty::Position;
use shakmaty::san::SanPlus;

use super::position_evals::PositionEval;
use crate::engine::SearchReport;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::mav::scoring::Scoring;
use crate::search::mcts::MoveStats;

/// Facts about the loaded model package, for the status bar and the model panel.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The package name from mav.json.
    pub name: String,
    /// Its format (`mav-lm`, `mav-encoder`, `action-value`, `state-value`).
    pub format: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Value buckets per move.
    pub buckets: usize,
    /// Trainable parameters.
    pub parameters: u64,
    /// For a remote package: the server and the model's name there (`http://host:8000 · mav-enc-tiny`).
    pub served_by: Option<String>,
    /// Inference workers, i.e. batches out at once: locally one per thread of the settings, each session
    /// single-threaded ([`crate::inference::thread_plan::ThreadPlan`]; one with every thread for a large
    /// model), the package's `max_in_flight` for a remote one, so that the server's latency is hidden.
    pub workers: usize,
}

impl ModelInfo {
    /// The facts of the package opened from `dir`, run on `workers` inference workers.
    pub fn of_package(package: &crate::model::ModelPackage, dir: PathBuf, workers: usize) -> ModelInfo {
        let m = &package.manifest;
        ModelInfo {
            name: m.name.clone(),
            format: m.format.name().to_owned(),
            dir,
            buckets: m.num_buckets,
            parameters: m.parameters,
            served_by: m.remote.as_ref().map(|r| format!("{} · {}", r.endpoint, r.model)),
            workers,
        }
    }
}

/// Where the model is in its life.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ModelStatus {
    /// No model was asked for (tests, or the app started without an engine).
    #[default]
    None,
    /// Loading on a background thread.
    Loading(ModelInfo),
    /// Loaded and in use.
    Ready(ModelInfo),
    /// Could not be loaded; the text says why and what to do.
    Failed(String),
}

impl ModelStatus {
    /// The model's info when it is loading or loaded.
    pub fn info(&self) -> Option<&ModelInfo> {
        match self {
            ModelStatus::Loading(i) | ModelStatus::Ready(i) => Some(i),
            ModelStatus::None | ModelStatus::Failed(_) => None,
        }
    }
}

/// What the panels asked the engine to do; the engine glue takes them at the end of the frame.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineRequest {
    /// Start searching the board position with the search settings.
    StartSearch,
    /// Stop the running search.
    StopSearch,
    /// Load the model package in this folder (`None`: the shipped default).
    LoadModel(Option<PathBuf>),
    /// Evaluate every position of the line the board follows (game review, eval graph).
    ReviewLine,
    /// Review every readable game of the open game list, one after another.
    ReviewFile,
    /// Stop the file review after the games already finished.
    StopFileReview,
    /// The search tree explorer: the children of the node reached by these moves from the root.
    Explore(Vec<String>),
    /// Run internal search on the board position: explicit minimax with this breadth and depth (and the
    /// model's own trace when the package writes one).
    InternalSearch {
        /// b.
        breadth: usize,
        /// d.
        depth: u32,
        /// How the model decodes its own trace.
        decoding: crate::inference::completer::TraceDecoding,
    },
    /// Search the board position with these limits for the model's move in a game against it; its end is
    /// recorded in [`AnalysisState::finished_search`].
    PlaySearch(crate::engine::GoLimits),
}

/// The model's view of the board position and the engine's progress.
#[derive(Debug, Clone, Default)]
pub struct AnalysisState {
    /// The loaded model.
    pub model: ModelStatus,
    /// The latest search report whose root is the board position (also a one-call evaluation's).
    pub report: Option<SearchReport>,
    /// A search the user started is running.
    pub searching: bool,
    /// The position is being evaluated (no report for it yet).
    pub evaluating: bool,
    /// The move whose distribution is shown (UCI), chosen by a click.
    pub selected_move: Option<String>,
    /// The move under the pointer in a panel (UCI): its arrow and distribution are shown.
    pub hovered_move: Option<String>,
    /// Requests for the engine glue.
    pub requests: Vec<EngineRequest>,
    /// Simulations per second of the running search, smoothed.
    pub sims_per_second: f64,
    /// The loaded model's value of the positions it evaluated, by position text (FEN); the newest ones.
    pub evals: super::position_evals::PositionEvals,
    /// A game review is running: positions evaluated and positions asked for.
    pub reviewing: Option<(usize, usize)>,
    /// The last finished review of a game's main line (shown while its document is open).
    pub game_review: Option<super::game_review::ReviewedGame>,
    /// The internal-search panel's run and report.
    pub internal: super::internal_search::InternalSearchState,
    /// The review of every game of the open file, when one was started.
    pub file_review: Option<super::file_review::FileReview>,
    /// The search tree explorer: expanded nodes and their children.
    pub explorer: super::tree_explorer::ExplorerState,
    /// The provider the loaded model runs on, and any fallback notice (once it is loaded).
    pub device: Option<crate::inference::device::DeviceStatus>,
    /// A remote package's server: answering, or unreachable since a failed call.
    pub server: super::server_health::ServerHealth,
    /// The root (position text) of the last search that ended, not counting one-call evaluations.
    pub finished_search: Option<String>,
    /// The *Inside* panel: the model's attention and values through its layers for the board position.
    pub inside: super::inside::InsideState,
}

impl AnalysisState {
    /// Expands or collapses a node of the search tree explorer; expanding asks the engine for its children.
    pub fn toggle_tree_node(&mut self, path: super::tree_explorer::TreePath) {
        if self.explorer.toggle(&path) {
            self.requests.push(EngineRequest::Explore(path));
        }
    }

    /// Forgets everything about the previous position (the board moved).
    pub fn position_changed(&mut self) {
        self.report = None;
        self.selected_move = None;
        self.hovered_move = None;
        self.sims_per_second = 0.0;
        self.explorer.clear();
    }

    /// Takes a report if its root is `current` (reports for earlier positions are dropped). The root's
    /// value is remembered in [`AnalysisState::evals`] either way.
    pub fn accept_report(&mut self, report: SearchReport, current: &ChessState) -> bool {
        if let Some(e) = PositionEval::from_moves(&report.snapshot.moves) {
            self.evals.insert(report.snapshot.root.clone(), e);
        }
        if report.snapshot.root != current.to_text() {
            return false;
        }
        let secs = report.elapsed.as_secs_f64();
        if secs > 0.0 && report.simulations > 0 {
            self.sims_per_second = report.simulations as f64 / secs;
        }
        self.report = Some(report);
        self.evaluating = false;
        true
    }

    /// Time the search has run, when there is a report.
    pub fn elapsed(&self) -> Option<Duration> {
        self.report.as_ref().map(|r| r.elapsed)
    }

    /// The move whose distribution the panel shows: the hovered one, else the selected one, else the best
    /// by the given scoring.
    pub fn focus_move<'a>(&'a self, rows: &'a [ValueRow]) -> Option<&'a ValueRow> {
        let pick = |uci: &Option<String>| uci.as_ref().and_then(|u| rows.iter().find(|r| &r.uci == u));
        pick(&self.hovered_move).or_else(|| pick(&self.selected_move)).or_else(|| rows.first())
    }
}

/// One legal move as the action-values panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRow {
    /// The move in UCI notation.
    pub uci: String,
    /// The move in SAN (`Nf3`, `O-O`, `exd8=Q+`).
    pub san: String,
    /// Its win probability for the player to move under each rule [`value_rows`] was given, in that order.
    pub values: Vec<f64>,
    /// Its 1-based rank under each of those rules (ties keep the order of the next rules).
    pub ranks: Vec<usize>,
    /// The value distribution over the model's buckets (empty from a model without values).
    pub distribution: Vec<f64>,
    /// Search statistics, when a search visited the move.
    pub visits: u32,
    /// The policy's probability for the move, from a model that gives a policy and no values (behavioural
    /// cloning): then `values` hold it under every rule, and `distribution` is empty.
    pub probability: Option<f64>,
    /// The policy's probability for the move from a model that gives one beside its values (an lc0
    /// network).
    pub policy: Option<f64>,
}

impl ValueRow {
    /// Whether the rules put this move at different places.
    pub fn disagrees(&self) -> bool {
        self.ranks.windows(2).any(|w| w[0] != w[1])
    }

    /// The value under the first rule (the one that orders the rows).
    pub fn value(&self) -> f64 {
        self.values.first().copied().unwrap_or(0.5)
    }
}

/// The rows of the action-values panel for `state` from a search snapshot's root moves: each move's value and
/// rank under every rule of `rules`, ordered by the first (best first). Moves the model did not value (no
/// distribution) and illegal ones are left out. From a model that gives a policy and no values, each row is
/// the move's probability (the same under every rule), most likely first.
pub fn value_rows(state: &ChessState, moves: &[MoveStats], rules: &[Scoring]) -> Vec<ValueRow> {
    let mut rows: Vec<ValueRow> = moves
        .iter()
        .filter_map(|m| {
            let distribution = m.distribution.clone().filter(|d| !d.is_empty());
            let values = match (&distribution, m.policy) {
                (Some(d), _) => rules.iter().map(|r| r.of_probs(d)).collect(),
                (None, Some(p)) => vec![p; rules.len()],
                (None, None) => return None,
            };
            let mv = state.parse_action(&m.action).ok()?;
            let san = SanPlus::from_move(state.position().clone(), mv).to_string();
            Some(ValueRow {
                uci: m.action.clone(),
                san,
                values,
                ranks: vec![0; rules.len()],
                probability: if distribution.is_none() { m.policy } else { None },
                policy: if distribution.is_some() { m.policy } else { None },
                distribution: distribution.unwrap_or_default(),
                visits: m.visits,
            })
        })
        .collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    for r in 0..rules.len() {
        // By rule r, ties by the other rules in their order.
        let keys: Vec<usize> = std::iter::once(r).chain((0..rules.len()).filter(|&o| o != r)).collect();
        order.sort_by(|&a, &b| {
            keys.iter()
                .map(|&k| rows[b].values[k].total_cmp(&rows[a].values[k]))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        for (rank, &i) in order.iter().enumerate() {
            rows[i].ranks[r] = rank + 1;
        }
    }
    if !rules.is_empty() {
        rows.sort_by_key(|r| r.ranks[0]);
    }
    rows
}

/// The SAN of a UCI move sequence played from `state` (a principal variation), stopping at the first move
/// that is not legal.
pub fn pv_san(state: &ChessState, pv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut here = state.clone();
    for uci in pv {
        let Ok(mv) = here.parse_action(uci) else { break };
        out.push(SanPlus::from_move(here.position().clone(), mv).to_string());
        match here.play(mv) {
            Ok(next) => here = next,
            Err(_) => break,
        }
    }
    out
}

/// How a position's side to move reads in panels.
pub fn to_move_name(state: &ChessState) -> &'static str {
    if state.position().turn().is_white() { "White" } else { "Black" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::mcts::NodeStatus;

    fn stats(action: &str, distribution: Vec<f64>) -> MoveStats {
        MoveStats {
            action: action.to_owned(),
            visits: 0,
            visit_share: 0.0,
            q: None,
            prior: 0.1,
            model: Some(Scoring::Mean.of_probs(&distribution)),
            distribution: Some(distribution),
            policy: None,
            virtual_count: 0,
            status: NodeStatus::Expanded,
            hallucinations: 0,
            pv: vec![action.to_owned()],
            pv_result: None,
        }
    }

    /// Four buckets (centres 0.125, 0.375, 0.625, 0.875).
    fn moves() -> [MoveStats; 3] {
        [
            // Mode 0.625, mean 0.55, wide: its 0.25-quantile is 0.208.
            stats("e2e4", vec![0.3, 0.0, 0.4, 0.3]),
            // Mode 0.625, mean 0.575, 0.25-quantile 0.458.
            stats("d2d4", vec![0.0, 0.3, 0.6, 0.1]),
            // Mode 0.375, mean 0.425, narrow: 0.25-quantile 0.328, above e4's.
            stats("g1f3", vec![0.0, 0.8, 0.2, 0.0]),
        ]
    }

    #[test]
    fn ranks_follow_each_scoring_and_mark_disagreements() {
        let s = ChessState::startpos();
        let m = moves();
        let sans = |rows: &[ValueRow]| rows.iter().map(|r| r.san.clone()).collect::<Vec<_>>();
        let by_mean = value_rows(&s, &m, &[Scoring::Mean, Scoring::Max]);
        assert_eq!(sans(&by_mean), ["d4", "e4", "Nf3"]);
        // Max ties e4 and d4 at 0.625: the mean breaks the tie.
        let by_max = value_rows(&s, &m, &[Scoring::Max, Scoring::Mean]);
        assert_eq!(sans(&by_max), ["d4", "e4", "Nf3"]);
        let cautious = Scoring::quantile(0.25).expect("q");
        let by_quantile = value_rows(&s, &m, &[cautious, Scoring::Max]);
        assert_eq!(sans(&by_quantile), ["d4", "Nf3", "e4"]);
        let e4 = by_quantile.iter().find(|r| r.uci == "e2e4").expect("e4");
        assert_eq!(e4.ranks, [3, 2]);
        assert!(e4.disagrees());
        assert!((e4.value() - cautious.of_probs(&e4.distribution)).abs() < 1e-12);
        let nf3 = by_max.iter().find(|r| r.uci == "g1f3").expect("Nf3");
        assert!(!nf3.disagrees());
        // One rule: nothing to disagree with.
        assert!(value_rows(&s, &m, &[Scoring::Mean]).iter().all(|r| !r.disagrees()));
    }

    #[test]
    fn illegal_or_unvalued_moves_are_left_out() {
        let s = ChessState::startpos();
        let mut unvalued = stats("b1c3", vec![0.5, 0.5]);
        unvalued.distribution = None;
        let rows = value_rows(
            &s,
            &[stats("e2e5", vec![0.0, 1.0]), unvalued, stats("a2a3", vec![1.0, 0.0])],
            &[Scoring::Mean, Scoring::Max],
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].san, "a3");
    }

    #[test]
    fn a_position_is_worth_its_best_move_under_each_rule() {
        let e = PositionEval::from_moves(&moves()).expect("valued");
        assert!((e.value(Scoring::Max) - 0.625).abs() < 1e-12);
        // Kept in single precision: within 1e-6 of the double-precision values.
        let means: Vec<f64> = moves().iter().map(|m| m.value(Scoring::Mean).expect("dist")).collect();
        assert!((e.value(Scoring::Mean) - means.iter().copied().fold(0.0, f64::max)).abs() < 1e-6);
        assert!(PositionEval::from_moves(&[]).is_none());
    }

    #[test]
    fn pv_in_san_stops_at_an_illegal_move() {
        let s = ChessState::startpos();
        let pv: Vec<String> =
            ["e2e4", "e7e5", "g1f3", "e1e2", "b8c6"].iter().map(|m| m.to_string()).collect();
        assert_eq!(pv_san(&s, &pv), ["e4", "e5", "Nf3"]);
    }

    #[test]
    fn focus_prefers_hover_then_selection_then_best() {
        let s = ChessState::startpos();
        let rows = value_rows(
            &s,
            &[stats("e2e4", vec![0.0, 1.0]), stats("d2d4", vec![1.0, 0.0])],
            &[Scoring::Mean, Scoring::Max],
        );
        let mut a = AnalysisState::default();
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("e4"));
        a.selected_move = Some("d2d4".into());
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("d4"));
        a.hovered_move = Some("e2e4".into());
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("e4"));
    }
}
