//! PGN game records: reading into game trees (variations, comments, NAGs, headers, FEN/SetUp,
//! Chess960), writing them back, and per-game errors that keep the other games of a file.
//!
//! - [`tree`]: [`GameTree`], an arena of move nodes with editing operations for the GUI.
//! - [`reader`]: [`PgnReader`], a streaming iterator of per-game results over any `Read`.
//! - [`index`]: a streaming index of a file's games (byte ranges, tags) for files of any size; one game is
//!   read back and parsed when it is wanted.
//! - [`writer`]: [`write_game`] / [`game_to_string`], PGN export (byte-identical for unmodified games).
//! - `movetext`: the movetext tokens the parser underneath would skip without a word (`pawn`, a stray
//!   `}`) and the broken syntax it would read past ([`Malformed`]: tag pairs, a tag after the moves,
//!   unbalanced variations), which the reader reports as errors with their line and column.
//! - [`comment`]: comments kept as written, with `[%eval]`, `[%clk]` and other commands parsed.
//! - [`variant`]: `Variant`/`FEN` headers to the start position.
//!
//! ```
//! use mavboard_core::pgn::PgnReader;
//!
//! // A broken game does not take its neighbours down: each game is its own result.
//! let file = "[White \"Anderssen\"]\n\n1. e4 e5 2. Nf3 (2. f4) Nc6 *\n\n1. e4 e5 2. Ke3 *\n\n1. d4 d5 *\n";
//! let games: Vec<_> = PgnReader::new(file.as_bytes()).collect();
//! assert_eq!(games.len(), 3);
//! let first = games[0].as_ref().expect("readable");
//! assert_eq!(first.header("White"), Some("Anderssen"));
//! let sans: Vec<String> =
//!     first.mainline().filter_map(|id| first.node(id).and_then(|n| n.san_text())).collect();
//! assert_eq!(sans, ["e4", "e5", "Nf3", "Nc6"]);
//! assert!(games[1].is_err(), "2. Ke3 is illegal");
//! assert!(games[2].is_ok());
//! ```

pub mod blank_lines;
pub mod comment;
mod cursor;
pub mod index;
mod movetext;
pub mod reader;
mod spans;
pub mod tag_line;
pub mod tree;
pub mod variant;
mod window;
pub mod writer;

pub use comment::{Comment, Eval};
pub use movetext::Malformed;
pub use pgn_reader::Nag;
pub use reader::{FailedSource, GameError, GameErrorKind, PgnReader, ReadOptions};
pub use tree::{Addition, GameTree, MoveRecord, Node, NodeId, TreeError};
pub use variant::{VariantTag, classify_variant};
pub use writer::{WriteOptions, game_to_string, source_with_additions, write_game, write_games};
