//! What a review computes: scoring, optional search budget, batch size and classification thresholds.

use serde::{Deserialize, Serialize};

use super::classify::Thresholds;
use super::error::ReviewError;
use crate::inference::evaluator::Scoring;

/// Settings of a game review.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReviewOptions {
    /// How a move's value distribution becomes one number.
    pub scoring: Scoring,
    /// `None`: the model alone, one evaluation per position (every move valued at once). `Some(n)`: an
    /// MCTS of `n` simulations per position; the best move is the search's, values are backed-up Q where
    /// the search visited the move and the model's value otherwise.
    pub simulations: Option<u64>,
    /// Positions per model call without search; the MCTS batch size b with search.
    pub batch_size: usize,
    /// Classification thresholds.
    pub thresholds: Thresholds,
}

impl Default for ReviewOptions {
    fn default() -> Self {
        ReviewOptions {
            scoring: Scoring::Mean,
            simulations: None,
            batch_size: 16,
            thresholds: Thresholds::default(),
        }
    }
}

impl ReviewOptions {
    /// Checks every setting's range.
    pub fn validate(&self) -> Result<(), ReviewError> {
        if self.batch_size == 0 {
            return Err(ReviewError::InvalidOption { name: "batch_size", why: "must be at least 1".into() });
        }
        if self.simulations == Some(0) {
            return Err(ReviewError::InvalidOption {
                name: "simulations",
                why: "must be at least 1 (leave it out for the model alone)".into(),
            });
        }
        self.thresholds.validate()
    }

    /// A short description for comments and reports: `mean scoring, model alone` or
    /// `max scoring, MCTS 64 simulations`.
    pub fn describe(&self) -> String {
        let scoring = self.scoring;
        match self.simulations {
            None => format!("{scoring} scoring, model alone"),
            Some(n) => format!("{scoring} scoring, MCTS {n} simulations"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_and_description() {
        let o = ReviewOptions::default();
        assert!(o.validate().is_ok());
        assert_eq!(o.describe(), "mean scoring, model alone");
        let s = ReviewOptions { scoring: Scoring::Max, simulations: Some(64), ..o };
        assert_eq!(s.describe(), "max scoring, MCTS 64 simulations");
        assert!(ReviewOptions { batch_size: 0, ..o }.validate().is_err());
        assert!(ReviewOptions { simulations: Some(0), ..o }.validate().is_err());
    }
}
