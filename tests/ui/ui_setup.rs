//! Position setup and navigation through the real app window: FEN paste (valid and invalid), Chess960
//! by number, arrow keys, Home and End.

use crate::ui_common;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use mavboard::app::line::MoveHistory;
use shakmaty::Square;
use ui_common::{app_harness, board_fen, click_square, sans};

fn type_into(h: &mut egui_kittest::Harness<'_, mavboard::shell::MavboardApp>, label: &str, text: &str) {
    h.get_by_label(label).click();
    h.run();
    h.get_by_label(label).type_text(text);
    h.run();
}

#[test]
fn valid_fen_sets_the_position() {
    let mut h = app_harness();
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    type_into(&mut h, "FEN", fen);
    h.get_by_label("Set position").click();
    h.run();
    assert_eq!(board_fen(&h), fen);
    assert!(h.state().state.view.messages.items().is_empty());
    // Moves continue from there with the right numbers.
    click_square(&mut h, Square::F1);
    click_square(&mut h, Square::B5);
    assert_eq!(sans(&h), ["Bb5"]);
    assert_eq!(h.state().state.doc.line.moves()[0].ply, 5);
}

#[test]
fn invalid_fen_shows_a_dismissible_error_and_keeps_the_board() {
    let mut h = app_harness();
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    let before = board_fen(&h);
    type_into(&mut h, "FEN", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    h.get_by_label("Set position").click();
    h.run();
    assert_eq!(board_fen(&h), before);
    assert_eq!(sans(&h), ["e4"]);
    let items = h.state().state.view.messages.items().to_vec();
    assert_eq!(items.len(), 1);
    assert!(items[0].text.contains("bad board field"), "{}", items[0].text);
    h.get_by_label_contains("Position not changed");
    h.get_by_label("Dismiss").click();
    h.run();
    assert!(h.state().state.view.messages.items().is_empty());
    assert!(h.query_by_label_contains("Position not changed").is_none());
}

#[test]
fn chess960_by_number() {
    let mut h = app_harness();
    type_into(&mut h, "Chess960 number", "0");
    h.get_by_label("Set Chess960").click();
    h.run();
    assert!(board_fen(&h).starts_with("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w "), "{}", board_fen(&h));
    // Out of range: an error, the board unchanged.
    let before = board_fen(&h);
    h.get_by_label("Chess960 number").click();
    h.run();
    h.key_press(egui::Key::Backspace);
    h.run();
    h.get_by_label("Chess960 number").type_text("999");
    h.run();
    h.get_by_label("Set Chess960").click();
    h.run();
    assert_eq!(board_fen(&h), before);
    h.get_by_label_contains("999 is not a Chess960 position number");
}

#[test]
fn navigation_keys_move_through_the_line() {
    let mut h = app_harness();
    for (a, b) in [(Square::E2, Square::E4), (Square::E7, Square::E5), (Square::G1, Square::F3)] {
        click_square(&mut h, a);
        click_square(&mut h, b);
    }
    assert_eq!(sans(&h), ["e4", "e5", "Nf3"]);
    let cursor =
        |h: &egui_kittest::Harness<'_, mavboard::shell::MavboardApp>| h.state().state.doc.line.cursor();
    h.key_press(egui::Key::ArrowLeft);
    h.run();
    h.key_press(egui::Key::ArrowLeft);
    h.run();
    assert_eq!(cursor(&h), 1);
    assert_eq!(board_fen(&h), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    h.key_press(egui::Key::Home);
    h.run();
    assert_eq!(cursor(&h), 0);
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(cursor(&h), 1);
    h.key_press(egui::Key::End);
    h.run();
    assert_eq!(cursor(&h), 3);
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(cursor(&h), 3);
    // A different move off the line truncates it.
    h.key_press(egui::Key::Home);
    h.run();
    click_square(&mut h, Square::D2);
    click_square(&mut h, Square::D4);
    assert_eq!(sans(&h), ["d4"]);
    // Clicking a move in the list goes there.
    click_square(&mut h, Square::D7);
    click_square(&mut h, Square::D5);
    h.get_by_label("d4").click();
    h.run();
    assert_eq!(cursor(&h), 1);
}

#[test]
fn open_and_save_by_path_through_the_menu() {
    let dir = std::env::temp_dir().join(format!("mavboard-ui-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("in.pgn");
    std::fs::write(&input, "[White \"W\"]\n[Black \"B\"]\n\n1. d4 d5 2. c4 e6 3. Nc3 *\n")
        .expect("write fixture");
    let mut h = app_harness();
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Open by path...").click();
    h.run();
    h.get_by_label("Path").type_text(&input.display().to_string());
    h.run();
    h.get_by_label("Open").click();
    // One frame: the file is read in the background (a full `run` could give up while it reads).
    h.step();
    ui_common::wait_for_open(&mut h);
    assert_eq!(sans(&h), ["d4", "d5", "c4", "e6", "Nc3"]);
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(input.as_path()));
    assert_eq!(h.state().state.settings.recent_files.first().map(|p| p.as_path()), Some(input.as_path()));
    h.get_by_label("W - B");

    // A missing file: an error naming it, the line kept.
    let missing = dir.join("missing.pgn");
    h.state_mut().state.apply(mavboard::app::command::Command::File(
        mavboard::app::command::FileCommand::OpenPath(missing.clone()),
    ));
    h.step();
    ui_common::wait_for_open(&mut h);
    assert_eq!(sans(&h).len(), 5);
    h.get_by_label_contains("missing.pgn");

    let output = dir.join("out.pgn");
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Save to path...").click();
    h.run();
    // The field starts with the current file; replace it.
    assert_eq!(h.get_by_label("Path").value().as_deref(), Some(input.display().to_string().as_str()));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run();
    h.get_by_label("Path").type_text(&output.display().to_string());
    h.run();
    h.get_by_label("Save").click();
    h.run();
    let written = std::fs::read_to_string(&output).expect("the line was saved");
    assert!(written.contains("1. d4 d5 2. c4 e6 3. Nc3 *"), "{written}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn paste_dialog_loads_pgn_and_fen() {
    let mut h = app_harness();
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Paste FEN or PGN...").click();
    h.run();
    let field = "A FEN, or PGN games (the first opens; all are in the game list):";
    h.get_by_label(field).click();
    h.run();
    h.get_by_label(field).type_text("1. e4 c5 2. Nf3 d6 *");
    h.run();
    h.get_by_label("Load").click();
    h.run();
    assert_eq!(sans(&h), ["e4", "c5", "Nf3", "d6"]);
    assert!(h.state().state.view.dialog.is_none(), "the dialog closes after loading");

    // A PGN with an illegal move: the error names the move, the line stays.
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Paste FEN or PGN...").click();
    h.run();
    h.get_by_label(field).click();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run();
    h.get_by_label(field).type_text("1. e4 e5 2. Ke3 *");
    h.run();
    h.get_by_label("Load").click();
    h.run();
    assert_eq!(sans(&h), ["e4", "c5", "Nf3", "d6"]);
    h.get_by_label_contains("2. Ke3 is not a legal move");
}

#[test]
fn open_by_path_has_the_keyboard_at_once_and_enter_opens_the_file() {
    let mut h = app_harness();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/blank-lines.pgn");
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Open by path...").click();
    h.run();
    // Typed without clicking into the field: it took the keyboard when the dialog opened.
    h.input_mut().events.push(egui::Event::Text(file.display().to_string()));
    h.run();
    assert_eq!(h.get_by_label("Path").value().as_deref(), Some(file.display().to_string().as_str()));
    h.key_press(egui::Key::Enter);
    h.run();
    ui_common::wait_for_open(&mut h);
    assert_eq!(h.state().state.doc.current_file.as_deref(), Some(file.as_path()), "Enter opened the file");
    assert_eq!(sans(&h)[..3], ["e4", "e5", "Nf3"]);
}
