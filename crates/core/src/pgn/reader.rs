//! Streaming PGN reader: a [`pgn_reader`] visitor that builds [`GameTree`]s, wrapped in an iterator of
//! per-game results. A game that cannot be read (illegal move, bad FEN, unsupported variant, syntax, a
//! movetext token that is not PGN) becomes one [`GameError`] with its game number, line and (for a token)
//! column; reading goes on with the next game.

use std::io::{Read, Seek};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use pgn_reader::{Nag, RawComment, RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Move, Outcome, Position};

use super::comment::Comment;
use super::movetext::{Malformed, ProblemKind};
use super::tag_line::{TAG_LINE_BYTES, written_tag_len};
use super::tree::{GameTree, MoveRecord, NodeId, null_move};
use super::variant::{StartError, start_position};
use super::window::{Tracked, Window, count_newlines, lock};

/// Options of a [`PgnReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Keep each game's exact source text in its tree (see [`GameTree::source`]), so an unmodified game
    /// is written back byte for byte. Costs one copy of the text in memory per game.
    pub keep_source: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { keep_source: true }
    }
}

/// Why one game could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameErrorKind {
    /// The `Variant` or `FEN` header does not give a chess or Chess960 start position.
    #[error(transparent)]
    Start(#[from] StartError),
    /// A move that is not legal (or not unambiguous) in its position.
    #[error("{number} {san} is {problem} in the position {fen}; correct the move or cut the game there")]
    IllegalMove {
        /// The move number as written before the move (`12.` or `12...`).
        number: String,
        /// The move as read.
        san: String,
        /// "not a legal move" or "ambiguous".
        problem: &'static str,
        /// The position before the move.
        fen: String,
    },
    /// A crazyhouse-style piece drop (`N@f3`), which chess does not have.
    #[error(
        "{number} {san} drops a piece (crazyhouse notation), which is not a chess move; \
         crazyhouse games are not supported"
    )]
    Drop {
        /// The move number as written before the move.
        number: String,
        /// The drop as read.
        san: String,
    },
    /// A null move (`--`, `Z0`) played while in check.
    #[error("{number} null move while in check (position {fen}); a null move cannot leave the king in check")]
    NullMoveInCheck {
        /// The move number as written before the move.
        number: String,
        /// The position before the null move.
        fen: String,
    },
    /// A movetext token that is neither a move, a move number, a NAG, a comment, a variation nor a result
    /// (`pawn`, a stray `}`, `$x`); the parser underneath would pass over it without a word.
    #[error(
        "`{token}` is not PGN (neither a move, a move number, a NAG, a comment, a variation nor a result); \
         correct it or remove it"
    )]
    Unrecognized {
        /// The token as written (cut short when it is long).
        token: String,
    },
    /// PGN syntax that is broken in a way the parser underneath would read past (or split the game at):
    /// a tag pair without its name, value, brackets or quotes, a line break or an unescaped `"` in a
    /// value, a tag after the moves, a `}` outside a comment, unbalanced variations.
    #[error(transparent)]
    Malformed(#[from] Malformed),
    /// A tag pair that would be written longer than [`TAG_LINE_BYTES`] (once its text is decoded, with
    /// each byte that is not UTF-8 as U+FFFD, and escaped): written back, it would not read again.
    #[error(
        "the {name} tag takes {bytes} bytes as PGN, more than the {TAG_LINE_BYTES} a tag line may have; \
         shorten its value"
    )]
    TagTooLong {
        /// The tag's name.
        name: String,
        /// Its length as written.
        bytes: usize,
    },
    /// The PGN syntax is broken (for example an unterminated tag or comment).
    #[error("PGN syntax: {0}")]
    Syntax(String),
    /// The file itself could not be read further; no more games follow.
    #[error("reading the file failed: {0}")]
    Io(String),
}

/// One game that could not be read: its number in the file (from 1), the line where the problem is
/// (from 1; the game's first line when no better place is known), the column of the offending token when
/// there is one, the reason, and what of the game reads before the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("game {game}, line {line}{}: {kind}", at_column(.column))]
pub struct GameError {
    /// The game's number in the file, counting from 1 (games that failed count too).
    pub game: usize,
    /// The line of the offending token, counting from 1.
    pub line: u64,
    /// The column of the offending token's (or character's) first character on its line, counting
    /// characters from 1; `None` where the problem is not one place (a header's value, the file).
    pub column: Option<u32>,
    /// What went wrong.
    pub kind: GameErrorKind,
    /// The game as far as it reads: its headers and the moves, comments and variations before the
    /// offending token, for a token that is not PGN ([`GameErrorKind::Unrecognized`]) or broken syntax
    /// ([`GameErrorKind::Malformed`]); `None` otherwise.
    /// It keeps no source (see [`GameTree::source`]): the game's text is what [`PgnReader::failed_source`]
    /// and a file's index keep.
    pub prefix: Option<Box<GameTree>>,
}

/// `, column N` for an error's message, or nothing.
fn at_column(column: &Option<u32>) -> String {
    column.map(|c| format!(", column {c}")).unwrap_or_default()
}

impl GameError {
    /// Whether the file itself failed (no more games can follow).
    pub fn is_fatal(&self) -> bool {
        matches!(self.kind, GameErrorKind::Io(_))
    }
}

/// Reads games one by one from any byte source; an [`Iterator`] of `Result<GameTree, GameError>`.
///
/// ```
/// use mavboard_core::pgn::PgnReader;
/// let pgn = "[Event \"a\"]\n\n1. e4 e5 2. Qh5 Ke7?? 3. Qxe5# 1-0\n\n[Event \"b\"]\n\n1. e4 e4 *\n";
/// let games: Vec<_> = PgnReader::new(pgn.as_bytes()).collect();
/// assert_eq!(games.len(), 2);
/// assert_eq!(games[0].as_ref().map(|g| g.mainline().count()).ok(), Some(5));
/// let err = games[1].as_ref().expect_err("1... e4 is illegal");
/// assert_eq!((err.game, err.line), (2, 7)); // lines count from the start of the file
/// ```
#[derive(Debug)]
pub struct PgnReader<R: Read> {
    reader: Reader<super::blank_lines::JoinParagraphs<Tracked<R>>>,
    window: Arc<Mutex<Window>>,
    options: ReadOptions,
    games: usize,
    done: bool,
    /// Where the previous game ended in the source.
    prev_end: u64,
    /// The bytes of the game the last [`Iterator::next`] reported as an error (see
    /// [`PgnReader::failed_source`]).
    failed: Option<FailedSource>,
}

/// The exact bytes of a game that could not be read, so a caller can copy it through unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FailedSource {
    /// What stood in the file between the previous game and this one (blank lines, `%` escape lines).
    pub leading: Vec<u8>,
    /// The game's own text, from its first tag (or first movetext token) to where reading stopped (the
    /// offending token); the reader skips the rest of the game as part of what precedes the next game
    /// (see [`GameTree::leading_text`]).
    pub text: Vec<u8>,
}

impl<R: Read> PgnReader<R> {
    /// A reader with default options (game sources kept).
    pub fn new(source: R) -> PgnReader<R> {
        PgnReader::with_options(source, ReadOptions::default())
    }

    /// A reader with the given options.
    pub fn with_options(source: R, options: ReadOptions) -> PgnReader<R> {
        let window = Arc::new(Mutex::new(Window::default()));
        let tracked = Tracked::new(source, Arc::clone(&window));
        // The parser reads through the paragraph joiner; `Tracked` below it records the raw bytes.
        let source = super::blank_lines::JoinParagraphs::new(tracked);
        let reader = Reader::build(source).set_supported_tag_line_length(TAG_LINE_BYTES).finish();
        PgnReader { reader, window, options, games: 0, done: false, prev_end: 0, failed: None }
    }

    /// How many games (read or failed) were met so far.
    pub fn games_seen(&self) -> usize {
        self.games
    }

    /// The exact bytes of the game that the last call of `next` returned as a (non-fatal) error, with
    /// the text before it; `None` after a game that was read, or when the reader keeps no sources
    /// ([`ReadOptions::keep_source`] off). Lets a batch tool copy a broken game through unchanged.
    pub fn failed_source(&self) -> Option<&FailedSource> {
        self.failed.as_ref()
    }

    fn fatal(&mut self, line: u64, message: String) -> GameError {
        self.done = true;
        GameError {
            game: self.games.max(1),
            line,
            column: None,
            kind: GameErrorKind::Io(message),
            prefix: None,
        }
    }

    fn position(&mut self) -> u64 {
        // Tracked reports its position infallibly and the reader only subtracts what it has buffered.
        self.reader.stream_position().unwrap_or(0)
    }

    /// Whether another game follows: skips what the parser fails on while it looks for one, and fails
    /// (fatally) when the file cannot be read or the parser makes no progress.
    fn has_game(&mut self) -> Result<bool, GameError> {
        let mut last_start = None;
        loop {
            match self.reader.has_more() {
                Ok(more) => return Ok(more),
                Err(e) => {
                    let failure = lock(&self.window).failure.take();
                    let here = self.position();
                    if let Some(message) = failure {
                        let line = lock(&self.window).advance_to(here, here);
                        return Err(self.fatal(line, message));
                    }
                    // A syntax error while skipping the rest of a failed game: the reader has moved past
                    // the offending line, so try again (unless nothing moved).
                    if last_start == Some(here) {
                        let line = lock(&self.window).advance_to(here, here);
                        return Err(self.fatal(line, e.to_string()));
                    }
                    last_start = Some(here);
                }
            }
        }
    }

    /// Reads the next game: `None` when there is none, else the game or its error.
    fn next_game(&mut self) -> Option<Result<GameTree, GameError>> {
        match self.has_game() {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        }
        let start = self.position();
        self.games += 1;
        let leading_bytes = if self.options.keep_source {
            Some(lock(&self.window).range(self.prev_end, start).to_vec())
        } else {
            None
        };
        let leading = leading_bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok()).map(str::to_owned);
        let start_line = lock(&self.window).advance_to(start, start);
        let outcome = self.reader.read_game(&mut Builder);
        let end = self.position();
        self.prev_end = end;
        let window = lock(&self.window);
        let game = GameText { window: &window, text: window.range(start, end), start, start_line };
        let outcome = match outcome {
            Ok(None) => {
                drop(window);
                self.done = true;
                return None;
            }
            Err(e) => match window.failure.clone() {
                Some(message) => {
                    let line = start_line + count_newlines(game.text);
                    drop(window);
                    return Some(Err(self.fatal(line, message)));
                }
                None => Err(e),
            },
            Ok(Some(read)) => Ok(read),
        };
        // The parser passes over tokens that are not PGN without a word: the first one is the game's error,
        // unless an error the parser met comes before it.
        let result = match super::movetext::first_problem(game.text) {
            Some(problem) => Err(game.problem_error(self.games, problem)),
            None => game.result(self.games, outcome, self.options.keep_source, leading),
        };
        if let (Err(_), Some(leading)) = (&result, leading_bytes) {
            self.failed = Some(FailedSource { leading, text: game.text.to_vec() });
        }
        Some(result)
    }
}

/// One game's text as the reader met it, with where it starts in the source and on which line.
struct GameText<'a> {
    /// The window the text is in (for columns).
    window: &'a Window,
    /// The game's text.
    text: &'a [u8],
    /// Its offset in the source.
    start: u64,
    /// Its first line, counting from 1.
    start_line: u64,
}

impl GameText<'_> {
    /// The line and column of byte `at` of the game's text.
    fn place(&self, at: usize) -> (u64, u32) {
        let at = at.min(self.text.len());
        (self.start_line + count_newlines(&self.text[..at]), self.window.column(self.start + at as u64))
    }

    /// The error of game number `game` for its first `problem` (a token that is not PGN, or broken
    /// syntax), with the game as far as it reads before it.
    fn problem_error(&self, game: usize, problem: super::movetext::Problem) -> GameError {
        let text = self.text;
        let (line, column) = self.place(problem.at.start);
        let readable = ReadOptions { keep_source: false };
        // Nothing before the problem (not even a tag) reads as an empty game, and so does a game whose
        // problem is at its very end (a tag without its `]`): its prefix would be itself.
        let prefix = (problem.at.start < text.len())
            .then(|| PgnReader::with_options(&text[..problem.at.start], readable).next())
            .flatten()
            .and_then(Result::ok)
            .unwrap_or_default();
        let kind = match problem.kind {
            ProblemKind::Unrecognized => {
                GameErrorKind::Unrecognized { token: super::movetext::token_text(&text[problem.at]) }
            }
            ProblemKind::Malformed(malformed) => GameErrorKind::Malformed(malformed),
        };
        GameError { game, line, column: Some(column), kind, prefix: Some(Box::new(prefix)) }
    }

    /// Game number `game` as the parser read it (`outcome`): its tree (with its source and `leading`, the
    /// text before it, when `keep_source`), or its error.
    fn result(
        &self,
        game: usize,
        outcome: std::io::Result<Result<GameTree, Failure>>,
        keep_source: bool,
        leading: Option<String>,
    ) -> Result<GameTree, GameError> {
        let text = self.text;
        match outcome {
            Ok(Ok(mut tree)) => {
                if keep_source {
                    tree.set_source(std::str::from_utf8(text).ok().map(str::to_owned), leading);
                }
                Ok(tree)
            }
            Ok(Err(failure)) => {
                let (line, column) = match failure.at {
                    FailAt::Token => {
                        let (line, column) = self.place(super::movetext::token_start(text, text.len()));
                        (line, Some(column))
                    }
                    FailAt::Tag(name) => {
                        (tag_line(text, &name).map_or(self.start_line, |l| self.start_line + l), None)
                    }
                };
                Err(GameError { game, line, column, kind: failure.kind, prefix: None })
            }
            Err(e) => Err(GameError {
                game,
                line: self.start_line + count_newlines(text),
                column: None,
                kind: GameErrorKind::Syntax(e.to_string()),
                prefix: None,
            }),
        }
    }
}

/// The line offset (0 = first line of `text`) of the header `[name ...`.
fn tag_line(text: &[u8], name: &str) -> Option<u64> {
    text.split(|&b| b == b'\n')
        .position(|l| {
            l.trim_ascii_start().strip_prefix(b"[").is_some_and(|rest| rest.starts_with(name.as_bytes()))
        })
        .map(|i| i as u64)
}

impl<R: Read> Iterator for PgnReader<R> {
    type Item = Result<GameTree, GameError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.failed = None;
        if self.done {
            return None;
        }
        self.next_game()
    }
}

// ----- the visitor -----

/// Where a failure was detected, for its line number.
#[derive(Debug)]
enum FailAt {
    /// At the token the reader has just consumed.
    Token,
    /// At the header with this name.
    Tag(String),
}

#[derive(Debug)]
struct Failure {
    kind: GameErrorKind,
    at: FailAt,
}

/// Builds one [`GameTree`] per game.
#[derive(Debug)]
struct Builder;

/// Saved state of the line that a `(` interrupted.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // frames live on a short stack; boxing would cost an allocation each
enum Frame {
    Line {
        cur: NodeId,
        pos: Chess,
        prev: Chess,
    },
    /// A variation that was skipped (it had no move to be an alternative to).
    Skipped,
}

#[derive(Debug)]
struct Building {
    tree: GameTree,
    mode: CastlingMode,
    /// The last node of the line being read.
    cur: NodeId,
    /// The position after `cur`.
    pos: Chess,
    /// The position before `cur` (where a variation of `cur` starts).
    prev: Chess,
    stack: Vec<Frame>,
    /// True right after `(`, before the variation's first move.
    var_start: bool,
    /// Comments read at the start of a variation, for its first move.
    pending: Vec<Comment>,
    /// A comment longer than the reader's buffer, being assembled.
    partial: Vec<u8>,
    result: Option<Outcome>,
}

fn move_number(pos: &Chess) -> String {
    match pos.turn() {
        Color::White => format!("{}.", pos.fullmoves()),
        Color::Black => format!("{}...", pos.fullmoves()),
    }
}

fn fen_of(pos: &Chess) -> String {
    shakmaty::fen::Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// A long-algebraic/UCI token such as `g1f3` reads as a pawn move with a full origin square; try it
/// as UCI when the SAN reading is not legal.
fn uci_fallback(san: San, pos: &Chess) -> Option<Move> {
    if let San::Normal {
        role: shakmaty::Role::Pawn, file: Some(file), rank: Some(rank), to, promotion, ..
    } = san
    {
        let from = shakmaty::Square::from_coords(file, rank);
        let uci = UciMove::Normal { from, to, promotion };
        return uci.to_move(pos).ok();
    }
    None
}

impl Building {
    fn fail(kind: GameErrorKind) -> ControlFlow<Result<GameTree, Failure>> {
        ControlFlow::Break(Err(Failure { kind, at: FailAt::Token }))
    }

    fn play(&mut self, san_plus: SanPlus) -> ControlFlow<Result<GameTree, Failure>> {
        let text = || san_plus.to_string();
        let mv = match san_plus.san {
            San::Null => None,
            San::Put { .. } => {
                return Building::fail(GameErrorKind::Drop { number: move_number(&self.pos), san: text() });
            }
            san => match san.to_move(&self.pos) {
                Ok(m) => Some(m),
                Err(e) => match uci_fallback(san, &self.pos) {
                    Some(m) => Some(m),
                    None => {
                        let problem = match e {
                            SanError::AmbiguousSan => "ambiguous",
                            SanError::IllegalSan => "not a legal move",
                        };
                        return Building::fail(GameErrorKind::IllegalMove {
                            number: move_number(&self.pos),
                            san: text(),
                            problem,
                            fen: fen_of(&self.pos),
                        });
                    }
                },
            },
        };
        let next = match mv {
            Some(m) => {
                let mut next = self.pos.clone();
                next.play_unchecked(m);
                next
            }
            None => match null_move(self.pos.clone(), self.mode) {
                Ok(next) => next,
                Err(_) => {
                    return Building::fail(GameErrorKind::NullMoveInCheck {
                        number: move_number(&self.pos),
                        fen: fen_of(&self.pos),
                    });
                }
            },
        };
        let id = self.tree.push_child(self.cur, MoveRecord { san: san_plus, mv });
        if !self.pending.is_empty() {
            self.tree.node_mut_unchecked(id).comments_before_mut().append(&mut self.pending);
        }
        self.prev = std::mem::replace(&mut self.pos, next);
        self.cur = id;
        self.var_start = false;
        ControlFlow::Continue(())
    }
}

impl Visitor for Builder {
    type Tags = Vec<(String, String)>;
    type Movetext = Building;
    type Output = Result<GameTree, Failure>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::with_capacity(16))
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let too_long =
            tags.iter().map(|(n, v)| (n, written_tag_len(n, v))).find(|&(_, b)| b > TAG_LINE_BYTES);
        if let Some((name, bytes)) = too_long {
            let kind = GameErrorKind::TagTooLong { name: name.clone(), bytes };
            return ControlFlow::Break(Err(Failure { kind, at: FailAt::Tag(name.clone()) }));
        }
        let find = |name: &str| tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let start = match start_position(find("Variant"), find("FEN")) {
            Ok(start) => start,
            Err(e) => {
                let at = FailAt::Tag(
                    if matches!(e, StartError::UnsupportedVariant(_)) { "Variant" } else { "FEN" }.to_owned(),
                );
                return ControlFlow::Break(Err(Failure { kind: GameErrorKind::Start(e), at }));
            }
        };
        let pos = start.position().clone();
        let mode = start.castling_mode();
        ControlFlow::Continue(Building {
            tree: GameTree::from_start(tags, start),
            mode,
            cur: NodeId::ROOT,
            prev: pos.clone(),
            pos,
            stack: Vec::new(),
            var_start: false,
            pending: Vec::new(),
            partial: Vec::new(),
            result: None,
        })
    }

    fn san(&mut self, movetext: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        movetext.play(san_plus)
    }

    fn nag(&mut self, movetext: &mut Self::Movetext, nag: Nag) -> ControlFlow<Self::Output> {
        movetext.tree.node_mut_unchecked(movetext.cur).nags_mut().push(nag);
        ControlFlow::Continue(())
    }

    fn partial_comment(
        &mut self,
        movetext: &mut Self::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        movetext.partial.extend_from_slice(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        movetext: &mut Self::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        let text = if movetext.partial.is_empty() {
            String::from_utf8_lossy(comment.as_bytes()).into_owned()
        } else {
            movetext.partial.extend_from_slice(comment.as_bytes());
            let whole = std::mem::take(&mut movetext.partial);
            String::from_utf8_lossy(&whole).into_owned()
        };
        let comment = Comment::from_read(text);
        if movetext.var_start {
            movetext.pending.push(comment);
        } else {
            movetext.tree.node_mut_unchecked(movetext.cur).comments_after_mut().push(comment);
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, movetext: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        let parent = movetext.tree.node(movetext.cur).and_then(|n| n.parent());
        match parent {
            Some(parent) if !movetext.var_start => {
                let pos = std::mem::replace(&mut movetext.pos, movetext.prev.clone());
                let prev = movetext.prev.clone();
                movetext.stack.push(Frame::Line { cur: movetext.cur, pos, prev });
                movetext.cur = parent;
                movetext.var_start = true;
                ControlFlow::Continue(Skip(false))
            }
            _ => {
                movetext.stack.push(Frame::Skipped);
                ControlFlow::Continue(Skip(true))
            }
        }
    }

    fn end_variation(&mut self, movetext: &mut Self::Movetext) -> ControlFlow<Self::Output> {
        if let Some(Frame::Line { cur, pos, prev }) = movetext.stack.pop() {
            if !movetext.pending.is_empty() {
                // A variation with comments but no move: keep the comments on the move before it.
                let parent = movetext.cur;
                let mut pending = std::mem::take(&mut movetext.pending);
                movetext.tree.node_mut_unchecked(parent).comments_after_mut().append(&mut pending);
            }
            movetext.cur = cur;
            movetext.pos = pos;
            movetext.prev = prev;
            movetext.var_start = false;
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, movetext: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        if movetext.stack.is_empty() {
            movetext.result = Some(outcome);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mut movetext: Self::Movetext) -> Self::Output {
        if !movetext.pending.is_empty() {
            let cur = movetext.cur;
            let mut pending = std::mem::take(&mut movetext.pending);
            movetext.tree.node_mut_unchecked(cur).comments_after_mut().append(&mut pending);
        }
        let result = movetext
            .result
            .or_else(|| movetext.tree.header("Result").and_then(|r| r.trim().parse().ok()))
            .unwrap_or(Outcome::Unknown);
        movetext.tree.set_result(result);
        Ok(movetext.tree)
    }
}

/// Reads every game of an in-memory PGN text (a convenience over [`PgnReader`]).
pub fn read_all(text: &str) -> Vec<Result<GameTree, GameError>> {
    PgnReader::new(text.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variations_comments_and_nags() {
        let pgn = "[Event \"t\"]\n\n{start} 1. e4 $1 {good} (1. d4 d5 (1... Nf6 {indian}) 2. c4) ( {before} 1. c4) \
                   1... e5 2. Nf3 -- 3. Bc4 *\n";
        let games = read_all(pgn);
        let tree = games[0].as_ref().expect("valid game");
        assert_eq!(tree.root().comments_after()[0].raw(), "start");
        let main: Vec<_> = tree.mainline().filter_map(|id| tree.node(id)?.san_text()).collect();
        assert_eq!(main, ["e4", "e5", "Nf3", "--", "Bc4"]);
        let first = tree.root().children();
        assert_eq!(first.len(), 3);
        let e4 = tree.node(first[0]).expect("e4");
        assert_eq!(e4.nags(), &[Nag(1)]);
        assert_eq!(e4.comments_after()[0].raw(), "good");
        let d4 = tree.node(first[1]).expect("d4");
        assert_eq!(tree.node(d4.children()[0]).expect("d5").san_text().as_deref(), Some("d5"));
        assert_eq!(d4.children().len(), 2);
        let c4 = tree.node(first[2]).expect("c4");
        assert_eq!(c4.comments_before()[0].raw(), "before");
        assert_eq!(tree.result(), Outcome::Unknown);
    }

    #[test]
    fn a_fen_header_with_characters_that_are_not_fen_is_an_error_not_a_position() {
        // Found by fuzzing: this header read as a position with fullmove 4294967295, and the game written
        // back (control characters as spaces) did not read again.
        let pgn = "[Event \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 \
                   55555555555555555555555\u{1}\u{1}\"]\n\n1. e4 *\n\n[Event \"2\"]\n\n1. d4 *\n";
        let games = read_all(pgn);
        assert_eq!(games.len(), 2);
        let e = games[0].as_ref().expect_err("not FEN");
        assert_eq!((e.game, e.line), (1, 2));
        assert!(matches!(e.kind, GameErrorKind::Start(StartError::FenSyntax { .. })), "{e}");
        assert!(games[1].is_ok());
    }

    #[test]
    fn errors_keep_other_games_and_name_the_line() {
        let pgn = "[Event \"1\"]\n\n1. e4 e5 1-0\n\n[Event \"2\"]\n[FEN \"bad\"]\n\n1. e4 *\n\n\
                   [Event \"3\"]\n\n1. e4 e5\n2. Ke3 *\n\n[Event \"4\"]\n[Variant \"Crazyhouse\"]\n\n1. e4 *\n\n\
                   [Event \"5\"]\n\n1. e4 d5 2. exd5 N@f6 *\n\n[Event \"6\"]\n\n1. d4 *\n";
        let games = read_all(pgn);
        assert_eq!(games.len(), 6);
        assert!(games[0].is_ok() && games[5].is_ok());
        let e = games[1].as_ref().expect_err("bad fen");
        assert_eq!((e.game, e.line), (2, 6));
        assert!(matches!(e.kind, GameErrorKind::Start(StartError::FenSyntax { .. })));
        let e = games[2].as_ref().expect_err("illegal");
        assert_eq!((e.game, e.line, e.column), (3, 13, Some(4)));
        assert!(e.to_string().contains("2. Ke3 is not a legal move"), "{e}");
        let e = games[3].as_ref().expect_err("variant");
        assert_eq!((e.game, e.line), (4, 16));
        let e = games[4].as_ref().expect_err("drop");
        assert!(matches!(e.kind, GameErrorKind::Drop { .. }), "{e}");
        assert_eq!(e.line, 22);
    }

    #[test]
    fn failed_games_keep_their_bytes() {
        let bad = "[Event \"2\"]\n\n1. e4 e4 *\n";
        let pgn = format!("[Event \"1\"]\n\n1. e4 *\n\n% escape\n{bad}\n[Event \"3\"]\n\n1. d4 *\n");
        let mut reader = PgnReader::new(pgn.as_bytes());
        assert!(reader.next().is_some_and(|g| g.is_ok()));
        assert!(reader.failed_source().is_none());
        assert!(reader.next().is_some_and(|g| g.is_err()));
        let failed = reader.failed_source().expect("kept");
        assert_eq!(String::from_utf8_lossy(&failed.leading), "\n% escape\n");
        // Reading stops at the bad move; the rest of the game is skipped with what precedes the next one.
        assert_eq!(String::from_utf8_lossy(&failed.text), "[Event \"2\"]\n\n1. e4 e4");
        let third = reader.next().and_then(Result::ok).expect("third game");
        assert!(reader.failed_source().is_none());
        assert_eq!(third.leading_text(), Some(" *\n\n"));
    }

    #[test]
    fn blank_lines_inside_movetext_do_not_split_a_game() {
        // A comment in its own paragraph, blank lines before the first move, inside a variation and before
        // the result; then a broken game with a blank line, which must not take its neighbours down.
        let first =
            "[Event \"t\"]\n\n1. e4 e5 2. Nf3\n\n{A comment in its own paragraph.}\n\n2... Nc6 3. Bb5 *";
        let second = "[Event \"u\"]\n\n\n1. d4\n\n(1. c4 c5\n\n2. Nc3)\n\n1... d5\n\n1/2-1/2";
        let broken = "[Event \"v\"]\n\n1. e4\n\n1... e4 *";
        let last = "[Event \"w\"]\n\n1. c4 *";
        let pgn = format!("{first}\n\n{second}\n\n{broken}\n\n{last}\n");
        let games = read_all(&pgn);
        assert_eq!(games.len(), 4, "{games:?}");
        let t = games[0].as_ref().expect("the first game reads whole");
        assert_eq!(t.mainline().count(), 5);
        assert_eq!(t.source().map(str::trim_end), Some(first), "the source keeps its blank lines");
        let u = games[1].as_ref().expect("the second game reads whole");
        assert_eq!(u.mainline().count(), 2);
        assert_eq!(u.result(), Outcome::Known(shakmaty::KnownOutcome::Draw));
        let e = games[2].as_ref().expect_err("illegal");
        assert_eq!((e.game, e.line), (3, 26), "{e}");
        assert_eq!(games[3].as_ref().expect("the last game").header("Event"), Some("w"));
    }

    #[test]
    fn tokens_that_are_not_pgn_are_errors_with_line_column_and_prefix() {
        // The issue's example: read as `1. e4` with no error before.
        let games = read_all("1. pawn goes to e4 *");
        let e = games[0].as_ref().expect_err("`pawn` is not PGN");
        assert_eq!((e.game, e.line, e.column), (1, 1, Some(4)));
        assert_eq!(e.kind, GameErrorKind::Unrecognized { token: "pawn".to_owned() });
        assert_eq!(e.prefix.as_ref().map(|p| p.mainline().count()), Some(0));
        assert!(e.to_string().starts_with("game 1, line 1, column 4: `pawn` is not PGN"), "{e}");
        // A byte order mark is not a column; CRLF line ends and characters before the token are counted
        // as characters.
        let games = read_all(
            "\u{feff}1. d4 ?? zz *\r\n\r\n[Event \"é\"]\r\n\r\n1. e4 {é} e5 §x *\r\n\r\n1. c4 *\r\n",
        );
        assert_eq!(games.len(), 3);
        let e = games[0].as_ref().expect_err("zz");
        assert_eq!((e.line, e.column), (1, Some(10)), "{e}");
        let e = games[1].as_ref().expect_err("§x");
        assert_eq!((e.game, e.line, e.column), (2, 5, Some(14)), "{e}");
        assert_eq!(e.kind, GameErrorKind::Unrecognized { token: "§x".to_owned() });
        let prefix = e.prefix.as_ref().expect("prefix");
        assert_eq!(prefix.header("Event"), Some("é"));
        assert_eq!(prefix.mainline().count(), 2);
        assert!(games[2].is_ok());
    }

    #[test]
    fn the_first_problem_in_the_text_is_the_error() {
        // A word before an illegal move: the word; an illegal move before a word: the move, with its column.
        let games = read_all("1. e4 e5 huh 2. Ke3 *\n\n1. e4 e5 2. Ke3 huh *\n");
        let e = games[0].as_ref().expect_err("word");
        assert!(matches!(&e.kind, GameErrorKind::Unrecognized { token } if token == "huh"), "{e}");
        let e = games[1].as_ref().expect_err("illegal");
        assert!(matches!(e.kind, GameErrorKind::IllegalMove { .. }), "{e}");
        assert_eq!((e.line, e.column), (3, Some(13)), "{e}");
        assert!(e.prefix.is_none());
        // A long token is quoted short; a failed game keeps all of its bytes.
        let long = "x".repeat(500);
        let pgn = format!("[Event \"a\"]\n\n1. e4 {long} e5 *\n\n[Event \"b\"]\n\n1. d4 *\n");
        let mut reader = PgnReader::new(pgn.as_bytes());
        let e = reader.next().expect("a game").expect_err("long word");
        assert!(
            matches!(&e.kind, GameErrorKind::Unrecognized { token } if token.chars().count() == 41),
            "{e}"
        );
        let failed = reader.failed_source().expect("kept");
        assert_eq!(
            String::from_utf8_lossy(&failed.text).trim_end(),
            format!("[Event \"a\"]\n\n1. e4 {long} e5 *")
        );
        assert!(reader.next().is_some_and(|g| g.is_ok()));
    }

    #[test]
    fn uci_movetext_and_source_kept() {
        let pgn = "[Event \"u\"]\n\ng1f3 c7c5 e2e4 *\n";
        let games = read_all(pgn);
        let tree = games[0].as_ref().expect("uci accepted");
        assert_eq!(tree.mainline().count(), 3);
        assert_eq!(tree.source(), Some(pgn));
    }

    // Found by fuzzing (fuzz/fuzz_targets/pgn.rs): bytes that are not UTF-8 in a tag value are read as
    // U+FFFD, three bytes each, so a tag line under the reader's limit was written back over it, and the
    // written game read as two.
    #[test]
    fn a_tag_too_long_to_write_back_is_an_error_and_one_that_fits_writes_back() {
        let mut pgn = b"[Event \"e\"]\n[White \"".to_vec();
        pgn.extend(std::iter::repeat_n(0xb4u8, 1400));
        pgn.extend_from_slice(b"\"]\n\n1. e4 *\n\n[Event \"next\"]\n\n1. d4 *\n");
        let games: Vec<_> = PgnReader::new(pgn.as_slice()).collect();
        assert_eq!(games.len(), 2);
        let e = games[0].as_ref().expect_err("written, the White tag would be 4,211 bytes");
        assert_eq!(e.kind, GameErrorKind::TagTooLong { name: "White".into(), bytes: 4211 }, "{e}");
        assert_eq!((e.game, e.line), (1, 2));
        assert!(e.to_string().contains("shorten"), "{e}");
        assert!(games[1].is_ok());
        // The longest value that fits: its line is TAG_LINE_BYTES long as written, and reads back.
        let room = TAG_LINE_BYTES - "[White \"\"]\n".len();
        let value = "\u{e9}".repeat(room / 2) + &"x".repeat(room % 2);
        let pgn = format!("[White \"{value}\"]\n\n1. e4 *\n");
        let tree = read_all(&pgn).remove(0).expect("fits");
        let written = super::super::writer::game_to_string(&tree, &Default::default());
        assert_eq!(written.lines().next().map(|l| l.len() + 1), Some(TAG_LINE_BYTES));
        let again = read_all(&written);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].as_ref().map(|t| t.header("White") == Some(value.as_str())), Ok(true));
    }
}
