//! A chess move as lc0's policy names it: seen from the side to move (ranks mirrored for black), castling as
//! the king taking its own rook, a knight promotion as the plain move, then the position's transform.

use shakmaty::{Chess, Color, Move, Position, Role};

use super::policy_index::{Promotion, index_transformed};

/// The policy output of `m` in `pos` under transform `t` (from [`super::planes::Planes::transform`]);
/// `None` for a move lc0's policy has no output for (a drop, which chess has not).
pub fn move_index(pos: &Chess, m: &Move, t: u8) -> Option<usize> {
    let turn = |sq: u8| if pos.turn() == Color::Black { sq ^ 56 } else { sq };
    let (from, to, promotion) = match *m {
        Move::Normal { from, to, promotion, .. } => (from, to, promotion),
        Move::EnPassant { from, to } => (from, to, None),
        Move::Castle { king, rook } => (king, rook, None),
        Move::Put { .. } => return None,
    };
    let promotion = match promotion {
        Some(Role::Queen) => Promotion::Queen,
        Some(Role::Rook) => Promotion::Rook,
        Some(Role::Bishop) => Promotion::Bishop,
        _ => Promotion::None,
    };
    index_transformed(turn(u8::from(from)), turn(u8::from(to)), promotion, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;
    use shakmaty::{CastlingMode, fen::Fen};

    fn idx(fen: &str, uci: &str) -> Option<usize> {
        let pos: Chess =
            fen.parse::<Fen>().expect("fen").into_position(CastlingMode::Standard).expect("legal");
        let m = uci.parse::<UciMove>().expect("uci").to_move(&pos).expect("legal move");
        move_index(&pos, &m, 0)
    }

    #[test]
    fn moves_from_either_side_and_castling_as_king_takes_rook() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        // e2e4 is e2 → e4 from white: the same index as e7e5 seen from black.
        let after = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(idx(start, "e2e4"), idx(after, "e7e5"));
        let castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(idx(castle, "e1g1"), Some(103), "castling is e1 takes h1");
        let promo = "8/P6k/8/8/8/8/8/K7 w - - 0 1";
        assert_eq!(idx(promo, "a7a8q"), Some(1792));
        // A knight promotion is the plain move a7a8.
        assert_eq!(idx(promo, "a7a8n"), super::super::policy_index::index(48, 56, Promotion::None));
    }
}
