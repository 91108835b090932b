//! The moves × buckets heatmap: drawn by the WGSL shader through the wgpu paint callback when the renderer
//! is set up for it, by egui's painter otherwise; both give the same picture, and hovering a cell names the
//! move, the bucket and its probability.
//!
//! The rendering tests need a wgpu adapter (Mesa's lavapipe is enough: `apt-get install
//! mesa-vulkan-drivers`); without one they say so and skip. Update the image after an intended change with
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui ui_heatmap`.

use eframe::egui;
use eframe::egui_wgpu::RenderState;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use egui_kittest::wgpu::{WgpuTestRenderer, create_render_state, default_wgpu_setup};
use mavboard::ui::distribution::heatmap_ui;
use mavboard::ui::heatmap_gpu::{prepared_frames, register};

/// A fresh render state, or `None` (with the reason printed) where wgpu finds no adapter.
fn render_state() -> Option<RenderState> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(|| {
        create_render_state(default_wgpu_setup(), eframe::egui_wgpu::RendererOptions::PREDICTABLE)
    });
    std::panic::set_hook(previous);
    match r {
        Ok(r) => Some(r),
        Err(_) => {
            println!(
                "SKIPPED: no wgpu adapter here (install a Vulkan driver, e.g. `apt-get install mesa-vulkan-drivers`, \
                 to run the heatmap rendering tests)"
            );
            None
        }
    }
}

/// Twelve moves over 64 buckets: peaks at different win probabilities, some wide, one bimodal.
fn distributions() -> (Vec<String>, Vec<Vec<f64>>) {
    let names = ["e4", "d4", "Nf3", "c4", "g3", "b3", "f4", "Nc3", "e3", "d3", "a3", "h4"];
    let rows = names
        .iter()
        .enumerate()
        .map(|(m, _)| {
            let centre = 0.15 + 0.065 * m as f64;
            let width = 0.03 + 0.01 * (m % 4) as f64;
            let mut p: Vec<f64> = (0..64)
                .map(|i| {
                    let x = (i as f64 + 0.5) / 64.0;
                    let mut v = (-((x - centre) / width).powi(2) / 2.0).exp();
                    if m == 5 {
                        v += 0.7 * (-((x - 0.85) / 0.04).powi(2) / 2.0).exp();
                    }
                    v
                })
                .collect();
            let total: f64 = p.iter().sum();
            p.iter_mut().for_each(|v| *v /= total);
            p
        })
        .collect();
    (names.iter().map(|s| (*s).to_owned()).collect(), rows)
}

struct Panel {
    labels: Vec<String>,
    rows: Vec<Vec<f64>>,
    hovered: Option<usize>,
}

/// The heatmap alone; `shader`: set up the shader path on the renderer.
fn panel_harness(render_state: Option<&RenderState>, shader: bool) -> Harness<'static, Panel> {
    let (labels, rows) = distributions();
    let mut builder = Harness::builder().with_size(egui::vec2(420.0, 200.0));
    if let Some(rs) = render_state {
        builder = builder.renderer(WgpuTestRenderer::from_render_state(rs.clone()));
    }
    let mut h = builder.build_ui_state(
        |ui, panel: &mut Panel| {
            let dists: Vec<&[f64]> = panel.rows.iter().map(Vec::as_slice).collect();
            panel.hovered = heatmap_ui(ui, &panel.labels, &dists, 12.0);
        },
        Panel { labels, rows, hovered: None },
    );
    if let Some(rs) = render_state.filter(|_| shader) {
        register(rs, 1, &h.ctx);
    }
    h.run();
    h
}

fn has_callback(h: &Harness<'_, Panel>) -> bool {
    h.output().shapes.iter().any(|s| matches!(s.shape, egui::Shape::Callback(_)))
}

#[test]
fn shader_path_draws_the_heatmap() {
    let Some(rs) = render_state() else { return };
    let mut h = panel_harness(Some(&rs), true);
    assert!(has_callback(&h), "the cells should be a paint callback on the wgpu renderer");
    // Up to 100 of the image's 84,000 pixels may differ: GPU drivers round the marker lines at bucket
    // edges one pixel apart (Mesa's lavapipe builds disagree on the mode ticks); a broken shader changes
    // thousands.
    h.snapshot_options("heatmap_shader", &egui_kittest::SnapshotOptions::new().max_failed_pixels(100));
    let prepared = prepared_frames(&rs).expect("registered");
    assert!(prepared > 0, "the shader path prepared no frame");
}

#[test]
fn fallback_paints_the_same_picture_without_the_shader() {
    let Some(plain) = render_state() else { return };
    let Some(gpu) = render_state() else { return };
    // Painter: the renderer has no heatmap pipeline and the context was not told about one.
    let mut painted = panel_harness(Some(&plain), false);
    assert!(!has_callback(&painted), "without the shader path the painter draws the cells");
    let rects = painted.output().shapes.iter().filter(|s| matches!(s.shape, egui::Shape::Rect(_))).count();
    assert!(rects >= 12 * 64, "one rectangle per cell expected, found {rects}");
    assert_eq!(prepared_frames(&plain), None);
    let mut shaded = panel_harness(Some(&gpu), true);
    assert!(has_callback(&shaded));
    let a = painted.render().expect("painter image");
    let b = shaded.render().expect("shader image");
    assert_eq!(a.dimensions(), b.dimensions());
    // The same colour map both ways: at most a rounding step apart on average, and no cell far off.
    let (mut sum, mut far) = (0u64, 0usize);
    for (p, q) in a.pixels().zip(b.pixels()) {
        let d = (0..3).map(|c| (i32::from(p[c]) - i32::from(q[c])).unsigned_abs()).max().unwrap_or(0);
        sum += u64::from(d);
        if d > 24 {
            far += 1;
        }
    }
    let mean = sum as f64 / f64::from(a.width() * a.height());
    assert!(mean < 2.0, "mean channel difference {mean:.2} between painter and shader");
    assert!(far < (a.width() * a.height() / 100) as usize, "{far} pixels differ strongly");
}

#[test]
fn hovering_a_cell_names_move_bucket_and_probability() {
    // No renderer needed: the hover works the same on either path.
    let mut h = panel_harness(None, false);
    assert!(!has_callback(&h));
    // Row 2 (Nf3), the first bucket: the grid starts 56 points right of the labels.
    let rect = h.ctx.content_rect();
    h.hover_at(egui::pos2(rect.left() + 8.0 + 56.0 + 1.0, rect.top() + 8.0 + 2.0 * 12.0 + 5.0));
    h.run();
    assert_eq!(h.state().hovered, Some(2));
    let tip = h.query_by_label_contains("Nf3: win 0.0–1.6% (bucket 1/64): p = ");
    assert!(tip.is_some(), "the tooltip names the move, the bucket and its probability");
}
