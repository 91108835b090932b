//! Errors of label generation.

use std::path::PathBuf;

use crate::uci::UciError;

/// Something stopped label generation.
#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    /// Talking to the engine failed (including: Stockfish not installed).
    #[error(transparent)]
    Uci(#[from] UciError),
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A position file has a line that is not a valid FEN/EPD position.
    #[error("{}:{line}: not a usable position ({reason}); fix or delete that line", .path.display())]
    BadPosition {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A position file holds no positions.
    #[error("{}: no positions in this file (expected one FEN/EPD per line)", .path.display())]
    EmptySource {
        /// The file.
        path: PathBuf,
    },
    /// A zip archive could not be read or holds no `.epd` file.
    #[error("{}: {reason}", .path.display())]
    Zip {
        /// The archive.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The engine's answer does not cover the position's legal moves.
    #[error("the engine's labels for {fen} are unusable: {reason}")]
    BadLabel {
        /// The position.
        fen: String,
        /// What is wrong.
        reason: String,
    },
    /// The output folder holds a run with other settings.
    #[error(
        "{} holds a run made with other settings ({difference}); resume it with the same settings or choose \
         another --out folder",
        .dir.display()
    )]
    SettingsMismatch {
        /// The output folder.
        dir: PathBuf,
        /// Which setting differs, with both values.
        difference: String,
    },
    /// An existing shard or manifest cannot be read back.
    #[error("{}: {reason}; delete it (and the shards after it) to regenerate", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The settings cannot work.
    #[error("invalid settings: {0}")]
    Settings(String),
    /// A Connect Four or Hex label whose `%state` string does not read.
    #[error("the label state '{text}' does not read: {reason}")]
    BadState {
        /// The `%state` string.
        text: String,
        /// Why.
        reason: String,
    },
    /// A worker thread failed outside the labeler (a panic).
    #[error("a labelling worker failed: {0}")]
    Worker(String),
}

impl DatagenError {
    /// An [`DatagenError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DatagenError::Io { path: path.into(), source }
    }
}
