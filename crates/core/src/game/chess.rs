//! Chess and Chess960 over shakmaty (magic-bitboard move generation).

use std::str::FromStr;

use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{
    Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, KnownOutcome, Move, Position, Setup,
};

use super::fen::{CastlingNotation, FenError, FenOptions, ModeChoice, parse_fen_with, write_fen};
use super::{ActionError, GameKind, GameState, Outcome, OutcomeReason, Player};

/// The number of Chess960 starting positions.
pub const CHESS960_POSITIONS: u32 = 960;

/// The Chess960 number (Scharnagl numbering) of the standard chess setup.
pub const STANDARD_CHESS960: u32 = 518;

/// A Chess960 start position number outside `0..960`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "there is no Chess960 start position number {0}: numbers run from 0 to 959 (Scharnagl numbering; \
     518 is the standard setup)"
)]
pub struct Chess960IndexError(pub u32);

/// A chess position together with its castling notation mode (standard or Chess960).
///
/// Always a legal position: it can only be built from shakmaty's validated [`Chess`] type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChessState {
    pos: Chess,
    mode: CastlingMode,
}

impl Default for ChessState {
    fn default() -> Self {
        ChessState::startpos()
    }
}

impl ChessState {
    /// The standard starting position.
    pub fn startpos() -> ChessState {
        ChessState { pos: Chess::default(), mode: CastlingMode::Standard }
    }

    /// Wraps a shakmaty position. `mode` decides the castling notation and the [`GameKind`].
    pub fn new(pos: Chess, mode: CastlingMode) -> ChessState {
        ChessState { pos, mode }
    }

    /// The underlying shakmaty position.
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// The castling mode (standard or Chess960).
    pub fn castling_mode(&self) -> CastlingMode {
        self.mode
    }

    /// Reads a FEN: standard, Shredder-FEN (`HAha`) or X-FEN castling. Chess960 is chosen automatically
    /// when the castling field names rook files or a castling king or rook is off its standard square.
    pub fn from_fen(fen: &str) -> Result<ChessState, FenError> {
        ChessState::from_fen_with(fen, FenOptions::default())
    }

    /// Reads a FEN, choosing standard chess or Chess960 explicitly (or automatically).
    pub fn from_fen_mode(fen: &str, mode: ModeChoice) -> Result<ChessState, FenError> {
        ChessState::from_fen_with(fen, FenOptions { mode, ..FenOptions::default() })
    }

    /// Reads a FEN with all options (mode, strictness).
    pub fn from_fen_with(fen: &str, options: FenOptions) -> Result<ChessState, FenError> {
        let parsed = parse_fen_with(fen, options)?;
        Ok(ChessState { pos: parsed.position, mode: parsed.mode })
    }

    /// Chess960 start position number `n` (Scharnagl numbering, `0..960`; 518 is the standard setup),
    /// White to move, all four castling rights, in Chess960 mode.
    pub fn chess960(n: u32) -> Result<ChessState, Chess960IndexError> {
        if n >= CHESS960_POSITIONS {
            return Err(Chess960IndexError(n));
        }
        let board = Board::chess960(n);
        let mut setup = Setup::empty();
        setup.castling_rights = board.rooks();
        setup.board = board;
        // Not user data: n is in range, and all 960 start positions are legal (tested below).
        let pos = Chess::from_setup(setup, CastlingMode::Chess960)
            .expect("every Chess960 start position is a legal position");
        Ok(ChessState { pos, mode: CastlingMode::Chess960 })
    }

    /// FEN with `KQkq` castling (X-FEN: a rook file only where `KQkq` would be ambiguous, which never
    /// happens in standard chess). The en passant square is written only when a capture is legal, as
    /// Stockfish and Lichess do.
    pub fn fen(&self) -> String {
        write_fen(&self.pos, CastlingNotation::XFen, EnPassantMode::Legal)
    }

    /// X-FEN; the same as [`ChessState::fen`], named for symmetry with [`ChessState::shredder_fen`].
    pub fn xfen(&self) -> String {
        self.fen()
    }

    /// Shredder-FEN: castling rights as rook files, like `HAha`.
    pub fn shredder_fen(&self) -> String {
        write_fen(&self.pos, CastlingNotation::Shredder, EnPassantMode::Legal)
    }

    /// FEN in the given castling notation and en passant convention.
    pub fn to_fen(&self, notation: CastlingNotation, ep: EnPassantMode) -> String {
        write_fen(&self.pos, notation, ep)
    }
}

impl FromStr for ChessState {
    type Err = FenError;

    /// Same as [`ChessState::from_fen`].
    fn from_str(s: &str) -> Result<ChessState, FenError> {
        ChessState::from_fen(s)
    }
}

fn player(color: Color) -> Player {
    match color {
        Color::White => Player::First,
        Color::Black => Player::Second,
    }
}

impl GameState for ChessState {
    type Action = Move;

    fn kind(&self) -> GameKind {
        match self.mode {
            CastlingMode::Standard => GameKind::Chess,
            CastlingMode::Chess960 => GameKind::Chess960,
        }
    }

    fn to_move(&self) -> Player {
        player(self.pos.turn())
    }

    fn ply(&self) -> u32 {
        let full = self.pos.fullmoves().get();
        2u32.saturating_mul(full - 1).saturating_add(u32::from(self.pos.turn() == Color::Black))
    }

    fn legal_actions(&self) -> Vec<Move> {
        if self.pos.halfmoves() >= 100 {
            return Vec::new();
        }
        self.pos.legal_moves().into_iter().collect()
    }

    fn play(&self, action: Move) -> Result<Self, ActionError> {
        if self.pos.halfmoves() >= 100 || !self.pos.is_legal(action) {
            return Err(ActionError::Illegal { text: self.action_to_text(action) });
        }
        let mut pos = self.pos.clone();
        pos.play_unchecked(action);
        Ok(ChessState { pos, mode: self.mode })
    }

    fn outcome(&self) -> Option<Outcome> {
        match self.pos.outcome().known() {
            Some(KnownOutcome::Decisive { winner }) => {
                Some(Outcome::Win { winner: player(winner), reason: OutcomeReason::Checkmate })
            }
            Some(KnownOutcome::Draw) => {
                let reason = if self.pos.is_stalemate() {
                    OutcomeReason::Stalemate
                } else {
                    OutcomeReason::InsufficientMaterial
                };
                Some(Outcome::Draw { reason })
            }
            None if self.pos.halfmoves() >= 100 => Some(Outcome::Draw { reason: OutcomeReason::FiftyMoves }),
            None => None,
        }
    }

    fn action_to_text(&self, action: Move) -> String {
        action.to_uci(self.mode).to_string()
    }

    fn parse_action(&self, text: &str) -> Result<Move, ActionError> {
        let uci: UciMove = text
            .parse()
            .map_err(|e| ActionError::Syntax { text: text.to_owned(), reason: format!("{e}") })?;
        let m = uci.to_move(&self.pos).map_err(|_| ActionError::Illegal { text: text.to_owned() })?;
        if self.pos.halfmoves() >= 100 {
            return Err(ActionError::Illegal { text: text.to_owned() });
        }
        Ok(m)
    }

    fn to_text(&self) -> String {
        match self.mode {
            CastlingMode::Standard => self.fen(),
            CastlingMode::Chess960 => self.shredder_fen(),
        }
    }

    fn hash64(&self) -> u64 {
        let h: Zobrist64 = self.pos.zobrist_hash(EnPassantMode::Legal);
        h.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startpos_has_twenty_moves_and_plays_uci() {
        let s = ChessState::startpos();
        assert_eq!(s.legal_actions().len(), 20);
        assert_eq!(s.to_move(), Player::First);
        let m = s.parse_action("e2e4").expect("legal");
        let t = s.play(m).expect("legal");
        assert_eq!(t.to_move(), Player::Second);
        assert_eq!(t.to_text(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert!(s.parse_action("e2e5").is_err());
        assert!(s.parse_action("zz").is_err());
        assert_ne!(s.hash64(), t.hash64());
    }

    #[test]
    fn fools_mate_is_a_win_for_black() {
        let mut s = ChessState::startpos();
        for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            let a = s.parse_action(m).expect("legal");
            s = s.play(a).expect("legal");
        }
        let o = s.outcome().expect("over");
        assert_eq!(o.winner(), Some(Player::Second));
        assert_eq!(o.reason(), OutcomeReason::Checkmate);
        assert!(s.legal_actions().is_empty());
    }

    #[test]
    fn chess960_start_positions() {
        let standard = ChessState::chess960(518).expect("in range");
        assert_eq!(standard.kind(), GameKind::Chess960);
        assert_eq!(standard.to_text(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1");
        assert_eq!(standard.position(), ChessState::startpos().position());
        let first = ChessState::chess960(0).expect("in range");
        assert_eq!(first.fen(), "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1");
        let last = ChessState::chess960(959).expect("in range");
        assert_eq!(last.shredder_fen(), "rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w CAca - 0 1");
        let mut seen = std::collections::HashSet::new();
        for n in 0..CHESS960_POSITIONS {
            let s = ChessState::chess960(n).expect("in range");
            assert!(seen.insert(s.fen()), "start position {n} repeats");
            let back = ChessState::from_fen(&s.to_text()).expect("Shredder-FEN reads back");
            assert_eq!(back, s, "position {n}");
        }
        let e = ChessState::chess960(960).expect_err("out of range");
        assert_eq!(e, Chess960IndexError(960));
        assert!(e.to_string().contains("0 to 959"));
    }

    #[test]
    fn from_fen_and_text() {
        let s: ChessState = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1".parse().expect("valid FEN");
        assert_eq!(s.kind(), GameKind::Chess);
        assert_eq!(s.to_text(), "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        assert_eq!(s.shredder_fen(), "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1");
        assert!(s.parse_action("e1g1").is_ok());
        let c = ChessState::from_fen_mode(&s.fen(), ModeChoice::Chess960).expect("valid FEN");
        assert_eq!(c.kind(), GameKind::Chess960);
        assert_eq!(c.to_text(), s.shredder_fen());
        assert!(c.parse_action("e1h1").is_ok());
        assert_eq!(c.xfen(), s.fen());
        assert!(matches!(ChessState::from_fen("nonsense"), Err(FenError::MissingField { .. })));
    }
}
