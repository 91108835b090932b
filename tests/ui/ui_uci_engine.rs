//! The UCI engine panel with a real engine: Stockfish's MultiPV lines appear for the start position and
//! follow the board. Skips, saying why, where no Stockfish is installed (`apt-get install stockfish`).

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::command::Command;
use mavboard::app::uci_panel::UciCommand;
use mavboard::shell::MavboardApp;
use mavboard::uci::locate::locate_stockfish;
use shakmaty::Square;
use ui_common::{app_harness, click_square, step_until};

fn stockfish_installed() -> bool {
    match locate_stockfish(None) {
        Ok(_) => true,
        Err(e) => {
            println!("SKIPPED: {e}");
            false
        }
    }
}

fn has_lines(app: &MavboardApp, at_least: usize) -> bool {
    app.state
        .uci
        .lines_for(app.state.current(), &app.state.settings.uci_engine)
        .is_some_and(|s| s.lines.lines.len() >= at_least && s.lines.depth.is_some_and(|d| d >= 6))
}

#[test]
fn stockfish_lines_appear_and_follow_the_board() {
    if !stockfish_installed() {
        return;
    }
    let mut h = app_harness();
    h.state_mut().state.settings.uci_engine.multipv = 2;
    h.get_by_label("UCI engine").click();
    h.run();
    h.get_by_label("Start").click();
    assert!(
        step_until(&mut h, Duration::from_secs(30), |app| has_lines(app, 2)),
        "no lines from the engine: {:?}",
        h.state().state.uci.snapshot
    );
    assert!(h.state().state.uci.snapshot.engine.as_deref().is_some_and(|n| n.contains("Stockfish")));
    // The lines are shown in SAN with move numbers from the start position.
    let first = &h.state().state.uci.snapshot.lines.lines[0];
    assert_eq!(first.multipv, 1);
    let shown = mavboard::ui::uci_panel::pv_text(h.state().state.current(), &first.pv);
    assert!(shown.starts_with("1. "), "{shown}");
    // The spinner keeps repainting while the engine thinks: step, don't wait to settle.
    h.step();
    assert!(h.query_all_by_label_contains("1. ").count() >= 2, "the PVs in SAN are on screen");
    assert!(h.query_by_label("Stop").is_some());
    // A move on the board: the engine analyses the new position (Black to move); `has_lines` only counts
    // lines whose position is the board's.
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    assert!(step_until(&mut h, Duration::from_secs(30), |app| has_lines(app, 2)));
    let first = &h.state().state.uci.snapshot.lines.lines[0];
    let shown = mavboard::ui::uci_panel::pv_text(h.state().state.current(), &first.pv);
    assert!(shown.starts_with("1... "), "{shown}");
    // Stop: the engine stops thinking.
    h.get_by_label("Stop").click();
    assert!(step_until(&mut h, Duration::from_secs(10), |app| !app.state.uci.snapshot.searching));
    assert!(!h.state().state.uci.running);
}

#[test]
fn a_wrong_engine_path_is_reported_with_the_fix() {
    let mut h = app_harness();
    h.state_mut().state.apply(Command::Uci(UciCommand::SetPath(Some("/nonexistent/stockfish".into()))));
    h.get_by_label("UCI engine").click();
    h.run();
    h.get_by_label("Start").click();
    h.run();
    assert!(h.query_by_label_contains("/nonexistent/stockfish").is_some());
    assert!(h.query_by_label_contains("apt-get install stockfish").is_some());
    assert!(!h.state().state.uci.running);
}

#[test]
fn a_broken_engine_is_reported() {
    // /bin/true exits at once: it starts, but never answers `uci`.
    if !std::path::Path::new("/bin/true").exists() {
        println!("SKIPPED: no /bin/true");
        return;
    }
    let mut h = app_harness();
    h.state_mut().state.apply(Command::Uci(UciCommand::SetPath(Some("/bin/true".into()))));
    h.get_by_label("UCI engine").click();
    h.run();
    h.get_by_label("Start").click();
    assert!(step_until(&mut h, Duration::from_secs(15), |app| app.state.uci.snapshot.error.is_some()));
    let e = h.state().state.uci.snapshot.error.clone().unwrap_or_default();
    assert!(e.contains("/bin/true") && e.contains("UCI chess engine"), "{e}");
    h.run();
    assert!(h.query_by_label_contains("exited unexpectedly").is_some());
}
