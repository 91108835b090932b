//! The *Engine and model* section with the real engine: switching threads reloads the model and the status
//! shows the provider in use; a device this build lacks falls back to the CPU with a notice; both persist.

use crate::ui_common;

use std::time::Duration;

use eframe::egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::settings::Settings;
use mavboard::inference::device::{Device, Provider, SessionThreads};
use mavboard::shell::MavboardApp;
use ui_common::{app_with_model, step_until};

const WAIT: Duration = Duration::from_secs(60);

fn loaded(app: &MavboardApp) -> bool {
    matches!(app.state.analysis.model, ModelStatus::Ready(_)) && app.state.analysis.device.is_some()
}

fn open_section(h: &mut Harness<'_, MavboardApp>) {
    // Fold the action values away so the section is in view.
    h.get_by_label("Action values").click();
    let _ = h.try_run();
    h.get_by_label("Engine and model").click();
    let _ = h.try_run();
}

#[test]
fn switching_threads_reloads_the_model_and_the_status_shows_the_provider() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, loaded), "the model loads");
    let _ = h.try_run();
    assert_eq!(h.state().state.analysis.device.as_ref().map(|d| d.provider), Some(Provider::Cpu));
    h.get_by_label("on CPU");
    open_section(&mut h);
    let auto = SessionThreads::default().intra_op;
    h.get_by_label(&format!("CPU (auto, {auto} thread{})", if auto == 1 { "" } else { "s" }));
    h.get_by_role_and_label(Role::ComboBox, "Threads").click();
    let _ = h.try_run();
    h.get_by_label("2").click();
    h.step();
    assert_eq!(h.state().state.settings.model_threads, 2);
    assert!(h.state().state.analysis.device.is_none(), "the model is reloading");
    assert!(matches!(h.state().state.analysis.model, ModelStatus::Loading(_)));
    assert!(step_until(&mut h, WAIT, loaded), "the model loads again");
    let _ = h.try_run();
    h.get_by_label("CPU (auto, 2 threads)");
    h.get_by_label("on CPU");
    // The choice is saved with the settings.
    let saved = serde_json::to_string(&h.state().state.settings).expect("serialize");
    let back: Settings = serde_json::from_str(&saved).expect("deserialize");
    assert_eq!((back.model_threads, back.model_device), (2, Device::Auto));
}

#[test]
fn a_device_this_build_lacks_falls_back_to_the_cpu_and_says_so() {
    if cfg!(feature = "coreml") {
        println!("SKIPPED: this build has CoreML");
        return;
    }
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, loaded), "the model loads");
    let _ = h.try_run();
    open_section(&mut h);
    h.get_by_role_and_label(Role::ComboBox, "Device").click();
    let _ = h.try_run();
    h.get_by_label("CoreML (not in this build)").click();
    h.step();
    assert_eq!(h.state().state.settings.model_device, Device::CoreMl);
    assert!(step_until(&mut h, WAIT, loaded), "the model loads on the CPU");
    let _ = h.try_run();
    let status = h.state().state.analysis.device.clone().expect("status");
    assert_eq!((status.requested, status.provider), (Device::CoreMl, Provider::Cpu));
    h.get_by_label("on CPU (fallback)");
    h.get_by_label_contains("Fallback: coreml was requested but this mavboard was built without it");
    assert!(
        h.state().state.view.messages.items().iter().any(|m| m.text.contains("CPU instead")),
        "a dismissible message says it too"
    );
    // Analysis goes on with the model.
    assert!(step_until(&mut h, WAIT, |app| app.state.analysis.report.is_some()));
}
