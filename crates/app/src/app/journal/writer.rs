//! The journal's writer thread: the UI thread hands it the newest state over a channel and goes on; the
//! thread writes it (the PGN text, the JSON, the atomic write and its syncs), and when several states
//! arrive while it writes, it writes only the newest of them.
//!
//! It reports how far it got ([`WriterStatus`]: the newest generation on disk and how long after its edit
//! it got there), removes the journal when the document has nothing unsaved left, and, once the state it
//! took over from a restored journal is on disk, removes that old journal.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::entry::{DocCopy, JournalEntry};
use super::store::{JournalError, JournalStore, OrphanFiles};

/// How far the writer got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterStatus {
    /// The generation of the newest state on disk (`None`: none yet, or the journal was removed).
    pub written: Option<u64>,
    /// How many journal files were written.
    pub writes: u64,
    /// The time from the oldest edit a write carried to the moment that write was on disk, for the last
    /// write.
    pub last_lag: Duration,
    /// The longest such time so far.
    pub worst_lag: Duration,
    /// The last error, if the last write or removal failed.
    pub error: Option<String>,
}

/// One state for the journal.
struct Handed {
    copy: DocCopy,
    generation: u64,
    unix_ms: u64,
    /// When the edit was made (the oldest one, after states were coalesced).
    since: Instant,
}

enum Message {
    Write(Box<Handed>),
    Remove,
    Adopt(Vec<OrphanFiles>),
    Finish { remove: bool },
}

/// The handle of the writer thread. Dropping it ends the thread: the journal is removed when the app ends
/// normally, and kept when it ends in a panic.
pub struct JournalWriter {
    tx: Sender<Message>,
    thread: Option<JoinHandle<()>>,
    status: Arc<Mutex<WriterStatus>>,
    path: std::path::PathBuf,
}

impl JournalWriter {
    /// Starts the thread over `store`.
    pub fn start(store: JournalStore) -> Result<JournalWriter, JournalError> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let status = Arc::new(Mutex::new(WriterStatus::default()));
        let path = store.path();
        let shared = Arc::clone(&status);
        let thread = std::thread::Builder::new()
            .name("mavboard-journal".to_owned())
            .spawn(move || run(store, &rx, &shared))
            .map_err(|source| JournalError::Io { path: path.clone(), source })?;
        Ok(JournalWriter { tx, thread: Some(thread), status, path })
    }

    /// The journal file this app writes.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Hands the thread a new state (`edited`: when the edit was made). Never blocks.
    pub fn write(&self, copy: DocCopy, generation: u64, edited: Instant) {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let _ = self.tx.send(Message::Write(Box::new(Handed { copy, generation, unix_ms, since: edited })));
    }

    /// Asks the thread to remove the journal (nothing unsaved is left), and any journal it adopted.
    pub fn remove(&self) {
        let _ = self.tx.send(Message::Remove);
    }

    /// Hands the thread the files of restored journals: it removes them once a newer state is on disk (or
    /// nothing unsaved is left), so that a crash in between still finds one of them.
    pub fn adopt(&self, files: Vec<OrphanFiles>) {
        let _ = self.tx.send(Message::Adopt(files));
    }

    /// How far the thread got.
    pub fn status(&self) -> WriterStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Ends the thread after what it was handed is done, removing the journal when `remove`.
    pub fn finish(mut self, remove: bool) {
        self.end(remove);
    }

    fn end(&mut self, remove: bool) {
        if let Some(thread) = self.thread.take() {
            if remove {
                let _ = self.tx.send(Message::Finish { remove });
            }
            // Without `Finish` the thread ends when the channel closes, keeping the journal.
            let (dead, _) = crossbeam_channel::bounded(0);
            drop(std::mem::replace(&mut self.tx, dead));
            let _ = thread.join();
        }
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        // A panic unwinding through the app keeps the journal for the next start.
        self.end(!std::thread::panicking());
    }
}

impl std::fmt::Debug for JournalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalWriter").field("path", &self.path).field("status", &self.status()).finish()
    }
}

/// The thread: takes every message that is waiting, then writes the newest state (or removes the journal).
fn run(store: JournalStore, rx: &Receiver<Message>, status: &Mutex<WriterStatus>) {
    let mut adopted: Vec<OrphanFiles> = Vec::new();
    let mut finish = None;
    while finish.is_none() {
        let Ok(first) = rx.recv() else { break };
        let mut newest: Option<Box<Handed>> = None;
        let mut remove = false;
        for message in std::iter::once(first).chain(rx.try_iter()) {
            match message {
                Message::Write(mut h) => {
                    if let Some(older) = newest.take() {
                        h.since = h.since.min(older.since);
                    }
                    newest = Some(h);
                    remove = false;
                }
                Message::Remove => {
                    newest = None;
                    remove = true;
                }
                Message::Adopt(files) => adopted.extend(files),
                Message::Finish { remove } => finish = Some(remove),
            }
        }
        if let Some(h) = newest {
            let written = JournalEntry::new(&h.copy, h.generation, h.unix_ms)
                .to_json()
                .map_err(|e| JournalError::Encode(e.to_string()))
                .and_then(|json| store.write(json.as_bytes()));
            let lag = h.since.elapsed();
            report(status, written.map(|()| Some((h.generation, lag))));
            if status.lock().is_ok_and(|s| s.error.is_none()) {
                remove_all(&mut adopted);
            }
        } else if remove {
            report(status, store.remove().map(|()| None));
            remove_all(&mut adopted);
        }
    }
    let remove = finish.unwrap_or(false);
    if remove {
        remove_all(&mut adopted);
    }
    if let Err(e) = store.close(remove) {
        tracing::warn!("the crash journal could not be removed: {e}");
    }
}

fn report(status: &Mutex<WriterStatus>, result: Result<Option<(u64, Duration)>, JournalError>) {
    let Ok(mut s) = status.lock() else { return };
    match result {
        Ok(Some((generation, lag))) => {
            s.written = Some(generation);
            s.writes += 1;
            s.last_lag = lag;
            s.worst_lag = s.worst_lag.max(lag);
            s.error = None;
        }
        Ok(None) => {
            s.written = None;
            s.error = None;
        }
        Err(e) => {
            tracing::warn!("the crash journal was not written: {e}");
            s.error = Some(e.to_string());
        }
    }
}

fn remove_all(adopted: &mut Vec<OrphanFiles>) {
    for files in adopted.drain(..) {
        let path = files.path.clone();
        if let Err(e) = files.remove() {
            tracing::warn!("the restored journal {} could not be removed: {e}", path.display());
        }
    }
}
