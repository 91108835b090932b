//! A cursor over one game's text, for the hand-written scans that follow pgn-reader's movetext rules: the
//! token checker ([`super::movetext`]) and the annotation spans ([`super::spans`]).

/// Whether the parser takes `b` as the end of a movetext token (pgn-reader's list).
pub(super) fn is_token_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'(' | b')' | b'!' | b'?' | b'$' | b';' | b'.' | b'*'
    )
}

/// A position in a game's text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor<'a> {
    /// The game's text.
    pub(super) text: &'a [u8],
    /// The byte offset reached.
    pub(super) at: usize,
}

impl<'a> Cursor<'a> {
    /// At the start of `text`.
    pub(super) fn new(text: &'a [u8]) -> Cursor<'a> {
        Cursor { text, at: 0 }
    }

    /// The byte at the cursor.
    pub(super) fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// The text from the cursor on.
    pub(super) fn rest(&self) -> &'a [u8] {
        self.text.get(self.at..).unwrap_or_default()
    }

    /// One byte on (not past the end).
    pub(super) fn bump(&mut self) {
        self.at = (self.at + 1).min(self.text.len());
    }

    /// Past `bytes` if the text goes on with them.
    pub(super) fn eat(&mut self, bytes: &[u8]) -> bool {
        let found = self.rest().starts_with(bytes);
        if found {
            self.at += bytes.len();
        }
        found
    }

    /// A hyphen, an en dash or an em dash (the parser takes all three in results and castling).
    pub(super) fn eat_dash(&mut self) -> bool {
        self.eat(b"-") || self.eat("–".as_bytes()) || self.eat("—".as_bytes())
    }

    /// To the next `byte` (or the end of the text).
    pub(super) fn skip_until(&mut self, byte: u8) {
        self.at = self.rest().iter().position(|&b| b == byte).map_or(self.text.len(), |p| self.at + p);
    }

    /// Past the next `byte`; false (at the end of the text) when there is none.
    pub(super) fn skip_until_after(&mut self, byte: u8) -> bool {
        self.skip_until(byte);
        let found = self.peek() == Some(byte);
        self.bump();
        found
    }

    /// Where the token that goes on at `from` ends (the next token end, or the end of the text).
    pub(super) fn token_end(&self, from: usize) -> usize {
        let from = from.min(self.text.len());
        self.text[from..].iter().position(|&b| is_token_end(b)).map_or(self.text.len(), |p| from + p)
    }

    /// To the end of the token at the cursor.
    pub(super) fn skip_token(&mut self) {
        self.at = self.token_end(self.at);
    }

    /// Past a move number: its digits, then its dots and spaces.
    pub(super) fn skip_digits_and_dots(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.bump();
        }
        while matches!(self.peek(), Some(b'.' | b' ')) {
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_over_the_text_and_stops_at_its_end() {
        let mut c = Cursor::new("12. e4 {a} –".as_bytes());
        c.skip_digits_and_dots();
        assert_eq!(c.peek(), Some(b'e'));
        c.skip_token();
        assert_eq!(c.rest(), " {a} –".as_bytes());
        assert!(c.skip_until_after(b'}'));
        assert!(!c.eat(b"x"));
        assert!(c.eat(b" ") && c.eat_dash());
        assert_eq!(c.peek(), None);
        c.bump();
        assert_eq!(c.at, c.text.len());
        assert!(!c.skip_until_after(b'}'));
        assert_eq!(c.token_end(99), c.text.len());
    }
}
