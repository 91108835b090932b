//! Messages as dismissible toasts in the top-right corner.

use eframe::egui::{self, Align2, Color32, Vec2};

use crate::app::command::Command;
use crate::app::command::ViewCommand;
use crate::app::messages::Level;

/// The toasts.
pub fn toasts_ui(ctx: &egui::Context, view: &crate::app::view::ViewState) -> Vec<Command> {
    let mut out = Vec::new();
    if view.messages.items().is_empty() {
        return out;
    }
    egui::Area::new(egui::Id::unique("mavboard_toasts"))
        .anchor(Align2::RIGHT_TOP, Vec2::new(-12.0, 36.0))
        .order(egui::Order::Foreground)
        .show(ctx, |ui| {
            ui.set_max_width(380.0);
            for m in view.messages.items().iter().rev() {
                let (accent, title) = match m.level {
                    Level::Error => (Color32::from_rgb(220, 70, 60), "Error"),
                    Level::Info => (Color32::from_rgb(70, 150, 220), "Note"),
                };
                egui::Frame::popup(ui.style()).stroke(egui::Stroke::new(1.5, accent)).show(ui, |ui| {
                    ui.set_width(360.0);
                    ui.horizontal(|ui| {
                        ui.colored_label(accent, egui::RichText::new(title).strong());
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            if ui.small_button("Dismiss").clicked() {
                                out.push(Command::View(ViewCommand::DismissMessage(m.id)));
                            }
                        });
                    });
                    ui.add(egui::Label::new(m.text.as_str()).wrap());
                });
                ui.add_space(6.0);
            }
        });
    out
}
