//! Search over a model: MAV-MCTS (paper §3, the external search) and explicit minimax (the tree that internal
//! search writes out, §4).
//!
//! Pure and deterministic: no threads, no clocks, no ONNX. Models are reached only through
//! [`crate::inference::evaluator::Evaluator`]; the engine drives [`mcts::Mcts`]'s batch state machine from its
//! threads, tests and the CLI use the synchronous [`mcts::Mcts::run`].

pub mod error;
pub mod internal;
pub mod mcts;
pub mod minimax;
pub mod mock;

pub use error::SearchError;
