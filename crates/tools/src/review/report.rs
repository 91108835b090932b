//! The result of reviewing one game: per-move values, losses and classes, and per-player summaries.
//! Plain serde data: the JSON report, the CLI and the GUI's eval graph all read it.

use serde::Serialize;

use super::classify::Classification;
use super::phase::Phase;
use crate::pgn::NodeId;

/// A move's value as a win probability (0..1) for the player who made it, under the review's scoring and
/// under the rule it is compared with ([`crate::mav::scoring::Scoring::tie_breaker`]: max for a mean review,
/// mean for any other); for a move that ends the game by the rules, the rules' value (1 for checkmate, ½ for
/// a draw) in both.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Values {
    /// Under the review's scoring.
    pub value: f64,
    /// Under the compared rule.
    pub compare: f64,
}

/// What a search added for one move (only with `--sims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SearchInfo {
    /// Simulations run.
    pub simulations: u64,
    /// Visits of the search's best move.
    pub best_visits: u32,
    /// Visits of the move played.
    pub played_visits: u32,
}

/// The model's view of a move when something else judged the review (a UCI engine): where the model would
/// have judged differently. Values are win probabilities for the mover (see [`Values`]); ranks count
/// from 1 (the model's favourite) under the review's scoring.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelView {
    /// The model's values of the move played.
    pub played: Values,
    /// The model's values of the judge's best move.
    pub best: Values,
    /// The played move's rank among the model's moves.
    pub played_rank: usize,
    /// The judge's best move's rank among the model's moves.
    pub best_rank: usize,
    /// How many moves the model valued.
    pub moves: usize,
    /// The model's own favourite, in SAN.
    pub favourite_san: String,
    /// The model's own loss for the move: its favourite's value minus the played move's (review scoring).
    pub loss: f64,
    /// The class the model's loss gets by the same thresholds.
    pub classification: Classification,
    /// The model classes the move differently from the judge.
    pub disagrees: bool,
}

/// One reviewed move of the main line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MoveReview {
    /// The node of the move in its game tree.
    #[serde(skip)]
    pub node: NodeId,
    /// The ply along the main line, from 1.
    pub ply: u32,
    /// The move number as written (`12` for both `12.` and `12...`).
    pub move_number: u32,
    /// Whether White made the move.
    pub white: bool,
    /// The move played, in SAN.
    pub san: String,
    /// The move played, in UCI.
    pub uci: String,
    /// The model's values of the move played.
    pub played: Values,
    /// The best move, in SAN (the model's, or the search's with `--sims`).
    pub best_san: String,
    /// The best move, in UCI.
    pub best_uci: String,
    /// The model's values of the best move.
    pub best: Values,
    /// The mover's win probability before the move: the best move's value under the review's scoring
    /// (its backed-up Q with search).
    pub value_before: f64,
    /// The mover's win probability after the move: the played move's value under the review's scoring
    /// (its backed-up Q with search, when the search visited it).
    pub value_after: f64,
    /// Win-probability loss, `max(0, value_before − value_after)` (0..1 scale).
    pub loss: f64,
    /// The class by the thresholds.
    pub classification: Classification,
    /// The move's accuracy in percent (Lichess's formula, see [`super::accuracy`]).
    pub accuracy: f64,
    /// The game phase of the position before the move.
    pub phase: Phase,
    /// Whether the move ended the game by the rules (checkmate, stalemate, insufficient material).
    pub ends_game: bool,
    /// Search statistics, with `--sims`.
    pub search: Option<SearchInfo>,
    /// The model's view, when a UCI engine judged the review and the model ran beside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelView>,
}

/// One player's moves in one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseSummary {
    /// The phase.
    pub phase: Phase,
    /// Reviewed moves in it.
    pub moves: usize,
    /// Their average win-probability loss (0..1 scale).
    pub average_loss: f64,
    /// The arithmetic mean of their move accuracies.
    pub accuracy: f64,
}

/// One player's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerSummary {
    /// Reviewed moves.
    pub moves: usize,
    /// Game accuracy in percent by Lichess's formula; `None` without moves.
    pub accuracy: Option<f64>,
    /// Average win-probability loss per move (0..1 scale); `None` without moves.
    pub average_loss: Option<f64>,
    /// Moves classified as inaccuracies.
    pub inaccuracies: usize,
    /// Moves classified as mistakes.
    pub mistakes: usize,
    /// Moves classified as blunders.
    pub blunders: usize,
    /// Moves the model, running beside a UCI judge, classes differently (0 without one).
    pub model_disagrees: usize,
    /// Per phase that the player has moves in, in game order.
    pub phases: Vec<PhaseSummary>,
}

impl PlayerSummary {
    /// The summary of `moves` (one player's), with the game accuracy already computed.
    pub fn of(moves: &[&MoveReview], accuracy: Option<f64>) -> PlayerSummary {
        let count = |c: Classification| moves.iter().filter(|m| m.classification == c).count();
        let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
        let losses: Vec<f64> = moves.iter().map(|m| m.loss).collect();
        let phases = Phase::ALL
            .iter()
            .filter_map(|&phase| {
                let in_phase: Vec<&&MoveReview> = moves.iter().filter(|m| m.phase == phase).collect();
                let losses: Vec<f64> = in_phase.iter().map(|m| m.loss).collect();
                let accs: Vec<f64> = in_phase.iter().map(|m| m.accuracy).collect();
                Some(PhaseSummary {
                    phase,
                    moves: in_phase.len(),
                    average_loss: mean(&losses)?,
                    accuracy: mean(&accs)?,
                })
            })
            .collect();
        PlayerSummary {
            moves: moves.len(),
            accuracy,
            average_loss: mean(&losses),
            inaccuracies: count(Classification::Inaccuracy),
            mistakes: count(Classification::Mistake),
            blunders: count(Classification::Blunder),
            model_disagrees: moves.iter().filter(|m| m.model.as_ref().is_some_and(|v| v.disagrees)).count(),
            phases,
        }
    }
}

/// The review of one game.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameReview {
    /// What was computed (scoring, search).
    pub method: String,
    /// The scoring rule of the values ([`Values::value`]).
    pub scoring: crate::mav::scoring::Scoring,
    /// The reviewed moves of the main line, in order (null moves are not reviewed).
    pub moves: Vec<MoveReview>,
    /// Null moves on the main line, which were skipped.
    pub skipped_null_moves: usize,
    /// White's summary.
    pub white: PlayerSummary,
    /// Black's summary.
    pub black: PlayerSummary,
    /// White's win probability along the game: before the first reviewed move, then after each reviewed
    /// move (the eval graph).
    pub white_win_probability: Vec<f64>,
}

impl GameReview {
    /// The number of positions the model evaluated (or searched) for this review.
    pub fn positions(&self) -> usize {
        self.moves.len()
    }
}
