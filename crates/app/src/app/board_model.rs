//! The model beside a Connect Four or Hex board: the engine glue every game shares ([`GameLink`]) for the
//! game on the board, started on the first model package that lists it (the one the user chose, else a
//! shipped one). It values every legal move of each new position in one call (its value distributions, max
//! and mean scoring), runs MCTS when asked, and runs internal search (explicit minimax over the model, and
//! the model's own trace when the package writes one) on its own thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::board_game::{BoardGame, BoardState};
use super::game_link::{GameLink, GoKind, LinkError, LinkEvent};
use super::internal_search::InternalSearchState;
use crate::engine::internal::InternalSource;
use crate::engine::{
    EngineConfig, EvaluatorBox, EvaluatorFactory, FactoryError, GoLimits, Repaint, SearchReport,
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
        /// How the model decodes its own trace.
        decoding: crate::inference::completer::TraceDecoding,
    },
}

/// The engine of the game on the board.
enum Side {
    ConnectFour(GameLink<ConnectFourState>),
    Hex(GameLink<HexState>),
}

/// Starts an engine at `start` and loads `factory` on one worker.
fn start_link<S: MavState>(
    start: S,
    factory: EvaluatorFactory<S>,
    internal: InternalSource<S>,
    repaint: &Repaint,
) -> Result<GameLink<S>, LinkError> {
    let mut link = GameLink::start(start, repaint.clone())?;
    link.load(factory, 1, internal)?;
    Ok(link)
}

/// Starts an engine at `start` on the package in `dir` (for `game`), internal search included.
fn start_package<S: MavState>(
    start: S,
    dir: &Path,
    options: &SessionOptions,
    game: GameKind,
    repaint: &Repaint,
) -> Result<GameLink<S>, LinkError> {
    let factory = package_factory(dir.to_path_buf(), options.clone(), game);
    let internal = InternalSource::Package { dir: dir.to_path_buf(), options: options.clone() };
    start_link(start, factory, internal, repaint)
}

/// What one frame asks of the engine (see [`step`]).
struct Step<'a> {
    /// The position changed since the engine was last told: send it and value it.
    new_position: bool,
    /// The moves from the start to the cursor.
    moves: Vec<String>,
    /// The game is over at the cursor (nothing to value or search).
    over: bool,
    /// The position's text (reports for another position are dropped).
    text: String,
    /// The panel's request.
    request: Option<BoardSearchRequest>,
    /// A search's limits.
    limits: GoLimits,
    /// The search parameters.
    params: &'a MctsParams,
    /// The engine's batching and timeout.
    config: EngineConfig,
    /// The model's buckets (for internal search).
    buckets: Buckets,
}

/// One frame of the glue for the game `S`: sends a new position and its evaluation, carries out the
/// panel's request, and takes the events into `view`.
fn step<S: MavState>(
    link: &mut GameLink<S>,
    start: S,
    current: S,
    step: Step<'_>,
    view: &mut BoardModelView,
) -> Result<(), LinkError> {
    if let Some(result) = link.poll_internal() {
        view.internal.running = false;
        view.internal.result = Some(result);
    }
    let Step { new_position, moves, over, text, request, limits, params, config, buckets } = step;
    if new_position {
        link.set_position(start, moves)?;
        if !over {
            link.go(GoKind::Evaluate, limits, params.clone(), config)?;
        }
    }
    match request {
        Some(BoardSearchRequest::Start) if !over => {
            view.searching = true;
            view.finished_search = None;
            link.go(GoKind::Search, limits, params.clone(), config)?;
        }
        Some(BoardSearchRequest::Stop) => link.stop()?,
        Some(BoardSearchRequest::Internal { breadth, depth, decoding }) if !over => {
            let config = InternalConfig {
                breadth,
                depth,
                scoring: params.scoring,
                state_format: StateFormat::State,
                buckets,
                decoding,
            };
            match link.start_internal(current, config) {
                Ok(()) => view.internal.running = true,
                Err(LinkError::Busy) => {}
                Err(e) => view.internal.result = Some(Err(e)),
            }
        }
        _ => {}
    }
    while let Some(event) = link.next_event() {
        match event {
            LinkEvent::Info(report) if report.snapshot.root == text => view.report = Some(report),
            LinkEvent::Done { report, idle: true, after_search } => {
                if after_search {
                    view.finished_search = report.as_ref().map(|r| r.snapshot.root.clone());
                }
                if report.is_some() {
                    view.report = report;
                }
                view.searching = false;
                view.evaluating = false;
            }
            LinkEvent::Ready => {
                if let BoardModelStatus::Loading(name) = &view.status {
                    view.status = BoardModelStatus::Ready(name.clone());
                }
            }
            LinkEvent::LoadFailed(e) => {
                view.status = BoardModelStatus::Failed(format!(
                    "The model could not be loaded: {e}. Choose another package (Engine > Load model…)."
                ));
            }
            LinkEvent::Error(e) => view.error = Some(e.to_string()),
            LinkEvent::Info(_) | LinkEvent::Done { .. } => {}
            LinkEvent::Evaluated { .. } | LinkEvent::Explored { .. } => {}
        }
    }
    Ok(())
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
    /// The model's value buckets.
    buckets: Buckets,
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
pub fn package_for(game: GameKind, preferred: Option<&Path>) -> Result<ModelPackage, super::error::AppError> {
    let mut tried = Vec::new();
    for dir in preferred.map(Path::to_path_buf).into_iter().chain(shipped_package_dirs()) {
        match ModelPackage::open(&dir) {
            Ok(p) if p.manifest.games.contains(&game) => return Ok(p),
            Ok(p) => tried.push(format!("{} ({})", p.manifest.name, games_text(&p.manifest.games))),
            Err(e) => tried.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(super::error::AppError::NoModelFor {
        game: game_name(game),
        tried: if tried.is_empty() {
            "no package was found".to_owned()
        } else {
            format!("tried {}", tried.join(", "))
        },
    })
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
            .map(|m| m.evaluator)
            .map_err(|e| Box::new(e) as FactoryError)
    })
}

impl BoardModel {
    /// The package folder of the model valuing the board (loading or loaded), if any.
    pub fn package_dir(&self) -> Option<&Path> {
        let running = matches!(self.view.status, BoardModelStatus::Loading(_) | BoardModelStatus::Ready(_));
        self.started_for
            .as_ref()
            .map(|(_, _, dir)| dir.as_path())
            .filter(|d| running && !d.as_os_str().is_empty())
    }

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
            match package_for(kind, preferred) {
                Ok(package) => {
                    let dir = package.dir.clone();
                    self.buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(0))
                        .unwrap_or_else(|_| Buckets::mav());
                    let started = match game.start() {
                        BoardState::ConnectFour(s) => {
                            start_package(*s, &dir, options, kind, repaint).map(Side::ConnectFour)
                        }
                        BoardState::Hex(s) => start_package(*s, &dir, options, kind, repaint).map(Side::Hex),
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
                    self.view.status = BoardModelStatus::Failed(why.to_string());
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
    ) -> Result<(), LinkError> {
        let BoardState::ConnectFour(start) = game.start() else {
            return Err(LinkError::OtherGame);
        };
        *self = BoardModel::default();
        let internal = InternalSource::Factory {
            factory: factory.clone(),
            why: "the test model writes no trace".into(),
        };
        self.side = Some(Side::ConnectFour(start_link(*start, factory, internal, repaint)?));
        self.view.status = BoardModelStatus::Loading("test model".into());
        self.started_for = Some((GameKind::ConnectFour, game.start().text(), PathBuf::new()));
        self.start_with(game, &search);
        Ok(())
    }

    /// Sends a new position (and its evaluation) and the panel's request; takes the events.
    fn start_with(&mut self, game: &BoardGame, search: &(EngineConfig, MctsParams, GoLimits)) {
        let Some(side) = self.side.as_mut() else { return };
        let (config, params, limits) = search;
        let text = game.current().text();
        let over = game.current().outcome().is_some();
        let new_position = self.position.as_ref() != Some(&text);
        if new_position {
            self.position = Some(text.clone());
            self.view.report = None;
            self.view.error = None;
            self.view.searching = false;
            self.view.evaluating = !over;
        }
        let request = self.request.take();
        let limits = match request {
            Some(BoardSearchRequest::Start) if !over => self.play_limits.take().unwrap_or(*limits),
            _ => *limits,
        };
        let frame = Step {
            new_position,
            moves: game.moves()[..game.cursor()].to_vec(),
            over,
            text,
            request,
            limits,
            params,
            config: *config,
            buckets: self.buckets,
        };
        let view = &mut self.view;
        let result = match (side, game.start(), game.current()) {
            (Side::ConnectFour(link), BoardState::ConnectFour(start), BoardState::ConnectFour(here)) => {
                step(link, *start, *here, frame, view)
            }
            (Side::Hex(link), BoardState::Hex(start), BoardState::Hex(here)) => {
                step(link, *start, *here, frame, view)
            }
            _ => Err(LinkError::OtherGame),
        };
        if let Err(e) = result {
            self.view.status = BoardModelStatus::Failed(format!("The engine stopped: {e}"));
            self.side = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::board_game::GameChoice;
    use crate::mav::scoring::Scoring;
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
            .max_by(|a, b| a.value(Scoring::Max).partial_cmp(&b.value(Scoring::Max)).expect("numbers"));
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
        model.request = Some(BoardSearchRequest::Internal {
            breadth: 2,
            depth: 1,
            decoding: crate::inference::completer::TraceDecoding::Free,
        });
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
