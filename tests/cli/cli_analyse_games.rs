//! `mavboard analyse` on Connect Four and Hex positions with the shipped multi-game model: every legal move
//! valued (max and mean), MCTS, internal search (its trace reads back with the protocol's parser), and
//! clear errors for positions that are not legal or options of another game.

use crate::common;

use common::mavboard;
use mavboard::game::GameState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::trace::parse_trace;

#[test]
fn connect_four_values_every_column_and_searches() {
    let (ok, out, err) =
        mavboard(&["analyse", "--game", "connect_four", "--moves", "4453", "--sims", "64", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let state = mavboard::game::connect_four::record::read_moves("4453").expect("record").end();
    assert_eq!(v["fen"], state.to_text());
    let moves = v["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 7, "every column");
    for m in moves {
        let text = m["move"].as_str().expect("a move");
        assert!(state.parse_action(text).is_ok(), "{text}");
        assert_eq!(m["distribution"].as_array().expect("64 buckets").len(), 64);
    }
    assert!(v["search"]["totals"]["simulations"].as_u64().expect("simulations") >= 64);
}

/// `--scoring` takes any rule's text form: each move gets its value and rank under it beside max and mean,
/// and the table is ordered by it.
#[test]
fn a_scoring_rule_beyond_max_and_mean_values_and_orders_the_moves() {
    let (ok, out, err) =
        mavboard(&["analyse", "--game", "connect_four", "--moves", "44", "--scoring", "mean-sd:1", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rule = mavboard::mav::scoring::Scoring::mean_minus_sd(1.0).expect("λ");
    let moves = v["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 7);
    let mut ranks = Vec::new();
    for m in moves {
        let probs: Vec<f64> =
            m["distribution"].as_array().expect("buckets").iter().filter_map(|p| p.as_f64()).collect();
        let value = m["values"]["mean-sd:1"].as_f64().expect("the rule's value");
        assert!((value - rule.of_probs(&probs)).abs() < 1e-5, "{m}");
        assert!(value <= m["values"]["mean"].as_f64().expect("mean") + 1e-12, "a spread never adds value");
        ranks.push(m["ranks"]["mean-sd:1"].as_u64().expect("a rank"));
    }
    ranks.sort_unstable();
    assert_eq!(ranks, (1..=7).collect::<Vec<u64>>());
    let (ok, text, err) =
        mavboard(&["analyse", "--game", "connect_four", "--moves", "44", "--scoring", "mean-sd:1"]);
    assert!(ok, "{err}");
    assert!(text.contains("rank mean-sd:1") && text.contains("ordered by mean-sd:1 scoring"), "{text}");
    // The first row is the rule's favourite: its third rank column (after max's and mean's) says 1.
    let mut lines = text.lines().skip_while(|l| !l.starts_with("move"));
    let first: Vec<&str> = lines.nth(1).expect("a first row").split_whitespace().collect();
    assert_eq!(first.get(6), Some(&"1"), "{text}");
    let (ok, _, err) = mavboard(&["analyse", "--game", "connect_four", "--scoring", "median"]);
    assert!(!ok && err.contains("unknown scoring 'median'"), "{err}");
}

#[test]
fn internal_search_on_connect_four_and_hex_writes_a_trace_that_reads_back() {
    let (ok, out, err) =
        mavboard(&["analyse", "--game", "connect_four", "--moves", "44", "--internal", "2,1", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let trace = v["explicit"]["trace"].as_str().expect("trace");
    assert!(trace.contains("<mav game=connect_four>"), "{trace}");
    let parsed = parse_trace::<ConnectFourState>(trace, Buckets::mav()).expect("the trace reads back");
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    assert_eq!(v["explicit"]["model_calls"], 3);
    let choice = v["explicit"]["choice"].as_str().expect("a choice");
    let state = mavboard::game::connect_four::record::read_moves("44").expect("record").end();
    assert!(state.parse_action(choice).is_ok(), "{choice}");

    let (ok, out, err) =
        mavboard(&["analyse", "--game", "hex", "--moves", "d4 c5", "--internal", "2,1", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let trace = v["explicit"]["trace"].as_str().expect("trace");
    let parsed = parse_trace::<HexState>(trace, Buckets::mav()).expect("the Hex trace reads back");
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    let (ok, text, err) = mavboard(&["analyse", "--game", "hex", "--moves", "d4,c5"]);
    assert!(ok, "{err}");
    // The table: one row per empty cell of the 7×7 board.
    let mut hex = HexState::new(7).expect("7×7");
    for cell in ["d4", "c5"] {
        hex = hex.play(hex.parse_action(cell).expect("legal")).expect("plays");
    }
    let rows = text
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(|w| hex.parse_action(w).is_ok()))
        .count();
    assert_eq!(rows, 47, "{text}");
}

#[test]
fn bad_positions_and_options_of_another_game_are_named() {
    let (ok, _, err) = mavboard(&["analyse", "--game", "connect_four", "--moves", "4458"]);
    assert!(!ok && err.contains("'8' is not a column"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--game", "hex", "--moves", "d4 d4"]);
    assert!(!ok && err.contains("move 2 (d4)"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--game", "hex", "--hex-size", "20"]);
    assert!(!ok && err.contains("--hex-size 20"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--game", "hex", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1"]);
    assert!(!ok && err.contains("--fen is for chess"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--moves", "4453"]);
    assert!(!ok && err.contains("--moves is for Connect Four and Hex"), "{err}");
    let (ok, _, err) = mavboard(&["analyse", "--game", "go"]);
    assert!(!ok && err.contains("invalid value 'go' for '--game"), "{err}");
}
