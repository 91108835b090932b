//! A PGN file opened in the background as the app takes it (see [`crate::app::pgn_loader`]): starting
//! the read, and once a frame showing the list when it is ready or adding the games read since.

use std::path::Path;

use super::AppState;
use crate::app::game_list::GameList;
use crate::app::pgn_loader::{LoadStep, PgnLoad};
use crate::app::unsaved::PendingAction;

impl AppState {
    /// Starts opening a PGN file in the background (replacing an open still in progress). When its list is
    /// ready, [`AppState::poll_loading`] opens the first good game (asking first if the game on the board
    /// has unsaved changes).
    pub fn open_path(&mut self, path: &Path) {
        if let Some(old) = self.files.loading.take() {
            old.cancel();
        }
        self.files.loading = Some(PgnLoad::start(path, self.wake.clone()));
    }

    /// The list with id `id`, wherever it is: the open list, or one waiting for the question about
    /// unsaved changes.
    fn list_mut(&mut self, id: u64) -> Option<&mut GameList> {
        if self.files.games.as_ref().is_some_and(|l| l.id == id) {
            return self.files.games.as_mut();
        }
        [self.files.unsaved.as_mut(), self.files.after_save.as_mut()].into_iter().flatten().find_map(|a| {
            match a {
                PendingAction::OpenList(pending) if pending.0.id == id => Some(&mut pending.0),
                _ => None,
            }
        })
    }

    /// Takes the games the file being opened has given since the last frame: shows its list when it is
    /// ready (the whole file read, or for a big file its first good game), or adds them to the list shown.
    /// Called once per frame.
    pub fn poll_loading(&mut self) {
        let Some(load) = self.files.loading.as_mut() else { return };
        let (id, games, done) = match load.step() {
            LoadStep::Waiting => return,
            LoadStep::Ready { list, path, finished, error } => {
                if finished {
                    self.files.loading = None;
                }
                match error {
                    Some(e) if list.entries.is_empty() => {
                        self.view.messages.error(e.to_string());
                    }
                    Some(e) => {
                        self.offer_file_list(list, path);
                        self.view.messages.error(e.to_string());
                    }
                    None => self.offer_file_list(list, path),
                }
                return;
            }
            LoadStep::More { list, games, done } => (list, games, done),
        };
        // Shown already: the rest goes to the list wherever it is now.
        let finished = done.is_some();
        let Some(list) = self.list_mut(id) else {
            // The list was replaced or dropped: nobody wants the rest.
            self.files.loading = None;
            return;
        };
        list.extend(games);
        if !finished {
            return;
        }
        list.complete = true;
        let (broken, total, source) = (list.broken(), list.entries.len(), list.source.clone());
        self.files.loading = None;
        match done {
            Some(Err(e)) => {
                self.view.messages.error(e.to_string());
            }
            _ if broken > 0 => {
                self.view.messages.error(format!(
                    "{source}: {broken} of {total} games could not be read; they are listed with the reason in \
                     the game list."
                ));
            }
            _ => {}
        }
    }
}
