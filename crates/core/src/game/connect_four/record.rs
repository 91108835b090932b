//! Connect Four game records as move strings: the columns played, `1`–`7`, one digit per ply from the
//! empty board (e.g. `4453`), as the Connect Four solving literature writes positions.
//!
//! Reading checks every move and says which one is wrong and why; surrounding whitespace is ignored, and
//! the empty string is the empty board.

use super::{Column, ConnectFourState};
use crate::game::{GameState, Outcome};

/// Why a move string cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A character that is not a column number.
    #[error("move {ply}: '{found}' is not a column; Connect Four moves are the digits 1 to 7")]
    BadCharacter {
        /// The 1-based move number (character position in the trimmed string).
        ply: usize,
        /// The character found.
        found: char,
    },
    /// A move into a column that already holds six stones.
    #[error("move {ply}: column {column} is already full")]
    FullColumn {
        /// The 1-based move number.
        ply: usize,
        /// The column (1–7).
        column: u32,
    },
    /// A move after four in a row or a full board ended the game.
    #[error(
        "move {ply}: the game is already over ({result} after move {ended_at}), so column {column} cannot be played"
    )]
    GameOver {
        /// The 1-based move number.
        ply: usize,
        /// The column (1–7).
        column: u32,
        /// The result of the finished game: `1-0`, `0-1` or `1/2-1/2`.
        result: &'static str,
        /// The move that ended the game.
        ended_at: usize,
    },
}

/// A game read from a move string: its moves and the position after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRecord {
    moves: Vec<Column>,
    end: ConnectFourState,
}

impl MoveRecord {
    /// Plays `moves` from the empty board, checking each.
    pub fn from_columns(moves: &[Column]) -> Result<MoveRecord, RecordError> {
        let mut state = ConnectFourState::new();
        for (i, &col) in moves.iter().enumerate() {
            state = play_checked(&state, col, i + 1)?;
        }
        Ok(MoveRecord { moves: moves.to_vec(), end: state })
    }

    /// The moves, first to last.
    pub fn moves(&self) -> &[Column] {
        &self.moves
    }

    /// The position after the last move.
    pub fn end(&self) -> ConnectFourState {
        self.end
    }

    /// Every position of the game, from the empty board to [`MoveRecord::end`].
    pub fn positions(&self) -> Vec<ConnectFourState> {
        let mut out = Vec::with_capacity(self.moves.len() + 1);
        let mut s = ConnectFourState::new();
        out.push(s);
        for &c in &self.moves {
            // Every move was checked when the record was built.
            match s.play(c) {
                Ok(next) => s = next,
                Err(_) => break,
            }
            out.push(s);
        }
        out
    }

    /// The record as a move string.
    pub fn to_move_string(&self) -> String {
        write_moves(&self.moves)
    }
}

fn play_checked(state: &ConnectFourState, col: Column, ply: usize) -> Result<ConnectFourState, RecordError> {
    if let Some(outcome) = state.outcome() {
        return Err(RecordError::GameOver {
            ply,
            column: col.number(),
            result: Outcome::result_str(outcome),
            ended_at: ply - 1,
        });
    }
    state.play(col).map_err(|_| RecordError::FullColumn { ply, column: col.number() })
}

/// Reads a move string such as `4453` (surrounding whitespace ignored).
pub fn read_moves(text: &str) -> Result<MoveRecord, RecordError> {
    let mut state = ConnectFourState::new();
    let mut moves = Vec::new();
    for (i, ch) in text.trim().chars().enumerate() {
        let col = Column::from_char(ch).ok_or(RecordError::BadCharacter { ply: i + 1, found: ch })?;
        state = play_checked(&state, col, i + 1)?;
        moves.push(col);
    }
    Ok(MoveRecord { moves, end: state })
}

/// Writes moves as a move string (one digit `1`–`7` per move).
pub fn write_moves(moves: &[Column]) -> String {
    moves.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Player;

    #[test]
    fn reads_and_writes_move_strings() {
        let r = read_moves(" 4453\n").expect("legal");
        assert_eq!(r.to_move_string(), "4453");
        assert_eq!(r.moves().len(), 4);
        assert_eq!(r.end().plies(), 4);
        assert_eq!(r.end().stone_at(3, 0), Some(Player::First));
        assert_eq!(r.end().stone_at(3, 1), Some(Player::Second));
        assert_eq!(r.end().stone_at(4, 0), Some(Player::First));
        assert_eq!(r.end().stone_at(2, 0), Some(Player::Second));
        assert_eq!(r.positions().len(), 5);
        assert_eq!(r.positions()[4], r.end());
        let again = MoveRecord::from_columns(r.moves()).expect("legal");
        assert_eq!(again, r);
        assert_eq!(read_moves("").expect("empty board").end(), ConnectFourState::new());
    }

    #[test]
    fn errors_name_the_move_and_the_reason() {
        assert_eq!(read_moves("448"), Err(RecordError::BadCharacter { ply: 3, found: '8' }));
        assert_eq!(read_moves("40"), Err(RecordError::BadCharacter { ply: 2, found: '0' }));
        assert_eq!(read_moves("4 4"), Err(RecordError::BadCharacter { ply: 2, found: ' ' }));
        assert_eq!(read_moves("1111111"), Err(RecordError::FullColumn { ply: 7, column: 1 }));
        // x plays 1 four times (o answers in 2): x wins with move 7, so move 8 is too late.
        let e = read_moves("12121213").expect_err("game over");
        assert_eq!(e, RecordError::GameOver { ply: 8, column: 3, result: "1-0", ended_at: 7 });
        assert!(e.to_string().contains("already over"), "{e}");
        assert!(read_moves("1111111").expect_err("full").to_string().contains("column 1 is already full"));
    }
}
