//! Opening PGN files off the UI thread: the file is read in the background with its progress in the status
//! bar, the board stays usable meanwhile, the game list appears when it is done, and a newer open
//! supersedes an older one.

use crate::ui_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::FileCommand;
use mavboard::app::game_list::GameList;
use mavboard::app::state::Dialog;
use mavboard::shell::MavboardApp;
use shakmaty::Square;
use ui_common::{app_harness, click_square, sans, step_until};

const WAIT: Duration = Duration::from_secs(30);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn").join(name)
}

fn apply(h: &mut Harness<'_, MavboardApp>, c: Command) {
    h.state_mut().state.apply(c);
}

#[test]
fn a_multi_game_file_is_read_in_the_background_and_its_list_appears() {
    let path = fixture("twic1599_sample_1MB.pgn");
    let expected = GameList::read(&String::from_utf8_lossy(&std::fs::read(&path).expect("fixture")), "x");
    assert!(expected.entries.len() > 100, "a big file: {}", expected.entries.len());
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(path.clone())));
    assert!(h.state().state.files.loading.is_some(), "the command returns before the file is read");
    assert!(h.state().state.files.games.is_none());
    assert!(step_until(&mut h, WAIT, |app| app.state.files.games.is_some()), "the list never appeared");
    let _ = h.try_run();
    assert!(h.state().state.files.loading.is_none());
    let list = h.state().state.files.games.clone().expect("list");
    assert_eq!((list.entries.len(), list.broken()), (expected.entries.len(), expected.broken()));
    assert_eq!(list.source, "twic1599_sample_1MB.pgn");
    assert_eq!(h.state().state.view.dialog, Some(Dialog::GameList));
    h.get_by_label_contains(&format!("twic1599_sample_1MB.pgn: {} games", list.entries.len()));
    let first =
        expected.first_good().map(|e| expected.game(e.number())).expect("a good game").expect("reads");
    assert_eq!(h.state().state.doc.line.tree(), &first, "the first good game is on the board");
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(path.as_path()));
}

/// A named pipe: reading it blocks until the test writes, so the load is caught half-way on purpose.
#[cfg(unix)]
fn fifo(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-ui-open-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("slow.pgn");
    let _ = std::fs::remove_file(&path);
    let status = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
    assert!(status.success());
    path
}

#[cfg(unix)]
fn feed(path: PathBuf, text: &'static str) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || std::fs::write(&path, text).expect("write the pipe"))
}

#[cfg(unix)]
#[test]
fn the_board_stays_usable_while_a_file_is_read() {
    let path = fifo("responsive");
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(path.clone())));
    for _ in 0..5 {
        h.step();
    }
    // Still reading: the status bar says so with a progress bar, and the board takes moves.
    assert!(h.state().state.files.loading.is_some());
    h.get_by_label("Opening slow.pgn...");
    h.get_by_label("0 games");
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    assert_eq!(sans(&h), ["e4"]);
    let writer = feed(path.clone(), "[White \"Slow\"]\n[Black \"Pipe\"]\n\n1. d4 d5 2. c4 *\n\n1. c4 *\n");
    // The move made meanwhile is a change: the app asks before the file's game replaces it.
    assert!(step_until(&mut h, WAIT, |app| app.state.files.unsaved.is_some()));
    writer.join().expect("writer");
    h.get_by_label("Discard").click();
    let _ = h.try_run();
    assert_eq!(sans(&h), ["d4", "d5", "c4"]);
    assert_eq!(h.state().state.files.games.as_ref().map(|l| l.entries.len()), Some(2));
    assert!(h.query_by_label("Opening slow.pgn...").is_none());
    std::fs::remove_dir_all(path.parent().expect("dir")).ok();
}

#[cfg(unix)]
#[test]
fn a_newer_open_supersedes_an_older_one() {
    let slow = fifo("supersede");
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(slow.clone())));
    h.step();
    apply(&mut h, Command::File(FileCommand::OpenPath(fixture("broken-middle.pgn"))));
    assert!(step_until(&mut h, WAIT, |app| app.state.files.loading.is_none()));
    assert_eq!(sans(&h), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    // The older file arrives late: it is ignored. Its reading was stopped when the newer open replaced it,
    // so the write may find the pipe closed (a broken pipe): either way nothing of it may show.
    let late = slow.clone();
    std::thread::spawn(move || {
        let _ = std::fs::write(&late, "1. a4 *\n");
    })
    .join()
    .expect("writer");
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(sans(&h), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    assert_eq!(h.state().state.files.games.as_ref().map(|l| l.source.as_str()), Some("broken-middle.pgn"));
    std::fs::remove_dir_all(slow.parent().expect("dir")).ok();
}

/// `mavboard FILE` and `mavboard --fen FEN`: what the command line names is open in the first frame.
#[test]
fn a_file_and_a_fen_from_the_command_line_are_open_at_start() {
    let path = fixture("blank-lines.pgn");
    let app = MavboardApp::with_settings(mavboard::app::settings::Settings::default())
        .open_at_start(mavboard::app::startup_commands(Some(&path), None));
    let mut h = egui_kittest::Harness::builder()
        .with_size(eframe::egui::vec2(1200.0, 800.0))
        .with_max_steps(ui_common::MAX_STEPS)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), app);
    h.step();
    assert!(
        step_until(&mut h, WAIT, |app| app.state.files.games.is_some()),
        "the file named on the command line opens"
    );
    let list = h.state().state.files.games.clone().expect("list");
    assert_eq!((list.entries.len(), list.broken()), (5, 0), "blank lines inside movetext split no game");
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(path.as_path()));
    assert_eq!(sans(&h)[..3], ["e4", "e5", "Nf3"]);

    let fen = "8/8/8/4k3/8/8/8/4K2R w K - 0 1";
    let app = MavboardApp::with_settings(mavboard::app::settings::Settings::default())
        .open_at_start(mavboard::app::startup_commands(None, Some(fen)));
    let mut h = egui_kittest::Harness::builder()
        .with_size(eframe::egui::vec2(1200.0, 800.0))
        .with_max_steps(ui_common::MAX_STEPS)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), app);
    h.step();
    assert_eq!(ui_common::board_fen(&h), fen);
}
