//! Game review: every main-line position of a game valued by the model (alone, or with an MCTS per move),
//! the move played compared with the best move, win-probability loss classified by Lichess's thresholds,
//! per-player accuracy by Lichess's formula, game phases, and the annotated PGN (`[%eval]`, `?!`/`?`/`??`,
//! best-move comments) that keeps every original byte. Batches over whole files resume after an
//! interruption.
//!
//! - [`game`]: [`review_game`], one game → [`GameReview`].
//! - [`annotate`]: writing a review into its game tree and text.
//! - [`batch`]: [`review_file`], a whole file on the engine's worker pool, resumable; [`job`] is one
//!   game's work on a worker, `output` the partial files and the report.
//! - [`classify`], [`accuracy`], [`eval_text`], [`phase`]: the formulas.
//! - [`report`]: the review as serde data (the JSON report, the eval graph).
//! - [`resume`]: the resume state and atomic file writes.

pub mod accuracy;
pub mod annotate;
pub mod batch;
pub mod batch_settings;
pub mod classify;
pub mod error;
pub mod eval_text;
pub mod game;
pub mod job;
pub mod judge;
pub mod options;
mod output;
pub mod phase;
pub mod report;
pub mod resume;

pub use batch::{BatchEnd, BatchOptions, BatchPaths, BatchSummary, Progress, review_file};
pub use classify::{Classification, Thresholds};
pub use error::ReviewError;
pub use game::review_game;
pub use options::ReviewOptions;
pub use report::{GameReview, MoveReview, PlayerSummary};
