//! The moves of the line being analysed, behind a small interface ([`MoveHistory`]) so that the PGN
//! module's variation tree can replace the simple [`LinearLine`] later.

use shakmaty::san::SanPlus;
use shakmaty::{Move, Position};

use crate::game::chess::ChessState;
use crate::game::{ActionError, GameState};

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

/// A single line of moves from a start position: the move list before variation trees exist.
#[derive(Debug, Clone)]
pub struct LinearLine {
    start: ChessState,
    /// `states[i]` is the position after `i` moves; `states[0]` is the start.
    states: Vec<ChessState>,
    moves: Vec<LineMove>,
    cursor: usize,
}

impl Default for LinearLine {
    fn default() -> Self {
        LinearLine::new(ChessState::startpos())
    }
}

impl LinearLine {
    /// An empty line from `start`.
    pub fn new(start: ChessState) -> LinearLine {
        LinearLine { states: vec![start.clone()], start, moves: Vec::new(), cursor: 0 }
    }

    /// The number of the first ply: 1 when White moves first, 2 when the start has Black to move, plus
    /// two for each full move already played before the start position.
    fn first_ply(&self) -> u32 {
        let pos = self.start.position();
        let full = pos.fullmoves().get();
        (full - 1) * 2 + if pos.turn().is_white() { 1 } else { 2 }
    }
}

impl MoveHistory for LinearLine {
    fn start(&self) -> &ChessState {
        &self.start
    }

    fn current(&self) -> &ChessState {
        &self.states[self.cursor]
    }

    fn cursor(&self) -> usize {
        self.cursor
    }

    fn moves(&self) -> &[LineMove] {
        &self.moves
    }

    fn go_to(&mut self, index: usize) {
        self.cursor = index.min(self.moves.len());
    }

    fn play(&mut self, mv: Move) -> Result<(), ActionError> {
        if self.moves.get(self.cursor).is_some_and(|m| m.mv == mv) {
            self.cursor += 1;
            return Ok(());
        }
        let here = self.current().clone();
        let next = here.play(mv)?;
        let san = SanPlus::from_move(here.position().clone(), mv).to_string();
        self.moves.truncate(self.cursor);
        self.states.truncate(self.cursor + 1);
        let ply = self.first_ply() + self.cursor as u32;
        self.moves.push(LineMove { mv, san, ply });
        self.states.push(next);
        self.cursor += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_uci(line: &mut LinearLine, uci: &str) {
        let mv = line.current().parse_action(uci).expect("legal in test line");
        line.play(mv).expect("legal in test line");
    }

    #[test]
    fn plays_navigates_and_branches() {
        let mut line = LinearLine::default();
        for m in ["e2e4", "e7e5", "g1f3"] {
            play_uci(&mut line, m);
        }
        let sans: Vec<&str> = line.moves().iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        assert_eq!(line.moves()[2].ply, 3);
        line.back();
        line.back();
        assert_eq!(line.cursor(), 1);
        // The same next move only advances.
        play_uci(&mut line, "e7e5");
        assert_eq!(line.moves().len(), 3);
        assert_eq!(line.cursor(), 2);
        // A different move truncates.
        line.back();
        play_uci(&mut line, "c7c5");
        let sans: Vec<&str> = line.moves().iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["e4", "c5"]);
        line.go_to(0);
        assert_eq!(line.current(), line.start());
        line.go_to(99);
        assert_eq!(line.cursor(), 2);
        assert_eq!(line.last_move().map(|m| m.san.as_str()), Some("c5"));
    }

    #[test]
    fn ply_numbers_follow_the_start_position() {
        let start = crate::app::position_setup::parse_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 7",
        )
        .expect("valid");
        let mut line = LinearLine::new(start);
        play_uci(&mut line, "e7e5");
        assert_eq!(line.moves()[0].ply, 14);
    }

    #[test]
    fn illegal_move_leaves_the_line_unchanged() {
        let mut line = LinearLine::default();
        play_uci(&mut line, "e2e4");
        let other = ChessState::startpos().parse_action("d2d4").expect("legal at start");
        assert!(line.play(other).is_err());
        assert_eq!(line.moves().len(), 1);
        assert_eq!(line.cursor(), 1);
    }
}
