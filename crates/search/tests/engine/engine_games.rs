//! The engine is generic over the game: Connect Four and Hex search through the real engine threads
//! (Go → Info → Done with a legal move, tree reuse after moves, Evaluate, Explore) with a deterministic
//! mock evaluator, and no game-specific code in the engine.

use std::sync::Arc;
use std::time::Duration;

use mavboard_search::engine::{
    Command, Engine, EngineConfig, EngineError, EvaluatorBox, EvaluatorFactory, Event, GoLimits, SearchReport,
};
use mavboard_search::game::GameState;
use mavboard_search::game::connect_four::ConnectFourState;
use mavboard_search::game::hex::HexState;
use mavboard_search::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use mavboard_search::inference::mock::HashEvaluator;
use mavboard_search::mav::state::MavState;
use mavboard_search::search::mcts::MctsParams;

const WAIT: Duration = Duration::from_secs(20);

/// The hash mock, slowed down so that an infinite search sends several `Info`s before it is stopped.
struct Slow(HashEvaluator, Duration);

impl<S: GameState> Evaluator<S> for Slow {
    fn evaluate(&mut self, r: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        std::thread::sleep(self.1);
        self.0.evaluate(r)
    }
}

fn hash_factory<S: MavState>(delay: Duration) -> EvaluatorFactory<S> {
    Arc::new(move |w| Ok(Box::new(Slow(HashEvaluator::new(w as u64), delay)) as EvaluatorBox<S>))
}

/// An engine for `start`'s game with `workers` hash evaluators, the load confirmed.
fn start<S: MavState>(start: S, workers: usize, delay: Duration) -> Engine<S> {
    let engine = Engine::start_at(
        start,
        EngineConfig { batch_size: 8, info_interval: Duration::from_millis(20), ..EngineConfig::default() },
        Arc::new(|| {}),
    )
    .expect("engine starts");
    engine.send(Command::LoadEvaluator { factory: hash_factory(delay), workers }).expect("engine runs");
    match engine.events().recv_timeout(WAIT).expect("an event") {
        Event::EvaluatorReady { workers: w } => assert_eq!(w, workers),
        other => panic!("expected EvaluatorReady, got {other:?}"),
    }
    engine
}

/// Collects events until the search's `Done`: (infos, errors, report, best move).
fn until_done<S: MavState>(
    engine: &Engine<S>,
) -> (Vec<SearchReport>, Vec<EngineError>, Option<SearchReport>, Option<String>) {
    let (mut infos, mut errors) = (Vec::new(), Vec::new());
    loop {
        match engine.events().recv_timeout(WAIT).expect("the search ends in time") {
            Event::Info(r) => infos.push(r),
            Event::Error(e) => errors.push(e),
            Event::Done { report, best_move } => return (infos, errors, report, best_move),
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn go<S: MavState>(engine: &Engine<S>, limits: GoLimits) {
    engine.send(Command::Go { limits, params: MctsParams::default() }).expect("engine runs");
}

fn sims(n: u64) -> GoLimits {
    GoLimits { simulations: Some(n), ..GoLimits::default() }
}

fn texts(moves: &[&str]) -> Vec<String> {
    moves.iter().map(|m| (*m).to_owned()).collect()
}

/// The state after `moves` (the game's notation) from `start`.
fn after<S: GameState>(start: &S, moves: &[String]) -> S {
    moves.iter().fold(start.clone(), |s, m| s.play(s.parse_action(m).expect("legal")).expect("plays"))
}

/// The whole engine flow on one game: a search to a simulation limit from a position with moves played
/// (root, ply, legal best move), an infinite search with `Info`s ended by `Stop`, tree reuse after two
/// more moves, `Explore`, `Evaluate` beside the engine, and an illegal move named.
fn engine_flow<S: MavState>(initial: S, moves: Vec<String>, illegal: &str) {
    let engine = start(initial.clone(), 2, Duration::ZERO);
    let root = after(&initial, &moves);
    engine.send(Command::SetPosition { start: initial.clone(), moves: moves.clone() }).expect("engine runs");
    go(&engine, sims(200));
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    let report = report.expect("a final report");
    assert!(report.simulations >= 200, "{} simulations", report.simulations);
    assert_eq!(report.snapshot.root, root.to_text());
    assert_eq!(report.snapshot.root_ply, root.ply());
    assert_eq!(report.snapshot.to_move, root.to_move());
    let best = best.expect("a best move");
    let best_action = root.parse_action(&best).expect("the best move is legal");
    assert_eq!(report.snapshot.best.as_deref(), Some(best.as_str()));
    assert_eq!(report.snapshot.moves.len(), root.legal_actions().len(), "every root move is listed");

    // Tree reuse: the best move and its most searched reply (found with the explorer) extend the
    // position; the subtree's evaluations are kept.
    let next = root.play(best_action).expect("legal");
    engine.send(Command::Explore { tag: 1, path: vec![best.clone()] }).expect("engine runs");
    let reply = match engine.events().recv_timeout(WAIT).expect("an answer") {
        Event::Explored { tag: 1, children: Ok(children), .. } => {
            let top = children.first().expect("the best move was expanded");
            assert!(top.visits > 0, "{top:?}");
            top.action.clone()
        }
        other => panic!("expected Explored, got {other:?}"),
    };
    let after_reply = next.play(next.parse_action(&reply).expect("a legal reply")).expect("plays");
    let mut longer = moves.clone();
    longer.extend([best.clone(), reply]);
    engine.send(Command::SetPosition { start: initial.clone(), moves: longer.clone() }).expect("engine runs");
    go(&engine, sims(10));
    let (_, errors, report, _) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    let report = report.expect("a report");
    assert!(report.snapshot.totals.stats.reused_evaluations > 0, "{:?}", report.snapshot.totals);
    assert_eq!(report.snapshot.root, after_reply.to_text());
    assert_eq!(after(&initial, &longer), after_reply);
    assert_eq!(report.snapshot.root_ply, root.ply() + 2);

    // A position that does not extend the last one starts afresh.
    engine.send(Command::SetPosition { start: initial.clone(), moves: Vec::new() }).expect("engine runs");
    go(&engine, sims(10));
    let (_, _, report, best) = until_done(&engine);
    assert_eq!(report.expect("a report").snapshot.totals.stats.reused_evaluations, 0);
    assert!(initial.parse_action(&best.expect("a move")).is_ok());

    // The explorer walks the tree in the game's notation.
    let first = initial.action_to_text(initial.legal_actions()[0]);
    engine.send(Command::Explore { tag: 4, path: vec![first.clone()] }).expect("engine runs");
    match engine.events().recv_timeout(WAIT).expect("an answer") {
        Event::Explored { tag: 4, root, path, children } => {
            assert_eq!(root, Some(initial.to_text()));
            assert_eq!(path, vec![first]);
            let children = children.expect("the path is in the tree");
            assert!(children.windows(2).all(|w| w[0].visits >= w[1].visits));
        }
        other => panic!("expected Explored, got {other:?}"),
    }

    // Evaluate answers with every legal move of each position.
    let positions = [initial.clone(), root.clone(), next];
    let requests: Vec<_> = positions.iter().cloned().map(EvalRequest::values).collect();
    engine.send(Command::Evaluate { tag: 9, requests }).expect("engine runs");
    // The engine is idle, so the answer is the next event.
    let results = match engine.events().recv_timeout(WAIT).expect("an Evaluated event") {
        Event::Evaluated { tag: 9, results } => results,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(results.len(), positions.len());
    for (r, p) in results.iter().zip(&positions) {
        let r = r.as_ref().expect("valued");
        let mut got: Vec<_> = r.moves.iter().map(|m| m.text.clone()).collect();
        let mut want: Vec<_> = p.legal_actions().into_iter().map(|a| p.action_to_text(a)).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "every legal move of {}", p.to_text());
    }

    // An illegal move is named and the position is kept.
    let mut bad = moves;
    bad.push(illegal.to_owned());
    engine.send(Command::SetPosition { start: initial, moves: bad.clone() }).expect("engine runs");
    go(&engine, sims(5));
    let (_, errors, report, _) = until_done(&engine);
    let index = bad.len() - 1;
    assert!(
        matches!(errors.as_slice(), [EngineError::IllegalMove { index: i, text, .. }] if *i == index && text == illegal),
        "{errors:?}"
    );
    assert!(report.is_some(), "the previous position is still searched");
}

/// An infinite search sends `Info`s with growing simulation counts and ends with `Stop`.
fn info_then_stop<S: MavState>(initial: S) {
    let engine = start(initial.clone(), 1, Duration::from_millis(5));
    go(&engine, GoLimits { infinite: true, ..GoLimits::default() });
    let mut infos = Vec::new();
    while infos.len() < 3 {
        match engine.events().recv_timeout(WAIT).expect("info events") {
            Event::Info(r) => infos.push(r),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(infos.windows(2).all(|w| w[0].simulations <= w[1].simulations));
    assert!(infos.iter().all(|r| r.snapshot.root == initial.to_text()));
    engine.send(Command::Stop).expect("engine runs");
    let (_, errors, report, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(report.expect("a final report").simulations > 0);
    assert!(initial.parse_action(&best.expect("a move")).is_ok());
}

#[test]
fn connect_four_searches_reuses_its_tree_and_evaluates() {
    engine_flow(ConnectFourState::default(), texts(&["4", "4", "3"]), "8");
}

#[test]
fn hex_searches_reuses_its_tree_and_evaluates() {
    let start = HexState::new(5).expect("5x5").with_swap(true);
    // The swap is a move like any other: it is played, reused and named.
    engine_flow(start, texts(&["c3", "swap", "b2"]), "b2");
}

#[test]
fn connect_four_and_hex_send_info_until_stopped() {
    info_then_stop(ConnectFourState::default());
    info_then_stop(HexState::new(7).expect("7x7"));
}

#[test]
fn connect_four_search_takes_an_immediate_win() {
    // x has three in column 1 and o three in column 2: x to move wins at once in column 1 (a terminal
    // child, valued by the rules whatever the mock says).
    let engine = start(ConnectFourState::default(), 1, Duration::ZERO);
    let moves = texts(&["1", "2", "1", "2", "1", "2"]);
    engine.send(Command::SetPosition { start: ConnectFourState::default(), moves }).expect("engine runs");
    go(&engine, sims(300));
    let (_, errors, _, best) = until_done(&engine);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(best.as_deref(), Some("1"));
}

#[test]
fn a_game_over_position_has_no_move() {
    let engine = start(ConnectFourState::default(), 1, Duration::ZERO);
    let moves = texts(&["1", "2", "1", "2", "1", "2", "1"]);
    engine.send(Command::SetPosition { start: ConnectFourState::default(), moves }).expect("engine runs");
    go(&engine, sims(20));
    let (_, _, _, best) = until_done(&engine);
    assert!(best.is_none(), "the game is over: {best:?}");
}
