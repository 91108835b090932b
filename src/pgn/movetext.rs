//! Movetext that is not PGN: the tokens the parser underneath passes over without a word.
//!
//! [`pgn_reader`] skips what it does not recognise in a game's movetext (`pawn goes to e4`, a stray `}`,
//! `$x`, a result cut short such as `1-`) without telling its visitor, so such a game would read as a
//! clean one. [`first_unrecognized`] goes through a game's text the way the parser reads it (tags, `%`
//! escape lines, comments, move numbers, moves, NAGs, variations, results) and returns the first token
//! that is none of these; [`super::reader`] reports it as that game's error, with its line and column
//! ([`columns`]) and the token itself ([`token_text`]).
//!
//! ```text
//! [Event "Invalid move 1"]
//!
//! 1. pawn goes to e4 *      <- `pawn`, line 3, column 4
//! ```

use std::ops::Range;

use shakmaty::san::SanPlus;

/// The UTF-8 byte order mark, which the parser skips at the start of a file.
pub(crate) const BOM: &[u8] = b"\xef\xbb\xbf";

/// Whether the parser takes `b` as the end of a movetext token (pgn-reader's list).
pub(crate) fn is_token_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'(' | b')' | b'!' | b'?' | b'$' | b';' | b'.' | b'*'
    )
}

/// Where the scan is in one game's text.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn rest(&self) -> &[u8] {
        self.text.get(self.at..).unwrap_or_default()
    }

    fn bump(&mut self) {
        self.at = (self.at + 1).min(self.text.len());
    }

    fn eat(&mut self, bytes: &[u8]) -> bool {
        let found = self.rest().starts_with(bytes);
        if found {
            self.at += bytes.len();
        }
        found
    }

    /// A hyphen, an en dash or an em dash (the parser takes all three in results and castling).
    fn eat_dash(&mut self) -> bool {
        self.eat(b"-") || self.eat("–".as_bytes()) || self.eat("—".as_bytes())
    }

    /// To the next `byte` (or the end of the text).
    fn skip_until(&mut self, byte: u8) {
        self.at = self.rest().iter().position(|&b| b == byte).map_or(self.text.len(), |p| self.at + p);
    }

    /// Past the next `byte`; false (at the end of the text) when there is none.
    fn skip_until_after(&mut self, byte: u8) -> bool {
        self.skip_until(byte);
        let found = self.peek() == Some(byte);
        self.bump();
        found
    }

    /// Where the token that goes on at `from` ends (the next token end, or the end of the text).
    fn token_end(&self, from: usize) -> usize {
        let from = from.min(self.text.len());
        self.text[from..].iter().position(|&b| is_token_end(b)).map_or(self.text.len(), |p| from + p)
    }

    fn skip_digits_and_dots(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
        }
        while matches!(self.peek(), Some(b'.' | b' ')) {
            self.bump();
        }
    }

    /// Whitespace and `%` escape lines (a `%` at the start of a line), as between games and tags.
    fn skip_whitespace(&mut self, mut new_line: bool) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.bump(),
                b'\n' => {
                    new_line = true;
                    self.bump();
                }
                b'%' if new_line => {
                    self.bump();
                    self.skip_until_after(b'\n');
                }
                _ => return,
            }
        }
    }

    /// After a tag's value: blanks, then the closing `]` (or the line end) and the whitespace after it.
    fn skip_ket(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.bump(),
                b']' => {
                    self.bump();
                    return self.skip_whitespace(false);
                }
                b'\n' => {
                    self.bump();
                    return self.skip_whitespace(true);
                }
                _ => return,
            }
        }
    }

    /// The tag section as the parser reads it: each `[` starts a tag whose value runs between quotes (a
    /// backslash escapes the next byte); a tag without a quote before its line end or `]` is passed over.
    /// The movetext starts at the first byte after a tag that is not `[`. `None` for an unterminated tag
    /// (the parser's own error).
    fn skip_tags(&mut self) -> Option<()> {
        while self.peek() == Some(b'[') {
            self.bump();
            let rest = self.rest();
            let stop = rest.iter().position(|&b| matches!(b, b'"' | b'\n' | b']'))?;
            if rest[stop] != b'"' {
                self.at += stop + 1;
                self.skip_ket();
                continue;
            }
            let mut at = self.at + stop + 1;
            loop {
                let delta = self.text[at..].iter().position(|&b| matches!(b, b'\\' | b'"' | b'\n'))?;
                match self.text[at + delta] {
                    b'"' => {
                        self.at = at + delta + 1;
                        break;
                    }
                    b'\n' => {
                        self.at = at + delta;
                        break;
                    }
                    _ => at = (at + delta + 2).min(self.text.len()),
                }
            }
            self.skip_ket();
        }
        Some(())
    }

    /// Reads the movetext token at the scan's place; false when it is not PGN. `None` where the parser
    /// stops reading the game (the next game's tags, an unterminated comment).
    fn token(&mut self) -> Option<bool> {
        let Some(first) = self.peek() else { return Some(true) };
        self.bump();
        let known = match first {
            b'{' => {
                if !self.skip_until_after(b'}') {
                    return None;
                }
                true
            }
            b'\n' => {
                match self.peek() {
                    Some(b'%') => self.skip_until(b'\n'),
                    Some(b'[') => return None,
                    _ => {}
                }
                true
            }
            b';' => {
                self.skip_until(b'\n');
                true
            }
            // `0-1`, or castling written with zeros (`0-0`, `0-0-0`, with `+` or `#`).
            b'0' => {
                self.eat_dash()
                    && (self.eat(b"1") || {
                        let castles = self.eat(b"0");
                        if castles && self.eat_dash() {
                            self.eat(b"0");
                        }
                        if castles && matches!(self.peek(), Some(b'+' | b'#')) {
                            self.bump();
                        }
                        castles
                    })
            }
            // `1-0`, `1/2-1/2` or a move number.
            b'1' => {
                if self.eat_dash() {
                    self.eat(b"0")
                } else if self.peek() == Some(b'/') {
                    self.eat(b"/2") && self.eat_dash() && self.eat(b"1/2")
                } else {
                    self.skip_digits_and_dots();
                    true
                }
            }
            // `½-½`
            0xc2 => self.eat(b"\xbd") && self.eat_dash() && self.eat("½".as_bytes()),
            b'2'..=b'9' => {
                self.skip_digits_and_dots();
                true
            }
            b'(' | b')' | b'*' | b' ' | b'\t' | b'\r' | b'.' => true,
            b'!' | b'?' => {
                if matches!(self.peek(), Some(b'!' | b'?')) {
                    self.bump();
                }
                true
            }
            // `$` and a number that fits a NAG.
            b'$' => {
                let end = self.token_end(self.at);
                let digits = &self.text[self.at..end];
                self.at = end;
                !digits.is_empty()
                    && digits.iter().all(u8::is_ascii_digit)
                    && std::str::from_utf8(digits).is_ok_and(|d| d.parse::<u8>().is_ok())
            }
            // A move, when the parser's SAN reading takes the whole token. SAN writes no letter for a pawn
            // (`e4`, not `Pe4`, which the parser would take); `P@e4` is a drop, an error of its own.
            b'P' if self.peek() != Some(b'@') => false,
            _ => {
                self.at -= 1;
                match SanPlus::from_ascii_prefix(self.rest()) {
                    Ok((_, len)) if len > 0 => {
                        self.at += len;
                        self.peek().is_none_or(is_token_end)
                    }
                    Ok(_) | Err(_) => false,
                }
            }
        };
        Some(known)
    }
}

/// The byte range of the first token of `text` (one game's text, from its first tag or movetext token)
/// that is neither a move, a move number, a NAG, a comment, a variation, a result nor an escape line;
/// `None` when there is none (or when the parser stops on an error of its own before one).
///
/// A token runs from its first byte to the next byte that ends a token (blank, bracket, `{`, `}`, `$`,
/// `!`, `?`, `;`, `.` or `*`), and is at least one byte long: `Nf3x`, `pawn`, `}`, `$x`. A pawn move
/// written with a `P` (`Pe4`) is not PGN either, though the parser reads it as a move.
pub(crate) fn first_unrecognized(text: &[u8]) -> Option<Range<usize>> {
    let mut s = Scan { text, at: 0 };
    s.eat(BOM);
    s.skip_whitespace(true);
    s.skip_tags()?;
    while s.at < text.len() {
        let start = s.at;
        if !s.token()? {
            return Some(start..s.token_end(start + 1));
        }
    }
    None
}

/// How many characters `bytes` hold (UTF-8; a byte that is not UTF-8 counts as one), so that a column
/// counts characters as an editor does; saturated at `u32::MAX - 1` (a column is one more).
pub(crate) fn columns(bytes: &[u8]) -> u32 {
    let count = match std::str::from_utf8(bytes) {
        Ok(text) => text.chars().count(),
        Err(_) => String::from_utf8_lossy(bytes).chars().count(),
    };
    u32::try_from(count).unwrap_or(u32::MAX).min(u32::MAX - 1)
}

/// The most characters of a token an error message quotes.
const TOKEN_CHARS: usize = 40;

/// The token as an error message quotes it: decoded (lossily) and cut after [`TOKEN_CHARS`] characters.
pub(crate) fn token_text(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    let mut chars = text.chars();
    let mut quoted: String = chars.by_ref().take(TOKEN_CHARS).collect();
    if chars.next().is_some() {
        quoted.push('…');
    }
    quoted
}

/// The start of the token that ends at `end` of `text` (the parser has just read it): back over the bytes
/// that do not end a token.
pub(crate) fn token_start(text: &[u8], end: usize) -> usize {
    let end = end.min(text.len());
    text[..end].iter().rposition(|&b| is_token_end(b)).map_or(0, |p| p + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Option<&str> {
        first_unrecognized(text.as_bytes()).map(|r| &text[r])
    }

    #[test]
    fn plain_pgn_has_no_unrecognized_token() {
        let clean = [
            "[Event \"x\"]\n[Site \"1-0\"]\n\n1. e4 e5 2. Nf3 {a comment} (2. f4 exf4 $1) 2... Nc6 !? 3. Bb5 a6?! *",
            "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 a6 1/2-1/2",
            "1. e4 e5 2. O-O 0-0 3. 0-0-0+ O-O-O# -- Z0 4. g1f3 N@f3 exd8=Q+ 1-0",
            "\u{feff}[Event \"bom\"]\n\n1. d4 ; a rest-of-line comment\n%escape line\n1... d5 ½-½",
            "1. e4\n\n{A comment in its own paragraph.}\n\n1... e5 0-1",
            "[Site \"Somewhere\"]\r\n\r\n1. e4 e5 $255 1–0",
            "1. e4 {unterminated",
            "[Event \"x\"]\n\n1. e4 e5\n[Event \"y\"]\n\nwhatever *",
        ];
        for text in clean {
            assert_eq!(first(text), None, "{text}");
        }
    }

    #[test]
    fn tokens_that_are_not_pgn_are_found_with_their_extent() {
        let cases = [
            ("[Event \"Invalid move 1\"]\n\n1. pawn goes to e4 *", "pawn"),
            ("1. e4 {A comment with an unescaped close-brace } character} *", "character"),
            ("1. e4 e5 2.\nNf3 Nf6\nwhatever *", "whatever"),
            ("1. e4 } e5 *", "}"),
            ("1. e4 $x e5 *", "$x"),
            ("1. e4 $256 *", "$256"),
            ("1. e4 $ e5 *", "$"),
            ("1. e4 e5 1-", "1-"),
            ("1. e4 e5 1/2", "1/2"),
            ("1. e4 e5 0", "0"),
            ("1. e4 e5 0-x", "0-x"),
            ("1. e4x5 *", "e4x5"),
            ("1. Pe4 *", "Pe4"),
            ("1. e4 {1-0} Pe5 1-0", "Pe5"),
            ("1. e4 … e5 *", "…"),
            ("1. e4 (1. d4 foo) *", "foo"),
            ("1. e4 ¼ *", "¼"),
            ("[Site \"Somewhere\" %~<|>]\n\n*", "%~<|>]"),
            ("Event \"Missing begin header character\"]\n\n*", "Event"),
        ];
        for (text, token) in cases {
            assert_eq!(first(text), Some(token), "{text}");
        }
    }

    #[test]
    fn columns_count_characters_and_tokens_are_quoted_short() {
        assert_eq!(columns("1. é ".as_bytes()), 5);
        assert_eq!(columns(b"a\xffb"), 3);
        assert_eq!(token_text(b"pawn"), "pawn");
        let long = "x".repeat(100);
        let quoted = token_text(long.as_bytes());
        assert_eq!(quoted.chars().count(), TOKEN_CHARS + 1);
        assert!(quoted.ends_with('…'));
        assert_eq!(token_start(b"1. e4 e4", 8), 6);
        assert_eq!(token_start(b"Ke3", 3), 0);
    }
}
