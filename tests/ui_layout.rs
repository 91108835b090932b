//! The window's layout as a user on a laptop meets it: on a 1440×900 window the search panel's controls
//! are above the fold, and a search filling the tables does not widen the analysis panel or move the board.

mod ui_common;

use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::AnalysisCommand;
use mavboard::app::command::Command;
use mavboard::app::settings::{SearchSettings, Settings};
use mavboard::shell::MavboardApp;
use ui_common::{MAX_STEPS, step_until};

const WAIT: Duration = Duration::from_secs(90);

fn laptop_window() -> Harness<'static, MavboardApp> {
    let mut h =
        Harness::builder().with_size(egui::vec2(1440.0, 900.0)).with_max_steps(MAX_STEPS).build_ui_state(
            |ui, app: &mut MavboardApp| app.frame_ui(ui),
            MavboardApp::with_engine(Settings::default(), std::sync::Arc::new(|| {})),
        );
    h.step();
    h
}

fn has_values(app: &MavboardApp) -> bool {
    !mavboard::ui::values_panel::current_rows(&app.state).is_empty()
}

#[test]
fn the_search_controls_are_above_the_fold_of_a_laptop_window() {
    let mut h = laptop_window();
    assert!(step_until(&mut h, WAIT, has_values), "the model values the start position");
    h.run_steps(3);
    let settings = h.get_by_label("Settings").rect();
    // Below the settings come the search's counters and its table (up to 260 px): most of it must fit
    // above the status bar (24 px).
    assert!(settings.bottom() + 200.0 < 900.0 - 24.0, "the search panel is above the fold: {settings:?}");
    let start = h.get_by_label("Search").rect();
    assert!(start.bottom() < 900.0 - 24.0, "the start button is visible: {start:?}");
}

#[test]
fn a_search_filling_the_tables_moves_neither_the_panel_nor_the_board() {
    let mut h = laptop_window();
    assert!(step_until(&mut h, WAIT, has_values), "the model values the start position");
    h.run_steps(3);
    let board_before = h.state().ui.board.last_rect().expect("the board was drawn");
    let search = SearchSettings { simulations: 400, ..SearchSettings::default() };
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::SetSearchSettings(search)));
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::StartSearch));
    assert!(
        step_until(&mut h, WAIT, |app| {
            !app.state.analysis.searching
                && app.state.analysis.report.as_ref().is_some_and(|r| r.snapshot.totals.root_visits >= 100)
        }),
        "the search ran"
    );
    h.run_steps(3);
    let board_after = h.state().ui.board.last_rect().expect("the board was drawn");
    assert_eq!(board_before, board_after, "the board stayed where it was");
}
