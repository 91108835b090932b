//! Errors of the UCI client.

use std::path::PathBuf;
use std::time::Duration;

/// Something went wrong talking to a UCI engine.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    /// No engine binary was found at any of the places tried.
    #[error(
        "no UCI engine found (tried: {}). Install Stockfish (`apt-get install stockfish`; Debian and Ubuntu put \
         it at /usr/games/stockfish, which is not on root's PATH) or pass --stockfish PATH",
        .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        /// Every path (or PATH lookup) that was tried, in order.
        tried: Vec<PathBuf>,
    },
    /// The binary exists but could not be started.
    #[error("could not start the engine {}: {source}", .path.display())]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The engine exited or closed its output.
    #[error("the engine {} exited unexpectedly while {during}", .path.display())]
    Died {
        /// The binary.
        path: PathBuf,
        /// What the client was doing or waiting for.
        during: String,
    },
    /// The engine did not answer in time.
    #[error("the engine {} did not send `{expected}` within {:.1} s", .path.display(), .waited.as_secs_f64())]
    Timeout {
        /// The binary.
        path: PathBuf,
        /// The reply that was waited for (`uciok`, `readyok`, `bestmove`).
        expected: &'static str,
        /// How long the client waited.
        waited: Duration,
    },
    /// The engine printed a line the client could not read.
    #[error("the engine sent a malformed line ({reason}): {line:?}")]
    Malformed {
        /// The line.
        line: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The engine did not advertise this option during the handshake.
    #[error("the engine has no option named {name:?} (it offers: {offered})")]
    UnknownOption {
        /// The option name that was asked for.
        name: String,
        /// The option names the engine advertised.
        offered: String,
    },
    /// The request cannot be sent as asked (e.g. a line break inside a FEN or option value).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}
