//! The internal-search panel through the real app and the shipped model: open the panel, run b = 2,
//! d = 1, and find the explicit tree's moves, the chosen move and the model-trace line in the window.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::settings::Settings;
use mavboard::search::internal::ModelSide;
use mavboard::shell::MavboardApp;
use ui_common::{app_with_model, step_until};

const WAIT: Duration = Duration::from_secs(60);

fn click(h: &mut egui_kittest::Harness<'_, MavboardApp>, label: &str) {
    h.get_by_label(label).scroll_to_me();
    h.step();
    h.step();
    h.get_by_label(label).click();
    h.step();
}

#[test]
fn panel_runs_minimax_and_shows_the_tree_and_the_chosen_move() {
    let mut h = app_with_model(Settings::default());
    assert!(
        step_until(&mut h, WAIT, |app| matches!(app.state.analysis.model, ModelStatus::Ready(_))),
        "the shipped model loads: {:?}",
        h.state().state.analysis.model
    );
    click(&mut h, "Internal search (minimax)");
    assert!(h.get_all_by_label_contains("Run minimax over the model").next().is_some());
    // The defaults are b = 2, d = 1. The board's values arriving can move the button between finding it
    // and clicking it (one run in ten missed it): wait for them, and click again until the run starts.
    step_until(&mut h, WAIT, |app| !mavboard::ui::values_panel::current_rows(&app.state).is_empty());
    for _ in 0..5 {
        click(&mut h, "Run");
        let internal = &h.state().state.analysis.internal;
        if internal.running || internal.result.is_some() {
            break;
        }
    }
    assert!(
        step_until(&mut h, WAIT, |app| app.state.analysis.internal.result.is_some()),
        "the internal search answers"
    );
    assert!(!h.state().state.analysis.internal.running);
    let report = match h.state().state.analysis.internal.result.clone() {
        Some(Ok(r)) => r,
        other => panic!("no report: {other:?}"),
    };
    assert_eq!((report.breadth, report.depth), (2, 1));
    let tree = &report.explicit.tree;
    assert_eq!(tree.children.len(), 2, "b = 2 children of the start position");
    assert!(tree.children.iter().all(|c| c.children.is_empty()), "d = 1: the children are leaves");
    assert_eq!(report.explicit.model_calls, 3);
    let choice = report.explicit.choice.clone().expect("a move is chosen");
    assert!(tree.child(&choice).is_some_and(|c| c.on_chosen_line));
    let backed_up =
        tree.children.iter().map(|c| 1.0 - c.value.expect("value")).fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(report.explicit.value, Some(backed_up));
    for c in &tree.children {
        let mv = c.action.clone().expect("a move");
        assert!(
            h.get_all_by_label_contains(&format!("{mv}  max ")).next().is_some(),
            "the tree shows {mv} with its values"
        );
    }
    assert!(
        h.get_all_by_label_contains(&format!("Plays {choice} (")).next().is_some(),
        "the chosen move is shown"
    );
    match &report.model {
        ModelSide::Unsupported { .. } => {
            assert!(h.get_all_by_label_contains("No model trace: ").next().is_some());
        }
        ModelSide::Written(_) => {
            assert!(h.get_all_by_label_contains("The model's own trace").next().is_some())
        }
        ModelSide::Failed { .. } => {
            assert!(h.get_all_by_label_contains("could not write its trace").next().is_some());
        }
    }
}

/// A report whose model side is a hand-edited trace (an illegal move in place of the first child), as an
/// internal-search model could write it.
fn report_with_a_model_trace() -> mavboard::search::internal::InternalReport {
    use mavboard::game::GameState;
    use mavboard::game::chess::ChessState;
    use mavboard::inference::complete::Completion;
    use mavboard::inference::evaluator::Scoring;
    use mavboard::mav::buckets::Buckets;
    use mavboard::mav::command::StateFormat;
    use mavboard::search::internal::{InternalConfig, InternalReport, explicit_search, judge_trace};

    let config = InternalConfig {
        breadth: 2,
        depth: 1,
        scoring: Scoring::Mean,
        state_format: StateFormat::Fen,
        buckets: Buckets::mav(),
        decoding: Default::default(),
    };
    let root = ChessState::startpos();
    let mut e = mavboard::search::mock::HashEvaluator::new(5);
    let explicit = explicit_search(&mut e, root.clone(), &config).expect("runs");
    let first = explicit.tree.children[0].action.clone().expect("a child");
    let text = explicit.trace[explicit.prompt.len()..].replace(&format!("<root {first}>"), "<root e1e8>");
    // As if the repeat guard had replaced three repeated moves while the model wrote it.
    let completion =
        Completion { tokens: 100, text, truncated: false, repeats_avoided: 3, decoding: Default::default() };
    let model = judge_trace::<ChessState>(&explicit.prompt, &completion, &explicit.tree, Buckets::mav());
    InternalReport {
        root: root.to_text(),
        breadth: 2,
        depth: 1,
        scoring: Scoring::Mean,
        explicit,
        model: ModelSide::Written(Box::new(model)),
    }
}

#[test]
fn a_model_trace_is_shown_beside_the_explicit_one_with_its_mistakes() {
    let mut h = ui_common::app_harness();
    let report = report_with_a_model_trace();
    h.state_mut().state.analysis.internal.result = Some(Ok(report.clone()));
    h.step();
    click(&mut h, "Internal search (minimax)");
    assert!(h.get_all_by_label("The model's own trace").next().is_some());
    assert!(h.get_all_by_label("Explicit minimax").next().is_some());
    // The model's illegal child, its issue marked, and the difference from the explicit tree.
    assert!(h.get_all_by_label_contains("e1e8  value ").next().is_some());
    assert!(h.get_all_by_label_contains("! line ").next().is_some(), "issues are listed at their nodes");
    assert!(h.get_all_by_label_contains("illegal move e1e8").next().is_some());
    assert!(h.get_all_by_label_contains("Differs from the explicit search").next().is_some());
    assert!(
        h.get_all_by_label_contains("from listing a move twice on one line 3 time(s)").next().is_some(),
        "the repeat guard's work is shown"
    );
    let second = report.explicit.tree.children[1].action.clone().expect("a child");
    assert!(h.get_all_by_label_contains(&format!("{second}  max ")).next().is_some());
    assert!(h.get_all_by_label_contains(&format!("{second}  value ")).next().is_some(), "in both trees");
}

/// The two trees aligned node by node: the illegal child is the model's only, the search's first child the
/// search's only, the second in both; hovering a row previews its line on the board, clicking plays it.
#[test]
fn the_aligned_trees_mark_where_they_part_and_preview_and_play_a_line() {
    // A tall window: the whole aligned tree fits its pane without scrolling.
    let mut h = egui_kittest::Harness::builder()
        .with_size(eframe::egui::vec2(1440.0, 1600.0))
        .with_max_steps(ui_common::MAX_STEPS)
        .build_ui_state(
            |ui, app: &mut MavboardApp| app.frame_ui(ui),
            MavboardApp::with_settings(Settings::default()),
        );
    let _ = h.try_run();
    let report = report_with_a_model_trace();
    h.state_mut().state.analysis.internal.result = Some(Ok(report.clone()));
    h.step();
    click(&mut h, "Internal search (minimax)");
    // (A grid is laid out unseen in its first frame.)
    h.step();
    h.step();
    assert!(h.get_all_by_label_contains("Aligned trees: 4 node(s)").next().is_some());
    for tag in ["search only", "model only"] {
        assert!(h.get_all_by_label_contains(tag).next().is_some(), "{tag}");
    }
    let second = report.explicit.tree.children[1].action.clone().expect("a child");
    let row = format!("  {second}");
    h.get_by_label(&row).scroll_to_me();
    h.step();
    h.get_by_label(&row).hover();
    h.step();
    h.step();
    let hovered = h.state().state.view.pv_hover.as_ref().and_then(|p| p.line.clone());
    assert_eq!(hovered, Some(vec![second.clone()]), "the row's line is previewed");
    h.get_by_label(&row).click();
    h.step();
    h.step();
    assert_eq!(ui_common::sans(&h).len(), 1, "the line was played");
    let uci = {
        use mavboard::game::GameState;
        let s = h.state().state.current().clone();
        let start = mavboard::game::chess::ChessState::startpos();
        let after = start.play(start.parse_action(&second).expect("legal")).expect("plays");
        assert_eq!(s.to_text(), after.to_text());
        second
    };
    assert!(h.state().state.view.pv_hover.is_none(), "playing {uci} ends the preview");
}

/// With the shipped trace writer, *Rules decoding* makes the model's own trace a legal tree of the asked
/// shape, named as rules-decoded in the panel.
#[test]
fn the_panel_runs_a_rules_decoded_model_trace() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("assets/models/mav-tiny");
    let settings = Settings { model_dir: Some(dir.clone()), ..Settings::default() };
    let manifest = mavboard::model::ModelPackage::open(&dir).expect("the shipped package").manifest;
    if !manifest.internal_search {
        return;
    }
    let mut h = app_with_model(settings);
    assert!(
        step_until(&mut h, WAIT, |app| matches!(app.state.analysis.model, ModelStatus::Ready(_))),
        "mav-tiny loads: {:?}",
        h.state().state.analysis.model
    );
    click(&mut h, "Internal search (minimax)");
    step_until(&mut h, WAIT, |app| !mavboard::ui::values_panel::current_rows(&app.state).is_empty());
    click(&mut h, "Rules decoding");
    for _ in 0..5 {
        click(&mut h, "Run");
        let internal = &h.state().state.analysis.internal;
        if internal.running || internal.result.is_some() {
            break;
        }
    }
    assert!(
        step_until(&mut h, Duration::from_secs(180), |app| app.state.analysis.internal.result.is_some()),
        "the internal search answers"
    );
    let report = match h.state().state.analysis.internal.result.clone() {
        Some(Ok(r)) => r,
        other => panic!("no report: {other:?}"),
    };
    let ModelSide::Written(m) = &report.model else { panic!("no model trace: {:?}", report.model) };
    assert_eq!(m.decoding, mavboard::inference::completer::TraceDecoding::Rules);
    assert!(m.parse_error.is_none(), "{}", m.written);
    let tree = m.tree.as_ref().expect("a tree");
    assert_eq!(tree.children.len(), 2, "b = 2 legal children: {}", m.written);
    assert!(m.issues.iter().all(|i| !i.text.contains("illegal move")), "{:?}", m.issues);
    h.step();
    assert!(h.get_all_by_label_contains("Rules decoding: moves legal").next().is_some());
}
