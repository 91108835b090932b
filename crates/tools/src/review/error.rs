//! Why a review, or a batch of reviews, failed.

use std::path::PathBuf;

use crate::inference::evaluator::EvalError;
use crate::pgn::TreeError;
use crate::search::SearchError;

/// Why a game or a file could not be reviewed.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The model failed on a position.
    #[error("the model could not evaluate the position before ply {ply}: {source}")]
    Eval {
        /// The ply (from 1) of the move whose position failed.
        ply: u32,
        /// The evaluator's error.
        source: EvalError,
    },
    /// The search failed on a position.
    #[error("the search failed on the position before ply {ply}: {source}")]
    Search {
        /// The ply (from 1) of the move whose position failed.
        ply: u32,
        /// The search's error.
        source: SearchError,
    },
    /// The model gave no value for the move that was played.
    #[error("the model gave no value for the move played at ply {ply} ({san})")]
    MoveNotValued {
        /// The ply (from 1).
        ply: u32,
        /// The move played.
        san: String,
    },
    /// The model gives a policy and no values (behavioural cloning): a review measures what each move
    /// loses, which needs values.
    #[error(
        "the model gives move probabilities and no values (a behavioural-cloning policy): a review needs a \
         value model (mav-encoder, mav-lm, action-value or state-value)"
    )]
    NoValues,
    /// The game tree could not be walked or annotated.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A setting is out of range.
    #[error("invalid review setting {name}: {why}")]
    InvalidOption {
        /// The setting.
        name: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {reason}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The PGN file itself could not be read further.
    #[error("{path}: reading stopped at game {game}: {reason}", path = .path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// The game where it stopped.
        game: usize,
        /// Why.
        reason: String,
    },
    /// A resume state exists but belongs to another run.
    #[error(
        "{state} belongs to a different run ({why}); delete it (and {partial}) to start over",
        state = .state.display(),
        partial = .partial.display()
    )]
    StateMismatch {
        /// The state file.
        state: PathBuf,
        /// The partial output.
        partial: PathBuf,
        /// What differs.
        why: String,
    },
    /// The UCI engine judging the review could not be started or set up.
    #[error("the judging engine could not start: {0}")]
    Judge(String),
    /// A worker could not build its evaluator, or every worker is gone.
    #[error("review workers: {0}")]
    Workers(String),
}

impl ReviewError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, e: &std::io::Error) -> ReviewError {
        ReviewError::Io { path: path.to_path_buf(), reason: e.to_string() }
    }
}
