//! Where each node's annotations end in a game's source text, so that annotations appended for game
//! review can be inserted into the original bytes without rewriting anything else.
//!
//! The scan follows pgn-reader's movetext rules (comments, `;` and `%` lines, move numbers, results,
//! NAGs, variations) and checks every move it finds against the tree; any disagreement gives `None`, and
//! the writer then falls back to regenerating the game (and it re-reads the spliced text to make sure).

use shakmaty::san::SanPlus;

use super::cursor::{Cursor, is_token_end};
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

/// Skips the header section the way pgn-reader does: tag lines starting with `[`, with whitespace and
/// `%` escape lines around them.
fn skip_headers(s: &mut Cursor<'_>) {
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
    let mut s = Cursor::new(source.as_bytes());
    skip_headers(&mut s);
    let movetext_start = s.at;
    let mut w = Walk::new(tree);
    while let Some(ch) = s.peek() {
        match ch {
            b'{' => {
                s.at += 1;
                s.skip_until(b'}');
                s.peek()?; // an unterminated comment: no insertion points
                s.at += 1;
                w.comment_ends(s.at);
            }
            b'\n' => {
                s.at += 1;
                // The next game's tags. A blank line does not end the movetext (see
                // `super::blank_lines`): the source is this game's text alone.
                if after_newline(&mut s) {
                    break;
                }
            }
            b';' => {
                s.at += 1;
                s.skip_until(b'\n');
            }
            b'0' => {
                s.at += 1;
                if zero_castling(&mut s) {
                    // Castling written with zeros: a move. Its exact form is not needed, only its place.
                    let is_castle = |san: SanPlus| matches!(san.san, shakmaty::san::San::Castle(_));
                    w.moved(s.at, is_castle)?;
                }
            }
            b'1' => {
                s.at += 1;
                skip_after_one(&mut s);
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
                w.open_variation()?;
            }
            b')' => {
                s.at += 1;
                w.close_variation();
            }
            b'$' => {
                s.at += 1;
                nag(&mut s, &mut w);
            }
            b'!' | b'?' => {
                s.at += 1;
                if matches!(s.peek(), Some(b'!' | b'?')) {
                    s.at += 1;
                }
                w.annotation_ends(s.at);
            }
            b'*' | b' ' | b'\t' | b'\r' | b'.' => s.at += 1,
            _ => san_token(&mut s, &mut w)?,
        }
    }
    w.finish(movetext_start)
}

/// After a `\n`: skips a `%` escape line; true when the next game's tags begin (a `[` opens the line).
fn after_newline(s: &mut Cursor<'_>) -> bool {
    match s.peek() {
        Some(b'%') => {
            s.at += 1;
            s.skip_until(b'\n');
            false
        }
        Some(b'[') => true,
        _ => false,
    }
}

/// After a `1`: reads `-0` or `/2-1/2` (a result), or else the rest of a move number.
fn skip_after_one(s: &mut Cursor<'_>) {
    if s.eat_dash() {
        s.eat(b"0");
    } else if s.eat(b"/2") && s.eat_dash() && s.eat(b"1/2") {
        // 1/2-1/2
    } else {
        s.skip_digits_and_dots();
    }
}

/// After a `$`: reads the NAG's number, which ends the current node's annotations when it fits a NAG.
fn nag(s: &mut Cursor<'_>, w: &mut Walk<'_>) {
    let digits = s.at;
    s.skip_token();
    if std::str::from_utf8(&s.text[digits..s.at]).ok().and_then(|d| d.parse::<u8>().ok()).is_some() {
        w.annotation_ends(s.at);
    }
}

/// A token that is none of the others: a move when SAN reads the whole of it (checked against the tree:
/// `None` when they disagree), else skipped.
fn san_token(s: &mut Cursor<'_>, w: &mut Walk<'_>) -> Option<()> {
    match SanPlus::from_ascii_prefix(&s.text[s.at..]) {
        Ok((san, len)) => {
            s.at += len;
            if s.peek().is_none_or(is_token_end) {
                w.moved(s.at, |found| found == san)?;
            }
        }
        Err(_) => {
            s.at += 1;
            s.skip_token();
        }
    }
    Some(())
}

/// After a `0`: reads `-1` (a result) or `-0`, `-0-0` with a check sign (castling written with zeros).
/// True for castling.
fn zero_castling(s: &mut Cursor<'_>) -> bool {
    if !s.eat_dash() || s.eat(b"1") || !s.eat(b"0") {
        return false;
    }
    if s.eat_dash() {
        s.eat(b"0");
    }
    if matches!(s.peek(), Some(b'+' | b'#')) {
        s.at += 1;
    }
    true
}

/// Where [`scan`] is in the game tree while it reads the movetext: the node the text is at, the variations
/// it is inside, and the end offset found so far for each node's annotations.
struct Walk<'t> {
    tree: &'t GameTree,
    ends: Vec<Option<usize>>,
    /// The id the next move read must have (moves are numbered in the order the text gives them).
    next_id: usize,
    cur: NodeId,
    /// The nodes to go back to when the open variations close.
    stack: Vec<NodeId>,
    /// Just after `(`: no move of the variation read yet.
    var_start: bool,
    /// Comments at the start of a variation, waiting for its first move (their end offset).
    pending: Option<usize>,
}

impl<'t> Walk<'t> {
    fn new(tree: &'t GameTree) -> Walk<'t> {
        Walk {
            tree,
            ends: vec![None; tree.move_count() + 1],
            next_id: 1,
            cur: NodeId::ROOT,
            stack: Vec::new(),
            var_start: false,
            pending: None,
        }
    }

    /// A comment ended at `at`: it belongs to the current node, or waits for a variation's first move.
    fn comment_ends(&mut self, at: usize) {
        if self.var_start {
            self.pending = Some(at);
        } else {
            self.ends[self.cur.index()] = Some(at);
        }
    }

    /// A NAG or a `!`/`?` suffix ended at `at`.
    fn annotation_ends(&mut self, at: usize) {
        self.ends[self.cur.index()] = Some(at);
    }

    /// A move ended at `at`: it must be the tree's next node, a child of the current one, whose SAN
    /// `matches`; `None` when the text and the tree disagree.
    fn moved(&mut self, at: usize, matches: impl Fn(SanPlus) -> bool) -> Option<()> {
        let id = NodeId(u32::try_from(self.next_id).ok()?);
        let node = self.tree.node(id)?;
        if node.parent() != Some(self.cur) || !node.san().is_some_and(matches) {
            return None;
        }
        self.pending = None;
        self.ends[self.next_id] = Some(at);
        self.cur = id;
        self.next_id += 1;
        self.var_start = false;
        Some(())
    }

    /// `(`: the variation replaces the current node's move. Skipped variations (one at the root, or one
    /// opened before its first move) are not mirrored: `None`, and the caller regenerates instead.
    fn open_variation(&mut self) -> Option<()> {
        match self.tree.node(self.cur)?.parent() {
            Some(parent) if !self.var_start => {
                self.stack.push(self.cur);
                self.cur = parent;
                self.var_start = true;
                Some(())
            }
            _ => None,
        }
    }

    /// `)`: back to the node the variation branched from.
    fn close_variation(&mut self) {
        if let Some(back) = self.stack.pop() {
            if let Some(end) = self.pending.take() {
                self.ends[self.cur.index()] = Some(end);
            }
            self.cur = back;
            self.var_start = false;
        }
    }

    /// The spans, when the text held every move of the tree.
    fn finish(mut self, movetext_start: usize) -> Option<Spans> {
        if let Some(end) = self.pending {
            self.ends[self.cur.index()] = Some(end);
        }
        (self.next_id == self.ends.len()).then_some(Spans { movetext_start, ends: self.ends })
    }
}
