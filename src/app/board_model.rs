//! The model beside a Connect Four or Hex board: an [`Engine`] for that game, started on the first model
//! package that lists it (the one the user chose, else a shipped one), which values every legal move of
//! each new position in one call (its value distributions, max and mean scoring), runs MCTS when asked, and
//! runs internal search (explicit minimax over the model, and the model's own trace when the package writes
//! one) on its own thread ([`InternalRun`]).
//!
//! It mirrors the chess glue ([`super::engine_link`]) in small: the engine answers every `Go` with exactly
//! one `Done`, so counting the `Go`s still out tells which events belong to the newest one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::board_game::{BoardGame, BoardState};
use super::internal_search::InternalSearchState;
use crate::engine::internal::{InternalRun, InternalSource};
use crate::engine::{
    Command, Engine, EngineConfig, EvaluatorBox, EvaluatorFactory, Event, FactoryError, GoLimits, Repaint,
    SearchReport,
};
use crate::game::GameKind;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::inference::load_evaluator_for;
use crate::inference::onnx::SessionOptions;
use crate::mav::buckets::Buckets;
use crate::mav::command::StateFormat;
use crate::mav::state::MavState;
use crate::model::ModelPackage;
use crate::model::package::shipped_package_dirs;
use crate::search::internal::InternalConfig;
use crate::search::mcts::MctsParams;

/// Where the board's model stands.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum BoardModelStatus {
    /// No game on the board, or no model asked for yet.
    #[default]
    None,
    /// The package (its name) is loading.
    Loading(String),
    /// The package (its name) is loaded.
    Ready(String),
    /// No model can value this game; the text says why and what to do.
    Failed(String),
}

/// What the panel shows and asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardSearchRequest {
    /// Start MCTS on the board position.
    Start,
    /// Stop it.
    Stop,
    /// Run internal search on the board position: `breadth` moves expanded per node, `depth` plies.
    Internal {
        /// b.
        breadth: usize,
        /// d.
        depth: u32,
    },
}

/// An engine for one game, with the bookkeeping of its `Go`s.
struct GameModel<S: MavState> {
    engine: Engine<S>,
    /// `Go`s sent and not yet answered by `Done`.
    gos_out: usize,
    /// Where internal search gets the same model.
    internal: InternalSource<S>,
    /// The model's value buckets.
    buckets: Buckets,
    /// Whether the last `Go` was a search (not the one-call evaluation of a new position).
    last_was_search: bool,
}

impl<S: MavState> GameModel<S> {
    fn start(
        start: S,
        factory: EvaluatorFactory<S>,
        internal: InternalSource<S>,
        buckets: Buckets,
        config: EngineConfig,
        repaint: Repaint,
    ) -> Result<Self, String> {
        let engine = Engine::start_at(start, config, repaint).map_err(|e| e.to_string())?;
        engine.send(Command::LoadEvaluator { factory, workers: 1 }).map_err(|e| e.to_string())?;
        Ok(GameModel { engine, gos_out: 0, internal, buckets, last_was_search: false })
    }

    /// Starts internal search from `root` on its own thread.
    fn internal_search(
        &self,
        root: S,
        breadth: usize,
        depth: u32,
        scoring: crate::inference::evaluator::Scoring,
        repaint: Repaint,
    ) -> Result<InternalRun, String> {
        let config = InternalConfig {
            breadth,
            depth,
            scoring,
            state_format: StateFormat::State,
            buckets: self.buckets,
        };
        InternalRun::start(self.internal.clone(), root, config, repaint)
    }

    fn set_position(&mut self, start: S, moves: Vec<String>) -> Result<(), String> {
        self.engine.send(Command::SetPosition { start, moves }).map_err(|e| e.to_string())
    }

    fn go(&mut self, limits: GoLimits, params: MctsParams) -> Result<(), String> {
        self.engine.send(Command::Go { limits, params }).map_err(|e| e.to_string())?;
        self.gos_out += 1;
        self.last_was_search = limits.simulations != Some(1);
        Ok(())
    }

    fn stop(&self) {
        let _ = self.engine.send(Command::Stop);
    }

    /// Takes the events: reports of the newest `Go` go to `view`.
    fn drain(&mut self, view: &mut BoardModelView) {
        while let Ok(event) = self.engine.events().try_recv() {
            match event {
                Event::Info(r) if self.gos_out == 1 => view.report = Some(r),
                Event::Info(_) => {}
                Event::Done { report, .. } => {
                    self.gos_out = self.gos_out.saturating_sub(1);
                    if self.gos_out == 0 {
                        if self.last_was_search {
                            view.finished_search = report.as_ref().map(|r| r.snapshot.root.clone());
                        }
                        if report.is_some() {
                            view.report = report;
                        }
                        view.searching = false;
                        view.evaluating = false;
                    }
                }
                Event::EvaluatorReady { .. } => {
                    if let BoardModelStatus::Loading(name) = &view.status {
                        view.status = BoardModelStatus::Ready(name.clone());
                    }
                }
                Event::Error(crate::engine::EngineError::Load(e)) => {
                    view.status = BoardModelStatus::Failed(format!(
                        "The model could not be loaded: {e}. Choose another package (Engine > Load model…)."
                    ));
                }
                Event::Error(e) => view.error = Some(e.to_string()),
                Event::Evaluated { .. } | Event::Explored { .. } => {}
            }
        }
    }
}

/// The engine of the game on the board.
enum Side {
    ConnectFour(GameModel<ConnectFourState>),
    Hex(GameModel<HexState>),
}

/// What the panel shows: the model's status and its newest report for the board position.
#[derive(Debug, Clone, Default)]
pub struct BoardModelView {
    /// The model's status.
    pub status: BoardModelStatus,
    /// The newest report for the position on the board: the one-call evaluation (every legal move with
    /// its distribution) or the search's state.
    pub report: Option<SearchReport>,
    /// MCTS is running.
    pub searching: bool,
    /// The one-call evaluation of the position is on its way.
    pub evaluating: bool,
    /// The last error of the engine (a search that could not run), if any.
    pub error: Option<String>,
    /// Internal search: whether a run is out, and the last report.
    pub internal: InternalSearchState,
    /// The root (position text) of the last search that ended, not counting one-call evaluations.
    pub finished_search: Option<String>,
}

/// The model beside the Connect Four / Hex board (runtime state, not persisted).
#[derive(Default)]
pub struct BoardModel {
    side: Option<Side>,
    /// The game, board start and package the engine was started for.
    started_for: Option<(GameKind, String, PathBuf)>,
    /// The package the user had chosen when the engine was started (another choice restarts it).
    preferred: Option<PathBuf>,
    /// The position (its text) the engine was last given.
    position: Option<String>,
    /// What the panel shows.
    pub view: BoardModelView,
    /// A search start or stop asked for by the panel, applied at the next [`BoardModel::follow`].
    pub request: Option<BoardSearchRequest>,
    /// The limits of the next search started by [`BoardModel::request`] instead of the search settings'
    /// (the model's move in a game against it).
    pub play_limits: Option<GoLimits>,
    /// The internal search in progress.
    internal_run: Option<InternalRun>,
    /// Wakes the UI when an internal search ends.
    repaint: Option<Repaint>,
}

impl std::fmt::Debug for BoardModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoardModel")
            .field("started_for", &self.started_for)
            .field("view", &self.view)
            .finish()
    }
}

/// The first package that lists `game`: `preferred` (the user's choice), then the shipped ones; or why none.
pub fn package_for(game: GameKind, preferred: Option<&Path>) -> Result<ModelPackage, String> {
    let mut tried = Vec::new();
    for dir in preferred.map(Path::to_path_buf).into_iter().chain(shipped_package_dirs()) {
        match ModelPackage::open(&dir) {
            Ok(p) if p.manifest.games.contains(&game) => return Ok(p),
            Ok(p) => tried.push(format!("{} ({})", p.manifest.name, games_text(&p.manifest.games))),
            Err(e) => tried.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(format!(
        "No model knows {}: {}. Load a package trained on it (Engine > Load model…).",
        game_name(game),
        if tried.is_empty() {
            "no package was found".to_owned()
        } else {
            format!("tried {}", tried.join(", "))
        }
    ))
}

fn games_text(games: &[GameKind]) -> String {
    games.iter().map(|g| game_name(*g)).collect::<Vec<_>>().join(", ")
}

fn game_name(game: GameKind) -> &'static str {
    match game {
        GameKind::Chess => "chess",
        GameKind::Chess960 => "Chess960",
        GameKind::ConnectFour => "Connect Four",
        GameKind::Hex => "Hex",
    }
}

/// An evaluator factory that opens `dir` for `S`'s game (one evaluator per worker).
fn package_factory<S: MavState>(
    dir: PathBuf,
    options: SessionOptions,
    game: GameKind,
) -> EvaluatorFactory<S> {
    Arc::new(move |_worker| -> Result<EvaluatorBox<S>, FactoryError> {
        load_evaluator_for::<S>(&dir, &options, game)
            .map(|(e, _, _)| e)
            .map_err(|e| Box::new(e) as FactoryError)
    })
}

/// The start position and the moves up to the cursor, as the engine takes them.
fn engine_position(game: &BoardGame) -> (BoardState, Vec<String>) {
    (game.start().clone(), game.moves()[..game.cursor()].to_vec())
}

impl BoardModel {
    /// Follows the board: (re)starts the engine for the game on it with the first package that knows the
    /// game (`preferred` first), gives it each new position and asks for the one-call evaluation, applies
    /// the panel's search request, and takes the engine's events. `None` (chess on the board) stops it.
    pub fn follow(
        &mut self,
        game: Option<&BoardGame>,
        preferred: Option<&Path>,
        options: &SessionOptions,
        search: (EngineConfig, MctsParams, GoLimits),
        repaint: &Repaint,
    ) {
        let Some(game) = game else {
            if self.side.is_some() || self.started_for.is_some() {
                *self = BoardModel::default();
            }
            return;
        };
        let kind = game.current().kind();
        let start_text = game.start().text();
        let same_start = self.started_for.as_ref().is_some_and(|(k, s, _)| *k == kind && *s == start_text)
            && self.preferred.as_deref() == preferred;
        if !same_start {
            *self = BoardModel::default();
            self.preferred = preferred.map(Path::to_path_buf);
            self.repaint = Some(repaint.clone());
            match package_for(kind, preferred) {
                Ok(package) => {
                    let dir = package.dir.clone();
                    let factory_options = options.clone();
                    let buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(0))
                        .unwrap_or_else(|_| Buckets::mav());
                    let started = match game.start() {
                        BoardState::ConnectFour(s) => GameModel::start(
                            *s,
                            package_factory(dir.clone(), factory_options, kind),
                            InternalSource::Package { dir: dir.clone(), options: options.clone() },
                            buckets,
                            search.0,
                            repaint.clone(),
                        )
                        .map(Side::ConnectFour),
                        BoardState::Hex(s) => GameModel::start(
                            *s,
                            package_factory(dir.clone(), factory_options, kind),
                            InternalSource::Package { dir: dir.clone(), options: options.clone() },
                            buckets,
                            search.0,
                            repaint.clone(),
                        )
                        .map(Side::Hex),
                    };
                    match started {
                        Ok(side) => {
                            self.side = Some(side);
                            self.view.status = BoardModelStatus::Loading(package.manifest.name.clone());
                        }
                        Err(e) => {
                            self.view.status =
                                BoardModelStatus::Failed(format!("The engine could not start: {e}"))
                        }
                    }
                    self.started_for = Some((kind, start_text, dir));
                }
                Err(why) => {
                    self.view.status = BoardModelStatus::Failed(why);
                    self.started_for = Some((kind, start_text, PathBuf::new()));
                }
            }
        }
        self.start_with(game, &search);
    }

    /// Starts the engine for `game` with `factory` instead of a package (tests: a mock evaluator).
    pub fn start_connect_four_with(
        &mut self,
        game: &BoardGame,
        factory: EvaluatorFactory<ConnectFourState>,
        search: (EngineConfig, MctsParams, GoLimits),
        repaint: &Repaint,
    ) -> Result<(), String> {
        let BoardState::ConnectFour(start) = game.start() else {
            return Err("not a Connect Four game".into());
        };
        *self = BoardModel::default();
        self.repaint = Some(repaint.clone());
        let internal = InternalSource::Factory {
            factory: factory.clone(),
            why: "the test model writes no trace".into(),
        };
        self.side = Some(Side::ConnectFour(GameModel::start(
            *start,
            factory,
            internal,
            Buckets::mav(),
            search.0,
            repaint.clone(),
        )?));
        self.view.status = BoardModelStatus::Loading("test model".into());
        self.started_for = Some((GameKind::ConnectFour, game.start().text(), PathBuf::new()));
        self.start_with(game, &search);
        Ok(())
    }

    /// Sends a new position (and its evaluation) and the panel's request; takes the events.
    fn start_with(&mut self, game: &BoardGame, search: &(EngineConfig, MctsParams, GoLimits)) {
        if let Some(result) = self.internal_run.as_ref().and_then(InternalRun::try_result) {
            self.internal_run = None;
            self.view.internal.running = false;
            self.view.internal.result = Some(result);
        }
        let Some(side) = self.side.as_mut() else { return };
        let (_, params, limits) = search;
        let limits = *limits;
        let text = game.current().text();
        let over = game.current().outcome().is_some();
        let mut result = Ok(());
        if self.position.as_ref() != Some(&text) {
            self.position = Some(text);
            self.view.report = None;
            self.view.error = None;
            self.view.searching = false;
            self.view.evaluating = !over;
            let (start, moves) = engine_position(game);
            let evaluate = GoLimits { simulations: Some(1), ..GoLimits::default() };
            result = match (side, start) {
                (Side::ConnectFour(m), BoardState::ConnectFour(s)) => m
                    .set_position(s, moves)
                    .and_then(|()| if over { Ok(()) } else { m.go(evaluate, params.clone()) }),
                (Side::Hex(m), BoardState::Hex(s)) => m
                    .set_position(s, moves)
                    .and_then(|()| if over { Ok(()) } else { m.go(evaluate, params.clone()) }),
                _ => Err("the engine is for another game".to_owned()),
            };
        }
        if let (Ok(()), Some(request), Some(side)) = (&result, self.request.take(), self.side.as_mut()) {
            match request {
                BoardSearchRequest::Start if !over => {
                    self.view.searching = true;
                    self.view.finished_search = None;
                    let limits = self.play_limits.take().unwrap_or(limits);
                    result = match side {
                        Side::ConnectFour(m) => m.go(limits, params.clone()),
                        Side::Hex(m) => m.go(limits, params.clone()),
                    };
                }
                BoardSearchRequest::Start => {}
                BoardSearchRequest::Stop => match side {
                    Side::ConnectFour(m) => m.stop(),
                    Side::Hex(m) => m.stop(),
                },
                BoardSearchRequest::Internal { breadth, depth } if !over && self.internal_run.is_none() => {
                    let repaint = self.repaint.clone().unwrap_or_else(|| Arc::new(|| {}));
                    let run = match (side, game.current()) {
                        (Side::ConnectFour(m), BoardState::ConnectFour(s)) => {
                            m.internal_search(*s, breadth, depth, params.scoring, repaint)
                        }
                        (Side::Hex(m), BoardState::Hex(s)) => {
                            m.internal_search(*s, breadth, depth, params.scoring, repaint)
                        }
                        _ => Err("the engine is for another game".to_owned()),
                    };
                    match run {
                        Ok(run) => {
                            self.internal_run = Some(run);
                            self.view.internal.running = true;
                        }
                        Err(e) => self.view.internal.result = Some(Err(e)),
                    }
                }
                BoardSearchRequest::Internal { .. } => {}
            }
        }
        if let Err(e) = result {
            self.view.status = BoardModelStatus::Failed(format!("The engine stopped: {e}"));
            self.side = None;
            return;
        }
        match self.side.as_mut() {
            Some(Side::ConnectFour(m)) => m.drain(&mut self.view),
            Some(Side::Hex(m)) => m.drain(&mut self.view),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::board_game::GameChoice;
    use std::time::{Duration, Instant};

    fn wait_for(
        model: &mut BoardModel,
        game: &BoardGame,
        search: &(EngineConfig, MctsParams, GoLimits),
        done: impl Fn(&BoardModelView) -> bool,
    ) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(&model.view) {
            assert!(Instant::now() < deadline, "timed out: {:?}", model.view);
            std::thread::sleep(Duration::from_millis(5));
            model.start_with(game, search);
        }
    }

    #[test]
    fn values_each_position_and_runs_mcts_on_request() {
        let mut game = BoardGame::new(GameChoice::ConnectFour).expect("game");
        for m in ["4", "4", "3"] {
            game.play(m).expect("legal");
        }
        let repaint: Repaint = Arc::new(|| {});
        let factory: EvaluatorFactory<ConnectFourState> =
            Arc::new(
                |_| Ok(Box::new(crate::search::mock::CentreEvaluator) as EvaluatorBox<ConnectFourState>),
            );
        let search = (
            EngineConfig::default(),
            MctsParams::default(),
            GoLimits { simulations: Some(64), ..GoLimits::default() },
        );
        let mut model = BoardModel::default();
        model.start_connect_four_with(&game, factory, search.clone(), &repaint).expect("starts");
        wait_for(&mut model, &game, &search, |v| !v.evaluating && v.report.is_some());
        assert_eq!(model.view.status, BoardModelStatus::Ready("test model".into()));
        let report = model.view.report.clone().expect("evaluated");
        assert_eq!(report.snapshot.moves.len(), 7, "every column valued");
        assert!(report.snapshot.moves.iter().all(|m| m.distribution.is_some()));
        let best = report
            .snapshot
            .moves
            .iter()
            .max_by(|a, b| a.model_max.partial_cmp(&b.model_max).expect("numbers"));
        assert_eq!(best.map(|m| m.action.as_str()), Some("4"));

        model.request = Some(BoardSearchRequest::Start);
        model.start_with(&game, &search);
        // A fast mock may end the search within that call; either way its last report is the search's.
        wait_for(&mut model, &game, &search, |v| {
            !v.searching && v.report.as_ref().is_some_and(|r| r.simulations >= 64)
        });
        let report = model.view.report.clone().expect("searched");
        assert!(report.simulations >= 64, "{}", report.simulations);
        assert_eq!(report.snapshot.best.as_deref(), Some("4"));

        // A new position clears the report and is valued in turn.
        game.play("4").expect("legal");
        model.start_with(&game, &search);
        // The old position's report is dropped at once (a fast model may already have answered the new one).
        assert!(model.view.report.as_ref().is_none_or(|r| r.snapshot.root == game.current().text()));
        wait_for(&mut model, &game, &search, |v| !v.evaluating && v.report.is_some());
        assert_eq!(model.view.report.as_ref().map(|r| r.snapshot.root.clone()), Some(game.current().text()));
    }

    #[test]
    fn internal_search_runs_minimax_over_the_model_on_its_own_thread() {
        let mut game = BoardGame::new(GameChoice::ConnectFour).expect("game");
        game.play("1").expect("legal");
        let repaint: Repaint = Arc::new(|| {});
        let factory: EvaluatorFactory<ConnectFourState> =
            Arc::new(
                |_| Ok(Box::new(crate::search::mock::CentreEvaluator) as EvaluatorBox<ConnectFourState>),
            );
        let search = (EngineConfig::default(), MctsParams::default(), GoLimits::default());
        let mut model = BoardModel::default();
        model.start_connect_four_with(&game, factory, search.clone(), &repaint).expect("starts");
        model.request = Some(BoardSearchRequest::Internal { breadth: 2, depth: 1 });
        model.start_with(&game, &search);
        assert!(model.view.internal.running);
        wait_for(&mut model, &game, &search, |v| !v.internal.running);
        let report = model.view.internal.result.clone().expect("a result").expect("the search ran");
        assert_eq!(report.root, game.current().text());
        assert_eq!((report.breadth, report.depth), (2, 1));
        // The root and its two best moves: three model calls; the centre-loving model plays the centre.
        assert_eq!(report.explicit.model_calls, 3);
        assert_eq!(report.explicit.tree.children.len(), 2);
        assert_eq!(report.explicit.choice.as_deref(), Some("4"));
        assert!(report.explicit.trace.contains("<mav game=connect_four>"), "{}", report.explicit.trace);
        match &report.model {
            crate::search::internal::ModelSide::Unsupported { why } => assert!(why.contains("test model")),
            other => panic!("a mock writes no trace: {other:?}"),
        }
    }

    #[test]
    fn a_broken_preferred_package_falls_back_to_a_shipped_one() {
        let dir = std::env::temp_dir().join(format!("mavboard-board-model-{}", std::process::id()));
        let p = package_for(GameKind::Chess, Some(&dir)).expect("a shipped package knows chess");
        assert!(p.manifest.games.contains(&GameKind::Chess));
        assert_ne!(p.dir, dir);
    }
}
