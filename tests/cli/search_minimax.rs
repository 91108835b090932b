//! Explicit minimax over mock evaluators and real chess positions.

use crate::common;

use common::chess;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::material::MaterialEvaluator;
use mavboard::inference::mock::HashEvaluator;
use mavboard::search::SearchError;
use mavboard::search::mcts::WorldModel;
use mavboard::search::minimax::{DecisionSource, MinimaxNode, MinimaxParams, NodeEvaluation, minimax};

/// Checks every node's value against its children or its own move values.
fn check_backup(n: &MinimaxNode<ChessState>, params: &MinimaxParams) {
    match &n.evaluation {
        NodeEvaluation::Failed(_) => assert!(n.value.is_none()),
        NodeEvaluation::Terminal(o) => assert_eq!(n.value, Some(o.value_for(n.player))),
        NodeEvaluation::Model(r) => {
            let from_children: Vec<f64> =
                n.children.iter().filter_map(|c| c.value.map(|v| 1.0 - v)).collect();
            let expected = if from_children.is_empty() {
                r.moves
                    .iter()
                    .map(|m| m.value(params.scoring).expect("valued"))
                    .fold(f64::NEG_INFINITY, f64::max)
            } else {
                from_children.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            };
            assert_eq!(n.value, Some(expected), "node {:?}", n.path);
            let d = n.decision.as_ref().expect("a model node decides");
            assert_eq!(d.value, expected);
            match d.source {
                DecisionSource::Child(k) => assert_eq!(n.children[k].action, Some(d.action)),
                DecisionSource::Move(k) => assert_eq!(r.moves[k].action, d.action),
            }
            // Expanded children are the best-valued moves, best first.
            let values: Vec<f64> = n
                .children
                .iter()
                .map(|c| {
                    let m =
                        r.moves.iter().find(|m| Some(m.action) == c.action).expect("child is a listed move");
                    m.value(params.scoring).expect("valued")
                })
                .collect();
            assert!(values.windows(2).all(|w| w[0] >= w[1]));
            if let Some(&worst) = values.last() {
                let better_unexpanded = r
                    .moves
                    .iter()
                    .filter(|m| !n.children.iter().any(|c| c.action == Some(m.action)))
                    .any(|m| m.value(params.scoring).expect("valued") > worst);
                assert!(!better_unexpanded, "node {:?} skipped a better move", n.path);
            }
        }
    }
    for c in &n.children {
        assert_eq!(c.depth, n.depth + 1);
        assert_eq!(c.player, n.player.other());
        assert_eq!(c.path.len(), n.path.len() + 1);
        let (prev, a) = c.previous.as_ref().expect("children know their previous state");
        assert_eq!(prev.hash64(), n.state.hash64());
        assert_eq!(Some(*a), c.action);
        check_backup(c, params);
    }
}

#[test]
fn tree_shape_calls_and_backup() {
    let mut e = HashEvaluator::new(3);
    let params = MinimaxParams { breadth: 3, depth: 2, ..MinimaxParams::default() };
    let r = minimax(&mut e, ChessState::startpos(), &params).expect("runs");
    assert_eq!(r.root.count(), 1 + 3 + 9);
    assert_eq!(r.model_calls, 13);
    assert_eq!(e.calls, 13);
    assert_eq!(e.batches, 3, "one batch per level");
    assert_eq!(r.root.children.len(), 3);
    assert_eq!(r.root.children[0].path.len(), 1);
    check_backup(&r.root, &params);
    assert_eq!(r.best, r.root.decision.as_ref().map(|d| d.action));
}

#[test]
fn depth_zero_is_the_model_alone() {
    let mut e = HashEvaluator::new(4);
    let params = MinimaxParams { breadth: 5, depth: 0, ..MinimaxParams::default() };
    let r = minimax(&mut e, ChessState::startpos(), &params).expect("runs");
    assert_eq!(r.root.count(), 1);
    let NodeEvaluation::Model(eval) = &r.root.evaluation else { panic!("root evaluated") };
    let best = eval
        .moves
        .iter()
        .max_by(|a, b| mavboard::inference::evaluator::MoveValue::by_mean_value(b, a))
        .expect("moves");
    assert_eq!(r.best, Some(best.action));
}

#[test]
fn finds_mate_in_one_and_avoids_allowing_one() {
    let mut e = MaterialEvaluator::new(3);
    let mate = chess("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1");
    let r =
        minimax(&mut e, mate.clone(), &MinimaxParams { breadth: 64, depth: 1, ..MinimaxParams::default() })
            .expect("runs");
    assert_eq!(r.best.map(|a| mate.action_to_text(a)).as_deref(), Some("a1a8"));
    assert_eq!(r.value, Some(1.0));
    let s = chess("1r4k1/5ppp/8/8/8/8/1B3PPP/4R1K1 b - - 0 1");
    let shallow =
        minimax(&mut e, s.clone(), &MinimaxParams { breadth: 64, depth: 0, ..MinimaxParams::default() })
            .expect("runs");
    assert_eq!(shallow.best.map(|a| s.action_to_text(a)).as_deref(), Some("b8b2"), "the model alone grabs");
    let params = MinimaxParams { breadth: 64, depth: 2, ..MinimaxParams::default() };
    let deep = minimax(&mut e, s.clone(), &params).expect("runs");
    assert_ne!(deep.best.map(|a| s.action_to_text(a)).as_deref(), Some("b8b2"));
    let grab = deep.root.children.iter().find(|c| c.path == ["b8b2"]).expect("expanded");
    assert_eq!(grab.value, Some(1.0), "White mates after the grab");
    check_backup(&deep.root, &params);
}

#[test]
fn learned_world_model_marks_broken_predictions() {
    let mut e = HashEvaluator::new(6);
    e.break_every = 4;
    let params =
        MinimaxParams { breadth: 4, depth: 2, world_model: WorldModel::Learned, ..MinimaxParams::default() };
    let r = minimax(&mut e, ChessState::startpos(), &params).expect("runs");
    let mut failed = 0;
    let mut stack = vec![&r.root];
    while let Some(n) = stack.pop() {
        if matches!(n.evaluation, NodeEvaluation::Failed(_)) {
            failed += 1;
            assert!(n.children.is_empty() && n.value.is_none());
        }
        stack.extend(n.children.iter());
    }
    assert!(failed > 0);
    assert_eq!(r.hallucinations, failed);
    check_backup(&r.root, &params);
    assert!(matches!(
        minimax(&mut e, ChessState::startpos(), &MinimaxParams { breadth: 0, ..MinimaxParams::default() }),
        Err(SearchError::InvalidParam { .. })
    ));
}
