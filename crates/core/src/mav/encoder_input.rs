//! The input of mavboard's one-pass encoder model (the contract between Rust and the trainer).
//!
//! `ids` = the tokens of the `%state` string with every space token removed, then `<sep>`, then the
//! candidate moves in the order given. `move_positions[i]` is the index in `ids` of move `i`'s **last**
//! token; the model reads its value distribution for move `i` at that position.
//!
//! A move is one token in chess (every UCI move has its own) and in Connect Four (the column digit), so
//! there the moves follow each other with nothing between them. A Hex cell is several tokens (`c5` is
//! `c` `5`, `c10` is `c` `1` `0`; only `swap` is one), so when any candidate move takes more than one
//! token, every move after the first is preceded by the space token (which the state part never
//! contains): `c 5 ␣ c 1 0 ␣ swap`. Reading at the last token lets the position see its whole move
//! under a causal mask too, and the separator keeps adjacent cells apart. Single-token games are
//! unchanged by the rule, so chess inputs are byte-identical to those the shipped models were trained
//! on (pinned by a test).
//!
//! For standard chess the state part is 79 tokens (side, `||`, 64 squares, `|`, 11 digits/letters, `||`;
//! 80 when the halfmove clock is written `100`), so the separator sits at index 79 and the moves start at
//! 80.

use super::state::MavState;
use super::tokenizer::Tokenizer;

/// A state or move the vocabulary cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncoderInputError {
    /// The `%state` string contains text outside the vocabulary.
    #[error("the state string '{0}' contains characters outside the MAV vocabulary")]
    UnknownStateText(String),
    /// A move the vocabulary cannot write.
    #[error("the move '{0}' cannot be written with the MAV vocabulary")]
    UnknownMove(String),
}

/// Token ids and where each move's token sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncoderInput {
    /// State tokens (no spaces), `<sep>`, move tokens.
    pub ids: Vec<u32>,
    /// For each move given, the index of its last token in `ids`.
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
    let move_tokens = moves
        .iter()
        .map(|&m| move_ids(tokenizer, &state.action_to_text(m)))
        .collect::<Result<Vec<_>, _>>()?;
    let separate = move_tokens.iter().any(|t| t.len() > 1);
    let mut move_positions = Vec::with_capacity(moves.len());
    for (i, t) in move_tokens.iter().enumerate() {
        if separate && i > 0 {
            ids.push(tokenizer.space_id());
        }
        ids.extend_from_slice(t);
        move_positions.push(ids.len() - 1);
    }
    Ok(EncoderInput { ids, move_positions })
}

/// The tokens of one move: its own token when it has one, else its text's tokens (none of them a space
/// or `<unk>`).
fn move_ids(tokenizer: &Tokenizer, text: &str) -> Result<Vec<u32>, EncoderInputError> {
    if let Some(id) = tokenizer.id_of(text) {
        return Ok(vec![id]);
    }
    let ids = tokenizer.encode(text);
    if ids.is_empty() || ids.iter().any(|&id| id == tokenizer.unk_id() || id == tokenizer.space_id()) {
        return Err(EncoderInputError::UnknownMove(text.to_owned()));
    }
    Ok(ids)
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
    fn connect_four_moves_are_one_token_each() {
        let t = Tokenizer::new();
        let s = crate::game::connect_four::ConnectFourState::from_moves("4453").expect("moves");
        let moves = s.legal_actions();
        let e = encoder_input(&t, &s, &moves).expect("encodes");
        let sep = e.ids.iter().position(|&id| id == t.sep_id()).expect("separator");
        assert_eq!(sep, 2 + 42 + 1, "side, ||, 42 cells, ||");
        assert_eq!(e.move_positions, (sep + 1..sep + 1 + moves.len()).collect::<Vec<_>>());
        for (m, &p) in moves.iter().zip(&e.move_positions) {
            assert_eq!(t.token_of(e.ids[p]), Some(s.action_to_text(*m).as_str()));
        }
        assert!(!e.ids.contains(&t.unk_id()) && !e.ids.contains(&t.space_id()));
    }

    #[test]
    fn hex_moves_are_separated_and_read_at_their_last_token() {
        use crate::game::hex::HexState;
        let t = Tokenizer::new();
        let mut s = HexState::new(11).expect("11x11").with_swap(true);
        s = s.play(s.parse_action("c10").expect("c10")).expect("plays");
        let moves: Vec<_> =
            ["swap", "c5", "k11", "a1"].iter().map(|m| s.parse_action(m).expect("legal")).collect();
        let e = encoder_input(&t, &s, &moves).expect("encodes");
        let sep = e.ids.iter().position(|&id| id == t.sep_id()).expect("separator");
        assert_eq!(sep, 2 + 121 + 3, "side, ||, 121 cells, |, swap flag, ||");
        let tail: Vec<&str> = e.ids[sep + 1..].iter().map(|&id| t.token_of(id).expect("token")).collect();
        assert_eq!(tail, ["swap", " ", "c", "5", " ", "k", "1", "1", " ", "a", "1"]);
        let at: Vec<&str> = e.move_positions.iter().map(|&p| t.token_of(e.ids[p]).expect("token")).collect();
        assert_eq!(at, ["swap", "5", "1", "1"]);
        assert_eq!(e.move_positions, [sep + 1, sep + 4, sep + 8, sep + 11]);
        assert!(!e.ids.contains(&t.unk_id()));
        assert!(!e.ids[..sep].contains(&t.space_id()));
    }

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
