//! The app and its journal: starting it, handing it the document once a frame, and the answer to the offer
//! of a journal left by an app that did not close properly — *Restore* puts its games back (the chess game
//! marked unsaved, its file name kept; the Connect Four or Hex game with its moves), *Discard* removes it.

use std::path::Path;
use std::time::Instant;

use super::AppState;
use crate::app::board_game::{BoardGame, GameChoice};
use crate::app::command::Navigate;
use crate::app::error::AppError;
use crate::app::game::GameDoc;
use crate::app::journal::entry::JournalEntry;
use crate::app::journal::{Journal, JournalAnswer};

impl AppState {
    /// Starts the crash journal in `dir` (see [`crate::app::journal`]); journals that could not be read, or why there is
    /// no journal, become messages.
    pub fn start_journal(&mut self, dir: &Path) {
        let (journal, errors) = Journal::start(dir);
        self.files.journal = journal;
        for e in errors {
            self.view.messages.error(format!("Crash journal: {e}"));
        }
    }

    /// Once a frame, after the commands: hands the document to the journal when it changed (returns the
    /// generation handed over), and tells the user once when the journal cannot be written.
    pub fn journal_frame(&mut self) -> Option<u64> {
        let handed = self.files.journal.follow(&self.doc, Instant::now());
        if let Some(e) = self.files.journal.new_error() {
            self.view.messages.error(format!("Unsaved work is not kept for a crash: {e}"));
        }
        handed
    }

    /// Acts on the answer to the journal offered first.
    pub fn answer_journal(&mut self, answer: JournalAnswer) {
        let Some(orphan) = self.files.journal.offers.front() else { return };
        match answer {
            JournalAnswer::Discard => {
                if let Some(orphan) = self.files.journal.offers.pop_front()
                    && let Err(e) = orphan.files.remove()
                {
                    self.view.messages.error(format!("The crash journal could not be removed: {e}"));
                }
            }
            JournalAnswer::Restore => {
                let entry = orphan.entry.clone();
                match self.restore_entry(&entry) {
                    Ok(()) => {
                        self.files.journal.adopt_first();
                        self.view.messages.info(format!(
                            "Restored {}: it is not saved yet (Ctrl+S saves it).",
                            entry.describe()
                        ));
                    }
                    Err(reason) => {
                        let Some(orphan) = self.files.journal.offers.pop_front() else { return };
                        let path = orphan.files.path.clone();
                        let kept = orphan.files.keep_aside().map_or_else(
                            |e| format!("it stays at {} ({e})", path.display()),
                            |kept| format!("it is kept as {}", kept.display()),
                        );
                        self.view.messages.error(format!(
                            "The crash journal {} could not be restored ({reason}); {kept}.",
                            path.display()
                        ));
                    }
                }
            }
        }
    }

    /// Puts the games of `entry` on the board: the chess game marked unsaved with its file, the Connect
    /// Four or Hex game with its moves (on the board when there is one). Nothing changes when either
    /// cannot be read back.
    pub fn restore_entry(&mut self, entry: &JournalEntry) -> Result<(), AppError> {
        let chess = match &entry.chess {
            Some(c) => {
                let tree = crate::pgn::reader::read_all(&c.pgn)
                    .into_iter()
                    .next()
                    .ok_or_else(|| AppError::Restore { game: "chess".into(), problem: "is empty".into() })?
                    .map_err(|e| AppError::Restore {
                        game: "chess".into(),
                        problem: format!("does not read: {e}"),
                    })?;
                let mut line = GameDoc::from_tree(tree);
                line.mark_unsaved();
                Some((line, c.file.clone()))
            }
            None => None,
        };
        let board = match &entry.board {
            Some(b) => {
                let bad = |problem: String| AppError::Restore { game: b.choice.label(), problem };
                let mut game = BoardGame::new(b.choice).map_err(|e| bad(format!("cannot be set up: {e}")))?;
                for m in &b.moves {
                    game.play(m).map_err(|e| bad(format!("does not replay: {e}")))?;
                }
                Some(game)
            }
            None => None,
        };
        if let Some((line, file)) = chess {
            let tree = line.tree();
            let players = match (tree.header("White"), tree.header("Black")) {
                (Some(w), Some(b)) => Some((w.to_owned(), b.to_owned())),
                _ => None,
            };
            self.doc.set_line(line);
            self.doc.navigate(Navigate::End);
            self.doc.current_file = file;
            self.doc.players = players;
            self.doc.opened_game = None;
        }
        match board {
            Some(game) => {
                self.settings.game = game.choice;
                self.doc.board_game = Some(game);
                self.doc.board_game_since = self.doc.position_generation;
            }
            None if entry.chess.is_some() => {
                self.doc.board_game = None;
                self.settings.game = GameChoice::Chess;
            }
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::app::command::{BoardMove, Command, DocCommand, FileCommand};
    use crate::app::line::MoveHistory;
    use crate::app::settings::Settings;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mavboard-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn journals(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.retain(|n| n.ends_with(".json"));
        names.sort();
        names
    }

    /// Waits until the writer has put `generation` on disk.
    fn wait_written(state: &AppState, generation: Option<u64>) {
        let start = Instant::now();
        while state.files.journal.status().written != generation {
            assert!(start.elapsed() < Duration::from_secs(10), "{:?}", state.files.journal.status());
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn play(state: &mut AppState, mv: &str) {
        state.apply(Command::Doc(DocCommand::PlayMove(BoardMove::Notation(mv.into()))));
    }

    #[test]
    fn edits_are_journaled_a_crash_keeps_them_and_restore_brings_them_back() {
        let dir = temp("crash");
        let mut app = AppState::new(Settings::default());
        app.start_journal(&dir);
        assert!(app.files.journal.is_on() && app.files.journal.offers.is_empty());
        assert_eq!(app.journal_frame(), None, "nothing unsaved, nothing journaled");
        play(&mut app, "e2e4");
        play(&mut app, "e7e5");
        let node = app.doc.line.current_node();
        app.apply(Command::Doc(DocCommand::SetComment(node, "symmetry".into())));
        app.apply(Command::Doc(DocCommand::SetNags(node, vec![5])));
        app.doc.current_file = Some(PathBuf::from("/nowhere/mine.pgn"));
        let generation = app.journal_frame().expect("handed over");
        assert_eq!(app.journal_frame(), None, "unchanged: not handed again");
        wait_written(&app, Some(generation));
        let pgn = app.doc.line.to_pgn();
        // The app is killed: its writer ends without removing anything.
        app.files.journal.finish(false);
        drop(app);
        assert_eq!(journals(&dir).len(), 1);

        let mut again = AppState::new(Settings::default());
        again.start_journal(&dir);
        assert_eq!(again.files.journal.offers.len(), 1);
        let offered = &again.files.journal.offers[0].entry;
        assert_eq!(offered.generation, generation);
        assert_eq!(offered.describe(), "the chess game of mine.pgn");
        again.apply(Command::File(FileCommand::AnswerJournal(JournalAnswer::Restore)));
        assert!(again.files.journal.offers.is_empty());
        assert!(again.doc.line.is_modified(), "restored work is unsaved");
        assert_eq!(again.doc.line.to_pgn(), pgn);
        assert_eq!(again.doc.line.cursor(), 2);
        assert_eq!(again.doc.current_file, Some(PathBuf::from("/nowhere/mine.pgn")));
        // The restored state is journaled anew, then the old journal goes.
        let g = again.journal_frame().expect("the restored game is journaled");
        assert!(g > generation);
        wait_written(&again, Some(g));
        let start = Instant::now();
        while journals(&dir).len() != 1 {
            assert!(start.elapsed() < Duration::from_secs(10), "{:?}", journals(&dir));
            std::thread::sleep(Duration::from_millis(2));
        }
        // Saving removes it; a normal end leaves nothing.
        let saved_dir = temp("crash-saved");
        std::fs::create_dir_all(&saved_dir).expect("dir");
        again.apply(Command::File(FileCommand::SavePath(saved_dir.join("saved.pgn"))));
        assert_eq!(again.journal_frame(), None);
        wait_written(&again, None);
        assert!(journals(&dir).is_empty());
        drop(again);
        assert!(std::fs::read_dir(&dir).expect("dir").next().is_none(), "no lock or temporary file left");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&saved_dir);
    }

    #[test]
    fn a_panic_keeps_the_journal_and_a_normal_end_removes_it() {
        use crate::app::journal::entry::DocCopy;
        use crate::app::journal::store::JournalStore;
        use crate::app::journal::writer::JournalWriter;
        let dir = temp("panic");
        let mut doc = crate::app::document::Document::default();
        doc.play(BoardMove::Notation("d2d4".into())).expect("legal");
        let copy = DocCopy::of(&doc).expect("unsaved");
        for panics in [true, false] {
            let copy = copy.clone();
            let store = JournalStore::open(&dir).expect("store");
            let path = store.path();
            let thread = std::thread::spawn(move || {
                let writer = JournalWriter::start(store).expect("writer");
                writer.write(copy, 1, Instant::now());
                if panics {
                    panic!("a crash, on purpose");
                }
            });
            assert_eq!(thread.join().is_err(), panics);
            assert_eq!(path.is_file(), panics, "{}", path.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_connect_four_game_is_journaled_and_discard_removes_the_offer() {
        let dir = temp("board");
        let mut app = AppState::new(Settings::default());
        app.start_journal(&dir);
        app.apply(Command::Doc(DocCommand::SetGame(GameChoice::ConnectFour)));
        assert_eq!(app.journal_frame(), None, "an empty board has nothing to keep");
        for m in ["4", "4", "3"] {
            play(&mut app, m);
        }
        let g = app.journal_frame().expect("handed");
        wait_written(&app, Some(g));
        // Killed: the writer ends without removing anything.
        app.files.journal.finish(false);
        drop(app);

        let mut second = AppState::new(Settings::default());
        second.start_journal(&dir);
        let mut third = AppState::new(Settings::default());
        third.start_journal(&dir);
        assert_eq!(second.files.journal.offers.len(), 1);
        assert!(third.files.journal.offers.is_empty(), "a journal is offered in one window only");
        second.apply(Command::File(FileCommand::AnswerJournal(JournalAnswer::Restore)));
        let game = second.doc.board_game.as_ref().expect("connect four is back");
        assert_eq!(game.record().expect("record"), "443");
        assert_eq!(second.settings.game, GameChoice::ConnectFour);
        second.files.journal.finish(false);
        drop(second);
        drop(third);

        let mut fourth = AppState::new(Settings::default());
        fourth.start_journal(&dir);
        assert_eq!(fourth.files.journal.offers.len(), 1, "the restored game's journal is kept after a kill");
        fourth.apply(Command::File(FileCommand::AnswerJournal(JournalAnswer::Discard)));
        assert!(fourth.files.journal.offers.is_empty());
        assert!(journals(&dir).is_empty(), "{:?}", journals(&dir));
        assert!(fourth.doc.board_game.is_none(), "Discard changes nothing on the board");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_journal_that_does_not_read_is_kept_aside_with_a_named_message() {
        let dir = temp("corrupt");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("1-2.json"), "{\"format\": \"mavboard-journal\", \"vers").expect("write");
        std::fs::write(dir.join("3-4.json.tmp"), "half").expect("write");
        let mut app = AppState::new(Settings::default());
        app.start_journal(&dir);
        assert!(app.files.journal.offers.is_empty());
        let messages: Vec<String> = app.view.messages.items().iter().map(|m| m.text.clone()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("1-2.json") && messages[0].contains("1-2.json.corrupt"), "{messages:?}");
        assert!(dir.join("1-2.json.corrupt").is_file(), "kept, not deleted");
        assert!(!dir.join("3-4.json.tmp").exists(), "a stale temporary file is cleaned up");
        // A journal whose game does not read is kept aside when restoring it fails.
        let entry = JournalEntry {
            format: crate::app::journal::entry::FORMAT.into(),
            version: crate::app::journal::entry::VERSION,
            generation: 3,
            unix_ms: 1,
            chess: None,
            board: Some(crate::app::journal::entry::BoardEntry {
                choice: GameChoice::ConnectFour,
                moves: vec!["4".into(), "9".into()],
            }),
        };
        std::fs::write(dir.join("5-6.json"), entry.to_json().expect("json")).expect("write");
        let mut next = AppState::new(Settings::default());
        next.start_journal(&dir);
        assert_eq!(next.files.journal.offers.len(), 1);
        next.answer_journal(JournalAnswer::Restore);
        assert!(next.doc.board_game.is_none());
        assert!(dir.join("5-6.json.corrupt").is_file());
        let last = next.view.messages.items().last().map(|m| m.text.clone()).unwrap_or_default();
        assert!(last.contains("5-6.json") && last.contains("could not be restored"), "{last}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
