//! Indexing PGN files of any size: one streaming pass that finds where each game lies in the file (its
//! byte range and first line) and its tag pairs, without building the games, in bounded memory (one game
//! and the parser's buffers); then any one game is read back from its range and parsed with
//! [`super::PgnReader`] when it is wanted.
//!
//! Games are split exactly as [`super::PgnReader`] splits them: the same parser ([`pgn_reader`]) behind
//! the same paragraph joiner ([`super::blank_lines`]), so a blank line inside a game's movetext does not
//! split it, and a broken game (an illegal move, a bad FEN, a syntax error) is one game of the index like
//! any other; its error shows when it is parsed. A game's range runs from its first byte (its first tag,
//! or its first movetext token) to the first byte of the next game (or the end of the file), so it also
//! holds the blank lines and `%` escape lines after the game.
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use mavboard_core::pgn::index::{index_games, parse_game};
//! let pgn = "[White \"A\"]\n\n1. e4 e5 *\n\n[White \"B\"]\n\n1. e4 e4 *\n";
//! let mut games = Vec::new();
//! index_games(pgn.as_bytes(), &AtomicBool::new(false), |game, _| games.push(game)).expect("indexed");
//! assert_eq!(games.len(), 2);
//! assert_eq!(games[1].tags.get("White"), Some("B"));
//! let second = &pgn.as_bytes()[games[1].range()];
//! let err = parse_game(second, &games[1], Default::default()).expect_err("1... e4 is illegal");
//! assert_eq!((err.game, err.line), (2, 7)); // numbered and placed as in the whole file
//! ```

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::{ControlFlow, Range};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};

use super::blank_lines::JoinParagraphs;
use super::reader::{GameError, PgnReader, ReadOptions};
use super::tree::GameTree;
use super::window::{Tracked, Window, lock};

/// Why indexing stopped before the end of the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The source could not be read further (the games before `offset` were indexed).
    #[error("reading the file failed at byte {offset}: {message}")]
    Io {
        /// How far the source was read.
        offset: u64,
        /// The operating system's message.
        message: String,
    },
    /// The stop flag was raised.
    #[error("indexing was stopped")]
    Stopped,
}

/// Why one indexed game could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadGameError {
    /// Its bytes could not be read from the file (moved, truncated or changed since it was indexed).
    #[error("game {game}: its text could not be read from the file ({message}); open the file again")]
    Io {
        /// The game's number in the file, from 1.
        game: usize,
        /// The operating system's message.
        message: String,
    },
    /// Its text was read but is not a readable game (the same error the whole-file reader gives).
    #[error(transparent)]
    Game(#[from] GameError),
}

/// The tag pairs of one game, packed into one text (names and values as read, in file order). The text
/// may be shared with other games' tags: [`Tags::share`] packs a batch of games' tags into one allocation,
/// so that an index of a million games holds a few hundred blocks rather than a million small strings
/// (the allocator can give a dropped index back whole).
///
/// A pair is packed as `name NUL value NUL`, or, for the 30 most common names (Event, White, WhiteElo,
/// ...), as one code character (U+0001 to U+001F, which a tag name never holds) and `value NUL`: the
/// names are then a byte a game rather than about 130 (a database's games carry the same twenty names).
#[derive(Clone)]
pub struct Tags {
    /// The packed text, with other games' tags around this game's when shared.
    text: Arc<str>,
    /// This game's bytes of `text`.
    start: u32,
    end: u32,
}

/// Separates names and values inside [`Tags`]; removed from the text it packs.
const SEP: char = '\0';

/// The tag names that [`Tags`] packs as one code character: the name at index `i` as the character
/// `i + 1`. The Seven Tag Roster and the names that databases (TWIC, Lichess's exports, ChessBase's and
/// SCID's) put on every game. At most 31 (the code characters are U+0001 to U+001F).
const CODED: [&str; 30] = [
    "Event",
    "Site",
    "Date",
    "Round",
    "White",
    "Black",
    "Result",
    "WhiteElo",
    "BlackElo",
    "ECO",
    "Opening",
    "Variation",
    "EventDate",
    "WhiteFideId",
    "BlackFideId",
    "WhiteTitle",
    "BlackTitle",
    "TimeControl",
    "UTCDate",
    "UTCTime",
    "Termination",
    "WhiteRatingDiff",
    "BlackRatingDiff",
    "FEN",
    "SetUp",
    "Variant",
    "PlyCount",
    "Annotator",
    "EventType",
    "Board",
];

/// The name that `c` stands for, when it is a code character of [`CODED`].
fn coded_name(c: char) -> Option<&'static str> {
    (c as usize).checked_sub(1).and_then(|i| CODED.get(i)).copied()
}

/// The code character of `name`, when [`CODED`] has it.
fn name_code(name: &str) -> Option<char> {
    let i = CODED.iter().position(|&n| n == name)?;
    u8::try_from(i + 1).ok().map(char::from)
}

/// The most bytes [`Tags::share`] puts in one shared text.
const SHARED_BYTES: usize = 1 << 22;

impl Default for Tags {
    fn default() -> Self {
        Tags::packed(String::new())
    }
}

/// This game's tag pairs only (not the text shared with other games).
impl std::fmt::Debug for Tags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for Tags {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Tags {}

impl Tags {
    /// Packs tag pairs (a NUL character inside a name or value is dropped).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Tags {
        let mut packed = String::new();
        for (name, value) in pairs {
            push_pair(&mut packed, name, value);
        }
        Tags::packed(packed)
    }

    /// Tags of their own from a packed text.
    fn packed(packed: String) -> Tags {
        // A tag section over 4 GiB cannot be kept whole: it reads as no tags (`as_str` is then empty).
        let end = u32::try_from(packed.len()).unwrap_or(0);
        Tags { text: Arc::from(packed), start: 0, end }
    }

    /// The packed text of this game's tags.
    fn as_str(&self) -> &str {
        self.text.get(self.start as usize..self.end as usize).unwrap_or("")
    }

    /// Moves the tags of many games into shared texts of at most 4 MiB each (one allocation for each
    /// rather than one per game), in the order given. Their contents do not change.
    pub fn share<'a>(tags: impl IntoIterator<Item = &'a mut Tags>) {
        let mut pending: Vec<(&'a mut Tags, usize, usize)> = Vec::new();
        let mut buffer = String::new();
        let flush = |pending: &mut Vec<(&'a mut Tags, usize, usize)>, buffer: &mut String| {
            let text: Arc<str> = Arc::from(buffer.as_str());
            for (tags, start, end) in pending.drain(..) {
                // Every offset fits: a buffer outgrows SHARED_BYTES only by one game's tags, themselves
                // under 4 GiB (longer ones were never kept, see `packed`).
                if let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(end)) {
                    *tags = Tags { text: Arc::clone(&text), start, end };
                }
            }
            buffer.clear();
        };
        for tags in tags {
            let text = tags.as_str();
            if !buffer.is_empty() && buffer.len() + text.len() > SHARED_BYTES {
                flush(&mut pending, &mut buffer);
            }
            let start = buffer.len();
            buffer.push_str(text);
            pending.push((tags, start, buffer.len()));
        }
        if !pending.is_empty() {
            flush(&mut pending, &mut buffer);
        }
    }

    /// The value of the first tag called `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every tag pair in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut rest = self.as_str();
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let (name, after) = match coded_name(first) {
                Some(name) => (name, &rest[first.len_utf8()..]),
                None => rest.split_once(SEP).filter(|(n, _)| !n.is_empty())?,
            };
            let (value, next) = after.split_once(SEP).unwrap_or((after, ""));
            rest = next;
            Some((name, value))
        })
    }

    /// Whether the game has no tags.
    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// Packs one pair onto `packed` (see [`Tags`]): control characters are dropped from the name (a PGN tag
/// name is letters, digits and underscores), NUL from the value; a name left empty packs nothing.
fn push_pair(packed: &mut String, name: &str, value: &str) {
    if let Some(code) = name_code(name) {
        packed.push(code);
    } else {
        let start = packed.len();
        packed.extend(name.chars().filter(|c| !c.is_ascii_control()));
        if packed.len() == start {
            return;
        }
        packed.push(SEP);
    }
    if value.contains(SEP) {
        packed.extend(value.chars().filter(|&c| c != SEP));
    } else {
        packed.push_str(value);
    }
    packed.push(SEP);
}

/// Where one game lies in its file, and its tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedGame {
    /// Its number in the file, from 1 (broken games count, as with [`super::PgnReader`]).
    pub number: usize,
    /// The byte offset of its first byte.
    pub offset: u64,
    /// Its length in bytes (up to the next game, or to the end of the file).
    pub len: u64,
    /// The line of its first byte, from 1.
    pub line: u64,
    /// The column of its first byte on that line, from 1 (in characters; a game usually starts a line).
    pub column: u32,
    /// Its tag pairs (empty when the tags could not be read).
    pub tags: Tags,
}

impl IndexedGame {
    /// Its byte range in the file.
    pub fn range(&self) -> Range<usize> {
        let start = usize::try_from(self.offset).unwrap_or(usize::MAX);
        start..start.saturating_add(usize::try_from(self.len).unwrap_or(usize::MAX))
    }

    /// The offset just past its last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// A visitor that keeps the tags and skips the movetext.
struct TagsOnly;

impl Visitor for TagsOnly {
    type Tags = String;
    type Movetext = ();
    type Output = String;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(String::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        push_pair(tags, &String::from_utf8_lossy(name), &value.decode_utf8_lossy());
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        // The parser skips the movetext from here, as it does after a game that failed.
        ControlFlow::Break(tags)
    }

    fn san(&mut self, _: &mut Self::Movetext, _: SanPlus) -> ControlFlow<Self::Output> {
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: Self::Movetext) -> Self::Output {
        String::new()
    }
}

/// A game whose start is known and whose end is not yet.
struct Open {
    offset: u64,
    line: u64,
    column: u32,
    tags: Tags,
}

/// Indexes every game of `source` in one pass, calling `on_game(game, its bytes)` for each in file order
/// as soon as its end is known (the next game's start, or the end of the source). Memory stays bounded by
/// the largest game and the parser's buffers. Returns how many bytes were read.
///
/// `stop` is checked before each game; when it is raised, indexing ends with [`IndexError::Stopped`]. An
/// I/O error ends it with [`IndexError::Io`]; the games before it have been passed to `on_game`. Where
/// the parser cannot move past a syntax error at all (the whole-file reader then ends with an error of
/// its own), the index ends with the games before it.
pub fn index_games<R: Read>(
    source: R,
    stop: &AtomicBool,
    mut on_game: impl FnMut(IndexedGame, &[u8]),
) -> Result<u64, IndexError> {
    let window = Arc::new(Mutex::new(Window::default()));
    let tracked = Tracked::new(source, Arc::clone(&window));
    let mut reader = Reader::build(JoinParagraphs::new(tracked))
        .set_supported_tag_line_length(super::tag_line::TAG_LINE_BYTES)
        .finish();
    let position = |reader: &mut Reader<JoinParagraphs<Tracked<R>>>| reader.stream_position().unwrap_or(0);
    let mut open: Option<Open> = None;
    let mut number = 0usize;
    let io_error = |window: &Mutex<Window>, offset: u64| {
        lock(window).failure.take().map(|message| IndexError::Io { offset, message })
    };
    let mut close = |open: Option<Open>, end: u64, number: usize, window: &Mutex<Window>| {
        let Some(open) = open else { return };
        let w = lock(window);
        let bytes = w.range(open.offset, end);
        let game = IndexedGame {
            number,
            offset: open.offset,
            len: end - open.offset,
            line: open.line,
            column: open.column,
            tags: open.tags,
        };
        on_game(game, bytes);
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(IndexError::Stopped);
        }
        // Find the next game, skipping the rest of the previous one; a syntax error while skipping is
        // passed over as the whole-file reader does (unless nothing moved).
        let mut last_error_at = None;
        let more = loop {
            match reader.has_more() {
                Ok(more) => break more,
                Err(_) => {
                    let here = position(&mut reader);
                    if let Some(e) = io_error(&window, here) {
                        close(open.take(), here, number, &window);
                        return Err(e);
                    }
                    if last_error_at == Some(here) {
                        break false;
                    }
                    last_error_at = Some(here);
                }
            }
        };
        let start = if more { position(&mut reader) } else { lock(&window).end() };
        close(open.take(), start, number, &window);
        if !more {
            return Ok(start);
        }
        // Count the lines up to this game's start and forget the bytes before it.
        let (line, column) = {
            let mut w = lock(&window);
            // The column first: counting the lines may forget the bytes before the game.
            let column = w.column(start);
            (w.advance_to(start, start), column)
        };
        number += 1;
        let tags = match reader.read_game(&mut TagsOnly) {
            Ok(Some(packed)) => Tags::packed(packed),
            Ok(None) => {
                // Nothing after all (only whitespace): no game here.
                let end = position(&mut reader);
                return Ok(end);
            }
            Err(_) => {
                let here = position(&mut reader);
                if let Some(e) = io_error(&window, here) {
                    let open = Open { offset: start, line, column, tags: Tags::default() };
                    close(Some(open), here, number, &window);
                    return Err(e);
                }
                // A syntax error (an unterminated tag, say): still a game, whose error shows when read.
                Tags::default()
            }
        };
        open = Some(Open { offset: start, line, column, tags });
    }
}

/// Indexes every game of `source` (see [`index_games`]) into a list.
pub fn index_all<R: Read>(source: R) -> Result<Vec<IndexedGame>, IndexError> {
    let mut games = Vec::new();
    index_games(source, &AtomicBool::new(false), |game, _| games.push(game))?;
    Ok(games)
}

/// Parses one game from its `bytes` (the file's bytes in `game`'s range). An error carries the game's
/// number and the line in the whole file, as [`super::PgnReader`] reading the whole file would give.
pub fn parse_game(bytes: &[u8], game: &IndexedGame, options: ReadOptions) -> Result<GameTree, GameError> {
    let first = PgnReader::with_options(bytes, options).next();
    match first {
        Some(Ok(tree)) => Ok(tree),
        Some(Err(mut e)) => {
            e.game = game.number;
            // The game's text starts at its own line and column of the file.
            if e.line == 1 {
                e.column = e.column.map(|c| c.saturating_add(game.column.saturating_sub(1)));
            }
            e.line += game.line - 1;
            Err(e)
        }
        None => Err(GameError {
            game: game.number,
            line: game.line,
            column: None,
            kind: super::reader::GameErrorKind::Syntax("no game where the index put one".to_owned()),
            prefix: None,
        }),
    }
}

/// Reads game `game` back from `file` (the file it was indexed from) and parses it.
pub fn read_game<F: Read + Seek>(
    file: &mut F,
    game: &IndexedGame,
    options: ReadOptions,
) -> Result<GameTree, ReadGameError> {
    let bytes = read_game_bytes(file, game)?;
    Ok(parse_game(&bytes, game, options)?)
}

/// Reads the bytes of game `game` from `file` (the file it was indexed from).
pub fn read_game_bytes<F: Read + Seek>(file: &mut F, game: &IndexedGame) -> Result<Vec<u8>, ReadGameError> {
    let io = |e: io::Error| ReadGameError::Io { game: game.number, message: e.to_string() };
    let len = usize::try_from(game.len)
        .map_err(|_| ReadGameError::Io { game: game.number, message: "the game is too long".to_owned() })?;
    file.seek(SeekFrom::Start(game.offset)).map_err(io)?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes).map_err(io)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str) -> Vec<(IndexedGame, String)> {
        let mut games = Vec::new();
        index_games(text.as_bytes(), &AtomicBool::new(false), |g, bytes| {
            assert_eq!(&text.as_bytes()[g.range()], bytes, "the bytes passed are the game's range");
            games.push((g, String::from_utf8_lossy(bytes).into_owned()));
        })
        .expect("indexed");
        games
    }

    #[test]
    fn ranges_tags_and_lines() {
        let text = "[Event \"a\"]\n[White \"W\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. d4 *\n";
        let games = index(text);
        assert_eq!(games.len(), 2);
        let (a, a_text) = &games[0];
        assert_eq!((a.number, a.offset, a.line), (1, 0, 1));
        assert_eq!(a_text, "[Event \"a\"]\n[White \"W\"]\n\n1. e4 e5 *\n\n");
        assert_eq!(a.tags.iter().collect::<Vec<_>>(), [("Event", "a"), ("White", "W")]);
        let (b, b_text) = &games[1];
        assert_eq!((b.number, b.line, b.end()), (2, 6, text.len() as u64));
        assert_eq!(b_text, "[Event \"b\"]\n\n1. d4 *\n");
        assert_eq!((b.tags.get("Event"), b.tags.get("White")), (Some("b"), None));
        let tree = parse_game(b_text.as_bytes(), b, ReadOptions::default()).expect("reads");
        assert_eq!(tree.header("Event"), Some("b"));
    }

    #[test]
    fn blank_lines_in_movetext_keep_a_game_whole() {
        let text =
            "[Event \"t\"]\n\n1. e4 e5 2. Nf3\n\n{A comment.}\n\n2... Nc6 *\n\n[Event \"u\"]\n\n1. d4 *\n";
        let games = index(text);
        assert_eq!(games.len(), 2, "{games:?}");
        let first = parse_game(games[0].1.as_bytes(), &games[0].0, ReadOptions::default()).expect("whole");
        assert_eq!(first.mainline().count(), 4);
        assert_eq!(games[1].0.tags.get("Event"), Some("u"));
    }

    #[test]
    fn a_broken_game_between_two_good_ones() {
        let text = "[Event \"1\"]\n\n1. e4 *\n\n[Event \"2\"]\n\n1. e4 e5\n2. Ke3 Nc6 *\n\n[Event \"3\"]\n\n1. c4 *\n";
        let games = index(text);
        assert_eq!(
            games.iter().map(|g| g.0.tags.get("Event")).collect::<Vec<_>>(),
            [Some("1"), Some("2"), Some("3")]
        );
        let results: Vec<_> =
            games.iter().map(|(g, bytes)| parse_game(bytes.as_bytes(), g, ReadOptions::default())).collect();
        let whole = super::super::reader::read_all(text);
        assert_eq!(results, whole, "the same trees and the same errors (game number and line)");
        let err = results[1].as_ref().expect_err("2. Ke3 is illegal");
        assert_eq!((err.game, err.line), (2, 8));
    }

    #[test]
    fn no_trailing_newline_a_bom_and_no_tags() {
        let text = "\u{feff}[Event \"bom\"]\n\n1. e4 *\n\n1. d4 d5";
        let games = index(text);
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].0.offset, 3, "the byte-order mark is not part of the game");
        assert_eq!(games[0].0.tags.get("Event"), Some("bom"));
        assert!(games[1].0.tags.is_empty());
        assert_eq!(games[1].1, "1. d4 d5", "the last game runs to the end of the file");
        let last = parse_game(games[1].1.as_bytes(), &games[1].0, ReadOptions::default()).expect("reads");
        assert_eq!(last.mainline().count(), 2);
        assert!(index("").is_empty() && index("\n\n  \n").is_empty());
    }

    #[test]
    fn stops_when_asked_and_reports_read_errors() {
        let text = "1. e4 *\n\n1. d4 *\n\n1. c4 *\n";
        let stop = AtomicBool::new(false);
        let mut seen = 0;
        let result = index_games(text.as_bytes(), &stop, |_, _| {
            seen += 1;
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!((result, seen), (Err(IndexError::Stopped), 1));

        /// Gives its text, then fails.
        struct Failing<'a>(&'a [u8]);
        impl Read for Failing<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Err(io::Error::other("disk gone"));
                }
                self.0.read(buf)
            }
        }
        let mut games = Vec::new();
        let result =
            index_games(Failing(b"1. e4 *\n\n1. d4 *\n\n1. c4"), &stop_never(), |g, _| games.push(g));
        assert!(
            matches!(&result, Err(IndexError::Io { message, .. }) if message.contains("disk gone")),
            "{result:?}"
        );
        assert!(!games.is_empty(), "the games before the failure are indexed");
    }

    fn stop_never() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn reads_a_game_back_from_a_file() {
        let text = "[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4 d5 *\n";
        let games = index_all(text.as_bytes()).expect("indexed");
        let mut file = io::Cursor::new(text.as_bytes().to_vec());
        let tree = read_game(&mut file, &games[1], ReadOptions::default()).expect("reads back");
        assert_eq!((tree.header("Event"), tree.mainline().count()), (Some("b"), 2));
        let mut short = io::Cursor::new(text.as_bytes()[..20].to_vec());
        let err = read_game(&mut short, &games[1], ReadOptions::default()).expect_err("truncated");
        assert!(matches!(err, ReadGameError::Io { game: 2, .. }), "{err}");
    }

    #[test]
    fn errors_of_a_game_read_alone_have_the_file_s_line_and_column() {
        // The second game starts after three spaces: its first line's columns are the file's.
        let pgn = "[Event \"a\"]\n\n1. e4 *\n\n   1. d4 d5 zz *\n\n[Event \"c\"]\n\n1. c4\nc5 what *\n";
        let games = index(pgn);
        assert_eq!(games.len(), 3);
        assert_eq!((games[1].0.line, games[1].0.column), (5, 4));
        let whole = super::super::reader::read_all(pgn);
        for (i, (game, _)) in games.iter().enumerate().skip(1) {
            let alone = parse_game(&pgn.as_bytes()[game.range()], game, ReadOptions::default());
            assert_eq!(alone, whole[i], "game {}", game.number);
        }
        let e = parse_game(&pgn.as_bytes()[games[1].0.range()], &games[1].0, ReadOptions::default())
            .expect_err("zz");
        assert_eq!((e.game, e.line, e.column), (2, 5, Some(13)), "{e}");
        let e = parse_game(&pgn.as_bytes()[games[2].0.range()], &games[2].0, ReadOptions::default())
            .expect_err("what");
        assert_eq!((e.game, e.line, e.column), (3, 10, Some(4)), "{e}");
    }

    #[test]
    fn tags_pack_and_unpack() {
        let tags =
            Tags::from_pairs([("White", "Carlsen, M."), ("Black", ""), ("", "dropped"), ("Odd", "a\0b")]);
        assert_eq!(tags.iter().collect::<Vec<_>>(), [("White", "Carlsen, M."), ("Black", ""), ("Odd", "ab")]);
        assert_eq!((tags.get("Black"), tags.get("Event")), (Some(""), None));
        // Common names take one character, and a value may hold what looks like a code or a name.
        let pairs =
            [("Event", "\u{1}x"), ("Site", ""), ("Oddity", "\u{5}"), ("Board", "Event"), ("O\u{1}k", "v")];
        let tags = Tags::from_pairs(pairs);
        assert_eq!(tags.as_str(), "\u{1}\u{1}x\0\u{2}\0Oddity\0\u{5}\0\u{1e}Event\0Ok\0v\0");
        assert_eq!(tags.iter().collect::<Vec<_>>(), [&pairs[..4], &[("Ok", "v")]].concat());
        assert_eq!(
            (tags.get("Board"), tags.get("Oddity"), tags.get("O\u{1}k")),
            (Some("Event"), Some("\u{5}"), None)
        );
        // A name of control characters only is dropped like an empty one.
        assert!(Tags::from_pairs([("\u{1}\u{2}", "v")]).is_empty());
        // Every coded name packs as its code and reads back.
        for (i, name) in CODED.iter().enumerate() {
            let tags = Tags::from_pairs([(*name, "v"), ("After", "w")]);
            assert_eq!(tags.as_str().len(), 3 + "After\0w\0".len(), "{name}");
            assert_eq!(tags.iter().collect::<Vec<_>>(), [(*name, "v"), ("After", "w")]);
            assert_eq!(name_code(name).map(|c| c as usize), Some(i + 1));
        }
        assert!(CODED.len() <= 31 && (1..CODED.len()).all(|i| !CODED[..i].contains(&CODED[i])));
    }

    #[test]
    fn shared_tags_read_as_before_in_texts_of_bounded_size() {
        let value = "v".repeat(SHARED_BYTES / 3);
        let originals: Vec<Tags> = (0..7)
            .map(|i| match i {
                0 => Tags::default(),
                _ => Tags::from_pairs([("Event", format!("e{i}").as_str()), ("Long", value.as_str())]),
            })
            .collect();
        let mut shared = originals.clone();
        Tags::share(shared.iter_mut());
        assert_eq!(shared, originals);
        for (s, o) in shared.iter().zip(&originals) {
            assert_eq!(s.iter().collect::<Vec<_>>(), o.iter().collect::<Vec<_>>());
        }
        assert!(shared[0].is_empty() && shared[3].get("Event") == Some("e3"));
        // Games share texts, none over the bound unless one game's tags are (about three games a text).
        let mut texts: Vec<*const u8> = shared.iter().map(|t| t.text.as_ptr()).collect();
        texts.dedup();
        assert_eq!(texts.len(), 3, "7 games in 3 texts");
        assert!(shared.iter().all(|t| t.text.len() <= SHARED_BYTES));
        assert!(Arc::ptr_eq(&shared[1].text, &shared[2].text));
        // A game's debug form shows its own tags, not the megabytes it shares.
        assert_eq!(
            format!("{:?}", Tags::from_pairs([("A", "b"), ("White", "c")])),
            r#"{"A": "b", "White": "c"}"#
        );
        assert!(format!("{:?}", shared[1]).len() < SHARED_BYTES / 2);
    }

    /// On real databases (Lichess's export, TWIC) the index keeps a game's tags in far fewer bytes than
    /// the file spends on them: the common names are a byte each.
    #[test]
    fn database_tags_pack_into_a_fraction_of_their_text() {
        // Measured: 392 bytes a game in the file, 199 packed (324 with the names written out) for the
        // Lichess sample; 343, 171 (280) for TWIC's.
        let repo = crate::checkout_dir();
        for file in ["lichess_db_2025-05_sample_1MB.pgn", "twic1599_sample_1MB.pgn"] {
            let bytes = std::fs::read(repo.join("tests/fixtures/pgn").join(file)).expect("fixture");
            let games = index_all(bytes.as_slice()).expect("indexed");
            let pairs = || games.iter().flat_map(|g| g.tags.iter());
            let written: usize = pairs().map(|(n, v)| n.len() + v.len() + "[ \"\"]\n".len()).sum();
            let packed: usize = games.iter().map(|g| g.tags.as_str().len()).sum();
            let share = packed as f64 / written as f64;
            assert!(
                games.len() > 100 && share <= 0.55,
                "{file}: {packed} bytes packed for {written} ({share:.2})"
            );
        }
    }

    /// The index splits every PGN fixture exactly as the whole-file reader does: each game's range, read
    /// alone, gives the same game (or the same error) as reading the whole file.
    #[test]
    fn agrees_with_the_whole_file_reader_on_the_fixtures() {
        let repo = crate::checkout_dir();
        // The project's shared data has more (tournament files, Chess960) when it is there.
        let mut files: Vec<_> = [repo.join("tests/fixtures/pgn"), repo.join("../shared/data/pgn")]
            .into_iter()
            .filter(|d| d.is_dir())
            .collect();
        let mut checked = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files
                    .extend(std::fs::read_dir(&path).expect("fixture dir").map(|e| e.expect("entry").path()));
                continue;
            }
            if path.extension().is_none_or(|e| e != "pgn") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("fixture");
            let whole: Vec<_> = PgnReader::new(bytes.as_slice()).collect();
            let games = index_all(bytes.as_slice()).expect("indexed");
            assert_eq!(games.len(), whole.len(), "{}", path.display());
            for (g, expected) in games.iter().zip(&whole) {
                let got = parse_game(&bytes[g.range()], g, ReadOptions::default());
                assert_eq!(&got, expected, "{} game {}", path.display(), g.number);
                if let (Ok(tree), Ok(whole)) = (&got, expected) {
                    assert_eq!(tree.source(), whole.source(), "{} game {}", path.display(), g.number);
                    let from_tree: Vec<_> =
                        tree.headers().iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                    assert_eq!(
                        g.tags.iter().collect::<Vec<_>>(),
                        from_tree,
                        "{} game {}",
                        path.display(),
                        g.number
                    );
                }
            }
            checked += 1;
        }
        assert!(checked >= 5, "the fixtures were found ({checked})");
    }
}
