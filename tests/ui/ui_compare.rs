//! Two models at once in the app (*Engine → Compare with…*): model B opened beside the shipped model on
//! its own engine worker, its value, rank and gap in the action-values panel for every move — the same
//! numbers as `mavboard analyse --compare` gives for the two packages —, B following the board, a package
//! that cannot be opened named, and B closed again.

use crate::common;
use crate::ui_common;

use std::path::Path;
use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::command::Command;
use mavboard::app::compare_model::CompareCommand;
use mavboard::app::settings::Settings;
use mavboard::game::GameState;
use mavboard::mav::scoring::Scoring;
use mavboard::ui::values_panel::current_rows;
use ui_common::{app_with_model, step_until};

const WAIT: Duration = Duration::from_secs(60);

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/av-fixture")
}

/// Model B's answer has arrived for the board position (and A's rows are there).
fn compared(app: &mavboard::shell::MavboardApp) -> bool {
    let s = &app.state;
    !current_rows(s).is_empty() && matches!(s.compare.answer_for(s.current()), Some(Ok(_)))
}

#[test]
fn model_b_sits_beside_model_a_move_by_move_as_analyse_compare_says() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| !current_rows(&app.state).is_empty()), "model A's values arrive");
    ui_common::choose(&mut h, &["Engine", "Compare with model by path..."]);
    h.get_by_label("Folder").type_text(&fixture().display().to_string());
    h.run();
    h.get_by_label("Compare").click();
    assert!(step_until(&mut h, WAIT, compared), "model B's values arrive: {:?}", h.state().state.compare);
    assert!(matches!(&h.state().state.compare.status, ModelStatus::Ready(i) if i.name == "av-fixture"));
    h.get_by_label("B %");
    h.get_by_label_contains("Model B: av-fixture (action-value)");

    // The panel's comparison is the CLI's: the same two packages, the same rule (mean), the same numbers.
    let state = &h.state().state;
    let rows = current_rows(state);
    let answer = match state.compare.answer_for(state.current()) {
        Some(Ok(a)) => a.clone(),
        other => panic!("no answer: {other:?}"),
    };
    let app = answer.compare(&rows, Scoring::Mean, state.compare.margin);
    let out = common::mavboard_command()
        .args(["analyse", "--compare"])
        .arg(fixture())
        .arg("--json")
        .output()
        .expect("mavboard runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let cli = &cli["comparison"];
    assert_eq!(cli["best_b"].as_str(), app.best_b.as_deref());
    assert_eq!(cli["best_a"].as_str(), app.best_a.as_deref());
    let cli_moves = cli["moves"].as_array().expect("moves");
    assert_eq!(cli_moves.len(), 20);
    assert_eq!(app.moves.len(), 20);
    for m in &app.moves {
        let c = cli_moves.iter().find(|c| c["move"] == m.text.as_str()).expect("the same moves");
        let (a, b) = (c["a"].as_f64().expect("a"), c["b"].as_f64().expect("b"));
        assert!((m.a.expect("A valued it") - a).abs() < 1e-4, "{}: A {:?} vs {a}", m.text, m.a);
        assert!((m.b.expect("B valued it") - b).abs() < 1e-4, "{}: B {:?} vs {b}", m.text, m.b);
        assert_eq!(m.rank_b, c["rank_b"].as_u64().map(|r| r as usize), "{}", m.text);
        assert_eq!(m.disagree, c["disagree"].as_bool().expect("disagree"), "{}", m.text);
    }
    // 128 buckets for B beside A's 64: the focused move's chart overlays both.
    assert_eq!(answer.moves[0].1.len(), 128);
    h.get_by_label_contains("model A over 64 buckets (bars), model B over 128 (outline)");

    // B follows the board.
    ui_common::click_square(&mut h, shakmaty::Square::E2);
    ui_common::click_square(&mut h, shakmaty::Square::E4);
    assert!(step_until(&mut h, WAIT, |app| {
        compared(app) && app.state.current().to_text().contains(" b ")
    }));
    let state = &h.state().state;
    let Some(Ok(a)) = state.compare.answer_for(state.current()) else { panic!("B valued the new position") };
    assert_eq!(a.moves.len(), state.current().legal_actions().len());

    // Closed from the panel: its columns go.
    h.get_by_label("Stop comparing").click();
    h.run();
    assert!(!h.state().state.compare.is_open());
    assert!(h.query_by_label("B %").is_none());
}

#[test]
fn a_folder_that_is_no_package_is_named_and_a_is_untouched() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| !current_rows(&app.state).is_empty()));
    let missing = std::env::temp_dir().join(format!("mavboard-no-package-{}", std::process::id()));
    h.state_mut().state.apply(Command::Compare(CompareCommand::Open(missing.clone())));
    h.run();
    h.get_by_label_contains(&format!("Model B in {} cannot be used", missing.display()));
    assert!(matches!(h.state().state.analysis.model, ModelStatus::Ready(_)), "model A stays loaded");
    assert_eq!(current_rows(&h.state().state).len(), 20);
}

/// *Review game* judged by the model with model B open: B answers the same positions on its own worker and
/// its view of every move goes beside the model's judgement (as the model's view goes beside a UCI judge),
/// the same review as `review_game_beside` over the two packages; the disagreement line names model B.
#[test]
fn a_review_shows_model_b_s_view_of_every_move_beside_the_model_s() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| !current_rows(&app.state).is_empty()), "model A's values arrive");
    h.state_mut().state.apply(Command::Compare(CompareCommand::Open(fixture())));
    assert!(step_until(&mut h, WAIT, |app| matches!(app.state.compare.status, ModelStatus::Ready(_))));
    h.state_mut().state.apply(Command::Doc(mavboard::app::command::DocCommand::LoadPasted(
        "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0".into(),
    )));
    h.run_steps(2);
    h.get_by_label("Review game").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.reviewing.is_none() && app.state.analysis.game_review.is_some()
    }));
    let reviewed = h.state().state.analysis.game_review.clone().expect("reviewed");
    assert_eq!(reviewed.beside.as_deref(), Some("av-fixture"));
    assert_eq!(reviewed.review.moves.len(), 7);
    assert!(reviewed.review.moves.iter().all(|m| m.model.is_some()), "B's view beside every move");
    // The same review as the library's over the two packages, the model judging.
    let load = |dir: &Path| {
        mavboard::inference::load_evaluator(dir, &Default::default()).expect("the package opens").evaluator
    };
    let tree = h.state().state.doc.line.tree().clone();
    let (mut a, mut b) = (load(&common::package("mav-enc-tiny")), load(&fixture()));
    let scoring = h.state().state.settings.scoring;
    let options = mavboard::review::options::ReviewOptions { scoring, ..Default::default() };
    let library = mavboard::review::game::review_game_beside(&tree, &mut *a, Some(&mut *b), &options, None)
        .expect("library review");
    let classes = |r: &mavboard::review::report::GameReview| {
        r.moves
            .iter()
            .map(|m| (m.classification, m.model.as_ref().map(|v| v.classification)))
            .collect::<Vec<_>>()
    };
    assert_eq!(classes(&reviewed.review), classes(&library));
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("Model B (av-fixture) disagrees (").is_some(),
        "the line names model B"
    );
}
