//! The input of mavboard's one-pass encoder model (the contract between Rust and the trainer).
//!
//! `ids` = the tokens of the `%state` string with every space token removed, then `<sep>`, then one token
//! per candidate move in the order given. `move_positions[i]` is the index in `ids` of move `i`'s token;
//! the model reads its value distribution for move `i` at that position. For standard chess the state
//! part is 79 tokens (side, `||`, 64 squares, `|`, 11 digits/letters, `||`; 80 when the halfmove clock is
//! written `100`), so the separator sits at index 79 and the moves start at 80.

use super::state::MavState;
use super::tokenizer::Tokenizer;

/// A state or move the vocabulary cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncoderInputError {
    /// The `%state` string contains text outside the vocabulary.
    #[error("the state string '{0}' contains characters outside the MAV vocabulary")]
    UnknownStateText(String),
    /// A move without a token.
    #[error("the move '{0}' has no token in the MAV vocabulary")]
    UnknownMove(String),
}

/// Token ids and where each move's token sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncoderInput {
    /// State tokens (no spaces), `<sep>`, move tokens.
    pub ids: Vec<u32>,
    /// For each move given, the index of its token in `ids`.
    pub move_positions: Vec<usize>,
}

/// Builds the encoder input for `state` and the candidate `moves` (see the module documentation).
pub fn encoder_input<S: MavState>(
    tokenizer: &Tokenizer,
    state: &S,
    moves: &[S::Action],
) -> Result<EncoderInput, EncoderInputError> {
    let text = state.mav_state();
    let mut ids: Vec<u32> =
        tokenizer.encode(&text).into_iter().filter(|&id| id != tokenizer.space_id()).collect();
    if ids.contains(&tokenizer.unk_id()) {
        return Err(EncoderInputError::UnknownStateText(text));
    }
    ids.push(tokenizer.sep_id());
    let mut move_positions = Vec::with_capacity(moves.len());
    for m in moves {
        let t = state.action_to_text(*m);
        let id = tokenizer.id_of(&t).ok_or(EncoderInputError::UnknownMove(t))?;
        move_positions.push(ids.len());
        ids.push(id);
    }
    Ok(EncoderInput { ids, move_positions })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;

    /// FNV-1a over the ids: pins a whole input in one number.
    fn fnv(ids: &[u32]) -> u64 {
        ids.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &id| (h ^ u64::from(id)).wrapping_mul(0x0100_0000_01b3))
    }

    /// The shipped chess models were trained on these exact inputs: they must never change.
    #[test]
    fn chess_ids_are_pinned() {
        let t = Tokenizer::new();
        let s = ChessState::from_fen_mode(
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            crate::game::fen::ModeChoice::Standard,
        )
        .expect("fen");
        let moves = s.legal_actions();
        let e = encoder_input(&t, &s, &moves).expect("encodes");
        assert_eq!((e.ids.len(), e.move_positions.len()), (80 + moves.len(), moves.len()));
        assert_eq!(e.move_positions, (80..80 + moves.len()).collect::<Vec<_>>());
        assert_eq!(fnv(&e.ids), PINNED, "ids: {:?}", e.ids);
    }

    const PINNED: u64 = 49_111_948_830_847_268;

    #[test]
    fn start_position_layout() {
        let t = Tokenizer::new();
        let s = ChessState::startpos();
        let moves = s.legal_actions();
        let e = encoder_input(&t, &s, &moves).expect("standard chess is in the vocabulary");
        assert_eq!(e.ids[79], t.sep_id());
        assert_eq!(e.ids.len(), 80 + moves.len());
        assert_eq!(e.move_positions, (80..80 + moves.len()).collect::<Vec<_>>());
        assert!(!e.ids.contains(&t.space_id()));
        assert_eq!(t.token_of(e.ids[0]), Some("w"));
        assert_eq!(t.token_of(e.ids[1]), Some("||"));
        assert_eq!(t.token_of(e.ids[2]), Some("R"));
        assert_eq!(t.token_of(e.ids[66]), Some("|"));
        assert_eq!(t.token_of(e.ids[78]), Some("||"));
        for (m, &p) in moves.iter().zip(&e.move_positions) {
            assert_eq!(t.token_of(e.ids[p]), Some(s.action_to_text(*m).as_str()));
        }
    }
}
