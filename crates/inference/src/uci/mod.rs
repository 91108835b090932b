//! UCI: talking to chess engines over the Universal Chess Interface.
//!
//! [`client`] runs any UCI engine (Stockfish, or another engine beside a MAV model) as a child process;
//! [`info`] parses what it prints while searching; [`locate`] finds the engine binary; errors are in
//! [`error`]; [`line_reader`] turns the engine's stdout into a channel of lines that can be waited on with a
//! timeout.
//!
//! This is a low layer: it knows nothing of mavboard's own engine ([`crate::engine`] uses the client to run
//! a UCI engine beside the model). The other side, mavboard *as* a UCI engine, is [`crate::uci_server`],
//! which sits above [`crate::engine`].

pub mod client;
pub mod error;
pub mod info;
pub mod line_reader;
pub mod lines;
pub mod locate;

pub use client::{EngineOption, SearchLimits, SearchResult, UciEngine};
pub use error::UciError;
pub use info::{Bound, Info, Score, ScoreValue};
