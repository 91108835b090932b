//! Dialog windows: paste FEN/PGN, open or save by path, about.

use eframe::egui;

use crate::app::command::Command;
use crate::app::command::{AnalysisCommand, DocCommand, FileCommand, ViewCommand};
use crate::app::file_dialog::FileDialogKind;
use crate::app::state::{AppState, Dialog};
use crate::ui::UiState;

/// The open dialog window, if any.
pub fn dialogs_ui(ctx: &egui::Context, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = Vec::new();
    if state.view.dialog != ui_state.shown_dialog {
        // A dialog just opened: start its path field empty, or with the current file when saving.
        ui_state.shown_dialog = state.view.dialog;
        if let Some(Dialog::Path(kind)) = state.view.dialog {
            ui_state.path_input = match (kind, &state.doc.current_file) {
                (FileDialogKind::Save, Some(path)) => path.display().to_string(),
                _ => String::new(),
            };
        }
        if let Some(Dialog::Comment(id)) = state.view.dialog {
            ui_state.comment_input = state
                .doc
                .line
                .tree()
                .node(id)
                .map(|n| n.comments_after().iter().map(|c| c.text()).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
        }
    }
    let Some(dialog) = state.view.dialog else {
        return out;
    };
    let mut open = true;
    let title = match dialog {
        Dialog::Paste => "Paste FEN or PGN",
        Dialog::Path(FileDialogKind::Open) => "Open a PGN file by path",
        Dialog::Path(FileDialogKind::Save) => "Save the line to a path",
        Dialog::Path(FileDialogKind::ModelFolder) => "Load a model package by path",
        Dialog::Path(FileDialogKind::CompareFolder) => "Compare with a model package by path",
        Dialog::Path(FileDialogKind::ExportReview) => "Export the reviewed games to a path",
        Dialog::About => "About mavboard",
        Dialog::GameList => "Games",
        Dialog::Comment(_) => "Comment",
        Dialog::Play => "Play against the model",
    };
    egui::Window::new(title).open(&mut open).collapsible(false).default_width(440.0).show(ctx, |ui| {
        match dialog {
            Dialog::Paste => paste_ui(ui, ui_state, &mut out),
            Dialog::Path(kind) => path_ui(ui, kind, ui_state, &mut out),
            Dialog::About => about_ui(ui),
            Dialog::GameList => game_list_ui(ui, state, ui_state, &mut out),
            Dialog::Comment(id) => comment_ui(ui, id, ui_state, &mut out),
            Dialog::Play => out.extend(super::play::play_dialog_ui(ui, state)),
        }
    });
    if !open {
        out.push(Command::View(ViewCommand::ShowDialog(None)));
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
            out.push(Command::Doc(DocCommand::LoadPasted(ui_state.paste_input.clone())));
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::View(ViewCommand::ShowDialog(None)));
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
        FileDialogKind::CompareFolder => {
            "Type the path of the model package to set beside the loaded one (model B: its values, ranks \
             and distributions next to model A's in the action-values panel)."
        }
        FileDialogKind::ExportReview => "Type the path of the .pgn file to write every game of the file to.",
    });
    let (label, action) = match kind {
        FileDialogKind::Open => ("Path", "Open"),
        FileDialogKind::Save => ("Path", "Save"),
        FileDialogKind::ModelFolder => ("Folder", "Load"),
        FileDialogKind::CompareFolder => ("Folder", "Compare"),
        FileDialogKind::ExportReview => ("Path", "Export"),
    };
    let response = ui
        .horizontal(|ui| {
            let l = ui.label(label);
            ui.add(egui::TextEdit::singleline(&mut ui_state.path_input).desired_width(340.0))
                .labelled_by(l.id)
        })
        .inner;
    // Enter leaves the field and acts; read it before giving the field the keyboard back below, since a field
    // that has the focus again has not lost it.
    let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    // Type straight away when the dialog opens (nothing else has the keyboard then).
    if !enter && ui.memory(|m| m.focused().is_none()) {
        response.request_focus();
    }
    ui.horizontal(|ui| {
        if ui.button(action).clicked() || enter {
            let path = std::path::PathBuf::from(ui_state.path_input.trim());
            if ui_state.path_input.trim().is_empty() {
                out.push(Command::View(ViewCommand::ShowError(
                    "Type a file path first, e.g. /home/me/games/game.pgn".to_owned(),
                )));
            } else {
                out.push(match kind {
                    FileDialogKind::Open => Command::File(FileCommand::OpenPath(path)),
                    FileDialogKind::Save => Command::File(FileCommand::SavePath(path)),
                    FileDialogKind::ModelFolder => Command::Analysis(AnalysisCommand::LoadModel(path)),
                    FileDialogKind::CompareFolder => {
                        Command::Compare(crate::app::compare_model::CompareCommand::Open(path))
                    }
                    FileDialogKind::ExportReview => Command::File(FileCommand::ExportReviewPath(path)),
                });
            }
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::View(ViewCommand::ShowDialog(None)));
        }
    });
}

fn game_list_ui(ui: &mut egui::Ui, state: &AppState, ui_state: &mut UiState, out: &mut Vec<Command>) {
    let Some(list) = &state.files.games else {
        ui.label("No file is open.");
        return;
    };
    ui.label(format!(
        "{}: {} games{}{}",
        list.source,
        list.entries.len(),
        if list.broken() > 0 { format!(", {} could not be read", list.broken()) } else { String::new() },
        if list.complete { "" } else { " so far (reading the file…)" }
    ));
    let review = state.analysis.file_review.as_ref().filter(|f| f.list == list.id);
    file_review_ui(ui, &state.analysis, review, out);
    ui.horizontal(|ui| {
        let l = ui.label("Filter");
        ui.add(egui::TextEdit::singleline(&mut ui_state.game_filter).hint_text("player, event, year…"))
            .labelled_by(l.id);
    });
    let filter = ui_state.game_filter.trim().to_owned();
    let columns = if review.is_some() { 9 } else { 7 };
    let row_height = ui.spacing().interact_size.y;
    // Only the rows in view are laid out, so a list of a million games scrolls as lightly as ten.
    list.with_matches(&filter, |rows| {
        let mut table = egui_extras::TableBuilder::new(ui)
            .id_salt("game_list")
            .striped(true)
            .max_scroll_height(420.0)
            .auto_shrink([false, true])
            .column(egui_extras::Column::auto().at_least(30.0))
            .columns(egui_extras::Column::auto().at_most(220.0).clip(true), 4)
            .column(egui_extras::Column::auto().at_most(260.0).clip(true))
            .column(egui_extras::Column::auto());
        if review.is_some() {
            table = table.columns(egui_extras::Column::auto(), 2);
        }
        table
            .header(row_height, |mut header| {
                for h in ["#", "White", "Black", "Result", "Date", "Event", "Moves"] {
                    header.col(|ui| {
                        ui.strong(h);
                    });
                }
                if review.is_some() {
                    header.col(|ui| {
                        ui.strong("Accuracy").on_hover_text("White / Black (Lichess's accuracy formula)");
                    });
                    header.col(|ui| {
                        ui.strong("?! ? ??")
                            .on_hover_text("Inaccuracies, mistakes and blunders of both players");
                    });
                }
            })
            .body(|body| {
                body.rows(row_height, rows.len(), |mut row| {
                    let Some(e) = rows.get(row.index()).and_then(|&i| list.entries.get(i as usize)) else {
                        return;
                    };
                    game_row_ui(&mut row, e, review, columns, out);
                });
            });
    });
}

/// One game's row: its number (a link that opens it), its headers and length, and its review; or, for a
/// game that could not be read, why.
fn game_row_ui(
    row: &mut egui_extras::TableRow<'_, '_>,
    e: &crate::app::game_list::GameEntry,
    review: Option<&crate::app::file_review::FileReview>,
    columns: usize,
    out: &mut Vec<Command>,
) {
    match &e.game {
        Ok(_) => {
            row.col(|ui| {
                if ui.link(e.number().to_string()).on_hover_text("Open this game").clicked() {
                    out.push(Command::File(FileCommand::OpenGame(e.number())));
                    out.push(Command::View(ViewCommand::ShowDialog(None)));
                }
            });
            for h in ["White", "Black", "Result", "Date", "Event"] {
                row.col(|ui| {
                    ui.label(e.header(h));
                });
            }
            row.col(|ui| {
                ui.label(e.plies().map_or_else(String::new, |p| p.div_ceil(2).to_string()));
            });
            if let Some(review) = review {
                review_cells_ui(row, review, e.number());
            }
        }
        Err(err) => {
            let err = err.to_string();
            row.col(|ui| {
                ui.label(e.number().to_string());
            });
            row.col(|ui| {
                ui.colored_label(ui.visuals().error_fg_color, "cannot be read").on_hover_text(&err);
            });
            row.col(|ui| {
                ui.label(egui::RichText::new(&err).small().color(ui.visuals().error_fg_color))
                    .on_hover_text(&err);
            });
            for _ in 0..columns - 3 {
                row.col(|_| {});
            }
        }
    }
}

/// The file review's buttons and progress above the game list.
fn file_review_ui(
    ui: &mut egui::Ui,
    analysis: &crate::app::analysis::AnalysisState,
    review: Option<&crate::app::file_review::FileReview>,
    out: &mut Vec<Command>,
) {
    ui.horizontal(|ui| {
        match review {
            Some(r) if r.running() => {
                let (done, total) = r.progress();
                let within = r.current.map_or(0.0, |(_, (a, n))| a as f32 / n.max(1) as f32);
                ui.add(
                    egui::ProgressBar::new((done as f32 + within) / total.max(1) as f32)
                        .desired_width(180.0)
                        .text(format!("Reviewing: {done} of {total} games")),
                );
                if ui.button("Stop review").clicked() {
                    out.push(Command::Analysis(AnalysisCommand::StopFileReview));
                }
            }
            _ => {
                let ready = analysis.model.info().is_some();
                let label = if review.is_some() { "Review all games again" } else { "Review all games" };
                if ui
                    .add_enabled(ready, egui::Button::new(label))
                    .on_hover_text("Every game that could be read, one after another, with the loaded model")
                    .on_disabled_hover_text("Load a model first (Engine menu)")
                    .clicked()
                {
                    out.push(Command::Analysis(AnalysisCommand::ReviewFile));
                }
            }
        }
        if let Some(r) = review {
            let (done, total) = r.progress();
            if !r.running() {
                ui.label(format!("{done} of {total} games reviewed"));
            }
            if let Some(acc) = r.average_accuracy() {
                ui.label(format!("average accuracy {acc:.0}%"));
            }
            if ui
                .add_enabled(done > 0, egui::Button::new("Export annotated PGN…"))
                .on_hover_text(
                    "Every game of the file, the reviewed ones with [%eval], ?!/?/?? and best moves",
                )
                .clicked()
            {
                out.push(Command::File(FileCommand::ExportReviewDialog));
            }
        }
    });
}

/// A game's accuracy and mistake counts in the game list (or where its review stands).
fn review_cells_ui(
    row: &mut egui_extras::TableRow<'_, '_>,
    review: &crate::app::file_review::FileReview,
    number: usize,
) {
    match review.summary(number) {
        Some(Ok(s)) => {
            let acc = |a: Option<f64>| a.map_or("–".to_owned(), |a| format!("{a:.0}"));
            row.col(|ui| {
                ui.label(format!("{} / {}", acc(s.accuracy.0), acc(s.accuracy.1)));
            });
            row.col(|ui| {
                ui.label(format!("{} {} {}", s.counts[0], s.counts[1], s.counts[2]));
            });
        }
        Some(Err(why)) => {
            row.col(|ui| {
                ui.colored_label(ui.visuals().error_fg_color, "failed").on_hover_text(why.to_string());
            });
            row.col(|_| {});
        }
        None if review.current.is_some_and(|(n, _)| n == number) => {
            let (a, n) = review.current.map_or((0, 0), |(_, p)| p);
            row.col(|ui| {
                ui.label(format!("{a}/{n}"));
            });
            row.col(|_| {});
        }
        None => {
            row.col(|ui| {
                ui.weak(if review.running() { "waiting" } else { "" });
            });
            row.col(|_| {});
        }
    }
}

fn comment_ui(ui: &mut egui::Ui, id: crate::pgn::NodeId, ui_state: &mut UiState, out: &mut Vec<Command>) {
    let l = ui.label("The comment after this move (empty removes it):");
    ui.add(
        egui::TextEdit::multiline(&mut ui_state.comment_input).desired_rows(4).desired_width(f32::INFINITY),
    )
    .labelled_by(l.id);
    ui.horizontal(|ui| {
        if ui.button("Save comment").clicked() {
            out.push(Command::Doc(DocCommand::SetComment(id, ui_state.comment_input.trim().to_owned())));
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::View(ViewCommand::ShowDialog(None)));
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
    super::shortcuts::keys_grid_ui(ui);
    ui.label("Moves: click a piece then a square, or drag it. Castle by moving the king onto its rook (or two squares where that is unambiguous).");
}
