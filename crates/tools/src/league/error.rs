//! Errors of the league.

use std::path::PathBuf;

use crate::game::fen::FenError;
use crate::inference::load::LoadError;
use crate::search::SearchError;
use crate::uci::UciError;

/// Something that stops a league (bad settings or files, an agent that cannot play).
#[derive(Debug, thiserror::Error)]
pub enum LeagueError {
    /// An agent specification could not be read.
    #[error(
        "unknown agent {spec:?}: {why}. Agents are mav-max, mav-mean, mav:SCORING, mcts:N, mcts-max:N, \
         mcts:N:SCORING (N simulations; SCORING max, mean, quantile:Q or mean-sd:L), minimax:B:D (explicit minimax over the model), internal:B:D[:free|rules] (the model's own trace), each model agent optionally followed by @MODEL_DIR; for chess stockfish:SKILL (skill level 0..20) \
         or stockfish-elo:ELO; for Connect Four solver (exact) or solver:DEPTH (plies); for Hex playouts:N \
         (MCTS with N random playouts per move)"
    )]
    UnknownAgent {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// Settings that cannot make a league (fewer than two agents, zero openings, …).
    #[error("invalid league settings: {0}")]
    Settings(String),
    /// The opening book could not be read or holds a bad position.
    #[error("opening book {}: {why}", .path.display())]
    Book {
        /// The book file.
        path: PathBuf,
        /// What is wrong (with the line number when one line is at fault).
        why: String,
    },
    /// A FEN in the book (or a results file) is not a legal position.
    #[error("opening book {}, line {line}: {source}", .path.display())]
    BookFen {
        /// The book file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// The FEN error.
        source: FenError,
    },
    /// A model package could not be loaded.
    #[error("model package {}: {source}", .dir.display())]
    Model {
        /// The package folder.
        dir: PathBuf,
        /// Why it failed.
        source: Box<LoadError>,
    },
    /// Stockfish (or another UCI engine) failed.
    #[error("{agent}: {source}")]
    Uci {
        /// The agent (or `adjudicator`).
        agent: String,
        /// The engine error.
        source: Box<UciError>,
    },
    /// A search failed.
    #[error("{agent}: search failed: {source}")]
    Search {
        /// The agent.
        agent: String,
        /// The search error.
        source: Box<SearchError>,
    },
    /// An agent could not produce a legal move.
    #[error("{agent}: {why}")]
    Agent {
        /// The agent.
        agent: String,
        /// What went wrong.
        why: String,
    },
    /// The output folder already holds a league with other settings.
    #[error(
        "{} holds a league with other settings ({why}); rerun with the same settings to resume it, or \
         choose another --out",
        .path.display()
    )]
    Mismatch {
        /// The settings file.
        path: PathBuf,
        /// What differs.
        why: String,
    },
    /// The ratings cannot be estimated from these results.
    #[error("Elo: {0}")]
    Elo(String),
    /// Reading or writing a file failed.
    #[error("{}: {why}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error, as text.
        why: String,
    },
    /// The league was stopped (Ctrl+C) before every game was played; the finished ones are kept.
    #[error("stopped: {done} of {total} games are finished and kept; run the same command again to go on")]
    Interrupted {
        /// Games finished.
        done: usize,
        /// Games scheduled.
        total: usize,
    },
}

impl LeagueError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, e: &std::io::Error) -> LeagueError {
        LeagueError::Io { path: path.to_path_buf(), why: e.to_string() }
    }
}
