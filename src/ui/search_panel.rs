//! The search panel: start/stop MAV-MCTS on the board position, its settings, and live statistics per root
//! move (visits, visit share, Q, prior, the model's max/mean values, the principal variation).

use eframe::egui::{self, RichText};

use crate::app::analysis::{AnalysisState, ModelStatus, pv_san};
use crate::app::command::Command;
use crate::app::command::{AnalysisCommand, ViewCommand};
use crate::app::settings::SearchSettings;
use crate::app::state::AppState;
use crate::game::GameState;
use crate::mav::scoring::Scoring;
use crate::search::mcts::SearchStyle;

/// The settings editor; returns the new settings when one changed.
/// The two scoring rules the search table and the tree explorer show the model's value under: the chosen
/// rule and the one beside it (the values panel's two columns).
pub fn shown_rules(state: &AppState) -> [Scoring; 2] {
    [state.settings.scoring, state.settings.compare_scoring]
}

/// The head of the column [`stats_cells_ui`] fills with the model's values: "Mean/Max", "Q0.25/Max", ...
pub fn rules_head(rules: [Scoring; 2]) -> String {
    format!("{}/{}", rules[0].title(), rules[1].title())
}

/// One searched move's statistics as grid cells: visits, visit %, Q, prior, the model's value under the two
/// shown rules (the search's own value alone where its distribution was not kept).
/// Shared by the search table and the tree explorer so both read the same.
pub fn stats_cells_ui(ui: &mut egui::Ui, m: &crate::search::mcts::MoveStats, rules: [Scoring; 2]) {
    ui.label(egui::RichText::new(format!("{:>7}", m.visits)).monospace());
    ui.label(format!("{:.1}", m.visit_share * 100.0));
    ui.label(m.q.map_or("–".into(), |q| format!("{:.1}%", q * 100.0)));
    ui.label(format!("{:.3}", m.prior));
    ui.label(match (m.value(rules[0]), m.value(rules[1]), m.model) {
        (Some(x), Some(y), _) => format!("{:.0}/{:.0}", x * 100.0, y * 100.0),
        // Deeper than the kept distributions: the search's own value.
        (_, _, Some(v)) => format!("{:.0}", v * 100.0),
        _ => "–".into(),
    });
}

fn settings_ui(ui: &mut egui::Ui, current: &SearchSettings) -> Option<SearchSettings> {
    let mut s = current.clone();
    egui::Grid::new("search_settings").num_columns(4).spacing([8.0, 4.0]).show(ui, |ui| {
        ui.label("Simulations").on_hover_text("M, the budget per search; 0 searches until stopped");
        ui.add(egui::DragValue::new(&mut s.simulations).range(0..=1_000_000).speed(10));
        ui.label("c_puct").on_hover_text("PUCT exploration constant");
        ui.add(egui::DragValue::new(&mut s.c_puct).range(0.0..=20.0).speed(0.05));
        ui.end_row();
        ui.label("ε").on_hover_text("Uniform share of the prior (Eq. 1)");
        ui.add(egui::DragValue::new(&mut s.epsilon).range(0.0..=1.0).speed(0.01));
        ui.label("k").on_hover_text("Moves in the greedy part of the prior (Eq. 1)");
        ui.add(egui::DragValue::new(&mut s.prior_top_k).range(1..=256));
        ui.end_row();
        ui.label("τ").on_hover_text("Softmax temperature of the prior");
        ui.add(egui::DragValue::new(&mut s.temperature).range(0.01..=10.0).speed(0.01));
        ui.label("Batch").on_hover_text("b: evaluations per asynchronous batch");
        ui.add(egui::DragValue::new(&mut s.batch).range(1..=256));
        ui.end_row();
        ui.label("Timeout ms").on_hover_text("t0: evaluations not back in time are abandoned");
        ui.add(egui::DragValue::new(&mut s.timeout_ms).range(1..=600_000).speed(10));
        ui.label("World model");
        egui::ComboBox::from_id_salt("world_model")
            .selected_text(if s.learned_world_model { "learned" } else { "rules" })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut s.learned_world_model, false, "rules");
                ui.selectable_value(&mut s.learned_world_model, true, "learned (model plays the moves)");
            });
        ui.end_row();
        ui.label("Virtual counts");
        egui::ComboBox::from_id_salt("virtual_counts")
            .selected_text(if s.dynamic_virtual_counts { "dynamic" } else { "fixed" })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut s.dynamic_virtual_counts, true, "dynamic");
                ui.selectable_value(&mut s.dynamic_virtual_counts, false, "fixed");
            });
        if s.dynamic_virtual_counts {
            ui.label("n_max / n_min");
            ui.horizontal(|ui| {
                ui.add(egui::DragValue::new(&mut s.n_max).range(1..=1024));
                ui.add(egui::DragValue::new(&mut s.n_min).range(0..=1024));
            });
        } else {
            ui.label("n_c");
            ui.add(egui::DragValue::new(&mut s.virtual_count).range(0..=1024));
        }
        ui.end_row();
        ui.label("Style").on_hover_text(
            "How the tree is searched: MAV-MCTS (every node's moves valued in one call, Q* backed up) or lc0's \
             PUCT (one network call per node: its win/draw/loss backed up, its policy as priors, first-play \
             reduction; c_puct and friends at lc0's defaults). Auto: lc0's for a network that values a \
             position (Leela, Maia), MAV-MCTS for the others.",
        );
        let name = |st: SearchStyle| match st {
            SearchStyle::Auto => "auto (by the model)",
            SearchStyle::Mav => "MAV-MCTS",
            SearchStyle::Lc0 => "lc0 PUCT",
        };
        egui::ComboBox::from_id_salt("search_style").selected_text(name(s.style)).show_ui(ui, |ui| {
            for st in [SearchStyle::Auto, SearchStyle::Mav, SearchStyle::Lc0] {
                ui.selectable_value(&mut s.style, st, name(st));
            }
        });
        ui.end_row();
    });
    (s != *current).then_some(s)
}

/// The search panel.
/// `hovered` is set to the root move under the pointer; while the pointer is over a root move or its PV,
/// the panel asks for the PV's preview on the board.
pub fn search_panel_ui(ui: &mut egui::Ui, state: &AppState, hovered: &mut Option<String>) -> Vec<Command> {
    let mut pv_hovered = None;
    let mut out = search_table_ui(ui, state, hovered, &mut pv_hovered);
    // Only this panel's preview (a root move's PV) is ended here; a line another panel previews is its own.
    let mine = state.view.pv_hover.as_ref().filter(|h| h.line.is_none()).map(|h| h.action.clone());
    if pv_hovered != mine {
        out.push(Command::View(ViewCommand::PreviewPv(pv_hovered)));
    }
    out
}

/// The Search / Stop button (enabled when `can_search`), the spinner and the search's counters.
fn search_bar_ui(ui: &mut egui::Ui, a: &AnalysisState, can_search: bool, out: &mut Vec<Command>) {
    // Wrapped: the counters that grow during a search must not widen the panel (and move the board).
    ui.horizontal_wrapped(|ui| {
        let (text, hint) = if a.searching {
            ("Stop", "Stop the search (Space)")
        } else {
            ("Search", "Search this position (Space)")
        };
        if ui.add_enabled(can_search, egui::Button::new(text)).on_hover_text(hint).clicked() {
            out.push(if a.searching {
                Command::Analysis(AnalysisCommand::StopSearch)
            } else {
                Command::Analysis(AnalysisCommand::StartSearch)
            });
        }
        if a.searching {
            ui.spinner();
        }
        if let Some(r) = a.report.as_ref().filter(|r| r.snapshot.totals.root_visits > 1 || a.searching) {
            let t = &r.snapshot.totals;
            ui.label(format!(
                "{} · {} sims · {:.0}/s · {} evaluations · {} in tree",
                r.snapshot.style_name(),
                t.root_visits,
                a.sims_per_second,
                t.stats.model_calls,
                t.tree_size
            ));
        }
    });
}

fn search_table_ui(
    ui: &mut egui::Ui,
    state: &AppState,
    hovered: &mut Option<String>,
    pv_hovered: &mut Option<String>,
) -> Vec<Command> {
    let mut out = Vec::new();
    let a = &state.analysis;
    let ready = matches!(a.model, ModelStatus::Ready(_) | ModelStatus::Loading(_));
    let over = state.current().outcome().is_some();
    search_bar_ui(ui, a, ready && !over, &mut out);
    egui::CollapsingHeader::new("Settings").default_open(false).show(ui, |ui| {
        if let Some(s) = settings_ui(ui, &state.settings.search) {
            out.push(Command::Analysis(AnalysisCommand::SetSearchSettings(s)));
        }
    });
    let Some(report) = &a.report else {
        return out;
    };
    let snap = &report.snapshot;
    if snap.totals.root_visits <= 1 && !a.searching {
        ui.weak(format!("Press Space or Search to run {} from here.", snap.style_name()));
        return out;
    }
    let t = &snap.totals.stats;
    ui.label(format!(
        "elapsed {:.1}s · sims {} · evaluations in the tree {} · cache hits this search {} · \
         hallucinations {} · failed {} · abandoned {} · reused {}",
        report.elapsed.as_secs_f64(),
        t.simulations,
        t.model_calls,
        report.cache_hits,
        t.hallucinations,
        t.failed,
        t.abandoned,
        t.reused_evaluations
    ));
    let root = state.current();
    if let Some(best) = &snap.best {
        let pv = pv_san(root, &snap.pv);
        let value = snap.value.map_or(String::new(), |v| format!(" ({:.1}%)", v * 100.0));
        ui.label(
            RichText::new(format!(
                "Best {}{value}: {}",
                pv.first().map_or(best.as_str(), |s| s),
                pv.join(" ")
            ))
            .strong(),
        );
    }
    // Both ways: long PVs scroll sideways instead of widening the panel (and moving the board); hovering a
    // move (first column) previews its PV on the board.
    egui::ScrollArea::both().id_salt("search_table").max_height(260.0).auto_shrink([false, true]).show(
        ui,
        |ui| {
            egui::Grid::new("search_grid").num_columns(7).striped(true).spacing([8.0, 2.0]).show(ui, |ui| {
                let rules = shown_rules(state);
                for h in ["Move", "Visits", "%", "Q", "Prior", &rules_head(rules), "PV"] {
                    ui.strong(h);
                }
                ui.end_row();
                for m in snap.moves.iter().filter(|m| m.visits > 0 || m.virtual_count > 0).take(40) {
                    let pv = pv_san(root, &m.pv);
                    let r = ui.label(
                        RichText::new(pv.first().cloned().unwrap_or_else(|| m.action.clone())).monospace(),
                    );
                    if r.hovered() {
                        *hovered = Some(m.action.clone());
                        *pv_hovered = Some(m.action.clone());
                    }
                    stats_cells_ui(ui, m, rules);
                    let pv_cell = ui
                        .label(
                            RichText::new(pv.iter().skip(1).take(8).cloned().collect::<Vec<_>>().join(" "))
                                .weak(),
                        )
                        .on_hover_text("The board previews this line");
                    if pv_cell.hovered() {
                        *pv_hovered = Some(m.action.clone());
                    }
                    ui.end_row();
                }
            });
        },
    );
    out
}
