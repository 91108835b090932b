//! The *Inside* panel through the real app window, the real engine and the shipped encoder's inspection
//! graph: turned on, it shows the attention and the values through the layers for the board position;
//! switching a head off lists every move's change; a new position is inspected in turn; reset restores
//! the model as trained.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::settings::Settings;
use mavboard::game::GameState;
use mavboard::shell::MavboardApp;
use shakmaty::Square;
use ui_common::{app_with_model, click_square, step_until};

const WAIT: Duration = Duration::from_secs(60);

/// Scrolls the analysis panel to the widget labelled `label`, clicks it, and lets a section it opens
/// finish its animation.
fn click(h: &mut egui_kittest::Harness<'_, MavboardApp>, label: &str) {
    // Twice: the panel below a widget can grow while the first scroll is under way.
    for _ in 0..2 {
        h.get_by_label(label).scroll_to_me();
        h.step();
        h.step();
    }
    h.get_by_label(label).click();
    for _ in 0..12 {
        h.step();
    }
}

/// Opens the Inside section, turns inspection on and waits for its first answer.
fn look_inside(h: &mut egui_kittest::Harness<'_, MavboardApp>) {
    click(h, "Inside the model");
    click(h, "Look inside the model");
    assert!(
        step_until(h, WAIT, |app| app.state.analysis.inside.view.is_some()),
        "the inspection arrives: {:?}",
        h.state().state.analysis.inside.error
    );
}

#[test]
fn a_user_looks_inside_switches_a_head_off_and_sees_the_values_move() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, |app| matches!(app.state.analysis.model, ModelStatus::Ready(_))));
    // The action values first, so that the panel's layout stays put while the test clicks.
    step_until(&mut h, WAIT, |app| !mavboard::ui::values_panel::current_rows(&app.state).is_empty());
    // Room in the panel: the sections above folded, as a user looking inside would.
    click(&mut h, "Action values");
    click(&mut h, "All moves × buckets");
    click(&mut h, "Search (MAV-MCTS)");
    look_inside(&mut h);
    let start = h.state().state.current().to_text();
    let view = h.state().state.analysis.inside.view.clone().expect("view");
    assert_eq!(view.position, start);
    assert_eq!(view.clean.moves.len(), 20);
    assert!(h.get_all_by_label("Values through the layers").next().is_some());
    assert!(h.get_all_by_label_contains("leads from layer").next().is_some());
    assert!(h.get_all_by_label_contains("layers ×").next().is_some());
    // The chess board is tinted by where the model looks: every square, the most-looked-at one full.
    let heat = mavboard::ui::inside_panel::board_heat(&h.state().state);
    assert_eq!(heat.len(), 64);
    assert!(heat.iter().any(|(_, w)| (*w - 1.0).abs() < 1e-6));
    assert!(heat.iter().all(|(_, w)| (0.0..=1.0).contains(w)));

    // One head, then off: a second pass, and the table of changes, most hurt first.
    click(&mut h, "Switch off");
    assert!(
        step_until(&mut h, WAIT, |app| app
            .state
            .analysis
            .inside
            .view
            .as_ref()
            .is_some_and(|v| v.scaled.is_some())),
        "the scaled pass arrives"
    );
    assert_eq!(h.state().state.analysis.inside.scaled_heads(), vec![(0, 0, 0.0)]);
    assert!(h.get_all_by_label("Δ").next().is_some(), "the change column is shown");
    assert!(h.get_all_by_label_contains("Scaled: L1 H1").next().is_some());

    // The board moves on: the new position is inspected with the head still off.
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    let after = h.state().state.current().to_text();
    assert_ne!(after, start);
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.inside.view.as_ref().is_some_and(|v| v.position == after && v.scaled.is_some())
    }));

    // Reset: the model as trained again.
    click(&mut h, "Reset heads");
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.inside.view.as_ref().is_some_and(|v| v.position == after && v.scaled.is_none())
    }));
    assert!(h.get_all_by_label_contains("Every head as trained").next().is_some());
}

#[test]
fn the_connect_four_board_is_looked_inside_with_the_model_beside_it() {
    let settings = Settings { show_oracle: false, ..Settings::default() };
    let mut h = app_with_model(settings);
    ui_common::choose(&mut h, &["Game", "Connect Four"]);
    assert!(
        step_until(&mut h, WAIT, |app| app.state.board_analysis.model.package_dir().is_some()),
        "the model beside the board starts"
    );
    look_inside(&mut h);
    let view = h.state().state.analysis.inside.view.clone().expect("view");
    assert_eq!(view.clean.game, mavboard::game::GameKind::ConnectFour);
    assert_eq!(view.clean.moves.len(), 7, "every column");
    let cells = view.clean.board_attention(0, 0, view.clean.moves[0].token).expect("attention");
    assert_eq!(cells.len(), 42, "the 7 × 6 cells");
    assert!(h.get_all_by_label("Values through the layers").next().is_some());
}
