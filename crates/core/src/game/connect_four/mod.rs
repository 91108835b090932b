//! Connect Four: 7 columns × 6 rows, stones drop to the lowest empty cell of a column, four in a row
//! (across, up or diagonally) wins, a full board without four in a row is a draw.
//!
//! The state is two bitboards (see [`bitboard`] for the layout) and the ply count. Actions are
//! [`Column`]s, written `1`–`7` from left to right; whole games are written as move strings such as
//! `4453` ([`record`]). The first player (written `x`) is often called Red or Yellow elsewhere; the
//! second is `o`.

pub mod bitboard;
pub mod record;

use std::fmt;

use bitboard::{BOARD, CELLS, HEIGHT, WIDTH, column_mask, has_four, playable, top_cell};

use super::{ActionError, GameKind, GameState, Outcome, OutcomeReason, Player};

/// A column to drop a stone in. Holds the 0-based index `0..7`; its text is the 1-based number `1`–`7`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Column(u8);

impl Column {
    /// Every column, left to right.
    pub const ALL: [Column; WIDTH as usize] =
        [Column(0), Column(1), Column(2), Column(3), Column(4), Column(5), Column(6)];

    /// The column with 0-based index `index`, if it is on the board.
    pub fn from_index(index: u32) -> Option<Column> {
        u8::try_from(index).ok().filter(|&i| u32::from(i) < WIDTH).map(Column)
    }

    /// The column with 1-based number `number` (`1`–`7`), if it is on the board.
    pub fn from_number(number: u32) -> Option<Column> {
        number.checked_sub(1).and_then(Column::from_index)
    }

    /// Reads the notation `1`–`7`.
    pub fn from_char(c: char) -> Option<Column> {
        c.to_digit(10).and_then(Column::from_number)
    }

    /// The 0-based index (0 = leftmost).
    pub fn index(self) -> u32 {
        u32::from(self.0)
    }

    /// The 1-based number used in the notation.
    pub fn number(self) -> u32 {
        u32::from(self.0) + 1
    }

    /// The same column seen in a mirror (1 ↔ 7, 2 ↔ 6, 3 ↔ 5).
    pub fn mirrored(self) -> Column {
        Column(6 - self.0)
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// A board that no game of Connect Four can reach (see [`ConnectFourState::from_bitboards`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Two stones on one cell, or a stone outside the 7 × 6 board.
    #[error("the two players' stones overlap or lie outside the 7 × 6 board")]
    Overlap,
    /// A stone with an empty cell below it.
    #[error("column {column} has a stone above an empty cell: stones fall to the lowest empty cell")]
    Floating {
        /// The column (1–7).
        column: u32,
    },
    /// The first player must have as many stones as the second, or one more.
    #[error(
        "the first player has {first} stones and the second {second}: the first player moves first, so \
         it has as many stones as the second or one more"
    )]
    StoneCount {
        /// Stones of the first player.
        first: u32,
        /// Stones of the second player.
        second: u32,
    },
    /// Four in a row that the last move cannot have made (both players have one, the player who did not
    /// move last has one, or no single top stone of the winner completes all of its lines).
    #[error("the board has four in a row that no game can reach (the game ends at the first four in a row)")]
    UnreachableWin,
}

/// A Connect Four position: whose stones are where, and the number of plies played.
///
/// Always a consistent position: built from the empty board by legal moves, or from bitboards checked by
/// [`ConnectFourState::from_bitboards`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectFourState {
    /// The stones of the first and the second player.
    stones: [u64; 2],
    /// Plies played (= stones on the board).
    plies: u8,
}

impl Default for ConnectFourState {
    fn default() -> Self {
        ConnectFourState::new()
    }
}

fn index(p: Player) -> usize {
    match p {
        Player::First => 0,
        Player::Second => 1,
    }
}

impl ConnectFourState {
    /// The empty board, the first player to move.
    pub const fn new() -> ConnectFourState {
        ConnectFourState { stones: [0, 0], plies: 0 }
    }

    /// The position from the stones of each player, checked to be consistent: no overlap, no floating
    /// stone, the first player has as many stones as the second or one more, and any four in a row belongs
    /// to the player who moved last and goes through one of its top stones whose removal leaves no four in
    /// a row on the board (so the game ended with that move and not before).
    pub fn from_bitboards(first: u64, second: u64) -> Result<ConnectFourState, PositionError> {
        if first & second != 0 || (first | second) & !BOARD != 0 {
            return Err(PositionError::Overlap);
        }
        let occupied = first | second;
        for c in 0..WIDTH {
            let col = (occupied & column_mask(c)) >> (c * bitboard::COLUMN_BITS);
            // The stones of a column are a contiguous run from the bottom: col + 1 is a power of two.
            if (col + 1) & col != 0 {
                return Err(PositionError::Floating { column: c + 1 });
            }
        }
        let (nf, ns) = (first.count_ones(), second.count_ones());
        if nf != ns && nf != ns + 1 {
            return Err(PositionError::StoneCount { first: nf, second: ns });
        }
        // CELLS is 42, so the stone count fits.
        let plies = u8::try_from(nf + ns).map_err(|_| PositionError::Overlap)?;
        let state = ConnectFourState { stones: [first, second], plies };
        let last = if nf > ns { first } else { second };
        let other = if nf > ns { second } else { first };
        if has_four(other) {
            return Err(PositionError::UnreachableWin);
        }
        if has_four(last) {
            let tops = (0..WIDTH).filter_map(|c| {
                let col = occupied & column_mask(c);
                // The highest stone of the column.
                (col != 0).then(|| 1u64 << (63 - col.leading_zeros()))
            });
            if !tops.filter(|t| last & t != 0).any(|t| !has_four(last & !t)) {
                return Err(PositionError::UnreachableWin);
            }
        }
        Ok(state)
    }

    /// Plays a whole move string such as `4453` from the empty board (see [`record`]).
    pub fn from_moves(moves: &str) -> Result<ConnectFourState, record::RecordError> {
        record::read_moves(moves).map(|game| game.end())
    }

    /// The stones of `player`.
    pub fn stones(&self, player: Player) -> u64 {
        self.stones[index(player)]
    }

    /// Every stone on the board.
    pub fn occupied(&self) -> u64 {
        self.stones[0] | self.stones[1]
    }

    /// Plies played so far (stones on the board).
    pub fn plies(&self) -> u32 {
        u32::from(self.plies)
    }

    /// Who has a stone in column `col` and row `row` (0-based, row 0 at the bottom).
    pub fn stone_at(&self, col: u32, row: u32) -> Option<Player> {
        if col >= WIDTH || row >= HEIGHT {
            return None;
        }
        let bit = bitboard::cell(col, row);
        if self.stones[0] & bit != 0 {
            Some(Player::First)
        } else if self.stones[1] & bit != 0 {
            Some(Player::Second)
        } else {
            None
        }
    }

    /// How many stones column `col` holds.
    pub fn height(&self, col: Column) -> u32 {
        (self.occupied() & column_mask(col.index())).count_ones()
    }

    /// Whether column `col` is full.
    pub fn is_full(&self, col: Column) -> bool {
        self.occupied() & top_cell(col.index()) != 0
    }

    /// The player who made the last move (`None` on the empty board).
    pub fn last_mover(&self) -> Option<Player> {
        match self.plies {
            0 => None,
            n if n % 2 == 1 => Some(Player::First),
            _ => Some(Player::Second),
        }
    }

    /// The position seen in a mirror (column 1 ↔ 7 …); its value is the same.
    pub fn mirrored(&self) -> ConnectFourState {
        let flip = |b: u64| {
            (0..WIDTH).fold(0, |acc, c| {
                let col = (b & column_mask(c)) >> (c * bitboard::COLUMN_BITS);
                acc | (col << ((WIDTH - 1 - c) * bitboard::COLUMN_BITS))
            })
        };
        ConnectFourState { stones: [flip(self.stones[0]), flip(self.stones[1])], plies: self.plies }
    }

    /// Drops a stone for the player to move in `col` without checking that the game is still on; the
    /// column must not be full.
    fn drop_stone(&self, col: Column) -> ConnectFourState {
        let mover = index(self.to_move());
        let cell = playable(self.occupied()) & column_mask(col.index());
        let mut stones = self.stones;
        stones[mover] |= cell;
        ConnectFourState { stones, plies: self.plies + 1 }
    }

    /// A unique 49-bit code of the position: in each column a marker bit right above its stones and the
    /// first player's stones below it (whose move it is follows from the stone count).
    pub fn code(&self) -> u64 {
        (self.occupied() + bitboard::BOTTOM) | self.stones[0]
    }

    /// A multi-line picture, top row first, `x` and `o` for the stones and `.` for empty cells, with
    /// the column numbers below.
    pub fn diagram(&self) -> String {
        let mut s = String::new();
        for row in (0..HEIGHT).rev() {
            for col in 0..WIDTH {
                if col > 0 {
                    s.push(' ');
                }
                s.push(match self.stone_at(col, row) {
                    Some(Player::First) => 'x',
                    Some(Player::Second) => 'o',
                    None => '.',
                });
            }
            s.push('\n');
        }
        s.push_str("1 2 3 4 5 6 7");
        s
    }
}

impl GameState for ConnectFourState {
    type Action = Column;

    fn kind(&self) -> GameKind {
        GameKind::ConnectFour
    }

    fn to_move(&self) -> Player {
        if self.plies.is_multiple_of(2) { Player::First } else { Player::Second }
    }

    fn ply(&self) -> u32 {
        self.plies()
    }

    fn legal_actions(&self) -> Vec<Column> {
        if self.outcome().is_some() {
            return Vec::new();
        }
        Column::ALL.into_iter().filter(|&c| !self.is_full(c)).collect()
    }

    fn play(&self, action: Column) -> Result<Self, ActionError> {
        if self.outcome().is_some() || self.is_full(action) {
            return Err(ActionError::Illegal { text: action.to_string() });
        }
        Ok(self.drop_stone(action))
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(last) = self.last_mover()
            && has_four(self.stones[index(last)])
        {
            return Some(Outcome::Win { winner: last, reason: OutcomeReason::FourInARow });
        }
        (u32::from(self.plies) == CELLS).then_some(Outcome::Draw { reason: OutcomeReason::BoardFull })
    }

    fn action_to_text(&self, action: Column) -> String {
        action.to_string()
    }

    fn parse_action(&self, text: &str) -> Result<Column, ActionError> {
        let mut chars = text.chars();
        let col = match (chars.next().and_then(Column::from_char), chars.next()) {
            (Some(c), None) => c,
            _ => {
                return Err(ActionError::Syntax {
                    text: text.to_owned(),
                    reason: "a Connect Four move is a column number from 1 to 7".to_owned(),
                });
            }
        };
        if self.outcome().is_some() || self.is_full(col) {
            return Err(ActionError::Illegal { text: text.to_owned() });
        }
        Ok(col)
    }

    /// Rows from the top, `x`/`o`/`.` for each cell, then the side to move:
    /// `......./......./......./......./......./...x... o`.
    fn to_text(&self) -> String {
        let mut s = String::with_capacity(50);
        for row in (0..HEIGHT).rev() {
            for col in 0..WIDTH {
                s.push(match self.stone_at(col, row) {
                    Some(Player::First) => 'x',
                    Some(Player::Second) => 'o',
                    None => '.',
                });
            }
            if row > 0 {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(if self.to_move() == Player::First { 'x' } else { 'o' });
        s
    }

    fn hash64(&self) -> u64 {
        // SplitMix64's finalizer: a bijection, so distinct codes give distinct hashes.
        let mut z = self.code().wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Leaf nodes of the Connect Four move tree `depth` plies deep (finished games are leaves only at the
/// full depth: a game that ends earlier has no moves below it).
pub fn perft(state: &ConnectFourState, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = state.legal_actions();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves.into_iter().map(|c| perft(&state.drop_stone(c), depth - 1)).sum()
}

#[cfg(test)]
mod tests;
