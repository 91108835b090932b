//! Play against the model, through the real app window and the real engine on the shipped model: the
//! dialog from the Game menu, the model answering the user's moves (alone, by MCTS, or a UCI engine), the
//! players' names in the saved PGN, resigning, and a Connect Four game.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::DocCommand;
use mavboard::app::line::MoveHistory;
use mavboard::app::play::{Chooser, PlayCommand, PlaySetup, best_by_value};
use mavboard::app::settings::Settings;
use mavboard::game::Player;
use mavboard::mav::scoring::Scoring;
use mavboard::shell::MavboardApp;
use shakmaty::Square;
use ui_common::{app_with_model, click_square, sans, step_until};

const WAIT: Duration = Duration::from_secs(90);

fn moves(app: &MavboardApp) -> usize {
    app.state.doc.line.moves().len()
}

fn start(h: &mut egui_kittest::Harness<'_, MavboardApp>, setup: PlaySetup) {
    h.state_mut().state.apply(Command::Play(PlayCommand::Start(setup)));
    h.step();
}

#[test]
fn the_model_plays_white_with_mean_scoring_and_the_user_resigns() {
    let mut h = app_with_model(Settings::default());
    // The start position's values, as the values panel has them, before any game.
    assert!(
        step_until(&mut h, WAIT, |app| app.state.analysis.report.is_some()),
        "the model values the start"
    );
    let expected = best_by_value(h.state().state.analysis.report.as_ref().expect("a report"), Scoring::Mean)
        .expect("a best move by mean scoring");

    h.get_by_label("Game").click();
    let _ = h.try_run();
    h.get_by_label("Play against the model...").click();
    let _ = h.try_run();
    h.get_by_label("Black").click();
    let _ = h.try_run();
    h.get_by_label("The model alone, mean scoring").click();
    let _ = h.try_run();
    h.get_by_label("Start the game").click();
    let _ = h.try_run();

    let state = &h.state().state;
    assert!(state.play.game.is_some(), "the game started");
    assert!(state.view.dialog.is_none(), "the dialog closed");
    assert!(state.settings.flipped, "Black at the bottom for the user playing Black");
    assert_eq!(state.settings.play.human, Player::Second);

    // The model moves first, its best move by mean scoring.
    assert!(step_until(&mut h, WAIT, |app| moves(app) == 1), "the model played White's first move");
    let first = h.state().state.doc.line.moves()[0].mv.to_uci(shakmaty::CastlingMode::Standard).to_string();
    assert_eq!(first, expected, "the model's move is its best by mean scoring");
    assert!(h.query_by_label_contains("Your move").is_some(), "the bar says it is the user's move");

    // The user answers (Nf6 is legal after any first move), and the model replies.
    click_square(&mut h, Square::G8);
    click_square(&mut h, Square::F6);
    assert_eq!(sans(&h)[1], "Nf6");
    assert!(step_until(&mut h, WAIT, |app| moves(app) == 3), "the model replied: {:?}", sans(&h));

    // The user resigns: the game ends 1-0 and the PGN carries the players and the result.
    h.get_by_label("Resign").click();
    let _ = h.try_run();
    let state = &h.state().state;
    let pgn = state.doc.line.to_pgn();
    assert!(pgn.contains("[White \"mav-enc-tiny (mean scoring)\"]"), "{pgn}");
    assert!(pgn.contains("[Result \"1-0\"]") && pgn.trim_end().ends_with("1-0"), "{pgn}");
    assert!(pgn.contains("[Event \"Game against the model\"]"), "{pgn}");
    assert!(h.query_by_label_contains("Game over: 1-0 (resigned)").is_some());
    // After the game, the board is an analysis board again: nothing moves by itself.
    h.get_by_label("Stop playing").click();
    let _ = h.try_run();
    assert!(h.state().state.play.game.is_none());
}

#[test]
fn mcts_answers_the_users_move_with_its_searchs_choice() {
    let mut h = app_with_model(Settings::default());
    let setup =
        PlaySetup { human: Player::First, chooser: Chooser::Mcts, simulations: 24, movetime_ms: 20_000 };
    start(&mut h, setup);
    assert!(!h.state().state.settings.flipped);
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    assert!(step_until(&mut h, WAIT, |app| moves(app) == 2), "the search's move was played");
    let state = &h.state().state;
    // The search that chose it ran on the position after 1. e4 (its root), with the play's budget.
    let finished = state.analysis.finished_search.as_deref().expect("a search ended");
    assert!(finished.contains("4P3"), "the search's root is after 1. e4: {finished}");
    let game = state.play.game.as_ref().expect("still playing");
    assert!(game.opponent.contains("MCTS, 24 simulations"), "{}", game.opponent);
}

#[test]
fn a_uci_engine_plays_the_other_side() {
    if mavboard::uci::locate::locate_stockfish(None).is_err() {
        eprintln!("skipped: no stockfish on this machine (apt-get install stockfish)");
        return;
    }
    let mut h = app_with_model(Settings::default());
    let setup = PlaySetup { human: Player::First, chooser: Chooser::Uci, simulations: 0, movetime_ms: 300 };
    start(&mut h, setup);
    click_square(&mut h, Square::D2);
    click_square(&mut h, Square::D4);
    assert!(step_until(&mut h, WAIT, |app| moves(app) == 2), "the engine's move was played");
    let state = &h.state().state;
    assert!(state.uci.running, "the engine was started for the game");
    let black = state.doc.players.as_ref().map(|p| p.1.clone()).unwrap_or_default();
    assert!(black.to_ascii_lowercase().contains("stockfish"), "{black}");
}

#[test]
fn the_model_plays_first_at_connect_four() {
    let settings =
        Settings { game: mavboard::app::board_game::GameChoice::ConnectFour, ..Settings::default() };
    let mut h = app_with_model(settings);
    let setup =
        PlaySetup { human: Player::Second, chooser: Chooser::Model(Scoring::Max), ..PlaySetup::default() };
    start(&mut h, setup);
    let count = |app: &MavboardApp| app.state.doc.board_game.as_ref().map_or(0, |g| g.moves().len());
    assert!(step_until(&mut h, WAIT, |app| count(app) == 1), "the model dropped the first stone");
    // The user's stone, then the model's answer.
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::PlayMove(mavboard::app::command::BoardMove::Notation("1".into()))));
    assert!(step_until(&mut h, WAIT, |app| count(app) == 3), "the model answered");
    // Another game on the board ends the game against the model: the model no longer moves by itself.
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::SetGame(mavboard::app::board_game::GameChoice::Chess)));
    h.run_steps(3);
    assert!(h.state().state.play.game.is_none(), "switching to chess ended the Connect Four game");
    assert!(h.state().state.doc.line.moves().is_empty(), "nobody moved on the chess board");
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::SetGame(mavboard::app::board_game::GameChoice::ConnectFour)));
    h.run_steps(2);
    // A UCI engine is refused for Connect Four, with the reason.
    let uci = PlaySetup { chooser: Chooser::Uci, ..setup };
    h.state_mut().state.apply(Command::Play(PlayCommand::Start(uci)));
    let _ = h.try_run();
    assert!(h.query_by_label_contains("plays chess only").is_some());
}
