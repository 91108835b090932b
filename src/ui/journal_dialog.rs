//! The offer of a crash journal: mavboard did not close properly last time and kept unsaved work — Restore
//! or Discard (a modal window over the app, shown at start once the unsaved-changes question is not open).

use eframe::egui;

use crate::app::command::{Command, FileCommand};
use crate::app::journal::JournalAnswer;
use crate::app::state::AppState;

/// The modal offer of the first journal left by an app that is gone, while there is one. It stays open
/// until answered (Escape or a click outside does not discard work).
pub fn journal_dialog_ui(ctx: &egui::Context, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    if state.files.unsaved.is_some() {
        return out;
    }
    let offers = &state.files.journal.offers;
    let Some(first) = offers.front() else {
        return out;
    };
    let entry = &first.entry;
    egui::Modal::new(egui::Id::unique("mavboard_crash_journal")).show(ctx, |ui| {
        ui.set_max_width(440.0);
        ui.heading("Restore unsaved work?");
        ui.label(format!(
            "mavboard did not close properly and kept unsaved work: {}. Restore it?",
            entry.describe()
        ));
        ui.weak(format!("Kept in {}", first.files.path.display()));
        match offers.len() - 1 {
            0 => {}
            1 => {
                ui.weak("1 more kept game is offered after this one.");
            }
            n => {
                ui.weak(format!("{n} more kept games are offered after this one."));
            }
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            if ui.button("Restore").on_hover_text("Put the game back on the board, unsaved").clicked() {
                out.push(Command::File(FileCommand::AnswerJournal(JournalAnswer::Restore)));
            }
            if ui.button("Discard").on_hover_text("Delete the kept work").clicked() {
                out.push(Command::File(FileCommand::AnswerJournal(JournalAnswer::Discard)));
            }
        });
    });
    out
}
