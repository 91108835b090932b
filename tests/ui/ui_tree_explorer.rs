//! The search tree explorer through the real app and engine: after a search, a root move expands to its
//! replies' statistics, a reply to its own replies, and collapsing hides them again.

use crate::ui_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::pv_san;
use mavboard::app::settings::{SearchSettings, Settings};
use mavboard::game::GameState;
use mavboard::ui::tree_explorer::toggle_text;
use ui_common::{app_with_model, step_until};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn a_root_move_expands_to_its_replies_recursively() {
    let settings = Settings {
        search: SearchSettings { simulations: 150, ..SearchSettings::default() },
        ..Settings::default()
    };
    let mut h = app_with_model(settings);
    assert!(step_until(&mut h, WAIT, |app| app.state.analysis.report.is_some()));
    h.get_by_label("Search").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| !app.state.analysis.searching), "the search ends at its budget");
    let _ = h.try_run();
    // Fold the action values and the search table away, open the tree.
    h.get_by_label("Action values").click();
    let _ = h.try_run();
    h.get_by_label("Search (MAV-MCTS)").click();
    let _ = h.try_run();
    h.get_by_label("Search tree").click();
    let _ = h.try_run();
    let root = h.state().state.current().clone();
    let report = h.state().state.analysis.report.clone().expect("report");
    let best = report.snapshot.moves[0].clone();
    let best_san = pv_san(&root, std::slice::from_ref(&best.action)).remove(0);
    h.get_by_label(&toggle_text(&best_san, false)).click();
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.explorer.children.get(&vec![best.action.clone()]).is_some_and(|c| c.is_ok())
    }));
    let _ = h.try_run();
    h.get_by_label(&toggle_text(&best_san, true));
    let replies =
        h.state().state.analysis.explorer.children[&vec![best.action.clone()]].clone().expect("replies");
    let sum: u32 = replies.iter().map(|r| r.visits).sum();
    assert!(sum + 1 >= best.visits && sum < best.visits, "{sum} under {}", best.visits);
    // The most visited reply is listed with a toggle of its own; expand it too.
    let after = root.play(root.parse_action(&best.action).expect("legal")).expect("plays");
    let reply = &replies[0];
    assert!(reply.visits > 1, "the best move's best reply was searched: {reply:?}");
    let reply_san = pv_san(&after, std::slice::from_ref(&reply.action)).remove(0);
    h.get_by_label(&toggle_text(&reply_san, false)).click();
    let path = vec![best.action.clone(), reply.action.clone()];
    assert!(step_until(&mut h, WAIT, |app| app.state.analysis.explorer.children.contains_key(&path)));
    let _ = h.try_run();
    h.get_by_label(&toggle_text(&reply_san, true));
    // Collapsing the root move hides everything under it.
    h.get_by_label(&toggle_text(&best_san, true)).click();
    let _ = h.try_run();
    assert!(h.state().state.analysis.explorer.expanded.is_empty());
    assert!(h.query_by_label(&toggle_text(&reply_san, true)).is_none());
    h.get_by_label(&toggle_text(&best_san, false));
}
