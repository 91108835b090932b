//! Threads: the only module that spawns them.
//!
//! Everything below this layer (rules, formats, inference, search) is single-threaded and deterministic;
//! this module runs that work on background threads and talks to them over crossbeam channels:
//! [`pool`] runs independent jobs on N workers that each own an expensive resource (a Stockfish process,
//! an ONNX session). (The one other thread spawner is [`crate::uci::line_reader`], below this layer, which
//! reads a child process's stdout for the UCI client.)
//!
//! [`Engine`] is the analysis engine: a thread that drives MAV-MCTS ([`crate::search::mcts::Mcts`]) with
//! its evaluations on a pool of inference workers, taking [`Command`]s and sending [`Event`]s (see
//! [`api`]). It is generic over the game (`Engine<S>` for any [`crate::mav::state::MavState`]: chess,
//! Connect Four, Hex) and holds no game-specific code; chess is the default type parameter, so
//! `Engine`, `Command` and `Event` alone mean the chess engine the GUI and the UCI server use.

pub mod api;
mod controller;
pub mod detached;
pub mod handle;
pub mod inspection;
pub mod internal;
pub mod oracle;
pub mod pool;
pub mod position;
pub mod uci_analysis;

pub use api::{
    Command, EngineConfig, EngineError, EvaluatorBox, EvaluatorFactory, Event, ExploreError, FactoryError,
    GoLimits, Repaint, SearchReport,
};
pub use handle::{ChessEngine, Engine};
pub use position::GamePosition;
