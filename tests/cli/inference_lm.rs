//! The shipped mav-lm package (assets/models/mav-tiny): KV-cache decoding matches a full recompute, batches
//! match single calls, constrained decoding writes exactly the legal moves, free decoding returns text and
//! hallucinations as data.

use crate::common;

use crate::package_copy;

use std::collections::BTreeSet;

use common::package;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, TopK};
use mavboard::inference::lm::prompt::{PromptOptions, layout_for, prompt_text};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::decoder::KvDecoder;
use mavboard::inference::onnx::{OnnxSession, SessionOptions};
use mavboard::mav::buckets::Buckets;
use mavboard::mav::response::parse_response;
use mavboard::mav::tokenizer::Tokenizer;
use mavboard::model::ModelPackage;
use ndarray::Array2;

/// Real positions: the start, an opening, an endgame, a Chess960 middlegame, a position with one legal move.
fn positions() -> Vec<ChessState> {
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        "7k/8/8/8/8/8/6q1/7K w - - 0 1",
    ]
    .iter()
    .map(|f| ChessState::from_fen(f).expect("valid fen"))
    .collect()
}

fn prompt_ids(state: &ChessState, k: TopK) -> Vec<u32> {
    let mut req = EvalRequest::values(state.clone());
    req.top_k = k;
    req.want_best_action = true;
    let layout = layout_for(&req, &PromptOptions::default()).expect("header");
    Tokenizer::new().encode(&prompt_text(&layout, &req).expect("prompt"))
}

fn decoder() -> KvDecoder {
    let pkg = ModelPackage::open(&package("mav-tiny")).expect("package");
    let m = &pkg.manifest;
    let session = OnnxSession::open(&pkg, &SessionOptions::default()).expect("session");
    KvDecoder::new(session.session, m.num_layers, m.num_heads, m.head_dim, m.pad_token_id.unwrap_or(0))
}

fn argmax(row: ndarray::ArrayView1<'_, f32>) -> u32 {
    let (i, _) = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).expect("non-empty logits");
    u32::try_from(i).expect("vocabulary fits u32")
}

fn max_diff(a: ndarray::ArrayView1<'_, f32>, b: ndarray::ArrayView1<'_, f32>) -> f32 {
    a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Greedy decoding of `steps` tokens for each prompt in one batch: the logits of every step, per row.
fn greedy(dec: &mut KvDecoder, prompts: &[Vec<u32>], steps: usize) -> (Vec<Vec<u32>>, Vec<Array2<f32>>) {
    let (mut cache, mut logits) = dec.prefill(prompts).expect("prefill");
    let mut fed = vec![Vec::new(); prompts.len()];
    let mut all = vec![logits.clone()];
    for _ in 0..steps {
        let next: Vec<u32> = logits.rows().into_iter().map(argmax).collect();
        for (f, &t) in fed.iter_mut().zip(&next) {
            f.push(t);
        }
        logits = dec.step(&mut cache, &next).expect("step");
        all.push(logits.clone());
    }
    (fed, all)
}

#[test]
fn incremental_decoding_equals_full_recompute() {
    let mut dec = decoder();
    let steps = 24;
    for (n, state) in positions().iter().enumerate() {
        let prompt = prompt_ids(state, if n % 2 == 0 { TopK::All } else { TopK::Count(5) });
        let (fed, incremental) = greedy(&mut dec, std::slice::from_ref(&prompt), steps);
        let mut full = prompt.clone();
        full.extend(&fed[0]);
        let (_, recomputed) = dec.prefill_all(std::slice::from_ref(&full)).expect("full sequence");
        for (i, step) in incremental.iter().enumerate() {
            let pos = prompt.len() - 1 + i;
            let d = max_diff(step.row(0), recomputed.slice(ndarray::s![0, pos, ..]));
            assert!(d <= 1e-4, "position {n}, step {i}: incremental and full logits differ by {d}");
        }
    }
}

#[test]
fn left_padded_batch_decodes_like_single_rows() {
    let mut dec = decoder();
    let prompts: Vec<Vec<u32>> = positions().iter().map(|s| prompt_ids(s, TopK::Count(5))).collect();
    let lens: BTreeSet<usize> = prompts.iter().map(Vec::len).collect();
    assert!(lens.len() > 1, "the prompts must differ in length to test padding: {lens:?}");
    let steps = 12;
    let (batch_fed, batch_logits) = greedy(&mut dec, &prompts, steps);
    for (r, p) in prompts.iter().enumerate() {
        let (fed, logits) = greedy(&mut dec, std::slice::from_ref(p), steps);
        assert_eq!(fed[0], batch_fed[r], "row {r} decoded differently in the batch");
        for (i, (single, batched)) in logits.iter().zip(&batch_logits).enumerate() {
            let d = max_diff(single.row(0), batched.row(r));
            assert!(d <= 1e-4, "row {r}, step {i}: batched and single logits differ by {d}");
        }
    }
}

fn close(a: &EvalResult<ChessState>, b: &EvalResult<ChessState>) {
    assert_eq!(a.raw_text, b.raw_text);
    assert_eq!(a.moves.len(), b.moves.len());
    for (x, y) in a.moves.iter().zip(&b.moves) {
        assert_eq!(x.text, y.text);
        for (p, q) in
            x.dist.as_ref().expect("valued").probs().iter().zip(y.dist.as_ref().expect("valued").probs())
        {
            assert!((p - q).abs() < 1e-4, "{}: {p} vs {q}", x.text);
        }
    }
    match (&a.best_action, &b.best_action) {
        (Some(p), Some(q)) => assert!(p.iter().zip(q).all(|(x, y)| (x - y).abs() < 1e-4)),
        (p, q) => assert_eq!(p.is_some(), q.is_some()),
    }
}

#[test]
fn batched_requests_of_mixed_kinds_equal_single_requests() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&package("mav-tiny"), &SessionOptions::default()).expect("shipped package loads");
    let mut reqs = Vec::new();
    for (n, s) in positions().into_iter().enumerate() {
        let mut r = EvalRequest::values(s);
        r.top_k = if n % 2 == 0 { TopK::All } else { TopK::Count(3) };
        r.want_best_action = n % 3 != 2;
        r.mode = if n == 1 { DecodeMode::Free } else { DecodeMode::Constrained };
        reqs.push(r);
    }
    let batched = e.evaluate(&reqs);
    assert_eq!(batched.len(), reqs.len());
    for (req, res) in reqs.iter().zip(&batched) {
        let res = res.as_ref().expect("evaluates");
        let single = e.evaluate(std::slice::from_ref(req)).remove(0).expect("evaluates");
        close(res, &single);
    }
}

#[test]
fn constrained_decoding_writes_exactly_the_legal_moves() {
    let mavboard::inference::LoadedModel { evaluator: mut e, package: pkg, .. } =
        load_evaluator(&package("mav-tiny"), &SessionOptions::default()).expect("loads");
    let buckets = Buckets::new(pkg.manifest.num_buckets as u32).expect("buckets");
    for state in positions() {
        let legal = state.legal_actions();
        for k in [TopK::All, TopK::Count(5)] {
            let mut req = EvalRequest::values(state.clone());
            req.top_k = k;
            req.want_best_action = true;
            let res = e.evaluate(std::slice::from_ref(&req)).remove(0).expect("evaluates");
            let written: BTreeSet<String> = res.moves.iter().map(|m| m.text.clone()).collect();
            assert_eq!(written.len(), res.moves.len(), "a move was written twice: {}", res.raw_text);
            assert_eq!(res.moves.len(), k.listed(legal.len()));
            for m in &res.moves {
                assert!(legal.contains(&m.action), "{} is not legal", m.text);
                assert_eq!(m.dist.as_ref().expect("valued").probs().len(), pkg.manifest.num_buckets);
                let sum: f64 = m.dist.as_ref().expect("valued").probs().iter().sum();
                assert!((sum - 1.0).abs() < 1e-6, "{}: distribution sums to {sum}", m.text);
            }
            if k == TopK::All {
                let all: BTreeSet<String> = legal.iter().map(|a| state.action_to_text(*a)).collect();
                assert_eq!(written, all);
            }
            let best = res.best_action.as_ref().expect("asked for");
            assert_eq!(best.len(), res.moves.len());
            assert!((best.iter().sum::<f64>() - 1.0).abs() < 1e-6);
            assert!(res.hallucinations.is_empty(), "{:?}", res.hallucinations);
            // The text written is a clean answer the protocol's parser reads back to the same moves.
            let layout = layout_for(&req, &PromptOptions::default()).expect("header");
            let parsed = parse_response(&layout, &state, buckets, &res.raw_text, 3);
            assert!(parsed.is_clean(), "{}: {:?}", res.raw_text, parsed.hallucinations);
            let reread: Vec<_> = parsed.top.iter().map(|(a, _)| *a).collect();
            let ours: Vec<_> = res.moves.iter().map(|m| m.action).collect();
            assert_eq!(reread, ours);
            for ((_, bucket), m) in parsed.top.iter().zip(&res.moves) {
                assert_eq!(
                    *bucket,
                    m.dist.as_ref().expect("valued").mode_bucket(),
                    "the most probable value token is fed back"
                );
            }
        }
    }
}

#[test]
fn next_state_and_state_tracking() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&package("mav-tiny"), &SessionOptions::default()).expect("loads");
    let start = ChessState::startpos();
    let e4 = start.parse_action("e2e4").expect("legal");
    let after = start.play(e4).expect("legal");
    for mode in [DecodeMode::Constrained, DecodeMode::Free] {
        let mut req = EvalRequest::values(after.clone());
        req.previous = Some((start.clone(), e4));
        req.top_k = TopK::Count(3);
        req.want_next_state = true;
        req.mode = mode;
        let res = e.evaluate(std::slice::from_ref(&req)).remove(0).expect("evaluates");
        assert!(res.raw_text.contains("%best_action"), "{mode:?}: {}", res.raw_text);
        if mode == DecodeMode::Constrained {
            // The rules write the tracked state; the model writes the state after its best move.
            assert!(res.raw_text.starts_with(&format!("[%FEN {}]", after.fen())), "{}", res.raw_text);
            assert!(res.next_state.is_some(), "{}", res.raw_text);
            assert!(res.best_action.is_some());
        } else {
            assert!(res.tracked_state.is_some() || !res.hallucinations.is_empty(), "{}", res.raw_text);
        }
    }
}

#[test]
fn free_decoding_returns_text_and_hallucinations_as_data() {
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&package("mav-tiny"), &SessionOptions::default()).expect("loads");
    let mut states = positions();
    // Positions far from the training data and a finished game: whatever the model writes is data.
    states.push(ChessState::from_fen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1").expect("mate"));
    states.push(ChessState::from_fen("4k3/8/8/8/8/8/8/QQQQKQQQ w - - 0 1").expect("odd position"));
    let reqs: Vec<_> = states
        .iter()
        .map(|s| {
            let mut r = EvalRequest::values(s.clone());
            r.mode = DecodeMode::Free;
            r.want_best_action = true;
            r
        })
        .collect();
    for (req, res) in reqs.iter().zip(e.evaluate(&reqs)) {
        let res = res.expect("free decoding never fails on what the model writes");
        assert!(!res.raw_text.is_empty());
        let legal = req.state.legal_actions();
        for m in &res.moves {
            assert!(legal.contains(&m.action), "free results keep only legal moves");
            assert!((m.dist.as_ref().expect("valued").probs().iter().sum::<f64>() - 1.0).abs() < 1e-6);
        }
        let complete = res.moves.len() == legal.len();
        assert!(
            complete || !res.hallucinations.is_empty(),
            "missing moves must be reported: {}",
            res.raw_text
        );
    }
}

#[test]
fn a_game_the_model_was_not_trained_on_is_refused() {
    // A copy of the package whose mav.json says it only knows standard chess.
    let dir = package_copy::with_games(&package("mav-tiny"), &["chess"]);
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&dir, &SessionOptions::default()).expect("loads");
    let frc = ChessState::from_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
        .expect("fen");
    let res = e.evaluate(&[EvalRequest::values(frc), EvalRequest::values(ChessState::startpos())]);
    let _ = std::fs::remove_dir_all(&dir);
    match &res[0] {
        Err(err @ EvalError::Unsupported { .. }) => assert!(err.to_string().contains("chess960"), "{err}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(res[1].as_ref().expect("standard chess evaluates").moves.len(), 20);
}
