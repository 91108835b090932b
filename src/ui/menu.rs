//! The menu bar: File, Game, Position, View, Engine, Help.

use eframe::egui;

use crate::app::board_game::GameChoice;
use crate::app::command::Command;
use crate::app::file_dialog::FileDialogKind;
use crate::app::settings::{ScoringChoice, ThemeChoice};
use crate::app::state::{AppState, Dialog};
use crate::game::hex::DEFAULT_SIZE;

/// The Game menu: chess, Connect Four, Hex at each size (with or without the swap rule).
fn game_menu_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    if ui.button("Play against the model...").clicked() {
        out.push(Command::ShowDialog(Some(Dialog::Play)));
    }
    ui.separator();
    let now = state.settings.game;
    for choice in [GameChoice::Chess, GameChoice::ConnectFour] {
        if ui.radio(now == choice, choice.label()).clicked() {
            out.push(Command::SetGame(choice));
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
                out.push(Command::SetGame(choice));
            }
        }
        ui.separator();
        let mut on = swap;
        if ui.checkbox(&mut on, "Swap rule").clicked() {
            let size = match now {
                GameChoice::Hex { size, .. } => size,
                _ => DEFAULT_SIZE,
            };
            out.push(Command::SetGame(GameChoice::Hex { size, swap: on }));
        }
    });
    if state.board_game.is_some() {
        ui.separator();
        if ui.button("New game").clicked() {
            out.push(Command::NewBoardGame);
        }
        if ui.button("Copy record").clicked() {
            out.push(Command::CopyBoardRecord);
        }
    }
    out
}

/// The menu bar.
pub fn menu_bar_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let s = &state.settings;
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open PGN...").on_hover_text("Ctrl+O").clicked() {
                out.push(Command::OpenFileDialog);
            }
            if ui.button("Open by path...").clicked() {
                out.push(Command::ShowDialog(Some(Dialog::Path(FileDialogKind::Open))));
            }
            if ui.add_enabled(state.games.is_some(), egui::Button::new("Game list...")).clicked() {
                out.push(Command::ShowDialog(Some(Dialog::GameList)));
            }
            if ui.button("Paste FEN or PGN...").clicked() {
                out.push(Command::ShowDialog(Some(Dialog::Paste)));
            }
            ui.separator();
            if ui.button("Save line as PGN...").on_hover_text("Ctrl+S").clicked() {
                out.push(Command::SaveFileDialog);
            }
            if ui.button("Save to path...").clicked() {
                out.push(Command::ShowDialog(Some(Dialog::Path(FileDialogKind::Save))));
            }
            ui.separator();
            ui.menu_button("Recent files", |ui| {
                if s.recent_files.is_empty() {
                    ui.label("No recent files");
                }
                for path in &s.recent_files {
                    if ui.button(path.display().to_string()).clicked() {
                        out.push(Command::OpenPath(path.clone()));
                    }
                }
            });
        });
        ui.menu_button("Game", |ui| out.extend(game_menu_ui(ui, state)));
        ui.menu_button("Position", |ui| {
            if ui.button("Standard start").clicked() {
                out.push(Command::NewGame);
            }
            if ui.button("Copy FEN").clicked() {
                out.push(Command::CopyFen);
            }
            if ui.button("Copy PGN").clicked() {
                out.push(Command::CopyPgn);
            }
        });
        ui.menu_button("View", |ui| {
            if ui.button("Flip board (F)").clicked() {
                out.push(Command::Flip);
            }
            let mut toggle = |ui: &mut egui::Ui, on: bool, label: &str, cmd: Command| {
                let mut v = on;
                if ui.checkbox(&mut v, label).changed() {
                    out.push(cmd);
                }
            };
            toggle(ui, s.show_coordinates, "Coordinates", Command::ToggleCoordinates);
            toggle(ui, s.show_legal_moves, "Legal-move dots", Command::ToggleLegalMoves);
            toggle(ui, s.show_moves_panel, "Moves panel", Command::ToggleMovesPanel);
            toggle(ui, s.show_setup_panel, "Setup panel", Command::ToggleSetupPanel);
            toggle(ui, s.show_analysis_panel, "Analysis panel", Command::ToggleAnalysisPanel);
            ui.separator();
            ui.label("Theme");
            for (t, name) in [(ThemeChoice::Dark, "Dark"), (ThemeChoice::Light, "Light")] {
                if ui.radio(s.theme == t, name).clicked() {
                    out.push(Command::SetTheme(t));
                }
            }
            ui.separator();
            ui.label("Value scoring");
            for c in [ScoringChoice::Mean, ScoringChoice::Max] {
                if ui.radio(s.scoring == c, c.label()).clicked() {
                    out.push(Command::SetScoring(c));
                }
            }
        });
        ui.menu_button("Engine", |ui| {
            let (text, cmd) = if state.analysis.searching {
                ("Stop search (Space)", Command::StopSearch)
            } else {
                ("Start search (Space)", Command::StartSearch)
            };
            if ui.button(text).clicked() {
                out.push(cmd);
            }
            ui.separator();
            if ui.button("Load model folder...").clicked() {
                out.push(Command::ChooseModelFolder);
            }
            if ui.button("Load model by path...").clicked() {
                out.push(Command::ShowDialog(Some(Dialog::Path(FileDialogKind::ModelFolder))));
            }
            if ui.button("Shipped default model").clicked() {
                out.push(Command::LoadDefaultModel);
            }
        });
        ui.menu_button("Help", |ui| {
            if ui.button("About and keys").clicked() {
                out.push(Command::ShowDialog(Some(Dialog::About)));
            }
            if let Some(dir) = crate::logging::log_dir() {
                let button = ui.button("Open log folder").on_hover_text(format!(
                    "{}: the log ({}) and crash reports",
                    dir.display(),
                    crate::logging::LOG_FILE
                ));
                if button.clicked() {
                    match std::fs::create_dir_all(&dir) {
                        Ok(()) => {
                            ui.ctx().open_url(egui::OpenUrl::new_tab(format!("file://{}", dir.display())))
                        }
                        Err(e) => out.push(Command::ShowError(format!("{}: {e}", dir.display()))),
                    }
                }
            }
        });
    });
    out
}
