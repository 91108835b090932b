//! Movetext that is not PGN: the tokens the parser underneath passes over without a word.
//!
//! [`pgn_reader`] skips what it does not recognise in a game's movetext (`pawn goes to e4`, a stray `}`,
//! `$x`, a result cut short such as `1-`) without telling its visitor, so such a game would read as a
//! clean one; it also takes broken tag pairs (`["Somewhere"]`, `[Site]`, a value over a line break, an
//! unescaped `"`, a stray token before `]`), a tag after the moves and unbalanced variations without a
//! word. [`first_problem`] goes through a game's text the way the parser reads it (tags, `%` escape
//! lines, comments, move numbers, moves, NAGs, variations, results) and returns the first token that is
//! none of these, or the first [`Malformed`] piece of syntax; [`super::reader`] reports it as that
//! game's error, with its line and column ([`columns`]) and the token itself ([`token_text`]).
//! [`super::blank_lines`] keeps such a game in one piece, so that it is one game with one error.
//!
//! ```text
//! [Event "Invalid move 1"]
//!
//! 1. pawn goes to e4 *      <- `pawn`, line 3, column 4
//! ```

use std::ops::Range;

use shakmaty::san::SanPlus;

use super::cursor::{Cursor, is_token_end};
use super::tag_line::{is_name_byte, without_bracket};

/// PGN syntax that the parser underneath would read past without a word (or split a game at): what is
/// wrong and how to put it right. Each is one game's error, at its line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A tag pair with a value but no name: `["Somewhere"]`.
    #[error("a tag pair without a name; write its name before the value, as in `[Site \"...\"]`")]
    TagWithoutName,
    /// A tag name with characters a PGN symbol does not have: `[%~<|> "x"]`.
    #[error(
        "`{name}` is not a tag name (letters, digits and `_+#=:-` only); correct the name, as in \
         `[Site \"...\"]`"
    )]
    BadTagName {
        /// The name as written (cut short when long).
        name: String,
    },
    /// A tag pair with a name but no value: `[Site]`.
    #[error("the {name} tag has no value; write one in double quotes, as in `[{name} \"?\"]`")]
    TagWithoutValue {
        /// The tag's name.
        name: String,
    },
    /// A value that is not in double quotes: `[Site Somewhere]`.
    #[error("the value of the {name} tag is not in double quotes; write it as `[{name} \"...\"]`")]
    UnquotedTagValue {
        /// The tag's name.
        name: String,
    },
    /// A line break inside a tag's value: a tag pair is one line.
    #[error(
        "the value of the {name} tag runs over a line break; a tag pair must stay on one line: join the \
         lines"
    )]
    TagValueLineBreak {
        /// The tag's name.
        name: String,
    },
    /// A `"` inside a value that is not escaped, so that it ends the value early.
    #[error("the value of the {name} tag has a `\"` inside it; write it as `\\\"` inside a value")]
    UnescapedQuote {
        /// The tag's name.
        name: String,
    },
    /// Something between a tag's value and its `]`: `[Site "x" junk]`.
    #[error("`{token}` after the value of the {name} tag, before its `]`; remove it")]
    TagStrayToken {
        /// The tag's name.
        name: String,
        /// The stray text (cut short when long).
        token: String,
    },
    /// A tag line without its opening `[`: `Event "x"]`.
    #[error("the {name} tag line has no opening `[`; add it at the start of the line")]
    TagWithoutOpen {
        /// The tag's name.
        name: String,
    },
    /// A tag line without its closing `]`: `[Event "x"`.
    #[error("the {name} tag line has no closing `]`; add it after the value")]
    TagWithoutClose {
        /// The tag's name.
        name: String,
    },
    /// A tag pair after the game's moves began, with no termination marker before it (a new game
    /// begins with an `[Event ...]` tag, or after the previous game's result).
    #[error(
        "a tag ({name}) after the moves of its game; move it up to the game's tags, or, if a new game \
         begins here, end the game before it with its result (`*` if unknown)"
    )]
    TagAfterMovetext {
        /// The tag's name (empty when it has none).
        name: String,
    },
    /// A `}` outside any comment.
    #[error("a `}}` outside a comment; remove it, or open the comment with `{{`")]
    StrayCloseBrace,
    /// A `(` right after a `(`, with no move between: a variation must be an alternative to a move.
    #[error(
        "a variation opened right inside another one, before its first move (`((`); remove one `(` \
         and its `)`"
    )]
    NestedVariationStart,
    /// A `)` with no variation open.
    #[error("a `)` with no open variation; remove it, or add the `(` that begins its variation")]
    UnmatchedCloseParen,
    /// The game's result reached while variations are still open.
    #[error("the game ends with {open} variation(s) still open; close each with `)` before the result")]
    UnclosedVariation {
        /// How many variations are open.
        open: usize,
    },
}

/// What [`first_problem`] found: a token that is not PGN at all, or malformed syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProblemKind {
    /// A token that is neither a move, a move number, a NAG, a comment, a variation nor a result.
    Unrecognized,
    /// Syntax that is PGN's, but broken.
    Malformed(Malformed),
}

/// The first problem of a game's text: where it is (the offending token or character) and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Its byte range in the game's text.
    pub at: Range<usize>,
    /// What it is.
    pub kind: ProblemKind,
}

/// Why the scan stopped before the end of the text.
enum Stop {
    /// The parser stops reading the game there with an error of its own (an unterminated tag or
    /// comment).
    Parser,
    /// The game's first problem.
    Found(Problem),
}

fn malformed(at: Range<usize>, kind: Malformed) -> Stop {
    Stop::Found(Problem { at, kind: ProblemKind::Malformed(kind) })
}

/// The UTF-8 byte order mark, which the parser skips at the start of a file.
pub(crate) const BOM: &[u8] = b"\xef\xbb\xbf";

/// Where the scan is in one game's text.
struct Scan<'a> {
    cur: Cursor<'a>,
    /// The open variations, innermost last: whether each has a move yet.
    vars: Vec<bool>,
}

impl<'a> std::ops::Deref for Scan<'a> {
    type Target = Cursor<'a>;

    fn deref(&self) -> &Cursor<'a> {
        &self.cur
    }
}

impl std::ops::DerefMut for Scan<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cur
    }
}

impl Scan<'_> {
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

    /// Blanks on the line (spaces, tabs, carriage returns).
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.bump();
        }
    }

    /// Where the line that goes on at `from` ends (its `\n`, or the end of the text).
    fn line_end(&self, from: usize) -> usize {
        let from = from.min(self.text.len());
        self.text[from..].iter().position(|&b| b == b'\n').map_or(self.text.len(), |p| from + p)
    }

    /// Whether only blanks (and a byte order mark) stand before the scan on its line.
    fn at_line_start(&self) -> bool {
        let before = &self.text[..self.at];
        let line = before.iter().rposition(|&b| b == b'\n').map_or(before, |p| &before[p + 1..]);
        line.strip_prefix(BOM).unwrap_or(line).iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
    }

    /// The tag section: tag pairs (several may share a line) and the whitespace between them, up to the
    /// first movetext token. A line that is a tag pair without its `[` is an error here.
    fn tags(&mut self) -> Result<(), Stop> {
        loop {
            match self.peek() {
                Some(b'[') => self.tag()?,
                Some(_) if self.at_line_start() => {
                    let line = &self.text[self.at..self.line_end(self.at)];
                    if let Some(len) = without_bracket(line) {
                        let name = token_text(&line[..len]);
                        return Err(malformed(self.at..self.at + len, Malformed::TagWithoutOpen { name }));
                    }
                    return Ok(());
                }
                _ => return Ok(()),
            }
        }
    }

    /// One tag pair from its `[`, strictly: `[`, a name, blanks, a value in double quotes (`\` escapes
    /// the next character) on one line, `]`; then the whitespace after it.
    fn tag(&mut self) -> Result<(), Stop> {
        let open = self.at;
        self.bump();
        self.skip_blanks();
        let name_start = self.at;
        while self.peek().is_some_and(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b']')) {
            self.bump();
        }
        let name_at = name_start..self.at;
        let name_bytes = &self.text[name_at.clone()];
        let name = token_text(name_bytes);
        if name_bytes.is_empty() {
            return Err(malformed(open..open + 1, Malformed::TagWithoutName));
        }
        if !name_bytes.iter().all(|&c| is_name_byte(c)) {
            return Err(malformed(name_at, Malformed::BadTagName { name }));
        }
        self.skip_blanks();
        match self.peek() {
            Some(b'"') => {}
            None | Some(b']' | b'\n') => {
                return Err(malformed(name_at, Malformed::TagWithoutValue { name }));
            }
            Some(_) => return Err(malformed(name_at, Malformed::UnquotedTagValue { name })),
        }
        let mut at = self.at + 1;
        let close = loop {
            match self.text.get(at) {
                // The parser's own error: an unterminated tag.
                None => return Err(Stop::Parser),
                Some(b'\\') if self.text.get(at + 1) != Some(&b'\n') => at += 2,
                Some(b'"') => break at,
                Some(b'\n' | b'\\') => {
                    let end = if at > 0 && self.text[at - 1] == b'\r' { at - 1 } else { at };
                    return Err(malformed(end..at + 1, Malformed::TagValueLineBreak { name }));
                }
                Some(_) => at += 1,
            }
        };
        self.at = close + 1;
        self.skip_blanks();
        match self.peek() {
            Some(b']') => {
                self.bump();
                self.skip_whitespace(false);
                Ok(())
            }
            None | Some(b'\n') => Err(malformed(self.at..self.at, Malformed::TagWithoutClose { name })),
            Some(_) => {
                let line = &self.text[self.at..self.line_end(self.at)];
                let len = line.iter().rposition(|&b| b == b']').unwrap_or(line.len());
                let stray = line[..len].trim_ascii_end();
                if stray.contains(&b'"') {
                    Err(malformed(close..close + 1, Malformed::UnescapedQuote { name }))
                } else {
                    let token = token_text(stray);
                    Err(malformed(self.at..self.at + stray.len(), Malformed::TagStrayToken { name, token }))
                }
            }
        }
    }

    /// A result token just read (from `start`): an error while variations are open, unless the variation
    /// closes right after it (an annotator's `(… 20. Qh8# 1-0)`, which the reader skips).
    fn result(&self, start: usize) -> Result<bool, Stop> {
        match self.vars.len() {
            0 => Ok(true),
            open => {
                let rest = &self.text[self.at.min(self.text.len())..];
                if rest.trim_ascii_start().starts_with(b")") {
                    Ok(true)
                } else {
                    Err(malformed(start..self.at, Malformed::UnclosedVariation { open }))
                }
            }
        }
    }

    /// A move just read: its variation has a move.
    fn moved(&mut self) {
        if let Some(top) = self.vars.last_mut() {
            *top = true;
        }
    }

    /// Reads the movetext token at the scan's place; `Ok(false)` when it is not PGN.
    fn token(&mut self) -> Result<bool, Stop> {
        let start = self.at;
        let Some(first) = self.peek() else { return Ok(true) };
        self.bump();
        let known = match first {
            b'{' => {
                if !self.skip_until_after(b'}') {
                    return Err(Stop::Parser);
                }
                true
            }
            b'}' => return Err(malformed(start..self.at, Malformed::StrayCloseBrace)),
            b'\n' => {
                if self.peek() == Some(b'%') {
                    self.skip_until(b'\n');
                }
                true
            }
            b'[' => self.bracket(start)?,
            b';' => {
                self.skip_until(b'\n');
                true
            }
            b'0' => self.after_zero(start)?,
            b'1' => self.after_one(start)?,
            // `½-½`
            0xc2 => self.eat(b"\xbd") && self.eat_dash() && self.eat("½".as_bytes()) && self.result(start)?,
            b'2'..=b'9' => {
                self.skip_digits_and_dots();
                true
            }
            b'*' => self.result(start)?,
            b'(' => {
                if self.vars.last() == Some(&false) {
                    return Err(malformed(start..self.at, Malformed::NestedVariationStart));
                }
                self.vars.push(false);
                true
            }
            b')' => {
                if self.vars.pop().is_none() {
                    return Err(malformed(start..self.at, Malformed::UnmatchedCloseParen));
                }
                true
            }
            b' ' | b'\t' | b'\r' | b'.' => true,
            b'!' | b'?' => {
                if matches!(self.peek(), Some(b'!' | b'?')) {
                    self.bump();
                }
                true
            }
            b'$' => self.nag(),
            // SAN writes no letter for a pawn (`e4`, not `Pe4`, which the parser would take); `P@e4` is a
            // drop, an error of its own.
            b'P' if self.peek() != Some(b'@') => false,
            _ => {
                self.at -= 1;
                self.san()
            }
        };
        Ok(known)
    }

    /// A `[` read (from `start`) in the movetext: a tag line there (kept in this game by `blank_lines`) is
    /// an error; a `[` within a line (an annotation such as `[%clk 0:01:00]` outside its comment) is a
    /// token that is not PGN (`Ok(false)`).
    fn bracket(&mut self, start: usize) -> Result<bool, Stop> {
        if !self.text[..start].trim_ascii_end().is_empty()
            && self.text[..start].iter().rev().find(|b| **b != b' ' && **b != b'\t') != Some(&b'\n')
        {
            return Ok(false);
        }
        self.skip_blanks();
        let from = self.at;
        while self.peek().is_some_and(is_name_byte) {
            self.bump();
        }
        let name = token_text(&self.text[from..self.at]);
        Err(malformed(start..self.at, Malformed::TagAfterMovetext { name }))
    }

    /// After a `0` (read from `start`): `0-1`, or castling written with zeros (`0-0`, `0-0-0`, with `+`
    /// or `#`).
    fn after_zero(&mut self, start: usize) -> Result<bool, Stop> {
        if !self.eat_dash() {
            return Ok(false);
        }
        if self.eat(b"1") {
            return self.result(start);
        }
        let castles = self.eat(b"0");
        if castles && self.eat_dash() {
            self.eat(b"0");
        }
        if castles && matches!(self.peek(), Some(b'+' | b'#')) {
            self.bump();
        }
        if castles {
            self.moved();
        }
        Ok(castles)
    }

    /// After a `1` (read from `start`): `1-0`, `1/2-1/2` or a move number.
    fn after_one(&mut self, start: usize) -> Result<bool, Stop> {
        if self.eat_dash() {
            Ok(self.eat(b"0") && self.result(start)?)
        } else if self.peek() == Some(b'/') {
            Ok(self.eat(b"/2") && self.eat_dash() && self.eat(b"1/2") && self.result(start)?)
        } else {
            self.skip_digits_and_dots();
            Ok(true)
        }
    }

    /// After a `$`: whether a number that fits a NAG follows (read to the token's end either way).
    fn nag(&mut self) -> bool {
        let end = self.token_end(self.at);
        let digits = &self.text[self.at..end];
        self.at = end;
        !digits.is_empty()
            && digits.iter().all(u8::is_ascii_digit)
            && std::str::from_utf8(digits).is_ok_and(|d| d.parse::<u8>().is_ok())
    }

    /// A move at the scan's place, when the parser's SAN reading takes the whole token.
    fn san(&mut self) -> bool {
        match SanPlus::from_ascii_prefix(self.rest()) {
            Ok((_, len)) if len > 0 => {
                self.at += len;
                let whole = self.peek().is_none_or(is_token_end);
                if whole {
                    self.moved();
                }
                whole
            }
            Ok(_) | Err(_) => false,
        }
    }

    /// The tag section, then the movetext token by token, to the first problem.
    fn scan(&mut self) -> Result<(), Stop> {
        self.tags()?;
        while self.at < self.text.len() {
            let start = self.at;
            if !self.token()? {
                let at = start..self.token_end(start + 1);
                return Err(Stop::Found(Problem { at, kind: ProblemKind::Unrecognized }));
            }
        }
        Ok(())
    }
}

/// The first problem of `text` (one game's text, from its first tag or movetext token): a token that is
/// neither a move, a move number, a NAG, a comment, a variation, a result nor an escape line, or a piece
/// of [`Malformed`] syntax (a broken tag pair, a tag after the moves, a stray `}`, unbalanced
/// variations); `None` when there is none (or when the parser stops on an error of its own before one).
///
/// A token runs from its first byte to the next byte that ends a token (blank, bracket, `{`, `}`, `$`,
/// `!`, `?`, `;`, `.` or `*`), and is at least one byte long: `Nf3x`, `pawn`, `$x`. A pawn move written
/// with a `P` (`Pe4`) is not PGN either, though the parser reads it as a move.
pub(crate) fn first_problem(text: &[u8]) -> Option<Problem> {
    let mut s = Scan { cur: Cursor::new(text), vars: Vec::new() };
    s.eat(BOM);
    s.skip_whitespace(true);
    match s.scan() {
        Err(Stop::Found(problem)) => Some(problem),
        Ok(()) | Err(Stop::Parser) => None,
    }
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
        first_problem(text.as_bytes()).map(|p| &text[p.at])
    }

    fn kind(text: &str) -> Option<ProblemKind> {
        first_problem(text.as_bytes()).map(|p| p.kind)
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
            "[Event \"x\"] [Site \"y\"]\n[Round \"a \\\"b\\\" \\\\\"]  \n\n1. e4 (1. d4 (1. c4) d5) (1. f4) *",
            "( {a variation before any move} 1. d4 ) 1. e4 (1. d4 d5 (1... Nf6 2. c4) 2. c4) *",
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
        ];
        for (text, token) in cases {
            assert_eq!(first(text), Some(token), "{text}");
            assert_eq!(kind(text), Some(ProblemKind::Unrecognized), "{text}");
        }
    }

    #[test]
    fn malformed_syntax_is_named_where_it_stands() {
        let name = || "Site".to_owned();
        let cases = [
            ("[Event \"x\"]\n[\"Somewhere\"]\n\n*", "[", Malformed::TagWithoutName),
            ("[%~<|> \"Somewhere\"]\n\n*", "%~<|>", Malformed::BadTagName { name: "%~<|>".into() }),
            ("[Site]\n\n*", "Site", Malformed::TagWithoutValue { name: name() }),
            ("[Site Somewhere]\n\n*", "Site", Malformed::UnquotedTagValue { name: name() }),
            ("[Site \"Some\r\nwhere\"]\n\n*", "\r\n", Malformed::TagValueLineBreak { name: name() }),
            ("[Site \"A \"quoted\" word\"]\n\n*", "\"", Malformed::UnescapedQuote { name: name() }),
            (
                "[Site \"Somewhere\" %~<|>]\n\n*",
                "%~<|>",
                Malformed::TagStrayToken { name: name(), token: "%~<|>".into() },
            ),
            ("Site \"x\"]\n\n*", "Site", Malformed::TagWithoutOpen { name: name() }),
            ("[Event \"e\"]\n Site \"x\"]\n\n*", "Site", Malformed::TagWithoutOpen { name: name() }),
            ("[Site \"x\"\n\n*", "", Malformed::TagWithoutClose { name: name() }),
            ("1. e4 e5\n\n[Site \"x\"]\n\n2. Nf3 *", "[Site", Malformed::TagAfterMovetext { name: name() }),
            ("1. e4 } e5 *", "}", Malformed::StrayCloseBrace),
            ("1. e4 e5 ((1... c5)) *", "(", Malformed::NestedVariationStart),
            ("1. e4 ( {c} 1. d4 ( 1. c4 ) ) e5 ) *", ")", Malformed::UnmatchedCloseParen),
            ("1. e4 e5 (1... c5 (1... d5 1-0", "1-0", Malformed::UnclosedVariation { open: 2 }),
            ("1. e4 e5 (1... c5 *", "*", Malformed::UnclosedVariation { open: 1 }),
        ];
        for (text, at, problem) in cases {
            assert_eq!(first(text), Some(at), "{text}");
            assert_eq!(kind(text), Some(ProblemKind::Malformed(problem)), "{text}");
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
