//! The window's layout as a user on a laptop meets it: on a 1440×900 window the search panel's controls
//! are above the fold, *Inside the model* is in view beside the search, each pane scrolls on its own, the
//! arrangement of tabs is kept and reset, and a search filling the tables does not widen the analysis
//! panel or move the board.

use crate::ui_common;

use std::time::Duration;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::command::AnalysisCommand;
use mavboard::app::command::Command;
use mavboard::app::settings::{SearchSettings, Settings};
use mavboard::shell::MavboardApp;
use mavboard::ui::panes::tree_from_text;
use mavboard::ui::sections::Section;
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

/// A 1440×900 window without an engine (the layout alone), after its first frames.
fn laptop_window_with(settings: Settings) -> Harness<'static, MavboardApp> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1440.0, 900.0))
        .with_max_steps(MAX_STEPS)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), MavboardApp::with_settings(settings));
    h.run_steps(3);
    h
}

/// Whether `rect` lies inside the window, above the status bar.
fn in_view(rect: egui::Rect) -> bool {
    rect.top() >= 0.0 && rect.bottom() < 900.0 - 24.0 && rect.left() >= 0.0 && rect.right() <= 1440.0
}

#[test]
fn inside_the_model_and_the_search_are_in_view_at_once_and_the_panes_scroll_on_their_own() {
    let mut h = laptop_window_with(Settings::default());
    let inside = h.get_by_label("Look inside the model").rect();
    let search = h.get_by_label("Settings").rect();
    let values = h.get_by_label("Action values").rect();
    assert!(in_view(inside), "Inside the model is in view: {inside:?}");
    assert!(in_view(search), "the search is in view: {search:?}");
    assert!(in_view(values), "the action values' tab is in view: {values:?}");
    assert!(
        search.bottom() + 200.0 < 900.0 - 24.0,
        "the search pane has room below its settings: {search:?}"
    );
    for section in [Section::Values, Section::Search, Section::Inside] {
        assert!(h.state().ui.panes.is_visible(section), "{section:?} is shown");
    }
    // The wheel over the *Inside* pane scrolls that pane (if anything), never the search above it.
    h.hover_at(inside.center());
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -400.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(3);
    assert_eq!(h.get_by_label("Settings").rect(), search, "the search did not move");
}

#[test]
fn a_changed_layout_is_kept_in_the_settings_and_reset_from_the_view_menu() {
    let mut h = laptop_window_with(Settings::default());
    assert!(h.state().state.settings.panel_layout.is_none(), "the default layout is not written");
    // Choosing another tab changes the layout: the settings keep it.
    h.get_by_label("Search tree").click();
    h.run_steps(3);
    assert!(h.state().ui.panes.is_visible(Section::Tree) && !h.state().ui.panes.is_visible(Section::Search));
    let kept = h.state().state.settings.panel_layout.clone().expect("the layout is kept");
    assert!(tree_from_text(&kept).is_ok(), "it reads back: {kept}");
    // A new window with these settings starts with the same layout.
    let settings = h.state().state.settings.clone();
    let mut again = Harness::builder()
        .with_size(egui::vec2(1440.0, 900.0))
        .with_max_steps(MAX_STEPS)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), MavboardApp::with_settings(settings));
    again.run_steps(3);
    assert!(again.state().ui.panes.is_visible(Section::Tree), "the layout came back");
    // View → Reset analysis panel layout.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Reset analysis panel layout").click();
    h.run_steps(3);
    assert!(h.state().state.settings.panel_layout.is_none());
    assert!(h.state().ui.panes.is_visible(Section::Search), "the default layout is back");
}
