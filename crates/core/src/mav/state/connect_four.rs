//! The Connect Four `%state` string.
//!
//! `x || . . . x o . . … . ||`: the side to move (`x` first player, `o` second player), ` || `, the 42
//! cells row by row from the bottom row to the top row, each row from column 1 to column 7 (as chess
//! goes a1 … h8), separated by single spaces (`.` empty, `x`/`o` a stone), then ` ||`. Every cell is one
//! token, and the cell above another is always 14 tokens (7 cells and their spaces) further on. The
//! paper's appendix gives no exact Connect Four format, so this one follows the chess `%state` layout;
//! there is no FEN.
//!
//! The side to move is implied by the stones but written anyway, like the chess side to move; reading
//! checks that it agrees.

use super::{MavState, StateTextError};
use crate::game::connect_four::ConnectFourState;
use crate::game::connect_four::bitboard::{HEIGHT, WIDTH, cell};
use crate::game::{GameKind, GameState, Player};
use crate::mav::command::StateFormat;

const FORMAT: &str = "Connect Four %state";

fn stone(p: Option<Player>) -> char {
    match p {
        Some(Player::First) => 'x',
        Some(Player::Second) => 'o',
        None => '.',
    }
}

impl MavState for ConnectFourState {
    fn mav_state(&self) -> String {
        let mut s = String::with_capacity(4 + 2 * 42 + 3);
        s.push(stone(Some(self.to_move())));
        s.push_str(" ||");
        for row in 0..HEIGHT {
            for col in 0..WIDTH {
                s.push(' ');
                s.push(stone(self.stone_at(col, row)));
            }
        }
        s.push_str(" ||");
        s
    }

    fn mav_fen(&self) -> Option<String> {
        None
    }

    fn from_mav_text(kind: GameKind, format: StateFormat, text: &str) -> Result<Self, StateTextError> {
        if kind != GameKind::ConnectFour {
            return Err(StateTextError::WrongGame { game: kind.name(), expected: "connect_four" });
        }
        if format == StateFormat::Fen {
            return Err(StateTextError::NoFen(kind.name()));
        }
        let bad = |reason: String| StateTextError::Syntax { format: FORMAT, text: text.to_owned(), reason };
        let words: Vec<&str> = text.split(' ').collect();
        let cells = (WIDTH * HEIGHT) as usize;
        if words.len() != cells + 3 {
            return Err(bad(format!(
                "expected the side to move, `||`, {cells} cells and `||`, separated by single spaces"
            )));
        }
        let side = match words[0] {
            "x" => Player::First,
            "o" => Player::Second,
            _ => return Err(bad("the side to move must be `x` or `o`".to_owned())),
        };
        if words[1] != "||" || words[cells + 2] != "||" {
            return Err(bad("the cells must stand between ` || ` and ` ||`".to_owned()));
        }
        let (mut first, mut second) = (0u64, 0u64);
        for (i, w) in words[2..cells + 2].iter().enumerate() {
            // i < 42, so the casts are exact.
            let (row, col) = (i as u32 / WIDTH, i as u32 % WIDTH);
            match *w {
                "x" => first |= cell(col, row),
                "o" => second |= cell(col, row),
                "." => {}
                _ => return Err(bad(format!("cell {} is '{w}'; cells are `.`, `x` or `o`", i + 1))),
            }
        }
        let state = ConnectFourState::from_bitboards(first, second).map_err(|e| bad(e.to_string()))?;
        if state.to_move() != side {
            return Err(bad(format!(
                "the side to move is written `{}` but the stones say `{}` moves",
                words[0],
                stone(Some(state.to_move()))
            )));
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ConnectFourState, StateTextError> {
        ConnectFourState::from_mav_text(GameKind::ConnectFour, StateFormat::State, text)
    }

    #[test]
    fn state_string_layout() {
        let s = ConnectFourState::from_moves("4453").expect("legal");
        let text = s.mav_state();
        let empty_rows = " . . . . . . .".repeat(4);
        assert_eq!(text, format!("x || . . o x x . . . . . o . . .{empty_rows} ||"));
        assert_eq!(text.split(' ').count(), 45);
        assert_eq!(read(&text), Ok(s));
        let start = ConnectFourState::new().mav_state();
        assert_eq!(start, format!("x ||{} ||", " .".repeat(42)));
        assert_eq!(ConnectFourState::from_moves("4").expect("legal").mav_state().chars().next(), Some('o'));
    }

    #[test]
    fn random_positions_round_trip() {
        use rand::seq::IndexedRandom;
        use rand::{SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..300 {
            let mut s = ConnectFourState::new();
            loop {
                let text = s.mav_state();
                assert_eq!(read(&text), Ok(s), "{text}");
                assert_eq!(s.render(StateFormat::State), Ok(text));
                let Some(&c) = s.legal_actions().choose(&mut rng) else { break };
                s = s.play(c).expect("legal");
            }
        }
    }

    #[test]
    fn bad_state_strings_are_errors() {
        let good = ConnectFourState::from_moves("4453").expect("legal").mav_state();
        for bad in [
            String::new(),
            good.replacen('x', "o", 1),
            good.replacen('x', "w", 1),
            good.replacen("||", "|", 1),
            good.replace(" ||", ""),
            good.replacen(" . ", " X ", 1),
            good.replacen(" . ", "  ", 1),
            format!("{good} ."),
            // A floating stone: the top-left cell.
            format!("{} x ||", &good[..good.len() - 5]),
        ] {
            assert!(read(&bad).is_err(), "{bad}");
        }
        assert_eq!(
            ConnectFourState::from_mav_text(GameKind::ConnectFour, StateFormat::Fen, &good),
            Err(StateTextError::NoFen("connect_four"))
        );
        assert!(ConnectFourState::from_mav_text(GameKind::Chess, StateFormat::State, &good).is_err());
        assert_eq!(
            ConnectFourState::new().render(StateFormat::Fen),
            Err(StateTextError::NoFen("connect_four"))
        );
    }
}
