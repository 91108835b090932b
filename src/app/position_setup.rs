//! Reading a position typed or pasted by the user (FEN), with errors that say what to fix.
//!
//! A stand-in until the game module's FEN helpers land; the board only needs [`parse_fen`].

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, PositionError, PositionErrorKinds};

use crate::game::chess::ChessState;

/// Why a FEN could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Nothing was given.
    #[error("the FEN is empty: paste a FEN such as the start position \"{START_FEN}\"")]
    Empty,
    /// The text is not FEN syntax.
    #[error(
        "'{text}' is not a valid FEN ({reason}): a FEN has six space-separated fields - piece placement \
         (8 ranks separated by '/'), side to move (w or b), castling (KQkq, Shredder files or -), \
         en passant square or -, halfmove clock, fullmove number"
    )]
    Syntax {
        /// The text (shortened if long).
        text: String,
        /// What shakmaty reported.
        reason: String,
    },
    /// The FEN is well formed but the position is impossible.
    #[error(
        "the FEN describes an illegal position ({reason}): fix the piece placement, side to move or castling field"
    )]
    IllegalPosition {
        /// What is wrong.
        reason: String,
    },
}

/// The FEN of the standard start position.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn shorten(text: &str) -> String {
    const MAX: usize = 90;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}

/// Names each problem shakmaty found, in words.
fn describe(kinds: PositionErrorKinds) -> String {
    let table = [
        (PositionErrorKinds::EMPTY_BOARD, "the board is empty"),
        (PositionErrorKinds::MISSING_KING, "a king is missing"),
        (PositionErrorKinds::TOO_MANY_KINGS, "a side has more than one king"),
        (PositionErrorKinds::PAWNS_ON_BACKRANK, "pawns stand on the first or last rank"),
        (PositionErrorKinds::INVALID_CASTLING_RIGHTS, "castling rights do not match the king and rooks"),
        (PositionErrorKinds::INVALID_EP_SQUARE, "the en passant square is impossible"),
        (PositionErrorKinds::OPPOSITE_CHECK, "the side not to move is in check"),
        (PositionErrorKinds::IMPOSSIBLE_CHECK, "the check cannot have arisen from a legal move"),
        (PositionErrorKinds::TOO_MUCH_MATERIAL, "there is more material than promotions allow"),
        (PositionErrorKinds::VARIANT, "a variant rule is violated"),
    ];
    let found: Vec<&str> = table.iter().filter(|(k, _)| kinds.contains(*k)).map(|(_, text)| *text).collect();
    if found.is_empty() { "unknown reason".to_owned() } else { found.join("; ") }
}

/// Reads a FEN (standard, X-FEN or Shredder-FEN castling). The castling mode is Chess960 when the
/// castling rights can only be expressed that way (a rook or king off its standard square), otherwise
/// standard. Missing trailing counters are accepted (as shakmaty does).
pub fn parse_fen(text: &str) -> Result<ChessState, FenError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(FenError::Empty);
    }
    let fen: Fen =
        text.parse().map_err(|e| FenError::Syntax { text: shorten(text), reason: format!("{e}") })?;
    let mode = CastlingMode::detect(fen.as_setup());
    let pos: Chess = fen
        .into_position(mode)
        .map_err(|e: PositionError<Chess>| FenError::IllegalPosition { reason: describe(e.kinds()) })?;
    Ok(ChessState::new(pos, mode))
}

/// Whether pasted text is a FEN rather than PGN: one line with at least seven '/' between ranks and no
/// PGN tag.
pub fn looks_like_fen(text: &str) -> bool {
    let trimmed = text.trim();
    !trimmed.contains('\n') && trimmed.matches('/').count() >= 7 && !trimmed.contains('[')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameKind, GameState};

    #[test]
    fn start_position_parses() {
        let s = parse_fen(START_FEN).expect("valid");
        assert_eq!(s.fen(), START_FEN);
        assert_eq!(s.kind(), GameKind::Chess);
    }

    #[test]
    fn chess960_castling_is_detected() {
        let s = parse_fen("bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1").expect("valid");
        assert_eq!(s.kind(), GameKind::Chess960);
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(parse_fen("   "), Err(FenError::Empty));
        let e = parse_fen("not a fen").expect_err("syntax");
        assert!(matches!(e, FenError::Syntax { .. }), "{e:?}");
        assert!(e.to_string().contains("six space-separated fields"));
        let e = parse_fen("8/8/8/8/8/8/8/8 w - - 0 1").expect_err("no kings");
        assert!(matches!(e, FenError::IllegalPosition { .. }), "{e:?}");
        assert!(e.to_string().contains("illegal position"));
    }
}
