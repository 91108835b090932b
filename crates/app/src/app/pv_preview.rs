//! Previewing a principal variation: while the pointer is over a root move of the search panel (or its
//! PV), the board shows the position at the end of that move's PV (Nibbler-style), marked as a preview,
//! and the game is not changed.
//!
//! The state keeps only which root move is hovered ([`PvHover`]); the preview itself is derived each frame
//! from the latest search snapshot, so it follows a running search.

use shakmaty::Move;
use shakmaty::san::SanPlus;

use crate::game::GameState;
use crate::game::chess::ChessState;

/// Most plies of a PV the preview plays.
pub const PREVIEW_PLIES: usize = 16;

/// The root move whose PV is previewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PvHover {
    /// The position the search ran from (its text encoding), so a preview never shows on another position.
    pub root: String,
    /// The root move (UCI).
    pub action: String,
    /// A whole line to preview instead of the search's PV of `action` (a node of an internal-search
    /// tree), `action` first.
    pub line: Option<Vec<String>>,
}

/// What the board shows while a PV is previewed.
#[derive(Debug, Clone, PartialEq)]
pub struct PvPreview {
    /// The position after the previewed moves.
    pub after: ChessState,
    /// The previewed moves, in order.
    pub moves: Vec<Move>,
    /// The moves in SAN with move numbers, e.g. `1. e4 e5 2. Nf3`.
    pub text: String,
}

impl PvPreview {
    /// Plays `pv` (UCI moves, the root move first) from `root`, at most [`PREVIEW_PLIES`]; stops at the
    /// first move that is not legal. `None` when not even the first move is.
    pub fn from_pv(root: &ChessState, pv: &[String]) -> Option<PvPreview> {
        use shakmaty::Position;
        let mut here = root.clone();
        let mut moves = Vec::new();
        let mut text = String::new();
        let mut number = here.position().fullmoves().get();
        for uci in pv.iter().take(PREVIEW_PLIES) {
            let Ok(mv) = here.parse_action(uci) else { break };
            let Ok(next) = here.play(mv) else { break };
            let white = here.position().turn().is_white();
            if !text.is_empty() {
                text.push(' ');
            }
            if white {
                text.push_str(&format!("{number}. "));
            } else if moves.is_empty() {
                text.push_str(&format!("{number}... "));
            }
            text.push_str(&SanPlus::from_move(here.position().clone(), mv).to_string());
            if !white {
                number += 1;
            }
            moves.push(mv);
            here = next;
        }
        (!moves.is_empty()).then_some(PvPreview { after: here, moves, text })
    }
}

/// The preview to show on the board now: the hovered line, or the hovered root move's PV in `snapshot`, the
/// latest search snapshot, when it is a search of `here`, the board position (none without a hovered move,
/// or without a search for a root move's PV).
pub fn current_preview(
    hover: Option<&PvHover>,
    here: &ChessState,
    snapshot: Option<&crate::search::mcts::MctsSnapshot>,
) -> Option<PvPreview> {
    let hover = hover?;
    if hover.root != here.to_text() {
        return None;
    }
    if let Some(line) = &hover.line {
        return PvPreview::from_pv(here, line);
    }
    let snapshot = snapshot?;
    if snapshot.root != hover.root {
        return None;
    }
    let stats = snapshot.moves.iter().find(|m| m.action == hover.action)?;
    let pv =
        if stats.pv.first() == Some(&hover.action) { stats.pv.clone() } else { vec![hover.action.clone()] };
    PvPreview::from_pv(here, &pv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(moves: &[&str]) -> Vec<String> {
        moves.iter().map(|m| (*m).to_owned()).collect()
    }

    #[test]
    fn plays_the_pv_with_move_numbers() {
        let p = PvPreview::from_pv(&ChessState::startpos(), &pv(&["e2e4", "e7e5", "g1f3"])).expect("legal");
        assert_eq!(p.text, "1. e4 e5 2. Nf3");
        assert_eq!(p.moves.len(), 3);
        assert_eq!(p.after.fen(), "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
    }

    #[test]
    fn black_to_move_and_an_illegal_tail() {
        let root =
            ChessState::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").expect("fen");
        let p = PvPreview::from_pv(&root, &pv(&["c7c5", "g1f3", "e2e4"])).expect("legal start");
        assert_eq!(p.text, "1... c5 2. Nf3");
        assert!(PvPreview::from_pv(&root, &pv(&["e2e4"])).is_none());
    }

    #[test]
    fn stops_at_the_ply_limit() {
        let shuffle: Vec<String> = ["g1f3", "g8f6", "f3g1", "f6g8"]
            .iter()
            .cycle()
            .take(PREVIEW_PLIES + 4)
            .map(|s| (*s).to_owned())
            .collect();
        let p = PvPreview::from_pv(&ChessState::startpos(), &shuffle).expect("legal");
        assert_eq!(p.moves.len(), PREVIEW_PLIES);
    }

    #[test]
    fn a_hovered_line_previews_without_a_search() {
        let here = ChessState::startpos();
        let hover = PvHover {
            root: here.to_text(),
            action: "e2e4".into(),
            line: Some(pv(&["e2e4", "e7e5", "g1f3"])),
        };
        let p = current_preview(Some(&hover), &here, None).expect("a preview");
        assert_eq!(p.text, "1. e4 e5 2. Nf3");
        // Not on another position.
        let other = here.play(here.parse_action("d2d4").expect("legal")).expect("plays");
        assert!(current_preview(Some(&hover), &other, None).is_none());
        // A root move alone still needs a search.
        let root_move = PvHover { line: None, ..hover };
        assert!(current_preview(Some(&root_move), &here, None).is_none());
    }
}
