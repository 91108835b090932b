//! Unsaved changes: closing the window or replacing a game with unsaved changes asks Save / Discard /
//! Cancel; Save writes the game atomically first, Discard goes on, Cancel keeps everything.

use crate::ui_common;

use std::path::{Path, PathBuf};

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::{DocCommand, FileCommand};
use mavboard::app::file_dialog::FileDialogKind;
use mavboard::app::line::MoveHistory;
use mavboard::app::state::Dialog;
use mavboard::shell::MavboardApp;
use shakmaty::Square;
use ui_common::{app_harness, click_square, sans};

fn apply(h: &mut Harness<'_, MavboardApp>, c: Command) {
    h.state_mut().state.apply(c);
    // Settles the frames; under load a repaint chain can take a step or two more than `run` allows.
    let _ = h.try_run();
}

/// Asks the window to close (as the title bar's close button does) and runs that one frame.
fn request_close(h: &mut Harness<'_, MavboardApp>) {
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.step();
}

/// The viewport commands of the last frame.
fn viewport_commands(h: &Harness<'_, MavboardApp>) -> Vec<egui::ViewportCommand> {
    h.output().viewport_output.get(&egui::ViewportId::ROOT).map(|v| v.commands.clone()).unwrap_or_default()
}

fn play_e4(h: &mut Harness<'_, MavboardApp>) {
    click_square(h, Square::E2);
    click_square(h, Square::E4);
    assert_eq!(sans(h), ["e4"]);
    assert!(h.state().state.doc.line.is_modified());
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-ui-unsaved-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

#[test]
fn closing_with_unsaved_moves_asks_and_cancel_keeps_the_window_open() {
    let mut h = app_harness();
    // Nothing changed: the window closes without a question.
    request_close(&mut h);
    assert!(!viewport_commands(&h).contains(&egui::ViewportCommand::CancelClose));
    assert!(h.state().state.files.unsaved.is_none());

    play_e4(&mut h);
    request_close(&mut h);
    assert!(viewport_commands(&h).contains(&egui::ViewportCommand::CancelClose), "the close is held");
    h.run();
    h.get_by_label("Unsaved changes");
    h.get_by_label_contains("before closing mavboard");
    h.get_by_label("Cancel").click();
    h.run();
    assert!(h.query_by_label("Unsaved changes").is_none());
    assert_eq!(sans(&h), ["e4"]);
    assert!(!h.state().state.files.close_approved);

    // Discard closes the window for real.
    request_close(&mut h);
    h.run();
    h.get_by_label("Discard").click();
    h.step();
    assert!(viewport_commands(&h).contains(&egui::ViewportCommand::Close), "{:?}", viewport_commands(&h));
    assert!(h.state().state.files.close_approved);
    // The close that follows is not held again.
    request_close(&mut h);
    assert!(!viewport_commands(&h).contains(&egui::ViewportCommand::CancelClose));
}

#[test]
fn save_writes_the_game_to_its_file_and_then_closes() {
    let dir = temp_dir("close-save");
    let file = dir.join("game.pgn");
    std::fs::write(&file, "[White \"A\"]\n[Black \"B\"]\n\n1. d4 d5 *\n").expect("write");
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(file.clone())));
    assert!(ui_common::step_until(&mut h, std::time::Duration::from_secs(10), |a| a
        .state
        .doc
        .line
        .moves()
        .len()
        == 2));
    assert!(!h.state().state.doc.line.is_modified(), "a file just opened has no changes");
    h.key_press(egui::Key::End);
    h.run();
    click_square(&mut h, Square::C2);
    click_square(&mut h, Square::C4);
    assert!(h.state().state.doc.line.is_modified());
    request_close(&mut h);
    h.run();
    h.get_by_label_contains("game.pgn has changes");
    h.get_by_label("Save").click();
    h.step();
    assert!(viewport_commands(&h).contains(&egui::ViewportCommand::Close));
    let written = std::fs::read_to_string(&file).expect("saved");
    assert!(written.contains("2. c4"), "{written}");
    assert!(!h.state().state.doc.line.is_modified());
    let names: Vec<_> =
        std::fs::read_dir(&dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_new_game_or_another_file_asks_before_replacing_a_modified_game() {
    let mut h = app_harness();
    play_e4(&mut h);
    // Input that replaces nothing gets its error without a question.
    apply(&mut h, Command::Doc(DocCommand::LoadFen("not a fen/8/8/8/8/8/8/8 w - - 0 1".into())));
    assert!(h.state().state.files.unsaved.is_none());
    assert_eq!(h.state().state.view.messages.items().len(), 1);

    h.get_by_label("Standard start position").click();
    h.run();
    h.get_by_label_contains("before starting a new game");
    h.get_by_label("Cancel").click();
    h.run();
    assert_eq!(sans(&h), ["e4"], "Cancel keeps the game");

    // Another file: asked once its games are read; Discard opens it.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/broken-middle.pgn");
    apply(&mut h, Command::File(FileCommand::OpenPath(file.clone())));
    assert!(ui_common::step_until(&mut h, std::time::Duration::from_secs(10), |a| a
        .state
        .files
        .unsaved
        .is_some()));
    assert_eq!(sans(&h), ["e4"]);
    h.get_by_label_contains("before opening another game");
    h.get_by_label("Discard").click();
    h.run();
    assert_eq!(sans(&h), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(file.as_path()));
    assert!(!h.state().state.doc.line.is_modified());

    // A pasted game over a modified one from a file of several games: Save never overwrites that file with
    // this game alone; it asks where to write it (Save As).
    let original = std::fs::read(&file).expect("fixture");
    h.key_press(egui::Key::End);
    h.run();
    let node = h.state().state.doc.line.current_node();
    apply(&mut h, Command::Doc(DocCommand::SetComment(node, "mate".into())));
    assert!(h.state().state.doc.line.is_modified(), "a comment is a change");
    apply(&mut h, Command::Doc(DocCommand::LoadPasted("1. c4 e5 *".into())));
    h.get_by_label_contains("broken-middle.pgn has changes");
    h.get_by_label_contains("holds other games too");
    h.get_by_label("Save").click();
    h.step();
    assert!(h.state().state.files.file_dialog.is_some(), "Save As opened the file dialog");
    // No file-chooser portal here: type the path instead.
    h.state_mut().state.files.file_dialog = None;
    h.state_mut().state.view.dialog = Some(Dialog::Path(FileDialogKind::Save));
    h.run();
    let dir = temp_dir("replace-save");
    let copy = dir.join("copy.pgn");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Path").type_text(&copy.display().to_string());
    h.run();
    h.get_by_label("Save").click();
    h.run();
    assert_eq!(sans(&h), ["c4", "e5"]);
    let written = std::fs::read_to_string(&copy).expect("saved");
    assert!(written.contains("mate"), "{written}");
    assert_eq!(std::fs::read(&file).expect("fixture"), original, "the file of several games is untouched");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_game_without_a_file_is_saved_through_save_as_before_it_is_replaced() {
    let mut h = app_harness();
    play_e4(&mut h);
    h.get_by_label("Standard start position").click();
    h.run();
    h.get_by_label_contains("It has no file yet");
    h.get_by_label("Save").click();
    h.step();
    assert!(h.state().state.files.after_save.is_some(), "the new game waits for the save");
    assert!(h.state().state.files.file_dialog.is_some(), "Save As opened the file dialog");
    // No file-chooser portal here: the app falls back to typing a path (as when the dialog returns none).
    h.state_mut().state.files.file_dialog = None;
    h.state_mut().state.view.dialog = Some(Dialog::Path(FileDialogKind::Save));
    h.run();
    let dir = temp_dir("save-as");
    let out = dir.join("new.pgn");
    h.get_by_label("Path").type_text(&out.display().to_string());
    h.run();
    h.get_by_label("Save").click();
    h.run();
    let written = std::fs::read_to_string(&out).expect("saved");
    assert!(written.contains("1. e4"), "{written}");
    assert!(sans(&h).is_empty(), "then the new game started");
    assert!(h.state().state.files.after_save.is_none());

    // Abandoning the save keeps the game and says why nothing else happened.
    play_e4(&mut h);
    h.get_by_label("Standard start position").click();
    h.run();
    h.get_by_label("Save").click();
    h.step();
    h.state_mut().state.files.file_dialog = None;
    h.run();
    assert!(h.state().state.files.after_save.is_none());
    assert_eq!(sans(&h), ["e4"]);
    assert!(
        h.state().state.view.status_note.as_deref().is_some_and(|n| n.contains("not saved")),
        "{:?}",
        h.state().state.view.status_note
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A journal as an app that died would have left it (no lock file: its owner is gone).
fn leave_journal(
    dir: &Path,
    id: &str,
    unix_ms: u64,
    chess: Option<(&str, Option<&str>)>,
    board: Option<&[&str]>,
) {
    use mavboard::app::board_game::GameChoice;
    use mavboard::app::journal::entry::{BoardEntry, ChessEntry, FORMAT, JournalEntry, VERSION};
    let entry = JournalEntry {
        format: FORMAT.into(),
        version: VERSION,
        generation: 5,
        unix_ms,
        chess: chess.map(|(pgn, file)| ChessEntry { pgn: pgn.into(), file: file.map(PathBuf::from) }),
        board: board.map(|moves| BoardEntry {
            choice: GameChoice::ConnectFour,
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        }),
    };
    std::fs::create_dir_all(dir).expect("journal dir");
    std::fs::write(dir.join(format!("{id}.json")), entry.to_json().expect("json")).expect("write");
}

#[test]
fn work_left_by_a_crash_is_offered_at_start_and_restored_unsaved() {
    let dir = temp_dir("journal");
    let pgn = "[White \"Anna\"]\n[Black \"Ben\"]\n\n1. e4 e5 2. Nf3 { the knight } Nc6 $5 *\n";
    leave_journal(&dir, "1-1", 1_000, Some((pgn, Some("/somewhere/club.pgn"))), None);
    leave_journal(&dir, "2-2", 2_000, None, Some(&["4", "4", "3"]));
    let mut h = app_harness();
    h.state_mut().state.start_journal(&dir);
    h.run();
    // The newest first: a Connect Four game, with the chess game after it.
    h.get_by_label("Restore unsaved work?");
    h.get_by_label_contains("a Connect Four game of 3 moves");
    h.get_by_label_contains("1 more kept game is offered");
    h.get_by_label("Discard").click();
    h.run();
    assert!(!dir.join("2-2.json").exists(), "Discard removes the journal");
    assert!(h.state().state.doc.board_game.is_none(), "and changes nothing on the board");

    h.get_by_label_contains("the chess game of club.pgn");
    h.get_by_label("Restore").click();
    h.run();
    assert!(h.query_by_label("Restore unsaved work?").is_none());
    let app = &h.state().state;
    assert_eq!(sans(&h), ["e4", "e5", "Nf3", "Nc6"]);
    assert!(app.doc.line.is_modified(), "restored work is not saved");
    assert_eq!(app.doc.current_file, Some(PathBuf::from("/somewhere/club.pgn")));
    assert_eq!(app.doc.players, Some(("Anna".to_owned(), "Ben".to_owned())));
    assert!(app.doc.line.to_pgn().contains("{ the knight }"), "{}", app.doc.line.to_pgn());
    // The restored game is journaled anew and the old journal goes once that is on disk.
    assert!(ui_common::step_until(&mut h, std::time::Duration::from_secs(10), |a| {
        a.state.files.journal.status().written.is_some() && !dir.join("1-1.json").exists()
    }));
    // Closing asks about the unsaved game as about any other; Discard closes and leaves no journal.
    request_close(&mut h);
    h.run();
    h.get_by_label_contains("club.pgn has changes");
    h.get_by_label("Discard").click();
    h.step();
    assert!(viewport_commands(&h).contains(&egui::ViewportCommand::Close));
    drop(h);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "nothing is left in the journal folder: {left:?}");
    std::fs::remove_dir_all(&dir).ok();
}
