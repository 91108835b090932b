//! Chess and Chess960 over shakmaty (magic-bitboard move generation).

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Position};

use super::{ActionError, GameKind, GameState, Outcome, OutcomeReason, Player};

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

    /// FEN with the en-passant square written only when a capture is legal (as Stockfish and Lichess do).
    pub fn fen(&self) -> String {
        Fen::from_position(&self.pos, EnPassantMode::Legal).to_string()
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
        self.fen()
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
}
