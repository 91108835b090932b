//! Settings the user chose, saved between runs (eframe persistence, in the file that
//! [`crate::app::settings_file`] names); runtime state lives in [`crate::app::state`].

use std::path::{Path, PathBuf};

use crate::mav::scoring::Scoring;

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
    /// The scoring rule that ranks moves, drives searches and reviews.
    pub scoring: Scoring,
    /// The rule shown beside it (the values panel's second column and `≠` marks, the eval graph's second
    /// line); max by default, as the paper compares max and mean.
    pub compare_scoring: Scoring,
    /// The search panel's settings.
    pub search: SearchSettings,
    /// Show the analysis panels (action values, search).
    pub show_analysis_panel: bool,
    /// The analysis panel's tabs and panes as the user arranged them, kept as the UI wrote it (text the
    /// app does not read); `None` is the default layout.
    pub panel_layout: Option<String>,
    /// The model package to load; `None` uses the shipped default.
    pub model_dir: Option<PathBuf>,
    /// Where the model runs (auto, CPU, CUDA, CoreML).
    pub model_device: crate::inference::device::Device,
    /// ONNX Runtime threads for the model; 0 chooses from the machine's cores.
    pub model_threads: usize,
    /// The UCI engine beside the model.
    pub uci_engine: UciEngineSettings,
    /// The game on the board: chess (the analysis board), Connect Four or Hex.
    pub game: super::board_game::GameChoice,
    /// Run the solver beside the Connect Four / Hex board.
    pub show_oracle: bool,
    /// The choices of *Game > Play against the model*.
    pub play: super::play::PlaySetup,
    /// Who judges a game review (the model, or a UCI engine with the model beside it).
    pub review: super::uci_review::ReviewSettings,
}

/// The UCI engine panel's settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct UciEngineSettings {
    /// The engine binary; `None` finds `stockfish` on PATH or at /usr/games/stockfish.
    pub path: Option<PathBuf>,
    /// Lines shown (MultiPV).
    pub multipv: u32,
    /// Search threads.
    pub threads: u32,
}

impl Default for UciEngineSettings {
    fn default() -> Self {
        UciEngineSettings { path: None, multipv: 3, threads: 1 }
    }
}

/// The search panel's settings: MCTS parameters (paper §3) and the engine's batching.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SearchSettings {
    /// Simulations per search (M); 0 searches until stopped.
    pub simulations: u64,
    /// The PUCT exploration constant.
    pub c_puct: f64,
    /// ε: the uniform share of the prior (Eq. 1).
    pub epsilon: f64,
    /// k: moves in the greedy part of the prior (Eq. 1).
    pub prior_top_k: usize,
    /// τ: the prior's softmax temperature.
    pub temperature: f64,
    /// b: evaluations per asynchronous batch.
    pub batch: usize,
    /// t0: evaluations not back within this many milliseconds are abandoned.
    pub timeout_ms: u64,
    /// Dynamic virtual counts (n_max halved toward the root, never below n_min) instead of fixed ones.
    pub dynamic_virtual_counts: bool,
    /// The fixed virtual count n_c.
    pub virtual_count: u32,
    /// n_max of the dynamic counts.
    pub n_max: u32,
    /// n_min of the dynamic counts.
    pub n_min: u32,
    /// The model plays the moves (learned world model) instead of the rules.
    pub learned_world_model: bool,
    /// MAV-MCTS or lc0's PUCT; by default as the model answers (lc0's for a Leela or Maia network).
    pub style: crate::search::mcts::SearchStyle,
}

impl Default for SearchSettings {
    fn default() -> Self {
        let p = crate::search::mcts::MctsParams::default();
        let (n_max, n_min) = match p.virtual_counts {
            crate::search::mcts::VirtualCounts::Dynamic { n_max, n_min } => (n_max, n_min),
            crate::search::mcts::VirtualCounts::Fixed(n) => (n, n),
        };
        SearchSettings {
            simulations: 400,
            c_puct: p.c_puct,
            epsilon: p.epsilon,
            prior_top_k: p.prior_top_k,
            temperature: p.temperature.at(0),
            batch: crate::engine::EngineConfig::default().batch_size,
            timeout_ms: 10_000,
            dynamic_virtual_counts: true,
            virtual_count: 2,
            n_max,
            n_min,
            learned_world_model: false,
            style: p.style,
        }
    }
}

impl SearchSettings {
    /// The MCTS parameters these settings and the scoring choice give.
    pub fn params(&self, scoring: Scoring) -> crate::search::mcts::MctsParams {
        use crate::search::mcts::{MctsParams, Temperature, VirtualCounts, WorldModel};
        MctsParams {
            c_puct: self.c_puct,
            scoring,
            prior_top_k: self.prior_top_k.max(1),
            epsilon: self.epsilon,
            temperature: Temperature::constant(self.temperature),
            virtual_counts: if self.dynamic_virtual_counts {
                VirtualCounts::Dynamic { n_max: self.n_max, n_min: self.n_min }
            } else {
                VirtualCounts::Fixed(self.virtual_count)
            },
            world_model: if self.learned_world_model { WorldModel::Learned } else { WorldModel::Rules },
            style: self.style,
            ..MctsParams::default()
        }
    }

    /// A user's search's limits: the simulations set, or until stopped when that is 0.
    pub fn go_limits(&self) -> crate::engine::GoLimits {
        use crate::engine::GoLimits;
        if self.simulations == 0 {
            GoLimits { infinite: true, ..GoLimits::default() }
        } else {
            GoLimits { simulations: Some(self.simulations), ..GoLimits::default() }
        }
    }

    /// The engine's batching and timeout.
    pub fn engine_config(&self) -> crate::engine::EngineConfig {
        crate::engine::EngineConfig {
            batch_size: self.batch.max(1),
            eval_timeout: std::time::Duration::from_millis(self.timeout_ms.max(1)),
            ..crate::engine::EngineConfig::default()
        }
    }
}

impl Settings {
    /// The rules the panels show side by side: the chosen scoring first, then the compared rule (the
    /// chosen one's tie-breaker when both are the same).
    pub fn scoring_rules(&self) -> [Scoring; 2] {
        let compare = if self.compare_scoring == self.scoring {
            self.scoring.tie_breaker()
        } else {
            self.compare_scoring
        };
        [self.scoring, compare]
    }
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
            scoring: Scoring::Mean,
            compare_scoring: Scoring::Max,
            search: SearchSettings::default(),
            show_analysis_panel: true,
            panel_layout: None,
            model_dir: None,
            model_device: crate::inference::device::Device::Auto,
            model_threads: 0,
            uci_engine: UciEngineSettings::default(),
            game: super::board_game::GameChoice::Chess,
            show_oracle: true,
            play: super::play::PlaySetup::default(),
            review: super::uci_review::ReviewSettings::default(),
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

    #[test]
    fn search_settings_give_valid_params() {
        let s = SearchSettings::default();
        s.params(Scoring::Max).validate().expect("default search settings are valid");
        let fixed = SearchSettings { dynamic_virtual_counts: false, virtual_count: 3, ..s };
        let p = fixed.params(Scoring::Mean);
        assert_eq!(p.virtual_counts, crate::search::mcts::VirtualCounts::Fixed(3));
        assert_eq!(p.scoring, crate::inference::evaluator::Scoring::Mean);
        assert_eq!(fixed.engine_config().batch_size, 16);
    }
}
