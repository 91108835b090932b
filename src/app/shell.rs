//! The eframe application: loads and saves settings, draws the panels, applies their commands.

use eframe::egui;

use super::command::Command;
use super::engine_link::EngineLink;
use super::settings::{Settings, ThemeChoice};
use super::state::AppState;
use crate::engine::Repaint;
use crate::ui::{UiState, root_ui};

/// The analysis board application.
pub struct MavboardApp {
    /// App state (settings inside are persisted).
    pub state: AppState,
    /// Widget state.
    pub ui: UiState,
    /// The engine that runs the model (none in tests that only drive the board).
    pub engine: Option<EngineLink>,
    applied_theme: Option<ThemeChoice>,
    seen_generation: u64,
    repaint: Option<crate::engine::Repaint>,
    /// Commands from the command line (a file or a FEN to open), applied in the first frame.
    startup: Vec<Command>,
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
                link.load_model(dir.as_deref(), &mut app.state);
                app.engine = Some(link);
            }
            Err(e) => {
                app.state.messages.error(format!("The analysis engine could not start: {e}"));
            }
        }
        app
    }

    /// Creates the app with the given settings (tests, or no storage).
    pub fn with_settings(settings: Settings) -> MavboardApp {
        MavboardApp {
            state: AppState::new(settings),
            ui: UiState::default(),
            engine: None,
            applied_theme: None,
            seen_generation: 0,
            repaint: None,
            startup: Vec::new(),
        }
    }

    /// Commands to apply in the first frame, before anything the user does: what the command line asked
    /// to open (see [`super::startup_commands`]).
    pub fn open_at_start(mut self, commands: Vec<Command>) -> MavboardApp {
        self.startup = commands;
        self
    }

    /// One frame: poll the file dialog, draw, then apply the commands the panels returned.
    pub fn frame_ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if self.applied_theme != Some(self.state.settings.theme) {
            ctx.set_theme(match self.state.settings.theme {
                ThemeChoice::Dark => egui::Theme::Dark,
                ThemeChoice::Light => egui::Theme::Light,
            });
            self.applied_theme = Some(self.state.settings.theme);
        }
        self.state.poll_file_dialog(&ctx);
        self.state.poll_loading();
        self.state.follow_chess_loads();
        self.state.unsaved_frame(&ctx);
        if let Some(link) = self.engine.as_mut() {
            link.drain(&mut self.state);
        }
        let mut commands = std::mem::take(&mut self.startup);
        commands.extend(root_ui(ui, &self.state, &mut self.ui));
        for command in commands {
            self.state.apply(command, &ctx);
        }
        if let Some(link) = self.engine.as_mut() {
            link.frame(&mut self.state);
        } else {
            self.state.analysis.requests.clear();
        }
        {
            use super::line::MoveHistory;
            self.state.uci.frame(self.state.line.current(), &self.state.settings.uci_engine);
        }
        // The solver beside a Connect Four / Hex board follows its position.
        let repaint = self.repaint.get_or_insert_with(|| {
            let ctx = ctx.clone();
            std::sync::Arc::new(move || ctx.request_repaint())
        });
        let board = self.state.board_game.as_ref().map(|g| g.current());
        self.state.oracle.follow(board, self.state.settings.show_oracle, repaint);
        // The model beside it, in the app with an engine (tests that only drive the board have none).
        if self.engine.is_some() {
            let settings = &self.state.settings;
            let search = &settings.search;
            let limits = if search.simulations == 0 {
                crate::engine::GoLimits { infinite: true, ..Default::default() }
            } else {
                crate::engine::GoLimits { simulations: Some(search.simulations), ..Default::default() }
            };
            let run = (search.engine_config(), search.params(settings.scoring), limits);
            let options = super::model_runtime::session_options(settings);
            let preferred = settings.model_dir.clone();
            self.state.board_model.follow(
                self.state.board_game.as_ref(),
                preferred.as_deref(),
                &options,
                run,
                repaint,
            );
        }
        // In a game against the model, the chooser moves when it is its turn.
        let now = std::time::Instant::now();
        let moves = self.state.play_frame(now);
        if !moves.is_empty() {
            ctx.request_repaint();
        }
        for command in moves {
            self.state.apply(command, &ctx);
        }
        if self.state.play.game.as_ref().is_some_and(|g| g.thinking_for(now).is_some()) {
            // The time per move runs out without an event to wake the UI.
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        if self.state.position_generation != self.seen_generation {
            self.seen_generation = self.state.position_generation;
            self.ui.board.reset();
            ctx.request_repaint();
        }
        if self.applied_theme != Some(self.state.settings.theme) {
            ctx.request_repaint();
        }
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
