//! The app's runtime state and how commands change it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::Poll;

use super::analysis::{AnalysisState, EngineRequest};
use super::chess960::chess960_start;
use super::command::{Command, Navigate};
use super::file_dialog::{FileDialogKind, PendingFileDialog};
use super::game::GameDoc;
use super::game_list::GameList;
use super::line::MoveHistory;
use super::messages::Messages;
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
    /// The games of the opened file.
    GameList,
    /// Edit the comment after a move.
    Comment(crate::pgn::NodeId),
}

/// Everything the app knows while it runs. [`Settings`] inside it are what gets saved.
pub struct AppState {
    /// Saved settings.
    pub settings: Settings,
    /// The game being analysed (a tree with variations) and the line the board follows.
    pub line: GameDoc,
    /// The games of the last opened file or pasted text.
    pub games: Option<GameList>,
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
            line: GameDoc::default(),
            games: None,
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

    fn set_line(&mut self, line: GameDoc) {
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
                self.set_line(GameDoc::default());
                self.players = None;
                self.current_file = None;
            }
            Command::NewChess960(n) => match chess960_start(n) {
                Ok(start) => {
                    self.set_line(GameDoc::new(start));
                    self.players = None;
                    self.current_file = None;
                }
                Err(e) => {
                    self.messages.error(e.to_string());
                }
            },
            Command::Flip => self.settings.flipped = !self.settings.flipped,
            Command::SetTheme(t) => self.settings.theme = t,
            Command::SetScoring(s) => {
                self.settings.scoring = s;
                if let Some(r) = self.analysis.game_review.as_mut()
                    && let Err(e) = r.rescore(s.into())
                {
                    self.messages.error(format!("The review could not be re-scored: {e}"));
                }
            }
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
            Command::SelectNode(id) => {
                let before = self.current().clone();
                self.line.select(id);
                if *self.current() != before {
                    self.position_generation += 1;
                }
            }
            Command::SwitchVariation { down } => {
                self.line.switch_variation(down);
            }
            Command::PromoteVariation(id) => self.edit_tree(|d| d.promote(id)),
            Command::MakeMainline(id) => self.edit_tree(|d| d.make_mainline(id)),
            Command::DeleteFrom(id) => {
                let before = self.current().clone();
                self.edit_tree(|d| d.delete(id));
                if *self.current() != before {
                    self.position_generation += 1;
                }
            }
            Command::SetComment(id, text) => {
                self.edit_tree(|d| d.set_comment(id, &text));
                self.dialog = None;
            }
            Command::SetNags(id, nags) => {
                self.edit_tree(|d| d.set_nags(id, nags.into_iter().map(crate::pgn::Nag).collect()));
            }
            Command::OpenGame(number) => {
                self.open_game(number);
            }
            Command::ReviewLine => self.analysis.requests.push(EngineRequest::ReviewLine),
            Command::AnnotateGame => self.annotate_game(),
            Command::RunInternalSearch { breadth, depth } => {
                self.analysis.requests.push(EngineRequest::InternalSearch { breadth, depth });
            }
            Command::CopyPgn => {
                ctx.copy_text(self.line.to_pgn());
                self.status_note = Some("PGN copied to the clipboard".to_owned());
            }
            Command::CopyFen => {
                ctx.copy_text(self.current().fen());
                self.status_note = Some("FEN copied to the clipboard".to_owned());
            }
        }
    }

    fn edit_tree(&mut self, edit: impl FnOnce(&mut GameDoc) -> Result<(), crate::pgn::TreeError>) {
        if let Err(e) = edit(&mut self.line) {
            self.messages.error(format!("The game was not changed: {e}"));
        }
    }

    fn load_fen(&mut self, text: &str) {
        match parse_fen(text) {
            Ok(state) => {
                self.set_line(GameDoc::new(state));
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
        let list = GameList::read(trimmed, "pasted text");
        if self.open_list(list) {
            self.current_file = None;
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
        let name = path.file_name().map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
        if self.open_list(GameList::read(&text, &name)) {
            self.current_file = Some(path.to_path_buf());
            self.settings.remember_file(path);
            self.status_note = Some(format!("Opened {shown}"));
        }
    }

    /// Opens the first good game of `list` and keeps the list (shown when it has more than one game or
    /// broken ones). Returns false, with an error message, when no game could be read.
    fn open_list(&mut self, list: GameList) -> bool {
        let Some(first) = list.first_good().map(|e| e.number) else {
            let reasons: Vec<String> =
                list.entries.iter().filter_map(|e| e.game.as_ref().err().cloned()).take(3).collect();
            self.messages.error(if reasons.is_empty() {
                format!("{}: no PGN game found. Check that it is a PGN file.", list.source)
            } else {
                format!("{}: no game could be read: {}", list.source, reasons.join("; "))
            });
            return false;
        };
        let show_list = list.entries.len() > 1;
        if list.broken() > 0 {
            self.messages.error(format!(
                "{}: {} of {} games could not be read; they are listed with the reason in the game list.",
                list.source,
                list.broken(),
                list.entries.len()
            ));
        }
        self.games = Some(list);
        self.open_game(first);
        self.dialog = if show_list { Some(Dialog::GameList) } else { None };
        true
    }

    /// Opens game `number` (from 1) of the game list.
    pub fn open_game(&mut self, number: usize) {
        let Some(entry) = self.games.as_ref().and_then(|l| l.entries.iter().find(|e| e.number == number))
        else {
            return;
        };
        match &entry.game {
            Ok(tree) => {
                let players = match (tree.header("White"), tree.header("Black")) {
                    (Some(w), Some(b)) => Some((w.to_owned(), b.to_owned())),
                    _ => None,
                };
                let doc = GameDoc::from_tree(tree.clone());
                self.set_line(doc);
                self.players = players;
            }
            Err(e) => {
                self.messages.error(format!("Game {number} cannot be opened: {e}"));
            }
        }
    }

    /// Writes the finished review of this game into it (see [`Command::AnnotateGame`]).
    fn annotate_game(&mut self) {
        let stamp = self.line.stamp();
        let Some(reviewed) = self.analysis.game_review.as_mut().filter(|r| r.stamp == stamp && !r.annotated)
        else {
            self.messages.error("Review the game first (Review game), then annotate it.");
            return;
        };
        let model = match &self.analysis.model {
            super::analysis::ModelStatus::Ready(info) | super::analysis::ModelStatus::Loading(info) => {
                info.name.clone()
            }
            _ => "model".to_owned(),
        };
        match self.line.annotate(&reviewed.review, &model) {
            Ok(()) => {
                reviewed.annotated = true;
                self.messages.info("The review is written into the game: save it to keep it (Ctrl+S).");
            }
            Err(e) => {
                self.messages.error(format!("The review could not be written into the game: {e}"));
            }
        }
    }

    /// Saves the line (all its moves) as PGN.
    pub fn save_path(&mut self, path: &Path) {
        let shown = path.display();
        match write_atomically(path, self.line.to_pgn().as_bytes()) {
            Ok(()) => {
                self.line.mark_saved();
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

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a failure never
/// leaves a half-written file where the old one was.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| "game.pgn".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
