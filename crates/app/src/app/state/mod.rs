//! The app's runtime state and how commands change it. The features' own state lives in their files;
//! what ties several features together lives here, one file per concern: the question about unsaved
//! changes ([`guard`]), PGN files read in the background ([`loading`]), the per-frame hooks ([`frame`]), the crash journal's restore
//! ([`restore`]) and the game against the model ([`play`]). No feature file knows [`AppState`].

pub mod frame;
mod guard;
mod loading;
mod play;
mod restore;

use std::path::{Path, PathBuf};
use std::task::Poll;

use crate::app::analysis::{AnalysisState, EngineRequest};
use crate::app::board_analysis::BoardAnalysis;
use crate::app::command::{AnalysisCommand, Command, DocCommand, FileCommand};
use crate::app::document::Document;
use crate::app::effect::Effect;
use crate::app::file_dialog::{FileDialogKind, PendingFileDialog};
use crate::app::files::Files;
use crate::app::game::GameDoc;
use crate::app::game_list::GameList;
use crate::app::line::MoveHistory;
use crate::app::settings::Settings;
pub use crate::app::view::Dialog;
use crate::app::view::ViewState;
use crate::engine::Repaint;
use crate::game::chess::ChessState;
use crate::game::fen::looks_like_fen;

/// Everything the app knows while it runs, one field per feature. [`Settings`] inside it are what gets
/// saved.
pub struct AppState {
    /// Saved settings.
    pub settings: Settings,
    /// The game on the board (chess, Connect Four or Hex) and where it came from.
    pub doc: Document,
    /// The open game list, a file being read, the file dialog, the unsaved-changes question.
    pub files: Files,
    /// Dialogs, messages, the status note, the PV preview.
    pub view: ViewState,
    /// The model's view of the chess position (filled by the engine glue): values, search, reviews.
    pub analysis: AnalysisState,
    /// The solver and the model beside a Connect Four / Hex board.
    pub board_analysis: BoardAnalysis,
    /// The UCI engine beside the model.
    pub uci: crate::app::uci_panel::UciPanel,
    /// Model B, the second model beside the loaded one (*Engine → Compare with…*).
    pub compare: crate::app::compare_model::CompareModel,
    /// The game against the model, while one is played.
    pub play: crate::app::play::PlayState,
    /// What the commands asked of the window since the shell last took them (see [`Effect`]).
    pub effects: Vec<Effect>,
    /// Wakes the UI from a background thread (the file dialog, a PGN being read, the UCI engine); the
    /// shell sets it, and it does nothing until then.
    pub wake: Repaint,
    /// The chess engine's glue, driven by [`frame::FRAME_HOOKS`]; the shell starts it (none in tests that
    /// only drive the board).
    pub engine: Option<Box<dyn frame::EngineGlue>>,
}

impl AppState {
    /// A fresh state with `settings`, at the standard start position.
    pub fn new(settings: Settings) -> AppState {
        let board_game = crate::app::board_game::BoardGame::new(settings.game).ok();
        let mut state = AppState {
            settings,
            doc: Document::default(),
            files: Files::default(),
            view: ViewState::default(),
            analysis: AnalysisState::default(),
            board_analysis: BoardAnalysis::default(),
            uci: Default::default(),
            compare: Default::default(),
            play: Default::default(),
            effects: Vec::new(),
            wake: std::sync::Arc::new(|| {}),
            engine: None,
        };
        // The last game chosen comes back (chess when it cannot be set up).
        if board_game.is_none() {
            state.settings.game = crate::app::board_game::GameChoice::Chess;
        }
        state.doc.board_game = board_game;
        state
    }

    /// The position on the board.
    pub fn current(&self) -> &ChessState {
        self.doc.line.current()
    }

    /// Applies one command (what it needs of the window goes to [`AppState::effects`]). A command
    /// that would replace a game with unsaved changes asks first (see [`crate::app::unsaved`]).
    pub fn apply(&mut self, command: Command) {
        if let Some(command) = self.guard_unsaved(command) {
            self.apply_now(command);
        }
        self.follow_chess_loads();
    }

    /// A chess position or game that was loaded (a FEN, a pasted or opened PGN, a new game) while Connect
    /// Four or Hex is on the board brings the chess board back. Called after commands and after background
    /// loads finish; a load that fails leaves the other game on the board.
    pub fn follow_chess_loads(&mut self) {
        if self.doc.board_game.is_some() && self.doc.position_generation != self.doc.board_game_since {
            self.set_game(crate::app::board_game::GameChoice::Chess);
        }
    }

    /// Applies one command without asking about unsaved changes.
    pub(super) fn apply_now(&mut self, command: Command) {
        match command {
            Command::Doc(c) => self.apply_doc(c),
            Command::File(c) => self.apply_file(c),
            Command::View(c) => {
                let board = crate::game::GameState::to_text(self.current());
                self.view.apply(c, &mut self.settings, board);
            }
            Command::Analysis(c) => self.apply_analysis(c),
            Command::Uci(c) => {
                let wake = self.wake.clone();
                self.uci.apply(c, &mut self.settings.uci_engine, move || wake());
            }
            Command::Compare(crate::app::compare_model::CompareCommand::ChooseFolder) => {
                self.start_file_dialog(FileDialogKind::CompareFolder)
            }
            Command::Compare(c) => {
                if matches!(c, crate::app::compare_model::CompareCommand::Open(_)) {
                    self.view.dialog = None;
                }
                self.compare.apply(c, &self.settings, self.wake.clone());
            }
            Command::Play(c) => self.apply_play(c),
        }
    }

    /// Applies a command for the game on the board.
    fn apply_doc(&mut self, command: DocCommand) {
        match command {
            DocCommand::PlayMove(mv) => match self.doc.play(mv) {
                Ok(()) => self.view.status_note = None,
                Err(e) => self.view.status_note = Some(e.to_string()),
            },
            DocCommand::RejectMove { attempt } => {
                self.view.status_note = Some(format!("{attempt} is not a legal move here"));
            }
            DocCommand::Navigate(to) => self.doc.navigate(to),
            DocCommand::LoadFen(text) => self.load_fen(&text),
            DocCommand::LoadPasted(text) => self.load_pasted(&text),
            DocCommand::NewGame if self.doc.board_game.is_some() => self.set_game(self.settings.game),
            DocCommand::NewGame => {
                self.doc.set_line(GameDoc::default());
                self.doc.forget_origin();
            }
            DocCommand::NewChess960(n) => match ChessState::chess960(n) {
                Ok(start) => {
                    self.doc.set_line(GameDoc::new(start));
                    self.doc.forget_origin();
                }
                Err(e) => {
                    self.view.messages.error(e.to_string());
                }
            },
            DocCommand::SelectNode(id) => {
                let before = self.current().clone();
                self.doc.line.select(id);
                if *self.current() != before {
                    self.doc.position_generation += 1;
                }
            }
            DocCommand::SwitchVariation { down } => {
                self.doc.line.switch_variation(down);
            }
            DocCommand::PromoteVariation(id) => self.edit_tree(|d| d.promote(id)),
            DocCommand::MakeMainline(id) => self.edit_tree(|d| d.make_mainline(id)),
            DocCommand::DeleteFrom(id) => {
                let before = self.current().clone();
                self.edit_tree(|d| d.delete(id));
                if *self.current() != before {
                    self.doc.position_generation += 1;
                }
            }
            DocCommand::SetComment(id, text) => {
                self.edit_tree(|d| d.set_comment(id, &text));
                self.view.dialog = None;
            }
            DocCommand::SetNags(id, nags) => {
                self.edit_tree(|d| d.set_nags(id, nags.into_iter().map(crate::pgn::Nag).collect()));
            }
            DocCommand::AnnotateGame => self.annotate_game(),
            DocCommand::SetGame(choice) => self.set_game(choice),
            DocCommand::CopyRecord => match self.doc.record() {
                Ok((record, name)) => {
                    self.effects.push(Effect::CopyText(record));
                    self.view.status_note = Some(format!("{name} copied to the clipboard"));
                }
                Err(e) => {
                    self.view.messages.error(format!("The game record could not be written: {e}"));
                }
            },
            DocCommand::CopyFen => {
                self.effects.push(Effect::CopyText(self.current().fen()));
                self.view.status_note = Some("FEN copied to the clipboard".to_owned());
            }
        }
    }

    /// Applies a command for files.
    fn apply_file(&mut self, command: FileCommand) {
        match command {
            FileCommand::OpenFileDialog => self.start_file_dialog(FileDialogKind::Open),
            FileCommand::SaveFileDialog => self.start_file_dialog(FileDialogKind::Save),
            FileCommand::OpenPath(path) => self.open_path(&path),
            FileCommand::SavePath(path) => self.save_path(&path),
            FileCommand::OpenGame(number) => {
                self.open_game(number);
            }
            FileCommand::ExportReviewDialog => self.start_file_dialog(FileDialogKind::ExportReview),
            FileCommand::ExportReviewPath(path) => self.export_review(&path),
            FileCommand::AnswerUnsaved(answer) => self.answer_unsaved(answer),
            FileCommand::AnswerJournal(answer) => self.answer_journal(answer),
        }
    }

    /// Whether the running search is the analysis's own: during a game against the model the search is the
    /// model's move, with the game's limits, and goes on as it started.
    fn analysis_search_running(&self) -> bool {
        self.analysis.searching && self.play.game.as_ref().is_none_or(|g| g.ended.is_some())
    }

    /// Applies a command for the model and its analyses.
    fn apply_analysis(&mut self, command: AnalysisCommand) {
        match command {
            AnalysisCommand::Inside(c) => self.analysis.inside.apply(c),
            AnalysisCommand::SetScoring(s) => {
                // A running search values its leaves under the rule: it starts again under the new one.
                if self.analysis_search_running() && self.settings.scoring != s {
                    self.analysis.requests.push(EngineRequest::StartSearch);
                }
                self.settings.scoring = s;
                if let Some(r) = self.analysis.game_review.as_mut()
                    && let Err(e) = r.rescore(s)
                {
                    self.view.messages.error(format!("The review could not be re-scored: {e}"));
                }
                if let Some(f) = self.analysis.file_review.as_mut()
                    && let Err(e) = f.rescore(s)
                {
                    self.view.messages.error(format!("The file's reviews could not be re-scored: {e}"));
                }
            }
            AnalysisCommand::SetCompareScoring(s) => self.settings.compare_scoring = s,
            AnalysisCommand::ToggleSearch => {
                let r = if self.analysis.searching {
                    EngineRequest::StopSearch
                } else {
                    EngineRequest::StartSearch
                };
                self.analysis.requests.push(r);
            }
            AnalysisCommand::StartSearch => self.analysis.requests.push(EngineRequest::StartSearch),
            AnalysisCommand::StopSearch => self.analysis.requests.push(EngineRequest::StopSearch),
            AnalysisCommand::SetSearchSettings(s) => {
                // A running search goes on with the new settings.
                if self.analysis_search_running() && self.settings.search != s {
                    self.analysis.requests.push(EngineRequest::StartSearch);
                }
                self.settings.search = s;
            }
            AnalysisCommand::SelectMove(m) => self.analysis.selected_move = m,
            AnalysisCommand::HoverMove(m) => self.analysis.hovered_move = m,
            AnalysisCommand::LoadModel(dir) => self.apply_model_folder(dir),
            AnalysisCommand::ChooseModelFolder => self.start_file_dialog(FileDialogKind::ModelFolder),
            AnalysisCommand::LoadDefaultModel => {
                self.settings.model_dir = None;
                self.analysis.requests.push(EngineRequest::LoadModel(None));
            }
            AnalysisCommand::ReviewLine => self.analysis.requests.push(EngineRequest::ReviewLine),
            AnalysisCommand::ReviewFile => self.analysis.requests.push(EngineRequest::ReviewFile),
            AnalysisCommand::StopFileReview => self.analysis.requests.push(EngineRequest::StopFileReview),
            AnalysisCommand::RunInternalSearch { breadth, depth, decoding } => {
                self.analysis.requests.push(EngineRequest::InternalSearch { breadth, depth, decoding });
            }
            AnalysisCommand::ToggleTreeNode(path) => self.analysis.toggle_tree_node(path),
            AnalysisCommand::SetModelRuntime { device, threads } => self.set_model_runtime(device, threads),
            AnalysisCommand::SetReviewSettings(s) => self.settings.review = s,
            AnalysisCommand::BoardSearch(request) => self.board_analysis.model.request = Some(request),
        }
    }

    /// Puts `choice` on the board: chess goes back to the analysis board (its game kept), Connect Four
    /// and Hex start a new game.
    fn set_game(&mut self, choice: crate::app::board_game::GameChoice) {
        if choice == crate::app::board_game::GameChoice::Chess {
            self.doc.board_game = None;
            self.settings.game = choice;
            return;
        }
        match crate::app::board_game::BoardGame::new(choice) {
            Ok(g) => {
                self.doc.board_game = Some(g);
                self.doc.board_game_since = self.doc.position_generation;
                self.settings.game = choice;
                self.view.status_note = None;
            }
            Err(e) => {
                self.view.messages.error(e.to_string());
            }
        }
    }

    fn edit_tree(&mut self, edit: impl FnOnce(&mut GameDoc) -> Result<(), crate::pgn::TreeError>) {
        if let Err(e) = edit(&mut self.doc.line) {
            self.view.messages.error(format!("The game was not changed: {e}"));
        }
    }

    fn load_fen(&mut self, text: &str) {
        match ChessState::from_fen(text.trim()) {
            Ok(state) => {
                self.doc.set_line(GameDoc::new(state));
                self.doc.players = None;
                self.doc.current_file = None;
                self.view.dialog = None;
            }
            Err(e) => {
                self.view.messages.error(format!("Position not changed: {e}"));
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
            self.doc.current_file = None;
        }
    }

    fn start_file_dialog(&mut self, kind: FileDialogKind) {
        if self.files.file_dialog.is_some() {
            self.view.status_note = Some("A file dialog is already open".to_owned());
            return;
        }
        self.files.file_dialog = Some(PendingFileDialog::start(kind, self.wake.clone()));
    }

    /// Checks whether the file dialog has answered and acts on it. Called once per frame.
    pub fn poll_file_dialog(&mut self) {
        let Some(dialog) = self.files.file_dialog.as_mut() else {
            return;
        };
        let kind = dialog.kind();
        let Poll::Ready(answer) = dialog.poll() else {
            return;
        };
        self.files.file_dialog = None;
        match (answer, kind) {
            (Some(path), FileDialogKind::Open) => self.open_path(&path),
            (Some(path), FileDialogKind::Save) => self.save_path(&path),
            (Some(path), FileDialogKind::ExportReview) => self.export_review(&path),
            (Some(path), FileDialogKind::ModelFolder) => {
                self.apply_model_folder(path);
            }
            (Some(path), FileDialogKind::CompareFolder) => {
                self.apply(Command::Compare(crate::app::compare_model::CompareCommand::Open(path)));
            }
            (None, _) => {
                let folder = matches!(kind, FileDialogKind::ModelFolder | FileDialogKind::CompareFolder);
                self.view.status_note = Some(if folder {
                    "No folder chosen. If no dialog appeared, this desktop has no file-chooser portal \
                     (xdg-desktop-portal): type the model folder's path."
                        .to_owned()
                } else {
                    "No file chosen. If no dialog appeared, this desktop has no file-chooser portal \
                     (xdg-desktop-portal): drop a .pgn file on the window or type its path."
                        .to_owned()
                });
                self.view.dialog = Some(Dialog::Path(kind));
            }
        }
    }

    fn apply_model_folder(&mut self, dir: PathBuf) {
        self.settings.model_dir = Some(dir.clone());
        self.view.dialog = None;
        self.analysis.requests.push(EngineRequest::LoadModel(Some(dir)));
    }

    /// Opens the first good game of a file's `list` (asking first when the game on the board has unsaved
    /// changes and the file has a game to replace it).
    pub(super) fn offer_file_list(&mut self, list: GameList, path: PathBuf) {
        if self.doc.line.is_modified() && list.first_good().is_some() {
            self.files.unsaved = Some(crate::app::unsaved::PendingAction::OpenList(Box::new((list, path))));
            return;
        }
        self.open_file_list(list, &path);
    }

    /// Opens the first good game of a file's `list` and makes `path` the current file.
    pub(super) fn open_file_list(&mut self, list: GameList, path: &Path) {
        if self.open_list(list) {
            self.doc.current_file = Some(path.to_path_buf());
            self.settings.remember_file(path);
            self.view.status_note = Some(format!("Opened {}", path.display()));
        }
    }

    /// Opens the first good game of `list` and keeps the list (shown when it has more than one game or
    /// broken ones). Returns false, with an error message, when no game could be read.
    fn open_list(&mut self, list: GameList) -> bool {
        let Some(first) = list.first_good().map(|e| e.number()) else {
            let reasons: Vec<String> = list
                .entries
                .iter()
                .filter_map(|e| e.game.as_ref().err().map(ToString::to_string))
                .take(3)
                .collect();
            self.view.messages.error(if reasons.is_empty() {
                format!("{}: no PGN game found. Check that it is a PGN file.", list.source)
            } else {
                format!("{}: no game could be read: {}", list.source, reasons.join("; "))
            });
            return false;
        };
        let show_list = list.entries.len() > 1 || !list.complete;
        if list.broken() > 0 {
            self.view.messages.error(format!(
                "{}: {} of {} games could not be read; they are listed with the reason in the game list.",
                list.source,
                list.broken(),
                list.entries.len()
            ));
        }
        self.files.games = Some(list);
        self.open_game(first);
        self.view.dialog = if show_list { Some(Dialog::GameList) } else { None };
        true
    }

    /// Opens game `number` (from 1) of the game list.
    pub fn open_game(&mut self, number: usize) {
        let Some(game) = self.files.games.as_ref().map(|l| l.game(number)) else {
            return;
        };
        match game {
            Ok(tree) => {
                let players = match (tree.header("White"), tree.header("Black")) {
                    (Some(w), Some(b)) => Some((w.to_owned(), b.to_owned())),
                    _ => None,
                };
                let doc = GameDoc::from_tree(tree);
                let list = self.files.games.as_ref().map_or(0, |l| l.id);
                self.doc.opened_game = Some((list, number, doc.stamp()));
                self.doc.set_line(doc);
                self.doc.players = players;
                self.attach_file_review();
            }
            Err(e) => {
                self.view.messages.error(format!("Game {number} cannot be opened: {e}"));
            }
        }
    }

    /// When the line is a game of the list opened unchanged and the file review has finished that game,
    /// its review becomes this document's (the eval graph, mistakes and symbols show at once).
    pub fn attach_file_review(&mut self) {
        attach_file_review(&self.doc, &mut self.analysis);
    }

    /// The loaded model's name (for annotations).
    fn model_name(&self) -> String {
        match &self.analysis.model {
            crate::app::analysis::ModelStatus::Ready(info)
            | crate::app::analysis::ModelStatus::Loading(info) => info.name.clone(),
            _ => "model".to_owned(),
        }
    }

    /// Writes every game of the open list, with the file review's annotations, to `path` (atomically).
    pub fn export_review(&mut self, path: &Path) {
        let shown = path.display();
        let (Some(list), Some(review)) = (&self.files.games, &self.analysis.file_review) else {
            self.view
                .messages
                .error("Open a PGN file and review its games (Review all games) before exporting.");
            return;
        };
        if review.list != list.id {
            self.view.messages.error("The review belongs to another file: review this file's games first.");
            return;
        }
        let text = match review.export(list, &self.model_name()) {
            Ok(t) => t,
            Err(e) => {
                self.view.messages.error(format!("The reviews could not be written into the games: {e}"));
                return;
            }
        };
        let (reviewed, total) = review.progress();
        match write_atomically(path, text.as_bytes()) {
            Ok(()) => {
                self.view.dialog = None;
                self.view.messages.info(format!(
                    "Exported {} games to {shown} ({reviewed} of {total} readable games reviewed)",
                    list.entries.len()
                ));
            }
            Err(e) => {
                self.view
                    .messages
                    .error(format!("Cannot write {shown}: {e}. Choose a folder you can write to."));
            }
        }
    }

    /// Writes the finished review of this game into it (see [`DocCommand::AnnotateGame`]).
    fn annotate_game(&mut self) {
        let stamp = self.doc.line.stamp();
        let model = self.model_name();
        let Some(reviewed) = self.analysis.game_review.as_mut().filter(|r| r.stamp == stamp && !r.annotated)
        else {
            self.view.messages.error("Review the game first (Review game), then annotate it.");
            return;
        };
        match self.doc.line.annotate(&reviewed.review, &model) {
            Ok(()) => {
                reviewed.annotated = true;
                self.view.messages.info("The review is written into the game: save it to keep it (Ctrl+S).");
            }
            Err(e) => {
                self.view.messages.error(format!("The review could not be written into the game: {e}"));
            }
        }
    }

    /// Changes the model's device and threads (0: automatic), remembers them, and reloads the model with
    /// them. Nothing happens when they are unchanged.
    fn set_model_runtime(&mut self, device: crate::inference::device::Device, threads: usize) {
        if (self.settings.model_device, self.settings.model_threads) == (device, threads) {
            return;
        }
        self.settings.model_device = device;
        self.settings.model_threads = threads.min(crate::app::model_runtime::MAX_THREADS);
        self.analysis.device = None;
        self.analysis.requests.push(EngineRequest::LoadModel(self.settings.model_dir.clone()));
    }

    /// Saves the line (all its moves) as PGN.
    pub fn save_path(&mut self, path: &Path) {
        let shown = path.display();
        match write_atomically(path, self.doc.line.to_pgn().as_bytes()) {
            Ok(()) => {
                self.doc.line.mark_saved();
                self.doc.current_file = Some(path.to_path_buf());
                self.settings.remember_file(path);
                self.view.dialog = None;
                self.view.messages.info(format!("Saved {shown}"));
            }
            Err(e) => {
                self.view
                    .messages
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

/// When the line is a game of the list opened unchanged and the file review has finished that game, its
/// review becomes the document's (the eval graph, mistakes and symbols show at once). The engine glue calls
/// it when a game of the file review ends; [`AppState::attach_file_review`] when a game is opened.
pub fn attach_file_review(doc: &Document, analysis: &mut AnalysisState) {
    let stamp = doc.line.stamp();
    let Some((list, number, opened)) = doc.opened_game else { return };
    if opened != stamp || analysis.game_review.as_ref().is_some_and(|r| r.stamp == stamp) {
        return;
    }
    let Some(found) = analysis.file_review.as_ref().and_then(|f| f.reviewed(list, number)) else {
        return;
    };
    let mut reviewed = found.clone();
    reviewed.stamp = stamp;
    analysis.game_review = Some(reviewed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::play::{PlayGame, PlaySetup};
    use crate::mav::scoring::Scoring;

    fn starts(state: &AppState) -> usize {
        state.analysis.requests.iter().filter(|r| matches!(r, EngineRequest::StartSearch)).count()
    }

    #[test]
    fn a_new_rule_or_new_settings_restart_the_analysis_search_only() {
        let mut state = AppState::new(Settings::default());
        state.apply(Command::Analysis(AnalysisCommand::SetScoring(Scoring::Max)));
        assert_eq!(starts(&state), 0, "no search runs");
        state.analysis.searching = true;
        state.apply(Command::Analysis(AnalysisCommand::SetScoring(Scoring::Max)));
        assert_eq!(starts(&state), 0, "the same rule");
        state.apply(Command::Analysis(AnalysisCommand::SetScoring(Scoring::Mean)));
        assert_eq!(starts(&state), 1, "a new rule restarts the search");
        let mut search = state.settings.search.clone();
        search.c_puct += 0.5;
        state.apply(Command::Analysis(AnalysisCommand::SetSearchSettings(search.clone())));
        assert_eq!(starts(&state), 2, "new settings restart it");
        // During a game against the model, the running search is the model's move: it goes on.
        state.play.game = Some(PlayGame::new(PlaySetup::default(), "model".into()));
        state.apply(Command::Analysis(AnalysisCommand::SetScoring(Scoring::Max)));
        search.c_puct += 0.5;
        state.apply(Command::Analysis(AnalysisCommand::SetSearchSettings(search)));
        assert_eq!(starts(&state), 2, "the game's search is left alone");
        assert_eq!(state.settings.scoring, Scoring::Max, "the rule is still chosen");
    }
}
