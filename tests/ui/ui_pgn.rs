//! PGN files in the app: a multi-game file with broken games (listed with their error while the good ones
//! open), the game list, the move tree with variations (keys and clicks), adding a variation, and saving.

use crate::ui_common;

use std::path::{Path, PathBuf};

use eframe::egui;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::{DocCommand, FileCommand, ViewCommand};
use mavboard::app::game_list::GameList;
use mavboard::app::line::MoveHistory;
use mavboard::app::state::Dialog;
use shakmaty::Square;
use ui_common::{app_harness, board_fen, click_square, sans};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn").join(name)
}

fn apply(h: &mut egui_kittest::Harness<'_, mavboard::shell::MavboardApp>, c: Command) {
    h.state_mut().state.apply(c);
    h.run();
    ui_common::wait_for_open(h);
}

#[test]
fn a_file_with_broken_games_lists_them_and_opens_the_good_ones() {
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(fixture("broken-middle.pgn"))));
    assert_eq!(h.state().state.view.dialog, Some(Dialog::GameList));
    let list = h.state().state.files.games.clone().expect("the game list");
    assert_eq!((list.entries.len(), list.broken()), (6, 2));
    assert_eq!(h.get_all_by_label("cannot be read").count(), 2, "both broken games are listed");
    h.get_by_label_contains("Bxc6");
    assert!(h.get_all_by_label_contains("2 of 6 games could not be read").next().is_some());
    // The first game opened.
    assert_eq!(sans(&h), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    // The filter narrows the list.
    h.get_by_label("Filter").click();
    h.run();
    h.get_by_label("Filter").type_text("middle 4");
    h.run();
    assert!(h.query_by_label("cannot be read").is_none());
    h.get_by_label("4").click();
    h.run();
    assert_eq!(sans(&h), ["c4", "c5", "Nc3", "Nc6"]);
    assert_eq!(h.state().state.view.dialog, None, "opening a game closes the list");
}

/// Broken PGN syntax (issue 58) shows in the game list as any other broken game does: each game listed
/// once with its error, the valid game at the end opened.
#[test]
fn broken_syntax_is_listed_like_any_broken_game() {
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(fixture("strict-errors.pgn"))));
    assert_eq!(h.state().state.view.dialog, Some(Dialog::GameList));
    let list = h.state().state.files.games.clone().expect("the game list");
    assert_eq!((list.entries.len(), list.broken()), (13, 12));
    assert_eq!(h.get_all_by_label("cannot be read").count(), 12, "every broken game is listed");
    h.get_by_label_contains("a tag (Annotator) after the moves of its game");
    h.get_by_label_contains("a variation opened right inside another one");
    assert!(h.get_all_by_label_contains("12 of 13 games could not be read").next().is_some());
    assert_eq!(sans(&h), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
}

#[test]
fn the_move_tree_navigates_variations_with_keys_and_clicks() {
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(fixture("broken-middle.pgn"))));
    apply(&mut h, Command::File(FileCommand::OpenGame(2)));
    apply(&mut h, Command::View(ViewCommand::ShowDialog(None)));
    assert_eq!(sans(&h), ["d4", "d5", "c4"]);
    h.get_by_label("Indian");
    h.key_press(egui::Key::End);
    h.run();
    assert_eq!(h.state().state.doc.line.cursor(), 3);
    h.key_press(egui::Key::Home);
    h.run();
    h.key_press(egui::Key::ArrowRight);
    h.run();
    // At the fork after 1. d4, Down follows the variation 1... Nf6; Right steps into it.
    h.key_press(egui::Key::ArrowDown);
    h.run();
    assert_eq!(sans(&h), ["d4", "Nf6", "c4"]);
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(board_fen(&h), "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2");
    // Clicking a move of the main line goes there.
    let d5 = h.get_by_label("d5");
    d5.click();
    h.run();
    assert_eq!(sans(&h), ["d4", "d5", "c4"]);
    assert_eq!(h.state().state.doc.line.cursor(), 2);
    // Clicking the variation's move goes into the variation.
    h.get_by_label("Nf6").click();
    h.run();
    assert_eq!(h.state().state.doc.line.cursor(), 2);
    assert_eq!(sans(&h), ["d4", "Nf6", "c4"]);
}

#[test]
fn a_move_off_the_line_adds_a_variation_and_the_game_saves_with_it() {
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(fixture("broken-middle.pgn"))));
    apply(&mut h, Command::File(FileCommand::OpenGame(2)));
    apply(&mut h, Command::View(ViewCommand::ShowDialog(None)));
    h.key_press(egui::Key::ArrowRight);
    h.key_press(egui::Key::ArrowRight);
    h.run();
    // 2. Nf3 instead of 2. c4.
    click_square(&mut h, Square::G1);
    click_square(&mut h, Square::F3);
    assert_eq!(sans(&h), ["d4", "d5", "Nf3"]);
    assert!(h.state().state.doc.line.is_modified());
    let pgn = h.state().state.doc.line.to_pgn();
    assert!(pgn.contains("2. c4 $1 ( 2. Nf3 )") || pgn.contains("2. c4 $1 (2. Nf3)"), "{pgn}");
    h.get_by_label("Nf3");
    // Annotate and promote through commands (the move's context menu sends them).
    let nf3 = h.state().state.doc.line.current_node();
    apply(&mut h, Command::Doc(DocCommand::SetNags(nf3, vec![5])));
    apply(&mut h, Command::Doc(DocCommand::MakeMainline(nf3)));
    h.get_by_label("Nf3!?");
    let dir = std::env::temp_dir().join(format!("mavboard-ui-pgn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let out = dir.join("saved.pgn");
    apply(&mut h, Command::File(FileCommand::SavePath(out.clone())));
    assert!(!h.state().state.doc.line.is_modified());
    let text = std::fs::read_to_string(&out).expect("saved");
    let back = GameList::read(&text, "saved.pgn");
    assert_eq!(back.entries.len(), 1);
    assert_eq!(&back.game(1).expect("reads back"), h.state().state.doc.line.tree());
    assert!(text.contains("2. Nf3!?") || text.contains("2. Nf3 $5"), "{text}");
    assert!(text.contains("{Indian}") || text.contains("{ Indian }"), "the comment is kept: {text}");
    // No temporary file is left beside it.
    let names: Vec<_> =
        std::fs::read_dir(&dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_real_tournament_file_opens_every_game_when_present() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pgn/master/WorldChamp1886.pgn");
    if !path.is_file() {
        println!(
            "SKIPPED: {} is not here (it is in the project's shared data, not in the repo)",
            path.display()
        );
        return;
    }
    let mut h = app_harness();
    apply(&mut h, Command::File(FileCommand::OpenPath(path)));
    let list = h.state().state.files.games.clone().expect("list");
    assert_eq!((list.entries.len(), list.broken()), (20, 0));
    assert!(h.get_all_by_label_contains("Zukertort").next().is_some());
    h.key_press(egui::Key::End);
    h.run();
    assert!(h.state().state.doc.line.cursor() > 20);
}
