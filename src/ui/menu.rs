//! The menu bar: File, Game, Position, View, Engine, Help.

use eframe::egui;

use crate::app::board_game::GameChoice;
use crate::app::command::Command;
use crate::app::command::{AnalysisCommand, DocCommand, FileCommand, ViewCommand};
use crate::app::file_dialog::FileDialogKind;
use crate::app::settings::ThemeChoice;
use crate::app::state::{AppState, Dialog};
use crate::game::hex::DEFAULT_SIZE;
use crate::mav::scoring::Scoring;

/// The Game menu: chess, Connect Four, Hex at each size (with or without the swap rule).
fn game_menu_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    if ui.button("Play against the model...").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Play))));
    }
    ui.separator();
    let now = state.settings.game;
    for choice in [GameChoice::Chess, GameChoice::ConnectFour] {
        if ui.radio(now == choice, choice.label()).clicked() {
            out.push(Command::Doc(DocCommand::SetGame(choice)));
        }
    }
    let swap = matches!(now, GameChoice::Hex { swap: true, .. });
    ui.menu_button("Hex", |ui| {
        for size in [5, 7, 9, 11, 13] {
            let choice = GameChoice::Hex { size, swap };
            let text = if size == DEFAULT_SIZE {
                format!("{size}×{size} (the model size)")
            } else {
                format!("{size}×{size}")
            };
            if ui.radio(now == choice, text).clicked() {
                out.push(Command::Doc(DocCommand::SetGame(choice)));
            }
        }
        ui.separator();
        let mut on = swap;
        if ui.checkbox(&mut on, "Swap rule").clicked() {
            let size = match now {
                GameChoice::Hex { size, .. } => size,
                _ => DEFAULT_SIZE,
            };
            out.push(Command::Doc(DocCommand::SetGame(GameChoice::Hex { size, swap: on })));
        }
    });
    if state.doc.board_game.is_some() {
        ui.separator();
        if ui.button("New game").clicked() {
            out.push(Command::Doc(DocCommand::NewGame));
        }
        if ui.button("Copy record").clicked() {
            out.push(Command::Doc(DocCommand::CopyRecord));
        }
    }
    out
}

/// A menu item's hover text: the keys of its shortcut, when it has one.
fn with_keys(response: egui::Response, command: &Command) -> egui::Response {
    match super::shortcuts::keys_for(command) {
        Some(keys) => response.on_hover_text(keys),
        None => response,
    }
}

/// The menu bar.
pub fn menu_bar_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| out.extend(file_menu_ui(ui, state)));
        ui.menu_button("Game", |ui| out.extend(game_menu_ui(ui, state)));
        ui.menu_button("Position", |ui| out.extend(position_menu_ui(ui, state.doc.board_game.is_none())));
        ui.menu_button("View", |ui| out.extend(view_menu_ui(ui, &state.settings)));
        ui.menu_button("Engine", |ui| out.extend(engine_menu_ui(ui, &state.analysis, &state.compare)));
        ui.menu_button("Help", |ui| out.extend(help_menu_ui(ui)));
    });
    out
}

/// The File menu.
fn file_menu_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let s = &state.settings;
    let open = Command::File(FileCommand::OpenFileDialog);
    if with_keys(ui.button("Open PGN..."), &open).clicked() {
        out.push(open);
    }
    if ui.button("Open by path...").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Path(FileDialogKind::Open)))));
    }
    if ui.add_enabled(state.files.games.is_some(), egui::Button::new("Game list...")).clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::GameList))));
    }
    if ui.button("Paste FEN or PGN...").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Paste))));
    }
    ui.separator();
    let save = Command::File(FileCommand::SaveFileDialog);
    if with_keys(ui.button("Save line as PGN..."), &save).clicked() {
        out.push(save);
    }
    if ui.button("Save to path...").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Path(FileDialogKind::Save)))));
    }
    ui.separator();
    ui.menu_button("Recent files", |ui| {
        if s.recent_files.is_empty() {
            ui.label("No recent files");
        }
        for path in &s.recent_files {
            if ui.button(path.display().to_string()).clicked() {
                out.push(Command::File(FileCommand::OpenPath(path.clone())));
            }
        }
    });
    out
}

/// The Position menu.
fn position_menu_ui(ui: &mut egui::Ui, chess_on_board: bool) -> Vec<Command> {
    let mut out = Vec::new();
    if ui.button("Standard start").clicked() {
        // Chess on the board (a Connect Four or Hex game there is left), then a new chess game.
        out.push(Command::Doc(DocCommand::SetGame(crate::app::board_game::GameChoice::Chess)));
        out.push(Command::Doc(DocCommand::NewGame));
    }
    if ui.button("Copy FEN").clicked() {
        out.push(Command::Doc(DocCommand::CopyFen));
    }
    // With Connect Four or Hex on the board, the Game menu copies its record.
    if chess_on_board && ui.button("Copy PGN").clicked() {
        out.push(Command::Doc(DocCommand::CopyRecord));
    }
    out
}

/// The View menu.
fn view_menu_ui(ui: &mut egui::Ui, settings: &crate::app::settings::Settings) -> Vec<Command> {
    let mut out = Vec::new();
    let s = &settings;
    if ui.button("Flip board (F)").clicked() {
        out.push(Command::View(ViewCommand::Flip));
    }
    let mut toggle = |ui: &mut egui::Ui, on: bool, label: &str, cmd: Command| {
        let mut v = on;
        if ui.checkbox(&mut v, label).changed() {
            out.push(cmd);
        }
    };
    toggle(ui, s.show_coordinates, "Coordinates", Command::View(ViewCommand::ToggleCoordinates));
    toggle(ui, s.show_legal_moves, "Legal-move dots", Command::View(ViewCommand::ToggleLegalMoves));
    toggle(ui, s.show_moves_panel, "Moves panel", Command::View(ViewCommand::ToggleMovesPanel));
    toggle(ui, s.show_setup_panel, "Setup panel", Command::View(ViewCommand::ToggleSetupPanel));
    toggle(ui, s.show_analysis_panel, "Analysis panel", Command::View(ViewCommand::ToggleAnalysisPanel));
    if ui
        .add_enabled(s.panel_layout.is_some(), egui::Button::new("Reset analysis panel layout"))
        .on_hover_text("Put the analysis panel's tabs and panes back where they start")
        .clicked()
    {
        out.push(Command::View(ViewCommand::SetPanelLayout(None)));
    }
    ui.separator();
    ui.label("Theme");
    for (t, name) in [(ThemeChoice::Dark, "Dark"), (ThemeChoice::Light, "Light")] {
        if ui.radio(s.theme == t, name).clicked() {
            out.push(Command::View(ViewCommand::SetTheme(t)));
        }
    }
    ui.separator();
    ui.label("Value scoring");
    for c in Scoring::ALL {
        if ui.radio(s.scoring == c, c.label()).clicked() {
            out.push(Command::Analysis(AnalysisCommand::SetScoring(c)));
        }
    }
    out
}

/// The Engine menu.
fn engine_menu_ui(
    ui: &mut egui::Ui,
    analysis: &crate::app::analysis::AnalysisState,
    compare: &crate::app::compare_model::CompareModel,
) -> Vec<Command> {
    use crate::app::compare_model::CompareCommand;
    let mut out = Vec::new();
    let (text, cmd) = if analysis.searching {
        ("Stop search (Space)", Command::Analysis(AnalysisCommand::StopSearch))
    } else {
        ("Start search (Space)", Command::Analysis(AnalysisCommand::StartSearch))
    };
    if ui.button(text).clicked() {
        out.push(cmd);
    }
    ui.separator();
    if ui.button("Load model folder...").clicked() {
        out.push(Command::Analysis(AnalysisCommand::ChooseModelFolder));
    }
    if ui.button("Load model by path...").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Path(FileDialogKind::ModelFolder)))));
    }
    if ui.button("Shipped default model").clicked() {
        out.push(Command::Analysis(AnalysisCommand::LoadDefaultModel));
    }
    ui.separator();
    let hint = "Model B: a second package whose values, ranks and distributions the action-values panel sets \
                beside the loaded model's";
    if ui.button("Compare with model folder...").on_hover_text(hint).clicked() {
        out.push(Command::Compare(CompareCommand::ChooseFolder));
    }
    if ui.button("Compare with model by path...").on_hover_text(hint).clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Path(FileDialogKind::CompareFolder)))));
    }
    let shipped = crate::app::compare_model::shipped_choices();
    if !shipped.is_empty() {
        ui.menu_button("Compare with", |ui| {
            for (name, dir) in shipped {
                if ui.button(name.as_str()).on_hover_text(hint).clicked() {
                    out.push(Command::Compare(CompareCommand::Open(dir.clone())));
                }
            }
        });
    }
    if compare.is_open() && ui.button("Stop comparing").clicked() {
        out.push(Command::Compare(CompareCommand::Close));
    }
    out
}

/// The Help menu.
fn help_menu_ui(ui: &mut egui::Ui) -> Vec<Command> {
    let mut out = Vec::new();
    if ui.button("About and keys").clicked() {
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::About))));
    }
    if let Some(dir) = crate::logging::log_dir() {
        let button = ui.button("Open log folder").on_hover_text(format!(
            "{}: the log ({}) and crash reports",
            dir.display(),
            crate::logging::LOG_FILE
        ));
        if button.clicked() {
            match std::fs::create_dir_all(&dir) {
                Ok(()) => ui.ctx().open_url(egui::OpenUrl::new_tab(format!("file://{}", dir.display()))),
                Err(e) => out.push(Command::View(ViewCommand::ShowError(format!("{}: {e}", dir.display())))),
            }
        }
    }
    out
}
