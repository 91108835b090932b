//! Where each node's annotations end in a game's source text, so that annotations appended for game
//! review can be inserted into the original bytes without rewriting anything else.
//!
//! The scan follows pgn-reader's movetext rules (comments, `;` and `%` lines, move numbers, results,
//! NAGs, variations) and checks every move it finds against the tree; any disagreement gives `None`, and
//! the writer then falls back to regenerating the game (and it re-reads the spliced text to make sure).

use shakmaty::san::SanPlus;

use super::tree::{GameTree, NodeId};

/// Insertion points in a game's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spans {
    /// Byte offset of the first movetext token (or the end of the text if there is none).
    pub movetext_start: usize,
    /// Per node (arena index): the byte offset just after the last token attached to it in the source
    /// (its move, NAGs and comments), `None` if nothing in the source is attached to it (only the root).
    pub ends: Vec<Option<usize>>,
}

fn is_token_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'(' | b')' | b'!' | b'?' | b'$' | b';' | b'.' | b'*'
    )
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, bytes: &[u8]) -> bool {
        if self.text[self.at..].starts_with(bytes) {
            self.at += bytes.len();
            true
        } else {
            false
        }
    }

    fn eat_dash(&mut self) -> bool {
        self.eat(b"-") || self.eat("–".as_bytes()) || self.eat("—".as_bytes())
    }

    fn skip_until(&mut self, byte: u8) {
        self.at =
            self.text[self.at..].iter().position(|&b| b == byte).map_or(self.text.len(), |p| self.at + p);
    }

    fn skip_token(&mut self) {
        self.at = self.text[self.at..]
            .iter()
            .position(|&b| is_token_end(b))
            .map_or(self.text.len(), |p| self.at + p);
    }

    fn skip_digits_and_dots(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        while matches!(self.peek(), Some(b'.' | b' ')) {
            self.at += 1;
        }
    }
}

/// Skips the header section the way pgn-reader does: tag lines starting with `[`, with whitespace and
/// `%` escape lines around them.
fn skip_headers(s: &mut Scan<'_>) {
    let mut line_start = true;
    loop {
        match s.peek() {
            Some(b' ' | b'\t' | b'\r') => s.at += 1,
            Some(b'\n') => {
                s.at += 1;
                line_start = true;
            }
            Some(b'%') if line_start => s.skip_until(b'\n'),
            Some(b'[') => {
                s.skip_until(b'\n');
                line_start = false;
            }
            Some(0xef) if s.at == 0 && s.eat(b"\xef\xbb\xbf") => {}
            _ => return,
        }
    }
}

/// Scans `source` (the text `tree` was read from, structure unchanged since) for insertion points.
pub(crate) fn scan(source: &str, tree: &GameTree) -> Option<Spans> {
    let mut s = Scan { text: source.as_bytes(), at: 0 };
    skip_headers(&mut s);
    let movetext_start = s.at;
    let node_count = tree.move_count() + 1;
    let mut ends: Vec<Option<usize>> = vec![None; node_count];
    let mut next_id = 1usize;
    let mut cur = NodeId::ROOT;
    let mut stack: Vec<NodeId> = Vec::new();
    let mut var_start = false;
    // Comments at the start of a variation, waiting for its first move (their end offsets).
    let mut pending: Option<usize> = None;

    while let Some(ch) = s.peek() {
        match ch {
            b'{' => {
                s.at += 1;
                s.skip_until(b'}');
                s.peek()?; // an unterminated comment: no insertion points
                s.at += 1;
                if var_start {
                    pending = Some(s.at);
                } else {
                    ends[cur.index()] = Some(s.at);
                }
            }
            b'\n' => {
                s.at += 1;
                match s.peek() {
                    Some(b'%') => {
                        s.at += 1;
                        s.skip_until(b'\n');
                    }
                    // The next game's tags. A blank line does not end the movetext (see
                    // `super::blank_lines`): the source is this game's text alone.
                    Some(b'[') => break,
                    _ => {}
                }
            }
            b';' => {
                s.at += 1;
                s.skip_until(b'\n');
            }
            b'0' => {
                s.at += 1;
                if s.eat_dash() {
                    if s.eat(b"1") {
                        // 0-1
                    } else if s.eat(b"0") {
                        if s.eat_dash() {
                            s.eat(b"0");
                        }
                        if matches!(s.peek(), Some(b'+' | b'#')) {
                            s.at += 1;
                        }
                        // Castling written with zeros: a move. Its exact form is not needed, only its place.
                        let id = NodeId(u32::try_from(next_id).ok()?);
                        let node = tree.node(id)?;
                        if node.parent() != Some(cur)
                            || !matches!(node.san()?.san, shakmaty::san::San::Castle(_))
                        {
                            return None;
                        }
                        pending = None;
                        ends[next_id] = Some(s.at);
                        cur = id;
                        next_id += 1;
                        var_start = false;
                    }
                }
            }
            b'1' => {
                s.at += 1;
                if s.eat_dash() {
                    s.eat(b"0");
                } else if s.eat(b"/2") && s.eat_dash() && s.eat(b"1/2") {
                    // 1/2-1/2
                } else {
                    s.skip_digits_and_dots();
                }
            }
            0xc2 => {
                s.at += 1;
                let _ = s.eat(b"\xbd") && s.eat_dash() && s.eat("½".as_bytes());
            }
            b'2'..=b'9' => {
                s.at += 1;
                s.skip_digits_and_dots();
            }
            b'(' => {
                s.at += 1;
                let parent = tree.node(cur)?.parent();
                match parent {
                    Some(parent) if !var_start => {
                        stack.push(cur);
                        cur = parent;
                        var_start = true;
                    }
                    // Skipped variations are not mirrored; let the caller regenerate instead.
                    _ => return None,
                }
            }
            b')' => {
                s.at += 1;
                if let Some(back) = stack.pop() {
                    if let Some(end) = pending.take() {
                        ends[cur.index()] = Some(end);
                    }
                    cur = back;
                    var_start = false;
                }
            }
            b'$' => {
                s.at += 1;
                let digits = s.at;
                s.skip_token();
                if std::str::from_utf8(&s.text[digits..s.at])
                    .ok()
                    .and_then(|d| d.parse::<u8>().ok())
                    .is_some()
                {
                    ends[cur.index()] = Some(s.at);
                }
            }
            b'!' | b'?' => {
                s.at += 1;
                if matches!(s.peek(), Some(b'!' | b'?')) {
                    s.at += 1;
                }
                ends[cur.index()] = Some(s.at);
            }
            b'*' | b' ' | b'\t' | b'\r' | b'.' => s.at += 1,
            _ => match SanPlus::from_ascii_prefix(&s.text[s.at..]) {
                Ok((san, len)) => {
                    s.at += len;
                    if s.peek().is_none_or(is_token_end) {
                        let id = NodeId(u32::try_from(next_id).ok()?);
                        let node = tree.node(id)?;
                        if node.parent() != Some(cur) || node.san() != Some(san) {
                            return None;
                        }
                        pending = None;
                        ends[next_id] = Some(s.at);
                        cur = id;
                        next_id += 1;
                        var_start = false;
                    }
                }
                Err(_) => {
                    s.at += 1;
                    s.skip_token();
                }
            },
        }
    }
    if let Some(end) = pending {
        ends[cur.index()] = Some(end);
    }
    (next_id == node_count).then_some(Spans { movetext_start, ends })
}
