//! Shared helpers for the egui_kittest UI tests: a harness around the real app and board clicks.

#![allow(dead_code)]

use eframe::egui;
use egui_kittest::Harness;
use mavboard::app::line::MoveHistory;
use mavboard::app::settings::Settings;
use mavboard::shell::MavboardApp;
use mavboard::ui::board::square_center;
use shakmaty::Square;

/// Frames `Harness::run` may take to settle. egui_kittest's default (4) is met exactly by some frames of
/// the app (a theme or layout change repaints twice more), so a loaded machine made `run` fail at random;
/// a UI that never settles still fails.
pub const MAX_STEPS: u64 = 32;

/// The app in a 1200x800 window with default settings, after its first frames.
pub fn app_harness() -> Harness<'static, MavboardApp> {
    let mut h =
        Harness::builder().with_size(egui::vec2(1200.0, 800.0)).with_max_steps(MAX_STEPS).build_ui_state(
            |ui, app: &mut MavboardApp| app.frame_ui(ui),
            MavboardApp::with_settings(Settings::default()),
        );
    let _ = h.try_run();
    h
}

/// The centre of `sq` on the board as last drawn.
pub fn square_pos(h: &Harness<'_, MavboardApp>, sq: Square) -> egui::Pos2 {
    let rect = h.state().ui.board.last_rect().expect("the board was drawn");
    square_center(rect, sq, h.state().state.settings.flipped)
}

/// Presses and releases the mouse on `sq`.
pub fn click_square(h: &mut Harness<'_, MavboardApp>, sq: Square) {
    let p = square_pos(h, sq);
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    let _ = h.try_run();
}

/// Drags the piece on `from` to `to` with the mouse.
pub fn drag_piece(h: &mut Harness<'_, MavboardApp>, from: Square, to: Square) {
    let a = square_pos(h, from);
    let b = square_pos(h, to);
    h.hover_at(a);
    h.drag_at(a);
    let _ = h.try_run();
    // Move in a few steps, as a real pointer does.
    for t in [0.25, 0.5, 0.75, 1.0] {
        h.hover_at(a + (b - a) * t);
        h.step();
    }
    h.drop_at(b);
    let _ = h.try_run();
}

/// The SAN of the line's moves.
pub fn sans(h: &Harness<'_, MavboardApp>) -> Vec<String> {
    h.state().state.doc.line.moves().iter().map(|m| m.san.clone()).collect()
}

/// The FEN on the board.
pub fn board_fen(h: &Harness<'_, MavboardApp>) -> String {
    h.state().state.current().fen()
}

/// Steps the harness (sleeping briefly between frames, so engine threads can answer) until `done` holds
/// or `timeout` passes; returns whether it held.
pub fn step_until(
    h: &mut Harness<'_, MavboardApp>,
    timeout: std::time::Duration,
    done: impl Fn(&MavboardApp) -> bool,
) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        h.step();
        if done(h.state()) {
            h.step();
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

/// The app with its engine on the shipped default model (no repaint hook: tests step the frames).
pub fn app_with_model(settings: Settings) -> Harness<'static, MavboardApp> {
    let mut h =
        Harness::builder().with_size(egui::vec2(1400.0, 860.0)).with_max_steps(MAX_STEPS).build_ui_state(
            |ui, app: &mut MavboardApp| app.frame_ui(ui),
            MavboardApp::with_engine(settings, std::sync::Arc::new(|| {})),
        );
    h.step();
    h
}

/// Steps the harness until the PGN file being opened in the background has been read (and acted on).
pub fn wait_for_open(h: &mut Harness<'_, MavboardApp>) {
    assert!(
        step_until(h, std::time::Duration::from_secs(30), |app| app.state.files.loading.is_none()),
        "the file was still being read after 30 s"
    );
    let _ = h.try_run();
}

/// Clicks through a menu path (e.g. `["Game", "Connect Four"]`), then closes any menu left open.
pub fn choose(h: &mut Harness<'_, MavboardApp>, path: &[&str]) {
    use egui_kittest::kittest::Queryable;
    for label in path {
        h.get_by_label(label).click();
        let _ = h.try_run();
    }
    h.key_press(egui::Key::Escape);
    let _ = h.try_run();
}
