//! The model beside the Connect Four and Hex boards, in the real app window on the shipped packages: the
//! app opens the first package trained on the game, values every legal move of each position in one call
//! (its distribution, max and mean scoring) and runs MAV-MCTS when asked.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::board_model::BoardModelStatus;
use mavboard::app::command::DocCommand;
use mavboard::app::command::{AnalysisCommand, Command};
use mavboard::app::settings::Settings;
use mavboard::game::GameKind;
use mavboard::model::ModelPackage;
use mavboard::shell::MavboardApp;
use ui_common::{app_with_model, choose, step_until};

fn current_text(app: &MavboardApp) -> String {
    app.state.doc.board_game.as_ref().map(|g| g.current().text()).unwrap_or_default()
}

/// Steps until the model's report is for the position on the board and it is not busy.
fn wait_for_values(h: &mut egui_kittest::Harness<'_, MavboardApp>, what: &str) {
    let done = step_until(h, Duration::from_secs(120), |app| {
        let v = &app.state.board_analysis.model.view;
        !v.evaluating
            && !v.searching
            && v.report.as_ref().is_some_and(|r| r.snapshot.root == current_text(app))
    });
    assert!(done, "{what}: the model valued the position: {:?}", h.state().state.board_analysis.model.view);
}

#[test]
fn connect_four_and_hex_are_valued_and_searched_by_a_shipped_model() {
    // The board shows the model's values when the solver is off.
    let mut settings = Settings { show_oracle: false, ..Settings::default() };
    settings.search.simulations = 48;
    let mut h = app_with_model(settings);
    choose(&mut h, &["Game", "Connect Four"]);
    for m in ["4", "4", "3"] {
        h.state_mut()
            .state
            .apply(Command::Doc(DocCommand::PlayMove(mavboard::app::command::BoardMove::Notation(m.into()))));
    }
    wait_for_values(&mut h, "Connect Four");
    let view = h.state().state.board_analysis.model.view.clone();
    let BoardModelStatus::Ready(name) = &view.status else { panic!("{:?}", view.status) };
    let dir = mavboard::model::package::shipped_package_dirs()
        .into_iter()
        .find(|d| d.ends_with(name))
        .expect("a shipped package");
    let package = ModelPackage::open(&dir).expect("opens");
    assert!(package.manifest.games.contains(&GameKind::ConnectFour), "{:?}", package.manifest.games);
    let report = view.report.expect("values");
    assert_eq!(report.snapshot.moves.len(), 7, "every column is valued");
    for m in &report.snapshot.moves {
        let d = m.distribution.as_ref().expect("a distribution");
        assert_eq!(d.len(), 64);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        assert!(m.model.is_some() && m.value(mavboard::mav::scoring::Scoring::Max).is_some());
    }
    // The panel lists them; the search runs on the button and stops by itself.
    h.get_by_label_contains("Max %");
    h.get_by_label("Run MCTS (48 simulations)").click();
    let _ = h.try_run();
    // (A fast machine may finish 48 simulations within those frames: wait for the search's report.)
    let searched = step_until(&mut h, Duration::from_secs(120), |app| {
        app.state.board_analysis.model.view.report.as_ref().is_some_and(|r| r.simulations >= 48)
    });
    assert!(searched, "the search ran");
    wait_for_values(&mut h, "Connect Four MCTS");
    let report = h.state().state.board_analysis.model.view.report.clone().expect("searched");
    assert!(report.simulations >= 48, "{}", report.simulations);
    assert!(report.snapshot.moves.iter().map(|m| m.visits).sum::<u32>() >= 47);
    let best = report.snapshot.best.clone().expect("a best move");
    // Playing the best move from the table values the new position.
    h.get_by_label(&format!("{best} (best)")).click();
    let _ = h.try_run();
    assert_eq!(h.state().state.doc.board_game.as_ref().map(|g| g.moves().len()), Some(4));
    wait_for_values(&mut h, "Connect Four after the best move");

    // Hex 7×7: every empty cell is valued.
    choose(&mut h, &["Game", "Hex", "7×7 (the model size)"]);
    for m in ["d4", "c5"] {
        h.state_mut()
            .state
            .apply(Command::Doc(DocCommand::PlayMove(mavboard::app::command::BoardMove::Notation(m.into()))));
    }
    wait_for_values(&mut h, "Hex");
    let report = h.state().state.board_analysis.model.view.report.clone().expect("values");
    assert_eq!(report.snapshot.moves.len(), 47);
    assert!(
        report
            .snapshot
            .moves
            .iter()
            .all(|m| m.action != "d4" && m.action != "c5" && m.distribution.is_some())
    );
    // The table's two value columns follow the chosen rule and the one beside it.
    h.get_by_label("Mean %");
    assert!(h.query_by_label("Q0.25 %").is_none());
    let quantile: mavboard::mav::scoring::Scoring = "quantile:0.25".parse().expect("a rule");
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::SetScoring(quantile)));
    let _ = h.try_run();
    h.get_by_label("Q0.25 %");
    h.get_by_label("Max %");
    assert!(h.query_by_label("Mean %").is_none());
}

#[test]
fn internal_search_runs_from_the_board_panel_on_connect_four_and_hex() {
    let settings = Settings { show_oracle: false, ..Settings::default() };
    let mut h = app_with_model(settings);
    choose(&mut h, &["Game", "Connect Four"]);
    for m in ["4", "4"] {
        h.state_mut()
            .state
            .apply(Command::Doc(DocCommand::PlayMove(mavboard::app::command::BoardMove::Notation(m.into()))));
    }
    wait_for_values(&mut h, "Connect Four");
    // The section opens on a click and runs breadth 2, depth 1 (the defaults) on "Run".
    h.get_by_label("Internal search").click();
    let _ = h.try_run();
    h.get_by_label("Run").click();
    let _ = h.try_run();
    let done = step_until(&mut h, Duration::from_secs(120), |app| {
        let i = &app.state.board_analysis.model.view.internal;
        !i.running && i.result.is_some()
    });
    assert!(done, "the internal search ended");
    let report =
        h.state().state.board_analysis.model.view.internal.result.clone().expect("a result").expect("it ran");
    assert_eq!(report.root, current_text(h.state()));
    assert_eq!(report.explicit.model_calls, 3, "the root and its two best moves");
    let choice = report.explicit.choice.clone().expect("a choice");
    assert!(report.explicit.tree.children.iter().any(|c| c.action.as_deref() == Some(choice.as_str())));
    // The panel shows the explicit search and the trace it imitates.
    h.get_by_label_contains("Explicit minimax");
    h.get_by_label_contains(&format!("Plays {choice}"));

    // Hex: the same section for the Hex board's model.
    choose(&mut h, &["Game", "Hex", "7×7 (the model size)"]);
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::PlayMove(mavboard::app::command::BoardMove::Notation("d4".into()))));
    wait_for_values(&mut h, "Hex");
    h.state_mut().state.board_analysis.model.request =
        Some(mavboard::app::board_model::BoardSearchRequest::Internal {
            breadth: 3,
            depth: 1,
            decoding: mavboard::inference::completer::TraceDecoding::Free,
        });
    let done = step_until(&mut h, Duration::from_secs(120), |app| {
        let i = &app.state.board_analysis.model.view.internal;
        i.result.as_ref().is_some_and(|r| r.as_ref().is_ok_and(|r| r.root == current_text(app)))
    });
    assert!(
        done,
        "the Hex internal search ended: {:?}",
        h.state().state.board_analysis.model.view.internal.result
    );
    let report =
        h.state().state.board_analysis.model.view.internal.result.clone().expect("a result").expect("it ran");
    assert_eq!(report.explicit.tree.children.len(), 3);
    assert!(report.explicit.trace.contains("<mav game=hex>"));
}
