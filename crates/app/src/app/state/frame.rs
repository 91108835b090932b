//! What the app does once a frame besides applying commands: one hook per feature, in one list
//! ([`FRAME_HOOKS`]) that the shell runs in order — the hooks of [`FrameStage::BeforePanels`] before the
//! panels are drawn, those of [`FrameStage::AfterCommands`] once the frame's commands are applied. The
//! engine glue is rows here too: the chess engine's events before the panels, then after the commands what
//! they asked of it, and the model beside a Connect Four / Hex board; the chess glue sees only an
//! [`EngineScope`] of the state. A hook may return commands; the shell applies them at once. A new feature
//! with a per-frame step adds one row here.

use std::time::{Duration, Instant};

use super::AppState;
use crate::app::analysis::AnalysisState;
use crate::app::command::Command;
use crate::app::compare_model::CompareModel;
use crate::app::document::Document;
use crate::app::effect::Effect;
use crate::app::game_list::GameList;
use crate::app::line::MoveHistory;
use crate::app::messages::Messages;
use crate::app::settings::Settings;
use crate::game::chess::ChessState;
use crate::search::mcts::HISTORY_KEPT;

/// What the window tells the app at the start of a frame.
#[derive(Debug, Clone, Copy)]
pub struct FrameInput {
    /// The user asked to close the window this frame.
    pub close_requested: bool,
    /// The frame's time.
    pub now: Instant,
}

/// What the chess engine's glue may touch of the app: the analysis state it fills, the settings and the
/// document it reads, the open game list (the file review reads its games), model B (its view of a reviewed
/// game goes beside the model's) and the messages it leaves. Nothing else of [`AppState`] is in reach.
pub struct EngineScope<'a> {
    /// The model's view of the chess position, which the glue fills; its `requests` are the glue's inbox.
    pub analysis: &'a mut AnalysisState,
    /// The settings (search, scoring, threads, the review's judge).
    pub settings: &'a Settings,
    /// The game on the board.
    pub doc: &'a Document,
    /// The open game list, if any.
    pub games: Option<&'a GameList>,
    /// Model B beside the model.
    pub compare: &'a mut CompareModel,
    /// Where the glue tells the user what went wrong.
    pub messages: &'a mut Messages,
}

impl EngineScope<'_> {
    /// The chess position on the board.
    pub fn current(&self) -> &ChessState {
        self.doc.line.current()
    }
}

/// The chess engine's glue as the frame drives it (`app::engine_link::EngineLink`, which the shell starts
/// and puts in [`AppState::engine`]). It sees the app only through an [`EngineScope`].
pub trait EngineGlue {
    /// Takes the engine's events into the analysis state (before the panels draw them).
    fn drain(&mut self, scope: &mut EngineScope<'_>);
    /// Takes the engine's events, then sends what changed and what the frame's commands asked (the position,
    /// the analysis state's `requests`).
    fn frame(&mut self, scope: &mut EngineScope<'_>);
    /// Whether a search is running.
    fn searching(&self) -> bool;
}

/// Runs `step` on the state's engine glue, if it has one, with the part of the state the glue may touch.
fn with_engine(state: &mut AppState, step: impl FnOnce(&mut dyn EngineGlue, &mut EngineScope<'_>)) -> bool {
    let Some(mut engine) = state.engine.take() else { return false };
    step(engine.as_mut(), &mut state.engine_scope());
    state.engine = Some(engine);
    true
}

impl AppState {
    /// The part of the state the chess engine's glue may touch.
    pub fn engine_scope(&mut self) -> EngineScope<'_> {
        EngineScope {
            analysis: &mut self.analysis,
            settings: &self.settings,
            doc: &self.doc,
            games: self.files.games.as_ref(),
            compare: &mut self.compare,
            messages: &mut self.view.messages,
        }
    }
}

/// When in the frame a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStage {
    /// Before the panels are drawn (what they show must be up to date).
    BeforePanels,
    /// After the frame's commands.
    AfterCommands,
}

/// One feature's step once a frame.
pub struct FrameHook {
    /// The feature, for readers and logs.
    pub feature: &'static str,
    /// When it runs.
    pub stage: FrameStage,
    /// The step; the commands it returns are applied at once.
    pub run: fn(&mut AppState, &FrameInput) -> Vec<Command>,
}

/// Every feature's per-frame step, in the order they run within their stage.
pub const FRAME_HOOKS: [FrameHook; 13] = [
    FrameHook {
        feature: "file dialog",
        stage: FrameStage::BeforePanels,
        run: |state, _| {
            state.poll_file_dialog();
            Vec::new()
        },
    },
    FrameHook {
        feature: "PGN file read in the background",
        stage: FrameStage::BeforePanels,
        run: |state, _| {
            state.poll_loading();
            Vec::new()
        },
    },
    FrameHook {
        feature: "chess loaded over Connect Four / Hex",
        stage: FrameStage::BeforePanels,
        run: |state, _| {
            state.follow_chess_loads();
            Vec::new()
        },
    },
    FrameHook {
        feature: "question about unsaved changes",
        stage: FrameStage::BeforePanels,
        run: |state, input| {
            state.unsaved_frame(input.close_requested);
            Vec::new()
        },
    },
    FrameHook {
        feature: "chess engine's events",
        stage: FrameStage::BeforePanels,
        run: |state, _| {
            with_engine(state, |engine, scope| engine.drain(scope));
            Vec::new()
        },
    },
    FrameHook {
        feature: "chess engine: the position and the requests",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            if !with_engine(state, |engine, scope| engine.frame(scope)) {
                // No engine (tests that only drive the board): nothing will carry the requests out.
                state.analysis.requests.clear();
            }
            Vec::new()
        },
    },
    FrameHook {
        feature: "model beside a Connect Four / Hex board",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            // Only in the app with an engine: tests that only drive the board start no model.
            if state.engine.is_some() {
                board_model_frame(state);
            }
            Vec::new()
        },
    },
    FrameHook {
        feature: "UCI engine panel",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            state.uci.frame(state.doc.line.current(), &state.settings.uci_engine);
            Vec::new()
        },
    },
    FrameHook {
        feature: "model B beside the model",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            state.compare.frame(state.doc.line.current(), state.doc.line.states_before(HISTORY_KEPT));
            Vec::new()
        },
    },
    FrameHook {
        feature: "solver beside a Connect Four / Hex board",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            let board = state.doc.board_game.as_ref().map(|g| g.current());
            state.board_analysis.oracle.follow(board, state.settings.show_oracle, &state.wake);
            Vec::new()
        },
    },
    FrameHook {
        feature: "Inside the model",
        stage: FrameStage::AfterCommands,
        run: |state, _| inside_frame(state),
    },
    FrameHook {
        feature: "game against the model",
        stage: FrameStage::AfterCommands,
        run: |state, input| {
            let moves = state.play_frame(input.now);
            if state.play.game.as_ref().is_some_and(|g| g.thinking_for(input.now).is_some()) {
                // The time per move runs out without an event to wake the UI.
                state.effects.push(Effect::RepaintAfter(Duration::from_millis(100)));
            }
            moves
        },
    },
    FrameHook {
        feature: "crash journal",
        stage: FrameStage::AfterCommands,
        run: |state, _| {
            // Unsaved work is handed to the journal's thread; nothing is written here.
            state.journal_frame();
            Vec::new()
        },
    },
];

/// The model beside a Connect Four / Hex board follows the board, with the search the settings describe.
fn board_model_frame(state: &mut AppState) {
    let settings = &state.settings;
    let search = &settings.search;
    let run = (search.engine_config(), search.params(settings.scoring), search.go_limits());
    let options = crate::app::model_runtime::session_options(settings);
    state.board_analysis.model.follow(
        state.doc.board_game.as_ref(),
        settings.model_dir.as_deref(),
        &options,
        run,
        &state.wake,
    );
}

/// The *Inside* panel follows the position on the board, with the model that values it: the chess model,
/// or the model beside a Connect Four / Hex board.
fn inside_frame(state: &mut AppState) -> Vec<Command> {
    use crate::app::board_game::BoardState;
    if !state.analysis.inside.enabled {
        return Vec::new();
    }
    let options = crate::app::model_runtime::session_options(&state.settings);
    let inside = &mut state.analysis.inside;
    match state.doc.board_game.as_ref().map(|g| g.current()) {
        Some(board) => {
            let dir = state.board_analysis.model.package_dir();
            let model = dir.map(|d| (d, &options));
            match board {
                BoardState::ConnectFour(s) => inside.frame(s, model, &state.wake),
                BoardState::Hex(s) => inside.frame(s, model, &state.wake),
            }
        }
        None => {
            let dir = state.analysis.model.info().map(|i| i.dir.clone());
            let here = state.doc.line.current().clone();
            inside.frame(&here, dir.as_deref().map(|d| (d, &options)), &state.wake);
        }
    }
    Vec::new()
}

impl AppState {
    /// Runs the hooks of `stage` in order and applies the commands each returns; says whether any hook
    /// returned commands (the window then draws again).
    pub fn run_frame_hooks(&mut self, stage: FrameStage, input: &FrameInput) -> bool {
        let mut any = false;
        for hook in FRAME_HOOKS.iter().filter(|h| h.stage == stage) {
            let commands = (hook.run)(self, input);
            any |= !commands.is_empty();
            for command in commands {
                self.apply(command);
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::command::{BoardMove, DocCommand};
    use crate::app::settings::Settings;

    #[test]
    fn every_hook_has_a_feature_of_its_own_and_the_stages_run_apart() {
        let features: std::collections::BTreeSet<&str> = FRAME_HOOKS.iter().map(|h| h.feature).collect();
        assert_eq!(features.len(), FRAME_HOOKS.len());
        let mut app = AppState::new(Settings::default());
        app.apply(Command::Doc(DocCommand::PlayMove(BoardMove::Notation("e2e4".into()))));
        let input = FrameInput { close_requested: true, now: Instant::now() };
        // The unsaved question holds a close before the panels; nothing after the commands does.
        assert!(!app.run_frame_hooks(FrameStage::AfterCommands, &input));
        assert!(app.effects.is_empty());
        assert!(!app.run_frame_hooks(FrameStage::BeforePanels, &input));
        assert_eq!(app.effects, [Effect::CancelClose]);
    }
}
