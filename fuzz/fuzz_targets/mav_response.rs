//! Model output: the tolerant MAV response, example and trace parsers and the state readers never
//! panic on any text, and a state that reads is written back into text that reads into the same state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::game::GameKind;
use mavboard::game::chess::ChessState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::{Layout, StateFormat};
use mavboard::mav::response::{parse_example_text, parse_response, read_prompt};
use mavboard::mav::state::MavState;
use mavboard::mav::trace::parse_trace;

/// Reads `text` as a state of `kind` in both formats; what reads must survive writing and reading again.
fn state_round_trip<S: MavState>(kind: GameKind, text: &str) {
    for format in [StateFormat::State, StateFormat::Fen] {
        let Ok(state) = S::from_mav_text(kind, format, text) else { continue };
        let written = state
            .render(format)
            .unwrap_or_else(|e| panic!("{text:?} read as {format:?} but does not render: {e}"));
        let again = S::from_mav_text(kind, format, &written)
            .unwrap_or_else(|e| panic!("{text:?} read, but its rendering {written:?} does not: {e}"));
        assert_eq!(again.render(format).ok(), Some(written), "{text:?}: rendering is not stable");
    }
}

fn responses<S: MavState>(kind: GameKind, state: &S, text: &str) {
    for commands in [
        "%FEN %top_all %best_action %state",
        "%state %top_3 %best_action",
        "%prev_state %prev_action %state %top_all",
    ] {
        if let Ok(layout) = Layout::from_command_list(kind, commands) {
            let _ = parse_response(&layout, state, Buckets::mav(), text, 1);
        }
    }
    let _ = parse_example_text::<S>(text, Buckets::mav());
    let _ = read_prompt::<S>(text);
    let _ = parse_trace::<S>(text, Buckets::mav());
}

fuzz_target!(|text: &str| {
    responses(GameKind::Chess, &ChessState::startpos(), text);
    responses(GameKind::ConnectFour, &ConnectFourState::new(), text);
    if let Ok(hex) = HexState::new(7) {
        responses(GameKind::Hex, &hex, text);
    }
    state_round_trip::<ChessState>(GameKind::Chess, text);
    state_round_trip::<ChessState>(GameKind::Chess960, text);
    state_round_trip::<ConnectFourState>(GameKind::ConnectFour, text);
    state_round_trip::<HexState>(GameKind::Hex, text);
});
