//! The analysis side panel: the model in use, the action values and the search, and the candidate arrows
//! they put on the board.

use eframe::egui;
use shakmaty::Move;

use super::arrows::{Arrow, ArrowStyle, move_squares};
use super::values_panel::current_rows;
use crate::app::analysis::ModelStatus;
use crate::app::command::Command;
use crate::app::command::{AnalysisCommand, ViewCommand};
use crate::app::state::AppState;
use crate::game::GameState;

/// How many candidate arrows the board shows.
pub const MAX_ARROWS: usize = 4;

/// The model line at the top of the panel, with the model menu.
fn model_ui(ui: &mut egui::Ui, analysis: &crate::app::analysis::AnalysisState, out: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        match &analysis.model {
            ModelStatus::Ready(i) => {
                // A policy without values (behavioural cloning) has no buckets.
                let what = if i.buckets == 0 {
                    "a policy, no values".to_owned()
                } else {
                    format!("{} buckets", i.buckets)
                };
                ui.label(format!("Model: {} ({}, {what})", i.name, i.format)).on_hover_text(format!(
                    "{}\n{} parameters",
                    i.dir.display(),
                    i.parameters
                ));
            }
            ModelStatus::Loading(i) => {
                ui.spinner();
                ui.label(format!("Loading {}…", i.name));
            }
            ModelStatus::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, "No model").on_hover_text(e);
            }
            ModelStatus::None => {
                ui.label("No model");
            }
        }
        ui.menu_button("Model…", |ui| {
            if ui.button("Choose a package folder…").clicked() {
                out.push(Command::Analysis(AnalysisCommand::ChooseModelFolder));
            }
            if ui.button("Type a folder path…").clicked() {
                out.push(Command::View(ViewCommand::ShowDialog(Some(crate::app::state::Dialog::Path(
                    crate::app::file_dialog::FileDialogKind::ModelFolder,
                )))));
            }
            if ui.button("Shipped default").clicked() {
                out.push(Command::Analysis(AnalysisCommand::LoadDefaultModel));
            }
        });
    });
}

/// The analysis panel: the model line, then the sections in their tabs and panes ([`super::panes`]).
pub fn analysis_panel_ui(
    ui: &mut egui::Ui,
    state: &AppState,
    panes: &mut super::panes::Panes,
) -> Vec<Command> {
    let mut out = Vec::new();
    model_ui(ui, &state.analysis, &mut out);
    ui.separator();
    let mut hovered = None;
    panes.ui(ui, state, &mut super::sections::SectionOutput { hovered: &mut hovered, commands: &mut out });
    if hovered != state.analysis.hovered_move {
        out.push(Command::Analysis(AnalysisCommand::HoverMove(hovered)));
    }
    out
}

/// The candidate arrows for the board position: the searched moves by visits once a search ran, else the
/// best moves by the chosen scoring; the hovered move's arrow always.
pub fn analysis_arrows(state: &AppState) -> Vec<Arrow> {
    let rows = current_rows(state);
    let here = state.current();
    let mode = here.castling_mode();
    let squares = |uci: &str| -> Option<(shakmaty::Square, shakmaty::Square)> {
        let mv: Move = here.parse_action(uci).ok()?;
        move_squares(mv, mode)
    };
    let searched = rows.iter().any(|r| r.visits > 1);
    let mut chosen: Vec<&crate::app::analysis::ValueRow> = rows.iter().collect();
    if searched {
        chosen.sort_by_key(|r| std::cmp::Reverse(r.visits));
    }
    let most = chosen.first().map_or(1, |r| r.visits.max(1)) as f32;
    let mut arrows: Vec<Arrow> = chosen
        .iter()
        .take(MAX_ARROWS)
        .enumerate()
        .filter_map(|(i, r)| {
            let (from, to) = squares(&r.uci)?;
            let weight = if searched { r.visits as f32 / most } else { 1.0 - 0.2 * i as f32 };
            Some(Arrow {
                from,
                to,
                win_probability: Some(r.value() as f32),
                weight: weight.clamp(0.15, 1.0),
                style: ArrowStyle::Candidate,
            })
        })
        .collect();
    if let Some(h) = state.analysis.hovered_move.as_deref()
        && let Some(row) = rows.iter().find(|r| r.uci == h)
        && let Some((from, to)) = squares(h)
    {
        arrows.retain(|a| (a.from, a.to) != (from, to));
        arrows.push(Arrow {
            from,
            to,
            win_probability: Some(row.value() as f32),
            weight: 1.0,
            style: ArrowStyle::Candidate,
        });
    }
    arrows
}
