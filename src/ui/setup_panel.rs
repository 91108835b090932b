//! Position setup: FEN, the standard start, Chess960 by number.

use eframe::egui;

use crate::app::command::Command;
use crate::app::command::{DocCommand, ViewCommand};
use crate::app::state::AppState;
use crate::game::chess::{CHESS960_POSITIONS, STANDARD_CHESS960};
use crate::ui::UiState;

/// Why the text typed is not a Chess960 position number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Chess960NumberError {
    /// A number past the last position.
    #[error(
        "{0} is not a Chess960 position number: use 0 to 959 ({STANDARD_CHESS960} is the standard array)"
    )]
    OutOfRange(u32),
    /// Nothing typed.
    #[error("Type a Chess960 position number from 0 to 959")]
    Empty,
    /// Not a whole number.
    #[error("'{0}' is not a number: type a Chess960 position number from 0 to 959")]
    NotANumber(String),
}

/// Reads a Chess960 number typed by the user.
pub fn parse_chess960_number(text: &str) -> Result<u32, Chess960NumberError> {
    let t = text.trim();
    match t.parse::<u32>() {
        Ok(n) if n < CHESS960_POSITIONS => Ok(n),
        Ok(n) => Err(Chess960NumberError::OutOfRange(n)),
        Err(_) if t.is_empty() => Err(Chess960NumberError::Empty),
        Err(_) => Err(Chess960NumberError::NotANumber(t.to_owned())),
    }
}

/// The setup panel.
pub fn setup_panel_ui(ui: &mut egui::Ui, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = Vec::new();
    ui.heading("Position");
    ui.add_space(4.0);
    let fen_label = ui.label("FEN");
    let fen_edit = ui.add(
        egui::TextEdit::multiline(&mut ui_state.fen_input)
            .desired_rows(2)
            .desired_width(f32::INFINITY)
            .hint_text("Paste a FEN here")
            .font(egui::TextStyle::Monospace),
    );
    let fen_edit = fen_edit.labelled_by(fen_label.id);
    let enter = fen_edit.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter) && !i.modifiers.shift);
    ui.horizontal(|ui| {
        if ui.button("Set position").clicked() || enter {
            out.push(Command::Doc(DocCommand::LoadFen(ui_state.fen_input.trim().to_owned())));
        }
        if ui.button("Current FEN").on_hover_text("Put the board's FEN into the field").clicked() {
            ui_state.fen_input = state.current().fen();
        }
    });
    ui.add_space(8.0);
    if ui.button("Standard start position").clicked() {
        // Chess on the board (a Connect Four or Hex game there is left), then a new chess game.
        out.push(Command::Doc(DocCommand::SetGame(crate::app::board_game::GameChoice::Chess)));
        out.push(Command::Doc(DocCommand::NewGame));
    }
    ui.add_space(8.0);
    ui.horizontal(|ui| {
        let label = ui.label("Chess960 number");
        ui.add(
            egui::TextEdit::singleline(&mut ui_state.chess960_input).desired_width(50.0).hint_text("0-959"),
        )
        .labelled_by(label.id);
    });
    ui.horizontal(|ui| {
        if ui.button("Set Chess960").clicked() {
            match parse_chess960_number(&ui_state.chess960_input) {
                Ok(n) => out.push(Command::Doc(DocCommand::NewChess960(n))),
                Err(e) => out.push(Command::View(ViewCommand::ShowError(e.to_string()))),
            }
        }
        if ui.button("Random Chess960").clicked() {
            let n = rand::random_range(0..CHESS960_POSITIONS);
            ui_state.chess960_input = n.to_string();
            out.push(Command::Doc(DocCommand::NewChess960(n)));
        }
    });
    ui.add_space(8.0);
    ui.separator();
    ui.label("Board FEN");
    ui.add(egui::Label::new(egui::RichText::new(state.current().fen()).monospace().small()).wrap());
    if ui.button("Copy FEN").clicked() {
        out.push(Command::Doc(DocCommand::CopyFen));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chess960_numbers() {
        assert_eq!(parse_chess960_number(" 518 "), Ok(518));
        assert_eq!(parse_chess960_number("0"), Ok(0));
        assert_eq!(parse_chess960_number("960"), Err(Chess960NumberError::OutOfRange(960)));
        assert!(parse_chess960_number("960").expect_err("range").to_string().contains("use 0 to 959"));
        assert_eq!(parse_chess960_number(" abc"), Err(Chess960NumberError::NotANumber("abc".into())));
        assert_eq!(parse_chess960_number(" "), Err(Chess960NumberError::Empty));
    }
}
