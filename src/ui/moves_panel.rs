//! The move list of the current line with navigation buttons.

use eframe::egui;

use crate::app::command::{Command, Navigate};
use crate::app::line::MoveHistory;
use crate::app::state::AppState;

/// The move list panel.
pub fn moves_panel_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    ui.heading("Moves");
    if let Some((white, black)) = &state.players {
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
                out.push(Command::Navigate(nav));
            }
        }
    });
    ui.separator();
    let line = &state.line;
    if line.moves().is_empty() {
        ui.weak("No moves yet: play one on the board.");
    }
    egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
        egui::Grid::new("moves_grid").num_columns(3).striped(true).show(ui, |ui| {
            let moves = line.moves();
            let mut i = 0;
            while i < moves.len() {
                let m = &moves[i];
                let number = m.ply.div_ceil(2);
                ui.label(format!("{number}."));
                let white_first = m.ply % 2 == 1;
                if !white_first {
                    ui.label("...");
                }
                let row_end = if white_first { (i + 2).min(moves.len()) } else { i + 1 };
                for (j, mv) in moves.iter().enumerate().take(row_end).skip(i) {
                    let selected = line.cursor() == j + 1;
                    if ui.selectable_label(selected, mv.san.as_str()).clicked() {
                        out.push(Command::Navigate(Navigate::To(j + 1)));
                    }
                }
                ui.end_row();
                i = row_end;
            }
        });
    });
    out
}
