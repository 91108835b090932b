//! Why something the user asked of the app could not be done ([`AppError`]): the app's own failures, each
//! variant naming its stage, shown to the user through its message.

use std::path::PathBuf;

use crate::pgn::index::ReadGameError;
use crate::pgn::reader::GameError;

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
    /// The game list has no game with this number (another file was opened meanwhile).
    #[error("there is no game {number} in {list}")]
    NoGame {
        /// The game's number, from 1.
        number: usize,
        /// Where the list came from.
        list: String,
    },
    /// A game of the list is not a readable game (its place in the file and the reason).
    #[error(transparent)]
    Game(Box<GameError>),
    /// A game of the list could not be read again from its file.
    #[error(transparent)]
    ReadGame(Box<ReadGameError>),
    /// The file of the game list cannot be opened again.
    #[error("{path} cannot be opened again to read game {number}: {reason}", path = .path.display())]
    Reopen {
        /// The file.
        path: PathBuf,
        /// The game asked for.
        number: usize,
        /// The operating system's reason.
        reason: String,
    },
    /// The game has no move on its main line.
    #[error("the game has no moves to review")]
    NothingToReview,
    /// The review itself failed (a position the model could not value, a move it gave no value for).
    #[error("{reason}")]
    Review {
        /// The review's error, in words.
        reason: String,
    },
    /// The UCI engine that judges a review could not start or failed.
    #[error("the review's engine failed: {reason}")]
    Judge {
        /// Its error.
        reason: String,
    },
    /// A background thread could not be started.
    #[error("could not start {what}'s thread: {reason}")]
    Thread {
        /// What would have run on it.
        what: &'static str,
        /// The operating system's reason.
        reason: String,
    },
    /// The engine thread has stopped, so nothing more can be asked of it.
    #[error("the engine thread has stopped; restart mavboard")]
    EngineStopped,
}

impl From<GameError> for AppError {
    fn from(e: GameError) -> AppError {
        AppError::Game(Box::new(e))
    }
}

impl From<ReadGameError> for AppError {
    fn from(e: ReadGameError) -> AppError {
        AppError::ReadGame(Box::new(e))
    }
}

impl AppError {
    /// The app's error for a failed review.
    pub fn review(e: &crate::review::error::ReviewError) -> AppError {
        AppError::Review { reason: e.to_string() }
    }

    /// The app's error for a thread that `std::thread::Builder::spawn` could not start.
    pub fn thread(what: &'static str, e: &std::io::Error) -> AppError {
        AppError::Thread { what, reason: e.to_string() }
    }
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
