//! The shipped mav-encoder package loads, values every legal move, batches consistently, and drives MCTS.

use crate::common;

use common::package;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};

fn fens() -> Vec<ChessState> {
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    ]
    .iter()
    .map(|f| ChessState::from_fen(f).expect("valid fen"))
    .collect()
}

#[test]
fn values_every_legal_move_and_batches_like_single_calls() {
    let mavboard::inference::LoadedModel { evaluator: mut e, package: pkg, .. } =
        load_evaluator(&package("mav-enc-tiny"), &SessionOptions::default()).expect("shipped package loads");
    assert_eq!(pkg.manifest.num_buckets, 64);
    let reqs: Vec<_> = fens().into_iter().map(EvalRequest::values).collect();
    let batched = e.evaluate(&reqs);
    for (req, res) in reqs.iter().zip(&batched) {
        let res = res.as_ref().expect("evaluates");
        assert_eq!(res.moves.len(), req.state.legal_actions().len());
        for m in &res.moves {
            let sum: f64 = m.dist.as_ref().expect("valued").probs().iter().sum();
            assert!((sum - 1.0).abs() < 1e-6);
            assert!((0.0..=1.0).contains(&m.dist.as_ref().expect("valued").mean_value()));
        }
        let single = e.evaluate(std::slice::from_ref(req)).remove(0).expect("evaluates");
        for (a, b) in res.moves.iter().zip(&single.moves) {
            assert_eq!(a.text, b.text);
            for (p, q) in
                a.dist.as_ref().expect("valued").probs().iter().zip(b.dist.as_ref().expect("valued").probs())
            {
                assert!((p - q).abs() < 1e-4, "padding changed a distribution: {p} vs {q}");
            }
        }
    }
}

#[test]
fn top_k_free_mode_and_terminal_positions() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&package("mav-enc-tiny"), &SessionOptions::default()).expect("loads");
    let mut r = EvalRequest::values(ChessState::startpos());
    r.top_k = TopK::Count(3);
    r.want_best_action = true;
    let res = e.evaluate(std::slice::from_ref(&r)).remove(0).expect("evaluates");
    assert_eq!(res.moves.len(), 3);
    let best = res.best_action.expect("asked for");
    assert_eq!(best.len(), 3);
    r.mode = DecodeMode::Free;
    assert!(matches!(e.evaluate(&[r]).remove(0), Err(EvalError::Unsupported { .. })));
    let mated = ChessState::from_fen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1").expect("fen");
    let res = e.evaluate(&[EvalRequest::values(mated)]).remove(0).expect("evaluates");
    assert!(res.moves.is_empty());
    assert_eq!(res.terminal.map(|o| o.result_str()), Some("1-0"));
}

#[test]
fn mcts_runs_on_the_shipped_model() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&package("mav-enc-tiny"), &SessionOptions::default()).expect("loads");
    let mut m = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("search");
    m.run(e.as_mut(), RunLimits { simulations: 48, batch_size: 8 }).expect("runs");
    let s = m.snapshot();
    assert_eq!(s.totals.root_visits, 48);
    assert!(s.best.is_some());
}

#[test]
fn wrong_packages_are_named() {
    let tmp = std::env::temp_dir().join(format!("mavboard-badpkg-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("tmp");
    for f in ["model.onnx", "tokenizer.json"] {
        std::fs::copy(package("mav-enc-tiny").join(f), tmp.join(f)).expect("copy");
    }
    let manifest = std::fs::read_to_string(package("mav-enc-tiny").join("mav.json")).expect("read");
    std::fs::write(tmp.join("mav.json"), manifest.replace("\"num_buckets\": 64", "\"num_buckets\": 32"))
        .expect("write");
    let err = load_evaluator(&tmp, &SessionOptions::default()).expect_err("mismatch").to_string();
    assert!(err.contains("value_token_ids") || err.contains("buckets"), "{err}");
    std::fs::write(tmp.join("tokenizer.json"), "{\"model\": {\"vocab\": {\"a\": 0}}}").expect("write");
    std::fs::write(tmp.join("mav.json"), &manifest).expect("write");
    let err = load_evaluator(&tmp, &SessionOptions::default()).expect_err("tokenizer").to_string();
    assert!(err.contains("tokenizer.json vocabulary"), "{err}");
    std::fs::remove_dir_all(&tmp).ok();
}
