//! The league: games between agents — the model without search (max or mean scoring), MAV-MCTS with a
//! simulation budget, and reference players (Stockfish at skill levels for chess, the Connect Four solver
//! exact or at a depth limit, Hex MCTS with random playouts) — from openings each played with both colours,
//! under stated adjudication rules; every game's record, Elo by maximum likelihood with confidence
//! intervals, a crosstable; resumable from its results file.
//!
//! Chess, Chess960, Connect Four and Hex: [`game`] says what differs between them (reference players,
//! openings, records); the rest is generic over the game.
//!
//! One small file per concept: [`spec`] (agent texts and labels), [`agent`] (the interface),
//! [`model_agent`], [`internal_agent`], [`stockfish`] and [`baseline`] (the players, and the adjudicator), [`openings`], [`schedule`],
//! [`rules`], [`play`] (one game), [`record`] (a finished game and its PGN), [`results`] (the results file
//! and atomic writes), [`settings`] (what a resume must agree with), [`elo`], [`crosstable`], [`run`].

pub mod agent;
pub mod baseline;
pub mod config;
pub mod crosstable;
pub mod elo;
pub mod error;
pub mod game;
pub mod internal_agent;
pub mod model_agent;
pub mod openings;
pub mod play;
pub mod pool;
pub mod record;
pub mod results;
pub mod rules;
pub mod run;
pub mod schedule;
pub mod settings;
pub mod spec;
pub mod stockfish;

pub use error::LeagueError;
pub use run::{LeagueConfig, LeagueGameSetup, LeagueSummary, OutputFiles, Progress, run_league};
