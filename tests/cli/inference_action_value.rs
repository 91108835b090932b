//! The action-value evaluator (Ruoss et al. 2024) on a tiny package made by the training pipeline
//! (tests/fixtures/models/av-fixture, see its README): every legal move valued over 128 buckets, batches
//! equal single calls, and what the format cannot do is refused clearly.

use crate::common;

use common::fixture_package;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::model::ModelFormat;

fn positions() -> Vec<ChessState> {
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        "r3k2r/pp1n1ppp/2p1pn2/q7/3P4/2N1PN2/PP3PPP/R2QK2R b KQkq - 3 11",
        "7k/8/8/8/8/8/6q1/7K w - - 0 1",
    ]
    .iter()
    .map(|f| ChessState::from_fen(f).expect("valid fen"))
    .collect()
}

#[test]
fn every_legal_move_is_valued_and_batches_equal_single_calls() {
    let mavboard::inference::LoadedModel { evaluator: mut e, package: pkg, .. } =
        load_evaluator(&fixture_package("av-fixture"), &SessionOptions::default()).expect("fixture loads");
    assert_eq!(pkg.manifest.format, ModelFormat::ActionValue);
    assert_eq!(pkg.manifest.num_buckets, 128);
    let reqs: Vec<_> = positions().into_iter().map(EvalRequest::values).collect();
    let batched = e.evaluate(&reqs);
    assert_eq!(batched.len(), reqs.len());
    for (req, res) in reqs.iter().zip(&batched) {
        let res = res.as_ref().expect("evaluates");
        let legal = req.state.legal_actions();
        assert_eq!(res.moves.len(), legal.len());
        for a in &legal {
            assert!(res.moves.iter().any(|m| m.action == *a), "{} not valued", req.state.action_to_text(*a));
        }
        for m in &res.moves {
            assert_eq!(m.dist.as_ref().expect("valued").probs().len(), 128);
            let sum: f64 = m.dist.as_ref().expect("valued").probs().iter().sum();
            assert!((sum - 1.0).abs() < 1e-6, "{}: sums to {sum}", m.text);
        }
        // Best first by mean value.
        for w in res.moves.windows(2) {
            assert!(
                w[0].dist.as_ref().expect("valued").mean_value()
                    >= w[1].dist.as_ref().expect("valued").mean_value()
            );
        }
        let single = e.evaluate(std::slice::from_ref(req)).remove(0).expect("evaluates");
        assert_eq!(single.moves.len(), res.moves.len());
        for (a, b) in res.moves.iter().zip(&single.moves) {
            assert_eq!(a.text, b.text);
            for (p, q) in
                a.dist.as_ref().expect("valued").probs().iter().zip(b.dist.as_ref().expect("valued").probs())
            {
                assert!((p - q).abs() < 1e-5, "{}: batched {p} vs single {q}", a.text);
            }
        }
    }
    // Different positions get different values: the model reads its input.
    let first = batched[0].as_ref().expect("evaluates");
    let second = batched[1].as_ref().expect("evaluates");
    assert_ne!(
        first.moves[0].dist.as_ref().expect("valued").probs(),
        second.moves[0].dist.as_ref().expect("valued").probs()
    );
}

#[test]
fn top_k_terminal_positions_and_what_the_format_cannot_do() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&fixture_package("av-fixture"), &SessionOptions::default()).expect("loads");
    let mut r = EvalRequest::values(ChessState::startpos());
    r.top_k = TopK::Count(5);
    let all = e.evaluate(&[EvalRequest::values(ChessState::startpos())]).remove(0).expect("evaluates");
    let top = e.evaluate(std::slice::from_ref(&r)).remove(0).expect("evaluates");
    assert_eq!(top.moves.len(), 5);
    assert_eq!(top.moves, all.moves[..5].to_vec());
    let mated = ChessState::from_fen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1").expect("fen");
    let res = e.evaluate(&[EvalRequest::values(mated)]).remove(0).expect("evaluates");
    assert!(res.moves.is_empty());
    assert_eq!(res.terminal.map(|o| o.result_str()), Some("1-0"));
    let mut free = r.clone();
    free.mode = DecodeMode::Free;
    let mut next = r.clone();
    next.want_next_state = true;
    for res in e.evaluate(&[free, next]) {
        match res {
            Err(e @ EvalError::Unsupported { .. }) => {
                assert!(e.to_string().contains("this model cannot"), "{e}")
            }
            other => panic!("expected a clear refusal, got {other:?}"),
        }
    }
}
