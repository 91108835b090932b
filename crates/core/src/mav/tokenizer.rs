//! The MAV tokenizer: text ↔ ids over the fixed vocabulary (the table is in [`super::vocab`]), and its Hugging Face export.
//!
//! # Rule
//!
//! At each position the tokenizer takes the first token of this list that matches there; text no token
//! matches (up to the next match) becomes one `<unk>`:
//!
//! 1. a move token (longest first: promotions before plain moves), but only right after a space and
//!    right before one of `: ] > ! <`, space, newline, or the end of the text;
//! 2. any other token, longest first.
//!
//! The context rule keeps board text such as the FEN rank `1b1b4` (two black bishops) or a first rank
//! `b2b4/…` from being read as the moves `b1b4`/`b2b4`: in MAV text a move always follows a space and
//! ends a word. Rendered MAV text therefore round-trips exactly: `decode(encode(text)) == text`.
//!
//! # Hugging Face export
//!
//! [`Tokenizer::to_hf_json`] writes a `tokenizer.json` whose `Split` pre-tokenizer (behaviour `Isolated`)
//! uses the regex `(?<= )(?:MOVES)(?![^:\]>!< \n])|OTHERS` with both lists longest first (exactly the rule
//! above, as Oniguruma's leftmost-first alternation), a `WordLevel` model with `<unk>` as unknown token,
//! and a `Fuse` decoder. `Tokenizer.from_file("tokenizer.json").encode(text).ids` equals [`Tokenizer::encode`]
//! and `decode(ids, skip_special_tokens=False)` equals [`Tokenizer::decode`]. The specials are also
//! registered as special added tokens.

use std::collections::HashMap;

use super::vocab::{self, MOVE_FOLLOWERS};

/// An id that is not in the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenizerError {
    /// The id is past the end of the vocabulary.
    #[error("token id {id} is not in the vocabulary (size {size})")]
    UnknownId {
        /// The id.
        id: u32,
        /// The vocabulary size.
        size: usize,
    },
}

/// The MAV tokenizer (see the module documentation).
#[derive(Debug, Clone)]
pub struct Tokenizer {
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
    moves: HashMap<Vec<u8>, u32>,
    others: HashMap<Vec<u8>, u32>,
    /// For each first byte, the lengths of the move tokens starting with it, longest first.
    move_lens: Vec<Vec<usize>>,
    /// For each first byte, the lengths of the other tokens starting with it, longest first.
    other_lens: Vec<Vec<usize>>,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

impl Tokenizer {
    /// The tokenizer over the standard MAV vocabulary.
    pub fn new() -> Tokenizer {
        Tokenizer::from_tokens(vocab::vocabulary())
    }

    /// The tokenizer over the first `size` tokens of the vocabulary, for a model package trained before
    /// later games appended their tokens (ids only ever get appended, so such a package's ids are a
    /// prefix). Text of the newer games then reads as `<unk>`. `None` if `size` is 0 or larger than the
    /// vocabulary.
    pub fn with_size(size: usize) -> Option<Tokenizer> {
        let mut tokens = vocab::vocabulary();
        if size == 0 || size > tokens.len() {
            return None;
        }
        tokens.truncate(size);
        Some(Tokenizer::from_tokens(tokens))
    }

    fn from_tokens(tokens: Vec<String>) -> Tokenizer {
        let move_set: std::collections::HashSet<String> = vocab::chess_moves().into_iter().collect();
        let mut ids = HashMap::with_capacity(tokens.len());
        let mut moves = HashMap::new();
        let mut others = HashMap::new();
        for (i, t) in tokens.iter().enumerate() {
            // The vocabulary has a few thousand entries, far below u32::MAX.
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            ids.insert(t.clone(), id);
            if move_set.contains(t) {
                moves.insert(t.as_bytes().to_vec(), id);
            } else {
                others.insert(t.as_bytes().to_vec(), id);
            }
        }
        let lens = |m: &HashMap<Vec<u8>, u32>| {
            let mut by_byte = vec![Vec::new(); 256];
            for k in m.keys() {
                if let Some(&first) = k.first() {
                    by_byte[usize::from(first)].push(k.len());
                }
            }
            for l in &mut by_byte {
                l.sort_unstable_by(|a: &usize, b| b.cmp(a));
                l.dedup();
            }
            by_byte
        };
        let (move_lens, other_lens) = (lens(&moves), lens(&others));
        Tokenizer { tokens, ids, moves, others, move_lens, other_lens }
    }

    /// The tokenizer over exactly the tokens of a parsed tokenizer.json, when its vocabulary is mavboard's
    /// or a prefix of it (a package trained before later games appended their tokens); otherwise `Err`
    /// with the number of tokens it has.
    pub fn matching(theirs: &serde_json::Value) -> Result<Tokenizer, usize> {
        let vocab = |v: &serde_json::Value| v.pointer("/model/vocab").cloned();
        let size = vocab(theirs).and_then(|m| m.as_object().map(|o| o.len())).unwrap_or(0);
        let tokenizer = Tokenizer::with_size(size).ok_or(size)?;
        let ours: serde_json::Value = serde_json::from_str(&tokenizer.to_hf_json()).map_err(|_| size)?;
        if vocab(theirs) != vocab(&ours) {
            return Err(size);
        }
        Ok(tokenizer)
    }

    /// The number of tokens.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The id of a token, if it is one.
    pub fn id_of(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The token of an id, if it exists.
    pub fn token_of(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// The id of `<pad>` (0).
    pub fn pad_id(&self) -> u32 {
        0
    }

    /// The id of `<eos>` (1).
    pub fn eos_id(&self) -> u32 {
        1
    }

    /// The id of `<unk>` (2).
    pub fn unk_id(&self) -> u32 {
        2
    }

    /// The id of `<sep>` (3).
    pub fn sep_id(&self) -> u32 {
        3
    }

    /// The id of the space token (4).
    pub fn space_id(&self) -> u32 {
        4
    }

    /// All tokens in id order.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    fn match_at(&self, b: &[u8], pos: usize) -> Option<(u32, usize)> {
        let first = usize::from(b[pos]);
        if pos > 0 && b[pos - 1] == b' ' {
            for &l in &self.move_lens[first] {
                let end = pos + l;
                if end <= b.len()
                    && (end == b.len() || MOVE_FOLLOWERS.contains(&b[end]))
                    && let Some(&id) = self.moves.get(&b[pos..end])
                {
                    return Some((id, l));
                }
            }
        }
        for &l in &self.other_lens[first] {
            let end = pos + l;
            if end <= b.len()
                && let Some(&id) = self.others.get(&b[pos..end])
            {
                return Some((id, l));
            }
        }
        None
    }

    /// Text → ids (see the module documentation for the rule).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let b = text.as_bytes();
        let mut out = Vec::with_capacity(b.len() / 2 + 1);
        let mut pos = 0;
        let mut in_gap = false;
        while pos < b.len() {
            match self.match_at(b, pos) {
                Some((id, l)) => {
                    if in_gap {
                        out.push(self.unk_id());
                        in_gap = false;
                    }
                    out.push(id);
                    pos += l;
                }
                None => {
                    in_gap = true;
                    pos += 1;
                }
            }
        }
        if in_gap {
            out.push(self.unk_id());
        }
        out
    }

    /// The tokens of `text` as strings (for display and debugging).
    pub fn encode_to_tokens(&self, text: &str) -> Vec<&str> {
        self.encode(text).into_iter().filter_map(|id| self.token_of(id)).collect()
    }

    /// Ids → text: the tokens concatenated (specials included, as their names).
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let mut s = String::with_capacity(ids.len() * 2);
        for &id in ids {
            let t = self.token_of(id).ok_or(TokenizerError::UnknownId { id, size: self.tokens.len() })?;
            s.push_str(t);
        }
        Ok(s)
    }

    /// The Oniguruma regex of the Hugging Face `Split` pre-tokenizer.
    pub fn hf_pattern(&self) -> String {
        let sorted = |m: &HashMap<Vec<u8>, u32>| {
            let mut v: Vec<&str> = m.values().filter_map(|&id| self.token_of(id)).collect();
            v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            v.into_iter().map(escape).collect::<Vec<_>>().join("|")
        };
        let followers: String = MOVE_FOLLOWERS.iter().map(|&c| escape_class(c)).collect();
        format!("(?<= )(?:{})(?![^{followers}])|{}", sorted(&self.moves), sorted(&self.others))
    }

    /// The Hugging Face `tokenizer.json` (see the module documentation).
    pub fn to_hf_json(&self) -> String {
        let vocab: serde_json::Map<String, serde_json::Value> =
            self.tokens.iter().zip(0u32..).map(|(t, i)| (t.clone(), serde_json::Value::from(i))).collect();
        let added: Vec<serde_json::Value> = vocab::SPECIALS
            .iter()
            .zip(0u32..)
            .map(|(t, id)| {
                serde_json::json!({
                    "id": id, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": true
                })
            })
            .collect();
        let json = serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": {
                "type": "Split",
                "pattern": { "Regex": self.hf_pattern() },
                "behavior": "Isolated",
                "invert": false
            },
            "post_processor": null,
            "decoder": { "type": "Fuse" },
            "model": { "type": "WordLevel", "vocab": vocab, "unk_token": vocab::UNK }
        });
        // Serialising a `Value` built in memory cannot fail.
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }
}

fn escape(token: &str) -> String {
    let mut s = String::with_capacity(token.len() * 2);
    for c in token.chars() {
        match c {
            '\n' => s.push_str("\\n"),
            '\\' | '.' | '^' | '$' | '|' | '?' | '*' | '+' | '(' | ')' | '[' | ']' | '{' | '}' => {
                s.push('\\');
                s.push(c);
            }
            _ => s.push(c),
        }
    }
    s
}

fn escape_class(c: u8) -> String {
    match c {
        b'\n' => "\\n".to_owned(),
        b']' | b'\\' | b'^' | b'-' | b'[' => format!("\\{}", char::from(c)),
        _ => char::from(c).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_specials_and_space() {
        let t = Tokenizer::new();
        assert_eq!(t.id_of("<pad>"), Some(0));
        assert_eq!(t.id_of("<eos>"), Some(1));
        assert_eq!(t.id_of("<unk>"), Some(2));
        assert_eq!(t.id_of("<sep>"), Some(3));
        assert_eq!(t.id_of(" "), Some(t.space_id()));
        assert_eq!(t.token_of(t.vocab_size() as u32), None);
    }

    #[test]
    fn moves_need_their_context() {
        let t = Tokenizer::new();
        assert_eq!(t.encode_to_tokens("[%best_action b1b4]"), ["[", "%best_action", " ", "b1b4", "]"]);
        assert_eq!(t.encode_to_tokens(" a7a8q:<ctrl3>"), [" ", "a7a8q", ":", "<ctrl3>"]);
        assert_eq!(t.encode_to_tokens("[%FEN 1b1b4/"), ["[", "%FEN", " ", "1", "b", "1", "b", "4", "/"]);
        assert_eq!(t.encode_to_tokens(" b2b4/"), [" ", "b", "2", "b", "4", "/"]);
        assert_eq!(t.encode_to_tokens("Playing e2e4!"), ["Playing", " ", "e2e4", "!"]);
        assert_eq!(t.encode_to_tokens("<root e2e4 e7e5>"), ["<root", " ", "e2e4", " ", "e7e5", ">"]);
    }

    #[test]
    fn unknown_text_becomes_one_unk_per_gap() {
        let t = Tokenizer::new();
        let ids = t.encode("[%state yz]é");
        assert_eq!(t.decode(&ids).expect("ids in range"), "[%state <unk>]<unk>");
        assert!(t.decode(&[99_999]).is_err());
    }

    #[test]
    fn a_prefix_tokenizer_reads_chess_alike_and_newer_tokens_as_unknown() {
        let full = Tokenizer::new();
        let chess = Tokenizer::with_size(vocab::CHESS_VOCAB_SIZE).expect("in range");
        assert_eq!(chess.vocab_size(), vocab::CHESS_VOCAB_SIZE);
        let text = "[%state b || R . . |00000000013||]\n[%top_2 e2e4:<ctrl3> h8h7:<ctrl63>]";
        assert_eq!(chess.encode(text), full.encode(text));
        assert_eq!(full.encode_to_tokens("x o ."), ["x", " ", "o", " ", "."]);
        assert_eq!(chess.encode("x o"), [chess.unk_id(), chess.space_id(), chess.unk_id()]);
        assert!(Tokenizer::with_size(0).is_none());
        assert!(Tokenizer::with_size(full.vocab_size() + 1).is_none());
        assert_eq!(Tokenizer::with_size(full.vocab_size()).map(|t| t.to_hf_json()), Some(full.to_hf_json()));
    }

    #[test]
    fn hf_json_is_valid_json_with_the_vocabulary() {
        let t = Tokenizer::new();
        let v: serde_json::Value = serde_json::from_str(&t.to_hf_json()).expect("valid JSON");
        assert_eq!(v["model"]["vocab"].as_object().map(|m| m.len()), Some(t.vocab_size()));
        assert_eq!(v["model"]["vocab"]["e2e4"], serde_json::json!(t.id_of("e2e4")));
        assert!(t.hf_pattern().starts_with("(?<= )(?:a2a1b|a2a1n|"));
    }
}
