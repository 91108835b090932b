//! The UCI engine panel's glue: the engine beside the model (Stockfish or any UCI engine), started and
//! stopped by the user, following the board position while it runs. The engine lives on its own thread
//! ([`crate::engine::uci_analysis`]); this keeps the handle and the latest snapshot the panel draws.

use std::path::PathBuf;
use std::sync::Arc;

use super::settings::UciEngineSettings;
use crate::engine::uci_analysis::{UciAnalysis, UciAnalysisRequest, UciSnapshot};
use crate::game::chess::ChessState;
use crate::uci::locate::locate_stockfish;

/// The most MultiPV lines the panel asks for.
pub const MAX_LINES: u32 = 10;

/// What the panel asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum UciCommand {
    /// Start the engine (if needed) and analyse the board position until stopped.
    Start,
    /// Stop analysing (the process stays up).
    Stop,
    /// Use this engine binary (`None`: find Stockfish); a running engine is restarted with it.
    SetPath(Option<PathBuf>),
    /// Number of lines (MultiPV).
    SetMultiPv(u32),
    /// Search threads.
    SetThreads(u32),
}

/// The engine panel's runtime state.
#[derive(Debug, Default)]
pub struct UciPanel {
    link: Option<UciAnalysis>,
    /// Whether the user wants the engine running (it then follows the board).
    pub running: bool,
    /// The latest snapshot of the engine's analysis.
    pub snapshot: UciSnapshot,
    /// Why the engine could not be started (not found), with the fix.
    pub error: Option<String>,
    /// The request last sent, so a new position or new settings are noticed.
    sent: Option<UciAnalysisRequest>,
}

/// The request for `state` with `settings`.
pub fn request_for(state: &ChessState, settings: &UciEngineSettings) -> UciAnalysisRequest {
    let chess960 = state.castling_mode() == shakmaty::CastlingMode::Chess960;
    UciAnalysisRequest {
        fen: if chess960 { state.shredder_fen() } else { state.fen() },
        chess960,
        multipv: settings.multipv.clamp(1, MAX_LINES),
        threads: settings.threads.max(1),
    }
}

impl UciPanel {
    /// Applies a panel command; `settings` are the saved engine settings, `repaint` wakes the UI when the
    /// engine has news.
    pub fn apply(
        &mut self,
        command: UciCommand,
        settings: &mut UciEngineSettings,
        repaint: impl Fn() + Send + Sync + 'static,
    ) {
        match command {
            UciCommand::Start => {
                self.running = true;
                self.error = None;
                if self.link.is_none() {
                    match locate_stockfish(settings.path.as_deref()) {
                        Ok(path) => match UciAnalysis::start(path, Arc::new(repaint)) {
                            Ok(link) => self.link = Some(link),
                            Err(e) => self.fail(format!("could not start the UCI engine thread: {e}")),
                        },
                        Err(e) => self.fail(format!(
                            "{e}. In the app, type the engine's path in the Engine path field of this panel."
                        )),
                    }
                }
            }
            UciCommand::Stop => {
                self.running = false;
                if let Some(link) = &self.link {
                    link.stop();
                }
                self.sent = None;
            }
            UciCommand::SetPath(path) => {
                settings.path = path.filter(|p| !p.as_os_str().is_empty());
                // The next start uses the new binary.
                self.link = None;
                self.sent = None;
                self.snapshot = UciSnapshot::default();
                if self.running {
                    self.apply(UciCommand::Start, settings, repaint);
                }
            }
            UciCommand::SetMultiPv(n) => settings.multipv = n.clamp(1, MAX_LINES),
            UciCommand::SetThreads(n) => settings.threads = n.max(1),
        }
    }

    fn fail(&mut self, why: String) {
        self.error = Some(why);
        self.running = false;
        self.link = None;
    }

    /// Once per frame: takes the engine's latest snapshot and, while running, sends the board position
    /// when it (or the settings) changed.
    pub fn frame(&mut self, state: &ChessState, settings: &UciEngineSettings) {
        let Some(link) = &self.link else { return };
        if let Some(s) = link.latest() {
            self.snapshot = s;
        }
        if !self.running {
            return;
        }
        let request = request_for(state, settings);
        if self.sent.as_ref() != Some(&request) {
            link.analyse(request.clone());
            self.sent = Some(request);
        }
    }

    /// The snapshot's lines when they belong to `state` (an older position's lines are not shown).
    pub fn lines_for(&self, state: &ChessState, settings: &UciEngineSettings) -> Option<&UciSnapshot> {
        let fen = request_for(state, settings).fen;
        (self.snapshot.fen.as_deref() == Some(fen.as_str())).then_some(&self.snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_follow_position_and_settings() {
        let start = ChessState::startpos();
        let settings = UciEngineSettings { path: None, multipv: 40, threads: 0 };
        let r = request_for(&start, &settings);
        assert_eq!(r.fen, start.fen());
        assert!(!r.chess960);
        assert_eq!((r.multipv, r.threads), (MAX_LINES, 1));
        let frc = ChessState::chess960(0).expect("position 0");
        let r = request_for(&frc, &settings);
        assert!(r.chess960);
        assert_eq!(r.fen, frc.shredder_fen());
    }

    #[test]
    fn a_missing_engine_says_how_to_fix_it() {
        let mut panel = UciPanel::default();
        let mut settings =
            UciEngineSettings { path: Some(PathBuf::from("/nonexistent/engine")), multipv: 3, threads: 1 };
        panel.apply(UciCommand::Start, &mut settings, || {});
        let e = panel.error.as_deref().expect("not found");
        assert!(e.contains("/nonexistent/engine") && e.contains("apt-get install stockfish"), "{e}");
        assert!(e.contains("Engine path"), "{e}");
        assert!(!panel.running);
    }
}
