//! The engine's current position: a start position plus moves, and whether a new one extends it.

use crate::game::GameState;
use crate::game::chess::ChessState;
use shakmaty::{Color, Move, Position};

use super::api::EngineError;

/// A start position, the moves played from it, and the position they lead to.
#[derive(Debug, Clone)]
pub struct GamePosition {
    /// The game's start position.
    pub start: ChessState,
    /// The moves played since.
    pub moves: Vec<Move>,
    /// The position after them.
    pub current: ChessState,
}

impl GamePosition {
    /// Plays `moves` (UCI notation) from `start`; names the first illegal one.
    pub fn new(start: ChessState, moves: &[String]) -> Result<GamePosition, EngineError> {
        let mut current = start.clone();
        let mut played = Vec::with_capacity(moves.len());
        for (index, text) in moves.iter().enumerate() {
            let illegal = |reason: String| EngineError::IllegalMove { index, text: text.clone(), reason };
            let action = current.parse_action(text).map_err(|e| illegal(e.to_string()))?;
            current = current.play(action).map_err(|e| illegal(e.to_string()))?;
            played.push(action);
        }
        Ok(GamePosition { start, moves: played, current })
    }

    /// The ply of the current position in its game (0 = White's first move), from the start position's
    /// move counter.
    pub fn ply(&self) -> u32 {
        let p = self.start.position();
        let start_ply = 2 * (p.fullmoves().get() - 1) + u32::from(p.turn() == Color::Black);
        start_ply + u32::try_from(self.moves.len()).unwrap_or(u32::MAX)
    }

    /// The moves that lead from `self` to `next`, when `next` is `self` plus moves (same start, `self`'s
    /// moves a prefix of `next`'s).
    pub fn moves_to<'a>(&self, next: &'a GamePosition) -> Option<&'a [Move]> {
        (self.start == next.start && next.moves.starts_with(&self.moves))
            .then(|| &next.moves[self.moves.len()..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(m: &[&str]) -> Vec<String> {
        m.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn extension_and_ply() {
        let a = GamePosition::new(ChessState::startpos(), &moves(&["e2e4"])).expect("legal");
        let b = GamePosition::new(ChessState::startpos(), &moves(&["e2e4", "e7e5", "g1f3"])).expect("legal");
        assert_eq!(a.ply(), 1);
        assert_eq!(b.ply(), 3);
        assert_eq!(a.moves_to(&b).map(<[Move]>::len), Some(2));
        assert!(b.moves_to(&a).is_none());
        let c = GamePosition::new(ChessState::startpos(), &moves(&["d2d4"])).expect("legal");
        assert!(a.moves_to(&c).is_none());
        let e = GamePosition::new(ChessState::startpos(), &moves(&["e2e4", "e2e4"])).expect_err("illegal");
        assert!(matches!(e, EngineError::IllegalMove { index: 1, .. }), "{e}");
    }
}
