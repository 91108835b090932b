//! *Review game* with a UCI engine as the judge in the app (Stockfish from apt), the model's view beside
//! each move: the same review as `mavboard annotate --reviewer uci`, the "model disagrees" list, and a
//! missing engine reported with its fix.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::command::{AnalysisCommand, DocCommand};
use mavboard::app::settings::Settings;
use mavboard::app::uci_review::{ReviewSettings, Reviewer};
use mavboard::ui::eval_graph::disagreements;
use ui_common::{app_with_model, step_until};

const WAIT: Duration = Duration::from_secs(120);
const GAME: &str = "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0";

#[test]
fn a_uci_engine_judges_the_moves_and_the_models_view_stays_beside_them() {
    if mavboard::uci::locate::locate_stockfish(None).is_err() {
        eprintln!("skipped: no stockfish on this machine (apt-get install stockfish)");
        return;
    }
    let settings =
        Settings { review: ReviewSettings { reviewer: Reviewer::Uci, depth: 8 }, ..Settings::default() };
    let mut h = app_with_model(settings);
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadPasted(GAME.into())));
    h.run_steps(2);
    h.get_by_label("Review game").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.reviewing.is_none() && app.state.analysis.game_review.is_some()
    }));
    let reviewed = h.state().state.analysis.game_review.clone().expect("reviewed");
    let review = &reviewed.review;
    assert!(review.method.contains("depth 8"), "the judge is named: {}", review.method);
    assert_eq!(review.moves.len(), 7);
    assert!(review.moves.iter().all(|m| m.model.is_some()), "the model's view beside every move");
    // 2... Nc6 and 3... Nf6 allow mate: the engine calls the last one a blunder whatever the model thinks.
    let nf6 = review.moves.iter().find(|m| m.san == "Nf6").expect("Nf6 reviewed");
    assert_eq!(nf6.classification, mavboard::review::classify::Classification::Blunder);
    h.run_steps(2);
    assert!(h.query_by_label_contains("Model disagrees (").is_some(), "the disagreement line is shown");
    for (_, label, _) in disagreements(&reviewed) {
        assert!(h.get_all_by_label(&label).next().is_some(), "{label} is listed");
    }
    // Switching the scoring re-derives the model's view without asking the engine again.
    h.state_mut()
        .state
        .apply(Command::Analysis(AnalysisCommand::SetScoring(mavboard::mav::scoring::Scoring::Max)));
    h.run_steps(2);
    let rescored = h.state().state.analysis.game_review.as_ref().expect("still reviewed");
    assert_eq!(
        rescored.review.moves.iter().map(|m| m.classification).collect::<Vec<_>>(),
        review.moves.iter().map(|m| m.classification).collect::<Vec<_>>(),
        "the judge's classes stay"
    );
}

#[test]
fn review_all_games_by_a_uci_engine_judges_every_readable_game() {
    if mavboard::uci::locate::locate_stockfish(None).is_err() {
        eprintln!("skipped: no stockfish on this machine (apt-get install stockfish)");
        return;
    }
    let settings =
        Settings { review: ReviewSettings { reviewer: Reviewer::Uci, depth: 6 }, ..Settings::default() };
    let mut h = app_with_model(settings);
    let pasted = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                  [White \"C\"]\n[Black \"D\"]\n\n1. e4 e4 *\n\n\
                  [White \"E\"]\n[Black \"F\"]\n\n1. d4 d5 2. c4 e6 *\n";
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadPasted(pasted.into())));
    h.run_steps(2);
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::ReviewFile));
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.file_review.as_ref().is_some_and(|f| !f.running())
    }));
    let review = h.state().state.analysis.file_review.clone().expect("a file review");
    assert_eq!(review.progress(), (2, 2), "both readable games reviewed, the broken one skipped");
    for n in [1, 3] {
        let reviewed = review.reviewed(review.list, n).expect("reviewed");
        assert!(
            reviewed.review.method.contains("depth 6"),
            "game {n} judged by the engine: {}",
            reviewed.review.method
        );
        assert!(reviewed.review.moves.iter().all(|m| m.model.is_some()), "the model's view beside game {n}");
    }
}

#[test]
fn a_missing_review_engine_is_reported_with_the_fix() {
    let mut settings =
        Settings { review: ReviewSettings { reviewer: Reviewer::Uci, depth: 8 }, ..Settings::default() };
    settings.uci_engine.path = Some("/nonexistent/engine".into());
    let mut h = app_with_model(settings);
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadPasted(GAME.into())));
    h.run_steps(2);
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::ReviewLine));
    assert!(step_until(&mut h, WAIT, |app| app
        .state
        .view
        .messages
        .items()
        .iter()
        .any(|m| m.text.contains("UCI engine panel"))));
    assert!(h.state().state.analysis.reviewing.is_none());
}
