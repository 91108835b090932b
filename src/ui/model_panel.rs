//! The *Engine and model* section: the loaded package's facts from mav.json, the device (auto, CPU, CUDA,
//! CoreML) and ONNX Runtime threads, and the provider actually in use with any fallback notice.

use eframe::egui;

use crate::app::analysis::ModelStatus;
use crate::app::command::AnalysisCommand;
use crate::app::command::Command;
use crate::app::model_runtime::{MAX_THREADS, device_summary, session_options};
use crate::app::state::AppState;
use crate::inference::device::{Device, SessionThreads};

/// How a device reads in the menu; providers this build lacks say so (choosing one falls back to the CPU).
fn device_label(d: Device) -> String {
    let (name, built) = match d {
        Device::Auto => ("auto", true),
        Device::Cpu => ("CPU", true),
        Device::Cuda => ("CUDA", cfg!(feature = "cuda")),
        Device::CoreMl => ("CoreML", cfg!(feature = "coreml")),
    };
    if built { name.to_owned() } else { format!("{name} (not in this build)") }
}

/// How a thread count reads in the menu (0: automatic).
fn threads_label(n: usize) -> String {
    if n == 0 { format!("automatic ({})", SessionThreads::default().intra_op) } else { n.to_string() }
}

/// The section's contents.
pub fn model_panel_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let s = &state.settings;
    match &state.analysis.model {
        ModelStatus::Ready(i) | ModelStatus::Loading(i) => {
            egui::Grid::new("model_info").num_columns(2).spacing([8.0, 2.0]).show(ui, |ui| {
                for (k, v) in [
                    ("Package", i.name.clone()),
                    ("Format", i.format.clone()),
                    ("Buckets", i.buckets.to_string()),
                    ("Parameters", i.parameters.to_string()),
                    ("Folder", i.dir.display().to_string()),
                ] {
                    ui.weak(k);
                    ui.label(v);
                    ui.end_row();
                }
            });
        }
        ModelStatus::Failed(e) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        ModelStatus::None => {
            ui.weak("No model is loaded.");
        }
    }
    let (mut device, mut threads) = (s.model_device, s.model_threads);
    egui::Grid::new("model_runtime").num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
        let l = ui
            .label("Device")
            .on_hover_text("Where ONNX Runtime runs the model; changing it reloads the model");
        egui::ComboBox::from_id_salt("model_device")
            .selected_text(device_label(device))
            .show_ui(ui, |ui| {
                for d in Device::ALL {
                    ui.selectable_value(&mut device, d, device_label(d));
                }
            })
            .response
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Threads").on_hover_text(
            "CPU threads for the model: a search runs one inference worker of one ONNX Runtime thread \
                 per thread (one session with them all for a model of 256 MiB or more); changing it reloads \
                 the model",
        );
        egui::ComboBox::from_id_salt("model_threads")
            .selected_text(threads_label(threads))
            .show_ui(ui, |ui| {
                for n in [0, 1, 2, 4, 8, MAX_THREADS] {
                    ui.selectable_value(&mut threads, n, threads_label(n));
                }
            })
            .response
            .labelled_by(l.id);
        ui.end_row();
        ui.label("In use");
        match (&state.analysis.device, &state.analysis.model) {
            (Some(status), _) => {
                ui.label(device_summary(status, s));
            }
            (None, ModelStatus::Loading(_)) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("loading ({} threads)", session_options(s).threads.intra_op));
                });
            }
            (None, _) => {
                ui.weak("–");
            }
        }
        ui.end_row();
    });
    if let Some(notice) = state.analysis.device.as_ref().and_then(|d| d.notice.as_ref()) {
        ui.colored_label(ui.visuals().warn_fg_color, format!("Fallback: {notice}"));
    }
    if (device, threads) != (s.model_device, s.model_threads) {
        out.push(Command::Analysis(AnalysisCommand::SetModelRuntime { device, threads }));
    }
    out
}
