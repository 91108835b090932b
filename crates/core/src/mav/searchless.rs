//! The state tokenization of the searchless action-value format (Ruoss et al. 2024, §2.2 and A.1).
//!
//! A FEN becomes a fixed-length string of [`STATE_LEN`] = 77 characters, one token each: the side to move
//! (1), the 64 squares from rank 8 to rank 1 as FEN lists them with every empty square written `.` (64),
//! castling rights padded with `.` to 4 (`-` becomes `....`), the en-passant square or `..` (2), the
//! halfmove clock padded with `.` to 3, and the fullmove number padded with `.` to 3. The board is never
//! flipped. Chess960 castling rights are written as Shredder-FEN file letters (`HAha`), which the alphabet
//! includes. The first 31 characters of [`ALPHABET`] are the authors' alphabet in their order, so a
//! standard FEN gets exactly their token ids.
//!
//! An action is a move's index in a list of all 1968 chess moves, in one of two orders
//! ([`ActionOrder`]): mavboard's own packages sort the UCI texts by bytes; the authors' published models
//! number them as their code generates them ([`searchless_moves`]).

/// Length of the state token sequence.
pub const STATE_LEN: usize = 77;

/// The alphabet: a character's token id is its index here.
pub const ALPHABET: &[u8] = b"0123456789abcdefghpnrkqPBNRQKw.-ACDEFGH";

/// Why a FEN cannot be tokenized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchlessError {
    /// The FEN does not have its six fields or a field is too long for the fixed layout.
    #[error("FEN '{fen}' cannot be tokenized for the action-value format: {reason}")]
    Fen {
        /// The FEN.
        fen: String,
        /// What is wrong.
        reason: String,
    },
}

fn token(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|&a| a == c).and_then(|i| u32::try_from(i).ok())
}

fn padded(out: &mut Vec<u32>, field: &str, len: usize, fen: &str, name: &str) -> Result<(), SearchlessError> {
    let bytes = if field == "-" { &b""[..] } else { field.as_bytes() };
    if bytes.len() > len {
        return Err(SearchlessError::Fen {
            fen: fen.to_owned(),
            reason: format!("the {name} field '{field}' is longer than {len} characters"),
        });
    }
    for &c in bytes {
        out.push(token(c).ok_or_else(|| SearchlessError::Fen {
            fen: fen.to_owned(),
            reason: format!("unexpected character '{}' in the {name} field", c as char),
        })?);
    }
    let dot = token(b'.').unwrap_or(0);
    out.extend(std::iter::repeat_n(dot, len - bytes.len()));
    Ok(())
}

/// The 77 state tokens of a FEN (six fields: board, side, castling, en passant, halfmove, fullmove).
pub fn tokenize_fen(fen: &str) -> Result<Vec<u32>, SearchlessError> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let [board, side, castling, ep, half, full] = fields[..] else {
        return Err(SearchlessError::Fen {
            fen: fen.to_owned(),
            reason: format!("{} fields, need 6", fields.len()),
        });
    };
    let err = |reason: String| SearchlessError::Fen { fen: fen.to_owned(), reason };
    let mut out = Vec::with_capacity(STATE_LEN);
    padded(&mut out, side, 1, fen, "side to move")?;
    let dot = token(b'.').unwrap_or(0);
    let mut squares = 0usize;
    for c in board.bytes() {
        match c {
            b'/' => {}
            b'1'..=b'8' => {
                let n = usize::from(c - b'0');
                squares += n;
                out.extend(std::iter::repeat_n(dot, n));
            }
            _ => {
                squares += 1;
                out.push(
                    token(c)
                        .ok_or_else(|| err(format!("unexpected character '{}' in the board", c as char)))?,
                );
            }
        }
    }
    if squares != 64 {
        return Err(err(format!("the board has {squares} squares, not 64")));
    }
    padded(&mut out, castling, 4, fen, "castling")?;
    padded(&mut out, ep, 2, fen, "en passant")?;
    padded(&mut out, half, 3, fen, "halfmove clock")?;
    padded(&mut out, full, 3, fen, "fullmove number")?;
    debug_assert_eq!(out.len(), STATE_LEN);
    Ok(out)
}

/// How a package numbers the 1968 chess moves (mav.json `av_action_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ActionOrder {
    /// mavboard's packages: the UCI texts sorted by bytes.
    #[default]
    #[serde(rename = "sorted")]
    Sorted,
    /// The published searchless models (Ruoss et al.): see [`searchless_moves`].
    #[serde(rename = "searchless")]
    Searchless,
}

impl ActionOrder {
    /// The 1968 moves' UCI texts, the action id being the index.
    pub fn moves(self) -> Vec<String> {
        match self {
            ActionOrder::Sorted => super::vocab::chess_moves(),
            ActionOrder::Searchless => searchless_moves(),
        }
    }

    /// The action id of every chess move in this order.
    pub fn index(self) -> std::collections::HashMap<String, u32> {
        self.moves().into_iter().zip(0u32..).collect()
    }
}

/// The action index of every chess move: its position in the byte-sorted list of 1968 moves (the order of
/// mavboard's own packages, [`ActionOrder::Sorted`]).
pub fn action_index() -> std::collections::HashMap<String, u32> {
    ActionOrder::Sorted.index()
}

fn square_name(sq: i32) -> String {
    format!("{}{}", char::from(b"abcdefgh"[(sq % 8) as usize]), sq / 8 + 1)
}

/// The 1968 moves in the order of the published searchless models: for each from-square a1, b1, …, h8
/// (a1 = 0, rank by rank), first the squares a queen attacks from it on an empty board, then those a
/// knight attacks, each list in square order; then the promotions, for the second-to-first rank and then
/// the seventh-to-eighth, file by file: straight, then capturing towards the a-file, then towards the
/// h-file, each to `q`, `r`, `b`, `n`.
pub fn searchless_moves() -> Vec<String> {
    let mut out = Vec::with_capacity(1968);
    for from in 0i32..64 {
        let (f1, r1) = (from % 8, from / 8);
        let queen = (0..64).filter(|&to| {
            let (df, dr) = ((to % 8 - f1).abs(), (to / 8 - r1).abs());
            to != from && (df == 0 || dr == 0 || df == dr)
        });
        let knight = (0..64).filter(|&to| {
            let (df, dr) = ((to % 8 - f1).abs(), (to / 8 - r1).abs());
            (df == 1 && dr == 2) || (df == 2 && dr == 1)
        });
        let from_name = square_name(from);
        out.extend(queen.chain(knight).map(|to| format!("{from_name}{}", square_name(to))));
    }
    for (rank, next) in [('2', '1'), ('7', '8')] {
        for file in 0u8..8 {
            let f = char::from(b'a' + file);
            let mut targets = vec![f];
            if file > 0 {
                targets.push(char::from(b'a' + file - 1));
            }
            if file < 7 {
                targets.push(char::from(b'a' + file + 1));
            }
            for t in targets {
                for piece in ['q', 'r', 'b', 'n'] {
                    out.push(format!("{f}{rank}{t}{next}{piece}"));
                }
            }
        }
    }
    out
}

/// Number of distinct state tokens (the embedding table size).
pub fn state_vocab_size() -> usize {
    ALPHABET.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detok(ids: &[u32]) -> String {
        ids.iter().map(|&i| ALPHABET[i as usize] as char).collect()
    }

    #[test]
    fn start_position_layout() {
        let ids = tokenize_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").expect("valid");
        assert_eq!(ids.len(), STATE_LEN);
        let s = detok(&ids);
        assert_eq!(&s[..1], "b");
        assert_eq!(&s[1..9], "rnbqkbnr");
        assert_eq!(&s[33..41], "....P...");
        assert_eq!(&s[65..], "KQkqe30..1..");
    }

    #[test]
    fn pads_dashes_and_shredder_castling() {
        let s = detok(&tokenize_fen("4k3/8/8/8/8/8/8/4K3 w - - 12 105").expect("valid"));
        assert_eq!(&s[65..], "......12.105");
        let s = detok(
            &tokenize_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
                .expect("valid"),
        );
        assert_eq!(&s[65..69], "HFhf");
    }

    #[test]
    fn both_action_orders_number_the_same_moves() {
        let theirs = searchless_moves();
        assert_eq!(theirs.len(), 1968);
        assert_eq!(&theirs[..3], ["a1b1", "a1c1", "a1d1"]);
        // a1's queen moves (21), then its knight moves.
        assert_eq!(&theirs[21..23], ["a1c2", "a1b3"]);
        assert_eq!(theirs.last().map(String::as_str), Some("h7g8n"));
        let mut sorted = theirs.clone();
        sorted.sort();
        assert_eq!(sorted, ActionOrder::Sorted.moves());
        assert_eq!(ActionOrder::Searchless.index().len(), 1968);
    }

    #[test]
    fn rejects_bad_fens() {
        assert!(tokenize_fen("8/8/8 w - - 0 1").expect_err("short board").to_string().contains("squares"));
        assert!(tokenize_fen("rnbqkbnr w").is_err());
        assert!(
            tokenize_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 10000")
                .expect_err("long")
                .to_string()
                .contains("fullmove")
        );
        assert!(
            tokenize_fen("4k3/8/8/8/8/8/8/4X3 w - - 0 1").expect_err("bad piece").to_string().contains("'X'")
        );
    }
}
