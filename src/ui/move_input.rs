//! Turning "from square, to square" into legal moves: promotions, and castling entered either as the
//! king onto its rook (always, as Chess960 requires) or as the king two squares sideways where that is
//! unambiguous.

use shakmaty::{Chess, Move, Position, Role, Square};

/// The legal moves of the piece on `from`.
pub fn moves_from(pos: &Chess, from: Square) -> Vec<Move> {
    pos.legal_moves().into_iter().filter(|m| m.from() == Some(from)).collect()
}

/// The square where castling move `mv` puts the king, if `mv` is castling.
fn castle_king_to(mv: Move) -> Option<Square> {
    match (mv, mv.castling_side()) {
        (Move::Castle { king, .. }, Some(side)) => {
            Some(Square::from_coords(side.king_to_file(), king.rank()))
        }
        _ => None,
    }
}

/// Whether a castling move may be entered by moving the king to `to` (two files sideways), i.e. no
/// other legal king move goes there.
fn castles_by_king_step(mv: Move, to: Square, legal_from: &[Move]) -> bool {
    let (Some(king_to), Some(king)) = (castle_king_to(mv), mv.from()) else {
        return false;
    };
    king_to == to
        && king.file().distance(to.file()) == 2
        && !legal_from.iter().any(|m| !m.is_castle() && m.to() == to)
}

/// The squares the piece on `from` can be moved to by the user (legal-move dots), without duplicates.
pub fn target_squares(pos: &Chess, from: Square) -> Vec<Square> {
    let legal = moves_from(pos, from);
    let mut out: Vec<Square> = Vec::new();
    for m in &legal {
        let mut add = |sq: Square| {
            if !out.contains(&sq) {
                out.push(sq);
            }
        };
        add(m.to());
        if let Some(king_to) = castle_king_to(*m)
            && castles_by_king_step(*m, king_to, &legal)
        {
            add(king_to);
        }
    }
    out
}

/// The legal moves that take the piece on `from` to `to`: none, one, or several promotions.
pub fn moves_between(pos: &Chess, from: Square, to: Square) -> Vec<Move> {
    let legal = moves_from(pos, from);
    let direct: Vec<Move> = legal.iter().copied().filter(|m| m.to() == to).collect();
    if !direct.is_empty() {
        return direct;
    }
    legal.iter().copied().filter(|m| castles_by_king_step(*m, to, &legal)).collect()
}

/// The order of pieces in the promotion picker.
pub const PROMOTION_ROLES: [Role; 4] = [Role::Queen, Role::Knight, Role::Rook, Role::Bishop];

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str, mode: CastlingMode) -> Chess {
        let f: Fen = fen.parse().expect("test FEN");
        f.into_position(mode).expect("legal test position")
    }

    #[test]
    fn simple_and_illegal_moves() {
        let p = Chess::default();
        assert_eq!(moves_between(&p, Square::E2, Square::E4).len(), 1);
        assert!(moves_between(&p, Square::E2, Square::E5).is_empty());
        assert!(moves_between(&p, Square::E7, Square::E5).is_empty(), "not Black's turn");
        let mut t = target_squares(&p, Square::G1);
        t.sort();
        assert_eq!(t, [Square::F3, Square::H3]);
    }

    #[test]
    fn promotion_gives_four_moves() {
        let p = pos("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", CastlingMode::Standard);
        let m = moves_between(&p, Square::E7, Square::E8);
        assert_eq!(m.len(), 4);
        assert!(m.iter().all(|m| m.promotion().is_some()));
    }

    #[test]
    fn standard_castling_both_ways() {
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", CastlingMode::Standard);
        for to in [Square::G1, Square::H1] {
            let m = moves_between(&p, Square::E1, to);
            assert_eq!(m, [Move::Castle { king: Square::E1, rook: Square::H1 }], "to {to}");
        }
        let m = moves_between(&p, Square::E1, Square::C1);
        assert_eq!(m, [Move::Castle { king: Square::E1, rook: Square::A1 }]);
        let t = target_squares(&p, Square::E1);
        assert!(t.contains(&Square::G1) && t.contains(&Square::H1) && t.contains(&Square::C1));
    }

    #[test]
    fn chess960_king_step_only_when_unambiguous() {
        // King on f1, rook on h1: g1 is an ordinary king move, so castling is only king-onto-rook.
        let p = pos("k7/8/8/8/8/8/8/4RK1R w H - 0 1", CastlingMode::Chess960);
        let m = moves_between(&p, Square::F1, Square::G1);
        assert_eq!(m.len(), 1);
        assert!(!m[0].is_castle());
        let m = moves_between(&p, Square::F1, Square::H1);
        assert_eq!(m, [Move::Castle { king: Square::F1, rook: Square::H1 }]);
        // King on b1, rook on a1: queen-side castling puts the king on c1, one file away: only onto the rook.
        let p = pos("4k3/8/8/8/8/8/8/RK6 w A - 0 1", CastlingMode::Chess960);
        let m = moves_between(&p, Square::B1, Square::A1);
        assert_eq!(m, [Move::Castle { king: Square::B1, rook: Square::A1 }]);
        assert!(moves_between(&p, Square::B1, Square::C1).iter().all(|m| !m.is_castle()));
    }
}
