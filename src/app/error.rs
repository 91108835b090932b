//! Why something the user asked of the app could not be done ([`AppError`]): the app's own failures, each
//! variant naming its stage, shown to the user through its message.

/// A failure of the app itself (its inputs come from below: the rules, a package, a journal file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// Chess is set up on the analysis board, not as a board game.
    #[error("chess is played on the analysis board")]
    ChessOnTheAnalysisBoard,
    /// A Hex board of this size cannot be set up.
    #[error("Hex {size}×{size} cannot be played: {reason}")]
    HexBoard {
        /// The size asked for.
        size: u32,
        /// Why not.
        reason: String,
    },
    /// The game on the board has no start position (no game is set up).
    #[error("no Connect Four or Hex game is on the board")]
    NoBoardGame,
    /// A move of the game on the board does not replay from its start, so its record cannot be written.
    #[error("move {number} ({text}) does not replay: {reason}")]
    Replay {
        /// The move's number (from 1).
        number: usize,
        /// The move as written.
        text: String,
        /// Why not.
        reason: String,
    },
    /// No model package lists the game.
    #[error("No model knows {game}: {tried}. Load a package trained on it (Engine > Load model…).")]
    NoModelFor {
        /// The game, in words.
        game: &'static str,
        /// The packages tried and why each was not used, or that none was found.
        tried: String,
    },
    /// A game of a crash journal could not be put back on the board.
    #[error("its {game} game {problem}")]
    Restore {
        /// The game, in words (`chess`, `Connect Four`, …).
        game: String,
        /// What is wrong with it.
        problem: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_stage_and_the_fix() {
        let e = AppError::NoModelFor { game: "Hex", tried: "no package was found".into() };
        assert!(e.to_string().contains("Load a package trained on it"), "{e}");
        let e = AppError::Replay { number: 3, text: "d4".into(), reason: "the cell is taken".into() };
        assert_eq!(e.to_string(), "move 3 (d4) does not replay: the cell is taken");
        let e = AppError::Restore { game: "chess".into(), problem: "is empty".into() };
        assert_eq!(e.to_string(), "its chess game is empty");
    }
}
