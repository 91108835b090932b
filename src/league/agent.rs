//! The [`Agent`] interface the game loop plays through, and what an agent sees.

use shakmaty::Move;

use super::LeagueError;
use crate::game::chess::ChessState;

/// The game so far, as an agent sees it when it is to move.
#[derive(Debug, Clone, Copy)]
pub struct GameView<'a> {
    /// The opening position the game started from.
    pub start: &'a ChessState,
    /// The moves played since, in order.
    pub moves: &'a [Move],
    /// The current position (the agent's side is to move).
    pub state: &'a ChessState,
    /// The current ply counted from the game's real start (the opening's move number), for schedules.
    pub ply: u32,
}

/// The move an agent chose and a short note for the PGN (its value, the search's statistics, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The move (legal in the position it was asked about).
    pub action: Move,
    /// A note for the move's PGN comment.
    pub note: Option<String>,
}

/// A player of the league.
pub trait Agent {
    /// The label used in the PGN and the tables.
    fn label(&self) -> &str;

    /// A new game starts (clear trees, hash tables).
    fn new_game(&mut self) -> Result<(), LeagueError>;

    /// Chooses a move in `game.state`, which is not over.
    fn choose(&mut self, game: &GameView<'_>) -> Result<Choice, LeagueError>;
}
