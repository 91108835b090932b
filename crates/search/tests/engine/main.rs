//! mavboard-search's integration tests: the analysis engine's threads, the explorer, the board games' engine.

mod engine;
mod engine_explore;
mod engine_games;
