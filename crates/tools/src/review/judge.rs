//! A UCI engine (Stockfish, or any engine with MultiPV) as the review's judge, as Lichess and En Croissant
//! review games: every legal move of a position scored by one MultiPV search, offered through the
//! [`Evaluator`] interface so that reviewing, batching and annotating work unchanged. Each move's value is
//! the engine's score as a win probability (the Lichess formula; 1 or 0 for a mate), held as a one-hot
//! distribution over [`JUDGE_BUCKETS`] buckets (max and mean scoring then agree to within 0.0005).

use std::path::Path;

use super::error::ReviewError;
use crate::datagen::label::{Labeler, StockfishLabeler};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator, MoveValue};
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::uci::SearchLimits;

/// The resolution of a judged move's value: 1000 buckets of 0.001 win probability.
pub const JUDGE_BUCKETS: u32 = 1000;

/// The engine's hash table, cleared before every position (so a review does not depend on game order).
const HASH_MB: u32 = 64;

/// A UCI engine judging positions (see the module documentation).
pub struct EngineJudge {
    labeler: StockfishLabeler,
    limits: SearchLimits,
}

impl std::fmt::Debug for EngineJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineJudge")
            .field("engine", &self.labeler.name())
            .field("limits", &self.limits)
            .finish()
    }
}

impl EngineJudge {
    /// Starts the engine at `path` (one thread), searching every position to `limits`.
    pub fn start(path: &Path, limits: SearchLimits) -> Result<EngineJudge, ReviewError> {
        let labeler = StockfishLabeler::start(path, HASH_MB, limits)
            .map_err(|e| ReviewError::Judge(format!("{}: {e}", path.display())))?;
        Ok(EngineJudge { labeler, limits })
    }

    /// The engine's name and the limit, e.g. `Stockfish 15.1 at depth 12`.
    pub fn describe(&self) -> String {
        format!("{} at {}", self.labeler.name(), describe_limits(&self.limits))
    }

    fn judge(&mut self, state: &ChessState) -> Result<EvalResult<ChessState>, EvalError> {
        let label = self.labeler.label(state).map_err(|e| EvalError::Backend(e.to_string()))?;
        let buckets = Buckets::new(JUDGE_BUCKETS).map_err(|e| EvalError::Backend(e.to_string()))?;
        let mut moves = Vec::with_capacity(label.moves.len());
        for m in &label.moves {
            let action = state.parse_action(&m.uci).map_err(|e| EvalError::Backend(e.to_string()))?;
            let index = buckets
                .bucket_of(m.score.win_probability())
                .map_err(|e| EvalError::Backend(e.to_string()))?;
            let dist =
                ValueDistribution::one_hot(buckets, index).map_err(|e| EvalError::Backend(e.to_string()))?;
            moves.push(MoveValue::valued(action, m.uci.clone(), dist));
        }
        Ok(EvalResult::values(moves, state.outcome()))
    }
}

/// The limits in words: `depth 12`, `100000 nodes`, `500 ms a position` (joined by `, ` when several).
pub fn describe_limits(limits: &SearchLimits) -> String {
    let mut parts = Vec::new();
    if let Some(d) = limits.depth {
        parts.push(format!("depth {d}"));
    }
    if let Some(n) = limits.nodes {
        parts.push(format!("{n} nodes"));
    }
    if let Some(t) = limits.movetime {
        parts.push(format!("{} ms a position", t.as_millis()));
    }
    if parts.is_empty() {
        parts.push("no limit".to_owned());
    }
    parts.join(", ")
}

impl Evaluator<ChessState> for EngineJudge {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        requests.iter().map(|r| self.judge(&r.state)).collect()
    }
}
