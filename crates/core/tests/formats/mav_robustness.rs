//! The tolerant parsers and state readers never panic on arbitrary text.

use mavboard_core::game::GameKind;
use mavboard_core::game::chess::ChessState;
use mavboard_core::mav::buckets::Buckets;
use mavboard_core::mav::command::{Layout, StateFormat};
use mavboard_core::mav::response::{parse_example_text, parse_response};
use mavboard_core::mav::state::MavState;
use mavboard_core::mav::trace::parse_trace;
use proptest::prelude::*;

/// Text made of MAV-looking pieces and arbitrary characters, to reach deep into the parsers.
fn mav_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("\n".to_owned()),
        Just(" ".to_owned()),
        Just("%top_all ".to_owned()),
        Just("%best_action ".to_owned()),
        Just("%FEN ".to_owned()),
        Just("%state ".to_owned()),
        Just("e2e4:<ctrl33>".to_owned()),
        Just("invalid : \"1-0\"".to_owned()),
        Just("<mav game=chess> %FEN %top_all %best_action %state </mav>\n".to_owned()),
        Just("[%FEN rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n".to_owned()),
        Just("Evaluation for node: <root>\n".to_owned()),
        Just("Expand from node <root>:\n<root e2e4>\n".to_owned()),
        Just("Decision for node: <root> e2e4 : \"<ctrl3>\"\n".to_owned()),
        Just("Selecting: e2e4 : \"<ctrl3>\"\n".to_owned()),
        Just("Playing e2e4!".to_owned()),
        Just("|1111e3".to_owned()),
        "\\PC{0,6}",
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn response_parser_never_panics(text in mav_like()) {
        let layout = Layout::from_command_list(GameKind::Chess, "%FEN %top_all %best_action %state").expect("valid");
        let _ = parse_response(&layout, &ChessState::startpos(), Buckets::mav(), &text, 1);
        let _ = parse_example_text::<ChessState>(&text, Buckets::mav());
    }

    #[test]
    fn trace_parser_never_panics(text in mav_like()) {
        let full = format!("Minimax breadth=2 depth=1\nEvaluation for node: <root>\n<mav game=chess> %FEN %top_all %best_action </mav>\n[%FEN rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n{text}");
        let _ = parse_trace::<ChessState>(&full, Buckets::mav());
        let _ = parse_trace::<ChessState>(&text, Buckets::mav());
    }

    #[test]
    fn state_reader_never_panics(text in mav_like(), tail in "\\PC{0,14}") {
        let s = ChessState::startpos().mav_state();
        let cut = s.rfind(" |").unwrap_or(0);
        let _ = ChessState::from_mav_text(GameKind::Chess, StateFormat::State, &format!("{} |{tail}", &s[..cut]));
        let _ = ChessState::from_mav_text(GameKind::Chess960, StateFormat::State, &text);
        let _ = ChessState::from_mav_text(GameKind::Chess, StateFormat::Fen, &text);
    }
}
