//! The question about unsaved changes as the app asks it (see [`crate::app::unsaved`]): which commands
//! replace the game, holding them for the question, the window's close, and carrying out the answer.

use super::{AppState, Dialog};
use crate::app::command::{Command, DocCommand, FileCommand, JournalAnswer, UnsavedAnswer};
use crate::app::effect::Effect;
use crate::app::file_dialog::FileDialogKind;
use crate::app::game_list::GameList;
use crate::app::unsaved::PendingAction;
use crate::game::chess::ChessState;
use crate::game::fen::looks_like_fen;

impl AppState {
    /// Whether `command` would replace the game on the board with another one. Input that cannot be used
    /// (a bad FEN, text with no game, an unknown or broken game of the list) replaces nothing: it gets its
    /// error without a question. Opening a file is asked about once its games are read.
    pub fn replaces_game(&self, command: &Command) -> bool {
        match command {
            // A new Connect Four or Hex game replaces only that game (they are not saved).
            Command::Doc(DocCommand::NewGame) => self.doc.board_game.is_none(),
            // A game against the model replaces the chess game (Connect Four and Hex games are not saved).
            Command::Play(crate::app::play::PlayCommand::Start(_)) => self.doc.board_game.is_none(),
            Command::Doc(DocCommand::NewChess960(n)) => ChessState::chess960(*n).is_ok(),
            Command::Doc(DocCommand::LoadFen(text)) => ChessState::from_fen(text.trim()).is_ok(),
            Command::Doc(DocCommand::LoadPasted(text)) if looks_like_fen(text) => {
                ChessState::from_fen(text.trim()).is_ok()
            }
            Command::Doc(DocCommand::LoadPasted(text)) => {
                GameList::read(text.trim(), "pasted text").first_good().is_some()
            }
            // Restoring a crash journal's chess game replaces the chess game.
            Command::File(FileCommand::AnswerJournal(JournalAnswer::Restore)) => {
                self.files.journal.offers.front().is_some_and(|o| o.entry.chess.is_some())
            }
            Command::File(FileCommand::OpenGame(n)) => self
                .files
                .games
                .as_ref()
                .is_some_and(|l| l.entries.iter().any(|e| e.number() == *n && e.game.is_ok())),
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

    /// Once per frame, before the panels: holds a close of the window (`close_requested`: the user asked
    /// for one this frame) while the game has unsaved changes (and asks), and carries out an action that
    /// waited for a save once the game is saved.
    pub fn unsaved_frame(&mut self, close_requested: bool) {
        if close_requested && self.doc.line.is_modified() && !self.files.close_approved {
            self.effects.push(Effect::CancelClose);
            self.files.unsaved = Some(PendingAction::Close);
        }
        if self.files.after_save.is_none() {
            return;
        }
        if !self.doc.line.is_modified() {
            if let Some(action) = self.files.after_save.take() {
                self.proceed(action);
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
    pub fn answer_unsaved(&mut self, answer: UnsavedAnswer) {
        let Some(action) = self.files.unsaved.take() else { return };
        match answer {
            UnsavedAnswer::Cancel => {}
            UnsavedAnswer::Discard => self.proceed(action),
            UnsavedAnswer::Save => {
                self.files.after_save = Some(action);
                match self.direct_save_target() {
                    Some(path) => self.apply(Command::File(FileCommand::SavePath(path))),
                    None => self.apply(Command::File(FileCommand::SaveFileDialog)),
                }
                // A save to the known file is done now; go on in the same frame.
                if !self.doc.line.is_modified()
                    && let Some(action) = self.files.after_save.take()
                {
                    self.proceed(action);
                }
            }
        }
    }

    /// Carries out an action the question held.
    fn proceed(&mut self, action: PendingAction) {
        match action {
            PendingAction::Close => {
                self.files.close_approved = true;
                self.effects.push(Effect::CloseWindow);
            }
            PendingAction::Replace(command) => self.apply_now(command),
            PendingAction::OpenList(list) => {
                let (list, path) = *list;
                self.open_file_list(list, &path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::command::BoardMove;
    use crate::app::settings::Settings;

    #[test]
    fn closing_with_unsaved_changes_is_held_for_the_question_then_done_as_an_effect() {
        let mut app = AppState::new(Settings::default());
        // Nothing unsaved: the close goes through, no effect.
        app.unsaved_frame(true);
        assert!(app.effects.is_empty() && app.files.unsaved.is_none());
        app.apply(Command::Doc(DocCommand::PlayMove(BoardMove::Notation("e2e4".into()))));
        app.unsaved_frame(true);
        assert_eq!(app.effects, [Effect::CancelClose]);
        assert!(matches!(app.files.unsaved, Some(PendingAction::Close)));
        app.effects.clear();
        app.apply(Command::File(FileCommand::AnswerUnsaved(UnsavedAnswer::Discard)));
        assert_eq!(app.effects, [Effect::CloseWindow]);
        assert!(app.files.close_approved);
    }

    #[test]
    fn copying_is_an_effect_for_the_window() {
        let mut app = AppState::new(Settings::default());
        app.apply(Command::Doc(DocCommand::CopyFen));
        let fen = app.current().fen();
        assert_eq!(app.effects, [Effect::CopyText(fen)]);
        assert_eq!(app.view.status_note.as_deref(), Some("FEN copied to the clipboard"));
    }
}
