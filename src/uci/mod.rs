//! UCI: talking to chess engines over the Universal Chess Interface.
//!
//! [`client`] runs any UCI engine (Stockfish, or another engine beside a MAV model) as a child process;
//! [`info`] parses what it prints while searching; [`locate`] finds the engine binary; errors are in
//! [`error`]. [`server`] is the other side: mavboard as an engine.

pub mod client;
pub mod error;
pub mod info;
pub mod lines;
pub mod locate;
pub mod server;

pub use client::{EngineOption, SearchLimits, SearchResult, UciEngine};
pub use error::UciError;
pub use info::{Bound, Info, Score, ScoreValue};
