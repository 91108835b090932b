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
        reason: EpdError,
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
    /// A folder given to `datagen merge` holds no labels manifest.
    #[error("{}: no manifest.json here: not a label folder written by `mavboard datagen labels`", .dir.display())]
    NoManifest {
        /// The folder.
        dir: PathBuf,
    },
    /// `datagen merge` was given folders of runs with different settings.
    #[error(
        "{} and {} were made with different settings ({difference}); merge only the shards of one run, or \
         label folders that differ in nothing but --seed and --positions",
        .first.display(),
        .other.display()
    )]
    MergeMismatch {
        /// The first folder given.
        first: PathBuf,
        /// The folder that differs from it.
        other: PathBuf,
        /// The first field that differs, with both values.
        difference: String,
    },
    /// `datagen merge` is missing shards of a sharded run.
    #[error(
        "missing shards of the run of {}: {missing} (of {count}); merge needs every shard of a run",
        .first.display()
    )]
    ShardMissing {
        /// The missing shards, as `K/N, …`.
        missing: String,
        /// N.
        count: u64,
        /// A folder of the run.
        first: PathBuf,
    },
    /// A shard stopped before a chain the merge needs.
    #[error(
        "{} (shard {shard}) stopped before chain {chain}, which the merge needs (it labelled its chains below \
         {reached}, {records} records); resume it: rerun its `datagen labels --shard {shard}` command with \
         --shard-target {suggested} (an estimate), then merge again",
        .dir.display()
    )]
    ShardShort {
        /// The shard's folder.
        dir: PathBuf,
        /// `K/N`.
        shard: String,
        /// The chain the merge needs.
        chain: u64,
        /// The first chain the shard did not label.
        reached: u64,
        /// Its records.
        records: usize,
        /// A target that should suffice.
        suggested: usize,
    },
    /// `datagen merge` writes only into a new or empty folder.
    #[error("{} is not empty: `datagen merge` writes a new label folder (give a new --out)", .dir.display())]
    OutNotEmpty {
        /// The folder.
        dir: PathBuf,
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

/// An EPD/FEN line that is not a usable chess position.
#[derive(Debug, thiserror::Error)]
pub enum EpdError {
    /// The text is not FEN.
    #[error("invalid FEN {text:?}: {source}")]
    InvalidFen {
        /// The position's fields as read.
        text: String,
        /// What the FEN parser said.
        source: shakmaty::fen::ParseFenError,
    },
    /// The text is FEN, but of a position that cannot arise (no king, a side not to move in check, ...).
    #[error("illegal position {text:?}: {source}")]
    IllegalPosition {
        /// The position's fields as read.
        text: String,
        /// What shakmaty found wrong.
        source: Box<shakmaty::PositionError<shakmaty::Chess>>,
    },
}
