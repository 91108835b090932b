//! The chess glue between the app and the engine: over the glue every game shares ([`GameLink`]), it
//! loads the model package, tells the engine about the board position, starts a one-call evaluation of every
//! new position (the action-values panel) and the searches the user asks for, runs what only chess has
//! (game and file reviews, the UCI judge, the search tree explorer), and turns the engine's events into
//! [`AnalysisState`](super::analysis::AnalysisState) and messages.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::analysis::{EngineRequest, ModelInfo, ModelStatus};
use super::error::AppError;
use super::file_review::FileReview;
use super::game_link::{GameLink, GoKind, LinkError, LinkEvent};
use super::game_review::{self, DocStamp};
use super::line::MoveHistory;
use super::messages::{Messages, Topic};
use super::model_runtime;
use super::position_evals::PositionEval;
use super::review_job::{JudgeSpec, ReviewJob};
use super::server_health::ServerHealth;
use super::settings::Settings;
use super::state::attach_file_review;
use super::state::frame::EngineScope;
use crate::engine::internal::InternalSource;
use crate::engine::{Command, EngineError, EvaluatorFactory, GoLimits, Repaint};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::EvalError;
use crate::inference::onnx::SessionOptions;
use crate::model::ModelPackage;
use crate::model::package::default_package_dir;
use crate::search::SearchError;
use crate::search::internal::InternalConfig;

/// The most inference workers for a remote package (each holds one batch out at the server).
const MAX_REMOTE_WORKERS: usize = 16;

/// The engine and what the app has told it.
pub struct EngineLink {
    /// The engine, the model and the `Go`s out.
    link: GameLink<ChessState>,
    /// The position generation the engine was last given.
    sent_generation: Option<u64>,
    /// The game review waiting for its answers.
    review: Option<ReviewJob>,
    /// The file review's game waiting for its answers (its number in the game list).
    file_game: Option<(usize, ReviewJob)>,
    /// The next tag for an `Evaluate` command.
    next_tag: u64,
    /// Wakes the UI (the UCI judges' threads).
    repaint: Repaint,
    /// Where the model's loader leaves the provider in use.
    device: model_runtime::DeviceSlot,
    /// The UCI engine that judges the file review's games, when an engine judges (found when the
    /// review starts).
    file_judge: Option<JudgeSpec>,
}

impl EngineLink {
    /// Starts the engine thread; `repaint` wakes the UI after every event.
    pub fn start(repaint: Repaint) -> Result<EngineLink, EngineError> {
        Ok(EngineLink {
            link: GameLink::start(ChessState::startpos(), repaint.clone())?,
            sent_generation: None,
            review: None,
            file_game: None,
            next_tag: 0,
            repaint,
            device: model_runtime::DeviceSlot::default(),
            file_judge: None,
        })
    }

    /// Loads the package in `dir`, or the shipped default when `None`. The package's description is read
    /// here (a small JSON file); the ONNX session opens on the engine's loader thread.
    pub fn load_model(&mut self, dir: Option<&Path>, scope: &mut EngineScope<'_>) {
        let dir = match dir.map(Path::to_path_buf).map_or_else(default_package_dir, Ok) {
            Ok(d) => d,
            Err(e) => return self.model_failed(scope, format!("No model: {e}")),
        };
        let package = match ModelPackage::open(&dir) {
            Ok(p) => p,
            Err(e) => {
                return self.model_failed(
                    scope,
                    format!(
                        "The model in {} cannot be used: {e}. Choose another package folder.",
                        dir.display()
                    ),
                );
            }
        };
        // Locally, the settings' threads as workers of one thread each (or one session with them all, for a
        // large model); remotely, one worker per batch the package lets out at once.
        let (plan, options) = model_runtime::engine_plan(scope.settings, &dir);
        let workers = package
            .manifest
            .remote
            .as_ref()
            .map_or(plan.workers, |r| r.max_in_flight.clamp(1, MAX_REMOTE_WORKERS));
        let info = ModelInfo::of_package(&package, dir.clone(), workers);
        let factory = model_runtime::model_factory(dir.clone(), options, self.device.clone());
        // Internal search runs one session, decoding one step at a time: it takes every thread.
        let internal =
            InternalSource::Package { dir, options: model_runtime::session_options(scope.settings) };
        self.load_with(factory, info, internal, scope);
    }

    /// Loads evaluators from `factory` (the real model, or a mock in tests) described by `info`.
    pub fn load_factory(&mut self, factory: EvaluatorFactory, info: ModelInfo, scope: &mut EngineScope<'_>) {
        let internal = InternalSource::Factory {
            factory: factory.clone(),
            why: format!(
                "{} ({}) was given to the engine directly, not as a package folder, so it writes no trace of its own",
                info.name, info.format
            ),
        };
        self.load_with(factory, info, internal, scope);
    }

    /// Loads evaluators from `factory`, described by `info`; internal search takes the model from `internal`.
    fn load_with(
        &mut self,
        factory: EvaluatorFactory,
        info: ModelInfo,
        internal: InternalSource,
        scope: &mut EngineScope<'_>,
    ) {
        let workers = info.workers;
        scope.analysis.model = ModelStatus::Loading(info);
        scope.analysis.device = None;
        // The graph shows the loaded model's values only.
        scope.analysis.evals.clear();
        if let Ok(mut slot) = self.device.lock() {
            *slot = None;
        }
        if self.link.load(factory, workers, internal).is_err() {
            self.model_failed(scope, "The engine thread has stopped; restart mavboard.".to_owned());
            return;
        }
        // Evaluate the board position with the new model.
        self.sent_generation = None;
    }

    fn model_failed(&mut self, scope: &mut EngineScope<'_>, text: String) {
        self.link.forget_model();
        scope.analysis.model = ModelStatus::Failed(text.clone());
        scope.analysis.server = ServerHealth::NoServer;
        scope.analysis.evaluating = false;
        scope.messages.error_about(Topic::Model, text);
    }

    /// Once per frame: takes the engine's events, then sends what changed (position, requests).
    pub fn frame(&mut self, scope: &mut EngineScope<'_>) {
        self.drain(scope);
        let requests = std::mem::take(&mut scope.analysis.requests);
        let mut search = None;
        let mut play_search = None;
        for r in requests {
            match r {
                EngineRequest::StartSearch => search = Some(true),
                EngineRequest::StopSearch => search = Some(false),
                EngineRequest::ReviewLine => self.review_game(scope),
                EngineRequest::ReviewFile => self.review_file(scope),
                EngineRequest::StopFileReview => {
                    self.file_game = None;
                    if let Some(f) = scope.analysis.file_review.as_mut() {
                        f.stop();
                    }
                }
                EngineRequest::LoadModel(dir) => {
                    self.stop(scope);
                    self.load_model(dir.as_deref(), scope);
                }
                EngineRequest::InternalSearch { breadth, depth, decoding } => {
                    self.internal_search(scope, breadth, depth, decoding)
                }
                EngineRequest::Explore(path) => self.explore(scope, path),
                EngineRequest::PlaySearch(limits) => play_search = Some(limits),
            }
        }
        // A file review ends when its game list is replaced (another file opened or text pasted).
        if let Some(f) = scope.analysis.file_review.as_ref()
            && scope.games.is_none_or(|l| l.id != f.list)
        {
            self.file_game = None;
            scope.analysis.file_review = None;
        }
        let moved = self.sent_generation != Some(scope.doc.position_generation);
        if moved {
            self.send_position(scope);
        }
        if let Some(limits) = play_search {
            // The model's move in a game against it: this search ends the frame's requests.
            scope.analysis.finished_search = None;
            self.go_with(scope, GoKind::Search, Some(limits));
            return;
        }
        match search {
            Some(true) => self.go(scope, GoKind::Search),
            Some(false) => self.stop(scope),
            None if moved => {
                // A running search follows the board; otherwise one call gives the action values.
                let kind = if scope.analysis.searching { GoKind::Search } else { GoKind::Evaluate };
                self.go(scope, kind);
            }
            None => {}
        }
    }

    /// Starts a review of the game's main line: every position goes to the engine in chunks of
    /// [`game_review::CHUNK`] beside whatever else it does (browsing and searching go on); answers fill the
    /// eval graph as they come, and the finished review (the same as `mavboard annotate`'s) lands in
    /// [`super::analysis::AnalysisState::game_review`].
    fn review_game(&mut self, scope: &mut EngineScope<'_>) {
        if !self.link.has_model() {
            scope
                .messages
                .error_about(Topic::Model, "No model is loaded: load one before reviewing the game.");
            return;
        }
        if self.review.is_some() {
            return;
        }
        let Some(judge) = review_judge(scope.settings, scope.messages) else { return };
        let tree = scope.doc.line.tree().clone();
        match self.start_job(tree, scope.doc.line.stamp(), judge.as_ref()) {
            Ok(mut job) => {
                // Judged by the model: model B's view of every move goes beside it, when B is open.
                if judge.is_none()
                    && let Some((name, tag)) = scope.compare.ask_review(job.review_requests())
                {
                    job.expect_beside(name, tag);
                }
                scope.analysis.reviewing = Some(job.progress());
                self.review = Some(job);
            }
            Err(AppError::NothingToReview) => {
                scope.messages.info("The game has no moves to review.");
            }
            Err(AppError::EngineStopped) => self.engine_gone(scope),
            Err(e) => {
                scope.messages.error(format!("This game cannot be reviewed: {e}"));
            }
        }
    }

    /// Starts reviewing every readable game of the game list, one after another (see [`FileReview`]).
    fn review_file(&mut self, scope: &mut EngineScope<'_>) {
        if !self.link.has_model() {
            scope
                .messages
                .error_about(Topic::Model, "No model is loaded: load one before reviewing the games.");
            return;
        }
        let Some(list) = scope.games else {
            scope
                .messages
                .error("Open a PGN file first: Review all games reviews the games of the open file.");
            return;
        };
        if scope.analysis.file_review.as_ref().is_some_and(|f| f.list == list.id && f.running()) {
            return;
        }
        let review = FileReview::new(list);
        if review.total == 0 {
            scope.messages.error(format!("{}: no game could be read, so none can be reviewed.", list.source));
            return;
        }
        let Some(judge) = review_judge(scope.settings, scope.messages) else { return };
        self.file_judge = judge;
        scope.analysis.file_review = Some(review);
        self.file_game = None;
        self.next_file_game(scope);
    }

    /// Prepares a review job for `tree` (judged by `judge` when an engine judges) and sends its positions
    /// to the engine.
    fn start_job(
        &mut self,
        tree: crate::pgn::GameTree,
        stamp: DocStamp,
        judge: Option<&JudgeSpec>,
    ) -> Result<ReviewJob, AppError> {
        let job = ReviewJob::start(tree, stamp, self.next_tag, judge, &self.repaint)?;
        let chunks = job.chunks();
        self.next_tag += chunks.len() as u64;
        for (tag, requests) in chunks {
            self.link.send(Command::Evaluate { tag, requests }).map_err(|_| AppError::EngineStopped)?;
        }
        Ok(job)
    }

    /// Sends the file review's next game to the engine (games that cannot be reviewed are noted and
    /// skipped); says so when every game is done.
    fn next_file_game(&mut self, scope: &mut EngineScope<'_>) {
        let judge = self.file_judge.clone();
        let Some(f) = scope.analysis.file_review.as_mut() else { return };
        while let Some(number) = f.queue.pop_front() {
            let tree = match scope.games.filter(|l| l.id == f.list) {
                Some(list) => list.game(number),
                None => Err(AppError::NoGame { number, list: f.source.clone() }),
            };
            match tree
                .and_then(|tree| self.start_job(tree, DocStamp { doc: 0, structure: 0 }, judge.as_ref()))
            {
                Ok(job) => {
                    f.current = Some((number, job.progress()));
                    self.file_game = Some((number, job));
                    return;
                }
                Err(AppError::EngineStopped) => return self.engine_gone(scope),
                Err(e) => f.finish(number, Err(e)),
            }
        }
        if f.current.is_none() && !f.stopped {
            let (done, total) = f.progress();
            let failed = f.done.values().filter(|r| r.is_err()).count();
            let failed = if failed > 0 {
                format!(" ({failed} could not be reviewed: see the game list)")
            } else {
                String::new()
            };
            scope.messages.info(format!("Reviewed {done} of {total} games of {}{failed}.", f.source));
        }
    }

    /// Takes a chunk of review answers (for the game review or the file review's game).
    fn review_answers(&mut self, scope: &mut EngineScope<'_>, tag: u64, results: Vec<game_review::Answer>) {
        let job = match self.file_game.as_mut().filter(|(_, j)| j.owns(tag)) {
            Some((_, job)) => job,
            None => match self.review.as_mut().filter(|j| j.owns(tag)) {
                Some(job) => job,
                None => return,
            },
        };
        for (fen, answer) in job.accept(tag, results) {
            if let Some(eval) = answer.as_ref().ok().and_then(PositionEval::from_result) {
                scope.analysis.evals.insert(fen, eval);
            }
        }
    }

    /// Takes the review jobs' news: their progress, the finished game review, and the file review's
    /// finished game (then its next game goes to the engine).
    fn poll_reviews(&mut self, scope: &mut EngineScope<'_>) {
        let scoring = scope.settings.scoring;
        if let Some(job) = self.review.as_mut() {
            if let Some(answers) = job.beside_tag().and_then(|tag| scope.compare.take_review(tag)) {
                job.accept_beside(answers);
            }
            let news = job.poll(scoring);
            scope.analysis.reviewing = Some(job.progress());
            if let Some(result) = news {
                self.review = None;
                scope.analysis.reviewing = None;
                match result {
                    Ok(reviewed) => scope.analysis.game_review = Some(reviewed),
                    Err(e) => {
                        scope.messages.error(format!("The game could not be reviewed: {e}"));
                    }
                }
            }
        }
        if let Some((number, job)) = self.file_game.as_mut() {
            let number = *number;
            let news = job.poll(scoring);
            let progress = job.progress();
            let Some(f) = scope.analysis.file_review.as_mut() else { return };
            f.current = Some((number, progress));
            if let Some(result) = news {
                self.file_game = None;
                f.finish(number, result);
                attach_file_review(scope.doc, scope.analysis);
                self.next_file_game(scope);
            }
        }
    }

    fn send_position(&mut self, scope: &mut EngineScope<'_>) {
        self.sent_generation = Some(scope.doc.position_generation);
        let here = scope.current().to_text();
        if scope.analysis.report.as_ref().is_none_or(|r| r.snapshot.root != here) {
            scope.analysis.position_changed();
        }
        let line = &scope.doc.line;
        let start = line.start().clone();
        let mut here = start.clone();
        let mut moves = Vec::with_capacity(line.cursor());
        for m in &line.moves()[..line.cursor()] {
            moves.push(here.action_to_text(m.mv));
            match here.play(m.mv) {
                Ok(next) => here = next,
                Err(_) => break,
            }
        }
        if self.link.set_position(start, moves).is_err() {
            self.engine_gone(scope);
        }
    }

    fn go(&mut self, scope: &mut EngineScope<'_>, kind: GoKind) {
        self.go_with(scope, kind, None);
    }

    /// Sends a `Go` of `kind`; a search runs with `limits` when given, else with the search settings'.
    fn go_with(&mut self, scope: &mut EngineScope<'_>, kind: GoKind, limits: Option<GoLimits>) {
        if scope.current().outcome().is_some() && self.link.has_model() {
            scope.analysis.searching = false;
            scope.analysis.evaluating = false;
            return;
        }
        let settings = &scope.settings.search;
        let limits = limits.unwrap_or_else(|| settings.go_limits());
        let params = settings.params(scope.settings.scoring);
        match self.link.go(kind, limits, params, settings.engine_config()) {
            Ok(()) => {
                scope.analysis.searching = kind == GoKind::Search;
                scope.analysis.evaluating = scope.analysis.report.is_none();
            }
            Err(LinkError::NoModel) => {
                scope.analysis.searching = false;
                if kind == GoKind::Search {
                    scope.messages.error_about(
                        Topic::Model,
                        "No model is loaded: choose a model package (Engine > Load model…).",
                    );
                }
            }
            Err(_) => self.engine_gone(scope),
        }
    }

    fn stop(&mut self, scope: &mut EngineScope<'_>) {
        if self.link.stop().is_err() {
            self.engine_gone(scope);
        }
        scope.analysis.searching = false;
    }

    fn engine_gone(&mut self, scope: &mut EngineScope<'_>) {
        self.link.forget_model();
        scope.analysis.searching = false;
        scope.analysis.evaluating = false;
        scope.analysis.model = ModelStatus::Failed("The engine thread has stopped; restart mavboard.".into());
    }

    /// Starts an internal search of the board position on its own thread (one at a time).
    fn internal_search(
        &mut self,
        scope: &mut EngineScope<'_>,
        breadth: usize,
        depth: u32,
        decoding: crate::inference::completer::TraceDecoding,
    ) {
        let Some(info) = scope.analysis.model.info().filter(|_| self.link.has_model()) else {
            scope
                .messages
                .error_about(Topic::Model, "No model is loaded: load one before running internal search.");
            return;
        };
        if info.buckets == 0 {
            scope.messages.error(format!(
                "Internal search needs a model with values: {} is a policy (behavioural cloning), which gives \
                 move probabilities only.",
                info.name
            ));
            return;
        }
        let buckets = match crate::mav::buckets::Buckets::new(u32::try_from(info.buckets).unwrap_or(0)) {
            Ok(b) => b,
            Err(e) => {
                scope.messages.error(format!("Internal search: the model's buckets: {e}"));
                return;
            }
        };
        let config = InternalConfig {
            breadth,
            depth,
            scoring: scope.settings.scoring,
            state_format: crate::mav::command::StateFormat::Fen,
            buckets,
            decoding,
        };
        match self.link.start_internal(scope.current().clone(), config) {
            Ok(()) => scope.analysis.internal.running = true,
            Err(LinkError::Busy) => {}
            Err(e) => {
                scope.messages.error(e.to_string());
            }
        }
    }

    /// Applies the events that arrived since the last frame.
    pub fn drain(&mut self, scope: &mut EngineScope<'_>) {
        if let Some(result) = self.link.poll_internal() {
            scope.analysis.internal.running = false;
            scope.analysis.internal.result = Some(result);
        }
        while let Some(event) = self.link.next_event() {
            match event {
                LinkEvent::Info(report) => self.accept_report(scope, report),
                LinkEvent::Done { report, idle, after_search } => {
                    let root = report.as_ref().map(|r| r.snapshot.root.clone());
                    if let Some(report) = report {
                        self.accept_report(scope, report);
                    }
                    if idle {
                        if after_search {
                            scope.analysis.finished_search = root;
                        }
                        scope.analysis.searching = false;
                        scope.analysis.evaluating = false;
                    }
                }
                LinkEvent::Evaluated { tag, results } => self.review_answers(scope, tag, results),
                LinkEvent::Explored { root, path, children } => {
                    if root.is_some_and(|r| r == scope.current().to_text()) {
                        scope.analysis.explorer.accept(path, children);
                    }
                }
                LinkEvent::Ready => {
                    scope.messages.resolve(Topic::Model);
                    if let ModelStatus::Loading(info) = &scope.analysis.model {
                        scope.analysis.server = ServerHealth::loaded(info.served_by.is_some());
                        scope.analysis.model = ModelStatus::Ready(info.clone());
                        // Reports of the model before it that came in while this one loaded.
                        scope.analysis.evals.clear();
                    }
                    let status = self.device.lock().ok().and_then(|s| s.clone());
                    if let Some(notice) = status.as_ref().and_then(|s| s.notice.as_ref()) {
                        scope.messages.error(format!("Model device: {notice}."));
                    }
                    scope.analysis.device = status;
                }
                LinkEvent::LoadFailed(reason) => {
                    self.model_failed(scope, format!("The model could not be loaded: {reason}"));
                }
                LinkEvent::Error(e) => {
                    if let Some(fault) = server_fault(&e) {
                        scope.analysis.server.failed(fault, SystemTime::now());
                    }
                    scope.messages.error_about(Topic::Evaluation, e.to_string());
                }
            }
        }
        self.poll_reviews(scope);
    }

    /// Takes a search report for the board position (reports for another position are dropped).
    fn accept_report(&mut self, scope: &mut EngineScope<'_>, report: crate::engine::SearchReport) {
        scope.messages.resolve(Topic::Evaluation);
        if report.snapshot.moves.iter().any(|m| m.model.is_some()) {
            scope.analysis.server.answered(SystemTime::now());
        }
        let current = scope.current().clone();
        if scope.analysis.accept_report(report, &current) {
            self.refresh_explorer(scope);
        }
    }

    /// Asks the engine for the children of a node of the search tree explorer.
    fn explore(&mut self, scope: &mut EngineScope<'_>, path: Vec<String>) {
        if self.link.send(Command::Explore { tag: 0, path }).is_err() {
            self.engine_gone(scope);
        }
    }

    /// Asks again for every expanded node of the explorer (a new report changed the tree).
    fn refresh_explorer(&mut self, scope: &mut EngineScope<'_>) {
        let paths: Vec<Vec<String>> = scope.analysis.explorer.expanded.iter().cloned().collect();
        for path in paths {
            self.explore(scope, path);
        }
    }

    /// Whether the last `Go` sent was a user's search that is still out.
    pub fn searching(&self) -> bool {
        self.link.searching()
    }
}

/// The frame hooks drive the chess glue through this (see `app/state/frame.rs`).
impl super::state::frame::EngineGlue for EngineLink {
    fn drain(&mut self, scope: &mut EngineScope<'_>) {
        EngineLink::drain(self, scope);
    }

    fn frame(&mut self, scope: &mut EngineScope<'_>) {
        EngineLink::frame(self, scope);
    }

    fn searching(&self) -> bool {
        EngineLink::searching(self)
    }
}

/// Who judges a review: `Some(None)` when the model does, `Some(Some(engine))` when a UCI engine does (the
/// engine panel's, else Stockfish), or `None` after telling the user why there is no engine and how to fix it.
fn review_judge(settings: &Settings, messages: &mut Messages) -> Option<Option<JudgeSpec>> {
    if settings.review.reviewer != super::uci_review::Reviewer::Uci {
        return Some(None);
    }
    match crate::uci::locate::locate_stockfish(settings.uci_engine.path.as_deref()) {
        Ok(path) => Some(Some(JudgeSpec { path, depth: settings.review.depth })),
        Err(e) => {
            messages.error(format!(
                "The review's engine: {e}. Set the engine's path in the UCI engine panel, or review by the model."
            ));
            None
        }
    }
}

/// A factory that opens the package in `dir` on each inference worker (falling back to the CPU when the
/// requested device cannot be used; see [`model_runtime::model_factory`] to learn the provider in use).
pub fn model_factory(dir: PathBuf, options: SessionOptions) -> EvaluatorFactory {
    model_runtime::model_factory(dir, options, model_runtime::DeviceSlot::default())
}

impl std::fmt::Debug for EngineLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineLink").field("link", &self.link).finish()
    }
}

/// The failure of a remote package's server behind an engine error, if that is what it is: the root's
/// evaluation failed with [`EvalError::Server`].
fn server_fault(e: &EngineError) -> Option<&str> {
    match e {
        EngineError::Search(SearchError::RootEvaluation(EvalError::Server(why))) => Some(why),
        _ => None,
    }
}
