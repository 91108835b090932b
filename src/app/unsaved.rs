//! Unsaved changes: before the window closes, or another game replaces one with changes that are not
//! saved (moves added, comments, NAGs, annotations), the app asks: Save, Discard or Cancel.
//!
//! The question holds the action it interrupted ([`PendingAction`]). *Save* goes through the ordinary
//! atomic save (to the game's file, or through the Save As dialog when it has none) and carries the action
//! out once the game is saved; *Discard* carries it out at once; *Cancel* drops it.

use eframe::egui;

use super::command::Command;
use super::command::{DocCommand, FileCommand};
use super::file_dialog::FileDialogKind;
use super::game_list::GameList;
use super::state::{AppState, Dialog};
use crate::game::chess::ChessState;
use crate::game::fen::looks_like_fen;

/// What the question about unsaved changes interrupted.
#[derive(Debug, Clone)]
pub enum PendingAction {
    /// Closing the window.
    Close,
    /// A command that replaces the game (a game of the list, paste, new game, FEN).
    Replace(Command),
    /// A file's games were read: open its first good game and make it the current file.
    OpenList(Box<(super::game_list::GameList, std::path::PathBuf)>),
}

impl PendingAction {
    /// What the action does, for the question ("… before closing mavboard?").
    pub fn describe(&self) -> &'static str {
        match self {
            PendingAction::Close => "closing mavboard",
            PendingAction::Replace(
                Command::Doc(DocCommand::NewGame) | Command::Doc(DocCommand::NewChess960(_)),
            ) => "starting a new game",
            PendingAction::Replace(Command::Play(_)) => "starting a game against the model",
            PendingAction::Replace(Command::Doc(DocCommand::LoadFen(_))) => "setting up the position",
            PendingAction::Replace(Command::File(FileCommand::AnswerJournal(_))) => {
                "restoring the unsaved game"
            }
            PendingAction::Replace(_) | PendingAction::OpenList(_) => "opening another game",
        }
    }
}

/// The user's answer to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save the game, then go on.
    Save,
    /// Go on without saving.
    Discard,
    /// Keep the game and do nothing.
    Cancel,
}

impl AppState {
    /// Whether `command` would replace the game on the board with another one. Input that cannot be used
    /// (a bad FEN, text with no game, an unknown or broken game of the list) replaces nothing: it gets its
    /// error without a question. Opening a file is asked about once its games are read.
    pub fn replaces_game(&self, command: &Command) -> bool {
        match command {
            // A new Connect Four or Hex game replaces only that game (they are not saved).
            Command::Doc(DocCommand::NewGame) => self.doc.board_game.is_none(),
            // A game against the model replaces the chess game (Connect Four and Hex games are not saved).
            Command::Play(super::play::PlayCommand::Start(_)) => self.doc.board_game.is_none(),
            Command::Doc(DocCommand::NewChess960(n)) => ChessState::chess960(*n).is_ok(),
            Command::Doc(DocCommand::LoadFen(text)) => ChessState::from_fen(text.trim()).is_ok(),
            Command::Doc(DocCommand::LoadPasted(text)) if looks_like_fen(text) => {
                ChessState::from_fen(text.trim()).is_ok()
            }
            Command::Doc(DocCommand::LoadPasted(text)) => {
                GameList::read(text.trim(), "pasted text").first_good().is_some()
            }
            // Restoring a crash journal's chess game replaces the chess game.
            Command::File(FileCommand::AnswerJournal(super::journal::JournalAnswer::Restore)) => {
                self.files.journal.offers.front().is_some_and(|o| o.entry.chess.is_some())
            }
            Command::File(FileCommand::OpenGame(n)) => self
                .files
                .games
                .as_ref()
                .is_some_and(|l| l.entries.iter().any(|e| e.number == *n && e.game.is_ok())),
            _ => false,
        }
    }

    /// Lets `command` through, or, when it would replace a game with unsaved changes, keeps it for the
    /// question and returns `None`.
    pub fn guard_unsaved(&mut self, command: Command) -> Option<Command> {
        if self.doc.line.is_modified() && self.replaces_game(&command) {
            self.files.unsaved = Some(PendingAction::Replace(command));
            None
        } else {
            Some(command)
        }
    }

    /// Once per frame, before the panels: holds a close of the window while the game has unsaved changes
    /// (and asks), and carries out an action that waited for a save once the game is saved.
    pub fn unsaved_frame(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested())
            && self.doc.line.is_modified()
            && !self.files.close_approved
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.files.unsaved = Some(PendingAction::Close);
        }
        if self.files.after_save.is_none() {
            return;
        }
        if !self.doc.line.is_modified() {
            if let Some(action) = self.files.after_save.take() {
                self.proceed(action, ctx);
            }
        } else if self.files.file_dialog.is_none()
            && self.view.dialog != Some(Dialog::Path(FileDialogKind::Save))
        {
            // The save was cancelled or failed: keep the game, and say that nothing else happened.
            if let Some(action) = self.files.after_save.take() {
                self.view.status_note =
                    Some(format!("The game was not saved, so {} was cancelled", action.describe()));
            }
        }
    }

    /// The file *Save* writes to without asking: the game's own file, unless it came from a file with
    /// several games (writing this game alone there would drop the others), then `None`: Save As asks.
    pub fn direct_save_target(&self) -> Option<std::path::PathBuf> {
        let path = self.doc.current_file.clone()?;
        let several = self.files.games.as_ref().is_some_and(|l| l.entries.len() > 1);
        (!several).then_some(path)
    }

    /// Acts on the user's answer to the question.
    pub fn answer_unsaved(&mut self, answer: UnsavedAnswer, ctx: &egui::Context) {
        let Some(action) = self.files.unsaved.take() else { return };
        match answer {
            UnsavedAnswer::Cancel => {}
            UnsavedAnswer::Discard => self.proceed(action, ctx),
            UnsavedAnswer::Save => {
                self.files.after_save = Some(action);
                match self.direct_save_target() {
                    Some(path) => self.apply(Command::File(FileCommand::SavePath(path)), ctx),
                    None => self.apply(Command::File(FileCommand::SaveFileDialog), ctx),
                }
                // A save to the known file is done now; go on in the same frame.
                if !self.doc.line.is_modified()
                    && let Some(action) = self.files.after_save.take()
                {
                    self.proceed(action, ctx);
                }
            }
        }
    }

    /// Carries out an action the question held.
    fn proceed(&mut self, action: PendingAction, ctx: &egui::Context) {
        match action {
            PendingAction::Close => {
                self.files.close_approved = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            PendingAction::Replace(command) => self.apply_now(command, ctx),
            PendingAction::OpenList(list) => {
                let (list, path) = *list;
                self.open_file_list(list, &path);
            }
        }
    }
}
