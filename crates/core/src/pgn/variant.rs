//! The start position of a game record: the `Variant`, `SetUp` and `FEN` headers.

use shakmaty::{CastlingMode, Chess};

use crate::game::chess::ChessState;
use crate::game::fen::{FenError, FenOptions, ModeChoice, ParsedFen, parse_fen_with};

/// What a `Variant` header value names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantTag {
    /// Standard chess (also "From Position", "Normal", an empty value, ...).
    Standard,
    /// Fischer random chess, in any of its usual spellings.
    Chess960,
    /// A variant mavboard does not play (crazyhouse, antichess, ...), as written.
    Unsupported(String),
}

/// Classifies a `Variant` header value. Case, spaces, dashes and underscores are ignored, so "Chess960",
/// "chess 960", "chess-960", "Fischerandom", "Fischer Random", "FRC" and "960" all name Chess960.
pub fn classify_variant(value: &str) -> VariantTag {
    let key: String = value.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
    match key.as_str() {
        "" | "standard" | "chess" | "normal" | "fromposition" | "classical" | "orthodox" | "westernchess"
        | "international" => VariantTag::Standard,
        "frc" | "960" => VariantTag::Chess960,
        k if k.contains("960") || k.starts_with("fischer") => VariantTag::Chess960,
        _ => VariantTag::Unsupported(value.to_owned()),
    }
}

/// Why the headers do not give a playable start position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The `FEN` header is not valid FEN syntax.
    #[error("the FEN header '{fen}' is not valid FEN ({reason}); fix or remove the FEN header")]
    FenSyntax {
        /// The header value.
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `FEN` header is syntactically fine but not a legal chess position.
    #[error("the FEN header '{fen}' is not a legal position ({reason}); fix or remove the FEN header")]
    IllegalPosition {
        /// The header value.
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `Variant` header names a variant that is not chess or Chess960.
    #[error(
        "variant '{0}' is not supported (only standard chess and Chess960); \
         the game cannot be read as chess"
    )]
    UnsupportedVariant(String),
}

/// The start position from the `Variant` and `FEN` headers (a `FEN` header is honoured with or without
/// `SetUp "1"`). Chess960 is chosen when the variant says so or when the FEN's castling rights need it.
pub fn start_position(variant: Option<&str>, fen: Option<&str>) -> Result<ChessState, StartError> {
    let chess960 = match variant.map(classify_variant) {
        None | Some(VariantTag::Standard) => false,
        Some(VariantTag::Chess960) => true,
        Some(VariantTag::Unsupported(v)) => return Err(StartError::UnsupportedVariant(v)),
    };
    let Some(fen_text) = fen else {
        let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        return Ok(ChessState::new(Chess::default(), mode));
    };
    let syntax = |reason: String| StartError::FenSyntax { fen: fen_text.to_owned(), reason };
    // FEN is printable ASCII and spaces. The writer turns control characters into spaces, which would make
    // such a header another FEN, or none, when read again.
    if let Some(c) = fen_text.trim().chars().find(|&c| c != ' ' && !c.is_ascii_graphic()) {
        return Err(syntax(format!("{} is not a FEN character", c.escape_unicode())));
    }
    // Records in the wild leave out the last fields; as python-chess and shakmaty do, the side to move
    // defaults to White and castling and en passant to none (the FEN box asks for all four).
    let fields = fen_text.split_whitespace().count();
    let padded = match fields {
        1..=3 => format!("{} {}", fen_text.trim(), ["w - -", "- -", "-"][fields - 1]),
        _ => fen_text.to_owned(),
    };
    // Strict: a record's start must be reachable (the FEN box also opens composed positions).
    let mode = if chess960 { ModeChoice::Chess960 } else { ModeChoice::Auto };
    match parse_fen_with(&padded, FenOptions { mode, strict: true }) {
        Ok(ParsedFen { position, mode }) => Ok(ChessState::new(position, mode)),
        Err(FenError::Illegal { problem, .. }) => {
            Err(StartError::IllegalPosition { fen: fen_text.to_owned(), reason: problem.to_string() })
        }
        // The reason names the field at fault and what it should look like.
        Err(e) => Err(syntax(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameKind, GameState};

    #[test]
    fn chess960_spellings() {
        for v in [
            "Chess960",
            "chess 960",
            "chess-960",
            "Fischerandom",
            "Fischer Random",
            "FRC",
            "960",
            "fischerrandom",
            "Chess 960 (FRC)",
        ] {
            assert_eq!(classify_variant(v), VariantTag::Chess960, "{v}");
        }
        for v in ["Standard", "From Position", "normal", ""] {
            assert_eq!(classify_variant(v), VariantTag::Standard, "{v}");
        }
        assert_eq!(classify_variant("Crazyhouse"), VariantTag::Unsupported("Crazyhouse".into()));
    }

    #[test]
    fn fen_that_needs_chess960_castling_selects_it() {
        let s = start_position(None, Some("bqnrkrnb/pppppppp/8/8/8/8/PPPPPPPP/BQNRKRNB w KQkq - 0 1"))
            .expect("legal 960 position");
        assert_eq!(s.kind(), GameKind::Chess960);
        let s = start_position(Some("Standard"), None).expect("startpos");
        assert_eq!(s.kind(), GameKind::Chess);
        assert!(matches!(start_position(None, Some("not a fen")), Err(StartError::FenSyntax { .. })));
        assert!(matches!(start_position(Some("Antichess"), None), Err(StartError::UnsupportedVariant(_))));
    }

    #[test]
    fn errors_name_the_field_at_fault_and_short_fens_are_completed() {
        let syntax = |fen: &str| match start_position(None, Some(fen)) {
            Err(StartError::FenSyntax { reason, .. }) => reason,
            other => panic!("{fen:?} read as {other:?}"),
        };
        let reason = syntax("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1");
        assert!(reason.contains("rank 1 (`RNBQKBN`) covers 7 squares, not 8"), "{reason}");
        let reason = syntax("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1");
        assert!(reason.contains("turn") && reason.contains("lower case"), "{reason}");
        let reason = syntax("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e4 0 1");
        assert!(reason.contains("en passant"), "{reason}");
        match start_position(None, Some("8/8/8/8/8/8/8/K6K w - - 0 1")) {
            Err(StartError::IllegalPosition { reason, .. }) => {
                assert!(reason.contains("two white kings"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        // The board alone, or with the side to move: the rest defaults (White to move, no rights).
        let s = start_position(None, Some("4k3/8/8/8/8/8/8/4K3")).expect("board only");
        assert_eq!(s.fen(), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        let s = start_position(None, Some(" 4k3/8/8/8/8/8/8/4K3 b ")).expect("board and turn");
        assert_eq!(s.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
        // A Chess960 variant reads castling rights as Chess960's.
        let s = start_position(
            Some("Chess960"),
            Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        );
        assert_eq!(s.expect("960 start").kind(), GameKind::Chess960);
    }

    // Found by fuzzing (fuzz/fuzz_targets/pgn.rs): shakmaty reads a saturated fullmove number and passes
    // over what follows it in the field, so this header read as a position, and written back with the
    // control characters as spaces it was no FEN at all.
    #[test]
    fn characters_that_are_not_fen_are_a_syntax_error() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0";
        for tail in
            ["55555555555555555555555\u{1}\u{1}", "55555555555555555555555\u{fffd}", "1\t1", "1\u{e9}"]
        {
            let fen = format!("{start} {tail}");
            match start_position(None, Some(&fen)) {
                Err(StartError::FenSyntax { fen: f, reason }) => {
                    assert_eq!(f, fen);
                    assert!(reason.contains("is not a FEN character"), "{reason}");
                }
                other => panic!("{fen:?} read as {other:?}"),
            }
        }
        // Spaces around it, as headers have them, are fine.
        assert!(start_position(None, Some(&format!(" {start} 1 "))).is_ok());
    }
}
