//! mavboard: an analysis board for multi-action-value (MAV) game models.
//!
//! Layers, each using only the ones before it: [`game`] (rules) → [`mav`] (the text protocol) and [`pgn`]
//! (game records) → [`model`] (packages), [`solve`] (exact solvers) and [`uci`] (the UCI client) →
//! [`inference`] (evaluators) → [`search`] (MAV-MCTS, minimax) → [`engine`] (threads) → [`league`],
//! [`datagen`], [`uci_server`], [`eval`], [`review`] → [`app`] (state and commands) → [`ui`] (panels) →
//! [`shell`] (the window). The map, with one line per module and the path of an analysis request, is
//! `docs/ARCHITECTURE.md`; `tests/architecture.rs` checks the import graph against its layer table.

pub mod app;
pub mod bounded_map;
pub mod c_heap;
pub mod datagen;
pub mod engine;
pub mod eval;
pub mod game;
pub mod inference;
pub mod lc0;
pub mod league;
pub mod logging;
pub mod mav;
pub mod model;
pub mod pgn;
pub mod review;
pub mod search;
pub mod shell;
pub mod solve;
pub mod uci;
pub mod uci_server;
pub mod ui;
