//! The question about unsaved changes: Save, Discard or Cancel (a modal window over the app).

use eframe::egui;

use crate::app::command::Command;
use crate::app::command::FileCommand;
use crate::app::state::AppState;
use crate::app::unsaved::UnsavedAnswer;

/// The modal question while one is open; Escape or a click outside it cancels.
pub fn unsaved_dialog_ui(ctx: &egui::Context, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let Some(action) = &state.files.unsaved else {
        return out;
    };
    let file = state
        .doc
        .current_file
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or_else(|| "The game".to_owned(), |n| n.to_string_lossy().into_owned());
    let modal = egui::Modal::new(egui::Id::unique("mavboard_unsaved_changes")).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading("Unsaved changes");
        ui.label(format!(
            "{file} has changes that are not saved (moves, comments or annotations). Save them before {}?",
            action.describe()
        ));
        match (&state.doc.current_file, state.direct_save_target()) {
            (None, _) => {
                ui.weak("It has no file yet: Save asks where to write it.");
            }
            (Some(_), None) => {
                ui.weak("Its file holds other games too: Save asks where to write this one.");
            }
            (Some(_), Some(_)) => {}
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            if ui.button("Save").clicked() {
                out.push(Command::File(FileCommand::AnswerUnsaved(UnsavedAnswer::Save)));
            }
            if ui.button("Discard").on_hover_text("Go on and lose the changes").clicked() {
                out.push(Command::File(FileCommand::AnswerUnsaved(UnsavedAnswer::Discard)));
            }
            if ui.button("Cancel").on_hover_text("Keep the game as it is").clicked() {
                out.push(Command::File(FileCommand::AnswerUnsaved(UnsavedAnswer::Cancel)));
            }
        });
    });
    if out.is_empty() && modal.should_close() {
        out.push(Command::File(FileCommand::AnswerUnsaved(UnsavedAnswer::Cancel)));
    }
    out
}
