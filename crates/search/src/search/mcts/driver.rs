//! The synchronous driver: batches of b passes, evaluated in one call each, until a simulation budget is
//! spent. For tests and the CLI; the engine drives the state machine itself with wall-clock timeouts.

use super::search::{Completion, Mcts};
use crate::game::GameState;
use crate::inference::evaluator::Evaluator;
use crate::search::SearchError;

/// How long [`Mcts::run`] searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunLimits {
    /// Stop after this many completed simulations (counted from the start of this call).
    pub simulations: u64,
    /// b: passes (and at most this many evaluations) per batch.
    pub batch_size: usize,
}

impl<S: GameState> Mcts<S> {
    /// Searches until `limits.simulations` more simulations are done or the search is stuck. Fails only when
    /// the root itself cannot be evaluated (deeper failures just mark their nodes).
    pub fn run<E: Evaluator<S> + ?Sized>(
        &mut self,
        evaluator: &mut E,
        limits: RunLimits,
    ) -> Result<(), SearchError> {
        if limits.batch_size == 0 {
            return Err(SearchError::InvalidParam { name: "batch_size", why: "b must be at least 1".into() });
        }
        let target = self.stats.simulations + limits.simulations;
        while self.stats.simulations < target {
            let left = usize::try_from(target - self.stats.simulations).unwrap_or(usize::MAX);
            let batch = self.select_batch(limits.batch_size.min(left));
            if !batch.made_progress() {
                break;
            }
            if batch.evals.is_empty() {
                continue;
            }
            let requests: Vec<_> = batch.evals.iter().map(|e| e.request.clone()).collect();
            let mut results = evaluator.evaluate(&requests).into_iter();
            for e in &batch.evals {
                let is_root = self.is_root_pending();
                let result = results.next().unwrap_or_else(|| {
                    Err(crate::inference::evaluator::EvalError::Backend(
                        "the evaluator returned fewer results than requests".into(),
                    ))
                });
                let root_err = match (&result, is_root) {
                    (Err(err), true) => Some(SearchError::RootEvaluation(err.clone())),
                    _ => None,
                };
                if let (Completion::NodeFailed(why), true) = (self.complete(e.ticket, result), is_root) {
                    self.abandon_all();
                    return Err(root_err.unwrap_or(SearchError::RootUnusable(why)));
                }
            }
        }
        Ok(())
    }
}
