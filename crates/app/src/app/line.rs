//! The moves of the line the board follows, behind a small interface ([`MoveHistory`]) that the game tree
//! ([`super::game::GameDoc`]) implements: navigation, the board and the engine glue see a line, not a tree.

use shakmaty::Move;

use crate::game::ActionError;
use crate::game::chess::ChessState;

/// One move of a line, as the move list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMove {
    /// The move.
    pub mv: Move,
    /// Standard algebraic notation with check/mate suffix, e.g. `Nf3+`.
    pub san: String,
    /// Ply index: 1 for White's first move from the start position.
    pub ply: u32,
}

/// What the app needs from a move history: a current position, navigation, and playing a move there.
pub trait MoveHistory {
    /// The position the line starts from.
    fn start(&self) -> &ChessState;
    /// The position at the cursor (what the board shows).
    fn current(&self) -> &ChessState;
    /// How many moves of the line are before the cursor.
    fn cursor(&self) -> usize;
    /// The moves of the line (the whole line, also those after the cursor).
    fn moves(&self) -> &[LineMove];
    /// Moves the cursor to after `index` moves (clamped to the line's length).
    fn go_to(&mut self, index: usize);
    /// Plays `mv` at the cursor. If it is the next move of the line, only the cursor advances;
    /// otherwise the moves after the cursor are replaced by it.
    fn play(&mut self, mv: Move) -> Result<(), ActionError>;
    /// The move that led to the current position, if any.
    fn last_move(&self) -> Option<&LineMove> {
        self.cursor().checked_sub(1).and_then(|i| self.moves().get(i))
    }
    /// One move back.
    fn back(&mut self) {
        let c = self.cursor();
        self.go_to(c.saturating_sub(1));
    }
    /// One move forward.
    fn forward(&mut self) {
        let c = self.cursor();
        self.go_to(c + 1);
    }
}
