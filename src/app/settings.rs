//! Settings the user chose, saved between runs (eframe persistence); runtime state lives in
//! [`crate::app::state`].

use std::path::{Path, PathBuf};

/// How many recent files the File menu remembers.
pub const MAX_RECENT_FILES: usize = 10;

/// Light or dark colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThemeChoice {
    /// Dark background.
    #[default]
    Dark,
    /// Light background.
    Light,
}

/// How a value distribution over buckets becomes one number (see DESIGN.md, value buckets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoringChoice {
    /// The centre of the most probable bucket.
    Max,
    /// The probability-weighted mean of the bucket centres.
    #[default]
    Mean,
}

impl ScoringChoice {
    /// The name shown in menus.
    pub fn label(self) -> &'static str {
        match self {
            ScoringChoice::Max => "Max (most likely bucket)",
            ScoringChoice::Mean => "Mean (expected value)",
        }
    }
}

/// Everything that is saved between runs. Panel sizes are saved by egui's own memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Colour theme.
    pub theme: ThemeChoice,
    /// Black at the bottom.
    pub flipped: bool,
    /// Draw a-h / 1-8 along the board.
    pub show_coordinates: bool,
    /// Dots on the squares the selected piece can move to.
    pub show_legal_moves: bool,
    /// Show the move list panel.
    pub show_moves_panel: bool,
    /// Show the position setup panel.
    pub show_setup_panel: bool,
    /// Files opened or saved, most recent first.
    pub recent_files: Vec<PathBuf>,
    /// Max or mean scoring of value distributions.
    pub scoring: ScoringChoice,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            theme: ThemeChoice::Dark,
            flipped: false,
            show_coordinates: true,
            show_legal_moves: true,
            show_moves_panel: true,
            show_setup_panel: true,
            recent_files: Vec::new(),
            scoring: ScoringChoice::Mean,
        }
    }
}

impl Settings {
    /// The key under which eframe stores the settings.
    pub const STORAGE_KEY: &'static str = "mavboard.settings";

    /// Puts `path` first in the recent files, without duplicates, keeping at most
    /// [`MAX_RECENT_FILES`].
    pub fn remember_file(&mut self, path: &Path) {
        self.recent_files.retain(|p| p != path);
        self.recent_files.insert(0, path.to_path_buf());
        self.recent_files.truncate(MAX_RECENT_FILES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_unique_newest_first_and_bounded() {
        let mut s = Settings::default();
        for i in 0..15 {
            s.remember_file(Path::new(&format!("/tmp/{i}.pgn")));
        }
        s.remember_file(Path::new("/tmp/10.pgn"));
        assert_eq!(s.recent_files.len(), MAX_RECENT_FILES);
        assert_eq!(s.recent_files[0], Path::new("/tmp/10.pgn"));
        assert_eq!(s.recent_files.iter().filter(|p| p.ends_with("10.pgn")).count(), 1);
    }

    #[test]
    fn old_or_partial_settings_still_load() {
        let s: Settings = serde_json::from_str(r#"{"flipped": true}"#).expect("partial settings");
        assert!(s.flipped);
        assert!(s.show_coordinates);
        let round: Settings =
            serde_json::from_str(&serde_json::to_string(&s).expect("serialize")).expect("round trip");
        assert_eq!(round, s);
    }
}
