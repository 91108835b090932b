//! What goes into and comes out of an [`crate::engine::Engine`]: commands, events, limits and errors.

use std::sync::Arc;
use std::time::Duration;

use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use crate::search::SearchError;
use crate::search::mcts::{MctsParams, MctsSnapshot, MoveStats};

/// An evaluator of `S` positions (chess by default) the engine can move to one of its inference workers.
pub type EvaluatorBox<S = ChessState> = Box<dyn Evaluator<S> + Send>;

/// Why a factory could not build an evaluator (any error type, kept with its message).
pub type FactoryError = Box<dyn std::error::Error + Send + Sync>;

/// Builds one evaluator per inference worker; called on that worker's thread with the worker's number.
pub type EvaluatorFactory<S = ChessState> =
    Arc<dyn Fn(usize) -> Result<EvaluatorBox<S>, FactoryError> + Send + Sync>;

/// Called after every event is sent, so a GUI can wake up and drain the channel.
pub type Repaint = Arc<dyn Fn() + Send + Sync>;

/// When a search stops by itself. With nothing set it runs until [`Command::Stop`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GoLimits {
    /// Stop after this many simulations (counted from this `go`; reused ones do not count).
    pub simulations: Option<u64>,
    /// Stop after this much time.
    pub movetime: Option<Duration>,
    /// Stop once the principal variation is this many plies long, or ends the game sooner (UCI `go depth`).
    pub depth: Option<u32>,
    /// Stop once the principal variation wins in at most this many moves of the side to move, i.e. ends in
    /// a won finished game (checkmate in chess) within `2 × mate − 1` plies (UCI `go mate`).
    pub mate: Option<u32>,
    /// Ignore the other limits and search until stopped.
    pub infinite: bool,
    /// How long a stop (or the end of the move time) may wait for the root's first evaluation, at most
    /// the evaluation timeout; `None`: half a second. A clock gives what it can spare (UCI `wtime`).
    pub stop_grace: Option<Duration>,
}

/// How the search thread works (not search semantics, which are [`MctsParams`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// b: passes (and at most this many evaluations) per batch sent to one inference worker.
    pub batch_size: usize,
    /// t0: an evaluation not back within this time is abandoned (its leaf may be chosen again).
    pub eval_timeout: Duration,
    /// How often a [`Event::Info`] is sent while searching.
    pub info_interval: Duration,
    /// Model answers the engine keeps for search requests met again (0: no cache). A chess answer holds
    /// a 64-bucket distribution per legal move, 15–25 KB in a middlegame, so the default 2048 entries take
    /// up to about 50 MB. A new value empties the cache.
    pub cache_entries: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            batch_size: 16,
            eval_timeout: Duration::from_secs(10),
            info_interval: Duration::from_millis(100),
            cache_entries: 2048,
        }
    }
}

/// A command to the engine thread of an engine for `S` positions (chess by default).
pub enum Command<S: GameState = ChessState> {
    /// The position to search: a start position and the moves played from it (the game's move notation,
    /// [`GameState::parse_action`]: UCI for chess). When the new position extends the previous one by some
    /// moves, the search tree is kept for the new root (tree reuse). A running search is stopped first (its
    /// [`Event::Done`] is sent).
    SetPosition {
        /// The game's start position.
        start: S,
        /// The moves played since, in the game's notation.
        moves: Vec<String>,
    },
    /// Starts searching the current position. Exactly one [`Event::Done`] answers every `Go` (with no move
    /// when the search could not run). A running search is stopped first.
    Go {
        /// When to stop.
        limits: GoLimits,
        /// The search settings.
        params: MctsParams,
    },
    /// Stops the running search; its [`Event::Done`] follows at once.
    Stop,
    /// Changes the search settings; a running search uses them from its next batch.
    SetParams(MctsParams),
    /// Changes how the search thread works.
    SetConfig(EngineConfig),
    /// Replaces the evaluators: `workers` inference threads, each building its evaluator with `factory`.
    /// Loading runs on a background thread; [`Event::EvaluatorReady`] or an [`Event::Error`] follows. A `Go`
    /// sent meanwhile waits for the load.
    LoadEvaluator {
        /// Builds one evaluator per worker.
        factory: EvaluatorFactory<S>,
        /// How many inference workers (at least 1).
        workers: usize,
    },
    /// Evaluates `requests` on the inference workers, beside any search and without touching it (a new
    /// position does not cancel it): one [`Event::Evaluated`] with the same `tag` answers, with one result
    /// per request in order. Used for whole-game review, where every position is valued in one batch.
    Evaluate {
        /// The caller's label for the answer.
        tag: u64,
        /// The positions and what to ask of each.
        requests: Vec<EvalRequest<S>>,
    },
    /// The tree explorer: the statistics of the children of the node reached by `path` (moves in the
    /// game's notation from the search tree's root), answered at once by [`Event::Explored`] with the same `tag`, whether
    /// or not a search is running.
    Explore {
        /// The caller's label for the answer.
        tag: u64,
        /// The moves from the root; empty for the root's own children.
        path: Vec<String>,
    },
    /// A new game: stops the running search (its [`Event::Done`] is sent) and forgets the search tree and
    /// the engine's cache of model answers, so nothing from earlier positions is reused (UCI `ucinewgame`).
    NewGame,
    /// Ends the engine thread.
    Quit,
}

/// A search's state as sent in events.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchReport {
    /// The whole search as data.
    pub snapshot: MctsSnapshot,
    /// Time since the `go`.
    pub elapsed: Duration,
    /// Simulations done since the `go` (without those kept by tree reuse).
    pub simulations: u64,
    /// Evaluations answered from the engine's cache since the `go` (no model call).
    pub cache_hits: u64,
    /// Model answers the engine's cache holds now.
    pub cache_used: usize,
    /// How many it can hold ([`EngineConfig::cache_entries`]).
    pub cache_capacity: usize,
}

/// What an engine for `S` positions (chess by default) reports.
#[derive(Debug, Clone)]
pub enum Event<S: GameState = ChessState> {
    /// The running search, about every [`EngineConfig::info_interval`].
    Info(SearchReport),
    /// A search ended (limit reached, stopped, or could not go on).
    Done {
        /// The final state; `None` when no search ran (no evaluator, root not evaluable).
        report: Option<SearchReport>,
        /// The move to play in the game's notation (UCI for chess), when there is one.
        best_move: Option<String>,
    },
    /// New evaluators are loaded and in use.
    EvaluatorReady {
        /// The number of inference workers.
        workers: usize,
    },
    /// The answer to [`Command::Evaluate`]: one result per request, in order. When no model is loaded,
    /// or the model was replaced before the answer, every result is an error saying so.
    Evaluated {
        /// The command's tag.
        tag: u64,
        /// The results.
        results: Vec<Result<EvalResult<S>, EvalError>>,
    },
    /// The answer to [`Command::Explore`].
    Explored {
        /// The command's tag.
        tag: u64,
        /// The search tree's root position (text encoding), `None` when there is no tree.
        root: Option<String>,
        /// The path asked for.
        path: Vec<String>,
        /// The children's statistics, most visited first, or why there are none (no tree, or the path
        /// leaves the tree).
        children: Result<Vec<MoveStats>, ExploreError>,
    },
    /// Something failed; the engine goes on serving.
    Error(EngineError),
}

/// Why the search tree's explorer got no children for a path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExploreError {
    /// No search has built a tree from the position.
    #[error("no search has run from this position yet")]
    NoTree,
    /// A move of the path cannot be played where it stands.
    #[error("{text} is not a legal move there: {reason}")]
    IllegalMove {
        /// The move as given.
        text: String,
        /// Why it cannot be played.
        reason: crate::game::ActionError,
    },
    /// The path leaves the tree.
    #[error(transparent)]
    Tree(#[from] SearchError),
}

/// What can go wrong in the engine (reported as [`Event::Error`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// A search was asked for before any evaluator was loaded.
    #[error("no model is loaded: load one before searching")]
    NoEvaluator,
    /// Loading the evaluators failed.
    #[error("could not load the model: {0}")]
    Load(String),
    /// An evaluator panicked; its worker rebuilt it and the engine goes on.
    #[error("the model evaluator crashed: {0}")]
    EvaluatorPanicked(String),
    /// The model could not evaluate the root position, so the search stopped.
    #[error("the search stopped: {0}")]
    Search(#[from] SearchError),
    /// A move of [`Command::SetPosition`] is not legal; the position was not changed.
    #[error("move {index} ({text}) of the position cannot be played: {reason}")]
    IllegalMove {
        /// Its 0-based index in the move list.
        index: usize,
        /// The move as given.
        text: String,
        /// Why.
        reason: String,
    },
    /// An invalid setting.
    #[error("invalid engine setting: {0}")]
    Config(String),
    /// The engine thread could not be started or has ended.
    #[error("the engine thread is not running: {0}")]
    Thread(String),
}
