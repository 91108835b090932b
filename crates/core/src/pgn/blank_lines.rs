//! Blank lines inside a game's movetext, and where one game ends and the next begins.
//!
//! The PGN standard ends a game at its termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`), not at a blank
//! line, and annotated files from books and databases put long comments in paragraphs of their own. The
//! parser underneath ([`pgn_reader`]) takes an empty line in the movetext as the end of the game, so
//! [`JoinParagraphs`] sits between the source and the parser and turns the second newline of every blank
//! line inside a game's movetext (outside comments) into a space. It changes no byte count, so offsets
//! and line numbers computed from the raw bytes stay right, and the raw bytes (which [`super::reader`]
//! records before this filter) are what a game keeps as its source.
//!
//! Blank lines between the tags and the movetext, inside comments, and between games are left alone; a
//! game with no termination marker still ends where the next game's `[Event ...]` tag begins.
//!
//! It also keeps a game with broken syntax in one piece, so that it is one game with one error (which
//! [`super::movetext`] names from the raw bytes) rather than two games: the parser would end the tag
//! section at a stray token before a tag's `]` or at the rest of a value broken over two lines, and the
//! game at a tag line after its moves. The filter blanks what stands between a tag's value and its `]`,
//! joins a value's line break, blanks a tag line inside unterminated movetext (other than `[Event`), and
//! gives a tag line that lost its `[` one back (blanking the rest of it).

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};

use super::tag_line::{is_event_tag, without_bracket};

/// How far ahead a blank line looks for the next game's tags before it is joined anyway.
const MAX_LOOKAHEAD: usize = 1 << 16;

/// Where in a tag pair the filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagPart {
    /// After the `[`, before the value's opening quote.
    Name,
    /// Inside the quoted value.
    Value,
    /// After a backslash inside the value.
    Escape,
    /// After the value's closing quote, before the `]`.
    AfterValue,
    /// After the `]`, on the same line.
    AfterKet,
}

/// Where in the PGN text the filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between games, between tag lines, or before a game's first movetext token.
    Outside,
    /// A `%` escape line outside a game (to the end of the line).
    OutsideEscape,
    /// In a tag line.
    Tag(TagPart),
    /// In a line handed on as blanks (to its end), then back in the movetext or outside.
    Blanked {
        /// Back in the movetext (else outside) at the line's end.
        movetext: bool,
    },
    /// In a game's movetext, outside comments.
    Movetext,
    /// In a `{…}` comment of the movetext.
    Brace,
    /// In a `;` comment or a `%` escape line of the movetext (to the end of the line).
    RestOfLine,
}

/// What the filter needs to know of the text ahead before it hands on a byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Query {
    /// A blank line inside the movetext: whether the next non-blank text starts the next game — an
    /// `[Event ...]` tag line or a header of two or more tag lines (the blank line stays).
    BlankThenEvent,
    /// A `[` at a line start inside the movetext: whether its line starts the next game (as above).
    LineIsEvent,
    /// A line start outside the movetext: whether the line is a tag pair without its `[`.
    LineWithoutBracket,
    /// A line break inside a tag's value: whether the value goes on on the next line (which does not
    /// start with `[` and is not empty).
    ValueGoesOn,
}

/// A [`Read`] adapter that joins the paragraphs of a game's movetext (see the module documentation).
#[derive(Debug)]
pub struct JoinParagraphs<R> {
    inner: R,
    /// Bytes read from `inner` and not yet handed on (the look-ahead of a blank line).
    pending: VecDeque<u8>,
    /// `inner` is exhausted.
    eof: bool,
    state: State,
    /// The last byte seen, `\r` skipped (`\n` at the start: a line start).
    last: u8,
    /// The current movetext token, to recognise termination markers (at most 7 bytes are needed).
    token: Vec<u8>,
}

/// A byte of a UTF-8 byte-order mark.
fn is_bom_byte(c: u8) -> bool {
    matches!(c, 0xEF | 0xBB | 0xBF)
}

impl<R> JoinParagraphs<R> {
    /// Wraps a source.
    pub fn new(inner: R) -> JoinParagraphs<R> {
        JoinParagraphs {
            inner,
            pending: VecDeque::new(),
            eof: false,
            state: State::Outside,
            last: b'\n',
            token: Vec::new(),
        }
    }

    fn end_token(&mut self) {
        if matches!(self.token.as_slice(), b"*" | b"1-0" | b"0-1" | b"1/2-1/2") {
            self.state = State::Outside;
        }
        self.token.clear();
    }

    /// What the filter must know of the text ahead before it hands on `c`, if anything.
    fn query(&self, c: u8) -> Option<Query> {
        let line_start = self.last == b'\n';
        match self.state {
            State::Movetext if c == b'\n' && line_start => Some(Query::BlankThenEvent),
            State::Movetext if c == b'[' && line_start => Some(Query::LineIsEvent),
            State::Outside
                if line_start && !c.is_ascii_whitespace() && !is_bom_byte(c) && !matches!(c, b'[' | b'%') =>
            {
                Some(Query::LineWithoutBracket)
            }
            State::Tag(TagPart::Value) if c == b'\n' => Some(Query::ValueGoesOn),
            _ => None,
        }
    }

    /// Filters one byte in place; `ahead` is the answer to its [`Query`] (false when it has none).
    fn byte(&mut self, b: &mut u8, ahead: bool) {
        let c = *b;
        match self.state {
            State::Outside => {
                if is_bom_byte(c) {
                    // A UTF-8 byte-order mark: transparent.
                    return;
                }
                if self.last == b'\n' && c == b'[' {
                    self.state = State::Tag(TagPart::Name);
                } else if self.last == b'\n' && c == b'%' {
                    self.state = State::OutsideEscape;
                } else if ahead {
                    // A tag line without its `[`: one for the parser, the rest blank.
                    *b = b'[';
                    self.state = State::Blanked { movetext: false };
                } else if !c.is_ascii_whitespace() {
                    // The first movetext token (a comment, a move number, a move, a result).
                    self.state = State::Movetext;
                    self.token.clear();
                    return self.byte(b, false);
                }
            }
            State::Tag(part) => self.tag_byte(b, part, ahead),
            State::Blanked { movetext } => {
                if c == b'\n' {
                    self.state = if movetext { State::Movetext } else { State::Outside };
                } else {
                    *b = b' ';
                }
            }
            State::Movetext => match c {
                b'\n' if self.last == b'\n' && !ahead => {
                    // A blank line inside the movetext: keep the game together. The line still counts as
                    // a line start, so a following blank line is joined too.
                    *b = b' ';
                    self.end_token();
                    return;
                }
                b'{' => {
                    self.end_token();
                    self.state = State::Brace;
                }
                b';' => {
                    self.end_token();
                    self.state = State::RestOfLine;
                }
                b'%' if self.last == b'\n' => self.state = State::RestOfLine,
                b'[' if self.last == b'\n' => {
                    self.token.clear();
                    if ahead {
                        // The next game's header: a game without a termination marker ends here.
                        self.state = State::Tag(TagPart::Name);
                    } else {
                        // A lone tag line after the moves belongs to this game (as its error).
                        *b = b' ';
                        self.state = State::Blanked { movetext: true };
                    }
                }
                b'(' | b')' => self.end_token(),
                c if c.is_ascii_whitespace() => self.end_token(),
                c => {
                    if self.token.len() < 8 {
                        self.token.push(c);
                    }
                }
            },
            State::OutsideEscape => {
                if c == b'\n' {
                    self.state = State::Outside;
                }
            }
            State::Brace => {
                if c == b'}' {
                    self.state = State::Movetext;
                }
            }
            State::RestOfLine => {
                if c == b'\n' {
                    self.state = State::Movetext;
                }
            }
        }
        if c != b'\r' {
            self.last = c;
        }
    }

    /// One byte of a tag line, read as the parser reads it (name, quoted value with backslash escapes,
    /// `]`), except that a stray token before the `]` is blanked and a line break inside the value is
    /// joined when the value goes on (`ahead`) on the next line.
    fn tag_byte(&mut self, b: &mut u8, part: TagPart, ahead: bool) {
        let c = *b;
        let blank = matches!(c, b' ' | b'\t' | b'\r');
        let next = match (part, c) {
            (TagPart::Value, b'\n') if ahead => {
                *b = b' ';
                State::Tag(TagPart::Value)
            }
            (TagPart::Escape, _) => State::Tag(TagPart::Value),
            (_, b'\n') => State::Outside,
            (TagPart::Name, b'"') => State::Tag(TagPart::Value),
            (TagPart::Name | TagPart::AfterValue, b']') => State::Tag(TagPart::AfterKet),
            (TagPart::Value, b'\\') => State::Tag(TagPart::Escape),
            (TagPart::Value, b'"') => State::Tag(TagPart::AfterValue),
            (TagPart::AfterValue, _) if !blank => {
                *b = b' ';
                State::Tag(TagPart::AfterValue)
            }
            (TagPart::AfterKet, b'[') => State::Tag(TagPart::Name),
            (TagPart::AfterKet, _) if !blank => {
                // Movetext on the tag's line.
                self.state = State::Movetext;
                self.token.clear();
                return self.byte(b, false);
            }
            (part, _) => State::Tag(part),
        };
        self.state = next;
        if c != b'\r' {
            self.last = c;
        }
    }
}

impl<R: Read> JoinParagraphs<R> {
    /// Reads more of `inner` into `pending`; false at its end.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let mut chunk = [0u8; 8192];
        let n = loop {
            match self.inner.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.eof = n == 0;
        self.pending.extend(&chunk[..n]);
        Ok(n > 0)
    }

    /// The line of `pending` from index `from` (to its newline, which is left out; at most
    /// [`MAX_LOOKAHEAD`] bytes), or `None` when more must be read to know it.
    fn line_from(&self, from: usize) -> Option<Vec<u8>> {
        let line: Vec<u8> = self
            .pending
            .iter()
            .skip(from)
            .take(MAX_LOOKAHEAD)
            .take_while(|&&b| b != b'\n')
            .copied()
            .collect();
        let known = from + line.len() < self.pending.len() || self.eof || line.len() >= MAX_LOOKAHEAD;
        known.then_some(line)
    }

    /// Whether the tag line at `from` (after moves with no result) starts the next game: an `[Event …]`
    /// line, or the first of two or more tag lines — a header, where one tag line alone is a tag misplaced in
    /// this game (None: more must be read to know).
    fn starts_game(&self, from: usize) -> Option<bool> {
        let line = self.line_from(from)?;
        if is_event_tag(&line) {
            return Some(true);
        }
        let next = from + line.len() + 1;
        if next >= self.pending.len() {
            return if self.eof || line.len() >= MAX_LOOKAHEAD { Some(false) } else { None };
        }
        let following = self.line_from(next)?;
        Some(following.trim_ascii_start().starts_with(b"["))
    }

    /// The answer to `query` about the text at the front of `pending` (None: not known yet, more must be
    /// read).
    fn answer(&self, query: Query) -> Option<bool> {
        match query {
            Query::BlankThenEvent => {
                let next =
                    self.pending.iter().skip(1).take(MAX_LOOKAHEAD).position(|b| !b.is_ascii_whitespace());
                match next {
                    Some(i) if self.pending.get(i + 1) == Some(&b'[') => self.starts_game(i + 1),
                    Some(_) => Some(false),
                    None if self.eof || self.pending.len() > MAX_LOOKAHEAD => Some(false),
                    None => None,
                }
            }
            Query::LineIsEvent => self.starts_game(0),
            Query::LineWithoutBracket => self.line_from(0).map(|line| without_bracket(&line).is_some()),
            Query::ValueGoesOn => match self.pending.get(1) {
                Some(&b) => Some(!matches!(b, b'[' | b'\n' | b'\r')),
                None if self.eof => Some(false),
                None => None,
            },
        }
    }
}

impl<R: Read> Read for JoinParagraphs<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let Some(&c) = self.pending.front() else {
                if n > 0 || !self.fill()? {
                    break;
                }
                continue;
            };
            let ahead = match self.query(c).map(|q| self.answer(q)) {
                None => false,
                Some(Some(answer)) => answer,
                Some(None) if n > 0 => break,
                Some(None) => {
                    self.fill()?;
                    continue;
                }
            };
            let mut b = c;
            self.byte(&mut b, ahead);
            self.pending.pop_front();
            buf[n] = b;
            n += 1;
        }
        Ok(n)
    }
}

impl<R: Seek> Seek for JoinParagraphs<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match pos {
            SeekFrom::Current(0) => self.stream_position(),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "the PGN source only reports its position")),
        }
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        // What the parser has been given: what was read from `inner`, less the look-ahead.
        Ok(self.inner.stream_position()?.saturating_sub(self.pending.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(text: &str) -> String {
        let mut out = Vec::new();
        // Byte by byte, as a reader with a tiny buffer would see it: state carries across reads.
        let mut r = JoinParagraphs::new(text.as_bytes());
        let mut one = [0u8; 1];
        while r.read(&mut one).expect("reads") == 1 {
            out.push(one[0]);
        }
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn joins_paragraphs_inside_movetext_only() {
        let pgn = "[Event \"t\"]\n\n1. e4 e5 2. Nf3\n\n{A comment\n\nin paragraphs.}\n\n2... Nc6 3. Bb5 *\n\n\
                   [Event \"u\"]\n[Result \"1-0\"]\n\n1. d4 ; note\n\n(1. c4)\n\n1-0\n\n";
        let out = filtered(pgn);
        assert_eq!(out.len(), pgn.len(), "no byte count changes");
        assert_eq!(
            out,
            "[Event \"t\"]\n\n1. e4 e5 2. Nf3\n {A comment\n\nin paragraphs.}\n 2... Nc6 3. Bb5 *\n\n\
             [Event \"u\"]\n[Result \"1-0\"]\n\n1. d4 ; note\n (1. c4)\n 1-0\n\n"
        );
    }

    #[test]
    fn crlf_and_markers_glued_to_brackets() {
        let out = filtered("1. e4 (1. d4)\r\n\r\n1... e5 1/2-1/2\r\n\r\n1. c4 *");
        assert_eq!(out, "1. e4 (1. d4)\r\n\r 1... e5 1/2-1/2\r\n\r\n1. c4 *");
        // A game without a marker still ends at the next tags.
        let out = filtered("1. e4 e5\n[Event \"b\"]\n\n1. d4\n\n*");
        assert_eq!(out, "1. e4 e5\n[Event \"b\"]\n\n1. d4\n *");
        // A game without a marker, a blank line, then the next game's tags: the blank line stays.
        let text = "1. e4 e4\n\n\n[Event \"c\"]\n\n1. d4 *\n";
        assert_eq!(filtered(text), text);
        // A game without a marker, then a tag that is not `[Event`: the tag line is blanked (it is this
        // game's error) and the blank lines around it are joined.
        let out = filtered("1. e4 e5\n\n[Site \"x\"]\n\n2. Nf3 *\n");
        assert_eq!(out, "1. e4 e5\n           \n 2. Nf3 *\n");
        // Escape lines and a byte-order mark before the tags change nothing.
        let text = "\u{feff}% escape\n\n[Event \"c\"]\n\n1. e4 *\n";
        assert_eq!(filtered(text), text);
    }

    #[test]
    fn broken_tag_lines_stay_tag_lines() {
        // A stray token before `]` is blanked; so is an unescaped quote's rest.
        assert_eq!(filtered("[Site \"S\" %~<|>]\n\n*"), "[Site \"S\"      ]\n\n*");
        assert_eq!(filtered("[Site \"A \"q\" w\"]\n\n*"), "[Site \"A \"     ]\n\n*");
        // A value over a line break is joined unless the next line is a tag or blank.
        assert_eq!(filtered("[Site \"S\non E\"]\n[R \"1\"]\n\n1-0"), "[Site \"S on E\"]\n[R \"1\"]\n\n1-0");
        assert_eq!(filtered("[Site \"S\n[R \"1\"]\n\n1-0"), "[Site \"S\n[R \"1\"]\n\n1-0");
        // A tag line without its `[` gets one, the rest blank; tags sharing a line and movetext after a
        // tag on its line are read as they are.
        assert_eq!(filtered("Event \"x\"]\n[R \"1\"]\n\n*"), format!("[{}\n[R \"1\"]\n\n*", " ".repeat(9)));
        let text = "[A \"x\"] [B \"y\"] 1. e4\n\n1... e5 *";
        assert_eq!(filtered(text), "[A \"x\"] [B \"y\"] 1. e4\n 1... e5 *");
    }
}
