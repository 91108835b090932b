//! One journal entry: what is kept of a document with unsaved changes — the chess game as PGN (its
//! variations, comments, NAGs and a review's annotations with it) and the file it belongs to, and the
//! Connect Four / Hex game on the board as its moves — written as a small JSON file.
//!
//! The UI thread takes a [`DocCopy`] (a clone of the game tree, the board game's moves: no text is written
//! there); the journal's writer thread turns it into a [`JournalEntry`] and its JSON.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::app::board_game::GameChoice;
use crate::app::document::Document;
use crate::pgn::{GameTree, WriteOptions, game_to_string};

/// The `format` field of every journal file.
pub const FORMAT: &str = "mavboard-journal";
/// The version of the journal format this build writes and reads.
pub const VERSION: u32 = 1;

/// Why a journal's text is not an entry this build can restore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// The file could not be read.
    #[error("{0}")]
    Read(String),
    /// The text is not the journal's JSON (cut short, or another JSON).
    #[error("{0}")]
    Json(String),
    /// Another program's file.
    #[error("it is not a mavboard journal (format \"{0}\")")]
    Format(String),
    /// A journal version this build does not know.
    #[error("journal version {0} (this mavboard reads version {VERSION})")]
    Version(u32),
}

/// What the UI thread hands to the journal: the unsaved parts of the document, copied.
#[derive(Debug, Clone)]
pub struct DocCopy {
    /// The chess game and its file, when it has unsaved changes.
    pub chess: Option<(GameTree, Option<PathBuf>)>,
    /// The Connect Four or Hex game on the board, when it has moves.
    pub board: Option<BoardEntry>,
}

impl DocCopy {
    /// The unsaved parts of `doc`: the chess game when it has changes that are not saved, the Connect Four
    /// or Hex game when it has moves (those games are never saved). `None` when there is nothing to keep.
    pub fn of(doc: &Document) -> Option<DocCopy> {
        let chess = doc.line.is_modified().then(|| (doc.line.tree().clone(), doc.current_file.clone()));
        let board = BoardEntry::of(doc);
        (chess.is_some() || board.is_some()).then_some(DocCopy { chess, board })
    }
}

/// The chess game of a journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChessEntry {
    /// The game as PGN, written as *Save* writes it.
    pub pgn: String,
    /// The file the game came from or was last saved to.
    pub file: Option<PathBuf>,
}

/// The Connect Four or Hex game of a journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardEntry {
    /// The game and its options.
    pub choice: GameChoice,
    /// The moves in the game's notation (`4`, `c3`, `swap`).
    pub moves: Vec<String>,
}

impl BoardEntry {
    /// The Connect Four or Hex game on the board of `doc`, when it has moves.
    pub fn of(doc: &Document) -> Option<BoardEntry> {
        let game = doc.board_game.as_ref().filter(|g| !g.moves().is_empty())?;
        Some(BoardEntry { choice: game.choice, moves: game.moves().to_vec() })
    }
}

/// One journal file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// Counts the states the writing session handed to its journal; a later state has a larger number.
    pub generation: u64,
    /// When the state was handed over, in milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The chess game, when it had unsaved changes.
    pub chess: Option<ChessEntry>,
    /// The Connect Four or Hex game on the board, when it had moves.
    pub board: Option<BoardEntry>,
}

impl JournalEntry {
    /// The entry for `copy`: the chess game written as PGN exactly as *Save* writes it.
    pub fn new(copy: &DocCopy, generation: u64, unix_ms: u64) -> JournalEntry {
        JournalEntry {
            format: FORMAT.to_owned(),
            version: VERSION,
            generation,
            unix_ms,
            chess: copy.chess.as_ref().map(|(tree, file)| ChessEntry {
                pgn: game_to_string(tree, &WriteOptions::default()),
                file: file.clone(),
            }),
            board: copy.board.clone(),
        }
    }

    /// The entry as JSON text.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// Reads an entry from JSON text, refusing another format or a version this build does not know.
    pub fn from_json(text: &str) -> Result<JournalEntry, EntryError> {
        let entry: JournalEntry = serde_json::from_str(text).map_err(|e| EntryError::Json(e.to_string()))?;
        if entry.format != FORMAT {
            return Err(EntryError::Format(entry.format));
        }
        if entry.version != VERSION {
            return Err(EntryError::Version(entry.version));
        }
        Ok(entry)
    }

    /// A 64-bit FNV-1a digest of the games kept (the chess game's PGN and file, the board game), not of
    /// the generation or the time: two entries with the same games have the same digest.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            // A separator, so that fields cannot run into each other.
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        match &self.chess {
            Some(c) => {
                eat(b"chess");
                eat(c.pgn.as_bytes());
                eat(c.file.as_ref().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default().as_bytes());
            }
            None => eat(b"no chess"),
        }
        match &self.board {
            Some(b) => {
                eat(GameChoice::label(b.choice).as_bytes());
                for m in &b.moves {
                    eat(m.as_bytes());
                }
            }
            None => eat(b"no board"),
        }
        h
    }

    /// What the entry holds, for the offer to restore it: "game.pgn (chess)", "a new chess game", "a
    /// Connect Four game of 7 moves", joined by "and".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.chess {
            parts.push(match c.file.as_ref().and_then(|f| f.file_name()) {
                Some(name) => format!("the chess game of {}", name.to_string_lossy()),
                None => "a chess game that was never saved".to_owned(),
            });
        }
        if let Some(b) = &self.board {
            let n = b.moves.len();
            parts.push(format!("a {} game of {n} move{}", b.choice.label(), if n == 1 { "" } else { "s" }));
        }
        if parts.is_empty() { "nothing".to_owned() } else { parts.join(" and ") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::board_game::BoardGame;
    use crate::app::command::BoardMove;

    #[test]
    fn only_unsaved_parts_are_copied_and_the_json_reads_back() {
        let mut doc = Document::default();
        assert!(DocCopy::of(&doc).is_none(), "a fresh board has nothing to keep");
        doc.play(BoardMove::Notation("e2e4".into())).expect("legal");
        doc.line.set_comment(doc.line.current_node(), "the king's pawn").expect("comment");
        doc.current_file = Some(PathBuf::from("/games/mine.pgn"));
        let copy = DocCopy::of(&doc).expect("unsaved chess");
        assert!(copy.board.is_none());
        let entry = JournalEntry::new(&copy, 7, 1);
        let pgn = &entry.chess.as_ref().expect("chess").pgn;
        assert!(pgn.contains("e4") && pgn.contains("the king's pawn"), "{pgn}");
        let json = entry.to_json().expect("json");
        assert_eq!(JournalEntry::from_json(&json), Ok(entry.clone()));
        assert_eq!(entry.describe(), "the chess game of mine.pgn");

        doc.line.mark_saved();
        let mut c4 = BoardGame::new(GameChoice::ConnectFour).expect("connect four");
        c4.play("4").expect("legal");
        doc.board_game = Some(c4);
        let copy = DocCopy::of(&doc).expect("a board game with a move");
        let board = JournalEntry::new(&copy, 8, 2);
        assert!(board.chess.is_none());
        assert_eq!(board.describe(), "a Connect Four game of 1 move");
        assert_ne!(board.digest(), entry.digest());
        let same = JournalEntry { generation: 9, unix_ms: 3, ..board.clone() };
        assert_eq!(same.digest(), board.digest(), "the digest is of the games only");
    }

    #[test]
    fn other_formats_and_versions_are_refused_with_the_reason() {
        let entry = JournalEntry::new(&DocCopy { chess: None, board: None }, 1, 1);
        let future = JournalEntry { version: VERSION + 1, ..entry.clone() };
        let e = JournalEntry::from_json(&future.to_json().expect("json")).expect_err("newer");
        assert_eq!(e, EntryError::Version(VERSION + 1));
        assert_eq!(
            e.to_string(),
            format!("journal version {} (this mavboard reads version {VERSION})", VERSION + 1)
        );
        let other = JournalEntry { format: "x".into(), ..entry };
        let e = JournalEntry::from_json(&other.to_json().expect("json")).expect_err("another format");
        assert_eq!(e.to_string(), "it is not a mavboard journal (format \"x\")");
        let cut = JournalEntry::from_json("{\"format\": \"mavboard-jour").expect_err("cut short");
        assert!(matches!(cut, EntryError::Json(_)), "{cut}");
    }
}
