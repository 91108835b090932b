//! App state and glue: persisted [`settings`] apart from the runtime [`state`]; panels return
//! [`command`]s that are applied at the end of each frame ([`shell`]).

pub mod analysis;
pub mod board_game;
pub mod board_model;
pub mod chess960;
pub mod command;
pub mod engine_link;
pub mod file_dialog;
pub mod file_review;
pub mod game;
pub mod game_list;
pub mod game_review;
pub mod internal_search;
pub mod line;
pub mod messages;
pub mod model_runtime;
pub mod pgn_loader;
pub mod position_setup;
pub mod pv_preview;
pub mod settings;
pub mod shell;
pub mod state;
pub mod tree_explorer;
pub mod uci_panel;
pub mod unsaved;

pub use shell::MavboardApp;

/// Opens the analysis board window and runs until it is closed.
pub fn run() -> Result<(), eframe::Error> {
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("mavboard")
            .with_app_id("mavboard")
            .with_inner_size([1440.0, 880.0])
            .with_min_inner_size([480.0, 360.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native("mavboard", options, Box::new(|cc| Ok(Box::new(MavboardApp::new(cc)))))
}
