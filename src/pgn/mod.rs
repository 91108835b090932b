//! PGN game records: reading into game trees (variations, comments, NAGs, headers, FEN/SetUp,
//! Chess960), writing them back, and per-game errors that keep the other games of a file.
//!
//! - [`tree`]: [`GameTree`], an arena of move nodes with editing operations for the GUI.
//! - [`reader`]: [`PgnReader`], a streaming iterator of per-game results over any `Read`.
//! - [`index`]: a streaming index of a file's games (byte ranges, tags) for files of any size; one game is
//!   read back and parsed when it is wanted.
//! - [`writer`]: [`write_game`] / [`game_to_string`], PGN export (byte-identical for unmodified games).
//! - [`comment`]: comments kept as written, with `[%eval]`, `[%clk]` and other commands parsed.
//! - [`variant`]: `Variant`/`FEN` headers to the start position.

pub mod blank_lines;
pub mod comment;
pub mod index;
pub mod reader;
mod spans;
pub mod tree;
pub mod variant;
pub mod writer;

pub use comment::{Comment, Eval};
pub use pgn_reader::Nag;
pub use reader::{FailedSource, GameError, GameErrorKind, PgnReader, ReadOptions};
pub use tree::{Addition, GameTree, MoveRecord, Node, NodeId, TreeError};
pub use variant::{VariantTag, classify_variant};
pub use writer::{WriteOptions, game_to_string, source_with_additions, write_game, write_games};
