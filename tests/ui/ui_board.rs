//! Board interaction through the real app window: click-click moves, illegal moves, drag-and-drop,
//! flipping, promotion and Chess960 castling.

use crate::ui_common;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::DocCommand;
use mavboard::app::line::MoveHistory;
use mavboard::game::GameKind;
use mavboard::game::GameState;
use shakmaty::Square;
use ui_common::{app_harness, board_fen, click_square, drag_piece, sans};

#[test]
fn click_two_squares_plays_a_legal_move() {
    let mut h = app_harness();
    click_square(&mut h, Square::E2);
    assert_eq!(h.state().ui.board.selected(), Some(Square::E2));
    click_square(&mut h, Square::E4);
    assert_eq!(sans(&h), ["e4"]);
    assert_eq!(board_fen(&h), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    assert_eq!(h.state().ui.board.selected(), None);
    // The move list shows it.
    h.get_by_label("e4");
}

#[test]
fn illegal_move_is_rejected_and_the_board_is_unchanged() {
    let mut h = app_harness();
    let before = board_fen(&h);
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E5);
    assert!(sans(&h).is_empty());
    assert_eq!(board_fen(&h), before);
    let note = h.state().state.view.status_note.clone().expect("a note about the rejected move");
    assert!(note.contains("e2-e5"), "{note}");
    h.get_by_label_contains("e2-e5 is not a legal move");
    // Clicking the opponent's piece selects nothing.
    click_square(&mut h, Square::E7);
    assert_eq!(h.state().ui.board.selected(), None);
}

#[test]
fn drag_and_drop_plays_a_move() {
    let mut h = app_harness();
    drag_piece(&mut h, Square::G1, Square::F3);
    assert_eq!(sans(&h), ["Nf3"]);
    // Dropping on an illegal square changes nothing.
    drag_piece(&mut h, Square::B8, Square::B5);
    assert_eq!(sans(&h), ["Nf3"]);
    drag_piece(&mut h, Square::B8, Square::C6);
    assert_eq!(sans(&h), ["Nf3", "Nc6"]);
}

#[test]
fn f_flips_the_board_and_clicks_follow() {
    let mut h = app_harness();
    assert!(!h.state().state.settings.flipped);
    h.key_press(egui::Key::F);
    h.run();
    assert!(h.state().state.settings.flipped);
    // With Black at the bottom, e2 is drawn near the top of the board.
    let rect = h.state().ui.board.last_rect().expect("drawn");
    assert!(ui_common::square_pos(&h, Square::E2).y < rect.center().y);
    click_square(&mut h, Square::D2);
    click_square(&mut h, Square::D4);
    assert_eq!(sans(&h), ["d4"]);
    h.key_press(egui::Key::F);
    h.run();
    assert!(!h.state().state.settings.flipped);
}

#[test]
fn promotion_picker_chooses_the_piece() {
    let mut h = app_harness();
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadFen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1".to_owned())));
    h.run();
    click_square(&mut h, Square::E7);
    click_square(&mut h, Square::E8);
    assert!(h.state().ui.board.promotion_open());
    assert!(sans(&h).is_empty());
    // The picker lists queen, knight, rook, bishop from e8 downwards: the knight is on e7's square.
    click_square(&mut h, Square::E7);
    assert_eq!(sans(&h), ["e8=N"]);
}

#[test]
fn chess960_castling_king_onto_rook() {
    let mut h = app_harness();
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadFen("k7/8/8/8/8/8/8/4RK1R w H - 0 1".to_owned())));
    h.run();
    assert_eq!(h.state().state.current().kind(), GameKind::Chess960);
    click_square(&mut h, Square::F1);
    click_square(&mut h, Square::H1);
    assert_eq!(sans(&h), ["O-O"]);
    assert_eq!(h.state().state.current().fen(), "k7/8/8/8/8/8/8/4RRK1 b - - 1 1");
}

#[test]
fn standard_castling_king_two_squares() {
    let mut h = app_harness();
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::LoadFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1".to_owned())));
    h.run();
    click_square(&mut h, Square::E1);
    click_square(&mut h, Square::C1);
    assert_eq!(sans(&h), ["O-O-O"]);
    assert_eq!(h.state().state.doc.line.cursor(), 1);
}
