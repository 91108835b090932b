//! Players and game results.

use std::fmt;

/// One of the two players. In chess the first player is White.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Player {
    /// The player who moves first (White in chess, Red in Connect Four, Black in Hex).
    First,
    /// The player who moves second.
    Second,
}

impl Player {
    /// The other player.
    pub fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeReason {
    /// The side to move is checkmated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// Neither side can possibly checkmate.
    InsufficientMaterial,
    /// Fifty moves by each side without a capture or pawn move (halfmove clock ≥ 100).
    FiftyMoves,
    /// The same position occurred three times (decided by a game record, not a single state).
    Repetition,
    /// Four stones in a row (Connect Four).
    FourInARow,
    /// The board is full without four in a row (Connect Four).
    BoardFull,
    /// A chain of stones joins the player's two edges (Hex).
    Connection,
}

/// The result of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `winner` won.
    Win {
        /// The winner.
        winner: Player,
        /// How.
        reason: OutcomeReason,
    },
    /// Nobody won.
    Draw {
        /// Why.
        reason: OutcomeReason,
    },
}

impl OutcomeReason {
    /// How the game ended, in words (`checkmate`, `the fifty-move rule`, `four in a row`).
    pub fn words(self) -> &'static str {
        match self {
            OutcomeReason::Checkmate => "checkmate",
            OutcomeReason::Stalemate => "stalemate",
            OutcomeReason::InsufficientMaterial => "insufficient material",
            OutcomeReason::FiftyMoves => "the fifty-move rule",
            OutcomeReason::Repetition => "repetition",
            OutcomeReason::FourInARow => "four in a row",
            OutcomeReason::BoardFull => "a full board",
            OutcomeReason::Connection => "a connection",
        }
    }
}

impl Outcome {
    /// The winner, if any.
    pub fn winner(self) -> Option<Player> {
        match self {
            Outcome::Win { winner, .. } => Some(winner),
            Outcome::Draw { .. } => None,
        }
    }

    /// The reason the game ended.
    pub fn reason(self) -> OutcomeReason {
        match self {
            Outcome::Win { reason, .. } | Outcome::Draw { reason } => reason,
        }
    }

    /// The result as a PGN/MAV result string: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result_str(self) -> &'static str {
        match self.winner() {
            Some(Player::First) => "1-0",
            Some(Player::Second) => "0-1",
            None => "1/2-1/2",
        }
    }

    /// The value of this result for `player`: 1 for a win, 0.5 for a draw, 0 for a loss.
    pub fn value_for(self, player: Player) -> f64 {
        match self.winner() {
            Some(w) if w == player => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.result_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_values() {
        let w = Outcome::Win { winner: Player::Second, reason: OutcomeReason::Checkmate };
        assert_eq!(w.result_str(), "0-1");
        assert_eq!(w.value_for(Player::Second), 1.0);
        assert_eq!(w.value_for(Player::First), 0.0);
        let d = Outcome::Draw { reason: OutcomeReason::Stalemate };
        assert_eq!(d.result_str(), "1/2-1/2");
        assert_eq!(d.value_for(Player::First), 0.5);
        assert_eq!(Player::First.other(), Player::Second);
    }
}
