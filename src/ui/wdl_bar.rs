//! A win/draw/loss split as a small stacked bar: wins light, draws grey, losses dark, left to right, with the
//! three percentages on hover (as Lichess and Nibbler draw an engine's WDL).

use eframe::egui::{self, Color32, Rect, Sense, Vec2};

/// The bar's size in points.
pub const SIZE: Vec2 = Vec2::new(48.0, 12.0);

/// Draws `[win, draw, loss]` (shares summing to 1) as a stacked bar; hovering it names the three shares.
pub fn wdl_bar_ui(ui: &mut egui::Ui, wdl: [f64; 3]) -> egui::Response {
    let (rect, response) = ui.allocate_exact_size(SIZE, Sense::hover());
    let total: f64 = wdl.iter().map(|v| v.max(0.0)).sum();
    if ui.is_rect_visible(rect) && total > 0.0 {
        let painter = ui.painter();
        let colors = [Color32::from_gray(235), Color32::from_gray(150), Color32::from_gray(45)];
        let mut x = rect.left();
        for (share, color) in wdl.iter().zip(colors) {
            let w = (share.max(0.0) / total) as f32 * rect.width();
            painter.rect_filled(
                Rect::from_min_size(egui::pos2(x, rect.top()), Vec2::new(w, rect.height())),
                0.0,
                color,
            );
            x += w;
        }
        painter.rect_stroke(
            rect,
            0.0,
            ui.visuals().widgets.noninteractive.bg_stroke,
            egui::StrokeKind::Inside,
        );
    }
    response.on_hover_text(wdl_text(wdl))
}

/// "W 45.1% · D 30.2% · L 24.7%".
pub fn wdl_text(wdl: [f64; 3]) -> String {
    format!("W {:.1}% · D {:.1}% · L {:.1}%", 100.0 * wdl[0], 100.0 * wdl[1], 100.0 * wdl[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_the_three_shares() {
        assert_eq!(wdl_text([0.451, 0.302, 0.247]), "W 45.1% · D 30.2% · L 24.7%");
    }
}
