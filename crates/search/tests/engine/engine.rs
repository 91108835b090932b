//! The engine thread with mock evaluators: searching, info events, stop latency, crashes and load errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mavboard_search::engine::{
    Command, Engine, EngineConfig, EngineError, EvaluatorBox, EvaluatorFactory, Event, GoLimits, SearchReport,
};
use mavboard_search::game::GameState;
use mavboard_search::game::chess::ChessState;
use mavboard_search::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use mavboard_search::inference::material::MaterialEvaluator;
use mavboard_search::search::mcts::MctsParams;

const WAIT: Duration = Duration::from_secs(20);

fn material_factory() -> EvaluatorFactory {
    Arc::new(|w| Ok(Box::new(MaterialEvaluator::new(w as u64)) as EvaluatorBox))
}

/// Sleeps before every batch.
struct Slow(MaterialEvaluator, Duration);

impl Evaluator<ChessState> for Slow {
    fn evaluate(&mut self, r: &[EvalRequest<ChessState>]) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        std::thread::sleep(self.1);
        self.0.evaluate(r)
    }
}

/// Sleeps a time per position, and records the size of every batch.
struct PerPosition(MaterialEvaluator, Duration, Arc<Mutex<Vec<usize>>>);

impl Evaluator<ChessState> for PerPosition {
    fn evaluate(&mut self, r: &[EvalRequest<ChessState>]) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        self.2.lock().expect("not poisoned").push(r.len());
        std::thread::sleep(self.1 * u32::try_from(r.len()).expect("a small batch"));
        self.0.evaluate(r)
    }
}

fn per_position(each: Duration) -> (EvaluatorFactory, Arc<Mutex<Vec<usize>>>) {
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&sizes);
    let factory: EvaluatorFactory = Arc::new(move |w| {
        Ok(Box::new(PerPosition(MaterialEvaluator::new(w as u64), each, Arc::clone(&seen))) as EvaluatorBox)
    });
    (factory, sizes)
}

/// Panics on the first call made through any instance sharing `calls`.
struct PanicsOnce(MaterialEvaluator, Arc<AtomicUsize>);

impl Evaluator<ChessState> for PanicsOnce {
    fn evaluate(&mut self, r: &[EvalRequest<ChessState>]) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        if self.1.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("mock evaluator exploded");
        }
        self.0.evaluate(r)
    }
}

fn start(factory: EvaluatorFactory, workers: usize) -> (Engine, Arc<AtomicUsize>) {
    let repaints = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&repaints);
    let engine = Engine::start(
        EngineConfig { batch_size: 8, ..EngineConfig::default() },
        Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }),
    )
    .expect("engine starts");
    engine.send(Command::LoadEvaluator { factory, workers }).expect("engine runs");
    match engine.events().recv_timeout(WAIT).expect("an event") {
        Event::EvaluatorReady { workers: w } => assert_eq!(w, workers),
        other => panic!("expected EvaluatorReady, got {other:?}"),
    }
    (engine, repaints)
}

/// Collects events until the search's `Done`: (infos, errors, report, best move).
fn until_done(
    engine: &Engine,
) -> (Vec<SearchReport>, Vec<EngineError>, Option<SearchReport>, Option<String>) {
    let (mut infos, mut errors) = (Vec::new(), Vec::new());
    loop {
        match engine.events().recv_timeout(WAIT).expect("the search ends in time") {
            Event::Info(r) => infos.push(r),
            Event::Error(e) => errors.push(e),
            Event::Done { report, best_move } => return (infos, errors, report, best_move),
            Event::EvaluatorReady { .. } => panic!("unexpected EvaluatorReady"),
            Event::Evaluated { .. } => panic!("unexpected Evaluated"),
            Event::Explored { .. } => panic!("unexpected Explored"),
        }
    }
}

fn go(engine: &Engine, limits: GoLimits) {
    engine.send(Command::Go { limits, params: MctsParams::default() }).expect("engine runs");
}

#[test]
fn searches_to_the_simulation_limit_and_names_a_legal_move() {
    let (engine, repaints) = start(material_factory(), 2);
    // White can win the queen on d8 with the rook.
    let start = ChessState::from_fen("3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1").expect("valid FEN");
    engine.send(Command::SetPosition { start: start.clone(), moves: Vec::new() }).expect("engine runs");
    go(&engine, GoLimits { simulations: Some(300), ..GoLimits::default() });
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    let report = report.expect("a final report");
    assert!(report.simulations >= 300, "{} simulations", report.simulations);
    assert!(report.simulations < 300 + 16, "{} simulations overshoot the limit", report.simulations);
    assert_eq!(report.snapshot.root, start.to_text());
    let best = best.expect("a best move");
    assert!(start.parse_action(&best).is_ok(), "{best} is not legal");
    assert_eq!(best, "d1d8");
    assert_eq!(report.snapshot.best.as_deref(), Some("d1d8"));
    // The engine sends an event, then calls repaint: the last call may still be on its way.
    let deadline = Instant::now() + WAIT;
    while repaints.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(repaints.load(Ordering::SeqCst) >= 2, "repaint is called after events");
}

#[test]
fn info_events_come_while_searching_and_stop_ends_an_infinite_search() {
    let slow: EvaluatorFactory = Arc::new(|w| {
        Ok(Box::new(Slow(MaterialEvaluator::new(w as u64), Duration::from_millis(20))) as EvaluatorBox)
    });
    let (engine, _) = start(slow, 1);
    go(&engine, GoLimits { infinite: true, ..GoLimits::default() });
    let mut infos = Vec::new();
    while infos.len() < 3 {
        match engine.events().recv_timeout(WAIT).expect("info events") {
            Event::Info(r) => infos.push(r),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(infos.windows(2).all(|w| w[0].simulations <= w[1].simulations));
    assert!(infos[2].elapsed >= Duration::from_millis(200), "infos come about every 100 ms");
    engine.send(Command::Stop).expect("engine runs");
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(report.expect("a final report").simulations > 0);
    assert!(best.is_some());
}

#[test]
fn stop_is_answered_promptly_even_with_a_very_slow_evaluator() {
    let slow: EvaluatorFactory = Arc::new(|w| {
        Ok(Box::new(Slow(MaterialEvaluator::new(w as u64), Duration::from_secs(3))) as EvaluatorBox)
    });
    let (engine, _) = start(slow, 1);
    go(&engine, GoLimits { infinite: true, ..GoLimits::default() });
    std::thread::sleep(Duration::from_millis(150));
    let asked = Instant::now();
    engine.send(Command::Stop).expect("engine runs");
    let (_, _, _, best) = until_done(&engine);
    let latency = asked.elapsed();
    println!("stop answered after {latency:?} with a 3 s evaluation out");
    assert!(latency < Duration::from_secs(1), "stop took {latency:?}");
    // The root's evaluation never came back: there is no move.
    assert!(best.is_none());
    let dropped = Instant::now();
    drop(engine);
    assert!(dropped.elapsed() < Duration::from_secs(2), "dropping the engine does not wait for the model");
}

#[test]
fn batches_keep_a_slow_model_answering_stop_quickly() {
    // 20 ms a position: after the root's evaluation (one position, the first batch) the engine sends
    // batches of at most 2 (50 ms of the model's time), not the configured 8, so a stop or a new position
    // never waits long for the worker.
    let (factory, sizes) = per_position(Duration::from_millis(20));
    let (engine, _) = start(factory, 1);
    go(&engine, GoLimits { infinite: true, ..GoLimits::default() });
    std::thread::sleep(Duration::from_millis(600));
    engine.send(Command::Stop).expect("engine runs");
    let (_, errors, _, best) = until_done(&engine);
    assert!(errors.is_empty() && best.is_some(), "{errors:?}");
    let sizes = sizes.lock().expect("not poisoned").clone();
    assert!(sizes.len() >= 5, "{sizes:?}");
    assert_eq!(sizes[0], 1, "the root first: {sizes:?}");
    assert!(sizes[1..].iter().all(|&n| n <= 2), "{sizes:?}");
}

#[test]
fn a_timed_search_ends_when_no_more_evaluations_fit_its_time() {
    // 200 ms a position and 500 ms to move: the root (back at 200 ms), one more position (back at 400 ms),
    // then none fits the 100 ms left, so the search ends then, leaving the rest on the clock, rather than
    // send a batch that the end of the move would abandon.
    let (factory, sizes) = per_position(Duration::from_millis(200));
    let (engine, _) = start(factory, 1);
    go(&engine, GoLimits { movetime: Some(Duration::from_millis(500)), ..GoLimits::default() });
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty() && best.is_some(), "{errors:?}");
    let report = report.expect("a report");
    assert!(report.elapsed < Duration::from_millis(500), "ended after {:?}", report.elapsed);
    assert_eq!(report.snapshot.totals.stats.abandoned, 0, "{:?}", report.snapshot.totals.stats);
    assert_eq!(*sizes.lock().expect("not poisoned"), [1, 1]);
}

#[test]
fn a_late_evaluation_is_abandoned_after_t0() {
    let slow: EvaluatorFactory = Arc::new(|w| {
        Ok(Box::new(Slow(MaterialEvaluator::new(w as u64), Duration::from_millis(400))) as EvaluatorBox)
    });
    let (engine, _) = start(slow, 1);
    engine
        .send(Command::SetConfig(EngineConfig {
            eval_timeout: Duration::from_millis(100),
            ..EngineConfig::default()
        }))
        .expect("engine runs");
    go(&engine, GoLimits { movetime: Some(Duration::from_millis(700)), ..GoLimits::default() });
    let (_, _, report, _) = until_done(&engine);
    let stats = report.expect("a report").snapshot.totals.stats;
    assert!(stats.abandoned >= 1, "{stats:?}");
    assert_eq!(stats.simulations, 0, "nothing came back in time: {stats:?}");
}

#[test]
fn a_panicking_evaluator_is_an_error_and_the_engine_keeps_serving() {
    let calls = Arc::new(AtomicUsize::new(0));
    let factory: EvaluatorFactory = Arc::new(move |w| {
        Ok(Box::new(PanicsOnce(MaterialEvaluator::new(w as u64), Arc::clone(&calls))) as EvaluatorBox)
    });
    let (engine, _) = start(factory, 1);
    go(&engine, GoLimits { simulations: Some(50), ..GoLimits::default() });
    let (_, errors, _, best) = until_done(&engine);
    assert!(
        errors.iter().any(|e| matches!(e, EngineError::EvaluatorPanicked(m) if m.contains("exploded"))),
        "{errors:?}"
    );
    assert!(best.is_none(), "the root evaluation crashed");
    go(&engine, GoLimits { simulations: Some(50), ..GoLimits::default() });
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(report.expect("a report").simulations >= 50);
    assert!(ChessState::startpos().parse_action(&best.expect("a move")).is_ok());
}

#[test]
fn load_failures_and_searching_without_a_model_are_errors() {
    let engine = Engine::start(EngineConfig::default(), Arc::new(|| {})).expect("engine starts");
    go(&engine, GoLimits { simulations: Some(10), ..GoLimits::default() });
    let (_, errors, report, best) = until_done(&engine);
    assert_eq!(errors, vec![EngineError::NoEvaluator]);
    assert!(report.is_none() && best.is_none());
    let failing: EvaluatorFactory = Arc::new(|_| Err("model.onnx not found in /nowhere".into()));
    engine.send(Command::LoadEvaluator { factory: failing, workers: 2 }).expect("engine runs");
    // A go sent while loading waits for the load and ends with it.
    go(&engine, GoLimits { simulations: Some(10), ..GoLimits::default() });
    let (_, errors, _, best) = until_done(&engine);
    assert!(
        matches!(errors.as_slice(), [EngineError::Load(m)] if m.contains("model.onnx not found")),
        "{errors:?}"
    );
    assert!(best.is_none());
    // The engine still serves: a working model loads and searches.
    engine.send(Command::LoadEvaluator { factory: material_factory(), workers: 1 }).expect("engine runs");
    go(&engine, GoLimits { simulations: Some(20), ..GoLimits::default() });
    match engine.events().recv_timeout(WAIT).expect("an event") {
        Event::EvaluatorReady { workers: 1 } => {}
        other => panic!("expected EvaluatorReady, got {other:?}"),
    }
    let (_, errors, _, best) = until_done(&engine);
    assert!(errors.is_empty() && best.is_some(), "{errors:?}");
}

#[test]
fn moves_added_to_the_position_reuse_the_tree() {
    let (engine, _) = start(material_factory(), 1);
    let start = ChessState::startpos();
    engine.send(Command::SetPosition { start: start.clone(), moves: Vec::new() }).expect("engine runs");
    go(&engine, GoLimits { simulations: Some(400), ..GoLimits::default() });
    let (_, _, _, best) = until_done(&engine);
    let first = best.expect("a move");
    let after = start.play(start.parse_action(&first).expect("legal")).expect("legal");
    let reply = after.legal_actions()[0];
    let moves = vec![first.clone(), after.action_to_text(reply)];
    engine.send(Command::SetPosition { start: start.clone(), moves }).expect("engine runs");
    go(&engine, GoLimits { simulations: Some(10), ..GoLimits::default() });
    let (_, _, report, _) = until_done(&engine);
    let totals = report.expect("a report").snapshot.totals;
    assert!(totals.stats.reused_evaluations > 0, "{totals:?}");
    // An unrelated position starts afresh.
    engine.send(Command::SetPosition { start, moves: vec!["a2a3".into()] }).expect("engine runs");
    go(&engine, GoLimits { simulations: Some(10), ..GoLimits::default() });
    let (_, _, report, _) = until_done(&engine);
    assert_eq!(report.expect("a report").snapshot.totals.stats.reused_evaluations, 0);
    engine
        .send(Command::SetPosition { start: ChessState::startpos(), moves: vec!["e2e5".into()] })
        .expect("runs");
    go(&engine, GoLimits { simulations: Some(10), ..GoLimits::default() });
    let (_, errors, _, _) = until_done(&engine);
    assert!(matches!(errors.as_slice(), [EngineError::IllegalMove { index: 0, .. }]), "{errors:?}");
}

/// Waits for the `Evaluated` answer with `tag`, skipping other events.
fn evaluated(engine: &Engine, tag: u64) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match engine.events().recv_timeout(left).expect("an Evaluated event") {
            Event::Evaluated { tag: t, results } if t == tag => return results,
            _ => {}
        }
    }
}

#[test]
fn evaluate_answers_beside_a_running_search_and_survives_a_new_position() {
    let (engine, _) = start(
        Arc::new(|w| {
            Ok(Box::new(Slow(MaterialEvaluator::new(w as u64), Duration::from_millis(20))) as EvaluatorBox)
        }),
        1,
    );
    go(&engine, GoLimits { infinite: true, ..GoLimits::default() });
    let positions: Vec<ChessState> = ["e2e4", "d2d4", "g1f3"]
        .iter()
        .map(|m| {
            ChessState::startpos()
                .play(ChessState::startpos().parse_action(m).expect("legal"))
                .expect("plays")
        })
        .collect();
    let requests: Vec<_> = positions.iter().cloned().map(EvalRequest::values).collect();
    engine.send(Command::Evaluate { tag: 7, requests }).expect("engine runs");
    // A new position stops the search but not the evaluation.
    engine
        .send(Command::SetPosition { start: ChessState::startpos(), moves: vec!["e2e4".into()] })
        .expect("runs");
    let results = evaluated(&engine, 7);
    assert_eq!(results.len(), 3);
    for (r, p) in results.iter().zip(&positions) {
        let r = r.as_ref().expect("valued");
        assert_eq!(r.moves.len(), p.legal_actions().len(), "every legal move of {}", p.to_text());
    }
    engine.send(Command::Stop).expect("runs");
}

#[test]
fn evaluate_without_a_model_answers_with_errors() {
    let engine = Engine::start(EngineConfig::default(), Arc::new(|| {})).expect("engine starts");
    let requests = vec![EvalRequest::values(ChessState::startpos()); 2];
    engine.send(Command::Evaluate { tag: 3, requests }).expect("engine runs");
    let results = evaluated(&engine, 3);
    assert_eq!(results.len(), 2);
    for r in results {
        let e = r.expect_err("no model");
        assert!(e.to_string().contains("no model is loaded"), "{e}");
    }
}

/// Counts the requests that reach the model.
struct Counting(MaterialEvaluator, Arc<AtomicUsize>);

impl Evaluator<ChessState> for Counting {
    fn evaluate(&mut self, r: &[EvalRequest<ChessState>]) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        self.1.fetch_add(r.len(), Ordering::SeqCst);
        self.0.evaluate(r)
    }
}

#[test]
fn positions_met_again_are_answered_from_the_engine_cache() {
    let evaluated = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&evaluated);
    let factory: EvaluatorFactory = Arc::new(move |w| {
        Ok(Box::new(Counting(MaterialEvaluator::new(w as u64), Arc::clone(&seen))) as EvaluatorBox)
    });
    let (engine, _) = start(factory, 1);
    let search = |start: &ChessState, sims: u64| {
        engine.send(Command::SetPosition { start: start.clone(), moves: Vec::new() }).expect("engine runs");
        let before = evaluated.load(Ordering::SeqCst);
        go(&engine, GoLimits { simulations: Some(sims), ..GoLimits::default() });
        let (_, errors, report, _) = until_done(&engine);
        assert!(errors.is_empty(), "{errors:?}");
        let report = report.expect("a report");
        (report, evaluated.load(Ordering::SeqCst) - before)
    };
    let a = ChessState::startpos();
    let b = ChessState::from_fen("3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1").expect("valid FEN");
    let (first, first_calls) = search(&a, 200);
    // Every request of a fresh tree is either a model call or a cache hit.
    assert_eq!(first.snapshot.totals.stats.model_calls, first_calls as u64 + first.cache_hits);
    // Another position (its tree replaces the first), then the first again: a fresh tree whose requests
    // the cache answers in large part.
    let _ = search(&b, 50);
    let (again, again_calls) = search(&a, 200);
    assert_eq!(again.snapshot.totals.stats.model_calls, again_calls as u64 + again.cache_hits);
    assert!(again.cache_hits >= 50, "only {} cache hits", again.cache_hits);
    assert!(again_calls < first_calls, "{again_calls} model calls the second time, {first_calls} the first");
}
