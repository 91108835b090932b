//! Opening a PGN file off the UI thread: a background thread indexes the file in one streaming pass (each
//! game's place and headers, see [`crate::pgn::index`]), so a file of any size costs only its index in
//! memory. The UI shows how far it got (games read, share of the file) and stays responsive.
//!
//! A small file (up to [`EARLY_LIST_BYTES`], or a pipe) has each game checked as it is indexed (whether
//! it reads, its moves counted; the tree is dropped) and its text kept in memory, and its list appears
//! when the file is read, as one piece, its broken games marked. A big file's games are not parsed until they are opened (a broken one shows its
//! error then); its list appears as soon as its first game is indexed (that game opens on the board) and
//! fills while the rest is read; the games already listed can be opened meanwhile. A newer open supersedes an older one: the older thread
//! is told to stop and its answer is never looked at; so does replacing the list (another file, pasted
//! text), which stops the reading.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use super::game_list::{GameEntry, GameList};
use crate::pgn::index::{IndexError, Tags, index_games};

/// Wakes the UI when the loader has news.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Shortest time between two progress wake-ups of the UI (and batches of games sent to it).
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// Files bigger than this show their list before they are read to the end.
pub const EARLY_LIST_BYTES: u64 = 8 * 1024 * 1024;

/// Why a PGN file could not be read (to the end); each message names the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be opened.
    #[error("Cannot open {path}: {reason}. Check the path and the file's permissions.", path = .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// No thread could be started to read it.
    #[error(
        "Cannot open {path}: no thread could be started to read it ({reason}). Close other programs and try again.",
        path = .path.display()
    )]
    Thread {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The reading thread ended without saying how far it got.
    #[error(
        "Cannot read {path}: the reading thread stopped unexpectedly. Try again, or check the file with \
         `mavboard pgn check`.",
        path = .path.display()
    )]
    Vanished {
        /// The file.
        path: PathBuf,
    },
    /// A newer open replaced this one (its answer is never shown).
    #[error("Opening {path} was replaced by a newer one.", path = .path.display())]
    Replaced {
        /// The file.
        path: PathBuf,
    },
    /// Reading stopped part-way; the games before that point are kept.
    #[error(
        "{path} could not be read to the end ({reason}); the games before that point are listed. Check the file.",
        path = .path.display()
    )]
    Stopped {
        /// The file.
        path: PathBuf,
        /// Why the index stopped.
        reason: String,
    },
}

/// How far a load has got, shared with its thread.
#[derive(Debug, Default)]
pub struct LoadProgress {
    games: AtomicUsize,
    bytes_done: AtomicU64,
    bytes_total: AtomicU64,
    stop: AtomicBool,
}

/// What the loader thread sends.
#[derive(Debug)]
enum News {
    /// The next games, in file order.
    Games(Vec<GameEntry>),
    /// A small file's text from its first game on (at this offset), sent before [`News::Done`].
    Text(Vec<u8>, u64),
    /// The file is read to the end, or why it could not be.
    Done(Result<(), LoadError>),
}

/// What [`PgnLoad::take_news`] found.
#[derive(Debug, Default)]
pub struct LoadNews {
    /// Games read since the last call, in file order.
    pub games: Vec<GameEntry>,
    /// A small file's text from its first game on, and the offset where it starts (its games are read
    /// from it when opened).
    pub text: Option<(Vec<u8>, u64)>,
    /// Once the thread is done: `Ok` when the whole file was read, else why not (the games before the
    /// failure were sent).
    pub done: Option<Result<(), LoadError>>,
}

/// What a frame's news made of a load (see [`PgnLoad::step`]).
#[derive(Debug)]
pub enum LoadStep {
    /// Nothing to show yet (a small file not read to the end, or a big one without a good game yet).
    Waiting,
    /// The list is ready to be shown, for the first time.
    Ready {
        /// The games read so far (all of them when `finished`).
        list: GameList,
        /// The file.
        path: PathBuf,
        /// Whether the file is read to the end (the load is over).
        finished: bool,
        /// Why the reading stopped early, if it did (the games before are kept).
        error: Option<LoadError>,
    },
    /// Games for the list shown already, wherever it is now.
    More {
        /// The list's [`GameList::id`].
        list: u64,
        /// The games read since the last step, in file order.
        games: Vec<GameEntry>,
        /// Once the thread is done: `Ok` when the whole file was read, else why not.
        done: Option<Result<(), LoadError>>,
    },
}

/// A PGN file being read on a background thread.
#[derive(Debug)]
pub struct PgnLoad {
    path: PathBuf,
    progress: Arc<LoadProgress>,
    news: Receiver<News>,
    /// The list being filled, until it is handed to the app.
    list: Option<GameList>,
    /// The list's [`GameList::id`].
    list_id: u64,
    /// Whether the list is shown before the file is read to the end.
    early: bool,
}

impl PgnLoad {
    /// Takes the news since the last frame and says what they mean: the list is still filling before it
    /// is shown, is ready to show (the whole file read, or for a big file its first good game), or has
    /// more games for the list shown already.
    pub fn step(&mut self) -> LoadStep {
        let LoadNews { games, text, done } = self.take_news();
        let Some(mut list) = self.list.take() else {
            return LoadStep::More { list: self.list_id, games, done };
        };
        list.extend(games);
        if let Some((text, base)) = text {
            list.keep_text(text, base);
        }
        list.complete = done.is_some();
        if !(list.complete || (self.early && list.first_good().is_some())) {
            self.list = Some(list);
            return LoadStep::Waiting;
        }
        let finished = list.complete;
        LoadStep::Ready { list, path: self.path.clone(), finished, error: done.and_then(Result::err) }
    }

    /// Starts reading `path` on a new thread; `wake` is called as it progresses and when it is done.
    pub fn start(path: &Path, wake: Wake) -> PgnLoad {
        let progress = Arc::new(LoadProgress::default());
        let (tx, news) = std::sync::mpsc::channel();
        let name =
            path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let list = GameList::for_file(path.to_path_buf(), &name);
        let early = std::fs::metadata(path).is_ok_and(|m| m.len() > EARLY_LIST_BYTES);
        let (thread_path, thread_progress) = (path.to_path_buf(), Arc::clone(&progress));
        let spawned = std::thread::Builder::new().name("mavboard-pgn-open".into()).spawn(move || {
            let result = index_file(&thread_path, &thread_progress, &wake, &tx);
            if !thread_progress.stop.load(Ordering::Relaxed) {
                // The receiver is gone only when a newer open replaced this one.
                let _ = tx.send(News::Done(result));
                wake();
            }
        });
        let news = match spawned {
            Ok(_) => news,
            Err(e) => {
                let (tx, rx) = std::sync::mpsc::channel();
                let _ = tx.send(News::Done(Err(LoadError::Thread {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })));
                rx
            }
        };
        PgnLoad { path: path.to_path_buf(), progress, news, list_id: list.id, list: Some(list), early }
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Games read so far.
    pub fn games(&self) -> usize {
        self.progress.games.load(Ordering::Relaxed)
    }

    /// The share of the file read so far, 0..=1 (0 until its size is known).
    pub fn fraction(&self) -> f32 {
        let total = self.progress.bytes_total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        (self.progress.bytes_done.load(Ordering::Relaxed) as f64 / total as f64).clamp(0.0, 1.0) as f32
    }

    /// Takes what the thread sent since the last call.
    pub fn take_news(&mut self) -> LoadNews {
        let mut out = LoadNews::default();
        loop {
            match self.news.try_recv() {
                // The tags are copied here, on the UI thread, into one text per batch: the list lives as
                // long as it is shown, and tags allocated by the reading thread would stay in that
                // thread's part of the allocator (glibc gives threads their own arenas), so the memory a
                // replaced list freed was not reused by the next one, and an app opening a 1 GB file every
                // few minutes grew by hundreds of MB per open (the soak test, `packaging/soak.sh`). Copied,
                // every list is allocated where the one before it was freed; packed, a list of 800,000
                // games is a few hundred blocks, not 800,000 strings among the app's other small objects.
                Ok(News::Games(mut games)) => {
                    Tags::share(games.iter_mut().map(|g| &mut g.index.tags));
                    out.games.append(&mut games);
                }
                Ok(News::Text(text, base)) => out.text = Some((text, base)),
                Ok(News::Done(result)) => {
                    out.done = Some(result);
                    return out;
                }
                Err(TryRecvError::Empty) => return out,
                Err(TryRecvError::Disconnected) => {
                    out.done = Some(Err(LoadError::Vanished { path: self.path.clone() }));
                    return out;
                }
            }
        }
    }

    /// Tells the thread to stop; its answer is dropped.
    pub fn cancel(&self) {
        self.progress.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for PgnLoad {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Indexes and checks the file (on the loader thread), sending its games in batches, with the app's
/// messages for what goes wrong.
fn index_file(path: &Path, progress: &LoadProgress, wake: &Wake, tx: &Sender<News>) -> Result<(), LoadError> {
    let file = std::fs::File::open(path)
        .map_err(|e| LoadError::Open { path: path.to_path_buf(), reason: e.to_string() })?;
    let size = file.metadata().map_or(0, |m| m.len());
    let check = size <= EARLY_LIST_BYTES;
    progress.bytes_total.store(size, Ordering::Relaxed);
    let mut batch = Vec::new();
    let mut last_send: Option<Instant> = None;
    // A small file (or a pipe, whose size is unknown) is kept in memory: it may not be there to read
    // again (a pipe), and its list is a snapshot as before.
    let mut text: Option<(Vec<u8>, u64)> = check.then(|| (Vec::new(), 0));
    let result =
        index_games(std::io::BufReader::with_capacity(1 << 16, file), &progress.stop, |game, bytes| {
            let end = game.end();
            progress.games.store(game.number, Ordering::Relaxed);
            progress.bytes_done.store(end, Ordering::Relaxed);
            if end > progress.bytes_total.load(Ordering::Relaxed) {
                progress.bytes_total.store(end, Ordering::Relaxed);
            }
            // A big file's games are parsed when opened; a small file's are checked now, so its broken games
            // are listed as such from the start.
            if let Some((kept, base)) = text.as_mut() {
                if kept.is_empty() {
                    *base = game.offset;
                }
                kept.extend_from_slice(bytes);
            }
            batch.push(if check { GameEntry::check(game, bytes) } else { GameEntry::unchecked(game) });
            // The first game goes at once (a big file's list shows it), then a batch every PROGRESS_EVERY.
            if last_send.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
                last_send = Some(Instant::now());
                // Packed here too, so that the games' own tag strings are freed (and reused) on this thread.
                Tags::share(batch.iter_mut().map(|g| &mut g.index.tags));
                let _ = tx.send(News::Games(std::mem::take(&mut batch)));
                wake();
            }
        });
    if !batch.is_empty() {
        let _ = tx.send(News::Games(batch));
    }
    if let Some((kept, base)) = text {
        let _ = tx.send(News::Text(kept, base));
    }
    match result {
        Ok(read) => {
            progress.bytes_done.store(read, Ordering::Relaxed);
            progress.bytes_total.store(read.max(size), Ordering::Relaxed);
            if read < size {
                progress.bytes_done.store(size, Ordering::Relaxed);
            }
            Ok(())
        }
        // A stopped load's answer is never read; the message only fills the slot.
        Err(IndexError::Stopped) => Err(LoadError::Replaced { path: path.to_path_buf() }),
        Err(e) => Err(LoadError::Stopped { path: path.to_path_buf(), reason: e.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits for the load to finish and returns its whole list.
    fn wait(load: &mut PgnLoad) -> Result<GameList, LoadError> {
        let start = Instant::now();
        let mut list = load.list.take().expect("not handed over");
        loop {
            let news = load.take_news();
            list.extend(news.games);
            if let Some((text, base)) = news.text {
                list.keep_text(text, base);
            }
            if let Some(done) = news.done {
                list.complete = true;
                return done.map(|()| list);
            }
            assert!(start.elapsed() < Duration::from_secs(20), "the load never finished");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mavboard-pgn-loader-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn reads_a_file_on_a_thread_and_reports_progress() {
        let dir = temp_dir("three");
        let path = dir.join("three.pgn");
        std::fs::write(&path, "1. e4 *\n\n1. d4 *\n\n1. e4 e4 *\n").expect("write");
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = Arc::clone(&wakes);
        let mut load = PgnLoad::start(&path, Arc::new(move || _ = w.fetch_add(1, Ordering::Relaxed)));
        assert!(!load.early, "a small file is shown when it is read");
        let list = wait(&mut load).expect("read");
        assert_eq!((list.entries.len(), list.broken(), list.source.as_str()), (3, 1, "three.pgn"));
        assert_eq!((load.games(), load.fraction()), (3, 1.0));
        assert!(wakes.load(Ordering::Relaxed) >= 1, "the UI is woken when it is done");
        std::fs::remove_dir_all(&dir).ok();
        let second = list.game(2).expect("a small file's games are kept in memory");
        assert_eq!(second.mainline().count(), 1);
        assert!(
            list.game(3).is_err_and(|e| e.to_string().contains("game 3")),
            "the broken game gives its error"
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let mut load = PgnLoad::start(Path::new("/nonexistent/mavboard/x.pgn"), Arc::new(|| {}));
        let err = wait(&mut load).expect_err("missing");
        assert!(
            matches!(&err, LoadError::Open { path, .. } if path == Path::new("/nonexistent/mavboard/x.pgn"))
        );
        let err = err.to_string();
        assert!(
            err.contains("Cannot open /nonexistent/mavboard/x.pgn") && err.contains("Check the path"),
            "{err}"
        );
    }

    /// There is no size limit: a file above the 64 MB the app used to refuse is read like any other (65 MB
    /// of spaces between two games, written and read in about a second).
    #[cfg(unix)]
    #[test]
    fn a_file_above_the_old_size_limit_is_read() {
        use std::io::{Seek, SeekFrom, Write};
        let dir = temp_dir("big");
        let path = dir.join("big.pgn");
        let mut f = std::fs::File::create(&path).expect("create");
        f.write_all(b"[White \"First\"]\n\n1. e4 *\n\n").expect("write");
        let spaces = vec![b' '; 1 << 20];
        for _ in 0..65 {
            f.write_all(&spaces).expect("write");
        }
        f.write_all(b"\n[White \"Last\"]\n\n1. d4 *\n").expect("write");
        f.flush().expect("flush");
        let size = f.seek(SeekFrom::End(0)).expect("size");
        assert!(size > 64 * 1024 * 1024);
        drop(f);
        let mut load = PgnLoad::start(&path, Arc::new(|| {}));
        assert!(load.early, "a big file is listed before it is read to the end");
        let list = wait(&mut load).expect("a big file is read, not refused");
        assert_eq!(list.entries.iter().map(|e| e.header("White")).collect::<Vec<_>>(), ["First", "Last"]);
        assert_eq!(list.game(2).expect("the last game").header("White"), Some("Last"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
