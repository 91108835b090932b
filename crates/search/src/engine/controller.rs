//! The engine thread: owns the search tree, the inference pool and the current position; reacts to
//! commands, evaluation results and finished model loads, and drives the MCTS batch state machine.
//!
//! It never blocks on a model: evaluations run on the pool's workers, and the thread waits on commands,
//! results and its own deadlines (next info, move time, the t0 of the oldest evaluation) together, so a
//! `Stop` is answered as soon as it arrives.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, never, select};

use super::api::{
    Command, EngineConfig, EngineError, EvaluatorFactory, Event, FactoryError, GoLimits, Repaint,
};
use super::api::{EvaluatorBox, ExploreError, SearchReport};
use super::pool::{Done, JobError, Pool, PoolError};
use super::position::GamePosition;
use crate::inference::cache::{CacheKey, ResultCache};
use crate::inference::evaluator::{EvalError, EvalRequest, EvalResult};
use crate::mav::state::MavState;
use crate::search::SearchError;
use crate::search::mcts::{Completion, EvalTicket, Mcts, MctsParams, Ticket};

type EvalJob<S> = Vec<EvalRequest<S>>;
type EvalOut<S> = Vec<Result<EvalResult<S>, EvalError>>;
type EvalPool<S> = Pool<EvalJob<S>, EvalOut<S>, FactoryError>;
type LoadResult<S> = (u64, Result<EvalPool<S>, PoolError<FactoryError>>);

/// Batches selected in one go without sending any evaluation (only terminal visits or cached answers)
/// before the thread checks its channels again.
const MAX_IDLE_BATCHES: usize = 64;

/// A batch out on a worker: a search's, or a [`Command::Evaluate`]'s.
struct Job {
    search: u64,
    tickets: Vec<Ticket>,
    /// The cache keys of a search's requests, in ticket order.
    keys: Vec<CacheKey>,
    sent: Instant,
    /// `Some(tag)` for a [`Command::Evaluate`] (then `search` and `tickets` are unused).
    direct: Option<(u64, usize)>,
}

/// How long a stop waits for the root's first evaluation at most (see [`Controller::defer_stop`]).
const STOP_GRACE: Duration = Duration::from_millis(500);

/// The longest a search's batch should keep a worker busy, judged by the model's measured time per
/// position: a `stop` or a new position waits at most this long for a worker (a model call cannot be
/// interrupted). A GUI expects `bestmove` within about 50 ms of `stop`, and a search stopped at once
/// still needs its root's evaluation after the batch it waits for, so half of that: on a CPU, where a
/// batch of one position is as fast per position as a larger one, this costs nothing. A batch holds at
/// least one position.
const MAX_BATCH_TIME: Duration = Duration::from_millis(25);

/// How much a new measurement of the time per position moves the running average (0–1).
const ROW_TIME_WEIGHT: f64 = 0.25;

/// The running search.
struct Active {
    id: u64,
    limits: GoLimits,
    started: Instant,
    start_simulations: u64,
    next_info: Instant,
    /// Evaluations answered from the engine's cache since the `go`.
    cache_hits: u64,
    /// When a stop (or the end of the move time) came while the root was not yet evaluated: the search
    /// then ends as soon as the root's evaluation is in (see [`Controller::defer_stop`]).
    stopping: Option<Instant>,
}

/// What woke the thread. A command is boxed: it carries the search settings, several times the size of the
/// other wake-ups.
enum Wake<S: MavState> {
    Command(Option<Box<Command<S>>>),
    Result(Option<Done<EvalOut<S>, FactoryError>>),
    Loaded(Option<LoadResult<S>>),
    Timeout,
}

pub(crate) struct Controller<S: MavState> {
    commands: Receiver<Command<S>>,
    events: Sender<Event<S>>,
    repaint: Repaint,
    config: EngineConfig,
    params: MctsParams,
    position: GamePosition<S>,
    tree: Option<Mcts<S>>,
    pool: Option<EvalPool<S>>,
    workers: usize,
    loading: Option<Receiver<LoadResult<S>>>,
    load_generation: u64,
    pending_go: Option<(GoLimits, MctsParams)>,
    /// [`Command::Evaluate`]s that arrived while a model was loading.
    pending_evals: Vec<(u64, Vec<EvalRequest<S>>)>,
    active: Option<Active>,
    /// Every batch out on a worker, until its result comes back (or its t0 passes): those of the running
    /// search, of [`Command::Evaluate`], and of searches that ended meanwhile, whose answers go to the
    /// cache. A worker runs one batch at a time, so a new batch waits for a free one rather than queue
    /// behind them.
    jobs: HashMap<usize, Job>,
    /// The model's time per position, a running average over the batches that came back (`None` until
    /// one has): sizes batches to [`MAX_BATCH_TIME`] and to the time a timed search has left.
    row_time: Option<Duration>,
    next_search: u64,
    /// Set when the last feed stopped early with work left: wait with a zero timeout.
    busy: bool,
    /// The model's answers to earlier search requests (emptied when another model loads), so a position
    /// met again (a transposition, or a position searched before the tree was replaced) costs no call.
    cache: ResultCache<S>,
}

impl<S: MavState> Controller<S> {
    pub(crate) fn new(
        start: S,
        commands: Receiver<Command<S>>,
        events: Sender<Event<S>>,
        repaint: Repaint,
        config: EngineConfig,
    ) -> Controller<S> {
        Controller {
            commands,
            events,
            repaint,
            config,
            params: MctsParams::default(),
            position: GamePosition::at(start),
            tree: None,
            pool: None,
            workers: 0,
            loading: None,
            load_generation: 0,
            pending_go: None,
            pending_evals: Vec::new(),
            active: None,
            jobs: HashMap::new(),
            row_time: None,
            next_search: 0,
            busy: false,
            cache: ResultCache::new(config.cache_entries),
        }
    }

    fn emit(&self, event: Event<S>) {
        // The receiver may be gone (the handle was dropped); the thread then ends at the next command.
        let _ = self.events.send(event);
        (self.repaint)();
    }

    fn error(&self, e: EngineError) {
        self.emit(Event::Error(e));
    }

    /// Runs until [`Command::Quit`] or until the handle is dropped.
    pub(crate) fn run(mut self) {
        loop {
            if self.active.is_some() {
                self.tick();
            }
            match self.wait() {
                Wake::Command(None) => break,
                Wake::Command(Some(c)) if matches!(*c, Command::Quit) => break,
                Wake::Command(Some(c)) => self.command(*c),
                Wake::Result(Some(done)) => self.result(done),
                Wake::Result(None) => {
                    // Every worker lost its evaluator.
                    self.pool = None;
                    let direct: Vec<(u64, usize)> = self.jobs.values().filter_map(|j| j.direct).collect();
                    self.jobs.retain(|_, j| j.direct.is_none());
                    for (tag, count) in direct {
                        self.answer_unevaluated(tag, count, "every inference worker has stopped");
                    }
                    self.error(EngineError::Load(
                        "every inference worker has stopped; load the model again".into(),
                    ));
                    self.finish();
                }
                Wake::Loaded(Some((generation, result))) => self.loaded(generation, result),
                Wake::Loaded(None) => {
                    self.loading = None;
                    for (tag, requests) in std::mem::take(&mut self.pending_evals) {
                        self.answer_unevaluated(tag, requests.len(), "the model loader stopped unexpectedly");
                    }
                }
                Wake::Timeout => {}
            }
        }
        self.finish();
        if let Some(pool) = self.pool.take() {
            retire(pool);
        }
    }

    /// The next time the thread must act without being woken by a channel.
    fn deadline(&self) -> Option<Instant> {
        let active = self.active.as_ref()?;
        let mut at = active.next_info;
        if let Some(t) = active.limits.movetime.filter(|_| !active.limits.infinite) {
            at = at.min(active.started + t);
        }
        if let Some(oldest) =
            self.jobs.values().filter(|j| j.direct.is_none() && j.search == active.id).map(|j| j.sent).min()
        {
            at = at.min(oldest + self.config.eval_timeout);
        }
        Some(at)
    }

    fn wait(&self) -> Wake<S> {
        let timeout = if self.busy {
            Duration::ZERO
        } else {
            self.deadline().map_or(Duration::from_secs(3600), |d| d.saturating_duration_since(Instant::now()))
        };
        let none_results = never();
        let results = self.pool.as_ref().map_or(&none_results, |p| p.results());
        let none_loads = never();
        let loads = self.loading.as_ref().unwrap_or(&none_loads);
        select! {
            recv(self.commands) -> c => Wake::Command(c.ok().map(Box::new)),
            recv(results) -> r => Wake::Result(r.ok()),
            recv(loads) -> l => Wake::Loaded(l.ok()),
            default(timeout) => Wake::Timeout,
        }
    }

    fn command(&mut self, command: Command<S>) {
        match command {
            Command::SetPosition { start, moves } => {
                self.finish();
                self.cancel_pending();
                match GamePosition::new(start, &moves) {
                    Ok(next) => self.set_position(next),
                    Err(e) => self.error(e),
                }
            }
            Command::Go { limits, params } => {
                self.finish();
                self.cancel_pending();
                if self.loading.is_some() {
                    self.pending_go = Some((limits, params));
                } else if self.pool.is_none() {
                    self.error(EngineError::NoEvaluator);
                    self.emit(Event::Done { report: None, best_move: None });
                } else {
                    self.start(limits, params);
                }
            }
            Command::Stop => {
                if !self.defer_stop() {
                    self.finish();
                }
                self.cancel_pending();
            }
            Command::SetParams(params) => match params.validate() {
                Err(e) => self.error(EngineError::Search(e)),
                Ok(()) => {
                    if let Some(tree) = self.tree.as_mut().filter(|_| self.active.is_some()) {
                        // Validated above; a new scoring while evaluations are out is refused by the
                        // running tree and applies from the next search (a new tree).
                        let _ = tree.set_params(params.clone());
                    }
                    self.params = params;
                }
            },
            Command::SetConfig(config) => {
                if config.batch_size == 0 {
                    self.error(EngineError::Config("the batch size must be at least 1".into()));
                } else {
                    if config.cache_entries != self.config.cache_entries {
                        self.cache = ResultCache::new(config.cache_entries);
                    }
                    self.config = config;
                }
            }
            Command::LoadEvaluator { factory, workers } => self.load(factory, workers),
            Command::Evaluate { tag, requests } => self.evaluate(tag, requests),
            Command::Explore { tag, path } => self.explore(tag, path),
            Command::NewGame => {
                self.finish();
                self.cancel_pending();
                self.tree = None;
                self.cache.clear();
            }
            Command::Quit => {}
        }
    }

    fn set_position(&mut self, next: GamePosition<S>) {
        let extra = self.position.moves_to(&next).map(<[_]>::to_vec);
        self.tree = match (self.tree.take(), extra) {
            (Some(mut tree), Some(extra)) => {
                let ok = extra.iter().all(|&m| tree.advance(m).is_ok());
                ok.then_some(tree)
            }
            _ => None,
        };
        self.position = next;
    }

    fn start(&mut self, limits: GoLimits, params: MctsParams) {
        if self.tree.as_ref().is_some_and(|t| t.params().scoring != params.scoring && t.in_flight() > 0) {
            // Its values are under another scoring and its evaluations are still out: start afresh.
            self.tree = None;
        }
        let ready = match self.tree.as_mut() {
            Some(tree) => tree.set_params(params.clone()),
            None => {
                Mcts::new(self.position.current.clone(), self.position.ply(), params.clone()).map(|mut t| {
                    t.set_root_history(self.position.history(crate::search::mcts::HISTORY_KEPT));
                    self.tree = Some(t);
                })
            }
        };
        if let Err(e) = ready {
            self.error(EngineError::Search(e));
            self.emit(Event::Done { report: None, best_move: None });
            return;
        }
        self.params = params;
        let now = Instant::now();
        let start_simulations = self.tree.as_ref().map_or(0, |t| t.stats().simulations);
        self.active = Some(Active {
            id: self.next_search,
            limits,
            started: now,
            start_simulations,
            next_info: now + self.config.info_interval,
            cache_hits: 0,
            stopping: None,
        });
        self.next_search += 1;
    }

    /// Answers a [`Command::Explore`] from the search tree as it is now.
    fn explore(&self, tag: u64, path: Vec<String>) {
        let Some(tree) = self.tree.as_ref() else {
            let children = Err(ExploreError::NoTree);
            return self.emit(Event::Explored { tag, root: None, path, children });
        };
        let mut here = tree.root_state().clone();
        let mut actions = Vec::with_capacity(path.len());
        let mut bad = None;
        for text in &path {
            match here.parse_action(text).and_then(|a| Ok((a, here.play(a)?))) {
                Ok((a, next)) => {
                    actions.push(a);
                    here = next;
                }
                Err(e) => {
                    bad = Some(ExploreError::IllegalMove { text: text.clone(), reason: e });
                    break;
                }
            }
        }
        let children = match bad {
            Some(why) => Err(why),
            None => tree
                .children(&actions)
                .map(|mut c| {
                    c.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
                    c
                })
                .map_err(ExploreError::from),
        };
        self.emit(Event::Explored { tag, root: Some(tree.root_state().to_text()), path, children });
    }

    fn cancel_pending(&mut self) {
        if self.pending_go.take().is_some() {
            self.emit(Event::Done { report: None, best_move: None });
        }
    }

    fn report(&self) -> Option<SearchReport> {
        let (tree, active) = (self.tree.as_ref()?, self.active.as_ref()?);
        Some(SearchReport {
            snapshot: tree.snapshot(),
            elapsed: active.started.elapsed(),
            simulations: tree.stats().simulations.saturating_sub(active.start_simulations),
            cache_hits: active.cache_hits,
            cache_used: self.cache.len(),
            cache_capacity: self.config.cache_entries,
        })
    }

    /// Whether a stop of the running search (`stop`, or its move time is up) waits: it does while the root
    /// is not evaluated yet, from the first stop for at most the search's `stop_grace` ([`STOP_GRACE`] unless
    /// its limits say) or the evaluation timeout, if shorter, so that a search stopped at once still answers
    /// with a move (a GUI takes `bestmove 0000` for a null move, a tournament manager for an illegal one),
    /// and a model slower than that does not hold the stop up. Until the root's answer is in, nothing else
    /// is sent.
    fn defer_stop(&mut self) -> bool {
        let (Some(active), Some(tree)) = (self.active.as_mut(), self.tree.as_ref()) else { return false };
        let timeout = self.config.eval_timeout.min(active.limits.stop_grace.unwrap_or(STOP_GRACE));
        if !tree.root_awaits_evaluation() {
            return false;
        }
        let now = Instant::now();
        let since = *active.stopping.get_or_insert(now);
        now < since + timeout
    }

    /// Ends the running search (if any): gives up its evaluations and sends its [`Event::Done`].
    fn finish(&mut self) {
        self.busy = false;
        if self.active.is_none() {
            return;
        }
        // Its batches still out stay in `jobs` until they come back: they keep their workers busy, and
        // their answers go to the cache.
        if let Some(tree) = self.tree.as_mut() {
            tree.abandon_all();
        }
        let report = self.report();
        let best_move = self.tree.as_ref().and_then(|t| {
            let a = t.best_action()?;
            Some(t.root_state().action_to_text(a))
        });
        self.active = None;
        self.emit(Event::Done { report, best_move });
    }

    /// One step of the running search: limits, timeouts, new batches, info.
    fn tick(&mut self) {
        self.busy = false;
        let now = Instant::now();
        let (Some(active), Some(_)) = (self.active.as_ref(), self.tree.as_ref()) else { return };
        let id = active.id;
        let limits = active.limits;
        let stop = active.stopping.is_some()
            || (!limits.infinite && limits.movetime.is_some_and(|t| now >= active.started + t));
        self.abandon_late(id, now);
        if stop && !self.defer_stop() {
            return self.finish();
        }
        let (Some(active), Some(tree)) = (self.active.as_ref(), self.tree.as_ref()) else { return };
        let start_simulations = active.start_simulations;
        let deadline = limits.movetime.filter(|_| !limits.infinite).map(|t| active.started + t);
        let cap = batch_cap(self.row_time, now, deadline, tree.root_awaits_evaluation());
        let round = self.send_batches(id, limits, start_simulations, cap, now);
        if let Some(active) = self.active.as_mut() {
            active.cache_hits += round.hits;
        }
        if let Some(e) = round.root_error {
            self.error(EngineError::Search(e));
            return self.finish();
        }
        let Some(tree) = self.tree.as_ref() else { return };
        let reached = limits_reached(tree, limits, start_simulations);
        // A timed search with no batch out and no time for another has nothing more to wait for: ending
        // now leaves the rest of its time on the clock.
        let spent = cap == 0 && !self.jobs.values().any(|j| j.direct.is_none() && j.search == id);
        if reached || (round.stuck && !limits.infinite) || spent {
            return self.finish();
        }
        if round.stuck {
            // Infinite search over a finished tree: nothing to do until stopped.
            self.busy = false;
        }
        self.send_info(now);
    }

    /// Gives up the evaluations of search `id` past t0; a late result finds no job and is dropped.
    fn abandon_late(&mut self, id: u64, now: Instant) {
        let Some(tree) = self.tree.as_mut() else { return };
        let t0 = self.config.eval_timeout;
        let late: Vec<usize> = self
            .jobs
            .iter()
            .filter(|(_, j)| j.direct.is_none() && now >= j.sent + t0)
            .map(|(&i, _)| i)
            .collect();
        for i in late {
            if let Some(job) = self.jobs.remove(&i).filter(|j| j.search == id) {
                for t in job.tickets {
                    tree.abandon(t);
                }
            }
        }
    }

    /// Selects batches of search `id` and sends them to the free workers (answering what the cache holds at
    /// once), until the workers are busy, the limits allow no more, or selection stops making progress.
    fn send_batches(
        &mut self,
        id: u64,
        limits: GoLimits,
        start_simulations: u64,
        cap: usize,
        now: Instant,
    ) -> Round {
        let mut round = Round { stuck: false, hits: 0, root_error: None };
        let Some(tree) = self.tree.as_mut() else { return round };
        let mut idle_batches = 0;
        let mut free = self.workers.saturating_sub(self.jobs.len());
        // While the root's own evaluation is out every pass would only collide with it.
        while free > 0 && !tree.is_root_pending() {
            let done = tree.stats().simulations.saturating_sub(start_simulations);
            let mut want = self.config.batch_size.min(cap);
            if let Some(limit) = limits.simulations.filter(|_| !limits.infinite) {
                let left = limit.saturating_sub(done).saturating_sub(tree.in_flight() as u64);
                want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            if want == 0 {
                break;
            }
            let batch = tree.select_batch(want);
            if batch.evals.is_empty() {
                if !batch.made_progress() {
                    round.stuck = tree.in_flight() == 0;
                    break;
                }
                idle_batches += 1;
                if idle_batches >= MAX_IDLE_BATCHES {
                    self.busy = true;
                    break;
                }
                continue;
            }
            let (tickets, keys, requests) = answer_cached(tree, &self.cache, batch.evals, &mut round);
            if round.root_error.is_some() {
                break;
            }
            if requests.is_empty() {
                // All answered from the cache: the tree has new values; select again, but look at the
                // channels now and then (a Stop must not wait for a long run of cached answers).
                idle_batches += 1;
                if idle_batches >= MAX_IDLE_BATCHES {
                    self.busy = true;
                    break;
                }
                continue;
            }
            if let Some(pool) = self.pool.as_mut() {
                let index = pool.submit(requests);
                self.jobs.insert(index, Job { search: id, tickets, keys, sent: now, direct: None });
            }
            free -= 1;
        }
        round
    }

    /// Sends an [`Event::Info`] when the running search's next info is due.
    fn send_info(&mut self, now: Instant) {
        if let Some(active) = self.active.as_mut()
            && now >= active.next_info
        {
            active.next_info = now + self.config.info_interval;
            if let Some(report) = self.report() {
                self.emit(Event::Info(report));
            }
        }
    }

    /// Sends a [`Command::Evaluate`] to the workers (or holds it while a model loads).
    fn evaluate(&mut self, tag: u64, requests: Vec<EvalRequest<S>>) {
        if self.loading.is_some() {
            self.pending_evals.push((tag, requests));
            return;
        }
        let Some(pool) = self.pool.as_mut() else {
            return self.answer_unevaluated(tag, requests.len(), "no model is loaded: load one first");
        };
        let count = requests.len();
        let index = pool.submit(requests);
        self.jobs.insert(
            index,
            Job {
                search: u64::MAX,
                tickets: Vec::new(),
                keys: Vec::new(),
                sent: Instant::now(),
                direct: Some((tag, count)),
            },
        );
    }

    /// Answers a [`Command::Evaluate`] that cannot be evaluated: every result is the same error.
    fn answer_unevaluated(&self, tag: u64, count: usize, why: &str) {
        let results = (0..count).map(|_| Err(EvalError::Backend(why.to_owned()))).collect();
        self.emit(Event::Evaluated { tag, results });
    }

    fn result(&mut self, done: Done<EvalOut<S>, FactoryError>) {
        let Some(job) = self.jobs.remove(&done.index) else { return };
        if let Some((tag, count)) = job.direct {
            let mut results = match done.result {
                Ok(results) => results,
                Err(e) => {
                    let why = match e {
                        JobError::Panicked(m) => m,
                        JobError::Failed(e) => e.to_string(),
                    };
                    self.error(EngineError::EvaluatorPanicked(why.clone()));
                    Vec::new()
                }
            };
            results.truncate(count);
            while results.len() < count {
                results
                    .push(Err(EvalError::Backend("the evaluator gave no result for this position".into())));
            }
            return self.emit(Event::Evaluated { tag, results });
        }
        let current = self.active.as_ref().is_some_and(|a| a.id == job.search);
        let results: EvalOut<S> = match done.result {
            Ok(results) => {
                self.measure(job.sent.elapsed(), job.tickets.len());
                results
            }
            Err(e) if current => {
                let why = match e {
                    JobError::Panicked(m) => m,
                    JobError::Failed(e) => e.to_string(),
                };
                let _ = self.events.send(Event::Error(EngineError::EvaluatorPanicked(why.clone())));
                (self.repaint)();
                Vec::new()
            }
            Err(_) => Vec::new(),
        };
        if !current {
            // A batch of a search that has ended: its answers still serve the searches to come.
            for (key, result) in job.keys.iter().zip(&results) {
                if let Ok(v) = result {
                    self.cache.insert(*key, v.clone());
                }
            }
            return;
        }
        let Some(tree) = self.tree.as_mut() else { return };
        let mut results = results.into_iter();
        let mut root_error = None;
        for (i, ticket) in job.tickets.into_iter().enumerate() {
            let result = results.next().unwrap_or_else(|| {
                Err(EvalError::Backend("the evaluator gave no result for this position".into()))
            });
            if let (Ok(v), Some(key)) = (&result, job.keys.get(i)) {
                self.cache.insert(*key, v.clone());
            }
            let is_root = tree.is_root_pending();
            let error = result.as_ref().err().cloned();
            if let (Completion::NodeFailed(why), true) = (tree.complete(ticket, result), is_root) {
                root_error = Some(match error {
                    Some(e) => SearchError::RootEvaluation(e),
                    None => SearchError::RootUnusable(why),
                });
            }
        }
        if let Some(e) = root_error {
            self.error(EngineError::Search(e));
            self.finish();
        }
    }

    /// Adds a search batch's time (from its submission, when a worker was free, to its result) to the
    /// running average of the time per position.
    fn measure(&mut self, took: Duration, rows: usize) {
        let Some(per) = u32::try_from(rows).ok().filter(|&n| n > 0).map(|n| took / n) else { return };
        self.row_time = Some(match self.row_time {
            None => per,
            Some(old) => old.mul_f64(1.0 - ROW_TIME_WEIGHT) + per.mul_f64(ROW_TIME_WEIGHT),
        });
    }

    fn load(&mut self, factory: EvaluatorFactory<S>, workers: usize) {
        if workers == 0 {
            return self.error(EngineError::Config("at least one inference worker is needed".into()));
        }
        self.load_generation += 1;
        let generation = self.load_generation;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let spawned = super::detached::spawn("mavboard-load", move || {
            let pool = Pool::new(
                "mavboard-eval",
                workers,
                move |w| factory(w),
                |evaluator: &mut EvaluatorBox<S>, requests: EvalJob<S>| Ok(evaluator.evaluate(&requests)),
            );
            // The engine may have quit meanwhile; the pool is then dropped here.
            let _ = tx.send((generation, pool));
        });
        match spawned {
            Ok(()) => self.loading = Some(rx),
            Err(e) => self.error(EngineError::Thread(format!("could not start the loading thread: {e}"))),
        }
    }

    fn loaded(&mut self, generation: u64, result: Result<EvalPool<S>, PoolError<FactoryError>>) {
        if generation != self.load_generation {
            if let Ok(pool) = result {
                retire(pool);
            }
            return;
        }
        self.loading = None;
        match result {
            Ok(pool) => {
                // Evaluations out on the old workers are given up; a running search goes on with the new ones.
                let direct: Vec<(u64, usize)> = self.jobs.values().filter_map(|j| j.direct).collect();
                self.jobs.clear();
                for (tag, count) in direct {
                    self.answer_unevaluated(
                        tag,
                        count,
                        "the model was replaced before these positions were valued",
                    );
                }
                // Another model answers differently: nothing of the old one is answered from the cache, and
                // unless a search is running (which goes on with the new workers) the next one starts afresh
                // rather than on a tree grown from the old model's values and priors.
                if let Some(tree) = self.tree.as_mut() {
                    tree.abandon_all();
                }
                if self.active.is_none() {
                    self.tree = None;
                }
                self.cache.clear();
                self.workers = pool.live_workers().max(1);
                if let Some(old) = self.pool.replace(pool) {
                    retire(old);
                }
                self.emit(Event::EvaluatorReady { workers: self.workers });
                for (tag, requests) in std::mem::take(&mut self.pending_evals) {
                    self.evaluate(tag, requests);
                }
                if let Some((limits, params)) = self.pending_go.take() {
                    self.start(limits, params);
                }
            }
            Err(e) => {
                self.error(EngineError::Load(e.to_string()));
                self.cancel_pending();
                for (tag, requests) in std::mem::take(&mut self.pending_evals) {
                    let why = format!("the model could not be loaded: {e}");
                    self.answer_unevaluated(tag, requests.len(), &why);
                }
            }
        }
    }
}

/// What one round of [`Controller::send_batches`] found.
struct Round {
    /// The tree has nothing left to select and no evaluation out.
    stuck: bool,
    /// Evaluations answered from the cache.
    hits: u64,
    /// A cached answer that leaves the root unusable.
    root_error: Option<SearchError>,
}

/// The requests of a selected batch that need the model (tickets, cache keys and requests, in order); the
/// others are answered from `cache` at once, a root they leave unusable noted in `round`.
fn answer_cached<S: MavState>(
    tree: &mut Mcts<S>,
    cache: &ResultCache<S>,
    evals: Vec<EvalTicket<S>>,
    round: &mut Round,
) -> (Vec<Ticket>, Vec<CacheKey>, Vec<EvalRequest<S>>) {
    let (mut tickets, mut keys, mut requests) = (Vec::new(), Vec::new(), Vec::new());
    for e in evals {
        let key = CacheKey::of(&e.request);
        match cache.get(&key) {
            Some(hit) => {
                round.hits += 1;
                let is_root = tree.is_root_pending();
                if let (Completion::NodeFailed(why), true) =
                    (tree.complete(e.ticket, Ok(hit.clone())), is_root)
                {
                    round.root_error = Some(SearchError::RootUnusable(why));
                }
            }
            None => {
                tickets.push(e.ticket);
                keys.push(key);
                requests.push(e.request);
            }
        }
    }
    (tickets, keys, requests)
}

/// Whether the search's depth, mate or simulation limit is reached.
fn limits_reached<S: MavState>(tree: &Mcts<S>, limits: GoLimits, start_simulations: u64) -> bool {
    let done = tree.stats().simulations.saturating_sub(start_simulations);
    let mut reached = !limits.infinite && limits.simulations.is_some_and(|l| done >= l);
    if !limits.infinite && (limits.depth.is_some() || limits.mate.is_some()) {
        let (plies, result) = tree.pv_outcome();
        let deep = limits.depth.is_some_and(|d| plies >= d as usize || (plies > 0 && result.is_some()));
        let mate = limits.mate.is_some_and(|m| result == Some(1.0) && plies < 2 * m as usize);
        reached |= deep || mate;
    }
    reached
}

/// Drops a pool on its own thread: dropping waits for each worker's current job, which may be slow.
fn retire<S: MavState>(pool: EvalPool<S>) {
    let spawned = super::detached::spawn("mavboard-retire", move || {
        drop(pool);
        // The model's sessions were C++ memory: give its free pages back rather than keep them for a
        // load on other threads that cannot use them.
        crate::c_heap::release_freed();
    });
    // If no thread can be started the pool was dropped (and waited for) in place.
    drop(spawned);
}

/// How many positions the next batch of a search may hold, with the model's time per position
/// `row_time` (no limit before it is measured): as many as fit in [`MAX_BATCH_TIME`], at least one, and
/// for a search that ends at `deadline`, only as many as can come back before it (none: nothing sent now
/// can change the move), except that the root's first evaluation is always sent.
fn batch_cap(
    row_time: Option<Duration>,
    now: Instant,
    deadline: Option<Instant>,
    root_awaits: bool,
) -> usize {
    let Some(row) = row_time.filter(|r| !r.is_zero()) else { return usize::MAX };
    let fits = |budget: Duration| usize::try_from(budget.as_nanos() / row.as_nanos()).unwrap_or(usize::MAX);
    let mut cap = fits(MAX_BATCH_TIME).max(1);
    if let Some(end) = deadline {
        cap = cap.min(fits(end.saturating_duration_since(now)));
    }
    if root_awaits { cap.max(1) } else { cap }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_batch_fits_the_latency_budget_and_the_time_left() {
        let now = Instant::now();
        // Not measured yet: the configured batch size applies.
        assert_eq!(batch_cap(None, now, Some(now + MS), false), usize::MAX);
        // 6 ms a position: 4 fit in 25 ms; 2 in the 15 ms a timed search has left; none in 5 ms.
        assert_eq!(batch_cap(Some(6 * MS), now, None, false), 4);
        assert_eq!(batch_cap(Some(6 * MS), now, Some(now + 15 * MS), false), 2);
        assert_eq!(batch_cap(Some(6 * MS), now, Some(now + 5 * MS), false), 0);
        // Past the deadline, or a model slower than the budget: one, if the root still needs it.
        assert_eq!(batch_cap(Some(6 * MS), now + 20 * MS, Some(now + 10 * MS), true), 1);
        assert_eq!(batch_cap(Some(200 * MS), now, None, false), 1);
        // A fast model: the budget allows more than any batch size.
        assert_eq!(batch_cap(Some(Duration::from_micros(100)), now, None, false), 250);
    }
}
