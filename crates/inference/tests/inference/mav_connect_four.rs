//! Connect Four through the MAV protocol: examples labelled by the exact solver render, tokenize without
//! `<unk>`, and parse back clean (state tracking, `%top_all`, best move, the state after it), terminal
//! states write their result, and the header names the game.

use mavboard_inference::game::connect_four::ConnectFourState;
use mavboard_inference::game::{GameKind, GameState};
use mavboard_inference::mav::buckets::Buckets;
use mavboard_inference::mav::command::{HeaderError, Layout};
use mavboard_inference::mav::example::{ExampleSpec, MoveOrder, MoveValue, render_example};
use mavboard_inference::mav::response::{HallucinationKind, parse_example_text, parse_response};
use mavboard_inference::mav::state::MavState;
use mavboard_inference::mav::tokenizer::Tokenizer;
use mavboard_inference::solve::connect_four::Solver;
use rand::seq::IndexedRandom;
use rand::{SeedableRng, rngs::StdRng};

const HEADER: &str = "%prev_state %prev_action %state %top_all %best_action %state";

#[test]
fn solver_labelled_examples_round_trip() {
    let layout = Layout::from_command_list(GameKind::ConnectFour, HEADER).expect("valid header");
    assert_eq!(
        layout.header_line(),
        "<mav game=connect_four> %prev_state %prev_action %state %top_all %best_action %state </mav>"
    );
    let t = Tokenizer::new();
    let mut solver = Solver::with_table_bits(18);
    let mut rng = StdRng::seed_from_u64(21);
    let mut checked = 0;
    for game in 0..80 {
        let mut prev = ConnectFourState::new();
        // Late positions only, so that each solve is quick.
        for ply in 0..42 {
            let Some(&action) = prev.legal_actions().choose(&mut rng) else { break };
            let state = prev.play(action).expect("legal");
            if ply >= 20 {
                let a = solver.analyse(&state);
                let values: Vec<_> =
                    a.moves.iter().map(|m| (m.column, MoveValue::Bucket(m.bucket))).collect();
                let ex = render_example(&ExampleSpec {
                    layout: &layout,
                    previous: Some((&prev, action)),
                    state: &state,
                    values: &values,
                    best: a.best,
                    order: MoveOrder::Shuffled(game * 100 + ply),
                    buckets: Buckets::mav(),
                })
                .expect("renders");
                let text = ex.text();
                let ids = t.encode(&text);
                assert!(!ids.contains(&t.unk_id()), "unknown text in {text}");
                assert_eq!(t.decode(&ids).expect("ids"), text);
                let (l, s, parsed) =
                    parse_example_text::<ConnectFourState>(&text, Buckets::mav()).expect("reads");
                assert_eq!(l, layout);
                assert_eq!(s, state);
                assert!(parsed.is_clean(), "{:?}\n{text}", parsed.hallucinations);
                assert_eq!(parsed.states.first().map(|(_, text)| text.clone()), Some(state.mav_state()));
                match state.outcome() {
                    Some(o) => {
                        assert!(
                            text.contains(&format!("[%top_all invalid : \"{}\"]", o.result_str())),
                            "{text}"
                        );
                        assert_eq!(parsed.declared_result, Some(o.result_str().to_owned()));
                    }
                    None => {
                        assert_eq!(parsed.top.len(), state.legal_actions().len());
                        assert_eq!(parsed.best, a.best);
                        let best = a.best.expect("not over");
                        assert!(text.ends_with(&format!(
                            "[%state {}]",
                            state.play(best).expect("legal").mav_state()
                        )));
                    }
                }
                checked += 1;
            }
            if state.outcome().is_some() {
                break;
            }
            prev = state;
        }
    }
    assert!(checked > 50, "{checked} examples");
}

#[test]
fn model_mistakes_are_classified() {
    let state = ConnectFourState::from_moves("4453").expect("legal");
    let layout =
        Layout::from_command_list(GameKind::ConnectFour, "%state %top_all %best_action").expect("valid");
    let kinds = |text: &str| -> Vec<HallucinationKind> {
        parse_response(&layout, &state, Buckets::mav(), text, 1)
            .hallucinations
            .into_iter()
            .map(|h| h.kind)
            .collect()
    };
    let all: String =
        state.legal_actions().iter().map(|c| format!(" {c}:<ctrl32>")).collect::<Vec<_>>().concat();
    assert!(kinds(&format!("[%top_all{all}]\n[%best_action 4]")).is_empty());
    // Column 8 does not exist.
    let k = kinds(&format!("[%top_all{all} 8:<ctrl3>]\n[%best_action 4]"));
    assert!(!k.is_empty(), "an off-board column is reported");
    // A full column is an illegal move.
    let full = ConnectFourState::from_moves("444444").expect("legal");
    let k = parse_response(&layout, &full, Buckets::mav(), "[%top_all 4:<ctrl1>]\n[%best_action 4]", 1);
    assert!(!k.is_clean());
}

#[test]
fn headers_name_the_game_and_refuse_fen() {
    let l = Layout::parse("<mav game=connect_four> %state %top_1 </mav>").expect("valid");
    assert_eq!(l.game(), GameKind::ConnectFour);
    assert_eq!(
        Layout::from_command_list(GameKind::ConnectFour, "%FEN %top_1"),
        Err(HeaderError::FenNotAvailable("connect_four"))
    );
    let e = Layout::parse("<mav game=go> %state %top_1 </mav>").expect_err("unknown game");
    assert!(e.to_string().contains("connect_four, hex"), "{e}");
}
