//! mavboard's models: packages on disk, exact solvers, the UCI client, and evaluators (ONNX Runtime, remote servers).
//!
//! One layer of mavboard as a crate (the map is `docs/ARCHITECTURE.md` in the repository).
//! The modules of the crates below it are re-exported here under their own names, so that code in this
//! crate names every layer it may use the same way (`crate::game`, `crate::inference`, …).

pub mod inference;
pub mod model;
pub mod solve;
pub mod uci;
pub use mavboard_core::{bounded_map, c_heap, checkout_dir, game, lc0, logging, mav, pgn};
