//! Big PGN files in the app: the file is indexed in the background, its list shows before the whole file
//! is read (the first game already on the board), fills as the rest is read, filters over the headers,
//! and any listed game opens (read again from the file and parsed when it is opened).

use crate::ui_common;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::FileCommand;
use mavboard::app::game_list::GameList;
use mavboard::app::pgn_loader::EARLY_LIST_BYTES;
use mavboard::app::state::Dialog;
use mavboard::shell::MavboardApp;
use ui_common::{app_harness, step_until};

const WAIT: Duration = Duration::from_secs(60);

fn apply(h: &mut Harness<'_, MavboardApp>, c: Command) {
    h.state_mut().state.apply(c);
}

/// A file of `copies` copies of the TWIC fixture (about 1 MB each) under a temporary folder.
fn big_file(name: &str, copies: usize) -> (PathBuf, String) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/twic1599_sample_1MB.pgn");
    let one = String::from_utf8_lossy(&std::fs::read(fixture).expect("fixture")).into_owned();
    let dir = std::env::temp_dir().join(format!("mavboard-ui-index-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{name}.pgn"));
    let text = vec![one.trim_end(); copies].join("\n\n") + "\n";
    std::fs::write(&path, &text).expect("write");
    (path, text)
}

#[test]
fn a_big_file_lists_its_first_games_before_it_is_read_and_any_game_opens() {
    let (path, text) = big_file("big", 10);
    assert!(text.len() as u64 > EARLY_LIST_BYTES, "big enough to be listed early: {}", text.len());
    let expected = GameList::read(&text, "expected");
    let per_copy = expected.entries.len() / 10;
    assert!(per_copy > 100 && expected.entries.len() == per_copy * 10, "{}", expected.entries.len());

    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(path.clone())));
    let still_reading = Cell::new(false);
    assert!(
        step_until(&mut h, WAIT, |app| {
            still_reading.set(app.state.files.loading.is_some());
            app.state.files.games.is_some()
        }),
        "the list never appeared"
    );
    assert!(still_reading.get(), "the list shows before the whole file is read");
    let first =
        expected.first_good().map(|e| expected.game(e.number())).expect("a good game").expect("reads");
    assert_eq!(h.state().state.doc.line.tree(), &first, "the first good game is on the board at once");
    assert_eq!(h.state().state.view.dialog, Some(Dialog::GameList));
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(path.as_path()));

    // The list fills to the end of the file, and says so.
    ui_common::wait_for_open(&mut h);
    let list = h.state().state.files.games.clone().expect("list");
    assert!(list.complete);
    assert_eq!(list.entries.len(), expected.entries.len());
    for (got, want) in list.entries.iter().zip(&expected.entries) {
        assert_eq!((got.number(), &got.index), (want.number(), &want.index));
        // A big file's games are parsed when opened, not while the list fills.
        assert_eq!(got.plies(), None, "game {} was not parsed", got.number());
    }
    h.run_steps(2);
    h.get_by_label_contains(&format!("big.pgn: {} games", list.entries.len()));

    // The filter looks in the headers; a game of the last copy opens from the list, read from the file.
    let last = list.entries.last().expect("games");
    let (white, number) = (last.header("White").to_owned(), last.number());
    let surname = white.split([',', ' ']).next().expect("a name").to_owned();
    h.get_by_label("Filter").click();
    h.run();
    h.get_by_label("Filter").type_text(&surname);
    h.run();
    let matches = list.with_matches(&surname, <[u32]>::len);
    assert!(matches >= 10, "every copy has {surname}'s games: {matches}");
    // The virtualized list lays out only the rows in view; the last game is reached by its number.
    apply(&mut h, Command::File(FileCommand::OpenGame(number)));
    h.run_steps(2);
    let state = &h.state().state;
    assert_eq!(
        state.doc.line.tree(),
        &expected.game(number).expect("reads"),
        "game {number} is on the board"
    );
    assert_eq!(state.doc.players.as_ref().map(|p| p.0.as_str()), Some(white.as_str()));
    std::fs::remove_dir_all(path.parent().expect("dir")).ok();
}

#[test]
fn a_small_file_opens_from_the_list_by_a_click() {
    let (path, text) = big_file("small", 1);
    let expected = GameList::read(&text, "expected");
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(path.clone())));
    ui_common::wait_for_open(&mut h);
    let list = h.state().state.files.games.clone().expect("list");
    assert!(list.complete && list.entries.len() == expected.entries.len());
    assert_eq!(h.state().state.view.dialog, Some(Dialog::GameList));
    // Game 2's number is a link in the list; clicking it opens the game and closes the list.
    h.get_by_label("2").click();
    h.run();
    assert_eq!(h.state().state.doc.line.tree(), &expected.game(2).expect("reads"));
    assert_eq!(h.state().state.view.dialog, None);
    std::fs::remove_dir_all(path.parent().expect("dir")).ok();
}
