//! Perft: counting the leaf nodes of the legal-move tree to a fixed depth, to check move generation
//! against published counts and to measure its speed.
//!
//! Perft counts every legal move sequence; it ignores the fifty-move rule and repetitions, as all
//! published perft numbers do.

use shakmaty::{Chess, Move, Position};

use super::chess::ChessState;
use super::{ActionError, GameState};

/// Leaf nodes of the chess move tree `depth` plies deep.
///
/// Bulk counting: at depth 1 it returns the number of legal moves without playing them. Move lists live
/// on the stack (shakmaty's `MoveList`), so no node allocates.
pub fn perft(position: &Chess, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => position.legal_moves().len() as u64,
        _ => {
            let moves = position.legal_moves();
            let mut nodes = 0;
            for m in &moves {
                let mut child = position.clone();
                child.play_unchecked(*m);
                nodes += perft(&child, depth - 1);
            }
            nodes
        }
    }
}

/// [`perft`] of a [`ChessState`] (ignoring the fifty-move rule, unlike [`GameState::legal_actions`]).
pub fn chess_perft(state: &ChessState, depth: u32) -> u64 {
    perft(state.position(), depth)
}

/// One root move of a [`divide`] with the leaf count below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DivideEntry {
    /// The root move.
    pub action: Move,
    /// The move in UCI notation (Chess960 castling as king-takes-rook in Chess960 mode).
    pub uci: String,
    /// Leaf nodes `depth - 1` plies below the move.
    pub nodes: u64,
}

/// Perft split by root move, sorted by UCI text, for finding where two move generators disagree.
/// Depth 0 has no root moves and returns an empty list; the entries' nodes sum to `perft(depth)`.
pub fn divide(state: &ChessState, depth: u32) -> Vec<DivideEntry> {
    if depth == 0 {
        return Vec::new();
    }
    let position = state.position();
    let mut entries: Vec<DivideEntry> = position
        .legal_moves()
        .iter()
        .map(|m| {
            let mut child = position.clone();
            child.play_unchecked(*m);
            DivideEntry {
                action: *m,
                uci: m.to_uci(state.castling_mode()).to_string(),
                nodes: perft(&child, depth - 1),
            }
        })
        .collect();
    entries.sort_by(|a, b| a.uci.cmp(&b.uci));
    entries
}

/// Perft over any [`GameState`], through its generic interface (slower than [`perft`] for chess: it
/// allocates action lists and re-checks each move). Counts what `legal_actions` offers, so for chess it
/// stops at the fifty-move rule. Fails if the game rejects one of its own legal actions, which would be a
/// bug in that game's rules.
pub fn generic_perft<S: GameState>(state: &S, depth: u32) -> Result<u64, ActionError> {
    if depth == 0 {
        return Ok(1);
    }
    let actions = state.legal_actions();
    if depth == 1 {
        return Ok(actions.len() as u64);
    }
    let mut nodes = 0;
    for action in actions {
        nodes += generic_perft(&state.play(action)?, depth - 1)?;
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

    #[test]
    fn startpos_counts() {
        let s = ChessState::startpos();
        let want = [1, 20, 400, 8902, 197_281];
        for (depth, n) in want.iter().enumerate() {
            assert_eq!(chess_perft(&s, depth as u32), *n, "depth {depth}");
        }
    }

    #[test]
    fn divide_sums_to_perft_and_is_sorted() {
        let s = ChessState::from_fen(KIWIPETE).expect("valid FEN");
        let d = divide(&s, 3);
        assert_eq!(d.len(), 48);
        assert_eq!(d.iter().map(|e| e.nodes).sum::<u64>(), 97_862);
        assert!(d.windows(2).all(|w| w[0].uci < w[1].uci));
        assert!(d.iter().any(|e| e.uci == "e1g1"), "standard castling notation");
        assert!(divide(&s, 0).is_empty());
        assert_eq!(divide(&s, 1).iter().map(|e| e.nodes).sum::<u64>(), 48);
    }

    #[test]
    fn divide_writes_chess960_castling_as_king_takes_rook() {
        let s = ChessState::from_fen("4k3/8/8/8/8/8/8/4K2R w H - 0 1").expect("valid FEN");
        let d = divide(&s, 1);
        assert!(d.iter().any(|e| e.uci == "e1h1"), "{d:?}");
    }

    #[test]
    fn generic_perft_matches_chess_perft() {
        for fen in [KIWIPETE, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"] {
            let s = ChessState::from_fen(fen).expect("valid FEN");
            for depth in 0..=3 {
                assert_eq!(generic_perft(&s, depth), Ok(chess_perft(&s, depth)), "{fen} depth {depth}");
            }
        }
    }

    #[test]
    fn generic_perft_stops_at_fifty_moves() {
        let s = ChessState::from_fen("4k3/8/8/8/8/8/8/4K2R w K - 100 80").expect("valid FEN");
        assert_eq!(generic_perft(&s, 2), Ok(0));
        assert!(chess_perft(&s, 2) > 0);
    }
}
