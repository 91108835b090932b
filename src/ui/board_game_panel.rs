//! The Connect Four / Hex screen: the board in the middle and, beside it, the game (whose move, the
//! result, the moves with a cursor) and the solver's value of every legal move.

use eframe::egui::{self, RichText};

use super::connect_four_board::{ColumnValue, ConnectFourView, connect_four_board_ui};
use super::hex_board::{CellValue, HexView, hex_board_ui};
use crate::app::board_game::{BoardGame, BoardState, player_name};
use crate::app::board_model::{BoardModelStatus, BoardModelView, BoardSearchRequest};
use crate::app::command::{AnalysisCommand, DocCommand, ViewCommand};
use crate::app::command::{BoardMove, Command, Navigate};
use crate::app::state::AppState;
use crate::engine::SearchReport;
use crate::engine::oracle::{OracleMethod, OracleReport};
use crate::game::Outcome;
use crate::game::connect_four::Column;
use crate::game::hex::Cell;
use crate::mav::scoring::Scoring;
use crate::ui::internal_search_panel::{internal_controls_ui, internal_result_ui};

/// A move's value as the board shows it.
struct BoardValue {
    action: String,
    win_prob: f64,
    label: String,
    best: bool,
}

/// The solver's values; without them (solver off, or no move solved yet) the model's, by the scoring chosen.
fn board_values(state: &AppState) -> Vec<BoardValue> {
    if let Some(r) = state
        .board_analysis
        .oracle
        .report
        .as_ref()
        .filter(|r| state.settings.show_oracle && !r.moves.is_empty())
    {
        let best = r.best().map(|m| m.action.clone());
        return r
            .moves
            .iter()
            .map(|m| BoardValue {
                action: m.action.clone(),
                win_prob: m.win_prob,
                label: m.label.clone(),
                best: best.as_ref() == Some(&m.action),
            })
            .collect();
    }
    let Some(r) = &state.board_analysis.model.view.report else { return Vec::new() };
    let scoring = state.settings.scoring;
    r.snapshot
        .moves
        .iter()
        .filter_map(|m| {
            let v = m.value_or_model(scoring)?;
            Some(BoardValue {
                action: m.action.clone(),
                win_prob: v,
                label: format!("model {:.0}%", v * 100.0),
                best: r.snapshot.best.as_deref() == Some(m.action.as_str()),
            })
        })
        .collect()
}

/// The board of the game, with the solver's values on it (the model's when the solver has none);
/// returns the move clicked.
pub fn board_game_board_ui(ui: &mut egui::Ui, state: &AppState, game: &BoardGame) -> Vec<Command> {
    let values = board_values(state);
    let last = game.cursor().checked_sub(1).and_then(|i| game.moves().get(i));
    let clicked = match game.current() {
        BoardState::ConnectFour(state) => {
            let values: Vec<ColumnValue> = values
                .iter()
                .map(|m| ColumnValue {
                    action: m.action.clone(),
                    win_prob: m.win_prob,
                    label: m.label.clone(),
                    best: m.best,
                })
                .collect();
            let last_move = last.and_then(|m| m.parse::<u32>().ok()).and_then(Column::from_number);
            connect_four_board_ui(ui, &ConnectFourView { state, last_move, values: &values })
        }
        BoardState::Hex(state) => {
            let values: Vec<CellValue> = values
                .iter()
                .map(|m| CellValue { action: m.action.clone(), win_prob: m.win_prob, best: m.best })
                .collect();
            // After a swap the last stone is the mirrored first one.
            let last_move = last.and_then(|m| Cell::parse(m)).or_else(|| {
                (last.map(String::as_str) == Some("swap"))
                    .then(|| game.moves().first().and_then(|m| Cell::parse(m)).map(Cell::mirrored))
                    .flatten()
            });
            hex_board_ui(ui, &HexView { state, last_move, values: &values })
        }
    };
    clicked.map(|m| Command::Doc(DocCommand::PlayMove(BoardMove::Notation(m)))).into_iter().collect()
}

fn result_text(game: &BoardGame, outcome: Outcome) -> String {
    let kind = game.current().kind();
    match outcome {
        Outcome::Win { winner, .. } => format!("{} wins", player_name(kind, winner)),
        Outcome::Draw { .. } => "Draw: the board is full".to_owned(),
    }
}

/// The side panel: game, moves, solver.
pub fn board_game_panel_ui(ui: &mut egui::Ui, state: &AppState, game: &BoardGame) -> Vec<Command> {
    let mut out = Vec::new();
    ui.heading(game.choice.label());
    let current = game.current();
    match current.outcome() {
        Some(o) => ui.label(RichText::new(result_text(game, o)).strong()),
        None => ui.label(format!("{} to move", player_name(current.kind(), current.to_move()))),
    };
    ui.horizontal(|ui| {
        for (text, nav, tip) in [
            ("|<", Navigate::Start, "Start (Home)"),
            ("<", Navigate::Back, "Back (left arrow)"),
            (">", Navigate::Forward, "Forward (right arrow)"),
            (">|", Navigate::End, "End (End)"),
        ] {
            if ui.button(text).on_hover_text(tip).clicked() {
                out.push(Command::Doc(DocCommand::Navigate(nav)));
            }
        }
        if ui.button("New game").clicked() {
            out.push(Command::Doc(DocCommand::NewGame));
        }
        if ui.button("Copy record").on_hover_text("Connect Four: the move string; Hex: SGF").clicked() {
            out.push(Command::Doc(DocCommand::CopyRecord));
        }
    });
    ui.separator();
    ui.label(RichText::new("Moves").strong());
    egui::ScrollArea::vertical().id_salt("board_game_moves").max_height(140.0).show(ui, |ui| {
        ui.horizontal_wrapped(|ui| {
            if game.moves().is_empty() {
                ui.weak("No moves yet: click the board.");
            }
            for (i, m) in game.moves().iter().enumerate() {
                let text = format!("{}. {m}", i + 1);
                if ui.selectable_label(game.cursor() == i + 1, text).clicked() {
                    out.push(Command::Doc(DocCommand::Navigate(Navigate::To(i + 1))));
                }
            }
        });
    });
    ui.separator();
    model_section_ui(ui, state, current.outcome().is_some(), &mut out);
    internal_section_ui(ui, &state.board_analysis, &current.text(), current.outcome().is_some(), &mut out);
    if state.board_analysis.model.package_dir().is_some() {
        egui::CollapsingHeader::new(RichText::new("Inside the model").strong())
            .id_salt("board_inside")
            .default_open(false)
            .show(ui, |ui| {
                out.extend(crate::ui::inside_panel::inside_panel_ui(
                    ui,
                    &state.analysis.inside,
                    state.settings.scoring,
                ));
            });
    }
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Solver").strong());
        let mut on = state.settings.show_oracle;
        if ui
            .checkbox(&mut on, "on")
            .on_hover_text("Value every legal move with the exact solver or MCTS")
            .changed()
        {
            out.push(Command::View(ViewCommand::ToggleOracle));
        }
    });
    if let Some(e) = &state.board_analysis.oracle.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    if !state.settings.show_oracle {
        ui.weak("Off.");
        return out;
    }
    if current.outcome().is_some() {
        ui.weak("The game is over.");
        return out;
    }
    match &state.board_analysis.oracle.report {
        None => {
            ui.weak("Starting…");
        }
        Some(r) => oracle_table_ui(ui, r, &mut out),
    }
    if let BoardState::ConnectFour(s) = current
        && s.plies() < 8
        && state.board_analysis.oracle.report.as_ref().is_some_and(|r| !r.done)
    {
        ui.weak(
            "Early positions take the exact solver minutes per move on a small machine (the empty board: \
             several minutes per column); it keeps working while you look, and stops when you move on.",
        );
    }
    ui.add_space(6.0);
    ui.weak("Values are for the player making the move.");
    out
}

/// The model's part of the panel: its status, MCTS start/stop, every legal move with its max and mean
/// value (and visits once searched), and all moves' value distributions as a heatmap.
fn model_section_ui(ui: &mut egui::Ui, state: &AppState, over: bool, out: &mut Vec<Command>) {
    let view = &state.board_analysis.model.view;
    ui.horizontal(|ui| {
        ui.label(RichText::new("Model").strong());
        match &view.status {
            BoardModelStatus::None => ui.weak("not started"),
            BoardModelStatus::Loading(name) => ui.weak(format!("{name}: loading…")),
            BoardModelStatus::Ready(name) => ui.label(name.as_str()),
            BoardModelStatus::Failed(_) => ui.weak("unavailable"),
        };
    });
    if let BoardModelStatus::Failed(why) = &view.status {
        ui.colored_label(ui.visuals().error_fg_color, why);
        return;
    }
    if matches!(view.status, BoardModelStatus::None) {
        ui.weak("The model starts with the analysis engine (not in this window).");
        return;
    }
    if over {
        ui.weak("The game is over.");
        return;
    }
    ui.horizontal(|ui| {
        if view.searching {
            if ui.button("Stop").on_hover_text("Stop the search").clicked() {
                out.push(Command::Analysis(AnalysisCommand::BoardSearch(BoardSearchRequest::Stop)));
            }
        } else {
            let sims = state.settings.search.simulations;
            let text =
                if sims == 0 { "Run MCTS".to_owned() } else { format!("Run MCTS ({sims} simulations)") };
            if ui
                .button(text)
                .on_hover_text("PUCT search over model calls (the search settings of the chess board apply)")
                .clicked()
            {
                out.push(Command::Analysis(AnalysisCommand::BoardSearch(BoardSearchRequest::Start)));
            }
        }
        if let Some(r) = &view.report
            && r.simulations > 1
        {
            ui.weak(format!("{} simulations, {:.1} s", r.simulations, r.elapsed.as_secs_f64()));
        }
    });
    if let Some(e) = &view.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    match &view.report {
        None => {
            ui.weak(if view.evaluating { "Valuing the moves…" } else { "No values yet." });
        }
        Some(r) => model_table_ui(ui, r, view, super::search_panel::shown_rules(state), out),
    }
}

/// Internal search with the board's model (collapsed until opened): breadth, depth, *Run*, the explicit
/// minimax tree and the model's own trace, as on the chess board.
fn internal_section_ui(
    ui: &mut egui::Ui,
    board_analysis: &crate::app::board_analysis::BoardAnalysis,
    position: &str,
    over: bool,
    out: &mut Vec<Command>,
) {
    let view = &board_analysis.model.view;
    if !matches!(view.status, BoardModelStatus::Ready(_) | BoardModelStatus::Loading(_)) {
        return;
    }
    egui::CollapsingHeader::new(RichText::new("Internal search").strong())
        .id_salt("board_internal_search")
        .default_open(view.internal.running || view.internal.result.is_some())
        .show(ui, |ui| {
            let ready = matches!(view.status, BoardModelStatus::Ready(_)) && !over;
            if let Some((breadth, depth, decoding)) =
                internal_controls_ui(ui, "board", ready, view.internal.running)
            {
                out.push(Command::Analysis(AnalysisCommand::BoardSearch(BoardSearchRequest::Internal {
                    breadth,
                    depth,
                    decoding,
                })));
            }
            // Clicking a row plays its line; the board preview is chess's only.
            let mut input = crate::ui::internal_search_panel::LineInput::default();
            internal_result_ui(ui, position, view.internal.result.as_ref(), &mut input);
            input.hovered = None;
            crate::ui::internal_search_panel::line_commands(input, None, out);
        });
}

/// The model's moves, most visited first (then by the chosen rule's value); the best move marked; the value
/// under the chosen rule and the one beside it.
fn model_table_ui(
    ui: &mut egui::Ui,
    r: &SearchReport,
    view: &BoardModelView,
    rules: [Scoring; 2],
    out: &mut Vec<Command>,
) {
    let snap = &r.snapshot;
    let mut moves: Vec<_> = snap.moves.iter().collect();
    let first = |m: &crate::search::mcts::MoveStats| m.value(rules[0]);
    let second = |m: &crate::search::mcts::MoveStats| m.value(rules[1]);
    let value = |m: &crate::search::mcts::MoveStats| first(m).unwrap_or(0.0);
    moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(value(b).total_cmp(&value(a))));
    // Each scoring's top value and the moves that reach it (the mode often ties on these games).
    let top = |f: &dyn Fn(&crate::search::mcts::MoveStats) -> Option<f64>| -> Option<(f64, Vec<&str>)> {
        let best = snap.moves.iter().filter_map(f).reduce(f64::max)?;
        let at: Vec<&str> = snap
            .moves
            .iter()
            .filter(|m| f(m).is_some_and(|v| v >= best - 1e-12))
            .map(|m| m.action.as_str())
            .collect();
        Some((best, at))
    };
    let describe = |name: &str, (v, at): &(f64, Vec<&str>)| match at.as_slice() {
        [one] => format!("{name} scoring prefers {one}"),
        _ => format!("{name} scoring ties {} moves at {:.1} %", at.len(), v * 100.0),
    };
    if let (Some(a), Some(b)) = (top(&first), top(&second))
        && a.1 != b.1
    {
        ui.label(format!("{}; {}.", describe(&rules[0].title(), &a), describe(&rules[1].title(), &b)));
    }
    let searched = r.simulations > 1 || view.searching;
    egui::ScrollArea::vertical().id_salt("board_game_model").max_height(220.0).show(ui, |ui| {
        egui::Grid::new("board_game_model_grid").striped(true).num_columns(5).show(ui, |ui| {
            ui.strong("Move");
            ui.strong(format!("{} %", rules[0].title()));
            ui.strong(format!("{} %", rules[1].title()));
            ui.strong(if searched { "Visits" } else { "" });
            ui.strong(if searched { "Q %" } else { "" });
            ui.end_row();
            for m in &moves {
                let best = snap.best.as_deref() == Some(m.action.as_str());
                let text = if best { format!("{} (best)", m.action) } else { m.action.clone() };
                if ui.button(RichText::new(text).monospace()).on_hover_text("Play this move").clicked() {
                    out.push(Command::Doc(DocCommand::PlayMove(BoardMove::Notation(m.action.clone()))));
                }
                let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.1}", v * 100.0));
                ui.label(pct(first(m)));
                ui.label(pct(second(m)));
                ui.label(if searched { m.visits.to_string() } else { String::new() });
                ui.label(if searched { pct(m.q) } else { String::new() });
                ui.end_row();
            }
        });
    });
    let rows: Vec<(&String, &[f64])> =
        moves.iter().filter_map(|m| m.distribution.as_deref().map(|d| (&m.action, d))).collect();
    if !rows.is_empty() {
        ui.add_space(4.0);
        ui.weak("Value distributions (thick: mode, thin: mean; 0 to 100 % win)");
        let labels: Vec<String> = rows.iter().map(|(a, _)| (*a).clone()).collect();
        let dists: Vec<&[f64]> = rows.iter().map(|(_, d)| *d).collect();
        egui::ScrollArea::vertical().id_salt("board_game_model_heatmap").max_height(200.0).show(ui, |ui| {
            super::distribution::heatmap_ui(ui, &labels, &dists, 12.0);
        });
    }
}

fn oracle_table_ui(ui: &mut egui::Ui, r: &OracleReport, out: &mut Vec<Command>) {
    let method = match r.method {
        OracleMethod::Exact => "exact solver".to_owned(),
        OracleMethod::Mcts { playouts } => format!("MCTS, {playouts} random playouts"),
    };
    let status = if r.done { "done" } else { "working" };
    ui.label(format!(
        "{method}: {}/{} moves, {status}, {:.1} s, {} {}",
        r.moves.len(),
        r.legal,
        r.elapsed.as_secs_f64(),
        r.work,
        if matches!(r.method, OracleMethod::Exact) { "positions" } else { "playouts" }
    ));
    if !r.done {
        ui.add(egui::ProgressBar::new(if r.legal == 0 {
            0.0
        } else {
            r.moves.len() as f32 / r.legal as f32
        }));
    }
    let mut sorted: Vec<_> = r.moves.iter().collect();
    sorted.sort_by_key(|m| std::cmp::Reverse(m.rank));
    let best = r.best().map(|m| m.action.clone());
    egui::ScrollArea::vertical().id_salt("board_game_oracle").show(ui, |ui| {
        egui::Grid::new("board_game_oracle_grid").striped(true).num_columns(4).show(ui, |ui| {
            ui.strong("Move");
            ui.strong("Win %");
            ui.strong("Value");
            ui.strong("Bucket");
            ui.end_row();
            for m in sorted {
                let text = if best.as_ref() == Some(&m.action) {
                    format!("{} (best)", m.action)
                } else {
                    m.action.clone()
                };
                if ui.button(RichText::new(text).monospace()).on_hover_text("Play this move").clicked() {
                    out.push(Command::Doc(DocCommand::PlayMove(BoardMove::Notation(m.action.clone()))));
                }
                ui.label(format!("{:.1}", m.win_prob * 100.0));
                ui.label(&m.label);
                ui.label(m.bucket.to_string());
                ui.end_row();
            }
        });
    });
}
