//! mavboard: an analysis board for multi-action-value (MAV) game models.
//!
//! Layers, each using only the ones before it: [`game`] (rules) → [`mav`] (the text protocol) and [`pgn`]
//! (game records) → [`model`] (packages), [`solve`] (exact solvers) and [`uci`] (the UCI client) →
//! [`inference`] (evaluators) → [`search`] (MAV-MCTS, minimax) → [`engine`] (threads) → [`league`],
//! [`datagen`], [`uci_server`], [`eval`], [`review`] → [`app`] (state and commands) → [`ui`] (panels) →
//! [`shell`] (the window). The map, with one line per module and the path of an analysis request, is
//! `docs/ARCHITECTURE.md`; `tests/architecture.rs` checks the import graph against its layer table.

pub mod shell;
pub mod ui;

pub use mavboard_app::app;
pub use mavboard_core::{bounded_map, c_heap, checkout_dir, game, lc0, logging, mav, pgn};
pub use mavboard_inference::{inference, model, solve, uci};
pub use mavboard_search::{engine, search};
pub use mavboard_tools::{datagen, eval, league, review, uci_server};
