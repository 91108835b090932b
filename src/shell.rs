//! The eframe application on top of the layers: loads and saves settings, draws the panels (`ui`) over the
//! app state (`app`), applies their commands, runs the app's frame hooks and starts the engine glue. The only
//! module that sees both the app and the UI.

use eframe::egui;

use crate::app::command::Command;
use crate::app::effect::Effect;
use crate::app::engine_link::EngineLink;
use crate::app::settings::{Settings, ThemeChoice};
use crate::app::soak::Soak;
use crate::app::state::AppState;
use crate::app::state::frame::{FrameInput, FrameStage};
use crate::engine::Repaint;
use crate::ui::{UiState, root_ui};
use std::time::Instant;

/// Opens the analysis board window and runs until it is closed.
pub fn run() -> Result<(), eframe::Error> {
    run_with(Vec::new())
}

/// [`run`], applying `startup` (see [`crate::app::startup_commands`]) in the first frame.
pub fn run_with(startup: Vec<Command>) -> Result<(), eframe::Error> {
    run_window(startup, None)
}

/// [`run_with`], driven by the soak workload ([`crate::app::soak`]) for `duration`: its due commands are
/// applied each frame with the panels', the window repaints at about 30 frames a second, and it closes
/// (a normal exit) when the time is up.
pub fn run_soak(
    startup: Vec<Command>,
    config: crate::app::soak::SoakConfig,
    duration: std::time::Duration,
) -> Result<(), eframe::Error> {
    let run = SoakRun { soak: Soak::new(config), started: None, duration, closing: false, described: None };
    run_window(startup, Some(run))
}

fn run_window(startup: Vec<Command>, soak: Option<SoakRun>) -> Result<(), eframe::Error> {
    // Settings live in the config folder; without one the app runs, logging why nothing is saved.
    let persistence_path = crate::app::settings_file::prepare(eframe::storage_dir("mavboard"))
        .map_err(|e| tracing::warn!("settings will not be saved: {e}"))
        .ok();
    let options = eframe::NativeOptions {
        persistence_path,
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("mavboard")
            .with_app_id("mavboard")
            .with_inner_size([1440.0, 880.0])
            .with_min_inner_size([480.0, 360.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "mavboard",
        options,
        Box::new(move |cc| {
            let mut app = MavboardApp::new(cc).open_at_start(startup);
            app.soak = soak;
            // The crash journal: unsaved work is kept while the app runs, and what an app that died left is
            // offered.
            match crate::app::journal::journal_dir() {
                Some(dir) => app.state.start_journal(&dir),
                None => tracing::warn!("no state folder: unsaved work is not kept for a crash"),
            }
            Ok(Box::new(app))
        }),
    )
}

/// The analysis board application.
pub struct MavboardApp {
    /// App state (settings inside are persisted).
    pub state: AppState,
    /// Widget state.
    pub ui: UiState,
    applied_theme: Option<ThemeChoice>,
    seen_generation: u64,
    repaint: Option<crate::engine::Repaint>,
    /// Commands from the command line (a file or a FEN to open), applied in the first frame.
    startup: Vec<Command>,
    /// The soak workload driving the window (`mavboard soak`), if any.
    soak: Option<SoakRun>,
}

/// The soak workload as the window runs it: when it started (the first frame) and for how long it runs.
struct SoakRun {
    soak: Soak,
    started: Option<std::time::Instant>,
    duration: std::time::Duration,
    /// The window was asked to close (the time is up).
    closing: bool,
    /// The second of the last line on the app's state in the log (one every 15 s).
    described: Option<u64>,
}

impl SoakRun {
    /// The workload's commands for this frame; when the time is up, a request to close the window.
    fn frame(&mut self, ctx: &egui::Context, state: &AppState) -> Vec<Command> {
        let started = *self.started.get_or_insert_with(std::time::Instant::now);
        let elapsed = started.elapsed();
        let round = self.soak.round();
        let commands = self.soak.due(elapsed, state);
        if self.soak.round() != round {
            tracing::info!(round = self.soak.round(), elapsed_s = elapsed.as_secs(), "soak: next cycle");
        }
        let second = elapsed.as_secs();
        if second.is_multiple_of(15) && self.described != Some(second) {
            self.described = Some(second);
            tracing::info!(elapsed_s = second, "soak: {}", crate::app::soak::describe(state));
        }
        for command in &commands {
            tracing::info!(elapsed_s = elapsed.as_secs(), "soak: {command:?}");
        }
        for error in self.soak.new_errors(state) {
            tracing::info!(elapsed_s = elapsed.as_secs(), "soak: the app showed an error: {error}");
        }
        if elapsed >= self.duration {
            if state.files.unsaved.is_none() {
                if !self.closing {
                    tracing::info!(elapsed_s = elapsed.as_secs(), "soak: time is up, closing the window");
                    self.closing = true;
                }
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        } else {
            ctx.request_repaint_after(std::time::Duration::from_millis(33));
        }
        commands
    }
}

impl MavboardApp {
    /// Creates the app, restoring saved settings when eframe has storage.
    pub fn new(cc: &eframe::CreationContext<'_>) -> MavboardApp {
        let settings: Settings =
            cc.storage.and_then(|s| eframe::get_value(s, Settings::STORAGE_KEY)).unwrap_or_default();
        let ctx = cc.egui_ctx.clone();
        // The heatmap's shader path needs the wgpu renderer (eframe's default multisampling: 1 sample);
        // under glow the painter draws it.
        if let Some(render_state) = cc.wgpu_render_state.as_ref() {
            crate::ui::heatmap_gpu::register(render_state, 1, &ctx);
        }
        MavboardApp::with_engine(settings, std::sync::Arc::new(move || ctx.request_repaint()))
    }

    /// Creates the app with its engine, loading the model of the settings (the shipped default when none
    /// is set). `repaint` wakes the UI when the engine has news. If the engine cannot start, the app runs
    /// without one and says why.
    pub fn with_engine(settings: Settings, repaint: Repaint) -> MavboardApp {
        let mut app = MavboardApp::with_settings(settings);
        match EngineLink::start(repaint) {
            Ok(mut link) => {
                let dir = app.state.settings.model_dir.clone();
                link.load_model(dir.as_deref(), &mut app.state.engine_scope());
                app.state.engine = Some(Box::new(link));
            }
            Err(e) => {
                app.state.view.messages.error(format!("The analysis engine could not start: {e}"));
            }
        }
        app
    }

    /// Creates the app with the given settings (tests, or no storage).
    pub fn with_settings(settings: Settings) -> MavboardApp {
        MavboardApp {
            state: AppState::new(settings),
            ui: UiState::default(),
            applied_theme: None,
            seen_generation: 0,
            repaint: None,
            startup: Vec::new(),
            soak: None,
        }
    }

    /// Commands to apply in the first frame, before anything the user does: what the command line asked
    /// to open (see [`crate::app::startup_commands`]).
    pub fn open_at_start(mut self, commands: Vec<Command>) -> MavboardApp {
        self.startup = commands;
        self
    }

    /// One frame: the features' hooks before the panels ([`crate::app::state::frame`], the engine's events
    /// among them), the panels, the commands they returned, the hooks after the commands (the engine glue
    /// first), and what the commands asked of the window ([`Effect`]).
    pub fn frame_ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        // Background threads of the app (file dialog, PGN reading, UCI engine) wake this window.
        let repaint = self
            .repaint
            .get_or_insert_with(|| {
                let ctx = ctx.clone();
                std::sync::Arc::new(move || ctx.request_repaint())
            })
            .clone();
        self.state.wake = repaint.clone();
        if self.applied_theme != Some(self.state.settings.theme) {
            ctx.set_theme(match self.state.settings.theme {
                ThemeChoice::Dark => egui::Theme::Dark,
                ThemeChoice::Light => egui::Theme::Light,
            });
            self.applied_theme = Some(self.state.settings.theme);
        }
        let input = FrameInput {
            close_requested: ctx.input(|i| i.viewport().close_requested()),
            now: Instant::now(),
        };
        self.state.run_frame_hooks(FrameStage::BeforePanels, &input);
        let mut commands = std::mem::take(&mut self.startup);
        if let Some(soak) = self.soak.as_mut() {
            commands.extend(soak.frame(&ctx, &self.state));
        }
        commands.extend(root_ui(ui, &self.state, &mut self.ui));
        for command in commands {
            self.state.apply(command);
        }
        // The features' steps after the commands (the engine glue, the UCI panel, the solver, Inside, the game
        // against the model, the crash journal); commands they return were applied, and the window draws
        // again.
        if self.state.run_frame_hooks(FrameStage::AfterCommands, &input) {
            ctx.request_repaint();
        }
        // What the commands asked of the window.
        for effect in std::mem::take(&mut self.state.effects) {
            match effect {
                Effect::CopyText(text) => ctx.copy_text(text),
                Effect::CloseWindow => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
                Effect::CancelClose => ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose),
                Effect::RepaintAfter(after) => ctx.request_repaint_after(after),
            }
        }
        if self.state.doc.position_generation != self.seen_generation {
            self.seen_generation = self.state.doc.position_generation;
            self.ui.board.reset();
            ctx.request_repaint();
        }
        if self.applied_theme != Some(self.state.settings.theme) {
            ctx.request_repaint();
        }
    }
}

impl Drop for MavboardApp {
    /// Ends the engines and the inspection thread first, then lets the threads the engines leave behind (a
    /// batch being finished, a model still loading, an internal search) end, so that the process never exits
    /// with one of them inside ONNX Runtime.
    fn drop(&mut self) {
        self.state.engine = None;
        self.state.board_analysis.model = Default::default();
        self.state.analysis.inside = Default::default();
        crate::engine::detached::wait(std::time::Duration::from_secs(10));
    }
}

impl eframe::App for MavboardApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame_ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, Settings::STORAGE_KEY, &self.state.settings);
    }
}
