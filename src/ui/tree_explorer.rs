//! The search tree explorer: the root moves of the latest search, each expandable to its children's
//! statistics (visits, visit share, Q, prior, the model's max/mean values), recursively, as deep as the
//! tree goes.

use eframe::egui::{self, RichText};
use shakmaty::san::SanPlus;

use crate::app::command::AnalysisCommand;
use crate::app::command::Command;
use crate::app::state::AppState;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::search::mcts::MoveStats;

/// Most children listed under one node (the most visited).
pub const MAX_CHILDREN: usize = 12;

/// The toggle's text for a move: `▸ Nf3` (collapsed) or `▾ Nf3` (expanded).
pub fn toggle_text(san: &str, expanded: bool) -> String {
    format!("{} {san}", if expanded { "▾" } else { "▸" })
}

/// One row of the explorer.
struct Row<'a> {
    depth: usize,
    path: Vec<String>,
    san: String,
    stats: &'a MoveStats,
}

/// The rows under the node at `path` (position `here`), depth first through expanded nodes.
fn rows<'a>(
    state: &'a AppState,
    here: &ChessState,
    path: &[String],
    moves: &'a [MoveStats],
    out: &mut Vec<Row<'a>>,
) {
    for m in moves.iter().take(MAX_CHILDREN) {
        let Ok(mv) = here.parse_action(&m.action) else { continue };
        let Ok(next) = here.play(mv) else { continue };
        let san = SanPlus::from_move(here.position().clone(), mv).to_string();
        let mut child = path.to_vec();
        child.push(m.action.clone());
        let expanded = state.analysis.explorer.expanded.contains(&child);
        out.push(Row { depth: path.len(), path: child.clone(), san, stats: m });
        if expanded && let Some(Ok(children)) = state.analysis.explorer.children.get(&child) {
            rows(state, &next, &child, children, out);
        }
    }
}

/// The explorer.
pub fn tree_explorer_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let Some(report) = state.analysis.report.as_ref().filter(|r| r.snapshot.totals.root_visits > 1) else {
        ui.weak("Run a search to explore its tree.");
        return out;
    };
    let here = state.current();
    let mut list = Vec::new();
    rows(state, here, &[], &report.snapshot.moves, &mut list);
    egui::Grid::new("tree_explorer").num_columns(6).striped(true).spacing([8.0, 2.0]).show(ui, |ui| {
        let rules = super::search_panel::shown_rules(state);
        for h in ["Move", "Visits", "%", "Q", "Prior", &super::search_panel::rules_head(rules)] {
            ui.strong(h);
        }
        ui.end_row();
        for row in &list {
            let m = row.stats;
            let expanded = state.analysis.explorer.expanded.contains(&row.path);
            ui.horizontal(|ui| {
                ui.add_space(14.0 * row.depth as f32);
                if m.visits > 0 {
                    let text = RichText::new(toggle_text(&row.san, expanded)).monospace();
                    let hint = if expanded { "Collapse" } else { "Show this move's replies in the tree" };
                    if ui.add(egui::Button::new(text).frame(false)).on_hover_text(hint).clicked() {
                        out.push(Command::Analysis(AnalysisCommand::ToggleTreeNode(row.path.clone())));
                    }
                } else {
                    ui.label(RichText::new(format!("  {}", row.san)).monospace().weak());
                }
            });
            super::search_panel::stats_cells_ui(ui, m, rules);
            ui.end_row();
            if expanded && let Some(Err(why)) = state.analysis.explorer.children.get(&row.path) {
                ui.colored_label(ui.visuals().warn_fg_color, why.to_string());
                ui.end_row();
            }
        }
    });
    out
}
