//! Game phases (opening, middlegame, endgame) along a game's main line, by a simplified form of the
//! Lichess/scalachess divider: the middlegame begins at the first position with at most 10 majors and
//! minors (queens, rooks, bishops, knights of both sides), or where either side has fewer than 4 of its own
//! pieces on its back rank; the endgame begins, once in the middlegame, at the first position with at most
//! 6 majors and minors. Phases never go back. (Scalachess also looks at a "mixedness" score of how the
//! pieces of both sides intermingle; that is left out here.)

use serde::{Deserialize, Serialize};
use shakmaty::{Bitboard, Chess, Color, Position, Rank};

/// A phase of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Until the middlegame begins.
    Opening,
    /// Until the endgame begins.
    Middlegame,
    /// To the end.
    Endgame,
}

impl Phase {
    /// All phases in game order.
    pub const ALL: [Phase; 3] = [Phase::Opening, Phase::Middlegame, Phase::Endgame];
}

fn majors_and_minors(pos: &Chess) -> u32 {
    let board = pos.board();
    (board.occupied() & !board.kings() & !board.pawns()).count() as u32
}

fn backrank_sparse(pos: &Chess) -> bool {
    let board = pos.board();
    let own = |color: Color, rank: Rank| (board.by_color(color) & Bitboard::from_rank(rank)).count();
    own(Color::White, Rank::First) < 4 || own(Color::Black, Rank::Eighth) < 4
}

/// The phase of each position, in order (a game's positions along its main line).
pub fn phases<'a>(positions: impl IntoIterator<Item = &'a Chess>) -> Vec<Phase> {
    let mut phase = Phase::Opening;
    positions
        .into_iter()
        .map(|pos| {
            let pieces = majors_and_minors(pos);
            if phase == Phase::Opening && (pieces <= 10 || backrank_sparse(pos)) {
                phase = Phase::Middlegame;
            }
            if phase == Phase::Middlegame && pieces <= 6 {
                phase = Phase::Endgame;
            }
            phase
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;

    fn pos(fen: &str) -> Chess {
        ChessState::from_fen(fen).expect("valid fen").position().clone()
    }

    #[test]
    fn phases_follow_material_and_back_ranks() {
        let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        // Both back ranks still full after a few developing moves: opening.
        let italian = pos("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 6 5");
        // White has only three pieces left on its back rank: middlegame.
        let developed = pos("r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP1QPPP/R4RK1 w - - 2 8");
        // Two rooks and a bishop: endgame.
        let ending = pos("3r2k1/5ppp/8/8/8/8/5PPP/3R2KB w - - 0 30");
        assert_eq!(
            phases([&start, &italian, &developed, &ending]),
            vec![Phase::Opening, Phase::Opening, Phase::Middlegame, Phase::Endgame]
        );
        // Phases never go back, and the endgame needs the middlegame first (which few pieces give).
        assert_eq!(phases([&ending, &start]), vec![Phase::Endgame, Phase::Endgame]);
        assert!(phases(std::iter::empty()).is_empty());
    }
}
