//! Value distributions: one move's bucket probabilities as a bar chart with its mode (max scoring) and
//! mean (mean scoring) marked, and all moves × buckets as a heatmap (cells by a WGSL shader when the wgpu
//! renderer is set up for it, see [`super::heatmap_gpu`], else by egui's painter).
//!
//! Buckets follow the MAV format (`mav::buckets`): bucket i of K covers win probability [i/K, (i+1)/K) and stands for its centre.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

use super::arrows::value_color;
use super::heatmap_gpu::{gpu_available, heat_intensity, pack_heatmap, paint_cells};

/// The mode bucket's centre and the expectation of a distribution over `K = probs.len()` buckets.
pub fn mode_and_mean(probs: &[f64]) -> Option<(f64, f64)> {
    let k = probs.len();
    if k == 0 {
        return None;
    }
    let centre = |i: usize| (i as f64 + 0.5) / k as f64;
    let total: f64 = probs.iter().sum();
    let mode = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| centre(i))?;
    let mean = if total > 0.0 {
        probs.iter().enumerate().map(|(i, p)| p * centre(i)).sum::<f64>() / total
    } else {
        0.5
    };
    Some((mode, mean))
}

/// A bar chart of `probs` over the win-probability axis 0..1, `height` points tall, as wide as the panel.
/// The mode is marked with a solid line, the mean with a dashed one; hovering a bar shows its range and
/// probability.
pub fn distribution_chart_ui(ui: &mut egui::Ui, probs: &[f64], height: f32) -> egui::Response {
    chart_ui(ui, probs, None, height)
}

/// The colour of a second model's distribution drawn over the first's.
pub fn overlay_color(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { Color32::from_rgb(255, 170, 60) } else { Color32::from_rgb(200, 90, 0) }
}

/// [`distribution_chart_ui`] for model A's `probs` with model B's `other` drawn over it as an outline in
/// [`overlay_color`], its mode and mean marked in that colour too. The two may have different bucket
/// counts (64 for a MAV model, 128 for a searchless one): both are drawn as densities over the same
/// win-probability axis (probability per bucket times the bucket count), on one scale.
pub fn distribution_pair_chart_ui(
    ui: &mut egui::Ui,
    probs: &[f64],
    other: &[f64],
    height: f32,
) -> egui::Response {
    chart_ui(ui, probs, Some(other), height)
}

/// The densities of a distribution (probability per unit of win probability) and their peak.
fn densities(probs: &[f64]) -> (Vec<f64>, f64) {
    let k = probs.len() as f64;
    let d: Vec<f64> = probs.iter().map(|p| p * k).collect();
    let peak = d.iter().copied().fold(0.0f64, f64::max);
    (d, peak)
}

/// A distribution's mode (solid) and mean (dashed) as vertical lines across `plot`, whose width is win
/// probability 0–1.
fn mode_and_mean_lines(painter: &egui::Painter, plot: Rect, (mode, mean): (f64, f64), colour: egui::Color32) {
    let x_of = |v: f64| plot.left() + v as f32 * plot.width();
    painter.line_segment(
        [Pos2::new(x_of(mode), plot.top()), Pos2::new(x_of(mode), plot.bottom())],
        Stroke::new(2.0, colour),
    );
    painter.extend(egui::Shape::dashed_line(
        &[Pos2::new(x_of(mean), plot.top()), Pos2::new(x_of(mean), plot.bottom())],
        Stroke::new(1.5, colour),
        4.0,
        3.0,
    ));
}

/// The win-probability axis under `plot`: 0%, 50% and 100%.
fn axis_labels(painter: &egui::Painter, plot: Rect, font: &egui::FontId, colour: egui::Color32) {
    for (v, label, align) in [
        (0.0f32, "0%", egui::Align2::LEFT_TOP),
        (0.5, "50%", egui::Align2::CENTER_TOP),
        (1.0, "100%", egui::Align2::RIGHT_TOP),
    ] {
        let x = plot.left() + v * plot.width();
        painter.text(Pos2::new(x, plot.bottom() + 1.0), align, label, font.clone(), colour);
    }
}

fn chart_ui(ui: &mut egui::Ui, probs: &[f64], overlay: Option<&[f64]>, height: f32) -> egui::Response {
    let width = ui.available_width().max(120.0);
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    let Some((mode, mean)) = mode_and_mean(probs) else {
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "no distribution",
            egui::FontId::proportional(12.0),
            visuals.weak_text_color(),
        );
        return response;
    };
    let plot = rect.shrink2(Vec2::new(4.0, 14.0)).translate(Vec2::new(0.0, -6.0));
    let k = probs.len();
    let (dens, peak_a) = densities(probs);
    let (other, peak_b) = overlay.map(densities).unwrap_or_default();
    let peak = peak_a.max(peak_b).max(1e-9);
    let bar_w = plot.width() / k as f32;
    for (i, &d) in dens.iter().enumerate() {
        let h = (d / peak) as f32 * plot.height();
        let x0 = plot.left() + i as f32 * bar_w;
        let bar =
            Rect::from_min_max(Pos2::new(x0, plot.bottom() - h), Pos2::new(x0 + bar_w * 0.9, plot.bottom()));
        let centre = (i as f32 + 0.5) / k as f32;
        painter.rect_filled(bar, 0.0, value_color(centre));
    }
    let text = visuals.text_color();
    mode_and_mean_lines(&painter, plot, (mode, mean), text);
    let second = overlay.and_then(|o| mode_and_mean(o).map(|mm| (o.len(), mm)));
    if let Some((kb, (mode_b, mean_b))) = second {
        // Model B as a step outline over the same axis.
        let colour = overlay_color(visuals);
        let w = plot.width() / kb as f32;
        let y_of = |d: f64| plot.bottom() - (d / peak) as f32 * plot.height();
        let mut points = vec![Pos2::new(plot.left(), plot.bottom())];
        for (i, &d) in other.iter().enumerate() {
            let x0 = plot.left() + i as f32 * w;
            points.push(Pos2::new(x0, y_of(d)));
            points.push(Pos2::new(x0 + w, y_of(d)));
        }
        points.push(Pos2::new(plot.right(), plot.bottom()));
        painter.add(egui::Shape::line(points, Stroke::new(1.5, colour)));
        mode_and_mean_lines(&painter, plot, (mode_b, mean_b), colour);
    }
    let font = egui::FontId::proportional(11.0);
    axis_labels(&painter, plot, &font, visuals.weak_text_color());
    painter.text(
        Pos2::new(plot.left() + 2.0, plot.top()),
        egui::Align2::LEFT_TOP,
        format!("max {:.1}%  —  mean {:.1}% - -", mode * 100.0, mean * 100.0),
        font.clone(),
        text,
    );
    if let Some((_, (mode_b, mean_b))) = second {
        painter.text(
            Pos2::new(plot.left() + 2.0, plot.top() + 13.0),
            egui::Align2::LEFT_TOP,
            format!("B: max {:.1}%  —  mean {:.1}% - -", mode_b * 100.0, mean_b * 100.0),
            font,
            overlay_color(visuals),
        );
    }
    if let Some(pos) = response.hover_pos()
        && plot.x_range().contains(pos.x)
    {
        let i = (((pos.x - plot.left()) / bar_w) as usize).min(k - 1);
        let lo = i as f64 / k as f64 * 100.0;
        let hi = (i + 1) as f64 / k as f64 * 100.0;
        painter.rect_stroke(
            Rect::from_min_max(
                Pos2::new(plot.left() + i as f32 * bar_w, plot.top()),
                Pos2::new(plot.left() + (i + 1) as f32 * bar_w, plot.bottom()),
            ),
            0.0,
            Stroke::new(1.0, text),
            StrokeKind::Inside,
        );
        let b = second.map(|(kb, _)| {
            // B's probability over the same range of win probability.
            let j = (((pos.x - plot.left()) / plot.width() * kb as f32) as usize).min(kb - 1);
            format!(
                "; B: p = {:.3} in its bucket {:.1}–{:.1}%",
                other[j] / kb as f64,
                j as f64 / kb as f64 * 100.0,
                (j + 1) as f64 / kb as f64 * 100.0
            )
        });
        return response.on_hover_text(format!(
            "win {lo:.1}–{hi:.1}%: p = {:.3}{}",
            probs[i],
            b.unwrap_or_default()
        ));
    }
    response
}

/// The heatmap's colour for probability `p` relative to the row's peak: transparent to strong.
fn heat(p: f64, peak: f64, base: Color32) -> Color32 {
    let t = heat_intensity(p, peak);
    Color32::from_rgba_unmultiplied(base.r(), base.g(), base.b(), (t * 255.0).round() as u8)
}

/// The heatmap's colour at full intensity, for the theme.
fn heat_base(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { Color32::from_rgb(120, 200, 255) } else { Color32::from_rgb(20, 80, 200) }
}

/// All moves × buckets: one row per move (in `labels` order), each bucket coloured by its probability
/// relative to the row's peak, the mode (thick) and mean (thin) marked. The cells are drawn by the GPU
/// shader when [`super::heatmap_gpu::register`] set it up, else with the painter. Hovering a cell shows the
/// move, the bucket's win-probability range and its probability. Returns the row under the pointer, if any.
pub fn heatmap_ui(ui: &mut egui::Ui, labels: &[String], rows: &[&[f64]], row_height: f32) -> Option<usize> {
    let label_w = 56.0;
    let width = ui.available_width().max(160.0);
    let height = row_height * rows.len() as f32;
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, height.max(row_height)), Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    let grid = Rect::from_min_max(Pos2::new(rect.left() + label_w, rect.top()), rect.max);
    let grid = Rect::from_min_size(grid.min, Vec2::new(grid.width(), height));
    let base = heat_base(visuals);
    let gpu = if gpu_available(ui.ctx()) { pack_heatmap(rows) } else { None };
    match gpu {
        Some(texels) => paint_cells(&painter, grid, texels, visuals.extreme_bg_color, base, row_height),
        None => {
            painter.rect_filled(grid, 0.0, visuals.extreme_bg_color);
            for (r, probs) in rows.iter().enumerate() {
                let y = grid.top() + r as f32 * row_height;
                let k = probs.len().max(1);
                let cell = grid.width() / k as f32;
                let peak = probs.iter().copied().filter(|p| p.is_finite()).fold(0.0f64, f64::max);
                for (i, &p) in probs.iter().enumerate() {
                    let x = grid.left() + i as f32 * cell;
                    let c = Rect::from_min_size(Pos2::new(x, y), Vec2::new(cell, row_height - 1.0));
                    painter.rect_filled(c, 0.0, heat(p, peak, base));
                }
            }
        }
    }
    let font = egui::FontId::monospace(row_height.min(12.0));
    for (r, probs) in rows.iter().enumerate() {
        let y = rect.top() + r as f32 * row_height;
        if let Some(l) = labels.get(r) {
            painter.text(
                Pos2::new(rect.left(), y + row_height / 2.0),
                egui::Align2::LEFT_CENTER,
                l,
                font.clone(),
                visuals.text_color(),
            );
        }
        if let Some((mode, mean)) = mode_and_mean(probs) {
            for (v, w) in [(mode, 2.0), (mean, 1.0)] {
                let x = grid.left() + v as f32 * grid.width();
                painter.line_segment(
                    [Pos2::new(x, y + 1.0), Pos2::new(x, y + row_height - 2.0)],
                    Stroke::new(w, visuals.strong_text_color()),
                );
            }
        }
    }
    let x = grid.left() + 0.5 * grid.width();
    painter.line_segment(
        [Pos2::new(x, grid.top()), Pos2::new(x, grid.bottom())],
        Stroke::new(0.5, visuals.weak_text_color()),
    );
    let pos = response.hover_pos()?;
    let r = ((pos.y - rect.top()) / row_height) as usize;
    let probs = rows.get(r)?;
    if grid.x_range().contains(pos.x) && !probs.is_empty() {
        let k = probs.len();
        let i = (((pos.x - grid.left()) / grid.width() * k as f32) as usize).min(k - 1);
        let cell = Rect::from_min_size(
            Pos2::new(grid.left() + i as f32 * grid.width() / k as f32, grid.top() + r as f32 * row_height),
            Vec2::new(grid.width() / k as f32, row_height - 1.0),
        );
        painter.rect_stroke(cell, 0.0, Stroke::new(1.0, visuals.strong_text_color()), StrokeKind::Outside);
        let name = labels.get(r).map_or("", String::as_str);
        response.on_hover_text(cell_tooltip(name, i, probs));
    }
    Some(r)
}

/// The hover text of a heatmap cell: the move, the bucket's win-probability range and its probability.
pub fn cell_tooltip(name: &str, bucket: usize, probs: &[f64]) -> String {
    let k = probs.len().max(1) as f64;
    let lo = bucket as f64 / k * 100.0;
    let hi = (bucket + 1) as f64 / k * 100.0;
    let p = probs.get(bucket).copied().unwrap_or(0.0);
    format!("{name}: win {lo:.1}–{hi:.1}% (bucket {}/{}): p = {p:.3}", bucket + 1, probs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_is_the_likeliest_bucket_centre_and_mean_the_expectation() {
        let (mode, mean) = mode_and_mean(&[0.1, 0.2, 0.3, 0.4]).expect("non-empty");
        assert!((mode - 0.875).abs() < 1e-12);
        let expected = 0.1 * 0.125 + 0.2 * 0.375 + 0.3 * 0.625 + 0.4 * 0.875;
        assert!((mean - expected).abs() < 1e-12);
        assert!(mode_and_mean(&[]).is_none());
    }

    #[test]
    fn heat_grows_with_probability() {
        let base = Color32::from_rgb(10, 20, 30);
        assert_eq!(heat(0.0, 1.0, base).a(), 0);
        assert!(heat(0.5, 1.0, base).a() < heat(1.0, 1.0, base).a());
    }

    #[test]
    fn cell_tooltip_names_the_move_bucket_and_probability() {
        let probs = [0.1, 0.2, 0.3, 0.4];
        assert_eq!(cell_tooltip("Nf3", 2, &probs), "Nf3: win 50.0–75.0% (bucket 3/4): p = 0.300");
    }
}
