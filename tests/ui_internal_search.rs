//! The internal-search panel through the real app and the shipped model: open the panel, run b = 2,
//! d = 1, and find the explicit tree's moves, the chosen move and the model-trace line in the window.

mod ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::MavboardApp;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::settings::Settings;
use mavboard::search::internal::ModelSide;
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
    // The defaults are b = 2, d = 1.
    click(&mut h, "Run");
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
    let backed_up = tree.children.iter().map(|c| 1.0 - c.value.expect("value")).fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(report.explicit.value, Some(backed_up));
    for c in &tree.children {
        let mv = c.action.clone().expect("a move");
        assert!(
            h.get_all_by_label_contains(&format!("{mv}  max ")).next().is_some(),
            "the tree shows {mv} with its values"
        );
    }
    assert!(h.get_all_by_label_contains(&format!("Plays {choice} (")).next().is_some(), "the chosen move is shown");
    match &report.model {
        ModelSide::Unsupported { .. } => {
            assert!(h.get_all_by_label_contains("No model trace: ").next().is_some());
        }
        ModelSide::Written(_) => assert!(h.get_all_by_label_contains("The model's own trace").next().is_some()),
        ModelSide::Failed { .. } => {
            assert!(h.get_all_by_label_contains("could not write its trace").next().is_some());
        }
    }
}
