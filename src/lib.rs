//! mavboard: an analysis board for multi-action-value (MAV) game models.
//!
//! Layers, each using only the ones listed before it: [`game`] (rules) → [`mav`] (the text protocol) and
//! [`pgn`] (game records) → [`solve`] (exact solvers) → inference → search → [`uci`] (the UCI client) →
//! engine → [`uci_server`] (mavboard as a UCI engine) → app → ui. `tests/architecture.rs` checks the
//! import graph. See `DESIGN.md`.

pub mod app;
pub mod datagen;
pub mod engine;
pub mod eval;
pub mod game;
pub mod inference;
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
