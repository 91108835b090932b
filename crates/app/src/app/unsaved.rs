//! Unsaved changes: before the window closes, or another game replaces one with changes that are not
//! saved (moves added, comments, NAGs, annotations), the app asks: Save, Discard or Cancel.
//!
//! The question holds the action it interrupted ([`PendingAction`]). *Save* goes through the ordinary
//! atomic save (to the game's file, or through the Save As dialog when it has none) and carries the action
//! out once the game is saved; *Discard* carries it out at once; *Cancel* drops it. The app asks and acts
//! in `state::guard`; this file holds what the question is about.

pub use super::command::UnsavedAnswer;
use super::command::{Command, DocCommand, FileCommand};

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
