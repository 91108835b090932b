//! PGN export of a [`GameTree`]: headers, main line, variations, comments, NAGs and result, wrapped at
//! a line width. An unmodified tree that kept its source is written back byte for byte.

use std::io::{self, Write};

use shakmaty::{Color, Position};

use super::reader::{PgnReader, ReadOptions};
use super::spans;
use super::tag_line::push_tag;
use super::tree::{Addition, GameTree, NodeId};

/// Options of [`write_game`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Wrap movetext lines before they exceed this many characters (a single longer token, such as a
    /// long comment, still stands on its own line).
    pub line_width: usize,
    /// Write the game's original text when the tree kept it and was not edited since.
    pub use_source: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        // The export format's limit: no line of 80 characters or more.
        WriteOptions { line_width: 79, use_source: true }
    }
}

/// Writes one game: the original text if available and allowed, else headers, a blank line and the
/// movetext. The output ends with a newline; separate games with one empty line (see [`write_games`]).
pub fn write_game(out: &mut impl Write, tree: &GameTree, options: &WriteOptions) -> io::Result<()> {
    out.write_all(game_to_string(tree, options).as_bytes())
}

/// Writes games one after the other. Games that kept their source (and `use_source` is on) are written
/// with the text that preceded them in their file, so an unmodified file is reproduced byte for byte
/// (up to whitespace after its last game); other games are separated by one empty line.
pub fn write_games<'a>(
    out: &mut impl Write,
    games: impl IntoIterator<Item = &'a GameTree>,
    options: &WriteOptions,
) -> io::Result<()> {
    let mut ends_with_newline = true;
    for (i, game) in games.into_iter().enumerate() {
        let kept = if options.use_source { kept_text(game).map(|s| (s, game.leading_text())) } else { None };
        let text = match kept {
            Some((source, Some(leading))) => {
                out.write_all(leading.as_bytes())?;
                source
            }
            _ => {
                if !ends_with_newline {
                    out.write_all(b"\n")?;
                }
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                match kept {
                    Some((source, _)) => source,
                    None => game_to_string(game, options),
                }
            }
        };
        out.write_all(text.as_bytes())?;
        ends_with_newline = text.ends_with('\n');
    }
    Ok(())
}

/// The game as PGN text (see [`write_game`]).
pub fn game_to_string(tree: &GameTree, options: &WriteOptions) -> String {
    if options.use_source
        && let Some(mut text) = kept_text(tree)
    {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        return text;
    }
    let mut text = String::new();
    for (name, value) in tree.headers() {
        push_tag(&mut text, name, value);
    }
    if !tree.headers().is_empty() {
        text.push('\n');
    }
    let mut lines = Lines { text, col: 0, width: options.line_width.max(1), open: 0 };
    let root = tree.root();
    for c in root.comments_before().iter().chain(root.comments_after()) {
        lines.comment(c.raw());
    }
    for nag in root.nags() {
        lines.token(&nag.to_string());
    }
    let start = tree.start().position();
    if let Some(&first) = root.children().first() {
        let ply = Ply { turn: start.turn(), fullmove: start.fullmoves().get() };
        write_line(tree, first, ply, &mut lines);
    }
    lines.token(tree.result().as_str());
    let mut text = lines.text;
    text.push('\n');
    text
}

/// The original text of an unmodified game, or of a game only annotated through
/// [`GameTree::append_comment`] / [`GameTree::append_nag`]: every original byte kept, each new comment or
/// NAG inserted (with one space before it) after the node's existing move, NAGs and comments. The result
/// is checked by re-reading it; `None` when the tree kept no source, was otherwise edited, or the
/// insertion points could not be found (the writer then regenerates the game).
pub fn source_with_additions(tree: &GameTree) -> Option<String> {
    kept_text(tree)
}

fn kept_text(tree: &GameTree) -> Option<String> {
    let source = tree.source()?;
    let additions = tree.additions();
    if additions.is_empty() {
        return Some(source.to_owned());
    }
    let spans = spans::scan(source, tree)?;
    let mut inserts: Vec<(usize, String)> = Vec::with_capacity(additions.len());
    for (id, addition) in additions {
        let token = match addition {
            Addition::Comment(c) => format!("{{{}}}", c.raw()),
            Addition::Nag(n) => n.to_string(),
        };
        match spans.ends.get(id.index()).copied().flatten() {
            Some(end) => inserts.push((end, format!(" {token}"))),
            None if *id == NodeId::ROOT => inserts.push((spans.movetext_start, format!("{token} "))),
            None => return None,
        }
    }
    inserts.sort_by_key(|(at, _)| *at);
    let mut text = String::with_capacity(source.len() + inserts.iter().map(|(_, t)| t.len()).sum::<usize>());
    let mut from = 0;
    for (at, token) in &inserts {
        text.push_str(source.get(from..*at)?);
        text.push_str(token);
        from = *at;
    }
    text.push_str(source.get(from..)?);
    let reread = PgnReader::with_options(text.as_bytes(), ReadOptions { keep_source: false }).next()?.ok()?;
    (reread == *tree).then_some(text)
}

/// The side to move and move number before a move.
#[derive(Debug, Clone, Copy)]
struct Ply {
    turn: Color,
    fullmove: u32,
}

impl Ply {
    fn next(self) -> Ply {
        match self.turn {
            Color::White => Ply { turn: Color::Black, fullmove: self.fullmove },
            Color::Black => Ply { turn: Color::White, fullmove: self.fullmove.saturating_add(1) },
        }
    }

    fn number(self) -> String {
        match self.turn {
            Color::White => format!("{}.", self.fullmove),
            Color::Black => format!("{}...", self.fullmove),
        }
    }
}

/// Writes the line starting with `first` and following first children, with the variations of each move.
fn write_line(tree: &GameTree, first: NodeId, mut ply: Ply, lines: &mut Lines) {
    let mut at = Some(first);
    let mut force_number = true;
    while let Some(id) = at {
        let Some(node) = tree.node(id) else { return };
        for c in node.comments_before() {
            lines.comment(c.raw());
            force_number = true;
        }
        let san = node.san_text().unwrap_or_else(|| "--".to_owned());
        if ply.turn == Color::White || force_number {
            lines.token(&ply.number());
        }
        lines.token(&san);
        force_number = false;
        for nag in node.nags() {
            lines.token(&nag.to_string());
        }
        for c in node.comments_after() {
            lines.comment(c.raw());
            force_number = true;
        }
        if let Some(parent) = node.parent().and_then(|p| tree.node(p))
            && parent.children().first() == Some(&id)
        {
            for &alt in &parent.children()[1..] {
                lines.open();
                write_line(tree, alt, ply, lines);
                lines.close();
                force_number = true;
            }
        }
        ply = ply.next();
        at = node.children().first().copied();
    }
}

/// Space-separated tokens wrapped at a width; `(` sticks to the next token and `)` to the previous one.
#[derive(Debug)]
struct Lines {
    text: String,
    col: usize,
    width: usize,
    open: usize,
}

impl Lines {
    fn token(&mut self, token: &str) {
        let len = token.chars().count() + self.open;
        if self.col > 0 {
            if self.col + 1 + len > self.width {
                self.text.push('\n');
                self.col = 0;
            } else {
                self.text.push(' ');
                self.col += 1;
            }
        }
        for _ in 0..self.open {
            self.text.push('(');
        }
        self.open = 0;
        self.text.push_str(token);
        match token.rfind('\n') {
            Some(i) => self.col = token[i + 1..].chars().count(),
            None => self.col += len,
        }
    }

    fn comment(&mut self, raw: &str) {
        self.token(&format!("{{{raw}}}"));
    }

    fn open(&mut self) {
        self.open += 1;
    }

    fn close(&mut self) {
        self.text.push(')');
        self.col += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::comment::Comment;
    use crate::pgn::reader::read_all;

    #[test]
    fn a_game_with_blank_lines_in_its_movetext_is_written_back_byte_for_byte() {
        let first =
            "[Event \"t\"]\n\n1. e4 e5 2. Nf3\n\n{A comment in its own paragraph.}\n\n2... Nc6 3. Bb5 *";
        let games = read_all(&format!("{first}\n\n[Event \"w\"]\n\n1. c4 *\n"));
        let t = games[0].as_ref().expect("the first game reads whole");
        let written = game_to_string(t, &WriteOptions::default());
        assert_eq!(written.trim_end(), first);
    }

    #[test]
    fn broken_tags_are_written_so_the_game_reads_back() {
        // Found by the `pgn` fuzz target: a tag with no name whose value runs over a line end. The reader
        // refuses it now; a tree with such a tag is still written so that it reads back.
        let games = read_all("[\"\\\n[FEN \"");
        let e = games[0].as_ref().expect_err("a tag without a name");
        assert_eq!(e.kind, super::super::GameErrorKind::Malformed(super::super::Malformed::TagWithoutName));
        let nameless = GameTree::with_headers(vec![(String::new(), "\\ [FEN ".to_owned())]).expect("tree");
        let written =
            game_to_string(&nameless, &WriteOptions { use_source: false, ..WriteOptions::default() });
        assert_eq!(written.lines().next(), Some("[_ \"\\\\ [FEN \"]"), "{written}");
        let again = read_all(&written);
        let reread = again[0].as_ref().expect("the written game reads");
        assert_eq!(reread.headers(), &[("_".to_owned(), "\\ [FEN ".to_owned())]);
        let named =
            GameTree::with_headers(vec![("Bad Name]".to_owned(), "two\nlines".to_owned())]).expect("tree");
        let written = game_to_string(&named, &WriteOptions::default());
        let again = read_all(&written);
        let reread = again[0].as_ref().expect("reads");
        assert_eq!(reread.headers(), &[("Bad_Name_".to_owned(), "two lines".to_owned())]);
        let symbols =
            GameTree::with_headers(vec![("Ev\u{fffd}*(x)é".to_owned(), "v".to_owned())]).expect("tree");
        let written = game_to_string(&symbols, &WriteOptions::default());
        let again = read_all(&written);
        assert_eq!(again.len(), 1, "{written}");
        let reread = again[0].as_ref().expect("reads");
        assert_eq!(reread.headers(), &[("Ev___x__".to_owned(), "v".to_owned())]);
    }

    #[test]
    fn export_regenerates_variations_and_reimports_identically() {
        let pgn = "[Event \"t\\\"q\"]\n\n{start} 1. e4 $1 {good} (1. d4 d5 (1... Nf6 {indian}) 2. c4) ( {before} 1. c4) \
                   1... e5 2. Nf3 -- 3. Bc4 1-0\n";
        let games = read_all(pgn);
        let tree = games[0].as_ref().expect("valid");
        let regenerated =
            game_to_string(tree, &WriteOptions { use_source: false, ..WriteOptions::default() });
        assert_eq!(
            regenerated,
            "[Event \"t\\\"q\"]\n\n{start} 1. e4 $1 {good} (1. d4 d5 (1... Nf6 {indian}) 2. c4) ({before} 1. c4)\n\
             1... e5 2. Nf3 -- 3. Bc4 1-0\n"
        );
        let again = read_all(&regenerated);
        assert_eq!(again[0].as_ref().expect("valid"), tree);
        assert_eq!(game_to_string(tree, &WriteOptions::default()), pgn);
    }

    #[test]
    fn appended_annotations_splice_into_the_source() {
        let pgn = "[Event \"s\"]\n\n1.e4 e5 2.Nf3 Nc6 3.Bc4 Nf6 4.0-0 {castles} (4.d3) 4...Bc5 *\n";
        let mut tree = read_all(pgn).remove(0).expect("valid");
        let main: Vec<_> = tree.mainline().collect();
        let castle = main[6];
        tree.append_comment(castle, Comment::new("[%eval 0.3]").expect("ok")).expect("node");
        tree.append_nag(main[1], pgn_reader::Nag(2)).expect("node");
        tree.append_comment(NodeId::ROOT, Comment::new("review").expect("ok")).expect("node");
        let text = source_with_additions(&tree).expect("splices");
        assert_eq!(
            text,
            "[Event \"s\"]\n\n{review} 1.e4 e5 $2 2.Nf3 Nc6 3.Bc4 Nf6 4.0-0 {castles} {[%eval 0.3]} (4.d3) 4...Bc5 *\n"
        );
        assert_eq!(game_to_string(&tree, &WriteOptions::default()), text);
        // Any other edit drops the source; the game is then regenerated.
        tree.set_nags(main[1], Vec::new()).expect("node");
        assert!(source_with_additions(&tree).is_none());
        assert!(
            game_to_string(&tree, &WriteOptions::default())
                .starts_with("[Event \"s\"]\n\n{review} 1. e4 e5 2. Nf3")
        );
    }

    #[test]
    fn unmirrored_source_falls_back_to_regeneration() {
        // A variation before the first move is skipped by the reader; splicing declines such a source.
        let pgn = "[Event \"s\"]\n\n(1. d4) 1. e4 e5 *\n";
        let mut tree = read_all(pgn).remove(0).expect("valid");
        let e4 = tree.mainline().next().expect("move");
        tree.append_comment(e4, Comment::new("x").expect("ok")).expect("node");
        assert!(source_with_additions(&tree).is_none());
        assert_eq!(game_to_string(&tree, &WriteOptions::default()), "[Event \"s\"]\n\n1. e4 {x} 1... e5 *\n");
    }
}
