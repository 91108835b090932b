//! FEN for chess and Chess960: reading standard FEN, Shredder-FEN and X-FEN with errors that name the
//! field at fault, and writing X-FEN (which is plain FEN for standard chess) and Shredder-FEN.
//!
//! Castling rights may be written as `KQkq` (the outermost rook on that side of the king, as in X-FEN) or
//! as rook files (`HAha`, Shredder-FEN), mixed freely. shakmaty's [`Setup`] and [`CastlingMode`] do the
//! work underneath; this module checks each field first so that an error says exactly what is wrong.

use std::fmt;
use std::num::NonZeroU32;

use shakmaty::fen::Fen;
use shakmaty::{
    Bitboard, Board, Castles, CastlingMode, Chess, Color, EnPassantMode, File, FromSetup, Piece,
    PositionError, PositionErrorKinds, Rank, Role, Setup, Square,
};

/// The FEN of the standard starting position.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The six fields of a FEN, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenField {
    /// Piece placement, rank 8 first (`rnbqkbnr/pppppppp/...`).
    Board,
    /// Side to move (`w` or `b`).
    Turn,
    /// Castling rights (`KQkq`, `HAha` or `-`).
    Castling,
    /// En passant target square (`e3` or `-`).
    EnPassant,
    /// Halfmoves since the last capture or pawn move.
    HalfmoveClock,
    /// The move number, starting at 1 and increased after each Black move.
    FullmoveNumber,
}

impl FenField {
    /// All fields, in the order they appear in a FEN.
    pub const ALL: [FenField; 6] = [
        FenField::Board,
        FenField::Turn,
        FenField::Castling,
        FenField::EnPassant,
        FenField::HalfmoveClock,
        FenField::FullmoveNumber,
    ];

    /// What a valid value of this field looks like, for error messages.
    fn expected(self) -> &'static str {
        match self {
            FenField::Board => {
                "eight ranks separated by '/', like `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR`"
            }
            FenField::Turn => "`w` or `b`",
            FenField::Castling => "`-` or up to two rights per side as `KQkq` or rook files like `HAha`",
            FenField::EnPassant => "`-` or a square on rank 3 or 6 like `e3`",
            FenField::HalfmoveClock => "a whole number like `0`",
            FenField::FullmoveNumber => "a whole number like `1`",
        }
    }
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Board => "board",
            FenField::Turn => "turn",
            FenField::Castling => "castling",
            FenField::EnPassant => "en passant",
            FenField::HalfmoveClock => "halfmove clock",
            FenField::FullmoveNumber => "fullmove number",
        })
    }
}

/// Why a syntactically valid FEN does not describe a playable position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IllegalPosition {
    /// There are no pieces at all.
    EmptyBoard,
    /// A side has no king.
    MissingKing {
        /// `"white"` or `"black"`.
        color: &'static str,
    },
    /// A side has more than one king.
    TooManyKings {
        /// `"white"` or `"black"`.
        color: &'static str,
        /// How many kings it has.
        count: u32,
    },
    /// Pawns stand on rank 1 or 8.
    PawnsOnBackRank {
        /// The squares, like `e8`.
        squares: Vec<String>,
    },
    /// The side that is not to move is in check (it could be captured).
    SideNotToMoveInCheck {
        /// The side in check, `"white"` or `"black"`.
        color: &'static str,
    },
    /// The check on the side to move cannot come from any legal last move (only rejected in strict mode).
    ImpossibleCheck,
    /// More pieces than the pawns could have promoted to (only rejected in strict mode).
    TooMuchMaterial {
        /// `"white"` or `"black"`.
        color: &'static str,
    },
}

impl fmt::Display for IllegalPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalPosition::EmptyBoard => write!(f, "the board is empty; both sides need a king"),
            IllegalPosition::MissingKing { color } => write!(f, "there is no {color} king"),
            IllegalPosition::TooManyKings { color, count } => {
                let n = match count {
                    2 => "two".to_owned(),
                    3 => "three".to_owned(),
                    n => n.to_string(),
                };
                write!(f, "{n} {color} kings; each side has exactly one")
            }
            IllegalPosition::PawnsOnBackRank { squares } => {
                write!(f, "pawn(s) on {}; pawns never stand on rank 1 or 8", squares.join(", "))
            }
            IllegalPosition::SideNotToMoveInCheck { color } => write!(
                f,
                "the side not to move is in check ({color} could be captured); check the turn field"
            ),
            IllegalPosition::ImpossibleCheck => write!(
                f,
                "the check on the side to move cannot come from a legal last move \
                 (too many or aligned checkers, or it contradicts the en passant square)"
            ),
            IllegalPosition::TooMuchMaterial { color } => {
                write!(f, "{color} has more pieces than eight pawns could have promoted to")
            }
        }
    }
}

/// An error reading a FEN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Nothing but white space was given.
    #[error(
        "empty FEN: give at least the board, turn, castling and en passant fields, like `{STARTPOS_FEN}`"
    )]
    Empty,
    /// Fewer than four fields.
    #[error(
        "FEN `{fen}` has no {field} field (expected {}); a FEN needs at least board, turn, castling and \
         en passant, e.g. `{STARTPOS_FEN}`",
        field.expected()
    )]
    MissingField {
        /// The first missing field.
        field: FenField,
        /// The whole text given.
        fen: String,
    },
    /// More than six fields.
    #[error(
        "FEN `{fen}` has {count} fields but at most 6 are allowed (board, turn, castling, en passant, \
         halfmove clock, fullmove number); unexpected `{extra}`"
    )]
    TooManyFields {
        /// How many fields were found.
        count: usize,
        /// The first extra field.
        extra: String,
        /// The whole text given.
        fen: String,
    },
    /// One field is malformed or contradicts the board.
    #[error("bad {field} field `{text}`: {reason} (expected {})", field.expected())]
    Field {
        /// Which field.
        field: FenField,
        /// The field's text.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The fields are well formed but the position is not legal.
    #[error("illegal position in FEN `{fen}`: {problem}")]
    Illegal {
        /// What is wrong.
        problem: IllegalPosition,
        /// The whole text given.
        fen: String,
    },
}

impl FenError {
    /// The field at fault, if the error is about one field.
    pub fn field(&self) -> Option<FenField> {
        match self {
            FenError::MissingField { field, .. } | FenError::Field { field, .. } => Some(*field),
            _ => None,
        }
    }
}

/// How to decide between standard chess and Chess960 when reading a FEN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ModeChoice {
    /// Chess960 when the castling field names rook files (Shredder-FEN or X-FEN letters) or a castling
    /// right needs a king off the e-file or a rook off the a/h-files; standard chess otherwise.
    #[default]
    Auto,
    /// Standard chess; castling rights that need Chess960 are an error.
    Standard,
    /// Chess960 castling rules and notation.
    Chess960,
}

/// Options for [`parse_fen`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FenOptions {
    /// Standard chess, Chess960, or decide from the FEN.
    pub mode: ModeChoice,
    /// Also reject positions that are playable but unreachable from any start: an impossible check
    /// (e.g. three checkers) or more pieces than promotions allow. Off by default, since such positions
    /// are common in test suites and composed problems and the move generator handles them.
    pub strict: bool,
}

/// How castling rights are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CastlingNotation {
    /// X-FEN: `KQkq` for the outermost rook on each side of the king, a rook file only where that would be
    /// ambiguous (Chess960 with two rooks on one side). For standard chess this is plain FEN.
    #[default]
    XFen,
    /// Shredder-FEN: always rook files, like `HAha`.
    Shredder,
}

/// A FEN read into a legal position, with the castling mode it was read in.
#[derive(Debug, Clone)]
pub struct ParsedFen {
    /// The position.
    pub position: Chess,
    /// Standard or Chess960.
    pub mode: CastlingMode,
}

fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn field_err(field: FenField, text: &str, reason: impl Into<String>) -> FenError {
    FenError::Field { field, text: text.to_owned(), reason: reason.into() }
}

/// Whether pasted text is a FEN rather than PGN: one line with at least seven '/' between ranks and no
/// PGN tag. A guess for choosing the reader, not a check: [`parse_fen`] says whether the FEN is good.
pub fn looks_like_fen(text: &str) -> bool {
    let trimmed = text.trim();
    !trimmed.contains('\n') && trimmed.matches('/').count() >= 7 && !trimmed.contains('[')
}

/// Reads a FEN (standard, Shredder-FEN or X-FEN castling) with [`FenOptions::default`].
pub fn parse_fen(fen: &str) -> Result<ParsedFen, FenError> {
    parse_fen_with(fen, FenOptions::default())
}

/// Reads a FEN. At least the first four fields are required; the halfmove clock defaults to 0 and the
/// fullmove number to 1 (a fullmove number of 0, written by some programs, is read as 1).
pub fn parse_fen_with(fen: &str, options: FenOptions) -> Result<ParsedFen, FenError> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.is_empty() {
        return Err(FenError::Empty);
    }
    if fields.len() < 4 {
        return Err(FenError::MissingField {
            field: FenField::ALL[fields.len()],
            fen: fen.trim().to_owned(),
        });
    }
    if fields.len() > 6 {
        return Err(FenError::TooManyFields {
            count: fields.len(),
            extra: fields[6].to_owned(),
            fen: fen.trim().to_owned(),
        });
    }

    let mut setup = Setup::empty();
    setup.board = parse_board(fields[0])?;
    setup.turn = match fields[1] {
        "w" => Color::White,
        "b" => Color::Black,
        other => {
            let reason = if other.eq_ignore_ascii_case("w") || other.eq_ignore_ascii_case("b") {
                "the side to move is written in lower case"
            } else {
                "not a side to move"
            };
            return Err(field_err(FenField::Turn, other, reason));
        }
    };
    let rights = parse_castling(fields[2], &setup.board)?;
    setup.castling_rights = rights.iter().map(|(_, sq)| *sq).collect();
    setup.ep_square = parse_ep(fields[3], setup.turn)?;
    if let Some(text) = fields.get(4) {
        setup.halfmoves = parse_number(FenField::HalfmoveClock, text)?;
    }
    if let Some(text) = fields.get(5) {
        let n = parse_number(FenField::FullmoveNumber, text)?;
        setup.fullmoves = NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
    }

    let names_files = rights.iter().any(|(ch, _)| !matches!(ch, 'K' | 'Q' | 'k' | 'q'));
    let mode = match options.mode {
        ModeChoice::Standard => CastlingMode::Standard,
        ModeChoice::Chess960 => CastlingMode::Chess960,
        ModeChoice::Auto if names_files => CastlingMode::Chess960,
        ModeChoice::Auto => CastlingMode::detect(&setup),
    };

    let mut result = Chess::from_setup(setup.clone(), mode);
    if !options.strict {
        result = result
            .or_else(PositionError::ignore_impossible_check)
            .or_else(PositionError::ignore_too_much_material);
    }
    match result {
        Ok(position) => Ok(ParsedFen { position, mode }),
        Err(e) => Err(explain(e.kinds(), &setup, mode, &rights, &fields, fen)),
    }
}

fn parse_board(text: &str) -> Result<Board, FenError> {
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(field_err(FenField::Board, text, format!("it has {} rank(s), not 8", ranks.len())));
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank_no = 8 - i;
        let mut squares = 0u32;
        for ch in rank_text.chars() {
            match ch {
                '1'..='8' => squares += ch as u32 - '0' as u32,
                _ if Piece::from_char(ch).is_some() => squares += 1,
                _ => {
                    return Err(field_err(
                        FenField::Board,
                        text,
                        format!(
                            "rank {rank_no} (`{rank_text}`) has '{ch}', which is neither a piece letter \
                             (PNBRQK for White, pnbrqk for Black) nor a count of empty squares 1-8"
                        ),
                    ));
                }
            }
        }
        if squares != 8 {
            return Err(field_err(
                FenField::Board,
                text,
                format!("rank {rank_no} (`{rank_text}`) covers {squares} squares, not 8"),
            ));
        }
    }
    Board::from_ascii_board_fen(text.as_bytes())
        .map_err(|e| field_err(FenField::Board, text, format!("shakmaty rejected it: {e}")))
}

/// Reads the castling field into (letter as written, rook square) pairs.
fn parse_castling(text: &str, board: &Board) -> Result<Vec<(char, Square)>, FenError> {
    let mut rights: Vec<(char, Square)> = Vec::new();
    if text == "-" {
        return Ok(rights);
    }
    for ch in text.chars() {
        let color = if ch.is_ascii_uppercase() { Color::White } else { Color::Black };
        let name = color_name(color);
        let backrank = color.backrank();
        let rooks = board.by_piece(color.rook()) & backrank;
        let king = board.king_of(color).filter(|k| k.rank() == backrank);
        let square = match ch.to_ascii_lowercase() {
            'k' | 'q' => {
                let Some(king) = king else {
                    return Err(field_err(
                        FenField::Castling,
                        text,
                        format!("`{ch}` needs the {name} king on rank {}", backrank.char()),
                    ));
                };
                let outermost = if ch.eq_ignore_ascii_case(&'k') {
                    rooks.into_iter().rev().find(|r| r.file() > king.file())
                } else {
                    rooks.into_iter().find(|r| r.file() < king.file())
                };
                let side = if ch.eq_ignore_ascii_case(&'k') { "king's (h-file)" } else { "queen's (a-file)" };
                outermost.ok_or_else(|| {
                    field_err(
                        FenField::Castling,
                        text,
                        format!(
                            "`{ch}` but {name} has no rook on the {side} side of its king on rank {}",
                            backrank.char()
                        ),
                    )
                })?
            }
            'a'..='h' => {
                let file = File::from_char(ch.to_ascii_lowercase()).unwrap_or(File::A);
                let sq = Square::from_coords(file, backrank);
                if !rooks.contains(sq) {
                    return Err(field_err(
                        FenField::Castling,
                        text,
                        format!("`{ch}` names a castling rook on {sq} but there is no {name} rook there"),
                    ));
                }
                if king.is_none() {
                    return Err(field_err(
                        FenField::Castling,
                        text,
                        format!("`{ch}` needs the {name} king on rank {}", backrank.char()),
                    ));
                }
                sq
            }
            '-' => {
                return Err(field_err(
                    FenField::Castling,
                    text,
                    "`-` stands alone, meaning no castling rights",
                ));
            }
            _ => {
                return Err(field_err(FenField::Castling, text, format!("'{ch}' is not a castling right")));
            }
        };
        if let Some((prev, _)) = rights.iter().find(|(_, s)| *s == square) {
            return Err(field_err(
                FenField::Castling,
                text,
                format!("`{prev}` and `{ch}` name the same rook on {square}"),
            ));
        }
        rights.push((ch, square));
        if rights.iter().filter(|(_, s)| s.rank() == backrank).count() > 2 {
            return Err(field_err(
                FenField::Castling,
                text,
                format!("{name} has more than two castling rights"),
            ));
        }
    }
    Ok(rights)
}

fn parse_ep(text: &str, turn: Color) -> Result<Option<Square>, FenError> {
    if text == "-" {
        return Ok(None);
    }
    let sq = Square::from_ascii(text.as_bytes())
        .map_err(|_| field_err(FenField::EnPassant, text, "not a square"))?;
    let want = turn.relative_rank(Rank::Sixth);
    if sq.rank() != want {
        return Err(field_err(
            FenField::EnPassant,
            text,
            format!(
                "with {} to move the en passant square must be on rank {} (the square the {} pawn skipped)",
                color_name(turn),
                want.char(),
                color_name(!turn)
            ),
        ));
    }
    Ok(Some(sq))
}

fn parse_number(field: FenField, text: &str) -> Result<u32, FenError> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(field_err(field, text, "not a whole number"));
    }
    text.parse::<u32>().map_err(|_| field_err(field, text, "number too large"))
}

/// Turns shakmaty's position error kinds into our error, most basic problem first.
fn explain(
    kinds: PositionErrorKinds,
    setup: &Setup,
    mode: CastlingMode,
    rights: &[(char, Square)],
    fields: &[&str],
    fen: &str,
) -> FenError {
    let board = &setup.board;
    let illegal = |problem| FenError::Illegal { problem, fen: fen.trim().to_owned() };
    if kinds.contains(PositionErrorKinds::EMPTY_BOARD) {
        return illegal(IllegalPosition::EmptyBoard);
    }
    for color in Color::ALL {
        let count = (board.kings() & board.by_color(color)).count() as u32;
        if count == 0 && kinds.contains(PositionErrorKinds::MISSING_KING) {
            return illegal(IllegalPosition::MissingKing { color: color_name(color) });
        }
        if count > 1 && kinds.contains(PositionErrorKinds::TOO_MANY_KINGS) {
            return illegal(IllegalPosition::TooManyKings { color: color_name(color), count });
        }
    }
    if kinds.contains(PositionErrorKinds::PAWNS_ON_BACKRANK) {
        let squares = (board.pawns() & Bitboard::BACKRANKS).into_iter().map(|s| s.to_string()).collect();
        return illegal(IllegalPosition::PawnsOnBackRank { squares });
    }
    if kinds.contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS) {
        let kept = match Castles::from_setup(setup, mode) {
            Ok(c) | Err(c) => c.castling_rights(),
        };
        let bad = rights.iter().find(|(_, sq)| !kept.contains(*sq));
        let reason = match bad {
            Some((ch, sq)) => {
                let color = if sq.rank() == Rank::First { Color::White } else { Color::Black };
                let king = board.king_of(color);
                let standard_squares =
                    king.is_some_and(|k| k.file() == File::E) && matches!(sq.file(), File::A | File::H);
                if mode.is_standard() && !standard_squares {
                    format!(
                        "`{ch}` (rook on {sq}, king on {}) is only possible in Chess960; read it as Chess960 \
                         or remove the right",
                        king.map_or_else(|| "-".to_owned(), |k| k.to_string())
                    )
                } else {
                    format!(
                        "`{ch}` (rook on {sq}) is a second castling right on the same side of the {} king; \
                         only one rook per side can castle",
                        color_name(color)
                    )
                }
            }
            None => "the rights do not match the rooks and kings on the board".to_owned(),
        };
        return field_err(FenField::Castling, fields[2], reason);
    }
    if kinds.contains(PositionErrorKinds::INVALID_EP_SQUARE) {
        let text = fields[3];
        let reason = match setup.ep_square {
            Some(ep) => {
                let them = !setup.turn;
                let to = Square::from_coords(ep.file(), them.relative_rank(Rank::Fourth));
                let from = Square::from_coords(ep.file(), them.relative_rank(Rank::Second));
                if board.piece_at(to) != Some(Piece { color: them, role: Role::Pawn }) {
                    format!("no {} pawn on {to} that could just have moved two squares", color_name(them))
                } else {
                    format!("{ep} and {from} must be empty after a two-square pawn move from {from}")
                }
            }
            None => "inconsistent with the board".to_owned(),
        };
        return field_err(FenField::EnPassant, text, reason);
    }
    if kinds.contains(PositionErrorKinds::OPPOSITE_CHECK) {
        return illegal(IllegalPosition::SideNotToMoveInCheck { color: color_name(!setup.turn) });
    }
    if kinds.contains(PositionErrorKinds::IMPOSSIBLE_CHECK) {
        return illegal(IllegalPosition::ImpossibleCheck);
    }
    illegal(IllegalPosition::TooMuchMaterial { color: too_much_material_color(board) })
}

/// Which side has more pieces than its eight pawns could have promoted to (shakmaty's rule).
fn too_much_material_color(board: &Board) -> &'static str {
    for color in Color::ALL {
        let ours = board.by_color(color);
        let count = |bb: Bitboard| (bb & ours).count();
        let promoted = count(board.queens()).saturating_sub(1)
            + count(board.rooks()).saturating_sub(2)
            + count(board.knights()).saturating_sub(2)
            + count(board.bishops() & Bitboard::LIGHT_SQUARES).saturating_sub(1)
            + count(board.bishops() & Bitboard::DARK_SQUARES).saturating_sub(1);
        if count(board.pawns()) + promoted > 8 {
            return color_name(color);
        }
    }
    "one side"
}

/// Writes a position as FEN with the given castling notation and en passant convention.
pub fn write_fen(position: &Chess, notation: CastlingNotation, ep: EnPassantMode) -> String {
    let fen = Fen::from_position(position, ep);
    match notation {
        CastlingNotation::XFen => fen.to_string(),
        CastlingNotation::Shredder => {
            let setup = fen.as_setup();
            let mut castling = String::new();
            for color in Color::ALL {
                for sq in (setup.castling_rights & color.backrank()).into_iter().rev() {
                    let c = sq.file().char();
                    castling.push(if color.is_white() { c.to_ascii_uppercase() } else { c });
                }
            }
            if castling.is_empty() {
                castling.push('-');
            }
            let ep_text = setup.ep_square.map_or_else(|| "-".to_owned(), |s| s.to_string());
            format!(
                "{} {} {} {} {} {}",
                setup.board.board_fen(),
                setup.turn.char(),
                castling,
                ep_text,
                setup.halfmoves,
                setup.fullmoves
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(fen: &str) -> FenError {
        match parse_fen(fen) {
            Err(e) => e,
            Ok(p) => panic!("`{fen}` should not parse, got {:?}", p.mode),
        }
    }

    #[test]
    fn pasted_fens_are_told_from_pgn() {
        assert!(looks_like_fen(&format!("  {STARTPOS_FEN}\n")));
        assert!(!looks_like_fen("[Event \"x\"]\n1. e4 e5 *"));
        assert!(!looks_like_fen("1. e4 e5 2. Nf3 *"));
        assert!(!looks_like_fen("8/8/8/8 w - -\n8/8/8/8"));
    }

    fn field_reason(fen: &str, field: FenField) -> String {
        match err(fen) {
            FenError::Field { field: f, reason, .. } if f == field => reason,
            e => panic!("`{fen}`: expected a {field} error, got: {e}"),
        }
    }

    fn illegal(fen: &str, strict: bool) -> IllegalPosition {
        match parse_fen_with(fen, FenOptions { strict, ..FenOptions::default() }) {
            Err(FenError::Illegal { problem, .. }) => problem,
            other => panic!("`{fen}`: expected an illegal-position error, got {other:?}"),
        }
    }

    #[test]
    fn field_count_errors() {
        assert_eq!(err("   "), FenError::Empty);
        let e = err("8/8/8/8/8/8/8/8 w");
        assert_eq!(e.field(), Some(FenField::Castling));
        assert!(e.to_string().contains("has no castling field"), "{e}");
        assert!(matches!(err(&format!("{STARTPOS_FEN} extra")), FenError::TooManyFields { count: 7, .. }));
    }

    #[test]
    fn board_errors() {
        assert!(field_reason("8/8/8/8/8/8/8 w - - 0 1", FenField::Board).contains("7 rank(s)"));
        let r = field_reason("rnbqkbnr1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenField::Board);
        assert!(r.contains("rank 8 (`rnbqkbnr1`) covers 9 squares"), "{r}");
        let r = field_reason("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenField::Board);
        assert!(r.contains("rank 7") && r.contains("'x'"), "{r}");
        assert!(
            field_reason("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", FenField::Board)
                .contains("'9'")
        );
        let e = err("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(
            e.to_string().starts_with("bad board field `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPP/RNBQKBNR`"),
            "{e}"
        );
    }

    #[test]
    fn turn_errors() {
        assert!(field_reason("4k3/8/8/8/8/8/8/4K3 x - - 0 1", FenField::Turn).contains("not a side"));
        assert!(field_reason("4k3/8/8/8/8/8/8/4K3 W - - 0 1", FenField::Turn).contains("lower case"));
    }

    #[test]
    fn castling_errors() {
        let base = "r3k2r/8/8/8/8/8/8/R3K2R w";
        assert!(field_reason(&format!("{base} KX - 0 1"), FenField::Castling).contains("'X'"));
        assert!(field_reason(&format!("{base} K-Q - 0 1"), FenField::Castling).contains("stands alone"));
        assert!(field_reason(&format!("{base} KK - 0 1"), FenField::Castling).contains("same rook on h1"));
        assert!(field_reason(&format!("{base} KH - 0 1"), FenField::Castling).contains("same rook on h1"));
        assert!(field_reason(&format!("{base} B - 0 1"), FenField::Castling).contains("no white rook there"));
        assert!(
            field_reason("r3k2r/8/8/8/8/8/8/R3K2R w KQAk - 0 1", FenField::Castling)
                .contains("same rook on a1")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/8/RR2K2R w HBA - 0 1", FenField::Castling)
                .contains("more than two castling rights")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/4K3/R6R w K - 0 1", FenField::Castling).contains("king on rank 1")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/4K3/R6R w H - 0 1", FenField::Castling).contains("king on rank 1")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/8/R3K3 w K - 0 1", FenField::Castling)
                .contains("no rook on the king's")
        );
        // Two rights on the same side of the king.
        let r = field_reason("4k3/8/8/8/8/8/8/4KRR1 w GF - 0 1", FenField::Castling);
        assert!(r.contains("second castling right"), "{r}");
        // Needs Chess960 but standard was asked for.
        let e = parse_fen_with(
            "4k3/8/8/8/8/8/8/3K3R w K - 0 1",
            FenOptions { mode: ModeChoice::Standard, strict: false },
        );
        match e {
            Err(FenError::Field { field: FenField::Castling, reason, .. }) => {
                assert!(reason.contains("only possible in Chess960"), "{reason}")
            }
            other => panic!("expected castling error, got {other:?}"),
        }
    }

    #[test]
    fn en_passant_errors() {
        assert!(
            field_reason("4k3/8/8/8/4P3/8/8/4K3 b - z9 0 1", FenField::EnPassant).contains("not a square")
        );
        assert!(field_reason("4k3/8/8/8/4P3/8/8/4K3 b - e6 0 1", FenField::EnPassant).contains("rank 3"));
        assert!(
            field_reason("4k3/8/8/8/8/8/8/4K3 b - e3 0 1", FenField::EnPassant)
                .contains("no white pawn on e4")
        );
        let r = field_reason("4k3/8/8/8/4P3/8/4N3/4K3 b - e3 0 1", FenField::EnPassant);
        assert!(r.contains("must be empty"), "{r}");
    }

    #[test]
    fn clock_errors() {
        assert!(
            field_reason("4k3/8/8/8/8/8/8/4K3 w - - x 1", FenField::HalfmoveClock).contains("whole number")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/8/4K3 w - - -1 1", FenField::HalfmoveClock).contains("whole number")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/8/4K3 w - - 99999999999 1", FenField::HalfmoveClock)
                .contains("too large")
        );
        assert!(
            field_reason("4k3/8/8/8/8/8/8/4K3 w - - 0 1.5", FenField::FullmoveNumber)
                .contains("whole number")
        );
    }

    #[test]
    fn legality_errors() {
        assert_eq!(illegal("8/8/8/8/8/8/8/8 w - - 0 1", false), IllegalPosition::EmptyBoard);
        assert_eq!(
            illegal("4k3/8/8/8/8/8/8/8 w - - 0 1", false),
            IllegalPosition::MissingKing { color: "white" }
        );
        assert_eq!(
            illegal("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", false),
            IllegalPosition::TooManyKings { color: "white", count: 2 }
        );
        let e = err("4k3/8/8/8/8/8/8/3KK3 w - - 0 1").to_string();
        assert!(e.contains("two white kings"), "{e}");
        assert_eq!(
            illegal("P3k3/8/8/8/8/8/8/4K3 w - - 0 1", false),
            IllegalPosition::PawnsOnBackRank { squares: vec!["a8".into()] }
        );
        assert_eq!(
            illegal("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", false),
            IllegalPosition::SideNotToMoveInCheck { color: "black" }
        );
        let e = err("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1").to_string();
        assert!(e.contains("side not to move is in check"), "{e}");
        // Three checkers: accepted by default, rejected in strict mode.
        let three = "4k3/8/3N1N2/8/8/8/8/K3R3 b - - 0 1";
        assert!(parse_fen(three).is_ok());
        assert_eq!(illegal(three, true), IllegalPosition::ImpossibleCheck);
        let queens = "4k3/8/8/8/8/8/PPPPPPPP/QQQQKQQQ w - - 0 1";
        assert!(parse_fen(queens).is_ok());
        assert_eq!(illegal(queens, true), IllegalPosition::TooMuchMaterial { color: "white" });
    }

    #[test]
    fn mode_detection() {
        let mode = |fen: &str| parse_fen(fen).map(|p| p.mode);
        assert_eq!(mode(STARTPOS_FEN), Ok(CastlingMode::Standard));
        assert_eq!(
            mode("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"),
            Ok(CastlingMode::Chess960)
        );
        // X-FEN `KQkq` with the king off the e-file.
        assert_eq!(
            mode("r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1"),
            Ok(CastlingMode::Chess960)
        );
        // Off-standard squares but no castling rights: nothing needs Chess960.
        assert_eq!(mode("1r4kr/8/8/8/8/8/8/1R4KR w - - 0 1"), Ok(CastlingMode::Standard));
        let forced = parse_fen_with(STARTPOS_FEN, FenOptions { mode: ModeChoice::Chess960, strict: false });
        assert_eq!(forced.map(|p| p.mode), Ok(CastlingMode::Chess960));
        // Shredder letters naming the standard rooks are fine in explicit standard mode.
        let std = parse_fen_with(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
            FenOptions { mode: ModeChoice::Standard, strict: false },
        );
        assert_eq!(std.map(|p| p.mode), Ok(CastlingMode::Standard));
    }

    #[test]
    fn x_fen_letters_pick_inner_rooks() {
        // White rooks on a1, b1 (queen side of the c1 king) and h1; `B` names the inner one.
        let p = parse_fen("4k3/8/8/8/8/8/8/RRK4R w BK - 0 1").expect("valid X-FEN");
        assert_eq!(p.mode, CastlingMode::Chess960);
        let x = write_fen(&p.position, CastlingNotation::XFen, EnPassantMode::Legal);
        let s = write_fen(&p.position, CastlingNotation::Shredder, EnPassantMode::Legal);
        assert_eq!(x, "4k3/8/8/8/8/8/8/RRK4R w KB - 0 1");
        assert_eq!(s, "4k3/8/8/8/8/8/8/RRK4R w HB - 0 1");
    }

    #[test]
    fn round_trips() {
        let fens = [
            STARTPOS_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/8/8/8/8/8/8/K1k5 b - - 57 120",
            "4k2r/8/8/8/8/8/8/R3K3 w Qk - 3 2",
        ];
        for fen in fens {
            let p = parse_fen(fen).expect("valid FEN");
            assert_eq!(p.mode, CastlingMode::Standard);
            assert_eq!(write_fen(&p.position, CastlingNotation::XFen, EnPassantMode::Legal), fen);
            let shredder = write_fen(&p.position, CastlingNotation::Shredder, EnPassantMode::Legal);
            let back = parse_fen_with(&shredder, FenOptions { mode: ModeChoice::Standard, strict: false })
                .expect("Shredder-FEN reads back");
            assert_eq!(back.position, p.position, "{shredder}");
        }
        let shredder = [
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
            "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
        ];
        for fen in shredder {
            let p = parse_fen(fen).expect("valid Shredder-FEN");
            assert_eq!(p.mode, CastlingMode::Chess960);
            assert_eq!(write_fen(&p.position, CastlingNotation::Shredder, EnPassantMode::Legal), fen);
            let x = write_fen(&p.position, CastlingNotation::XFen, EnPassantMode::Legal);
            let back = parse_fen_with(&x, FenOptions { mode: ModeChoice::Chess960, strict: false })
                .expect("X-FEN reads back");
            assert_eq!(back.position, p.position, "{x}");
        }
    }

    #[test]
    fn fullmove_zero_and_short_fen() {
        let p = parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 5 0").expect("fullmove 0 accepted");
        assert_eq!(
            write_fen(&p.position, CastlingNotation::XFen, EnPassantMode::Legal),
            "4k3/8/8/8/8/8/8/4K3 w - - 5 1"
        );
        let p = parse_fen("  4k3/8/8/8/8/8/8/4K3   b  -  - ").expect("EPD-style four fields");
        assert_eq!(
            write_fen(&p.position, CastlingNotation::XFen, EnPassantMode::Legal),
            "4k3/8/8/8/8/8/8/4K3 b - - 0 1"
        );
    }
}
