//! A UCI engine (Stockfish or any other) analysing beside the model: one thread owns the engine process,
//! follows the positions it is sent (`stop`, `position`, `go infinite`) and publishes snapshots of its
//! MultiPV lines at most ten times a second. The caller only ever sees [`UciSnapshot`]s.
//!
//! Dropping the [`UciAnalysis`] handle ends the thread, which quits the engine (killing it if it does not
//! exit).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError, unbounded};

use super::api::Repaint;
use crate::uci::lines::EngineLines;
use crate::uci::{SearchLimits, UciEngine, UciError};

/// How often snapshots are published while the engine thinks.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(100);

/// What the engine should analyse and how.
#[derive(Debug, Clone, PartialEq)]
pub struct UciAnalysisRequest {
    /// The position as a FEN (Shredder-FEN castling for Chess960).
    pub fen: String,
    /// Whether the position is Chess960 (sets `UCI_Chess960` when the engine has it).
    pub chess960: bool,
    /// How many lines (`MultiPV`).
    pub multipv: u32,
    /// Search threads (`Threads`).
    pub threads: u32,
}

/// What the analysis looks like now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UciSnapshot {
    /// The engine's name (`id name`) once it started.
    pub engine: Option<String>,
    /// The position the lines belong to.
    pub fen: Option<String>,
    /// The lines and counters.
    pub lines: EngineLines,
    /// Whether the engine is thinking.
    pub searching: bool,
    /// Why the engine could not start or stopped working, with the fix.
    pub error: Option<String>,
}

enum Message {
    Analyse(UciAnalysisRequest),
    Stop,
    Quit,
}

/// The handle of a running UCI analysis thread.
pub struct UciAnalysis {
    tx: Sender<Message>,
    snapshots: Receiver<UciSnapshot>,
    done: Receiver<()>,
}

impl std::fmt::Debug for UciAnalysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UciAnalysis").finish_non_exhaustive()
    }
}

impl UciAnalysis {
    /// Starts the thread for the engine at `path` (the process starts with the first request, on the
    /// thread, so this never waits for it). `repaint` is called after each snapshot.
    pub fn start(path: PathBuf, repaint: Repaint) -> Result<UciAnalysis, std::io::Error> {
        let (tx, rx) = unbounded();
        let (snap_tx, snapshots) = unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        std::thread::Builder::new().name("mavboard-uci-analysis".into()).spawn(move || {
            let mut worker = Worker { path, engine: None, rx, out: snap_tx, repaint, options: None };
            worker.run();
            // Quit (or kill) the engine before saying the thread is done.
            drop(worker);
            let _ = done_tx.send(());
        })?;
        Ok(UciAnalysis { tx, snapshots, done })
    }

    /// Analyses this position until told otherwise (stops the search of the previous one first).
    pub fn analyse(&self, request: UciAnalysisRequest) {
        let _ = self.tx.send(Message::Analyse(request));
    }

    /// Stops thinking (the engine process stays up for the next request).
    pub fn stop(&self) {
        let _ = self.tx.send(Message::Stop);
    }

    /// The newest snapshot published since the last call, if any.
    pub fn latest(&self) -> Option<UciSnapshot> {
        self.snapshots.try_iter().last()
    }
}

impl Drop for UciAnalysis {
    fn drop(&mut self) {
        let _ = self.tx.send(Message::Quit);
        // The engine answers `stop` and `quit` quickly; don't hold the UI for long if it hangs (the
        // thread still kills it when its reply times out).
        let _ = self.done.recv_timeout(Duration::from_secs(2));
    }
}

struct Worker {
    path: PathBuf,
    engine: Option<UciEngine>,
    rx: Receiver<Message>,
    out: Sender<UciSnapshot>,
    repaint: Repaint,
    /// The (MultiPV, Threads, Chess960) the engine was last set to.
    options: Option<(u32, u32, bool)>,
}

/// What the user should do about an engine error.
fn with_fix(e: &UciError) -> String {
    match e {
        UciError::NotFound { .. } => {
            format!("{e}. In the app, type the engine's path in the Engine path field of this panel.")
        }
        _ => format!(
            "{e}. Check that the Engine path points at a UCI chess engine (e.g. Stockfish; \
             `apt-get install stockfish`)."
        ),
    }
}

impl Worker {
    fn publish(&self, snapshot: &UciSnapshot) {
        let _ = self.out.send(snapshot.clone());
        (self.repaint)();
    }

    fn run(&mut self) {
        let mut snapshot = UciSnapshot::default();
        let mut max_lines = 1;
        let mut last_publish = Instant::now();
        let mut dirty = false;
        loop {
            let searching = self.engine.as_ref().is_some_and(UciEngine::is_searching);
            let message = if searching {
                match self.rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                match self.rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                }
            };
            match message {
                Some(Message::Quit) => return,
                Some(Message::Stop) => {
                    if let Some(e) = self.engine.as_mut()
                        && let Err(err) = e.stop()
                    {
                        snapshot.error = Some(with_fix(&err));
                        self.engine = None;
                    }
                    snapshot.searching = false;
                    self.publish(&snapshot);
                }
                Some(Message::Analyse(request)) => {
                    max_lines = request.multipv.max(1);
                    snapshot = UciSnapshot { engine: snapshot.engine.take(), ..UciSnapshot::default() };
                    match self.begin(&request) {
                        Ok(name) => {
                            snapshot.engine = Some(name);
                            snapshot.fen = Some(request.fen);
                            snapshot.searching = true;
                        }
                        Err(err) => {
                            snapshot.error = Some(with_fix(&err));
                            self.engine = None;
                            self.options = None;
                        }
                    }
                    self.publish(&snapshot);
                    last_publish = Instant::now();
                }
                None => {}
            }
            let Some(engine) = self.engine.as_mut().filter(|e| e.is_searching()) else { continue };
            // Read what the engine says for a short while, then look at the messages again.
            let until = Instant::now() + Duration::from_millis(30);
            while Instant::now() < until && engine.is_searching() {
                match engine.next_info(until.saturating_duration_since(Instant::now())) {
                    Ok(Some(info)) => dirty |= snapshot.lines.apply(&info, max_lines),
                    Ok(None) => {}
                    Err(err) => {
                        snapshot.error = Some(with_fix(&err));
                        dirty = true;
                        break;
                    }
                }
            }
            let ended = !engine.is_searching();
            if snapshot.error.is_some() && ended {
                self.engine = None;
                self.options = None;
            }
            if ended {
                snapshot.searching = false;
                dirty = true;
            }
            if dirty && (ended || last_publish.elapsed() >= PUBLISH_EVERY) {
                self.publish(&snapshot);
                last_publish = Instant::now();
                dirty = false;
            }
        }
    }

    /// Starts the engine if needed, sets its options, and starts an infinite search of the position.
    fn begin(&mut self, request: &UciAnalysisRequest) -> Result<String, UciError> {
        if self.engine.is_none() {
            self.engine = Some(UciEngine::start(&self.path, &[])?);
            self.options = None;
        }
        let Some(engine) = self.engine.as_mut() else {
            return Err(UciError::NotFound { tried: vec![self.path.clone()] });
        };
        engine.stop()?;
        let wanted = (request.multipv.max(1), request.threads.max(1), request.chess960);
        if self.options != Some(wanted) {
            let offers = |name: &str| engine.options().iter().any(|o| o.name.eq_ignore_ascii_case(name));
            let (multipv, threads, chess960) = wanted;
            let mut settings = Vec::new();
            if offers("Threads") {
                settings.push(("Threads", threads.to_string()));
            }
            if offers("MultiPV") {
                settings.push(("MultiPV", multipv.to_string()));
            }
            if offers("UCI_Chess960") {
                settings.push(("UCI_Chess960", chess960.to_string()));
            }
            for (name, value) in settings {
                engine.set_option(name, &value)?;
            }
            engine.is_ready()?;
            self.options = Some(wanted);
        }
        engine.position(&request.fen, &[])?;
        engine.start_search(&SearchLimits::infinite())?;
        Ok(engine.name())
    }
}
