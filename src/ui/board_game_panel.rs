//! The Connect Four / Hex screen: the board in the middle and, beside it, the game (whose move, the
//! result, the moves with a cursor) and the solver's value of every legal move.

use eframe::egui::{self, RichText};

use super::connect_four_board::{ColumnValue, ConnectFourView, connect_four_board_ui};
use super::hex_board::{CellValue, HexView, hex_board_ui};
use crate::app::board_game::{BoardGame, BoardState, player_name};
use crate::app::command::{Command, Navigate};
use crate::app::state::AppState;
use crate::engine::oracle::{OracleMethod, OracleReport};
use crate::game::Outcome;
use crate::game::connect_four::Column;
use crate::game::hex::Cell;

/// The board of the game, with the solver's values on it; returns the move clicked.
pub fn board_game_board_ui(
    ui: &mut egui::Ui,
    game: &BoardGame,
    report: Option<&OracleReport>,
) -> Vec<Command> {
    let best = report.and_then(OracleReport::best).map(|m| m.action.clone());
    let last = game.cursor().checked_sub(1).and_then(|i| game.moves().get(i));
    let clicked = match game.current() {
        BoardState::ConnectFour(state) => {
            let values: Vec<ColumnValue> = report
                .map(|r| {
                    r.moves
                        .iter()
                        .map(|m| ColumnValue {
                            action: m.action.clone(),
                            win_prob: m.win_prob,
                            label: m.label.clone(),
                            best: best.as_ref() == Some(&m.action),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let last_move = last.and_then(|m| m.parse::<u32>().ok()).and_then(Column::from_number);
            connect_four_board_ui(ui, &ConnectFourView { state, last_move, values: &values })
        }
        BoardState::Hex(state) => {
            let values: Vec<CellValue> = report
                .map(|r| {
                    r.moves
                        .iter()
                        .map(|m| CellValue {
                            action: m.action.clone(),
                            win_prob: m.win_prob,
                            best: best.as_ref() == Some(&m.action),
                        })
                        .collect()
                })
                .unwrap_or_default();
            // After a swap the last stone is the mirrored first one.
            let last_move = last.and_then(|m| Cell::parse(m)).or_else(|| {
                (last.map(String::as_str) == Some("swap"))
                    .then(|| game.moves().first().and_then(|m| Cell::parse(m)).map(Cell::mirrored))
                    .flatten()
            });
            hex_board_ui(ui, &HexView { state, last_move, values: &values })
        }
    };
    clicked.map(Command::PlayBoardMove).into_iter().collect()
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
                out.push(Command::Navigate(nav));
            }
        }
        if ui.button("New game").clicked() {
            out.push(Command::NewBoardGame);
        }
        if ui.button("Copy record").on_hover_text("Connect Four: the move string; Hex: SGF").clicked() {
            out.push(Command::CopyBoardRecord);
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
                    out.push(Command::Navigate(Navigate::To(i + 1)));
                }
            }
        });
    });
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Solver").strong());
        let mut on = state.settings.show_oracle;
        if ui
            .checkbox(&mut on, "on")
            .on_hover_text("Value every legal move with the exact solver or MCTS")
            .changed()
        {
            out.push(Command::ToggleOracle);
        }
    });
    if let Some(e) = &state.oracle.error {
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
    match &state.oracle.report {
        None => {
            ui.weak("Starting…");
        }
        Some(r) => oracle_table_ui(ui, r, &mut out),
    }
    if let BoardState::ConnectFour(s) = current
        && s.plies() < 8
        && state.oracle.report.as_ref().is_some_and(|r| !r.done)
    {
        ui.weak(
            "Early positions take the exact solver minutes per move on a small machine (the empty board: \
             several minutes per column); it keeps working while you look, and stops when you move on.",
        );
    }
    ui.add_space(6.0);
    ui.weak(
        "Values are for the player making the move. The model-based analysis (values, MCTS) of these games \
         needs a model trained on them: the shipped ones know chess only.",
    );
    out
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
                    out.push(Command::PlayBoardMove(m.action.clone()));
                }
                ui.label(format!("{:.1}", m.win_prob * 100.0));
                ui.label(&m.label);
                ui.label(m.bucket.to_string());
                ui.end_row();
            }
        });
    });
}
