//! Chess960 start positions by their Scharnagl number (0..=959; 518 is the standard array).
//!
//! Kept here, beside the position setup, so it can be swapped for the game module's version once
//! `src/game` has one.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

use crate::game::chess::ChessState;

/// The number of Chess960 start positions.
pub const CHESS960_POSITIONS: u16 = 960;

/// The Scharnagl number of the standard chess start position.
pub const STANDARD_SCHARNAGL: u16 = 518;

/// An error building a Chess960 start position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Chess960Error {
    /// The number is outside 0..=959.
    #[error("{0} is not a Chess960 position number: use a number from 0 to 959 (518 is the standard array)")]
    OutOfRange(u32),
}

/// Which file (0 = a) each of the eight back-rank pieces of White stands on, as upper-case letters,
/// for Scharnagl number `n`.
pub fn back_rank(n: u16) -> Result<[char; 8], Chess960Error> {
    if n >= CHESS960_POSITIONS {
        return Err(Chess960Error::OutOfRange(u32::from(n)));
    }
    let mut rank = [' '; 8];
    let n = usize::from(n);
    // Light-squared bishop on b, d, f or h; dark-squared bishop on a, c, e or g.
    rank[2 * (n % 4) + 1] = 'B';
    let n = n / 4;
    rank[2 * (n % 4)] = 'B';
    let n = n / 4;
    // The queen on the (n mod 6)-th empty square.
    place_on_nth_empty(&mut rank, n % 6, 'Q');
    // The two knights on one of the ten pairs of the five remaining squares.
    const KNIGHT_PAIRS: [(usize, usize); 10] =
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];
    let (first, second) = KNIGHT_PAIRS[n / 6];
    // Place the second knight first so that the index of the first one is unchanged.
    place_on_nth_empty(&mut rank, second, 'N');
    place_on_nth_empty(&mut rank, first, 'N');
    // Rook, king, rook on the three squares left.
    for piece in ['R', 'K', 'R'] {
        place_on_nth_empty(&mut rank, 0, piece);
    }
    Ok(rank)
}

fn place_on_nth_empty(rank: &mut [char; 8], nth: usize, piece: char) {
    if let Some(slot) = rank.iter_mut().filter(|c| **c == ' ').nth(nth) {
        *slot = piece;
    }
}

/// The FEN of Chess960 start position `n`, with Shredder-FEN castling rights (rook files).
pub fn chess960_fen(n: u16) -> Result<String, Chess960Error> {
    let rank = back_rank(n)?;
    let white: String = rank.iter().collect();
    let black = white.to_ascii_lowercase();
    let rook_files: Vec<char> = rank
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == 'R')
        .map(|(file, _)| char::from(b'a' + file as u8))
        .collect();
    // Shredder-FEN lists the king-side (h-side) rook first.
    let mut castling = String::new();
    for f in rook_files.iter().rev() {
        castling.push(f.to_ascii_uppercase());
    }
    for f in rook_files.iter().rev() {
        castling.push(*f);
    }
    Ok(format!("{black}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - 0 1"))
}

/// Chess960 start position `n` as a game state in Chess960 castling mode.
pub fn chess960_start(n: u16) -> Result<ChessState, Chess960Error> {
    let fen = chess960_fen(n)?;
    // Every Scharnagl number gives a legal position, so these conversions cannot fail; still, map
    // failures to the range error instead of panicking.
    let parsed: Fen = fen.parse().map_err(|_| Chess960Error::OutOfRange(u32::from(n)))?;
    let pos: Chess =
        parsed.into_position(CastlingMode::Chess960).map_err(|_| Chess960Error::OutOfRange(u32::from(n)))?;
    Ok(ChessState::new(pos, CastlingMode::Chess960))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;

    #[test]
    fn known_numbers() {
        let s = |n| back_rank(n).expect("in range").iter().collect::<String>();
        assert_eq!(s(518), "RNBQKBNR");
        assert_eq!(s(0), "BBQNNRKR");
        assert_eq!(s(959), "RKRNNQBB");
        assert_eq!(s(1), "BQNBNRKR");
    }

    #[test]
    fn all_positions_are_valid_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..CHESS960_POSITIONS {
            let rank = back_rank(n).expect("in range");
            let king = rank.iter().position(|c| *c == 'K').expect("king");
            let rooks: Vec<usize> =
                rank.iter().enumerate().filter(|(_, c)| **c == 'R').map(|(i, _)| i).collect();
            assert_eq!(rooks.len(), 2);
            assert!(rooks[0] < king && king < rooks[1], "king between rooks in {n}");
            let bishops: Vec<usize> =
                rank.iter().enumerate().filter(|(_, c)| **c == 'B').map(|(i, _)| i).collect();
            assert_ne!(bishops[0] % 2, bishops[1] % 2, "bishops on opposite colours in {n}");
            assert!(seen.insert(rank), "duplicate array for {n}");
            let state = chess960_start(n).expect("valid position");
            // At the start only pawns (16 moves), knights and castling can move; a knight on the a- or
            // h-file has one free square, any other knight two.
            let knight_moves: usize = rank
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == 'N')
                .map(|(f, _)| if f == 0 || f == 7 { 1 } else { 2 })
                .sum();
            let non_castling = state.legal_actions().iter().filter(|m| !m.is_castle()).count();
            assert_eq!(non_castling, 16 + knight_moves, "moves in {n}");
        }
    }

    #[test]
    fn out_of_range_is_an_error() {
        assert_eq!(back_rank(960), Err(Chess960Error::OutOfRange(960)));
        assert!(chess960_start(1000).is_err());
    }

    #[test]
    fn standard_array_in_chess960_mode() {
        let s = chess960_start(STANDARD_SCHARNAGL).expect("valid");
        assert!(s.fen().starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w "), "{}", s.fen());
        assert_eq!(s.kind(), crate::game::GameKind::Chess960);
    }
}
