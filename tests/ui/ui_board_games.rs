//! Connect Four and Hex in the real app window: chosen from the Game menu, played by clicking the board,
//! stepped through with the keys, and valued by the solver beside the board (its values checked against
//! the solver run directly).

use crate::ui_common;

use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::board_game::{BoardState, GameChoice};
use mavboard::app::command::Command;
use mavboard::app::command::DocCommand;
use mavboard::app::line::MoveHistory;
use mavboard::app::settings::Settings;
use mavboard::app::state::AppState;
use mavboard::engine::oracle::OracleMethod;
use mavboard::game::GameState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::Cell;
use mavboard::shell::MavboardApp;
use mavboard::solve::connect_four::Solver;
use mavboard::ui::{connect_four_board, hex_board};
use ui_common::{app_harness, choose, step_until};

fn click(h: &mut Harness<'_, MavboardApp>, p: egui::Pos2) {
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    let _ = h.try_run();
}

fn click_column(h: &mut Harness<'_, MavboardApp>, number: u32) {
    let layout = connect_four_board::last_layout(&h.ctx).expect("the Connect Four board was drawn");
    let col = number - 1;
    // Near the top of the column: any height in it drops the stone.
    click(h, layout.hole(col, 5));
}

fn click_cell(h: &mut Harness<'_, MavboardApp>, name: &str) {
    let layout = hex_board::last_layout(&h.ctx).expect("the Hex board was drawn");
    let cell = Cell::parse(name).expect("a cell name");
    click(h, layout.centre(cell.col(), cell.row()));
}

/// The solver beside the board has finished the position on it.
fn solver_done(app: &MavboardApp) -> bool {
    let report = app.state.board_analysis.oracle.report.as_ref();
    report.is_some_and(|r| r.done && r.position == current_text(&app.state))
}

fn moves(h: &Harness<'_, MavboardApp>) -> Vec<String> {
    h.state().state.doc.board_game.as_ref().map(|g| g.moves().to_vec()).unwrap_or_default()
}

/// A Connect Four line of `plies` moves (pseudo-random, fixed seed) in which nobody has won.
fn quiet_line(plies: usize) -> String {
    let mut seed = 7u64;
    let (mut state, mut line) = (ConnectFourState::default(), String::new());
    for _ in 0..10_000 {
        if line.len() == plies {
            return line;
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let legal = state.legal_actions();
        let c = legal[(seed >> 33) as usize % legal.len()];
        let next = state.play(c).expect("legal");
        if next.outcome().is_none() {
            line.push_str(&state.action_to_text(c));
            state = next;
        }
    }
    panic!("no quiet line of {plies} plies found");
}

#[test]
fn connect_four_is_played_by_clicks_and_valued_by_the_solver() {
    let mut h = app_harness();
    choose(&mut h, &["Game", "Connect Four"]);
    assert_eq!(h.state().state.settings.game, GameChoice::ConnectFour);
    h.get_by_label_contains("x (first) to move");
    click_column(&mut h, 4);
    click_column(&mut h, 4);
    click_column(&mut h, 3);
    assert_eq!(moves(&h), ["4", "4", "3"]);
    h.get_by_label_contains("o (second) to move");
    // Back with the arrow key, then a different move replaces the rest of the line.
    h.key_press(egui::Key::ArrowLeft);
    let _ = h.try_run();
    assert_eq!(h.state().state.doc.board_game.as_ref().map(|g| g.cursor()), Some(2));
    click_column(&mut h, 5);
    assert_eq!(moves(&h), ["4", "4", "5"]);

    // A position late enough for the solver to finish quickly: its values are the solver's own.
    let line = quiet_line(18);
    let line = line.as_str();
    h.state_mut().state.apply(Command::Doc(DocCommand::NewGame));
    for c in line.chars() {
        h.state_mut().state.apply(Command::Doc(DocCommand::PlayMove(
            mavboard::app::command::BoardMove::Notation(c.to_string()),
        )));
    }
    assert_eq!(moves(&h).concat(), line);
    let done = step_until(&mut h, Duration::from_secs(120), solver_done);
    assert!(done, "the solver finished: {:?}", h.state().state.board_analysis.oracle.report);
    let report = h.state().state.board_analysis.oracle.report.clone().expect("a report");
    assert_eq!(report.method, OracleMethod::Exact);
    let state = ConnectFourState::from_moves(line).expect("legal");
    let analysis = Solver::new().analyse(&state);
    assert_eq!(report.moves.len(), analysis.moves.len());
    for (shown, exact) in report.moves.iter().zip(&analysis.moves) {
        assert_eq!(shown.action, exact.column.number().to_string());
        assert_eq!(shown.label, exact.value.describe());
        assert_eq!(shown.bucket, exact.bucket);
    }
    // The panel marks the best move and plays a move from the table.
    let best = report.best().expect("a best move").action.clone();
    h.get_by_label(&format!("{best} (best)")).click();
    let _ = h.try_run();
    assert_eq!(moves(&h).last(), Some(&best));
    assert_eq!(moves(&h).len(), line.len() + 1);

    // A FEN that is not valid leaves the game on the board; a chess position that loads (here a pasted
    // FEN) brings the chess board back with it.
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadFen("not a fen".into())));
    assert_eq!(moves(&h).len(), line.len() + 1, "the Connect Four game is kept");
    assert_eq!(h.state().state.settings.game, GameChoice::ConnectFour);
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadPasted(fen.into())));
    let _ = h.try_run();
    assert!(h.state().state.doc.board_game.is_none());
    assert_eq!(h.state().state.settings.game, GameChoice::Chess);
    assert_eq!(ui_common::board_fen(&h), fen);
}

fn current_text(state: &AppState) -> String {
    state.doc.board_game.as_ref().map(|g| g.current().text()).unwrap_or_default()
}

#[test]
fn hex_is_played_by_clicks_with_mcts_values_and_the_choice_persists() {
    let mut h = app_harness();
    choose(&mut h, &["Game", "Hex", "7×7 (the model size)"]);
    assert_eq!(h.state().state.settings.game, GameChoice::Hex { size: 7, swap: false });
    h.get_by_label_contains("x (top–bottom) to move");
    click_cell(&mut h, "d4");
    // An occupied cell is not a move.
    click_cell(&mut h, "d4");
    click_cell(&mut h, "c5");
    assert_eq!(moves(&h), ["d4", "c5"]);
    let done = step_until(&mut h, Duration::from_secs(120), solver_done);
    assert!(done, "the MCTS rounds finished");
    let report = h.state().state.board_analysis.oracle.report.clone().expect("a report");
    assert!(matches!(report.method, OracleMethod::Mcts { .. }), "{:?}", report.method);
    assert_eq!(report.moves.len(), 47);
    assert!(report.moves.iter().all(|m| m.action != "d4" && m.action != "c5"));

    // Home goes to the empty board; the swap rule is an option of the menu.
    h.key_press(egui::Key::Home);
    let _ = h.try_run();
    assert!(
        matches!(h.state().state.doc.board_game.as_ref().map(|g| g.current()), Some(BoardState::Hex(s)) if s.stone_count() == 0)
    );
    choose(&mut h, &["Game", "Hex", "Swap rule"]);
    assert_eq!(h.state().state.settings.game, GameChoice::Hex { size: 7, swap: true });
    click_cell(&mut h, "b2");
    h.state_mut().state.apply(Command::Doc(DocCommand::PlayMove(
        mavboard::app::command::BoardMove::Notation("swap".into()),
    )));
    assert_eq!(moves(&h), ["b2", "swap"]);

    // The game chosen comes back with the settings; Chess goes back to the analysis board.
    let restored = AppState::new(h.state().state.settings.clone());
    assert!(
        matches!(restored.doc.board_game.as_ref().map(|g| g.current()), Some(BoardState::Hex(s)) if s.size() == 7 && s.swap_rule())
    );
    choose(&mut h, &["Game", "Chess"]);
    assert!(h.state().state.doc.board_game.is_none());
    assert!(h.state().ui.board.last_rect().is_some(), "the chess board is drawn again");
    let fresh = AppState::new(Settings::default());
    assert!(fresh.doc.board_game.is_none());
}

#[test]
fn one_new_game_command_for_every_game_and_standard_start_brings_chess_back() {
    let mut h = app_harness();
    // A chess move, then Connect Four: the chess game is kept beside it.
    h.state_mut().state.apply(Command::Doc(DocCommand::PlayMove(
        mavboard::app::command::BoardMove::Notation("e2e4".into()),
    )));
    h.state_mut().state.apply(Command::Doc(DocCommand::SetGame(GameChoice::ConnectFour)));
    for column in ["4", "3"] {
        h.state_mut().state.apply(Command::Doc(DocCommand::PlayMove(
            mavboard::app::command::BoardMove::Notation(column.into()),
        )));
    }
    assert_eq!(moves(&h), ["4", "3"]);
    // New game: a new game of the kind on the board, the chess game untouched.
    h.state_mut().state.apply(Command::Doc(DocCommand::NewGame));
    assert!(moves(&h).is_empty());
    assert_eq!(h.state().state.doc.line.cursor(), 1);
    // Position > Standard start: chess again, from the start, once the unsaved chess move is let go.
    let _ = h.try_run();
    for label in ["Position", "Standard start"] {
        h.get_by_label(label).click();
        let _ = h.try_run();
    }
    assert!(h.state().state.doc.board_game.is_none());
    assert_eq!(h.state().state.doc.line.cursor(), 1, "the chess game has an unsaved move: asked first");
    h.get_by_label("Discard").click();
    let _ = h.try_run();
    assert_eq!(h.state().state.doc.line.cursor(), 0);
    assert_eq!(h.state().state.settings.game, GameChoice::Chess);
}
