//! mavboard's app state: document, files, view, analysis, settings; commands and their apply; the engine glue. No egui.
//!
//! One layer of mavboard as a crate (the map is `docs/ARCHITECTURE.md` in the repository).
//! The modules of the crates below it are re-exported here under their own names, so that code in this
//! crate names every layer it may use the same way (`crate::game`, `crate::inference`, …).

pub mod app;
pub use mavboard_core::{bounded_map, c_heap, checkout_dir, game, lc0, logging, mav, pgn};
pub use mavboard_inference::{inference, model, solve, uci};
pub use mavboard_search::{engine, search};
pub use mavboard_tools::{datagen, eval, league, review, uci_server};
