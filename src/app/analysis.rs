//! What the app knows about the model's view of the board position: the loaded model, the latest search
//! report for the position on the board, and the rows of the action-values panel derived from it.
//!
//! This is runtime state (never saved); the engine glue ([`super::engine_link`]) fills it from engine
//! events, and the panels read it.

use std::path::PathBuf;
use std::time::Duration;

use shakmaty::Position;
use shakmaty::san::SanPlus;

use crate::engine::SearchReport;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::search::mcts::MoveStats;

/// Facts about the loaded model package, for the status bar and the model panel.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The package name from mav.json.
    pub name: String,
    /// Its format (`mav-lm`, `mav-encoder`, `action-value`).
    pub format: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Value buckets per move.
    pub buckets: usize,
    /// Trainable parameters.
    pub parameters: u64,
    /// For a remote package: the server and the model's name there (`http://host:8000 · mav-enc-tiny`).
    pub served_by: Option<String>,
    /// Inference workers, i.e. batches out at once: one locally (ONNX Runtime threads inside it), the
    /// package's `max_in_flight` for a remote one, so that the server's latency is hidden.
    pub workers: usize,
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
    },
    /// Search the board position with these limits for the model's move in a game against it; its end is
    /// recorded in [`AnalysisState::finished_search`].
    PlaySearch(crate::engine::GoLimits),
}

/// The model's value of a position: its best move's win probability for the player to move, under each
/// scoring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionEval {
    /// The best max-scored value.
    pub max: f64,
    /// The best mean-scored value.
    pub mean: f64,
}

impl PositionEval {
    /// The best values among a snapshot's root moves (`None` when the model valued none).
    pub fn from_moves(moves: &[MoveStats]) -> Option<PositionEval> {
        let max = moves.iter().filter_map(|m| m.model_max).reduce(f64::max)?;
        let mean = moves.iter().filter_map(|m| m.model_mean).reduce(f64::max)?;
        Some(PositionEval { max, mean })
    }

    /// The best values among a model answer's moves (`None` when it valued none).
    pub fn from_result(result: &crate::inference::evaluator::EvalResult<ChessState>) -> Option<PositionEval> {
        let max = result.moves.iter().map(|m| m.dist.max_value()).reduce(f64::max)?;
        let mean = result.moves.iter().map(|m| m.dist.mean_value()).reduce(f64::max)?;
        Some(PositionEval { max, mean })
    }

    /// The value under one scoring.
    pub fn value(&self, by_max: bool) -> f64 {
        if by_max { self.max } else { self.mean }
    }
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
    /// The model's value of every position it evaluated, by position text (FEN).
    pub evals: std::collections::HashMap<String, PositionEval>,
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
    /// Win probability under max scoring (the most probable bucket's centre), for the player to move.
    pub max: f64,
    /// Win probability under mean scoring (the expectation).
    pub mean: f64,
    /// 1-based rank by max value (ties keep the mean order).
    pub rank_max: usize,
    /// 1-based rank by mean value (ties keep the max order).
    pub rank_mean: usize,
    /// The value distribution over the model's buckets (empty when the model gave none).
    pub distribution: Vec<f64>,
    /// Search statistics, when a search visited the move.
    pub visits: u32,
}

impl ValueRow {
    /// Whether the two scorings put this move at different places.
    pub fn disagrees(&self) -> bool {
        self.rank_max != self.rank_mean
    }

    /// The value under the chosen scoring.
    pub fn value(&self, by_max: bool) -> f64 {
        if by_max { self.max } else { self.mean }
    }
}

/// The rows of the action-values panel for `state` from a search snapshot's root moves, ordered by the
/// chosen scoring (best first). Moves the model did not value are left out.
pub fn value_rows(state: &ChessState, moves: &[MoveStats], by_max: bool) -> Vec<ValueRow> {
    let mut rows: Vec<ValueRow> = moves
        .iter()
        .filter_map(|m| {
            let (max, mean) = (m.model_max?, m.model_mean?);
            let mv = state.parse_action(&m.action).ok()?;
            let san = SanPlus::from_move(state.position().clone(), mv).to_string();
            Some(ValueRow {
                uci: m.action.clone(),
                san,
                max,
                mean,
                rank_max: 0,
                rank_mean: 0,
                distribution: m.distribution.clone().unwrap_or_default(),
                visits: m.visits,
            })
        })
        .collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| rows[b].max.total_cmp(&rows[a].max).then(rows[b].mean.total_cmp(&rows[a].mean)));
    for (rank, &i) in order.iter().enumerate() {
        rows[i].rank_max = rank + 1;
    }
    order.sort_by(|&a, &b| rows[b].mean.total_cmp(&rows[a].mean).then(rows[b].max.total_cmp(&rows[a].max)));
    for (rank, &i) in order.iter().enumerate() {
        rows[i].rank_mean = rank + 1;
    }
    if by_max {
        rows.sort_by_key(|r| r.rank_max);
    } else {
        rows.sort_by_key(|r| r.rank_mean);
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

    fn stats(action: &str, max: f64, mean: f64) -> MoveStats {
        MoveStats {
            action: action.to_owned(),
            visits: 0,
            visit_share: 0.0,
            q: None,
            prior: 0.1,
            model_max: Some(max),
            model_mean: Some(mean),
            distribution: Some(vec![0.5, 0.5]),
            virtual_count: 0,
            status: NodeStatus::Expanded,
            hallucinations: 0,
            pv: vec![action.to_owned()],
            pv_result: None,
        }
    }

    #[test]
    fn ranks_follow_each_scoring_and_mark_disagreements() {
        let s = ChessState::startpos();
        let moves = [stats("e2e4", 0.55, 0.50), stats("d2d4", 0.53, 0.54), stats("g1f3", 0.40, 0.45)];
        let by_mean = value_rows(&s, &moves, false);
        assert_eq!(by_mean.iter().map(|r| r.san.as_str()).collect::<Vec<_>>(), ["d4", "e4", "Nf3"]);
        let by_max = value_rows(&s, &moves, true);
        assert_eq!(by_max.iter().map(|r| r.san.as_str()).collect::<Vec<_>>(), ["e4", "d4", "Nf3"]);
        let e4 = by_max.iter().find(|r| r.uci == "e2e4").expect("e4");
        assert_eq!((e4.rank_max, e4.rank_mean), (1, 2));
        assert!(e4.disagrees());
        let nf3 = by_max.iter().find(|r| r.uci == "g1f3").expect("Nf3");
        assert!(!nf3.disagrees());
    }

    #[test]
    fn illegal_or_unvalued_moves_are_left_out() {
        let s = ChessState::startpos();
        let mut unvalued = stats("b1c3", 0.5, 0.5);
        unvalued.model_max = None;
        let rows = value_rows(&s, &[stats("e2e5", 0.9, 0.9), unvalued, stats("a2a3", 0.3, 0.3)], false);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].san, "a3");
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
        let rows = value_rows(&s, &[stats("e2e4", 0.6, 0.6), stats("d2d4", 0.5, 0.5)], false);
        let mut a = AnalysisState::default();
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("e4"));
        a.selected_move = Some("d2d4".into());
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("d4"));
        a.hovered_move = Some("e2e4".into());
        assert_eq!(a.focus_move(&rows).map(|r| r.san.as_str()), Some("e4"));
    }
}
