//! Reading the main line of a PGN game into a [`LinearLine`] and writing a line back as PGN.
//!
//! A stop-gap until the PGN module (`src/pgn`, variation trees, comments, NAGs) is wired into the app:
//! variations and comments are skipped here.

use std::ops::ControlFlow;

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::{CastlingMode, Position};

use super::line::{LinearLine, MoveHistory};
use super::position_setup::{FenError, parse_fen};
use crate::game::GameState;
use crate::game::chess::ChessState;

/// Why a PGN could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgnImportError {
    /// No game in the text.
    #[error("no PGN game found: the text needs movetext such as \"1. e4 e5 2. Nf3\" (tags are optional)")]
    NoGame,
    /// The FEN tag is bad.
    #[error("the game's [FEN] tag is unusable: {0}")]
    BadFen(FenError),
    /// A move is not legal.
    #[error(
        "move {number}{dots} {san} is not legal in the game's position: correct or remove that move \
         (the moves before it were read)"
    )]
    IllegalMove {
        /// Full move number.
        number: u32,
        /// `.` for White, `...` for Black.
        dots: &'static str,
        /// The SAN as written.
        san: String,
    },
    /// The reader failed (I/O on an in-memory buffer: only on invalid data).
    #[error("the PGN could not be read: {0}")]
    Read(String),
}

/// A game read from PGN: its main line.
#[derive(Debug, Clone)]
pub struct ImportedGame {
    /// The main line, cursor at the end.
    pub line: LinearLine,
    /// The `[White]` and `[Black]` tags, when present.
    pub players: Option<(String, String)>,
}

#[derive(Default)]
struct Tags {
    fen: Option<String>,
    chess960: bool,
    white: Option<String>,
    black: Option<String>,
}

struct Movetext {
    line: LinearLine,
    players: Option<(String, String)>,
    error: Option<PgnImportError>,
}

struct MainLine;

impl Visitor for MainLine {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = Result<ImportedGame, PgnImportError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Tags> {
        ControlFlow::Continue(Tags::default())
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"FEN" => tags.fen = Some(value),
            b"Variant" => {
                let v = value.to_ascii_lowercase();
                tags.chess960 = v.contains("960") || v.contains("fischer");
            }
            b"White" => tags.white = Some(value),
            b"Black" => tags.black = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<Self::Output, Movetext> {
        let start = match &tags.fen {
            Some(fen) => match parse_fen(fen) {
                Ok(s) if tags.chess960 => ChessState::new(s.position().clone(), CastlingMode::Chess960),
                Ok(s) => s,
                Err(e) => return ControlFlow::Break(Err(PgnImportError::BadFen(e))),
            },
            None => ChessState::startpos(),
        };
        let players = match (tags.white, tags.black) {
            (Some(w), Some(b)) => Some((w, b)),
            _ => None,
        };
        ControlFlow::Continue(Movetext { line: LinearLine::new(start), players, error: None })
    }

    fn san(&mut self, m: &mut Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if m.error.is_some() {
            return ControlFlow::Continue(());
        }
        let pos = m.line.current().position().clone();
        let played = san_plus.san.to_move(&pos).ok().map(|mv| m.line.play(mv));
        if !matches!(played, Some(Ok(()))) {
            let white = pos.turn().is_white();
            m.error = Some(PgnImportError::IllegalMove {
                number: pos.fullmoves().get(),
                dots: if white { "." } else { "..." },
                san: san_plus.to_string(),
            });
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _m: &mut Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, m: Movetext) -> Self::Output {
        match m.error {
            Some(e) => Err(e),
            None => Ok(ImportedGame { line: m.line, players: m.players }),
        }
    }
}

/// Reads the first game of `text` (its main line).
pub fn import_first_game(text: &str) -> Result<ImportedGame, PgnImportError> {
    let mut reader = Reader::new(text.as_bytes());
    match reader.read_game(&mut MainLine) {
        Ok(Some(game)) => game,
        Ok(None) => Err(PgnImportError::NoGame),
        Err(e) => Err(PgnImportError::Read(e.to_string())),
    }
}

/// Writes `line` (all its moves, not only those before the cursor) as a PGN game with the Seven Tag
/// Roster, plus `SetUp`/`FEN` for a non-standard start and `Variant` for Chess960.
pub fn export_line(line: &impl MoveHistory) -> String {
    let start = line.start();
    let mut end = line.start().clone();
    for m in line.moves() {
        match end.play(m.mv) {
            Ok(next) => end = next,
            Err(_) => break,
        }
    }
    let result = end.outcome().map_or("*", |o| o.result_str());
    let mut out = String::new();
    for (name, value) in [
        ("Event", "Analysis"),
        ("Site", "mavboard"),
        ("Date", "????.??.??"),
        ("Round", "-"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", result),
    ] {
        out.push_str(&format!("[{name} \"{value}\"]\n"));
    }
    let chess960 = start.castling_mode() == CastlingMode::Chess960;
    if chess960 {
        out.push_str("[Variant \"Chess960\"]\n");
    }
    if chess960 || *start != ChessState::startpos() {
        out.push_str("[SetUp \"1\"]\n");
        out.push_str(&format!("[FEN \"{}\"]\n", start.fen()));
    }
    out.push('\n');
    let mut tokens = Vec::new();
    for (i, m) in line.moves().iter().enumerate() {
        let white = m.ply % 2 == 1;
        let number = m.ply.div_ceil(2);
        if white {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.clone());
    }
    tokens.push(result.to_owned());
    let mut width = 0;
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            if width + 1 + t.len() > 79 {
                out.push('\n');
                width = 0;
            } else {
                out.push(' ');
                width += 1;
            }
        }
        out.push_str(t);
        width += t.len();
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_main_line_and_skips_variations() {
        let g = import_first_game(
            "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 (1... c5 2. Nf3) 2. Nf3 {good} Nc6 3. Bb5 a6 *\n",
        )
        .expect("valid PGN");
        let sans: Vec<&str> = g.line.moves().iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
        assert_eq!(g.line.cursor(), 6);
        assert_eq!(g.players, Some(("A".to_owned(), "B".to_owned())));
    }

    #[test]
    fn illegal_move_is_named() {
        let e = import_first_game("1. e4 e5 2. Ke3 *").expect_err("illegal");
        assert_eq!(e, PgnImportError::IllegalMove { number: 2, dots: ".", san: "Ke3".to_owned() });
        assert!(e.to_string().contains("move 2. Ke3"));
    }

    #[test]
    fn bad_fen_and_empty_text() {
        let e = import_first_game("[FEN \"nonsense\"]\n\n1. e4 *").expect_err("bad fen");
        assert!(matches!(e, PgnImportError::BadFen(_)), "{e:?}");
        assert_eq!(import_first_game("").expect_err("empty"), PgnImportError::NoGame);
    }

    #[test]
    fn export_round_trips_with_fen_and_black_first() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let text = format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n\n1... e5 2. Nf3 *");
        let g = import_first_game(&text).expect("valid");
        let out = export_line(&g.line);
        assert!(out.contains(&format!("[FEN \"{fen}\"]")), "{out}");
        assert!(out.contains("\n1... e5 2. Nf3 *\n"), "{out}");
        let again = import_first_game(&out).expect("own output reads back");
        assert_eq!(again.line.moves(), g.line.moves());
    }

    #[test]
    fn export_of_a_mate_has_the_result() {
        let g = import_first_game("1. f3 e5 2. g4 Qh4# 0-1").expect("valid");
        let out = export_line(&g.line);
        assert!(out.contains("[Result \"0-1\"]"));
        assert!(out.trim_end().ends_with("2. g4 Qh4# 0-1"), "{out}");
    }
}
