//! The score of one labelled move: an engine score (chess) or a solver's result (Connect Four, Hex).
//!
//! Stored flattened into the move's JSON object, one key per kind:
//!
//! - `{"cp":31}`, `{"mate":-3}`: Stockfish's score (chess labels; unchanged from the first label format);
//! - `{"exact":{"result":"win","plies":7}}`: a solver's proven result for the player making the move,
//!   with the plies until the game ends under perfect play when the solver knows them (Connect Four;
//!   the Hex solver proves win/loss only and leaves `plies` out);
//! - `{"mcts":{"wp":0.62,"visits":1840}}`: an estimate from Monte Carlo tree search with random
//!   playouts (Hex beyond the exact solver's reach): the move's win probability and its visits.
//!
//! # From a proven result to a win probability
//!
//! A draw is ½. A win in `p` plies is `1 − 0.25·p/42`, a loss in `p` plies `0.25·p/42` (42 = the most
//! plies a Connect Four game has); a win or loss without a distance is 1 or 0. So every win lies in
//! (0.75, 1], every loss in [0, 0.25), and the order of the values is the solver's own order (sooner wins
//! above later wins above draws above later losses above sooner losses). The discount is there so that a
//! model can tell a quick win from a slow one: with 1/0/½ every winning move of a won position has the same
//! label, and a player that picks any of them can stall forever; a search over such a model has nothing to
//! prefer. 0.25 keeps a proven result far from the uncertain middle, and a bucket (1/64) spans about 2.7
//! plies, so the 64 MAV buckets still separate a win in 1 from a win in 9.

use serde::{Deserialize, Serialize};

use crate::uci::ScoreValue;

/// The share of the win probability that the distance to the end can take off a proven result.
pub const DISTANCE_DISCOUNT: f64 = 0.25;

/// The plies over which the discount runs: the longest Connect Four game (a full 7 × 6 board).
pub const DISTANCE_SCALE: f64 = 42.0;

/// A proven result for the player making a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExactResult {
    /// The mover wins with perfect play.
    Win,
    /// Perfect play draws.
    Draw,
    /// The mover loses against perfect play.
    Loss,
}

/// One labelled move's score, from the point of view of the player making it (who is to move in the
/// labelled position).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelScore {
    /// Centipawns (Stockfish).
    Cp(i32),
    /// Mate in this many moves (Stockfish); negative when the mover gets mated.
    Mate(i32),
    /// A solver's proven result.
    Exact {
        /// Win, draw or loss.
        result: ExactResult,
        /// Plies until the game ends under perfect play, the move included, when the solver gives them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plies: Option<u32>,
    },
    /// A Monte Carlo tree search estimate.
    Mcts {
        /// The estimated win probability in [0, 1].
        wp: f64,
        /// Simulations through the move.
        visits: u32,
    },
}

impl LabelScore {
    /// The win probability of the score (see the module documentation for proven results; the Lichess
    /// formula for centipawns; 1 or 0 for mates).
    pub fn win_probability(self) -> f64 {
        match self {
            LabelScore::Cp(cp) => ScoreValue::Cp(cp).win_probability(),
            LabelScore::Mate(m) => ScoreValue::Mate(m).win_probability(),
            LabelScore::Exact { result, plies } => exact_win_probability(result, plies),
            LabelScore::Mcts { wp, .. } => wp.clamp(0.0, 1.0),
        }
    }
}

impl From<ScoreValue> for LabelScore {
    fn from(s: ScoreValue) -> Self {
        match s {
            ScoreValue::Cp(cp) => LabelScore::Cp(cp),
            ScoreValue::Mate(m) => LabelScore::Mate(m),
        }
    }
}

/// The win probability of a proven result `plies` plies from the end (see the module documentation).
pub fn exact_win_probability(result: ExactResult, plies: Option<u32>) -> f64 {
    let discount = plies.map_or(0.0, |p| DISTANCE_DISCOUNT * (f64::from(p) / DISTANCE_SCALE).min(1.0));
    match result {
        ExactResult::Win => 1.0 - discount,
        ExactResult::Draw => 0.5,
        ExactResult::Loss => discount,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_layout_of_every_kind() {
        let json = |s: LabelScore| serde_json::to_string(&s).expect("serializes");
        assert_eq!(json(LabelScore::Cp(31)), r#"{"cp":31}"#);
        assert_eq!(json(LabelScore::Mate(-3)), r#"{"mate":-3}"#);
        let win = LabelScore::Exact { result: ExactResult::Win, plies: Some(7) };
        assert_eq!(json(win), r#"{"exact":{"result":"win","plies":7}}"#);
        let loss = LabelScore::Exact { result: ExactResult::Loss, plies: None };
        assert_eq!(json(loss), r#"{"exact":{"result":"loss"}}"#);
        let m = LabelScore::Mcts { wp: 0.625, visits: 1840 };
        assert_eq!(json(m), r#"{"mcts":{"wp":0.625,"visits":1840}}"#);
        for s in [win, loss, m, LabelScore::Cp(-4)] {
            assert_eq!(serde_json::from_str::<LabelScore>(&json(s)).expect("parses"), s);
        }
    }

    #[test]
    fn proven_results_keep_the_solver_order_and_their_bands() {
        let w = |p| exact_win_probability(ExactResult::Win, Some(p));
        let l = |p| exact_win_probability(ExactResult::Loss, Some(p));
        assert!(w(1) > w(9) && w(9) > w(41) && w(41) > 0.75);
        assert!(l(2) < l(12) && l(12) < l(42) && l(42) <= 0.25);
        assert_eq!(exact_win_probability(ExactResult::Draw, Some(30)), 0.5);
        assert_eq!(exact_win_probability(ExactResult::Win, None), 1.0);
        assert_eq!(exact_win_probability(ExactResult::Loss, None), 0.0);
        let b = crate::mav::buckets::Buckets::mav();
        let bucket = |p: f64| b.bucket_of(p).expect("in range");
        assert_eq!(bucket(w(1)), 63);
        assert!(bucket(w(9)) < bucket(w(1)), "a bucket spans under 3 plies");
        assert_eq!(LabelScore::Mcts { wp: 1.5, visits: 1 }.win_probability(), 1.0);
        assert_eq!(LabelScore::from(ScoreValue::Mate(2)), LabelScore::Mate(2));
    }
}
