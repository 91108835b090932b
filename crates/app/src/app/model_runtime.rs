//! Where and how the model runs in the app: the device (auto, CPU, CUDA, CoreML) and ONNX Runtime threads
//! chosen in the settings, the session options they give, and the provider actually in use.
//!
//! The app never refuses to analyse because of a device: a requested provider that is not compiled into
//! this build, or that ONNX Runtime cannot enable, falls back to the CPU, and the notice says why (in the
//! model panel, the status bar and a message).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::settings::Settings;
use crate::engine::{EvaluatorFactory, FactoryError};
use crate::inference::device::{Device, DeviceStatus, SessionThreads};
use crate::inference::load::load_evaluator;
use crate::inference::onnx::SessionOptions;
use crate::inference::onnx::session::SessionError;
use crate::inference::thread_plan::ThreadPlan;
use crate::inference::{LoadError, LoadedModel};

/// Where the loader thread leaves the device status of the session it opened, for the UI.
pub type DeviceSlot = Arc<Mutex<Option<DeviceStatus>>>;

/// Most threads the settings offer.
pub const MAX_THREADS: usize = 16;

/// The session options the settings ask for (threads 0: the automatic choice).
pub fn session_options(settings: &Settings) -> SessionOptions {
    let threads = if settings.model_threads == 0 {
        SessionThreads::default()
    } else {
        SessionThreads { intra_op: settings.model_threads.min(MAX_THREADS) }
    };
    SessionOptions { device: settings.model_device, threads, ..SessionOptions::default() }
}

/// How the app's engine runs the local package in `dir`: the settings' threads (0: automatic) split into
/// inference workers and each one's session threads by [`ThreadPlan`], on the settings' device.
pub fn engine_plan(settings: &Settings, dir: &Path) -> (ThreadPlan, SessionOptions) {
    let total = settings.model_threads.min(MAX_THREADS);
    let plan = ThreadPlan::for_package(settings.model_device, total, dir);
    (plan, SessionOptions { threads: plan.threads, ..session_options(settings) })
}

/// Opens the package with `options`; when the requested provider cannot be used, opens it on the CPU and
/// says why in the status's notice.
pub fn open_with_fallback(dir: &Path, options: &SessionOptions) -> Result<LoadedModel, LoadError> {
    match load_evaluator(dir, options) {
        Err(LoadError::Session(SessionError::Device(why))) if options.device != Device::Cpu => {
            let cpu = SessionOptions { device: Device::Cpu, ..options.clone() };
            let mut model = load_evaluator(dir, &cpu)?;
            model.device.requested = options.device;
            model.device.notice = Some(format!("{why}; the model runs on the CPU instead"));
            Ok(model)
        }
        loaded => loaded,
    }
}

/// A factory that opens the package in `dir` on each inference worker (falling back to the CPU as
/// [`open_with_fallback`] does) and leaves the device status in `slot`.
pub fn model_factory(dir: PathBuf, options: SessionOptions, slot: DeviceSlot) -> EvaluatorFactory {
    Arc::new(move |_worker| {
        let model = open_with_fallback(&dir, &options).map_err(|e| Box::new(e) as FactoryError)?;
        if let Ok(mut s) = slot.lock() {
            *s = Some(model.device);
        }
        Ok(model.evaluator)
    })
}

/// How the panels describe the device in use, e.g. `CPU (auto, 2 threads)`.
pub fn device_summary(status: &DeviceStatus, settings: &Settings) -> String {
    let threads = session_options(settings).threads.intra_op;
    let fallback = if status.notice.is_some() { ", fallback" } else { "" };
    format!(
        "{} ({}{fallback}, {threads} thread{})",
        status.provider,
        status.requested,
        if threads == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_give_the_session_options() {
        let mut s = Settings::default();
        assert_eq!(session_options(&s).threads, SessionThreads::default());
        assert_eq!(session_options(&s).device, Device::Auto);
        s.model_threads = 3;
        s.model_device = Device::Cpu;
        let o = session_options(&s);
        assert_eq!((o.device, o.threads.intra_op), (Device::Cpu, 3));
        s.model_threads = 1000;
        assert_eq!(session_options(&s).threads.intra_op, MAX_THREADS);
    }

    #[test]
    fn the_engine_gets_one_worker_per_thread_for_a_small_model() {
        let dir = match crate::model::package::default_package_dir() {
            Ok(d) => d,
            Err(e) => return println!("SKIPPED: no shipped model ({e})"),
        };
        let mut s = Settings { model_threads: 3, model_device: Device::Cpu, ..Settings::default() };
        let (plan, options) = engine_plan(&s, &dir);
        assert_eq!((plan.workers, options.threads.intra_op), (3, 1));
        s.model_threads = 0;
        let (plan, options) = engine_plan(&s, &dir);
        assert_eq!((plan.workers, options.threads.intra_op), (SessionThreads::default().intra_op, 1));
        assert_eq!(options.device, Device::Cpu);
    }

    #[test]
    fn a_device_not_built_in_falls_back_to_the_cpu_with_a_notice() {
        let dir = match crate::model::package::default_package_dir() {
            Ok(d) => d,
            Err(e) => return println!("SKIPPED: no shipped model ({e})"),
        };
        // This build has no CoreML unless it was compiled with the feature (then this test runs it).
        if cfg!(feature = "coreml") {
            return println!("SKIPPED: CoreML is compiled in");
        }
        let options = SessionOptions { device: Device::CoreMl, ..SessionOptions::default() };
        let status = match open_with_fallback(&dir, &options) {
            Ok(model) => model.device,
            Err(LoadError::Session(SessionError::Runtime(e))) => {
                return println!("SKIPPED: no ONNX Runtime ({e})");
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!(status.provider, crate::inference::device::Provider::Cpu);
        assert_eq!(status.requested, Device::CoreMl);
        let notice = status.notice.expect("a fallback notice");
        assert!(notice.contains("coreml") && notice.contains("CPU instead"), "{notice}");
    }
}
