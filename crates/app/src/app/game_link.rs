//! One engine glue for every game: an [`Engine`] for a game `S`, with what the app has told it — whether a
//! model is loaded, the config last sent, the `Go`s still out and what the last one was for — and the
//! internal search running beside it. The chess glue ([`super::engine_link`]) and the model beside a
//! Connect Four or Hex board ([`super::board_model`]) each hold one and add only what is theirs.
//!
//! The engine answers every `Go` with exactly one `Done`, so counting the `Go`s still out tells whether a
//! search is running even when a stopped search's `Done` arrives after the next `Go` was sent.

use crate::engine::internal::{InternalRun, InternalRunError, InternalSource};
use crate::engine::{
    Command, Engine, EngineConfig, EngineError, EvaluatorFactory, Event, GoLimits, Repaint, SearchReport,
};
use crate::inference::evaluator::{EvalError, EvalResult};
use crate::mav::state::MavState;
use crate::search::internal::{InternalConfig, InternalReport};
use crate::search::mcts::{MctsParams, MoveStats};

/// What a `Go` is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoKind {
    /// One model call that values every legal move (the action-values panel).
    Evaluate,
    /// A search the user (or the model's turn in a game against it) started.
    Search,
}

/// Why the glue could not do what it was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// No model is loaded (or its load failed).
    #[error("no model is loaded: choose a model package (Engine > Load model…)")]
    NoModel,
    /// The engine thread has stopped.
    #[error("the engine thread has stopped; restart mavboard")]
    EngineGone,
    /// An internal search is already running.
    #[error("an internal search is already running")]
    Busy,
    /// The engine thread could not be started.
    #[error(transparent)]
    Start(#[from] EngineError),
    /// The engine was started for another game than the one on the board.
    #[error("the engine was started for another game than the one on the board")]
    OtherGame,
    /// The internal search could not start, or its run failed.
    #[error(transparent)]
    Internal(#[from] InternalRunError),
}

/// What the engine said, as the glue's owner takes it (see [`GameLink::next_event`]).
#[derive(Debug)]
pub enum LinkEvent<S: MavState> {
    /// A running search's report.
    Info(SearchReport),
    /// A `Go` was answered.
    Done {
        /// Its final report, if a search ran.
        report: Option<SearchReport>,
        /// Every `Go` sent has now been answered.
        idle: bool,
        /// The last `Go` sent was a search (not a one-call evaluation).
        after_search: bool,
    },
    /// The model is loaded and in use.
    Ready,
    /// The model could not be loaded (the engine's reason); the glue no longer has a model.
    LoadFailed(String),
    /// Something else failed; the engine goes on serving.
    Error(EngineError),
    /// The answer to [`Command::Evaluate`].
    Evaluated {
        /// The command's tag.
        tag: u64,
        /// One result per request.
        results: Vec<Result<EvalResult<S>, EvalError>>,
    },
    /// The answer to [`Command::Explore`].
    Explored {
        /// The search tree's root (position text), `None` when there is no tree.
        root: Option<String>,
        /// The path asked for.
        path: Vec<String>,
        /// The children's statistics, or why there are none.
        children: Result<Vec<MoveStats>, crate::engine::ExploreError>,
    },
}

/// An engine for the game `S` and the bookkeeping of what it was told.
pub struct GameLink<S: MavState> {
    engine: Engine<S>,
    /// `Go`s sent and not yet answered by `Done`.
    gos_out: usize,
    /// What the last `Go` sent was for.
    last_go: Option<GoKind>,
    /// Whether a model is loaded or loading (a `Go` without one only produces an error).
    has_model: bool,
    /// The engine config last sent.
    config: EngineConfig,
    /// Where internal search gets the loaded model.
    internal_source: Option<InternalSource<S>>,
    /// The internal search in progress.
    internal_run: Option<InternalRun>,
    /// Wakes the UI after every event (and when an internal search ends).
    repaint: Repaint,
}

impl<S: MavState> GameLink<S> {
    /// Starts the engine thread at `start` (the game's start position) with no model.
    pub fn start(start: S, repaint: Repaint) -> Result<GameLink<S>, EngineError> {
        let config = EngineConfig::default();
        Ok(GameLink {
            engine: Engine::start_at(start, config, repaint.clone())?,
            gos_out: 0,
            last_go: None,
            has_model: false,
            config,
            internal_source: None,
            internal_run: None,
            repaint,
        })
    }

    /// Loads evaluators from `factory` on `workers` inference workers; internal search takes the model
    /// from `internal`.
    pub fn load(
        &mut self,
        factory: EvaluatorFactory<S>,
        workers: usize,
        internal: InternalSource<S>,
    ) -> Result<(), LinkError> {
        self.internal_source = Some(internal);
        self.has_model = true;
        let sent = self.engine.send(Command::LoadEvaluator { factory, workers: workers.max(1) });
        sent.map_err(|_| {
            self.forget_model();
            LinkError::EngineGone
        })
    }

    /// Forgets the model (its load failed): searches are refused until the next [`GameLink::load`].
    pub fn forget_model(&mut self) {
        self.has_model = false;
        self.internal_source = None;
    }

    /// Whether a model is loaded or loading.
    pub fn has_model(&self) -> bool {
        self.has_model
    }

    /// The position to analyse: the start and the moves played since, in the game's notation.
    pub fn set_position(&self, start: S, moves: Vec<String>) -> Result<(), LinkError> {
        self.send(Command::SetPosition { start, moves })
    }

    /// Sends a `Go` of `kind` (an evaluation is one simulation; a search takes `limits`), first sending
    /// `config` when it changed.
    pub fn go(
        &mut self,
        kind: GoKind,
        limits: GoLimits,
        params: MctsParams,
        config: EngineConfig,
    ) -> Result<(), LinkError> {
        if !self.has_model {
            return Err(LinkError::NoModel);
        }
        if config != self.config {
            self.config = config;
            self.send(Command::SetConfig(config))?;
        }
        let limits = match kind {
            GoKind::Evaluate => GoLimits { simulations: Some(1), ..GoLimits::default() },
            GoKind::Search => limits,
        };
        self.send(Command::Go { limits, params })?;
        self.gos_out += 1;
        self.last_go = Some(kind);
        Ok(())
    }

    /// Stops the running search, if a `Go` is out.
    pub fn stop(&self) -> Result<(), LinkError> {
        if self.gos_out > 0 { self.send(Command::Stop) } else { Ok(()) }
    }

    /// Sends any other command (a review's `Evaluate`, the explorer's `Explore`).
    pub fn send(&self, command: Command<S>) -> Result<(), LinkError> {
        self.engine.send(command).map_err(|_| LinkError::EngineGone)
    }

    /// Whether the last `Go` sent was a search that is still out.
    pub fn searching(&self) -> bool {
        self.gos_out > 0 && self.last_go == Some(GoKind::Search)
    }

    /// Starts internal search from `root` on its own thread, with the loaded model (one run at a time).
    pub fn start_internal(&mut self, root: S, config: InternalConfig) -> Result<(), LinkError> {
        if self.internal_run.is_some() {
            return Err(LinkError::Busy);
        }
        let source = self.internal_source.clone().ok_or(LinkError::NoModel)?;
        let run =
            InternalRun::start(source, root, config, self.repaint.clone()).map_err(LinkError::Internal)?;
        self.internal_run = Some(run);
        Ok(())
    }

    /// The internal search's result, once it has arrived (then the next run may start).
    pub fn poll_internal(&mut self) -> Option<Result<InternalReport, LinkError>> {
        let result = self.internal_run.as_ref().and_then(InternalRun::try_result)?;
        self.internal_run = None;
        Some(result.map_err(LinkError::Internal))
    }

    /// The next event that has arrived, if any, with the `Go` bookkeeping applied.
    pub fn next_event(&mut self) -> Option<LinkEvent<S>> {
        let event = self.engine.events().try_recv().ok()?;
        Some(match event {
            Event::Info(report) => LinkEvent::Info(report),
            Event::Done { report, .. } => {
                self.gos_out = self.gos_out.saturating_sub(1);
                let idle = self.gos_out == 0;
                LinkEvent::Done { report, idle, after_search: self.last_go == Some(GoKind::Search) }
            }
            Event::EvaluatorReady { .. } => LinkEvent::Ready,
            Event::Error(EngineError::Load(reason)) => {
                self.forget_model();
                LinkEvent::LoadFailed(reason)
            }
            Event::Error(e) => LinkEvent::Error(e),
            Event::Evaluated { tag, results } => LinkEvent::Evaluated { tag, results },
            Event::Explored { root, path, children, .. } => LinkEvent::Explored { root, path, children },
        })
    }
}

impl<S: MavState> std::fmt::Debug for GameLink<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameLink")
            .field("gos_out", &self.gos_out)
            .field("last_go", &self.last_go)
            .field("has_model", &self.has_model)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EvaluatorBox;
    use crate::game::GameState;
    use crate::game::connect_four::ConnectFourState;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn centre() -> EvaluatorFactory<ConnectFourState> {
        Arc::new(|_| Ok(Box::new(crate::inference::mock::CentreEvaluator) as EvaluatorBox<ConnectFourState>))
    }

    /// Events until `done` says stop (or a timeout fails the test).
    fn events_until(
        link: &mut GameLink<ConnectFourState>,
        mut done: impl FnMut(&LinkEvent<ConnectFourState>) -> bool,
    ) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < deadline, "timed out: {link:?}");
            match link.next_event() {
                Some(e) if done(&e) => return,
                Some(_) => {}
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }

    #[test]
    fn refuses_to_go_without_a_model() {
        let mut link = GameLink::start(ConnectFourState::default(), Arc::new(|| {})).expect("engine");
        let go = link.go(GoKind::Search, GoLimits::default(), MctsParams::default(), EngineConfig::default());
        assert_eq!(go, Err(LinkError::NoModel));
        assert!(!link.searching());
        let internal = InternalConfig {
            breadth: 2,
            depth: 1,
            scoring: crate::inference::evaluator::Scoring::Max,
            state_format: crate::mav::command::StateFormat::State,
            buckets: crate::mav::buckets::Buckets::mav(),
            decoding: Default::default(),
        };
        assert_eq!(link.start_internal(ConnectFourState::default(), internal), Err(LinkError::NoModel));
    }

    #[test]
    fn counts_gos_so_that_only_the_last_answer_ends_a_search() {
        let mut link = GameLink::start(ConnectFourState::default(), Arc::new(|| {})).expect("engine");
        let internal = InternalSource::Factory { factory: centre(), why: "a mock".into() };
        link.load(centre(), 1, internal).expect("sent");
        events_until(&mut link, |e| matches!(e, LinkEvent::Ready));
        let config = EngineConfig::default();
        link.go(GoKind::Evaluate, GoLimits::default(), MctsParams::default(), config).expect("go");
        let search = GoLimits { simulations: Some(32), ..GoLimits::default() };
        link.go(GoKind::Search, search, MctsParams::default(), config).expect("go");
        assert!(link.searching());
        let mut dones = Vec::new();
        events_until(&mut link, |e| {
            if let LinkEvent::Done { report, idle, after_search } = e {
                dones.push((*idle, *after_search, report.as_ref().map(|r| r.snapshot.root.clone())));
            }
            dones.len() == 2
        });
        // The evaluation's answer leaves the search out; the search's ends it, at the start position.
        let root = Some(ConnectFourState::default().to_text());
        assert!(!dones[0].0, "the search is still out: {dones:?}");
        assert_eq!(dones[1], (true, true, root));
        assert!(!link.searching());
    }
}
