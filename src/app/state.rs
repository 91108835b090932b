//! The app's runtime state and how commands change it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::Poll;

use super::analysis::{AnalysisState, EngineRequest};
use super::chess960::chess960_start;
use super::command::{Command, Navigate};
use super::file_dialog::{FileDialogKind, PendingFileDialog};
use super::line::{LinearLine, MoveHistory};
use super::messages::Messages;
use super::pgn_io::{export_line, import_first_game};
use super::position_setup::parse_fen;
use super::settings::Settings;
use crate::game::chess::ChessState;

/// Largest PGN file the app opens (bigger files belong to the `pgn` subcommand and the game list).
pub const MAX_PGN_BYTES: u64 = 64 * 1024 * 1024;

/// A dialog window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// Paste a FEN or PGN.
    Paste,
    /// Type a path to open or save (when no file dialog is available).
    Path(super::file_dialog::FileDialogKind),
    /// About mavboard, keys and licenses.
    About,
}

/// Everything the app knows while it runs. [`Settings`] inside it are what gets saved.
pub struct AppState {
    /// Saved settings.
    pub settings: Settings,
    /// The line being analysed.
    pub line: LinearLine,
    /// Open messages (toasts).
    pub messages: Messages,
    /// The open dialog window, if any.
    pub dialog: Option<Dialog>,
    /// A short note in the status bar (e.g. a rejected move); replaced by the next one.
    pub status_note: Option<String>,
    /// The file the line came from or was saved to.
    pub current_file: Option<PathBuf>,
    /// Players of the loaded game, if known.
    pub players: Option<(String, String)>,
    /// Increments whenever the board position changes (for the engine glue to notice).
    pub position_generation: u64,
    /// The system file dialog, while it is open.
    pub file_dialog: Option<PendingFileDialog>,
    /// The model's view of the board position (filled by the engine glue).
    pub analysis: AnalysisState,
}

impl AppState {
    /// A fresh state with `settings`, at the standard start position.
    pub fn new(settings: Settings) -> AppState {
        AppState {
            settings,
            line: LinearLine::default(),
            messages: Messages::default(),
            dialog: None,
            status_note: None,
            current_file: None,
            players: None,
            position_generation: 0,
            file_dialog: None,
            analysis: AnalysisState::default(),
        }
    }

    /// The position on the board.
    pub fn current(&self) -> &ChessState {
        self.line.current()
    }

    fn set_line(&mut self, line: LinearLine) {
        self.line = line;
        self.position_generation += 1;
    }

    /// Applies one command. `ctx` is for the clipboard and waking the UI from the file dialog.
    pub fn apply(&mut self, command: Command, ctx: &eframe::egui::Context) {
        match command {
            Command::PlayMove(mv) => match self.line.play(mv) {
                Ok(()) => {
                    self.status_note = None;
                    self.position_generation += 1;
                }
                Err(e) => self.status_note = Some(format!("{e}")),
            },
            Command::RejectMove { attempt } => {
                self.status_note = Some(format!("{attempt} is not a legal move here"));
            }
            Command::Navigate(to) => {
                let before = self.line.cursor();
                match to {
                    Navigate::Start => self.line.go_to(0),
                    Navigate::Back => self.line.back(),
                    Navigate::Forward => self.line.forward(),
                    Navigate::End => self.line.go_to(self.line.moves().len()),
                    Navigate::To(i) => self.line.go_to(i),
                }
                if self.line.cursor() != before {
                    self.position_generation += 1;
                }
            }
            Command::LoadFen(text) => self.load_fen(&text),
            Command::LoadPasted(text) => self.load_pasted(&text),
            Command::NewGame => {
                self.set_line(LinearLine::default());
                self.players = None;
                self.current_file = None;
            }
            Command::NewChess960(n) => match chess960_start(n) {
                Ok(start) => {
                    self.set_line(LinearLine::new(start));
                    self.players = None;
                    self.current_file = None;
                }
                Err(e) => {
                    self.messages.error(e.to_string());
                }
            },
            Command::Flip => self.settings.flipped = !self.settings.flipped,
            Command::SetTheme(t) => self.settings.theme = t,
            Command::SetScoring(s) => self.settings.scoring = s,
            Command::ToggleMovesPanel => self.settings.show_moves_panel ^= true,
            Command::ToggleSetupPanel => self.settings.show_setup_panel ^= true,
            Command::ToggleCoordinates => self.settings.show_coordinates ^= true,
            Command::ToggleLegalMoves => self.settings.show_legal_moves ^= true,
            Command::OpenFileDialog => self.start_file_dialog(FileDialogKind::Open, ctx),
            Command::SaveFileDialog => self.start_file_dialog(FileDialogKind::Save, ctx),
            Command::OpenPath(path) => self.open_path(&path),
            Command::SavePath(path) => self.save_path(&path),
            Command::ShowDialog(d) => self.dialog = d,
            Command::DismissMessage(id) => self.messages.dismiss(id),
            Command::ShowError(text) => {
                self.messages.error(text);
            }
            Command::ToggleSearch => {
                let r = if self.analysis.searching {
                    EngineRequest::StopSearch
                } else {
                    EngineRequest::StartSearch
                };
                self.analysis.requests.push(r);
            }
            Command::StartSearch => self.analysis.requests.push(EngineRequest::StartSearch),
            Command::StopSearch => self.analysis.requests.push(EngineRequest::StopSearch),
            Command::SetSearchSettings(s) => self.settings.search = s,
            Command::SelectMove(m) => self.analysis.selected_move = m,
            Command::HoverMove(m) => self.analysis.hovered_move = m,
            Command::ToggleAnalysisPanel => self.settings.show_analysis_panel ^= true,
            Command::LoadModel(dir) => self.apply_model_folder(dir),
            Command::ChooseModelFolder => self.start_file_dialog(FileDialogKind::ModelFolder, ctx),
            Command::LoadDefaultModel => {
                self.settings.model_dir = None;
                self.analysis.requests.push(EngineRequest::LoadModel(None));
            }
            Command::CopyFen => {
                ctx.copy_text(self.current().fen());
                self.status_note = Some("FEN copied to the clipboard".to_owned());
            }
        }
    }

    fn load_fen(&mut self, text: &str) {
        match parse_fen(text) {
            Ok(state) => {
                self.set_line(LinearLine::new(state));
                self.players = None;
                self.current_file = None;
                self.dialog = None;
            }
            Err(e) => {
                self.messages.error(format!("Position not changed: {e}"));
            }
        }
    }

    fn load_pasted(&mut self, text: &str) {
        let trimmed = text.trim();
        // A FEN is one line with '/' separated ranks; anything else is read as PGN.
        let looks_like_fen =
            !trimmed.contains('\n') && trimmed.matches('/').count() >= 7 && !trimmed.contains('[');
        if looks_like_fen {
            self.load_fen(trimmed);
            return;
        }
        match import_first_game(trimmed) {
            Ok(game) => {
                self.set_line(game.line);
                self.players = game.players;
                self.current_file = None;
                self.dialog = None;
            }
            Err(e) => {
                self.messages.error(format!("Nothing loaded: {e}"));
            }
        }
    }

    fn start_file_dialog(&mut self, kind: FileDialogKind, ctx: &eframe::egui::Context) {
        if self.file_dialog.is_some() {
            self.status_note = Some("A file dialog is already open".to_owned());
            return;
        }
        let ctx = ctx.clone();
        self.file_dialog = Some(PendingFileDialog::start(kind, Arc::new(move || ctx.request_repaint())));
    }

    /// Checks whether the file dialog has answered and acts on it. Called once per frame.
    pub fn poll_file_dialog(&mut self) {
        let Some(dialog) = self.file_dialog.as_mut() else {
            return;
        };
        let kind = dialog.kind();
        let Poll::Ready(answer) = dialog.poll() else {
            return;
        };
        self.file_dialog = None;
        match (answer, kind) {
            (Some(path), FileDialogKind::Open) => self.open_path(&path),
            (Some(path), FileDialogKind::Save) => self.save_path(&path),
            (Some(path), FileDialogKind::ModelFolder) => {
                self.apply_model_folder(path);
            }
            (None, _) => {
                self.status_note = Some(if kind == FileDialogKind::ModelFolder {
                    "No folder chosen. If no dialog appeared, this desktop has no file-chooser portal \
                     (xdg-desktop-portal): type the model folder's path."
                        .to_owned()
                } else {
                    "No file chosen. If no dialog appeared, this desktop has no file-chooser portal \
                     (xdg-desktop-portal): drop a .pgn file on the window or type its path."
                        .to_owned()
                });
                self.dialog = Some(Dialog::Path(kind));
            }
        }
    }

    fn apply_model_folder(&mut self, dir: PathBuf) {
        self.settings.model_dir = Some(dir.clone());
        self.dialog = None;
        self.analysis.requests.push(EngineRequest::LoadModel(Some(dir)));
    }

    /// Opens a PGN file: its first game's main line replaces the current line.
    pub fn open_path(&mut self, path: &Path) {
        let shown = path.display();
        let size = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) => {
                self.messages
                    .error(format!("Cannot open {shown}: {e}. Check the path and the file's permissions."));
                return;
            }
        };
        if size > MAX_PGN_BYTES {
            self.messages.error(format!(
                "{shown} is {size} bytes, more than the board opens ({MAX_PGN_BYTES}). Split it, or check it with \
                 `mavboard pgn`."
            ));
            return;
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                self.messages.error(format!("Cannot read {shown}: {e}. Check the file's permissions."));
                return;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        match import_first_game(&text) {
            Ok(game) => {
                self.set_line(game.line);
                self.players = game.players;
                self.current_file = Some(path.to_path_buf());
                self.settings.remember_file(path);
                self.dialog = None;
                self.status_note = Some(format!("Opened {shown}"));
            }
            Err(e) => {
                self.messages.error(format!("{shown}: {e}"));
            }
        }
    }

    /// Saves the line (all its moves) as PGN.
    pub fn save_path(&mut self, path: &Path) {
        let shown = path.display();
        match std::fs::write(path, export_line(&self.line)) {
            Ok(()) => {
                self.current_file = Some(path.to_path_buf());
                self.settings.remember_file(path);
                self.dialog = None;
                self.messages.info(format!("Saved {shown}"));
            }
            Err(e) => {
                self.messages
                    .error(format!("Cannot save to {shown}: {e}. Choose a folder you can write to."));
            }
        }
    }
}
