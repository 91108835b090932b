//! The crash journal: while the document has unsaved changes (moves, variations, comments, NAGs, a
//! review's annotations, a Connect Four or Hex game), the app keeps a copy of it in the platform's state
//! folder ([`journal_dir`], beside the log), so that work survives a crash.
//!
//! Once a frame the app compares the document with what it last handed to the journal ([`Journal::follow`],
//! a few numbers: no text is written on the UI thread); on a change it hands a copy to the writer thread
//! ([`writer`]), which writes it atomically ([`store`]) at once, so the journal is at most one write
//! behind the last edit. A save, a discard or a game with nothing unsaved removes the journal; so does
//! closing the app normally.
//!
//! At the next start, journals whose app is gone ([`store::orphans`]) are offered, one at a time: *Restore*
//! puts the game back (marked unsaved, with its file name) and *Discard* removes the journal (see
//! [`restore`]). A journal that cannot be read is moved aside and named in a message.

pub mod entry;
pub mod store;
pub mod writer;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Instant;

use entry::DocCopy;
use store::{JournalError, JournalStore, Orphan};
use writer::{JournalWriter, WriterStatus};

use super::board_game::GameChoice;
pub use super::command::JournalAnswer;
use super::document::Document;

/// The folder of the crash journals: `journal` in the platform's state folder
/// ([`crate::logging::state_dir`]: `$XDG_STATE_HOME/mavboard/journal` on Linux, beside `logs`).
pub fn journal_dir() -> Option<PathBuf> {
    crate::logging::state_dir().map(|d| d.join("journal"))
}

/// What decides whether the document changed since it was last handed to the journal: the chess game's
/// identity, revision and file while it has unsaved changes, and the board game's moves (their number and
/// a hash of them, so that no move list is copied each frame).
#[derive(Debug, Clone, PartialEq, Eq)]
struct DocKey {
    chess: Option<(u64, u64, Option<PathBuf>)>,
    board: Option<(GameChoice, usize, u64)>,
}

impl DocKey {
    /// The key of `doc`, `None` when it has nothing unsaved.
    fn of(doc: &Document) -> Option<DocKey> {
        let line = &doc.line;
        let chess = line.is_modified().then(|| (line.stamp().doc, line.revision(), doc.current_file.clone()));
        let board = doc.board_game.as_ref().filter(|g| !g.moves().is_empty()).map(|g| {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(g.moves(), &mut hasher);
            (g.choice, g.moves().len(), std::hash::Hasher::finish(&hasher))
        });
        (chess.is_some() || board.is_some()).then_some(DocKey { chess, board })
    }
}

/// The app's side of the journal: its writer (none when journaling is off, as in tests that do not ask
/// for it), the journals offered at start, and what was last handed over.
#[derive(Debug, Default)]
pub struct Journal {
    writer: Option<JournalWriter>,
    /// Journals left by apps that are gone, newest first; the first is offered.
    pub offers: VecDeque<Orphan>,
    /// The generation of the last state handed over.
    generation: u64,
    last: Option<DocKey>,
    /// The writer's last error, once told to the user.
    told_error: Option<String>,
}

impl Journal {
    /// Starts journaling into `dir`: takes this app's journal (and its lock), starts the writer thread, and
    /// finds the journals left by apps that are gone. Returns the journal and the problems found (each
    /// worth a message): journals that could not be read, or why journaling could not start.
    pub fn start(dir: &Path) -> (Journal, Vec<JournalError>) {
        let (offers, mut errors) = store::orphans(dir);
        // Another window cleaning up at the same moment can take a new lock file away: try again.
        let mut store = JournalStore::open(dir);
        for _ in 0..3 {
            if store.is_ok() {
                break;
            }
            store = JournalStore::open(dir);
        }
        let writer = store.and_then(JournalWriter::start);
        let writer = match writer {
            Ok(w) => Some(w),
            Err(e) => {
                errors.push(e);
                None
            }
        };
        (Journal { writer, offers: offers.into(), ..Journal::default() }, errors)
    }

    /// Whether a writer runs.
    pub fn is_on(&self) -> bool {
        self.writer.is_some()
    }

    /// The journal file this app writes, when journaling is on.
    pub fn path(&self) -> Option<&Path> {
        self.writer.as_ref().map(|w| w.path())
    }

    /// The writer's progress (default when journaling is off).
    pub fn status(&self) -> WriterStatus {
        self.writer.as_ref().map(JournalWriter::status).unwrap_or_default()
    }

    /// The generation of the last state handed over.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether [`Journal::follow`] would hand `doc` over now (as generation [`Journal::generation`] + 1):
    /// journaling is on, the document has unsaved work and it changed since it was last handed over.
    pub fn would_hand(&self, doc: &Document) -> bool {
        let key = DocKey::of(doc);
        self.writer.is_some() && key.is_some() && key != self.last
    }

    /// Once a frame: when the document changed since it was last handed over, hands the writer a copy
    /// (returning its generation), or asks it to remove the journal when nothing unsaved is left. Cheap
    /// when nothing changed.
    pub fn follow(&mut self, doc: &Document, now: Instant) -> Option<u64> {
        let writer = self.writer.as_ref()?;
        let key = DocKey::of(doc);
        if key == self.last {
            return None;
        }
        self.last = key;
        match DocCopy::of(doc) {
            Some(copy) => {
                self.generation += 1;
                writer.write(copy, self.generation, now);
                Some(self.generation)
            }
            None => {
                writer.remove();
                None
            }
        }
    }

    /// Takes over the journal offered first after its games were restored: the next generations continue
    /// from its, and its files are removed once the restored state is journaled anew.
    pub fn adopt_first(&mut self) {
        let Some(orphan) = self.offers.pop_front() else { return };
        self.generation = self.generation.max(orphan.entry.generation);
        match &self.writer {
            Some(w) => w.adopt(vec![orphan.files]),
            // Without a journal of its own the app keeps the old one until the user saves.
            None => drop(orphan),
        }
    }

    /// A new writer error, once (to tell the user).
    pub fn new_error(&mut self) -> Option<String> {
        let error = self.status().error;
        if error == self.told_error {
            return None;
        }
        self.told_error = error.clone();
        error
    }

    /// Ends journaling, removing this app's journal when `remove` (a normal exit), keeping it otherwise.
    pub fn finish(&mut self, remove: bool) {
        if let Some(w) = self.writer.take() {
            w.finish(remove);
        }
    }
}
