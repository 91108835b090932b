//! Hovering a root move's PV in the search panel previews it on the board (the position at the PV's end,
//! marked as a preview) and leaves the game unchanged.

use crate::ui_common;

use std::time::Duration;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::pv_san;
use mavboard::app::line::MoveHistory;
use mavboard::app::pv_preview::PvPreview;
use mavboard::app::settings::{SearchSettings, Settings};
use ui_common::{app_with_model, board_fen, sans, step_until};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn hovering_a_pv_previews_it_on_the_board_without_changing_the_game() {
    let settings = Settings {
        search: SearchSettings { simulations: 80, ..SearchSettings::default() },
        ..Settings::default()
    };
    let mut h = app_with_model(settings);
    assert!(step_until(&mut h, WAIT, |app| app.state.analysis.report.is_some()));
    h.get_by_label("Search").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| !app.state.analysis.searching), "the search ends at its budget");
    let _ = h.try_run();
    let root = h.state().state.current().clone();
    let report = h.state().state.analysis.report.clone().expect("a report");
    let mv = report.snapshot.moves.iter().filter(|m| m.pv.len() >= 2).max_by_key(|m| m.visits).expect("a PV");
    let expected = PvPreview::from_pv(&root, &mv.pv).expect("the PV is legal");
    let start_fen = board_fen(&h);
    assert_eq!(h.state().ui.shown_position.as_deref(), Some(start_fen.as_str()));
    assert!(h.query_by_label_contains("Preview:").is_none());

    // Fold the action values away so the search table is in view, then hover the move (its first cell: the
    // PV cell may be scrolled out of a narrow panel).
    h.get_by_label("Action values").click();
    let _ = h.try_run();
    let san = pv_san(&root, &mv.pv).into_iter().next().expect("the move in SAN");
    let cell = h.get_all_by_label(&san).last().expect("the move's cell in the search table").rect();
    h.hover_at(cell.center());
    let _ = h.try_run();
    assert_eq!(h.state().state.view.pv_hover.as_ref().map(|p| p.action.as_str()), Some(mv.action.as_str()));
    let shown = h.state().ui.shown_position.clone().expect("drawn");
    assert_eq!(shown, expected.after.fen(), "the board shows the end of the PV");
    assert_ne!(shown, start_fen);
    h.get_by_label(&format!("Preview: {}", expected.text));
    // The game is unchanged.
    assert_eq!(board_fen(&h), start_fen);
    assert!(sans(&h).is_empty());
    assert!(!h.state().state.doc.line.is_modified());

    // Moving the pointer away ends the preview.
    h.hover_at(egui::pos2(5.0, 795.0));
    let _ = h.try_run();
    assert!(h.state().state.view.pv_hover.is_none());
    assert_eq!(h.state().ui.shown_position.as_deref(), Some(start_fen.as_str()));
    assert!(h.query_by_label_contains("Preview:").is_none());
    assert_eq!(h.state().state.doc.line.cursor(), 0);
}
