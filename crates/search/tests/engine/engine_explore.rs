//! The engine's tree explorer (`Command::Explore`) with a mock evaluator: the children of any node of the
//! search tree on request, before, during and after a search.

use std::sync::Arc;
use std::time::Duration;

use mavboard_search::engine::{
    Command, Engine, EngineConfig, EvaluatorBox, EvaluatorFactory, Event, ExploreError, GoLimits,
};
use mavboard_search::game::GameState;
use mavboard_search::game::chess::ChessState;
use mavboard_search::inference::material::MaterialEvaluator;
use mavboard_search::search::mcts::{MctsParams, MoveStats};

const WAIT: Duration = Duration::from_secs(20);

fn engine() -> Engine {
    let factory: EvaluatorFactory =
        Arc::new(|w| Ok(Box::new(MaterialEvaluator::new(w as u64)) as EvaluatorBox));
    let engine = Engine::start(EngineConfig { batch_size: 8, ..EngineConfig::default() }, Arc::new(|| {}))
        .expect("engine starts");
    engine.send(Command::LoadEvaluator { factory, workers: 1 }).expect("engine runs");
    match engine.events().recv_timeout(WAIT).expect("an event") {
        Event::EvaluatorReady { .. } => {}
        other => panic!("expected EvaluatorReady, got {other:?}"),
    }
    engine
}

/// Sends an Explore and returns its answer (skipping search events).
fn explore(
    engine: &Engine,
    tag: u64,
    path: &[&str],
) -> (Option<String>, Result<Vec<MoveStats>, ExploreError>) {
    let path: Vec<String> = path.iter().map(|m| (*m).to_owned()).collect();
    engine.send(Command::Explore { tag, path: path.clone() }).expect("engine runs");
    loop {
        match engine.events().recv_timeout(WAIT).expect("an answer") {
            Event::Explored { tag: t, root, path: p, children } if t == tag => {
                assert_eq!(p, path);
                return (root, children);
            }
            Event::Info(_) | Event::Done { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn explore_answers_with_the_children_of_any_node() {
    let engine = engine();
    let start = ChessState::startpos();
    engine.send(Command::SetPosition { start: start.clone(), moves: Vec::new() }).expect("engine runs");
    let (root, children) = explore(&engine, 1, &[]);
    assert_eq!(root, None);
    assert_eq!(children.expect_err("no tree yet"), ExploreError::NoTree);

    engine
        .send(Command::Go {
            limits: GoLimits { simulations: Some(400), ..GoLimits::default() },
            params: MctsParams::default(),
        })
        .expect("engine runs");
    let report = loop {
        match engine.events().recv_timeout(WAIT).expect("the search ends") {
            Event::Done { report, .. } => break report.expect("a report"),
            Event::Info(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    // The root's children are the snapshot's root moves.
    let (root, children) = explore(&engine, 2, &[]);
    assert_eq!(root.as_deref(), Some(start.to_text().as_str()));
    let children = children.expect("root children");
    assert_eq!(children.len(), report.snapshot.moves.len());
    let visits = |m: &[MoveStats], a: &str| m.iter().find(|s| s.action == a).map(|s| s.visits);
    for m in &report.snapshot.moves {
        assert_eq!(visits(&children, &m.action), Some(m.visits));
    }
    // One level down: the best move's replies share its visits (its own expansion took one).
    let best = &report.snapshot.moves[0];
    let (_, replies) = explore(&engine, 3, &[&best.action]);
    let replies = replies.expect("replies");
    assert_eq!(
        replies.len(),
        start.play(start.parse_action(&best.action).expect("legal")).expect("plays").legal_actions().len()
    );
    let sum: u32 = replies.iter().map(|r| r.visits).sum();
    assert!(
        sum + 1 >= best.visits && sum < best.visits,
        "{sum} replies' visits under {} visits",
        best.visits
    );
    assert!(replies.windows(2).all(|w| w[0].visits >= w[1].visits), "most visited first");
    // Two levels down, following the most visited reply.
    let (_, deeper) = explore(&engine, 4, &[&best.action, &replies[0].action]);
    let deeper = deeper.expect("a visited reply has children");
    assert!(deeper.iter().map(|r| r.visits).sum::<u32>() < replies[0].visits.max(1));
    // A path that is not legal is an error naming the move.
    let (_, bad) = explore(&engine, 5, &["e2e5"]);
    let bad = bad.expect_err("illegal");
    assert!(matches!(&bad, ExploreError::IllegalMove { text, .. } if text == "e2e5"), "{bad}");
    assert!(bad.to_string().contains("e2e5 is not a legal move there"), "{bad}");
    engine.send(Command::Quit).ok();
}
