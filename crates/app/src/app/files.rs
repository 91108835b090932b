//! Files the app is reading, asking about or waiting on: the open game list, a PGN being read in the
//! background, the system file dialog, the question about unsaved changes, and the crash journal.

use super::file_dialog::PendingFileDialog;
use super::game_list::GameList;
use super::pgn_loader::PgnLoad;
use super::unsaved::PendingAction;

/// The state of files and of the questions around them.
#[derive(Default)]
pub struct Files {
    /// The games of the last opened file or pasted text.
    pub games: Option<GameList>,
    /// The PGN file being read in the background, if any.
    pub loading: Option<PgnLoad>,
    /// The system file dialog, while it is open.
    pub file_dialog: Option<PendingFileDialog>,
    /// The open question about unsaved changes, with the action it holds (see [`super::unsaved`]).
    pub unsaved: Option<PendingAction>,
    /// The action that goes on once the game is saved (the question was answered *Save*).
    pub after_save: Option<PendingAction>,
    /// The user agreed to close the window with unsaved changes.
    pub close_approved: bool,
    /// The crash journal of unsaved work, and the journals left by apps that did not close properly.
    pub journal: super::journal::Journal,
}
