//! The moves panel: players, navigation buttons, and the game's move tree with its variations.

use eframe::egui;

use crate::app::command::DocCommand;
use crate::app::command::{Command, Navigate};
use crate::app::line::MoveHistory;
use crate::app::state::AppState;

/// The move list panel.
pub fn moves_panel_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    ui.heading("Moves");
    if let Some((white, black)) = &state.doc.players {
        ui.label(format!("{white} - {black}"));
    }
    ui.horizontal(|ui| {
        for (text, hint, nav) in [
            ("|<", "First position (Home)", Navigate::Start),
            ("<", "Back (Left arrow)", Navigate::Back),
            (">", "Forward (Right arrow)", Navigate::Forward),
            (">|", "Last position (End)", Navigate::End),
        ] {
            if ui.button(text).on_hover_text(hint).clicked() {
                out.push(Command::Doc(DocCommand::Navigate(nav)));
            }
        }
    });
    egui::CollapsingHeader::new("Eval graph").default_open(true).show(ui, |ui| {
        out.extend(super::eval_graph::eval_graph_ui(ui, state));
    });
    ui.separator();
    if state.doc.line.moves().is_empty() && state.doc.line.tree().move_count() == 0 {
        ui.weak("No moves yet: play one on the board.");
    }
    egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
        out.extend(super::move_tree::move_tree_ui(ui, state));
    });
    out
}
