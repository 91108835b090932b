//! Frame time of the analysis board (issue budget: `App::ui` plus tessellation ≤ 4 ms per frame at
//! 1280 × 800): the real app with the shipped model, a position with 48 legal moves (the "Kiwipete" perft
//! position), and a MAV-MCTS search running in the engine while frames are drawn, so every frame takes the
//! newest search snapshot. One frame = the app's `frame_ui` inside `Context::run` + `Context::tessellate`.
//! The reference, measured in the same run, is an empty egui frame of the same size.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use eframe::egui;
use mavboard::app::command::Command;
use mavboard::app::command::{AnalysisCommand, DocCommand};
use mavboard::app::settings::{SearchSettings, Settings};
use mavboard::shell::MavboardApp;

const FEN: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const SIZE: egui::Vec2 = egui::vec2(1280.0, 800.0);

fn input() -> egui::RawInput {
    egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, SIZE)),
        ..Default::default()
    }
}

/// One frame: the UI pass and its tessellation; returns the number of primitives (kept alive).
fn frame(ctx: &egui::Context, mut ui: impl FnMut(&mut egui::Ui)) -> usize {
    let mut output = ctx.run_ui(input(), |ui_root| ui(ui_root));
    // No renderer here to upload the font atlas and images to: drop the texture updates on purpose
    // (epaint asserts that none are dropped unhandled).
    output.textures_delta.clear();
    ctx.tessellate(output.shapes, output.pixels_per_point).len()
}

fn bench(c: &mut Criterion) {
    let settings = Settings {
        // 0: search until stopped, so the search runs through the whole measurement.
        search: SearchSettings { simulations: 0, ..SearchSettings::default() },
        ..Settings::default()
    };
    let ctx = egui::Context::default();
    let mut app = MavboardApp::with_engine(settings, Arc::new(|| {}));
    app.state.apply(Command::Doc(DocCommand::LoadFen(FEN.into())));
    // Wait (drawing frames) for the model's values of the position, then start the search.
    let start = Instant::now();
    while mavboard::ui::values_panel::current_rows(&app.state).len() < 40 {
        frame(&ctx, |ui| app.frame_ui(ui));
        if start.elapsed() > Duration::from_secs(120) {
            eprintln!(
                "the shipped model gave no values within 120 s (is ONNX Runtime installed?): bench skipped"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    app.state.apply(Command::Analysis(AnalysisCommand::StartSearch));
    while app.state.analysis.report.as_ref().is_none_or(|r| r.snapshot.totals.root_visits < 50) {
        frame(&ctx, |ui| app.frame_ui(ui));
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!(
        "{} legal moves shown, search running ({} visits so far)",
        mavboard::ui::values_panel::current_rows(&app.state).len(),
        app.state.analysis.report.as_ref().map_or(0, |r| r.snapshot.totals.root_visits)
    );

    let mut g = c.benchmark_group("frame_1280x800");
    g.bench_function("empty_egui_frame", |b| {
        let empty = egui::Context::default();
        b.iter(|| black_box(frame(&empty, |ui| drop(ui.label("mavboard")))))
    });
    g.bench_function("analysis_board_searching", |b| {
        b.iter(|| black_box(frame(&ctx, |ui| app.frame_ui(ui))))
    });
    g.finish();
    assert!(app.state.analysis.searching, "the search ran during the measurement");
    app.state.apply(Command::Analysis(AnalysisCommand::StopSearch));
}

criterion_group!(benches, bench);
criterion_main!(benches);
