//! Model evaluation: a model against Stockfish labels and Lichess puzzles (`mavboard eval`).

pub mod compare;
pub mod internal;
pub mod metrics;
pub mod move_matching;
pub mod plot;
pub mod puzzles;
pub mod run;

pub use run::{EvalReport, eval_labels, eval_puzzles};
