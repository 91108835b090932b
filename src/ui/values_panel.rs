//! The action-values panel: every legal move with the model's win probability under two scoring rules (the
//! chosen one and the one beside it, max and mean by default), its rank under each and a mark where they
//! disagree; the focused move's distribution; a heatmap of all moves.

use std::time::SystemTime;

use eframe::egui::{self, RichText};

use super::distribution::{distribution_chart_ui, heatmap_ui};
use crate::app::analysis::{ModelStatus, ValueRow, value_rows};
use crate::app::command::AnalysisCommand;
use crate::app::command::Command;
use crate::app::server_health::ServerHealth;
use crate::app::state::AppState;
use crate::game::GameState;
use crate::mav::scoring::Scoring;

/// The rows for the board position with their values under [`crate::app::settings::Settings::scoring_rules`]
/// (the chosen rule first), ordered by the chosen rule (empty before the model answered).
pub fn current_rows(state: &AppState) -> Vec<ValueRow> {
    let rules = state.settings.scoring_rules();
    state
        .analysis
        .report
        .as_ref()
        .map(|r| value_rows(state.current(), &r.snapshot.moves, &rules))
        .unwrap_or_default()
}

/// The scoring switch: drives the order here, the arrows and the search's scoring.
pub fn scoring_switch_ui(
    ui: &mut egui::Ui,
    settings: &crate::app::settings::Settings,
    out: &mut Vec<Command>,
) {
    let hint = |s: Scoring| s.describe();
    ui.horizontal_wrapped(|ui| {
        ui.label("Scoring");
        let mut rules = Scoring::ALL.to_vec();
        if !rules.contains(&settings.scoring) {
            // A rule set elsewhere (the settings file): shown, selected.
            rules.push(settings.scoring);
        }
        for c in rules {
            if ui.selectable_label(settings.scoring == c, c.title()).on_hover_text(hint(c)).clicked() {
                out.push(Command::Analysis(AnalysisCommand::SetScoring(c)));
            }
        }
        let beside = settings.scoring_rules()[1];
        let label = ui
            .label("beside")
            .on_hover_text("The rule whose values and ranks the table shows next to the chosen one");
        let combo =
            egui::ComboBox::from_id_salt("compare_scoring").selected_text(beside.title()).show_ui(ui, |ui| {
                for c in Scoring::ALL.into_iter().filter(|&c| c != settings.scoring) {
                    if ui.selectable_label(beside == c, c.title()).on_hover_text(hint(c)).clicked() {
                        out.push(Command::Analysis(AnalysisCommand::SetCompareScoring(c)));
                    }
                }
            });
        combo.response.labelled_by(label.id);
    });
}

/// What to say when there are no values to show.
fn empty_text(state: &AppState) -> Option<String> {
    if state.current().outcome().is_some() {
        return Some("The game is over: there are no moves to value.".into());
    }
    match &state.analysis.model {
        ModelStatus::None => Some("No model is loaded (Engine > Load model…).".into()),
        ModelStatus::Failed(e) => Some(e.clone()),
        ModelStatus::Loading(i) => Some(format!("Loading {}…", i.name)),
        ModelStatus::Ready(i) => match &state.analysis.server {
            ServerHealth::Unreachable { error, .. } => Some(format!(
                "No values: the model server {} cannot be used ({error}; {}). Reconnect (status bar) tries \
                 again.",
                i.served_by.as_deref().unwrap_or_default(),
                state.analysis.server.last_good_text(SystemTime::now())
            )),
            _ if state.analysis.report.is_none() => Some("Evaluating…".into()),
            _ => None,
        },
    }
}

/// The action-values panel.
/// `hovered` is set to the move under the pointer.
pub fn values_panel_ui(ui: &mut egui::Ui, state: &AppState, hovered: &mut Option<String>) -> Vec<Command> {
    let mut out = Vec::new();
    scoring_switch_ui(ui, &state.settings, &mut out);
    let rows = current_rows(state);
    if rows.is_empty() {
        if let Some(text) = empty_text(state) {
            ui.horizontal(|ui| {
                if matches!(state.analysis.model, ModelStatus::Loading(_)) || state.analysis.evaluating {
                    ui.spinner();
                }
                ui.label(text);
            });
        }
        return out;
    }
    let rules = state.settings.scoring_rules();
    // Columns in the catalogue's order (max before mean), whichever of the two ranks the rows.
    let mut columns: Vec<usize> = (0..rules.len()).collect();
    columns.sort_by_key(|&i| rules[i].catalogue_place());
    let searched = state.analysis.report.as_ref().is_some_and(|r| r.snapshot.totals.root_visits > 1);
    let disagreements = rows.iter().filter(|r| r.disagrees()).count();
    ui.label(format!(
        "{} moves · {} and {} rank {} of them differently",
        rows.len(),
        rules[columns[0]],
        rules[columns[1]],
        if disagreements == 0 { "none".to_owned() } else { disagreements.to_string() }
    ));
    // Both ways: a table wider than the panel scrolls instead of widening the panel (and moving the board).
    egui::ScrollArea::both().id_salt("values_table").max_height(240.0).auto_shrink([false, true]).show(
        ui,
        |ui| {
            egui::Grid::new("values_grid").num_columns(5).striped(true).spacing([10.0, 2.0]).show(ui, |ui| {
                ui.strong("Move");
                for &i in &columns {
                    ui.strong(format!("{} %", rules[i].title()))
                        .on_hover_text(format!("Win % by {} scoring (rank)", rules[i]));
                }
                ui.strong("≠").on_hover_text(format!(
                    "{} and {} scoring rank this move differently",
                    rules[columns[0]].title(),
                    rules[columns[1]]
                ));
                ui.strong("Visits");
                ui.end_row();
                for row in &rows {
                    let selected = state.analysis.selected_move.as_deref() == Some(row.uci.as_str());
                    let r = ui.selectable_label(selected, RichText::new(&row.san).monospace());
                    if r.clicked() {
                        out.push(Command::Analysis(AnalysisCommand::SelectMove(if selected {
                            None
                        } else {
                            Some(row.uci.clone())
                        })));
                    }
                    if r.hovered() {
                        *hovered = Some(row.uci.clone());
                    }
                    let cell = |ui: &mut egui::Ui, v: f64, rank: usize, active: bool| {
                        let t = RichText::new(format!("{:5.1}% ({rank})", v * 100.0)).monospace();
                        ui.label(if active { t.strong() } else { t });
                    };
                    for &i in &columns {
                        cell(ui, row.values[i], row.ranks[i], i == 0);
                    }
                    if row.disagrees() {
                        ui.label(RichText::new("≠").strong().color(ui.visuals().warn_fg_color))
                            .on_hover_text(format!(
                                "rank {} by {}, {} by {}",
                                row.ranks[columns[0]],
                                rules[columns[0]],
                                row.ranks[columns[1]],
                                rules[columns[1]]
                            ));
                    } else {
                        ui.label("");
                    }
                    // A fixed width, so the column does not grow when a search fills it.
                    let visits = if searched { row.visits.to_string() } else { String::new() };
                    ui.label(RichText::new(format!("{visits:>7}")).monospace());
                    ui.end_row();
                }
            });
        },
    );
    if let Some(focus) = state.analysis.focus_move(&rows) {
        ui.separator();
        ui.label(format!(
            "{}: distribution over {} buckets (solid: mode = max scoring, dashed: mean)",
            focus.san,
            focus.distribution.len()
        ));
        distribution_chart_ui(ui, &focus.distribution, 110.0);
    }
    out
}

/// Every move's distribution as one heatmap (rows: moves in the values table's order; columns: buckets).
/// The hovered row's move goes to `hovered`.
pub fn buckets_heatmap_ui(ui: &mut egui::Ui, state: &AppState, hovered: &mut Option<String>) {
    let rows = current_rows(state);
    if rows.is_empty() {
        let why = state.analysis.server.is_unreachable().then(|| empty_text(state)).flatten();
        ui.weak(why.unwrap_or_else(|| "No values yet.".into()));
        return;
    }
    let labels: Vec<String> = rows.iter().map(|r| r.san.clone()).collect();
    let dists: Vec<&[f64]> = rows.iter().map(|r| r.distribution.as_slice()).collect();
    egui::ScrollArea::vertical().id_salt("heatmap").max_height(220.0).show(ui, |ui| {
        if let Some(i) = heatmap_ui(ui, &labels, &dists, 12.0) {
            *hovered = Some(rows[i].uci.clone());
        }
    });
}
