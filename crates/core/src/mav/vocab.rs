//! The fixed MAV vocabulary, in id order.
//!
//! | ids | tokens |
//! |---|---|
//! | 0–3 | specials `<pad>` (0), `<eos>` (1), `<unk>` (2), `<sep>` (3, the encoder-input separator) |
//! | 4–5 | the single space ` ` and the newline `\n` (every space is its own token) |
//! | 6– | structure: `[`, `]`, `<mav`, `</mav>`, `game=chess>`, `game=chess960>`, `game=connect_four>`, `game=hex>` |
//! | | commands: `%state`, `%FEN`, `%prev_state`, `%prev_FEN`, `%prev_action`, `%top_` (then the digits of k, or `all`), `all`, `%best_action` |
//! | | values and results: `invalid`, `:`, `"`, `"1-0"`, `"0-1"`, `"1/2-1/2"` |
//! | | digits `0`–`9`; pieces `PNBRQKpnbrqk`; `.`, `/`, `-`, `\|`, `\|\|`, `w`; files `a`–`h` (`b` is shared with the black bishop and the side to move); Shredder castling letters `A`–`H` |
//! | | internal-search trace words: `Minimax`, `breadth=`, `depth=`, `Evaluation`, `for`, `node`, `Expand`, `from`, `Decision`, `Selecting`, `Playing`, `!`, `<root`, `<root>`, `>` |
//! | | value tokens `<ctrl0>` … `<ctrl127>` (MAV uses 64 buckets, `<ctrl0>`–`<ctrl63>`; the rest let a 128-bucket searchless-format model share the vocabulary) |
//! | next 1968 | one token per chess UCI move, sorted by byte order: every from–to pair a queen or a knight can travel on an empty board, plus promotions to `q`, `r`, `b`, `n` from the seventh to the eighth rank (and second to first), straight or diagonal |
//! | 2181– | appended for Connect Four ([`CONNECT_FOUR`]): the stones `x` (first player) and `o` (second player); its moves `1`–`7` are the digits |
//! | 2183– | appended for Hex ([`HEX`]): the column letters `i`, `j`, `l`, `m` that chess lacks (`k` is the black king) and the swap move `swap`; stones reuse `x`/`o`, rows the digits |
//!
//! Chess960 castling is written king-square → rook-square (`e1h1`, `b8a8`): a move along the back rank,
//! which is already a queen move, so it needs no extra token. New games (Connect Four, Hex) append their
//! tokens at the end so existing ids never change.

/// The padding token (id 0).
pub const PAD: &str = "<pad>";
/// End of sequence (id 1).
pub const EOS: &str = "<eos>";
/// Unknown text (id 2).
pub const UNK: &str = "<unk>";
/// Separator between the state and the moves in the encoder input (id 3).
pub const SEP: &str = "<sep>";

/// The special tokens, in id order.
pub const SPECIALS: [&str; 4] = [PAD, EOS, UNK, SEP];

/// How many `<ctrlN>` value tokens the vocabulary has.
pub const VALUE_TOKENS: u32 = 128;

/// The size of the chess-only vocabulary (specials, fixed tokens, value tokens and chess moves), the size
/// of every package trained before Connect Four was added; its ids never change.
pub const CHESS_VOCAB_SIZE: usize = 2181;

/// Tokens appended for Connect Four, in id order after the chess moves: the first player's stone `x`
/// and the second player's stone `o` (the `%state` cells and the side to move; moves are digits).
pub const CONNECT_FOUR: [&str; 2] = ["x", "o"];

/// Tokens appended for Hex, in id order after Connect Four's: the column letters of boards up to 13×13
/// that the vocabulary lacked, and the swap move.
pub const HEX: [&str; 5] = ["i", "j", "l", "m", "swap"];

/// Characters that may follow a move token (or the end of the text); see [`crate::mav::tokenizer`].
pub const MOVE_FOLLOWERS: &[u8] = b":]>!< \n";

const FIXED: &[&str] = &[
    " ",
    "\n",
    "[",
    "]",
    "<mav",
    "</mav>",
    "game=chess>",
    "game=chess960>",
    "game=connect_four>",
    "game=hex>",
    "%state",
    "%FEN",
    "%prev_state",
    "%prev_FEN",
    "%prev_action",
    "%top_",
    "all",
    "%best_action",
    "invalid",
    ":",
    "\"",
    "\"1-0\"",
    "\"0-1\"",
    "\"1/2-1/2\"",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "P",
    "N",
    "B",
    "R",
    "Q",
    "K",
    "p",
    "n",
    "b",
    "r",
    "q",
    "k",
    ".",
    "/",
    "-",
    "|",
    "||",
    "w",
    "a",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "A",
    "C",
    "D",
    "E",
    "F",
    "G",
    "H",
    "Minimax",
    "breadth=",
    "depth=",
    "Evaluation",
    "for",
    "node",
    "Expand",
    "from",
    "Decision",
    "Selecting",
    "Playing",
    "!",
    "<root",
    "<root>",
    ">",
];

/// The value token of bucket `i`: `<ctrlI>`.
pub fn value_token(i: u32) -> String {
    format!("<ctrl{i}>")
}

/// Reads a value token `<ctrlN>` back into `N` (any `N`; callers check it against their bucket count).
pub fn parse_value_token(token: &str) -> Option<u32> {
    let digits = token.strip_prefix("<ctrl")?.strip_suffix('>')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

/// Every chess move token (UCI), sorted by byte order: 1968 of them.
pub fn chess_moves() -> Vec<String> {
    let name = |f: i32, r: i32| format!("{}{}", char::from(b"abcdefgh"[f as usize]), r + 1);
    let mut out = Vec::with_capacity(1968);
    for f1 in 0i32..8 {
        for r1 in 0i32..8 {
            for f2 in 0..8 {
                for r2 in 0..8 {
                    let (df, dr): (i32, i32) = ((f2 - f1).abs(), (r2 - r1).abs());
                    if df == 0 && dr == 0 {
                        continue;
                    }
                    let queen = df == 0 || dr == 0 || df == dr;
                    let knight = (df == 1 && dr == 2) || (df == 2 && dr == 1);
                    if queen || knight {
                        out.push(format!("{}{}", name(f1, r1), name(f2, r2)));
                    }
                    let promotion = df <= 1 && ((r1 == 6 && r2 == 7) || (r1 == 1 && r2 == 0));
                    if promotion {
                        for p in ['q', 'r', 'b', 'n'] {
                            out.push(format!("{}{}{p}", name(f1, r1), name(f2, r2)));
                        }
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// The whole vocabulary in id order.
pub fn vocabulary() -> Vec<String> {
    let mut v: Vec<String> = SPECIALS.iter().map(|s| (*s).to_owned()).collect();
    v.extend(FIXED.iter().map(|s| (*s).to_owned()));
    v.extend((0..VALUE_TOKENS).map(value_token));
    v.extend(chess_moves());
    // Games added later append here, so that every earlier id stays the same.
    v.extend(CONNECT_FOUR.iter().map(|s| (*s).to_owned()));
    v.extend(HEX.iter().map(|s| (*s).to_owned()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn there_are_exactly_1968_chess_moves() {
        let moves = chess_moves();
        assert_eq!(moves.len(), 1968);
        let promos = moves.iter().filter(|m| m.len() == 5).count();
        assert_eq!(promos, 176);
        // From e2: 7 along the rank, 7 along the file, 9 diagonal, 6 knight moves, and 3 × 4 promotions
        // (e2e1, e2d1, e2f1 for Black).
        assert_eq!(moves.iter().filter(|m| m.starts_with("e2")).count(), 41);
        assert!(moves.contains(&"g1f3".to_owned()) && moves.contains(&"b7a8n".to_owned()));
        assert!(!moves.contains(&"a1b4".to_owned()));
    }

    #[test]
    fn vocabulary_is_unique_and_starts_with_specials() {
        let v = vocabulary();
        assert_eq!(&v[..4], &["<pad>", "<eos>", "<unk>", "<sep>"]);
        assert_eq!(v.iter().collect::<HashSet<_>>().len(), v.len());
        assert_eq!(v.len(), 4 + FIXED.len() + 128 + 1968 + CONNECT_FOUR.len() + HEX.len());
    }

    #[test]
    fn chess_ids_are_pinned_and_new_games_are_appended() {
        let v = vocabulary();
        // Ids that shipped packages and their tokenizer.json files rely on.
        let id = |t: &str| v.iter().position(|x| x == t);
        assert_eq!(id(" "), Some(4));
        assert_eq!(id("game=connect_four>"), Some(12));
        assert_eq!(id("%state"), Some(14));
        assert_eq!(id("<ctrl0>"), Some(85));
        assert_eq!(id("<ctrl127>"), Some(212));
        assert_eq!(id("a1a2"), Some(213));
        assert_eq!(v[CHESS_VOCAB_SIZE - 1], "h8h7");
        assert_eq!(v[213..CHESS_VOCAB_SIZE], chess_moves()[..]);
        // Connect Four's tokens come right after the chess vocabulary.
        assert_eq!(id("x"), Some(CHESS_VOCAB_SIZE));
        assert_eq!(id("o"), Some(CHESS_VOCAB_SIZE + 1));
        // Hex's after them.
        assert_eq!(id("i"), Some(CHESS_VOCAB_SIZE + 2));
        assert_eq!(id("swap"), Some(CHESS_VOCAB_SIZE + 6));
        assert_eq!(v.len(), CHESS_VOCAB_SIZE + 7);
    }

    #[test]
    fn value_tokens_round_trip() {
        assert_eq!(parse_value_token("<ctrl28>"), Some(28));
        assert_eq!(parse_value_token(&value_token(127)), Some(127));
        for bad in ["<ctrl>", "<ctrl028>", "<ctrlx>", "ctrl1", "<ctrl1"] {
            assert_eq!(parse_value_token(bad), None, "{bad}");
        }
    }
}
