//! Blank lines inside a game's movetext.
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
//! game with no termination marker still ends where the next game's tags begin.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};

/// How far ahead a blank line looks for the next game's tags before it is joined anyway.
const MAX_LOOKAHEAD: usize = 1 << 16;

/// Where in the PGN text the filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between games, in the tags, or before a game's first movetext token.
    Outside,
    /// A `%` escape line outside a game (to the end of the line).
    OutsideEscape,
    /// In a game's movetext, outside comments.
    Movetext,
    /// In a `{…}` comment of the movetext.
    Brace,
    /// In a `;` comment or a `%` escape line of the movetext (to the end of the line).
    RestOfLine,
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
    /// Whether the current line is a tag line (`[` at its start, outside the movetext).
    tag_line: bool,
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
            tag_line: false,
        }
    }

    fn end_token(&mut self) {
        if matches!(self.token.as_slice(), b"*" | b"1-0" | b"0-1" | b"1/2-1/2") {
            self.state = State::Outside;
        }
        self.token.clear();
    }

    /// Whether `c` is the second newline of a blank line inside the movetext (the case that needs to
    /// look ahead).
    fn at_blank_line(&self, c: u8) -> bool {
        self.state == State::Movetext && c == b'\n' && self.last == b'\n'
    }

    /// Filters one byte in place. `then_tag`: for a blank line inside the movetext, whether the next
    /// non-blank text is a tag line (the next game begins; the blank line stays).
    fn byte(&mut self, b: &mut u8, then_tag: bool) {
        let c = *b;
        match self.state {
            State::Outside => {
                if matches!(c, 0xEF | 0xBB | 0xBF) && !self.tag_line {
                    // A UTF-8 byte-order mark: transparent.
                    return;
                }
                if self.last == b'\n' && c == b'[' {
                    self.tag_line = true;
                } else if self.last == b'\n' && c == b'%' {
                    self.state = State::OutsideEscape;
                } else if c == b'\n' {
                    self.tag_line = false;
                } else if !self.tag_line && !c.is_ascii_whitespace() {
                    // The first movetext token (a comment, a move number, a move, a result).
                    self.state = State::Movetext;
                    self.token.clear();
                    return self.byte(b, false);
                }
            }
            State::Movetext => match c {
                b'\n' if self.last == b'\n' && !then_tag => {
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
                    // The next game's tags: a game without a termination marker ends here.
                    self.token.clear();
                    self.state = State::Outside;
                    self.tag_line = true;
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

    /// For a blank line at the front of `pending`: whether the next non-blank byte is a `[` (None: not
    /// known yet, more must be read).
    fn next_is_tag(&self) -> Option<bool> {
        let next = self.pending.iter().skip(1).take(MAX_LOOKAHEAD).find(|b| !b.is_ascii_whitespace());
        match next {
            Some(&b) => Some(b == b'['),
            None if self.eof || self.pending.len() > MAX_LOOKAHEAD => Some(false),
            None => None,
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
            let then_tag = if self.at_blank_line(c) {
                match self.next_is_tag() {
                    Some(t) => t,
                    None if n > 0 => break,
                    None => {
                        self.fill()?;
                        continue;
                    }
                }
            } else {
                false
            };
            let mut b = c;
            self.byte(&mut b, then_tag);
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
        // Escape lines and a byte-order mark before the tags change nothing.
        let text = "\u{feff}% escape\n\n[Event \"c\"]\n\n1. e4 *\n";
        assert_eq!(filtered(text), text);
    }
}
