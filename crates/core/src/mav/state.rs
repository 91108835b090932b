//! Per-game state strings: the `%state` encoding (and FEN for chess), both ways.
//!
//! Each game implements [`MavState`]; everything else in [`crate::mav`] is generic over it, so Connect
//! Four and Hex add their own `%state` encoding here and nothing else changes.
//!
//! # Chess `%state`
//!
//! `b || R . . . . R K . P P … n r . . |00000000013||`: the side to move (`w`/`b`), ` || `, the 64
//! squares from a1 to h8 rank by rank separated by single spaces (`.` empty, FEN piece letters
//! otherwise), then ` |`, castling, en passant, halfmove clock, fullmove number, `||`:
//!
//! - castling (standard chess): four flags `0`/`1` for K, Q, k, q (white king side, white queen side,
//!   black king side, black queen side);
//! - castling (Chess960, our extension): the same four slots, each `0` (no right) or the file letter
//!   `a`–`h` of the rook that castles on that side, e.g. `hb0f`; standard chess stays byte-identical
//!   because it never uses letters, and the header's `game=chess960` tells the two apart;
//! - en passant: `00` when no en-passant capture is legal, else the target square (`e3`), exactly as the
//!   FEN written by [`crate::game::chess::ChessState::fen`] (legal en passant only);
//! - halfmove clock: two digits; a clock of 100 or more (the game is then over by the fifty-move rule,
//!   and the exact count no longer matters) is written `100`;
//! - fullmove number: three digits, capped at `999`.
//!
//! # Connect Four `%state`
//!
//! `x || . . o x x . . … ||`: see [`connect_four`].
//!
//! # Hex `%state`
//!
//! `o || . . x . … |1||`: see [`hex`].

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, CastlingSide, Chess, Color, EnPassantMode, File, Position, Square};

use super::command::StateFormat;
use crate::game::GameKind;
use crate::game::GameState;
use crate::game::chess::ChessState;

pub mod connect_four;
pub mod hex;

/// A state text (`%state` or FEN) that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateTextError {
    /// The text does not have the format's shape.
    #[error("cannot read the {format} '{text}': {reason}")]
    Syntax {
        /// `%state` or FEN.
        format: &'static str,
        /// The text.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The format does not exist for this game.
    #[error("{0} has no FEN; use %state")]
    NoFen(&'static str),
    /// A state of one game asked for as another game's.
    #[error("a {game} state cannot be read as {expected}")]
    WrongGame {
        /// The game asked for.
        game: &'static str,
        /// The game(s) this state type holds.
        expected: &'static str,
    },
}

/// A game state that can be written in (and read from) the MAV state formats.
pub trait MavState: GameState {
    /// The `%state` string.
    fn mav_state(&self) -> String;

    /// The FEN, for games that have one.
    fn mav_fen(&self) -> Option<String>;

    /// Reads a state of game `kind` from its `%state` or FEN text.
    fn from_mav_text(kind: GameKind, format: StateFormat, text: &str) -> Result<Self, StateTextError>;

    /// The state in `format`, or an error for FEN in a game without FEN.
    fn render(&self, format: StateFormat) -> Result<String, StateTextError> {
        match format {
            StateFormat::State => Ok(self.mav_state()),
            StateFormat::Fen => self.mav_fen().ok_or(StateTextError::NoFen(self.kind().name())),
        }
    }
}

const SLOTS: [(Color, CastlingSide); 4] = [
    (Color::White, CastlingSide::KingSide),
    (Color::White, CastlingSide::QueenSide),
    (Color::Black, CastlingSide::KingSide),
    (Color::Black, CastlingSide::QueenSide),
];

impl MavState for ChessState {
    fn mav_state(&self) -> String {
        let pos = self.position();
        let mut s = String::with_capacity(160);
        s.push(if pos.turn() == Color::White { 'w' } else { 'b' });
        s.push_str(" ||");
        for sq in Square::ALL {
            s.push(' ');
            s.push(pos.board().piece_at(sq).map_or('.', |p| p.char()));
        }
        s.push_str(" |");
        let castles = pos.castles();
        for (color, side) in SLOTS {
            let c = match (self.castling_mode(), castles.rook(color, side)) {
                (_, None) => '0',
                (CastlingMode::Standard, Some(_)) => '1',
                (CastlingMode::Chess960, Some(rook)) => rook.file().char(),
            };
            s.push(c);
        }
        match pos.ep_square(EnPassantMode::Legal) {
            Some(sq) => s.push_str(&sq.to_string()),
            None => s.push_str("00"),
        }
        let half = pos.halfmoves().min(100);
        s.push_str(&format!("{half:02}"));
        let full = pos.fullmoves().get().min(999);
        s.push_str(&format!("{full:03}"));
        s.push_str("||");
        s
    }

    fn mav_fen(&self) -> Option<String> {
        Some(self.fen())
    }

    fn from_mav_text(kind: GameKind, format: StateFormat, text: &str) -> Result<Self, StateTextError> {
        let mode = match kind {
            GameKind::Chess => CastlingMode::Standard,
            GameKind::Chess960 => CastlingMode::Chess960,
            GameKind::ConnectFour | GameKind::Hex => {
                return Err(StateTextError::WrongGame { game: kind.name(), expected: "chess or chess960" });
            }
        };
        let fen = match format {
            StateFormat::Fen => text.to_owned(),
            StateFormat::State => chess_state_to_fen(mode, text)?,
        };
        let bad = |reason: String| StateTextError::Syntax { format: "FEN", text: fen.clone(), reason };
        let parsed: Fen = fen.parse().map_err(|e| bad(format!("{e}")))?;
        let pos: Chess = parsed.into_position(mode).map_err(|e| bad(format!("{e}")))?;
        Ok(ChessState::new(pos, mode))
    }
}

/// Converts a chess `%state` string into FEN (castling in Shredder notation for Chess960).
fn chess_state_to_fen(mode: CastlingMode, text: &str) -> Result<String, StateTextError> {
    let bad = |reason: &str| StateTextError::Syntax {
        format: "%state",
        text: text.to_owned(),
        reason: reason.to_owned(),
    };
    let words: Vec<&str> = text.split(' ').collect();
    if words.len() != 67 {
        return Err(bad(
            "expected the side to move, `||`, 64 squares and the `|…||` tail, separated by single spaces",
        ));
    }
    let side = match words[0] {
        "w" => 'w',
        "b" => 'b',
        _ => return Err(bad("the side to move must be `w` or `b`")),
    };
    if words[1] != "||" {
        return Err(bad("the side to move must be followed by ` || `"));
    }
    let mut board = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let w = words[2 + rank * 8 + file];
            match w {
                "." => empty += 1,
                "P" | "N" | "B" | "R" | "Q" | "K" | "p" | "n" | "b" | "r" | "q" | "k" => {
                    if empty > 0 {
                        board.push_str(&empty.to_string());
                        empty = 0;
                    }
                    board.push_str(w);
                }
                _ => return Err(bad("each square must be `.` or a piece letter PNBRQK/pnbrqk")),
            }
        }
        if empty > 0 {
            board.push_str(&empty.to_string());
        }
        if rank > 0 {
            board.push('/');
        }
    }
    let tail = words[66]
        .strip_prefix('|')
        .and_then(|t| t.strip_suffix("||"))
        .ok_or_else(|| bad("the tail must look like `|00000000013||`"))?;
    let b = tail.as_bytes();
    if !tail.is_ascii() || !(b.len() == 11 || b.len() == 12) || !b[6..].iter().all(u8::is_ascii_digit) {
        return Err(bad("the tail must hold 4 castling flags, 2 en-passant characters and 5 (or 6) digits"));
    }
    let mut castling = String::new();
    for (slot, &c) in b[..4].iter().enumerate() {
        let (color, side) = SLOTS[slot];
        let letter = match (mode, c) {
            (_, b'0') => continue,
            (CastlingMode::Standard, b'1') => match side {
                CastlingSide::KingSide => 'k',
                CastlingSide::QueenSide => 'q',
            },
            (CastlingMode::Chess960, b'a'..=b'h') => char::from(c),
            _ => return Err(bad("castling flags are 0/1 in chess and 0 or a rook file a-h in Chess960")),
        };
        castling.push(if color == Color::White { letter.to_ascii_uppercase() } else { letter });
    }
    if castling.is_empty() {
        castling.push('-');
    }
    let ep = match &tail[4..6] {
        "00" => "-".to_owned(),
        sq if File::from_char(char::from(b[4])).is_some() && matches!(b[5], b'3' | b'6') => sq.to_owned(),
        _ => return Err(bad("en passant must be `00` or a square on rank 3 or 6")),
    };
    let digits = &tail[6..];
    let (half, full) = digits.split_at(digits.len() - 3);
    if half.len() == 3 && half != "100" {
        return Err(bad("a three-digit halfmove clock is only written as `100`"));
    }
    let half: u32 = half.parse().map_err(|_| bad("bad halfmove clock"))?;
    let full: u32 = full.parse().map_err(|_| bad("bad fullmove number"))?;
    if full == 0 {
        return Err(bad("the fullmove number starts at 001"));
    }
    Ok(format!("{board} {side} {castling} {ep} {half} {full}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chess(fen: &str, mode: CastlingMode) -> ChessState {
        let f: Fen = fen.parse().expect("test FEN");
        ChessState::new(f.into_position(mode).expect("legal test position"), mode)
    }

    #[test]
    fn figure_one_state_string() {
        let s = chess(
            "r1b1nr2/pp1np1bk/2ppPpp1/q7/3P1P2/2NQB3/PPP1B1PP/R4RK1 b - - 0 13",
            CastlingMode::Standard,
        );
        assert_eq!(
            s.mav_state(),
            "b || R . . . . R K . P P P . B . P P . . N Q B . . . . . . P . P . . q . . . . . . . . . p p P p p . \
             p p . n p . b k r . b . n r . . |00000000013||"
        );
    }

    #[test]
    fn start_position_and_en_passant() {
        let s = ChessState::startpos();
        assert!(s.mav_state().ends_with(" |11110000001||"));
        let e =
            chess("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", CastlingMode::Standard);
        assert!(e.mav_state().ends_with(" |1111f600003||"), "{}", e.mav_state());
        let back =
            ChessState::from_mav_text(GameKind::Chess, StateFormat::State, &e.mav_state()).expect("reads");
        assert_eq!(back.fen(), e.fen());
    }

    #[test]
    fn chess960_castling_names_rook_files() {
        let s = chess("bqnrkrnb/pppppppp/8/8/8/8/PPPPPPPP/BQNRKRNB w FDfd - 0 1", CastlingMode::Chess960);
        assert!(s.mav_state().ends_with(" |fdfd0000001||"), "{}", s.mav_state());
        let back =
            ChessState::from_mav_text(GameKind::Chess960, StateFormat::State, &s.mav_state()).expect("reads");
        assert_eq!(back.fen(), s.fen());
        let partial = chess("bqnrkrnb/pppppppp/8/8/8/8/PPPPPPPP/BQNRKRNB w Fd - 0 1", CastlingMode::Chess960);
        assert!(partial.mav_state().ends_with(" |f00d0000001||"), "{}", partial.mav_state());
    }

    #[test]
    fn clocks_are_fixed_width_with_documented_caps() {
        let s = chess("8/8/8/4k3/8/8/4K3/7R w - - 7 45", CastlingMode::Standard);
        assert!(s.mav_state().ends_with(" |00000007045||"));
        let over = chess("8/8/8/4k3/8/8/4K3/7R w - - 120 1200", CastlingMode::Standard);
        assert!(over.mav_state().ends_with(" |000000100999||"), "{}", over.mav_state());
        let back =
            ChessState::from_mav_text(GameKind::Chess, StateFormat::State, &over.mav_state()).expect("reads");
        assert_eq!(back.fen(), "8/8/8/4k3/8/8/4K3/7R w - - 100 999");
    }

    #[test]
    fn bad_state_strings_are_errors() {
        let good = ChessState::startpos().mav_state();
        for bad in [
            String::new(),
            good.replacen('w', "x", 1),
            good.replacen("||", "|", 1),
            good.replace("|11110000001||", "|1111000001||"),
            good.replace("|11110000001||", "|1a110000001||"),
            good.replace("|11110000001||", "|1111e40000001||"),
            good.replace("|11110000001||", "|11110000000||"),
            good.replacen(" R ", " X ", 1),
            good.replacen(" . ", "  ", 1),
        ] {
            assert!(ChessState::from_mav_text(GameKind::Chess, StateFormat::State, &bad).is_err(), "{bad}");
        }
        assert!(ChessState::from_mav_text(GameKind::Chess, StateFormat::Fen, "not a fen").is_err());
    }
}
