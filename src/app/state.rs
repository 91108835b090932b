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
use super::game_review::DocStamp;
use super::line::MoveHistory;
use super::messages::Messages;
use super::position_setup::{looks_like_fen, parse_fen};
use super::settings::Settings;
use crate::game::chess::ChessState;

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
    /// Play against the model: side, chooser, time per move.
    Play,
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
    /// The game list entry the line was opened from: (list id, game number, the document's stamp then).
    pub opened_game: Option<(u64, usize, DocStamp)>,
    /// The open question about unsaved changes, with the action it holds (see [`super::unsaved`]).
    pub unsaved: Option<super::unsaved::PendingAction>,
    /// The action that goes on once the game is saved (the question was answered *Save*).
    pub after_save: Option<super::unsaved::PendingAction>,
    /// The user agreed to close the window with unsaved changes.
    pub close_approved: bool,
    /// The PGN file being read in the background, if any.
    pub loading: Option<super::pgn_loader::PgnLoad>,
    /// The search panel's root move whose PV the board previews (see [`super::pv_preview`]).
    pub pv_hover: Option<super::pv_preview::PvHover>,
    /// The UCI engine beside the model.
    pub uci: super::uci_panel::UciPanel,
    /// The Connect Four or Hex game on the board (`None`: chess, the analysis board).
    pub board_game: Option<super::board_game::BoardGame>,
    /// The solver beside the Connect Four / Hex board.
    pub oracle: super::board_game::OracleLink,
    /// The model beside the Connect Four / Hex board (driven by the app shell when it has an engine).
    pub board_model: super::board_model::BoardModel,
    /// The game against the model, while one is played.
    pub play: super::play::PlayState,
    /// [`AppState::position_generation`] when the Connect Four or Hex game was put on the board.
    board_game_since: u64,
}

impl AppState {
    /// A fresh state with `settings`, at the standard start position.
    pub fn new(settings: Settings) -> AppState {
        let board_game = super::board_game::BoardGame::new(settings.game).ok();
        let mut state = AppState {
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
            opened_game: None,
            unsaved: None,
            after_save: None,
            close_approved: false,
            loading: None,
            pv_hover: None,
            uci: Default::default(),
            board_game: None,
            oracle: Default::default(),
            board_model: Default::default(),
            play: Default::default(),
            board_game_since: 0,
        };
        // The last game chosen comes back (chess when it cannot be set up).
        if board_game.is_none() {
            state.settings.game = super::board_game::GameChoice::Chess;
        }
        state.board_game = board_game;
        state
    }

    /// The position on the board.
    pub fn current(&self) -> &ChessState {
        self.line.current()
    }

    fn set_line(&mut self, line: GameDoc) {
        self.line = line;
        self.position_generation += 1;
    }

    /// Applies one command. `ctx` is for the clipboard and waking the UI from the file dialog. A command
    /// that would replace a game with unsaved changes asks first (see [`super::unsaved`]).
    pub fn apply(&mut self, command: Command, ctx: &eframe::egui::Context) {
        if let Some(command) = self.guard_unsaved(command) {
            self.apply_now(command, ctx);
        }
        self.follow_chess_loads();
    }

    /// A chess position or game that was loaded (a FEN, a pasted or opened PGN, a new game) while Connect
    /// Four or Hex is on the board brings the chess board back. Called after commands and after background
    /// loads finish; a load that fails leaves the other game on the board.
    pub fn follow_chess_loads(&mut self) {
        if self.board_game.is_some() && self.position_generation != self.board_game_since {
            self.set_game(super::board_game::GameChoice::Chess);
        }
    }

    /// Applies one command without asking about unsaved changes.
    pub(super) fn apply_now(&mut self, command: Command, ctx: &eframe::egui::Context) {
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
            Command::Navigate(to) if self.board_game.is_some() => {
                if let Some(g) = self.board_game.as_mut() {
                    let n = match to {
                        Navigate::Start => 0,
                        Navigate::Back => g.cursor().saturating_sub(1),
                        Navigate::Forward => g.cursor() + 1,
                        Navigate::End => g.moves().len(),
                        Navigate::To(i) => i,
                    };
                    g.go_to(n);
                }
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
                if let Some(f) = self.analysis.file_review.as_mut()
                    && let Err(e) = f.rescore(s.into())
                {
                    self.messages.error(format!("The file's reviews could not be re-scored: {e}"));
                }
            }
            Command::ToggleMovesPanel => self.settings.show_moves_panel ^= true,
            Command::ToggleSetupPanel => self.settings.show_setup_panel ^= true,
            Command::ToggleCoordinates => self.settings.show_coordinates ^= true,
            Command::ToggleLegalMoves => self.settings.show_legal_moves ^= true,
            Command::OpenFileDialog => self.start_file_dialog(FileDialogKind::Open, ctx),
            Command::SaveFileDialog => self.start_file_dialog(FileDialogKind::Save, ctx),
            Command::OpenPath(path) => self.open_path(&path, ctx),
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
            Command::ReviewFile => self.analysis.requests.push(EngineRequest::ReviewFile),
            Command::StopFileReview => self.analysis.requests.push(EngineRequest::StopFileReview),
            Command::ExportReviewDialog => self.start_file_dialog(FileDialogKind::ExportReview, ctx),
            Command::ExportReviewPath(path) => self.export_review(&path),
            Command::AnnotateGame => self.annotate_game(),
            Command::RunInternalSearch { breadth, depth } => {
                self.analysis.requests.push(EngineRequest::InternalSearch { breadth, depth });
            }
            Command::CopyPgn => {
                ctx.copy_text(self.line.to_pgn());
                self.status_note = Some("PGN copied to the clipboard".to_owned());
            }
            Command::AnswerUnsaved(answer) => self.answer_unsaved(answer, ctx),
            Command::PreviewPv(action) => self.set_pv_hover(action),
            Command::ToggleTreeNode(path) => self.toggle_tree_node(path),
            Command::SetModelRuntime { device, threads } => self.set_model_runtime(device, threads),
            Command::Uci(c) => {
                let ctx = ctx.clone();
                self.uci.apply(c, &mut self.settings.uci_engine, move || ctx.request_repaint());
            }
            Command::SetGame(choice) => self.set_game(choice),
            Command::Play(c) => self.apply_play(c, ctx),
            Command::SetReviewSettings(s) => self.settings.review = s,
            Command::PlayBoardMove(text) => {
                if let Some(g) = self.board_game.as_mut() {
                    match g.play(&text) {
                        Ok(()) => self.status_note = None,
                        Err(e) => self.status_note = Some(e.to_string()),
                    }
                }
            }
            Command::NewBoardGame => self.set_game(self.settings.game),
            Command::CopyBoardRecord => match self.board_game.as_ref().map(|g| g.record()) {
                Some(Ok(record)) => {
                    ctx.copy_text(record);
                    self.status_note = Some("Game record copied to the clipboard".to_owned());
                }
                Some(Err(e)) => {
                    self.messages.error(format!("The game record could not be written: {e}"));
                }
                None => {}
            },
            Command::ToggleOracle => self.settings.show_oracle ^= true,
            Command::BoardSearch(request) => self.board_model.request = Some(request),
            Command::CopyFen => {
                ctx.copy_text(self.current().fen());
                self.status_note = Some("FEN copied to the clipboard".to_owned());
            }
        }
    }

    /// Puts `choice` on the board: chess goes back to the analysis board (its game kept), Connect Four
    /// and Hex start a new game.
    fn set_game(&mut self, choice: super::board_game::GameChoice) {
        if choice == super::board_game::GameChoice::Chess {
            self.board_game = None;
            self.settings.game = choice;
            return;
        }
        match super::board_game::BoardGame::new(choice) {
            Ok(g) => {
                self.board_game = Some(g);
                self.board_game_since = self.position_generation;
                self.settings.game = choice;
                self.status_note = None;
            }
            Err(e) => {
                self.messages.error(e);
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
        if looks_like_fen(trimmed) {
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
    pub fn poll_file_dialog(&mut self, ctx: &eframe::egui::Context) {
        let Some(dialog) = self.file_dialog.as_mut() else {
            return;
        };
        let kind = dialog.kind();
        let Poll::Ready(answer) = dialog.poll() else {
            return;
        };
        self.file_dialog = None;
        match (answer, kind) {
            (Some(path), FileDialogKind::Open) => self.open_path(&path, ctx),
            (Some(path), FileDialogKind::Save) => self.save_path(&path),
            (Some(path), FileDialogKind::ExportReview) => self.export_review(&path),
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

    /// Opens the first good game of a file's `list` (asking first when the game on the board has unsaved
    /// changes and the file has a game to replace it).
    pub(super) fn offer_file_list(&mut self, list: GameList, path: PathBuf) {
        if self.line.is_modified() && list.first_good().is_some() {
            self.unsaved = Some(super::unsaved::PendingAction::OpenList(Box::new((list, path))));
            return;
        }
        self.open_file_list(list, &path);
    }

    /// Opens the first good game of a file's `list` and makes `path` the current file.
    pub(super) fn open_file_list(&mut self, list: GameList, path: &Path) {
        if self.open_list(list) {
            self.current_file = Some(path.to_path_buf());
            self.settings.remember_file(path);
            self.status_note = Some(format!("Opened {}", path.display()));
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
        let show_list = list.entries.len() > 1 || !list.complete;
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
        let Some(game) = self.games.as_ref().map(|l| l.game(number)) else {
            return;
        };
        match game {
            Ok(tree) => {
                let players = match (tree.header("White"), tree.header("Black")) {
                    (Some(w), Some(b)) => Some((w.to_owned(), b.to_owned())),
                    _ => None,
                };
                let doc = GameDoc::from_tree(tree);
                let list = self.games.as_ref().map_or(0, |l| l.id);
                self.opened_game = Some((list, number, doc.stamp()));
                self.set_line(doc);
                self.players = players;
                self.attach_file_review();
            }
            Err(e) => {
                self.messages.error(format!("Game {number} cannot be opened: {e}"));
            }
        }
    }

    /// When the line is a game of the list opened unchanged and the file review has finished that game,
    /// its review becomes this document's (the eval graph, mistakes and symbols show at once).
    pub fn attach_file_review(&mut self) {
        let stamp = self.line.stamp();
        let Some((list, number, opened)) = self.opened_game else { return };
        if opened != stamp || self.analysis.game_review.as_ref().is_some_and(|r| r.stamp == stamp) {
            return;
        }
        let Some(found) = self.analysis.file_review.as_ref().and_then(|f| f.reviewed(list, number)) else {
            return;
        };
        let mut reviewed = found.clone();
        reviewed.stamp = stamp;
        self.analysis.game_review = Some(reviewed);
    }

    /// The loaded model's name (for annotations).
    fn model_name(&self) -> String {
        match &self.analysis.model {
            super::analysis::ModelStatus::Ready(info) | super::analysis::ModelStatus::Loading(info) => {
                info.name.clone()
            }
            _ => "model".to_owned(),
        }
    }

    /// Writes every game of the open list, with the file review's annotations, to `path` (atomically).
    pub fn export_review(&mut self, path: &Path) {
        let shown = path.display();
        let (Some(list), Some(review)) = (&self.games, &self.analysis.file_review) else {
            self.messages.error("Open a PGN file and review its games (Review all games) before exporting.");
            return;
        };
        if review.list != list.id {
            self.messages.error("The review belongs to another file: review this file's games first.");
            return;
        }
        let text = match review.export(list, &self.model_name()) {
            Ok(t) => t,
            Err(e) => {
                self.messages.error(format!("The reviews could not be written into the games: {e}"));
                return;
            }
        };
        let (reviewed, total) = review.progress();
        match write_atomically(path, text.as_bytes()) {
            Ok(()) => {
                self.dialog = None;
                self.messages.info(format!(
                    "Exported {} games to {shown} ({reviewed} of {total} readable games reviewed)",
                    list.entries.len()
                ));
            }
            Err(e) => {
                self.messages.error(format!("Cannot write {shown}: {e}. Choose a folder you can write to."));
            }
        }
    }

    /// Writes the finished review of this game into it (see [`Command::AnnotateGame`]).
    fn annotate_game(&mut self) {
        let stamp = self.line.stamp();
        let model = self.model_name();
        let Some(reviewed) = self.analysis.game_review.as_mut().filter(|r| r.stamp == stamp && !r.annotated)
        else {
            self.messages.error("Review the game first (Review game), then annotate it.");
            return;
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
