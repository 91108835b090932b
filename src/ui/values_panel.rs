//! The action-values panel: every legal move with the model's win probability under two scoring rules (the
//! chosen one and the one beside it, max and mean by default), its rank under each and a mark where they
//! disagree; with a model B open (*Engine → Compare with…*), B's value and rank under the chosen rule, the
//! gap and a mark where the two models disagree; the focused move's distribution (B's drawn over it); a
//! heatmap of all moves.

use std::time::SystemTime;

use eframe::egui::{self, RichText};

use super::distribution::{distribution_chart_ui, distribution_pair_chart_ui, heatmap_ui, overlay_color};
use super::wdl_bar::wdl_bar_ui;
use crate::app::analysis::{ModelStatus, ValueRow, value_rows};
use crate::app::command::AnalysisCommand;
use crate::app::command::Command;
use crate::app::compare_model::{Answer, CompareCommand, MAX_MARGIN};
use crate::app::server_health::ServerHealth;
use crate::app::state::AppState;
use crate::eval::compare::{Comparison, MoveComparison};
use crate::game::GameState;
use crate::mav::scoring::Scoring;
use crate::mav::wdl::outcome_masses;

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

/// What the panels say of a model that gives a policy and no values.
pub const POLICY_NOTE: &str =
    "a policy (behavioural cloning): move probabilities, no values — max and mean scoring do not apply";

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
    // A model without values (behavioural cloning): one column, the policy's probability of each move.
    let policy = rows.iter().all(|r| r.probability.is_some());
    summary_ui(ui, state, &rows, &rules, &columns, policy);
    let answer = model_b_ui(ui, state, &mut out);
    let comparison = answer.map(|a| (a, a.compare(&rows, rules[0], state.compare.margin)));
    if let Some((_, c)) = &comparison {
        comparison_summary_ui(ui, c, &rows, state.compare.margin, &mut out);
    }
    // With model B open, the table sets the two models side by side under the chosen rule (A's value, B's,
    // the gap, the models' mark) and leaves out the second rule's column and mark, which the line above
    // still counts; otherwise both rules side by side.
    let compared = comparison.as_ref().map(|(_, c)| c);
    let table = Table {
        shown: if compared.is_some() || policy { vec![0] } else { columns.clone() },
        rules: &rules,
        columns: &columns,
        compared,
        policy,
        // A model that values moves by win/draw/loss (an lc0 network) gets the split as a bar, and one that
        // gives a policy beside its values, the policy's share.
        wdl_column: rows.iter().any(|r| outcome_masses(&r.distribution).is_some()),
        policy_column: rows.iter().any(|r| r.policy.is_some()),
        searched: state.analysis.report.as_ref().is_some_and(|r| r.snapshot.totals.root_visits > 1),
        margin: state.compare.margin,
    };
    // Both ways: a table wider than the panel scrolls instead of widening the panel (and moving the board).
    egui::ScrollArea::both().id_salt("values_table").max_height(240.0).auto_shrink([false, true]).show(
        ui,
        |ui| {
            let grid = egui::Grid::new("values_grid").num_columns(5).striped(true);
            grid.spacing([10.0, 2.0]).show(ui, |ui| {
                table.header_ui(ui);
                for row in &rows {
                    let selected = state.analysis.selected_move.as_deref() == Some(row.uci.as_str());
                    table.row_ui(ui, row, selected, hovered, &mut out);
                }
            });
        },
    );
    if let Some(focus) = state.analysis.focus_move(&rows) {
        ui.separator();
        focus_distribution_ui(ui, focus, comparison.as_ref().and_then(|(a, _)| a.distribution(&focus.uci)));
    }
    out
}

/// The line above the table: how many moves, how many the two rules rank differently (or the policy's
/// note), and the position's own win/draw/loss when the network gives one.
fn summary_ui(
    ui: &mut egui::Ui,
    state: &AppState,
    rows: &[ValueRow],
    rules: &[Scoring],
    columns: &[usize],
    policy: bool,
) {
    if policy {
        ui.label(format!("{} moves · ", rows.len()) + POLICY_NOTE).on_hover_text(
            "A behavioural-cloning model predicts the move to play, not how good each move is",
        );
    } else {
        let disagreements = rows.iter().filter(|r| r.disagrees()).count();
        ui.label(format!(
            "{} moves · {} and {} rank {} of them differently",
            rows.len(),
            rules[columns[0]],
            rules[columns[1]],
            if disagreements == 0 { "none".to_owned() } else { disagreements.to_string() }
        ));
    }
    if let Some(o) = state.analysis.report.as_ref().and_then(|r| r.snapshot.root_outcome) {
        ui.horizontal(|ui| {
            ui.label("Position:");
            wdl_bar_ui(ui, o.wdl);
            let left = o.moves_left.map(|m| format!(" · about {m:.0} moves left")).unwrap_or_default();
            ui.label(format!("{}{left}", super::wdl_bar::wdl_text(o.wdl))).on_hover_text(
                "The network's own win/draw/loss for the side to move (and its moves-left head)",
            );
        });
    }
}

/// What the values table shows: its columns, decided once for all its rows.
struct Table<'a> {
    /// The scoring rules' columns shown, as indices into `rules` (the chosen rule first).
    shown: Vec<usize>,
    rules: &'a [Scoring],
    /// The rules in the catalogue's order (max before mean).
    columns: &'a [usize],
    /// Model B beside the model: its columns replace the second rule's.
    compared: Option<&'a Comparison>,
    /// A model without values: the policy's probability is the one column.
    policy: bool,
    wdl_column: bool,
    policy_column: bool,
    /// A search ran: the visits column is filled.
    searched: bool,
    margin: f64,
}

impl Table<'_> {
    /// The header row.
    fn header_ui(&self, ui: &mut egui::Ui) {
        let rules = self.rules;
        ui.strong("Move");
        for &i in &self.shown {
            let who = if self.compared.is_some() { "A " } else { "" };
            if self.policy {
                ui.strong(format!("{who}Prob %"))
                    .on_hover_text("The policy's probability of the move (rank)");
            } else {
                ui.strong(format!("{who}{} %", rules[i].title()))
                    .on_hover_text(format!("Win % by {} scoring (rank)", rules[i]));
            }
        }
        if self.policy_column {
            ui.strong("Policy %").on_hover_text("The network's policy: how likely it plays the move");
        }
        if self.wdl_column {
            ui.strong("W/D/L").on_hover_text(
                "Win, draw and loss after the move, for the side to move (light, grey, dark). Over these \
                 three outcomes max scoring is the most likely one (win 100%, draw 50%, loss 0%) and mean \
                 scoring the expected score",
            );
        }
        if let Some(c) = self.compared {
            let b = overlay_color(ui.visuals());
            let (head, hint) = if c.b_values {
                ("B %", format!("Model B's win % by {} scoring (its rank)", rules[0]))
            } else {
                ("B prob %", "Model B's policy probability of the move (its rank)".to_owned())
            };
            ui.label(RichText::new(head).strong().color(b)).on_hover_text(hint);
            ui.label(RichText::new("B−A").strong().color(b))
                .on_hover_text("Model B's value less model A's, in points of win probability");
            ui.label(RichText::new("A≠B").strong().color(b)).on_hover_text(
                "The models disagree: the move is one model's best and not the other's, or their values \
                 differ by more than the margin",
            );
        } else if self.policy {
            ui.label("");
        } else {
            ui.strong("≠").on_hover_text(format!(
                "{} and {} scoring rank this move differently",
                rules[self.columns[0]].title(),
                rules[self.columns[1]]
            ));
        }
        ui.strong("Visits");
        ui.end_row();
    }

    /// One move's row; a click selects it (or clears the selection), hovering names it in `hovered`.
    fn row_ui(
        &self,
        ui: &mut egui::Ui,
        row: &ValueRow,
        selected: bool,
        hovered: &mut Option<String>,
        out: &mut Vec<Command>,
    ) {
        let (rules, columns) = (self.rules, self.columns);
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
        for &i in &self.shown {
            let t = RichText::new(format!("{:5.1}% ({})", row.values[i] * 100.0, row.ranks[i])).monospace();
            ui.label(if i == 0 { t.strong() } else { t });
        }
        if self.policy_column {
            let p = row.policy.map(|p| format!("{:5.1}%", 100.0 * p)).unwrap_or_default();
            ui.label(RichText::new(p).monospace());
        }
        if self.wdl_column {
            match outcome_masses(&row.distribution) {
                Some(wdl) => {
                    wdl_bar_ui(ui, wdl);
                }
                None => {
                    ui.label("");
                }
            }
        }
        if let Some(c) = self.compared {
            comparison_cells_ui(ui, c.moves.iter().find(|m| m.text == row.uci), self.margin);
        } else if row.disagrees() {
            ui.label(RichText::new("≠").strong().color(ui.visuals().warn_fg_color)).on_hover_text(format!(
                "rank {} by {}, {} by {}",
                row.ranks[columns[0]], rules[columns[0]], row.ranks[columns[1]], rules[columns[1]]
            ));
        } else {
            ui.label("");
        }
        // A fixed width, so the column does not grow when a search fills it.
        let visits = if self.searched { row.visits.to_string() } else { String::new() };
        ui.label(RichText::new(format!("{visits:>7}")).monospace());
        ui.end_row();
    }
}

/// The focused move's value distribution under the table, beside model B's when it gives one.
fn focus_distribution_ui(ui: &mut egui::Ui, focus: &ValueRow, other: Option<&[f64]>) {
    match other {
        _ if focus.distribution.is_empty() => {
            ui.label(format!(
                "{}: probability {:.1}% — this model gives no value distribution",
                focus.san,
                100.0 * focus.probability.unwrap_or_default()
            ));
            if let Some(b) = other {
                ui.label(format!("Model B over {} buckets (solid: mode, dashed: mean)", b.len()));
                distribution_chart_ui(ui, b, 110.0);
            }
        }
        Some(b) => {
            ui.label(format!(
                "{}: model A over {} buckets (bars), model B over {} (outline); solid: mode = max scoring, \
                 dashed: mean",
                focus.san,
                focus.distribution.len(),
                b.len()
            ));
            distribution_pair_chart_ui(ui, &focus.distribution, b, 110.0);
        }
        None => {
            ui.label(format!(
                "{}: distribution over {} buckets (solid: mode = max scoring, dashed: mean)",
                focus.san,
                focus.distribution.len()
            ));
            distribution_chart_ui(ui, &focus.distribution, 110.0);
        }
    }
}

/// Model B's line: loading, failed, valuing, or (returned) its answer for the board position.
fn model_b_ui<'a>(ui: &mut egui::Ui, state: &'a AppState, out: &mut Vec<Command>) -> Option<&'a Answer> {
    let b = &state.compare;
    let colour = overlay_color(ui.visuals());
    let (text, answer, busy) = match &b.status {
        ModelStatus::None => return None,
        ModelStatus::Loading(i) => (format!("Model B: loading {}…", i.name), None, true),
        ModelStatus::Failed(why) => (why.clone(), None, false),
        ModelStatus::Ready(i) => match b.answer_for(state.current()) {
            None => (format!("Model B ({}, {}): valuing…", i.name, i.format), None, true),
            Some(Err(why)) => {
                (format!("Model B ({}) could not value this position: {why}", i.name), None, false)
            }
            Some(Ok(a)) => (format!("Model B: {} ({})", i.name, i.format), Some(a), false),
        },
    };
    ui.horizontal_wrapped(|ui| {
        if busy {
            ui.spinner();
        }
        ui.label(RichText::new(text).color(colour));
        if ui.small_button("Stop comparing").clicked() {
            out.push(Command::Compare(CompareCommand::Close));
        }
    });
    answer
}

/// The comparison's summary line: both best moves, how many moves are marked, and the margin.
fn comparison_summary_ui(
    ui: &mut egui::Ui,
    c: &Comparison,
    rows: &[crate::app::analysis::ValueRow],
    margin: f64,
    out: &mut Vec<Command>,
) {
    let san = |uci: &Option<String>| {
        uci.as_ref().map_or("–".to_owned(), |u| {
            rows.iter().find(|r| &r.uci == u).map_or_else(|| u.clone(), |r| r.san.clone())
        })
    };
    let marked = c.moves.iter().filter(|m| m.disagree).count();
    let only_b = c.moves.iter().filter(|m| m.a.is_none()).count();
    ui.horizontal_wrapped(|ui| {
        let best = if c.best_differs {
            format!("best: A {} ≠ B {}", san(&c.best_a), san(&c.best_b))
        } else {
            format!("both best: {}", san(&c.best_a))
        };
        ui.label(format!(
            "{best} · A≠B on {marked} move{}{}",
            if marked == 1 { "" } else { "s" },
            if only_b > 0 { format!(" ({only_b} valued by B only)") } else { String::new() }
        ));
        if !(c.a_values && c.b_values) {
            // A value and a probability are not set apart by a margin: only ranks and best moves count.
            return;
        }
        let mut points = margin * 100.0;
        let label = ui.label("margin");
        let drag =
            egui::DragValue::new(&mut points).range(0.0..=MAX_MARGIN * 100.0).speed(0.5).suffix(" pts");
        let r = ui.add(drag).labelled_by(label.id).on_hover_text(
            "The largest gap between the two models' values that is not marked (points of win probability)",
        );
        if r.changed() {
            out.push(Command::Compare(CompareCommand::SetMargin(points / 100.0)));
        }
    });
}

/// Model B's cells of one row: its value (rank), the gap to A's, and the disagreement mark.
fn comparison_cells_ui(ui: &mut egui::Ui, m: Option<&MoveComparison>, margin: f64) {
    let Some(m) = m.filter(|m| m.b.is_some()) else {
        ui.label(RichText::new("     –").monospace());
        ui.label("");
        ui.label(RichText::new("≠").strong().color(ui.visuals().warn_fg_color))
            .on_hover_text("Model B did not value this move");
        return;
    };
    let (b, rank) = (m.b.unwrap_or_default(), m.rank_b.unwrap_or_default());
    ui.label(RichText::new(format!("{:5.1}% ({rank})", b * 100.0)).monospace());
    ui.label(RichText::new(m.gap.map_or(String::new(), |g| format!("{:+5.1}", g * 100.0))).monospace());
    if m.disagree {
        let why = match (m.rank_a, m.rank_b, m.gap) {
            (Some(1), Some(rb), _) if rb != 1 => format!("model A's best, model B's {rb}."),
            (Some(ra), Some(1), _) if ra != 1 => format!("model B's best, model A's {ra}."),
            (_, _, Some(g)) => {
                format!("the values differ by {:.1} points (margin {:.1})", g.abs() * 100.0, margin * 100.0)
            }
            _ => "only one model valued it".to_owned(),
        };
        ui.label(RichText::new("≠").strong().color(ui.visuals().warn_fg_color)).on_hover_text(why);
    } else {
        ui.label("");
    }
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
    if rows.iter().all(|r| r.distribution.is_empty()) {
        ui.weak(POLICY_NOTE);
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
