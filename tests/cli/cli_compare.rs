//! `mavboard analyse --compare`: two models on one position, move by move — the shipped `mav-enc-tiny` (ours)
//! against the action-value fixture (the searchless-chess format): both values of every legal move under
//! the scoring rule, their ranks, the gap and the marks, checked against each model analysed alone.

use crate::common;

use common::mavboard;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;

const AV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/models/av-fixture");

fn json(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = mavboard(args);
    assert!(ok, "mavboard {args:?} failed: {err}");
    serde_json::from_str(&out).expect("JSON")
}

/// Each move's value under `rule` when the model in `dir` (the default model for `None`) analyses alone.
fn alone(dir: Option<&str>, fen: &str, rule: &str) -> Vec<(String, f64)> {
    let mut args = vec!["analyse", "--fen", fen, "--json"];
    if let Some(d) = dir {
        args.extend(["--model", d]);
    }
    let v = json(&args);
    v["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| (m["move"].as_str().expect("move").to_owned(), m["values"][rule].as_f64().expect("value")))
        .collect()
}

#[test]
fn two_formats_side_by_side_give_each_models_own_values() {
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let v = json(&["analyse", "--fen", fen, "--compare", AV, "--scoring", "max", "--json"]);
    assert_eq!(
        (v["a"]["format"].as_str(), v["b"]["format"].as_str()),
        (Some("mav-encoder"), Some("action-value"))
    );
    let c = &v["comparison"];
    assert_eq!((c["scoring"].as_str(), c["margin"].as_f64()), (Some("max"), Some(0.05)));
    let moves = c["moves"].as_array().expect("moves");
    let state = ChessState::from_fen(fen).expect("fen");
    assert_eq!(moves.len(), state.legal_actions().len(), "every legal move, once");
    let (a_alone, b_alone) = (alone(None, fen, "max"), alone(Some(AV), fen, "max"));
    let mut ranks = (Vec::new(), Vec::new());
    for m in moves {
        let text = m["move"].as_str().expect("move");
        assert!(state.parse_action(text).is_ok(), "{text} is legal");
        let (a, b) = (m["a"].as_f64().expect("A valued it"), m["b"].as_f64().expect("B valued it"));
        let own = |list: &[(String, f64)]| list.iter().find(|(t, _)| t == text).map(|(_, v)| *v);
        assert!((own(&a_alone).expect("A alone") - a).abs() < 1e-9, "A's value of {text} is its own");
        assert!((own(&b_alone).expect("B alone") - b).abs() < 1e-9, "B's value of {text} is its own");
        let gap = m["gap"].as_f64().expect("gap");
        assert!((gap - (b - a)).abs() < 1e-12);
        let (ra, rb) = (m["rank_a"].as_u64().expect("rank"), m["rank_b"].as_u64().expect("rank"));
        let one_best = (ra == 1) != (rb == 1);
        assert_eq!(m["disagree"].as_bool(), Some(one_best || gap.abs() > 0.05), "{m}");
        if ra == 1 {
            assert_eq!(c["best_a"].as_str(), Some(text));
        }
        if rb == 1 {
            assert_eq!(c["best_b"].as_str(), Some(text));
        }
        ranks.0.push(ra);
        ranks.1.push(rb);
    }
    let every: Vec<u64> = (1..=moves.len() as u64).collect();
    for r in [&mut ranks.0, &mut ranks.1] {
        r.sort_unstable();
        assert_eq!(*r, every);
    }
    assert_eq!(c["best_differs"].as_bool(), Some(c["best_a"] != c["best_b"]));
}

#[test]
fn a_model_beside_itself_agrees_and_the_table_says_so() {
    let v = json(&["analyse", "--model", AV, "--compare", AV, "--json"]);
    let c = &v["comparison"];
    assert_eq!(c["best_differs"].as_bool(), Some(false));
    assert!(c["moves"].as_array().expect("moves").iter().all(|m| m["disagree"] == false && m["gap"] == 0.0));
    let (ok, text, err) = mavboard(&["analyse", "--compare", AV, "--margin", "100"]);
    assert!(ok, "{err}");
    assert!(text.contains("model A   mav-enc-tiny") && text.contains("model B   av-fixture"), "{text}");
    assert!(
        text.contains("rank A") && text.contains("100.0 points apart") && text.contains("best move: A "),
        "{text}"
    );
    // With a margin of 100 points only a different best move is marked.
    let marks = text.lines().filter(|l| l.ends_with('≠')).count();
    assert_eq!(marks > 0, text.contains("they differ"), "{text}");
}

#[test]
fn a_missing_second_model_or_options_it_cannot_take_are_named() {
    let (ok, _, err) = mavboard(&["analyse", "--compare", "/nonexistent/mavboard-model-b"]);
    assert!(!ok);
    assert!(err.contains("model B (--compare)") && err.contains("/nonexistent/mavboard-model-b"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--compare", AV, "--sims", "8"]);
    assert!(!ok && err.contains("--compare"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--compare", AV, "--margin=-1"]);
    assert!(!ok && err.contains("--margin"), "{err}");
}
