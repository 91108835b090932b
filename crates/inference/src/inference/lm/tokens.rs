//! The token ids a MAV-LM decoder needs to write and read its output lines, taken from the tokenizer and
//! the package's mav.json (never hard-coded), and checked once when the model opens.

use crate::mav::command::{Command, StateFormat, TopK};
use crate::mav::tokenizer::Tokenizer;

/// Why the vocabulary cannot drive decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokensError {
    /// A fragment the output format needs has no exact tokenization.
    #[error(
        "the vocabulary cannot write '{0}' (it becomes <unk>); the tokenizer.json does not match mavboard's"
    )]
    Unwritable(String),
    /// The value tokens of mav.json are not `<ctrl0>`.. in order.
    #[error("mav.json value_token_ids[{index}] = {id} is '{found}', expected '<ctrl{index}>'")]
    ValueToken {
        /// Index in the list.
        index: usize,
        /// The id.
        id: u32,
        /// The token it names.
        found: String,
    },
}

/// Ids of the output format's fixed pieces.
#[derive(Debug, Clone)]
pub struct FormatTokens {
    /// The tokenizer (for moves and free text).
    pub tokenizer: Tokenizer,
    /// `<ctrl0>`.. `<ctrl{K-1}>`, bucket order.
    pub values: Vec<u32>,
    /// ` `.
    pub space: u32,
    /// `:` between a move and its value.
    pub colon: u32,
    /// `]` ending a line.
    pub close: Vec<u32>,
    /// `\n` between lines.
    pub newline: Vec<u32>,
    /// `<eos>`.
    pub eos: u32,
}

impl FormatTokens {
    /// Builds and checks the ids.
    pub fn new(tokenizer: Tokenizer, value_ids: &[u32], eos: u32) -> Result<FormatTokens, TokensError> {
        for (index, &id) in value_ids.iter().enumerate() {
            let found = tokenizer.token_of(id).unwrap_or("<none>");
            if found != format!("<ctrl{index}>") {
                return Err(TokensError::ValueToken { index, id, found: found.to_owned() });
            }
        }
        let one = |t: &Tokenizer, s: &str| -> Result<u32, TokensError> {
            match t.encode(s).as_slice() {
                [id] if *id != t.unk_id() => Ok(*id),
                _ => Err(TokensError::Unwritable(s.to_owned())),
            }
        };
        let space = one(&tokenizer, " ")?;
        let colon = one(&tokenizer, ":")?;
        let mut me = FormatTokens {
            values: value_ids.to_vec(),
            space,
            colon,
            close: Vec::new(),
            newline: Vec::new(),
            eos,
            tokenizer,
        };
        me.close = me.text("]")?;
        me.newline = me.text("\n")?;
        Ok(me)
    }

    /// The ids of a fragment without moves (a command word, brackets, a state line).
    pub fn text(&self, s: &str) -> Result<Vec<u32>, TokensError> {
        let ids = self.tokenizer.encode(s);
        if ids.contains(&self.tokenizer.unk_id()) {
            return Err(TokensError::Unwritable(s.to_owned()));
        }
        Ok(ids)
    }

    /// The ids of `[%cmd` (a line's opening up to, not including, the space before its payload).
    pub fn opening(&self, command: Command) -> Result<Vec<u32>, TokensError> {
        self.text(&format!("[{command}"))
    }

    /// The opening of a `%top_k` line.
    pub fn top_opening(&self, k: TopK) -> Result<Vec<u32>, TokensError> {
        self.opening(Command::Top(k))
    }

    /// The opening of a state line in `format`.
    pub fn state_opening(&self, format: StateFormat) -> Result<Vec<u32>, TokensError> {
        self.opening(Command::State(format))
    }

    /// The id of a move token (UCI text), if the vocabulary has it.
    pub fn move_id(&self, text: &str) -> Option<u32> {
        self.tokenizer.id_of(text)
    }

    /// The tokens a move is written with (one for a chess or Connect Four move, several for a Hex cell),
    /// or `None` when the vocabulary cannot write it. A move always follows a space in MAV text, and only
    /// there does the tokenizer read a chess move as one token, so the move is tokenized in that place.
    pub fn move_tokens(&self, text: &str) -> Option<Vec<u32>> {
        let ids = self.tokenizer.encode(&format!(" {text}"));
        let ids = ids.strip_prefix(&[self.space])?;
        (!ids.is_empty() && !ids.contains(&self.tokenizer.unk_id())).then(|| ids.to_vec())
    }

    /// The bucket of a value token id.
    pub fn bucket_of(&self, id: u32) -> Option<u32> {
        self.values.iter().position(|&v| v == id).and_then(|b| u32::try_from(b).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_ids(t: &Tokenizer) -> Vec<u32> {
        (0..64).map(|i| t.id_of(&format!("<ctrl{i}>")).expect("ctrl token")).collect()
    }

    #[test]
    fn fixed_pieces_are_single_tokens() {
        let t = Tokenizer::new();
        let ids = value_ids(&t);
        let f = FormatTokens::new(t.clone(), &ids, t.eos_id()).expect("standard vocabulary");
        assert_eq!(f.space, t.space_id());
        assert_eq!(f.bucket_of(ids[17]), Some(17));
        assert_eq!(f.bucket_of(f.space), None);
        assert!(f.move_id("e2e4").is_some());
        // A chess move is one token where it is written (after a space), as the model reads it.
        for m in ["e2e4", "e7e8q", "e1h1"] {
            assert_eq!(f.move_tokens(m), f.move_id(m).map(|id| vec![id]), "{m}");
        }
        assert_eq!(f.move_tokens("4").map(|v| v.len()), Some(1), "a Connect Four column");
        assert_eq!(f.move_tokens("c10").map(|v| v.len()), Some(3), "a Hex cell: c 1 0");
        assert!(!f.top_opening(TopK::All).expect("writable").is_empty());
    }

    #[test]
    fn shuffled_value_ids_are_rejected() {
        let t = Tokenizer::new();
        let mut ids = value_ids(&t);
        ids.swap(0, 1);
        let e = FormatTokens::new(t.clone(), &ids, t.eos_id()).expect_err("wrong order");
        assert!(matches!(e, TokensError::ValueToken { index: 0, .. }), "{e}");
    }
}
