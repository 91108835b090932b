//! The journal folder on disk: each running app writes its own journal, `<id>.json` (the id is the process
//! id and the start time, so that several windows never overwrite each other), always atomically (a
//! temporary file written and synced, renamed over the journal, the folder synced), and holds `<id>.lock`
//! locked for as long as it runs.
//!
//! The lock is what tells a journal left by an app that died (the operating system releases the lock of a
//! killed process) from one of a window still open: [`orphans`] takes only journals whose lock it can take,
//! and keeps that lock while the journal is offered, so that a second window starting at the same time does
//! not offer it too. A journal that cannot be read is renamed to `<id>.json.corrupt` and reported by name,
//! never deleted.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::entry::{EntryError, JournalEntry};

/// Why the journal could not be kept, read or removed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file or the folder could not be created, written, renamed or removed.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The lock file is held by another window (it cannot be this app's journal).
    #[error("the journal lock {path} is held by another mavboard", path = .path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The state could not be written as JSON.
    #[error("the journal could not be written as JSON: {0}")]
    Encode(String),
    /// A journal left by an earlier run could not be read; it was kept aside under another name.
    #[error(
        "the crash journal {path} could not be read ({reason}); it is kept as {kept}",
        path = .path.display(),
        kept = .kept.display()
    )]
    Corrupt {
        /// The journal as it was found.
        path: PathBuf,
        /// Where it is now.
        kept: PathBuf,
        /// What is wrong with it.
        reason: EntryError,
    },
    /// A journal could not be read and could not be moved aside either (it stays where it is).
    #[error(
        "the crash journal {path} could not be read ({reason}) nor moved aside ({source})",
        path = .path.display()
    )]
    Unreadable {
        /// The journal.
        path: PathBuf,
        /// What is wrong with it.
        reason: EntryError,
        /// Why it could not be moved aside.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io { path: path.to_path_buf(), source }
}

/// Syncs the folder itself, so that a rename or a removal in it survives a power cut (Unix; elsewhere the
/// file system does not let a folder be opened for this, and the rename is what there is).
fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    #[cfg(unix)]
    {
        File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// This app's journal: its folder, its id and the lock it holds.
#[derive(Debug)]
pub struct JournalStore {
    dir: PathBuf,
    id: String,
    /// The lock file, locked for as long as the store lives.
    lock: File,
}

impl JournalStore {
    /// Creates the folder if needed and takes a new id and its lock: `<process id>-<start time in ns>`.
    pub fn open(dir: &Path) -> Result<JournalStore, JournalError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let id = format!("{}-{nanos}", std::process::id());
        let path = dir.join(format!("{id}.lock"));
        let lock =
            OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io(&path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(JournalError::Locked { path }),
            Err(fs::TryLockError::Error(e)) => return Err(JournalError::Io { path, source: e }),
        }
        // A window that cleaned up stale lock files between the create and the lock may have removed it.
        if !path.exists() {
            return Err(JournalError::Io {
                path,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "removed while it was taken"),
            });
        }
        Ok(JournalStore { dir: dir.to_path_buf(), id, lock })
    }

    /// The journal's id (its file name without `.json`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The journal file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.id))
    }

    /// Replaces the journal with `bytes` atomically: a temporary file beside it is written and synced, then
    /// renamed over it, then the folder is synced. A crash at any point leaves the old journal or the new
    /// one, never part of one (a temporary file left behind is not a journal and is cleaned up later).
    pub fn write(&self, bytes: &[u8]) -> Result<(), JournalError> {
        let tmp = self.dir.join(format!("{}.json.tmp", self.id));
        let result = (|| {
            let mut f = File::create(&tmp).map_err(io(&tmp))?;
            f.write_all(bytes).map_err(io(&tmp))?;
            f.sync_all().map_err(io(&tmp))?;
            drop(f);
            let path = self.path();
            fs::rename(&tmp, &path).map_err(io(&path))?;
            sync_dir(&self.dir)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Removes the journal (nothing unsaved is left), if there is one.
    pub fn remove(&self) -> Result<(), JournalError> {
        let path = self.path();
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(&self.dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(JournalError::Io { path, source: e }),
        }
    }

    /// Ends the store: removes the journal when `remove`, then the lock file; a journal kept stays for the
    /// next start.
    pub fn close(self, remove: bool) -> Result<(), JournalError> {
        if remove {
            self.remove()?;
            let lock = self.dir.join(format!("{}.lock", self.id));
            let _ = fs::remove_file(&lock);
        }
        let _ = self.lock.unlock();
        Ok(())
    }
}

/// A journal left by an app that is no longer running, with its lock held while it is offered.
#[derive(Debug)]
pub struct Orphan {
    /// What the journal holds.
    pub entry: JournalEntry,
    /// Its files.
    pub files: OrphanFiles,
}

/// The files of an orphaned journal, locked by this app until they are removed or dropped.
#[derive(Debug)]
pub struct OrphanFiles {
    /// The journal.
    pub path: PathBuf,
    lock_path: PathBuf,
    /// The orphan's lock, held so that no other window offers the same journal.
    _lock: Option<File>,
}

impl OrphanFiles {
    /// Removes the journal and its lock file (the journal was restored and journaled anew, or discarded).
    pub fn remove(self) -> Result<(), JournalError> {
        match fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(JournalError::Io { path: self.path.clone(), source: e }),
        }
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let _ = fs::remove_file(PathBuf::from(tmp));
        let _ = fs::remove_file(&self.lock_path);
        match self.path.parent() {
            Some(dir) => sync_dir(dir),
            None => Ok(()),
        }
    }

    /// Moves the journal aside as `<id>.json.corrupt` (a journal whose games cannot be restored) and
    /// returns where it is now.
    pub fn keep_aside(self) -> Result<PathBuf, JournalError> {
        let kept = aside_name(&self.path);
        fs::rename(&self.path, &kept).map_err(io(&self.path))?;
        let _ = fs::remove_file(&self.lock_path);
        Ok(kept)
    }
}

/// `<path>.corrupt`, or `<path>.corrupt-N` when that is taken.
fn aside_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".corrupt");
    let first = PathBuf::from(&name);
    if !first.exists() {
        return first;
    }
    (2..).map(|n| PathBuf::from(format!("{}-{n}", first.display()))).find(|p| !p.exists()).unwrap_or(first)
}

/// Whether the app that wrote a journal still runs, as its lock file tells.
enum Owner {
    /// It is gone: its lock, now taken by this app (`None`: there was no lock file).
    Gone(Option<File>),
    /// It runs (another window): its lock is held.
    Running,
}

/// Tries to take the lock at `path` (see [`Owner`]).
fn owner(path: &Path) -> Result<Owner, std::io::Error> {
    let file = match OpenOptions::new().write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Owner::Gone(None)),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => Ok(Owner::Gone(Some(file))),
        Err(fs::TryLockError::WouldBlock) => Ok(Owner::Running),
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Reads one journal file.
pub fn read_journal(path: &Path) -> Result<JournalEntry, EntryError> {
    let text = fs::read_to_string(path).map_err(|e| EntryError::Read(e.to_string()))?;
    JournalEntry::from_json(&text)
}

/// The journals in `dir` whose apps are gone, newest first, each locked for this app; and an error for
/// each journal that could not be read (moved aside as `<id>.json.corrupt`, see [`JournalError::Corrupt`]).
/// Temporary files and lock files that no running app holds are cleaned up; journals of running windows
/// are left alone. A folder that does not exist has no journals.
pub fn orphans(dir: &Path) -> (Vec<Orphan>, Vec<JournalError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (found, errors),
        Err(e) => return (found, vec![JournalError::Io { path: dir.to_path_buf(), source: e }]),
    };
    let mut names: Vec<String> =
        entries.flatten().filter_map(|e| e.file_name().to_str().map(str::to_owned)).collect();
    names.sort();
    for name in &names {
        let Some(id) = name.strip_suffix(".json") else { continue };
        let path = dir.join(name);
        let lock_path = dir.join(format!("{id}.lock"));
        let lock = match owner(&lock_path) {
            Ok(Owner::Gone(lock)) => lock,
            Ok(Owner::Running) => continue,
            Err(e) => {
                errors.push(JournalError::Io { path: lock_path, source: e });
                continue;
            }
        };
        let files = OrphanFiles { path: path.clone(), lock_path, _lock: lock };
        match read_journal(&path) {
            Ok(entry) => found.push(Orphan { entry, files }),
            Err(reason) => errors.push(match files.keep_aside() {
                Ok(kept) => JournalError::Corrupt { path, kept, reason },
                Err(JournalError::Io { source, .. }) => JournalError::Unreadable { path, reason, source },
                Err(other) => other,
            }),
        }
    }
    // Leftovers of apps that are gone: temporary files and lock files without a journal.
    for name in &names {
        let stem = name.strip_suffix(".json.tmp").or_else(|| name.strip_suffix(".lock"));
        let Some(id) = stem else { continue };
        if names.iter().any(|n| n == &format!("{id}.json")) {
            // Offered (or of a running window): removed with its journal.
            continue;
        }
        if let Ok(Owner::Gone(_lock)) = owner(&dir.join(format!("{id}.lock"))) {
            let _ = fs::remove_file(dir.join(name));
        }
    }
    found.sort_by_key(|o| std::cmp::Reverse((o.entry.unix_ms, o.entry.generation)));
    (found, errors)
}
