//! Training labels: positions annotated by Stockfish with the value of every legal move.
//!
//! `mavboard datagen labels` samples seed positions from opening suites ([`source`]), optionally plays a
//! few moves on from each by sampling the labelled move values ([`sample`]), asks a [`label::Labeler`]
//! (Stockfish through the UCI client, one process per worker thread) for every legal move's score, and
//! writes deduplicated records ([`record`]) split into train and validation by position hash, as
//! zstd-compressed JSON-lines shards ([`shard`]) described by a [`manifest`]. The driver ([`run`]) is
//! deterministic for a given seed and settings, whatever the number of threads, and resumes an interrupted
//! run from its last complete shard. A seeded share of positions also gets a small search tree labelled
//! ([`tree`]), from which `datagen render` writes internal-search traces ([`search_render`]).
//!
//! Connect Four and Hex positions are labelled by mavboard's own solvers on the same driver
//! ([`game_label`], [`game_run`]: random openings, continuations from the labels) and rendered through
//! the same protocol code ([`game_render`]); their scores are proven results or MCTS estimates
//! ([`score`]).
//!
//! A run can be split over machines: `datagen labels --shard K/N` labels every N-th chain of the run
//! (by chain, not by position hash: see [`run`]) and `datagen merge` ([`merge`]) joins the shards into
//! exactly the single run's label folder; it also joins ordinary folders without duplicates.

pub mod error;
pub mod game_label;
pub mod game_render;
pub mod game_run;
pub mod label;
pub mod label_settings;
pub mod manifest;
pub mod merge;
pub mod pgn_source;
pub mod record;
pub mod render;
pub mod render_run;
pub mod run;
pub mod sample;
pub mod score;
pub mod search_index;
pub mod search_render;
pub mod shard;
pub mod source;
pub mod tree;

pub use error::{DatagenError, EpdError};
pub use game_label::{GameLabelSettings, GameLabeler, HexLabelOptions};
pub use game_run::{run_game_labels, run_game_labels_shard};
pub use label::{Label, Labeler, StockfishLabeler};
pub use label_settings::{LabelSettings, Limit};
pub use manifest::ShardSpec;
pub use merge::{MergeSummary, merge_label_sets};
pub use pgn_source::PgnSource;
pub use record::{LabelGame, LabelRecord, MoveLabel, Split};
pub use run::{Progress, RunSummary, run_labels, run_labels_shard};
pub use score::{ExactResult, LabelScore};
pub use source::{EpdSource, PositionSource, SourceMix};
