//! Opening a PGN file off the UI thread: a background thread reads the file and its games while the UI
//! shows how far it got (games read, share of the file) and stays responsive. A newer open supersedes an
//! older one: the older thread is told to stop and its answer is never looked at.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use super::game_list::GameList;
use super::state::{AppState, MAX_PGN_BYTES};

/// Wakes the UI when the loader has news.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Shortest time between two progress wake-ups of the UI.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// How far a load has got, shared with its thread.
#[derive(Debug, Default)]
pub struct LoadProgress {
    games: AtomicUsize,
    bytes_done: AtomicU64,
    bytes_total: AtomicU64,
    stop: AtomicBool,
}

/// A PGN file being read on a background thread.
#[derive(Debug)]
pub struct PgnLoad {
    path: PathBuf,
    progress: Arc<LoadProgress>,
    answer: Receiver<Result<GameList, String>>,
}

impl PgnLoad {
    /// Starts reading `path` on a new thread; `wake` is called as it progresses and when it is done.
    pub fn start(path: &Path, wake: Wake) -> PgnLoad {
        let progress = Arc::new(LoadProgress::default());
        let (tx, answer) = std::sync::mpsc::channel();
        let (thread_path, thread_progress) = (path.to_path_buf(), Arc::clone(&progress));
        let spawned = std::thread::Builder::new().name("mavboard-pgn-open".into()).spawn(move || {
            let result = read_file(&thread_path, &thread_progress, &wake);
            if !thread_progress.stop.load(Ordering::Relaxed) {
                // The receiver is gone only when a newer open replaced this one.
                let _ = tx.send(result);
                wake();
            }
        });
        if let Err(e) = spawned {
            let (tx, rx) = std::sync::mpsc::channel();
            let _ = tx.send(Err(format!(
                "Cannot open {}: no thread could be started to read it ({e}). Close other programs and try again.",
                path.display()
            )));
            return PgnLoad { path: path.to_path_buf(), progress, answer: rx };
        }
        PgnLoad { path: path.to_path_buf(), progress, answer }
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

    /// The list of games (or why the file could not be read) once the thread is done.
    pub fn try_answer(&self) -> Option<Result<GameList, String>> {
        match self.answer.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(format!(
                "Cannot read {}: the reading thread stopped unexpectedly. Try again, or check the file with \
                 `mavboard pgn check`.",
                self.path.display()
            ))),
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

/// Reads and parses the file (on the loader thread), with the app's messages for what goes wrong.
fn read_file(path: &Path, progress: &LoadProgress, wake: &Wake) -> Result<GameList, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("Cannot open {shown}: {e}. Check the path and the file's permissions."))?
        .len();
    if size > MAX_PGN_BYTES {
        return Err(format!(
            "{shown} is {size} bytes, more than the board opens ({MAX_PGN_BYTES}). Split it, or check it with \
             `mavboard pgn`."
        ));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| format!("Cannot read {shown}: {e}. Check the file's permissions."))?;
    let text = String::from_utf8_lossy(&bytes);
    progress.bytes_total.store(text.len() as u64, Ordering::Relaxed);
    let name = path.file_name().map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    let mut last_wake = Instant::now();
    let list = GameList::read_with_progress(&text, &name, |games, bytes| {
        progress.games.store(games, Ordering::Relaxed);
        progress.bytes_done.store(bytes as u64, Ordering::Relaxed);
        if last_wake.elapsed() >= PROGRESS_EVERY {
            last_wake = Instant::now();
            wake();
        }
        !progress.stop.load(Ordering::Relaxed)
    });
    // A stopped load's answer is never read; the message only fills the slot.
    list.ok_or_else(|| format!("Opening {shown} was replaced by a newer one."))
}

impl AppState {
    /// Starts opening a PGN file in the background (replacing an open still in progress). When its games
    /// are read, [`AppState::poll_loading`] opens the first good one (asking first if the game on the board
    /// has unsaved changes).
    pub fn open_path(&mut self, path: &Path, ctx: &eframe::egui::Context) {
        if let Some(old) = self.loading.take() {
            old.cancel();
        }
        let ctx = ctx.clone();
        self.loading = Some(PgnLoad::start(path, Arc::new(move || ctx.request_repaint())));
    }

    /// Checks whether the file being opened has been read and acts on it. Called once per frame.
    pub fn poll_loading(&mut self) {
        let Some(answer) = self.loading.as_ref().and_then(PgnLoad::try_answer) else { return };
        let Some(load) = self.loading.take() else { return };
        match answer {
            Ok(list) => self.offer_file_list(list, load.path().to_path_buf()),
            Err(text) => {
                self.messages.error(text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(load: &PgnLoad) -> Result<GameList, String> {
        let start = Instant::now();
        loop {
            if let Some(a) = load.try_answer() {
                return a;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "the load never finished");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn reads_a_file_on_a_thread_and_reports_progress() {
        let dir = std::env::temp_dir().join(format!("mavboard-pgn-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("three.pgn");
        std::fs::write(&path, "1. e4 *\n\n1. d4 *\n\n1. e4 e4 *\n").expect("write");
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = Arc::clone(&wakes);
        let load = PgnLoad::start(&path, Arc::new(move || _ = w.fetch_add(1, Ordering::Relaxed)));
        let list = wait(&load).expect("read");
        assert_eq!((list.entries.len(), list.broken(), list.source.as_str()), (3, 1, "three.pgn"));
        assert_eq!((load.games(), load.fraction()), (3, 1.0));
        assert!(wakes.load(Ordering::Relaxed) >= 1, "the UI is woken when it is done");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let load = PgnLoad::start(Path::new("/nonexistent/mavboard/x.pgn"), Arc::new(|| {}));
        let err = wait(&load).expect_err("missing");
        assert!(
            err.contains("Cannot open /nonexistent/mavboard/x.pgn") && err.contains("Check the path"),
            "{err}"
        );
    }
}
