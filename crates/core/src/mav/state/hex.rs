//! The Hex `%state` string.
//!
//! `o || . . x . . … . |1||`: the side to move (`x` first player, `o` second player), ` || `, the N×N
//! cells row by row from row 1 to row N, each row from column `a` to the last, separated by single spaces
//! (`.` empty, `x`/`o` a stone), then ` |`, the swap rule (`1` played, `0` not) and `||`. Every cell is one
//! token, and on a board of size N the cell below another is always 2N tokens further on, so relative
//! positions are constant as the paper asks; the size is the square root of the number of cells. The paper
//! gives no Hex format, so this one follows the chess and Connect Four layouts; there is no FEN.
//!
//! The side to move is written because the stones alone do not always give it (after a swap the second
//! player keeps one stone more); reading checks that it agrees with the stones.

use super::{MavState, StateTextError};
use crate::game::hex::{Cell, HexState, MAX_SIZE, stone_char};
use crate::game::{GameKind, GameState, Player};
use crate::mav::command::StateFormat;

const FORMAT: &str = "Hex %state";

impl MavState for HexState {
    fn mav_state(&self) -> String {
        let n = self.size();
        let mut s = String::with_capacity(8 + 2 * (n * n) as usize);
        s.push(stone_char(Some(self.to_move())));
        s.push_str(" ||");
        for c in self.cells() {
            s.push(' ');
            s.push(stone_char(self.owner(c)));
        }
        s.push_str(if self.swap_rule() { " |1||" } else { " |0||" });
        s
    }

    fn mav_fen(&self) -> Option<String> {
        None
    }

    fn from_mav_text(kind: GameKind, format: StateFormat, text: &str) -> Result<Self, StateTextError> {
        if kind != GameKind::Hex {
            return Err(StateTextError::WrongGame { game: kind.name(), expected: "hex" });
        }
        if format == StateFormat::Fen {
            return Err(StateTextError::NoFen(kind.name()));
        }
        let bad = |reason: String| StateTextError::Syntax { format: FORMAT, text: text.to_owned(), reason };
        let words: Vec<&str> = text.split(' ').collect();
        let cells = words.len().saturating_sub(3);
        let size = (1..=MAX_SIZE).find(|&n| (n * n) as usize == cells).ok_or_else(|| {
            bad(format!(
                "expected the side to move, `||`, N×N cells (N from 1 to 13) and `|0||` or `|1||`, separated \
                 by single spaces; found {cells} cells"
            ))
        })?;
        let side = match words[0] {
            "x" => Player::First,
            "o" => Player::Second,
            _ => return Err(bad("the side to move must be `x` or `o`".to_owned())),
        };
        if words[1] != "||" {
            return Err(bad("the side to move must be followed by ` || `".to_owned()));
        }
        let swap_rule = match words[cells + 2] {
            "|1||" => true,
            "|0||" => false,
            _ => return Err(bad("the cells must be followed by ` |1||` (swap rule) or ` |0||`".to_owned())),
        };
        let (mut first, mut second) = (Vec::new(), Vec::new());
        for (i, w) in words[2..cells + 2].iter().enumerate() {
            let i = i as u32;
            let cell = Cell::new(i % size, i / size).ok_or_else(|| bad("cell out of range".to_owned()))?;
            match *w {
                "x" => first.push(cell),
                "o" => second.push(cell),
                "." => {}
                _ => return Err(bad(format!("cell {cell} is '{w}'; cells are `.`, `x` or `o`"))),
            }
        }
        HexState::from_cells(size, swap_rule, &first, &second, side).map_err(|e| bad(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::hex::HexAction;

    fn read(text: &str) -> Result<HexState, StateTextError> {
        HexState::from_mav_text(GameKind::Hex, StateFormat::State, text)
    }

    #[test]
    fn state_string_layout() {
        let s = HexState::new(3)
            .expect("size")
            .play(HexAction::Place(Cell::new(1, 1).expect("b2")))
            .expect("legal");
        assert_eq!(s.mav_state(), "o || . . . . x . . . . |0||");
        assert_eq!(read(&s.mav_state()), Ok(s));
        let swap = HexState::new(3).expect("size").with_swap(true);
        let t = swap.play(HexAction::Place(Cell::new(0, 2).expect("a3"))).expect("legal");
        let u = t.play(HexAction::Swap).expect("legal");
        assert_eq!(u.mav_state(), "x || . . o . . . . . . |1||");
        assert_eq!(read(&u.mav_state()), Ok(u));
        assert_eq!(HexState::new(7).expect("size").mav_state().split(' ').count(), 52);
    }

    #[test]
    fn random_positions_round_trip() {
        use rand::seq::IndexedRandom;
        use rand::{SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(5);
        for g in 0..200 {
            let mut s = HexState::new([5, 7, 11, 13][g % 4]).expect("size").with_swap(g % 2 == 0);
            loop {
                let text = s.mav_state();
                assert_eq!(read(&text), Ok(s), "{text}");
                let Some(&a) = s.legal_actions().choose(&mut rng) else { break };
                s = s.play(a).expect("legal");
            }
        }
    }

    #[test]
    fn bad_state_strings_are_errors() {
        let good = HexState::new(3).expect("size").mav_state();
        for bad in [
            String::new(),
            good.replacen('x', "o", 1),
            good.replacen('x', "w", 1),
            good.replacen("||", "|", 1),
            good.replace(" |0||", " |2||"),
            good.replacen(" . ", " X ", 1),
            good.replacen(" . ", "  ", 1),
            format!("{good} ."),
            good.replacen(" . ", " x ", 1),
            good.replacen(" . ", " o ", 1),
        ] {
            assert!(read(&bad).is_err(), "{bad}");
        }
        assert!(read(&good.replacen(" . ", " o ", 1)).expect_err("swap").to_string().contains("swap"));
        assert_eq!(
            HexState::from_mav_text(GameKind::Hex, StateFormat::Fen, &good),
            Err(StateTextError::NoFen("hex"))
        );
        assert!(HexState::from_mav_text(GameKind::ConnectFour, StateFormat::State, &good).is_err());
    }
}
