//! `mavboard analyse` on Connect Four and Hex positions with the shipped multi-game model: every legal move
//! valued (max and mean), MCTS, internal search (its trace reads back with the protocol's parser), and
//! clear errors for positions that are not legal or options of another game.

mod common;

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
