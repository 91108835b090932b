//! Dialog windows: paste FEN/PGN, open or save by path, about.

use eframe::egui;

use crate::app::command::Command;
use crate::app::file_dialog::FileDialogKind;
use crate::app::state::{AppState, Dialog};
use crate::ui::UiState;

/// The open dialog window, if any.
pub fn dialogs_ui(ctx: &egui::Context, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = Vec::new();
    if state.dialog != ui_state.shown_dialog {
        // A dialog just opened: start its path field empty, or with the current file when saving.
        ui_state.shown_dialog = state.dialog;
        if let Some(Dialog::Path(kind)) = state.dialog {
            ui_state.path_input = match (kind, &state.current_file) {
                (FileDialogKind::Save, Some(path)) => path.display().to_string(),
                _ => String::new(),
            };
        }
        if let Some(Dialog::Comment(id)) = state.dialog {
            ui_state.comment_input = state
                .line
                .tree()
                .node(id)
                .map(|n| n.comments_after().iter().map(|c| c.text()).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
        }
    }
    let Some(dialog) = state.dialog else {
        return out;
    };
    let mut open = true;
    let title = match dialog {
        Dialog::Paste => "Paste FEN or PGN",
        Dialog::Path(FileDialogKind::Open) => "Open a PGN file by path",
        Dialog::Path(FileDialogKind::Save) => "Save the line to a path",
        Dialog::Path(FileDialogKind::ModelFolder) => "Load a model package by path",
        Dialog::About => "About mavboard",
        Dialog::GameList => "Games",
        Dialog::Comment(_) => "Comment",
    };
    egui::Window::new(title).open(&mut open).collapsible(false).default_width(440.0).show(ctx, |ui| {
        match dialog {
            Dialog::Paste => paste_ui(ui, ui_state, &mut out),
            Dialog::Path(kind) => path_ui(ui, kind, ui_state, &mut out),
            Dialog::About => about_ui(ui),
            Dialog::GameList => game_list_ui(ui, state, ui_state, &mut out),
            Dialog::Comment(id) => comment_ui(ui, id, ui_state, &mut out),
        }
    });
    if !open {
        out.push(Command::ShowDialog(None));
    }
    out
}

fn paste_ui(ui: &mut egui::Ui, ui_state: &mut UiState, out: &mut Vec<Command>) {
    let label = ui.label("A FEN, or PGN games (the first opens; all are in the game list):");
    ui.add(
        egui::TextEdit::multiline(&mut ui_state.paste_input)
            .desired_rows(8)
            .desired_width(f32::INFINITY)
            .font(egui::TextStyle::Monospace),
    )
    .labelled_by(label.id);
    ui.horizontal(|ui| {
        if ui.button("Load").clicked() {
            out.push(Command::LoadPasted(ui_state.paste_input.clone()));
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::ShowDialog(None));
        }
    });
}

fn path_ui(ui: &mut egui::Ui, kind: FileDialogKind, ui_state: &mut UiState, out: &mut Vec<Command>) {
    ui.label(match kind {
        FileDialogKind::Open => "Type the path of a .pgn file, or drop the file on the window.",
        FileDialogKind::Save => "Type the path of the .pgn file to write.",
        FileDialogKind::ModelFolder => {
            "Type the path of a model package folder (it holds model.onnx and mav.json)."
        }
    });
    let (label, action) = match kind {
        FileDialogKind::Open => ("Path", "Open"),
        FileDialogKind::Save => ("Path", "Save"),
        FileDialogKind::ModelFolder => ("Folder", "Load"),
    };
    let response = ui
        .horizontal(|ui| {
            let l = ui.label(label);
            ui.add(egui::TextEdit::singleline(&mut ui_state.path_input).desired_width(340.0))
                .labelled_by(l.id)
        })
        .inner;
    // Type straight away when the dialog opens (nothing else has the keyboard then).
    if ui.memory(|m| m.focused().is_none()) {
        response.request_focus();
    }
    let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    ui.horizontal(|ui| {
        if ui.button(action).clicked() || enter {
            let path = std::path::PathBuf::from(ui_state.path_input.trim());
            if ui_state.path_input.trim().is_empty() {
                out.push(Command::ShowError(
                    "Type a file path first, e.g. /home/me/games/game.pgn".to_owned(),
                ));
            } else {
                out.push(match kind {
                    FileDialogKind::Open => Command::OpenPath(path),
                    FileDialogKind::Save => Command::SavePath(path),
                    FileDialogKind::ModelFolder => Command::LoadModel(path),
                });
            }
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::ShowDialog(None));
        }
    });
}

fn game_list_ui(ui: &mut egui::Ui, state: &AppState, ui_state: &mut UiState, out: &mut Vec<Command>) {
    let Some(list) = &state.games else {
        ui.label("No file is open.");
        return;
    };
    ui.label(format!(
        "{}: {} games{}",
        list.source,
        list.entries.len(),
        if list.broken() > 0 { format!(", {} could not be read", list.broken()) } else { String::new() }
    ));
    ui.horizontal(|ui| {
        let l = ui.label("Filter");
        ui.add(egui::TextEdit::singleline(&mut ui_state.game_filter).hint_text("player, event, year…"))
            .labelled_by(l.id);
    });
    let filter = ui_state.game_filter.trim().to_owned();
    egui::ScrollArea::vertical().max_height(420.0).auto_shrink([false, true]).show(ui, |ui| {
        egui::Grid::new("game_list").striped(true).num_columns(7).spacing([10.0, 3.0]).show(ui, |ui| {
            for h in ["#", "White", "Black", "Result", "Date", "Event", "Moves"] {
                ui.strong(h);
            }
            ui.end_row();
            for e in list.entries.iter().filter(|e| filter.is_empty() || e.matches(&filter)) {
                match &e.game {
                    Ok(_) => {
                        if ui.link(e.number.to_string()).on_hover_text("Open this game").clicked() {
                            out.push(Command::OpenGame(e.number));
                            out.push(Command::ShowDialog(None));
                        }
                        for h in ["White", "Black", "Result", "Date", "Event"] {
                            ui.label(e.header(h));
                        }
                        ui.label(e.plies().div_ceil(2).to_string());
                    }
                    Err(err) => {
                        ui.label(e.number.to_string());
                        ui.colored_label(ui.visuals().error_fg_color, "cannot be read").on_hover_text(err);
                        ui.label(egui::RichText::new(err).small().color(ui.visuals().error_fg_color));
                        for _ in 0..4 {
                            ui.label("");
                        }
                    }
                }
                ui.end_row();
            }
        });
    });
}

fn comment_ui(ui: &mut egui::Ui, id: crate::pgn::NodeId, ui_state: &mut UiState, out: &mut Vec<Command>) {
    let l = ui.label("The comment after this move (empty removes it):");
    ui.add(
        egui::TextEdit::multiline(&mut ui_state.comment_input).desired_rows(4).desired_width(f32::INFINITY),
    )
    .labelled_by(l.id);
    ui.horizontal(|ui| {
        if ui.button("Save comment").clicked() {
            out.push(Command::SetComment(id, ui_state.comment_input.trim().to_owned()));
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::ShowDialog(None));
        }
    });
}

fn about_ui(ui: &mut egui::Ui) {
    ui.label(format!(
        "mavboard {}: an analysis board for multi-action-value game models.",
        env!("CARGO_PKG_VERSION")
    ));
    ui.label("License: GPL-3.0-or-later.");
    ui.label("Pieces: cburnett by Colin M.L. Burnett, GPL-2.0-or-later.");
    ui.separator();
    ui.strong("Keys");
    egui::Grid::new("keys").num_columns(2).show(ui, |ui| {
        for (k, what) in [
            ("F", "flip the board"),
            ("Left / Right", "one move back / forward"),
            ("Home / End", "first / last position"),
            ("Up / Down", "choose the variation at a fork"),
            ("Esc", "cancel a selection or promotion"),
            ("Space", "start / stop the search"),
            ("Ctrl+O / Ctrl+S", "open / save PGN"),
            ("Ctrl+V", "paste a FEN or PGN (outside text fields)"),
        ] {
            ui.monospace(k);
            ui.label(what);
            ui.end_row();
        }
    });
    ui.label("Moves: click a piece then a square, or drag it. Castle by moving the king onto its rook (or two squares where that is unambiguous).");
}
