//! Game rules behind one small generic interface.
//!
//! Search, inference and the engine only ever talk to a [`GameState`]; chess and Chess960 implement it in
//! [`chess`], Connect Four in [`connect_four`] and Hex in [`hex`], without touching the layers above.
//! This
//! module is pure: no I/O, no threads.
//!
//! ```
//! use mavboard_core::game::chess::ChessState;
//! use mavboard_core::game::connect_four::ConnectFourState;
//! use mavboard_core::game::{GameState, Player};
//!
//! // Every game is played through the same interface: legal moves, play, outcome, text.
//! fn play_all<S: GameState>(mut state: S, moves: &[&str]) -> S {
//!     for m in moves {
//!         let action = state.parse_action(m).expect("a legal move");
//!         state = state.play(action).expect("legal");
//!     }
//!     state
//! }
//! let chess = play_all(ChessState::startpos(), &["f2f3", "e7e5", "g2g4", "d8h4"]);
//! assert_eq!(chess.outcome().and_then(|o| o.winner()), Some(Player::Second));
//! let four = play_all(ConnectFourState::default(), &["4", "4", "3"]);
//! assert_eq!(four.legal_actions().len(), 7);
//! assert_eq!(four.to_move(), Player::Second);
//! ```

pub mod chess;
pub mod connect_four;
pub mod fen;
pub mod hex;
pub mod outcome;
pub mod perft;
pub mod perft_suite;

use std::fmt::Debug;
use std::hash::Hash;

pub use outcome::{Outcome, OutcomeReason, Player};

/// Which game (and variant) a state belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    /// Standard chess.
    Chess,
    /// Fischer random chess (Chess960): castling moves the king onto its rook.
    Chess960,
    /// Connect Four on the standard 7 × 6 board.
    ConnectFour,
    /// Hex on an N×N board (the size is part of the state, see [`hex`]).
    Hex,
}

impl GameKind {
    /// The name used in MAV headers (`<mav game=...>`) and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Chess => "chess",
            GameKind::Chess960 => "chess960",
            GameKind::ConnectFour => "connect_four",
            GameKind::Hex => "hex",
        }
    }
}

/// An error from [`GameState::play`] or [`GameState::parse_action`]: the action is not legal here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// The text is not an action of this game at all.
    #[error("'{text}' is not a valid move notation: {reason}")]
    Syntax {
        /// The text that was given.
        text: String,
        /// Why it could not be read.
        reason: String,
    },
    /// The action is well formed but not legal in this state.
    #[error("'{text}' is not a legal move in this position")]
    Illegal {
        /// The action as text.
        text: String,
    },
}

/// One state of a two-player, perfect-information, turn-based game.
///
/// A value of this type is always a valid state of its game (the type encodes that invariant: raw,
/// possibly invalid descriptions are parsed and validated by each game's constructors). Equal values are
/// the same state (same position, side to move, and whatever else the rules depend on).
pub trait GameState: Clone + Debug + PartialEq + Send + Sync + 'static {
    /// A move. Cheap to copy and hashable, so search trees and caches can key on it.
    type Action: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// Which game this is.
    fn kind(&self) -> GameKind;

    /// The player to move.
    fn to_move(&self) -> Player;

    /// How many plies of its game were played before this state (0 = the first move is next). Chess reads
    /// it from the move counter and side to move; the other games count what is on the board. Search uses
    /// it for ply-dependent settings (the prior's temperature schedule).
    fn ply(&self) -> u32;

    /// Every legal action, in a deterministic order. Empty exactly when the game is over.
    fn legal_actions(&self) -> Vec<Self::Action>;

    /// The state after `action`, or an error if it is not legal here.
    fn play(&self, action: Self::Action) -> Result<Self, ActionError>;

    /// The result if the game is over (by the rules that a single state can decide), else `None`.
    fn outcome(&self) -> Option<Outcome>;

    /// The action in the game's text notation (UCI for chess: `e2e4`, `e1h1` for Chess960 castling).
    fn action_to_text(&self, action: Self::Action) -> String;

    /// Reads an action in the game's text notation and checks that it is legal here.
    fn parse_action(&self, text: &str) -> Result<Self::Action, ActionError>;

    /// The state as its standard one-line text (FEN for chess, Shredder-FEN castling for Chess960).
    fn to_text(&self) -> String;

    /// A 64-bit hash of the state (Zobrist for chess), equal for equal states; used by caches and
    /// transposition tables.
    fn hash64(&self) -> u64;
}
