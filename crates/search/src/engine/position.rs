//! The engine's current position: a start state plus actions, and whether a new one extends it.
//!
//! Generic over the game: the actions are the game's own, compared as a sequence, so tree reuse works the
//! same for chess, Connect Four and Hex.

use crate::game::GameState;
use crate::game::chess::ChessState;

use super::api::EngineError;

/// A start state, the actions played from it, and the state they lead to.
#[derive(Debug, Clone)]
pub struct GamePosition<S: GameState = ChessState> {
    /// The game's start state.
    pub start: S,
    /// The actions played since.
    pub moves: Vec<S::Action>,
    /// The state after them.
    pub current: S,
}

impl<S: GameState> GamePosition<S> {
    /// The start state itself, with no action played.
    pub fn at(start: S) -> GamePosition<S> {
        GamePosition { current: start.clone(), start, moves: Vec::new() }
    }

    /// Plays `moves` (the game's text notation: UCI for chess) from `start`; names the first illegal one.
    pub fn new(start: S, moves: &[String]) -> Result<GamePosition<S>, EngineError> {
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

    /// The last `n` states before the current one, oldest first (the start state and those after it).
    pub fn history(&self, n: usize) -> Vec<S> {
        let mut states = Vec::with_capacity(self.moves.len() + 1);
        let mut s = self.start.clone();
        for &m in &self.moves {
            states.push(s.clone());
            match s.play(m) {
                Ok(next) => s = next,
                Err(_) => return Vec::new(),
            }
        }
        let skip = states.len().saturating_sub(n);
        states.split_off(skip)
    }

    /// The ply of the current state in its game (0 = the first move), from the start state's ply.
    pub fn ply(&self) -> u32 {
        let played = u32::try_from(self.moves.len()).unwrap_or(u32::MAX);
        self.start.ply().saturating_add(played)
    }

    /// The actions that lead from `self` to `next`, when `next` is `self` plus actions (the same start,
    /// `self`'s actions a prefix of `next`'s).
    pub fn moves_to<'a>(&self, next: &'a GamePosition<S>) -> Option<&'a [S::Action]> {
        (self.start == next.start && next.moves.starts_with(&self.moves))
            .then(|| &next.moves[self.moves.len()..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::hex::HexState;
    use shakmaty::Move;

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
        let later = ChessState::from_fen("4k3/8/8/8/8/8/8/4K2R b K - 3 13").expect("valid FEN");
        assert_eq!(GamePosition::at(later.clone()).ply(), 25);
        assert_eq!(GamePosition::new(later, &moves(&["e8d8"])).expect("legal").ply(), 26);
        let e = GamePosition::new(ChessState::startpos(), &moves(&["e2e4", "e2e4"])).expect_err("illegal");
        assert!(matches!(e, EngineError::IllegalMove { index: 1, .. }), "{e}");
    }

    #[test]
    fn connect_four_extension_and_ply() {
        let start = ConnectFourState::default();
        let a = GamePosition::new(start, &moves(&["4"])).expect("legal");
        let b = GamePosition::new(start, &moves(&["4", "4", "3"])).expect("legal");
        assert_eq!((a.ply(), b.ply()), (1, 3));
        let extra = a.moves_to(&b).expect("extends");
        assert_eq!(extra.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["4", "3"]);
        assert!(b.moves_to(&a).is_none());
        let other = GamePosition::new(start, &moves(&["3"])).expect("legal");
        assert!(a.moves_to(&other).is_none());
        // A different start is never an extension, even with the same actions.
        let later = start.play(start.legal_actions()[0]).expect("legal");
        assert!(GamePosition::at(later).moves_to(&a).is_none());
        assert_eq!(GamePosition::at(later).ply(), 1);
        let e = GamePosition::new(start, &moves(&["4", "9"])).expect_err("no column 9");
        assert!(matches!(e, EngineError::IllegalMove { index: 1, .. }), "{e}");
    }

    #[test]
    fn hex_extension_ply_and_swap() {
        let start = HexState::new(5).expect("5x5").with_swap(true);
        let a = GamePosition::new(start, &moves(&["c3"])).expect("legal");
        let swap = start.play(start.parse_action("c3").expect("c3")).expect("legal");
        let swap_text = swap.action_to_text(*swap.legal_actions().last().expect("swap is listed"));
        let b = GamePosition::new(start, &moves(&["c3", &swap_text, "b2"])).expect("legal");
        assert_eq!((a.ply(), b.ply()), (1, 3));
        assert_eq!(a.moves_to(&b).map(<[_]>::len), Some(2));
        let no_swap = HexState::new(5).expect("5x5");
        let c = GamePosition::new(no_swap, &moves(&["c3", "b2"])).expect("legal");
        assert!(a.moves_to(&c).is_none(), "another swap rule is another start");
    }
}
