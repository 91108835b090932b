//! Errors of the search layer.

use crate::game::ActionError;
use crate::inference::evaluator::EvalError;

/// What went wrong in a search call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// A search setting is out of range.
    #[error("invalid search setting {name}: {why}")]
    InvalidParam {
        /// The setting.
        name: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// The scoring was changed while evaluations were out: the tree's values are under the old rule.
    #[error("the scoring cannot change from {from} to {to} while the search runs: stop it first")]
    ScoringChangedMidSearch {
        /// The rule the tree was built under.
        from: crate::mav::scoring::Scoring,
        /// The rule asked for.
        to: crate::mav::scoring::Scoring,
    },
    /// A move given to the search (tree reuse, tree explorer) is not legal where it was played.
    #[error("move {text} cannot be played here: {source}")]
    IllegalAction {
        /// The move as text.
        text: String,
        /// The rules' answer.
        #[source]
        source: ActionError,
    },
    /// A path given to the tree explorer leaves the tree.
    #[error("the search tree has no node at move {index} of the path ({text}): it was never expanded")]
    NotInTree {
        /// The 0-based index of the first move not in the tree.
        index: usize,
        /// That move as text.
        text: String,
    },
    /// The model could not evaluate the root position, so there is nothing to search.
    #[error("the model could not evaluate the root position: {0}")]
    RootEvaluation(#[from] EvalError),
    /// The model's answer for the root position cannot be used (no moves, no result).
    #[error("the model's answer for the root position is unusable: {0}")]
    RootUnusable(String),
    /// The tree's statistics contradict each other (a bug; reported by the consistency check).
    #[error("search tree inconsistent: {0}")]
    Inconsistent(String),
}
