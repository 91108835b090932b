//! Hex through the MAV protocol: examples labelled by the exact solver (4×4) and by MCTS (7×7) render,
//! tokenize without `<unk>`, round-trip, and parse back clean; terminal states write their result; the
//! header names the game.

use mavboard_inference::game::hex::{HexAction, HexState};
use mavboard_inference::game::{GameKind, GameState};
use mavboard_inference::mav::buckets::Buckets;
use mavboard_inference::mav::command::{HeaderError, Layout};
use mavboard_inference::mav::example::{ExampleSpec, MoveOrder, MoveValue, render_example};
use mavboard_inference::mav::response::parse_example_text;
use mavboard_inference::mav::state::MavState;
use mavboard_inference::mav::tokenizer::Tokenizer;
use mavboard_inference::solve::hex::{Solver, mcts};
use rand::seq::IndexedRandom;
use rand::{SeedableRng, rngs::StdRng};

const HEADER: &str = "%prev_state %prev_action %state %top_all %best_action %state";

fn check(
    layout: &Layout,
    t: &Tokenizer,
    prev: &HexState,
    action: HexAction,
    values: &[(HexAction, MoveValue)],
    best: Option<HexAction>,
    seed: u64,
) {
    let state = prev.play(action).expect("legal");
    let ex = render_example(&ExampleSpec {
        layout,
        previous: Some((prev, action)),
        state: &state,
        values,
        best,
        order: MoveOrder::Shuffled(seed),
        buckets: Buckets::mav(),
    })
    .expect("renders");
    let text = ex.text();
    let ids = t.encode(&text);
    assert!(!ids.contains(&t.unk_id()), "unknown text in {text}");
    assert_eq!(t.decode(&ids).expect("ids"), text);
    let (l, s, parsed) = parse_example_text::<HexState>(&text, Buckets::mav()).expect("reads");
    assert_eq!(&l, layout);
    assert_eq!(s, state);
    assert!(parsed.is_clean(), "{:?}\n{text}", parsed.hallucinations);
    match state.outcome() {
        Some(o) => assert!(text.contains(&format!("[%top_all invalid : \"{}\"]", o.result_str())), "{text}"),
        None => {
            assert_eq!(parsed.top.len(), state.legal_actions().len());
            assert_eq!(parsed.best, best);
            let after = state.play(best.expect("not over")).expect("legal").mav_state();
            assert!(text.ends_with(&format!("[%state {after}]")), "{text}");
        }
    }
}

#[test]
fn solver_labelled_4x4_examples_round_trip() {
    let layout = Layout::from_command_list(GameKind::Hex, HEADER).expect("valid header");
    assert_eq!(
        layout.header_line(),
        "<mav game=hex> %prev_state %prev_action %state %top_all %best_action %state </mav>"
    );
    let t = Tokenizer::new();
    let mut solver = Solver::with_table_bits(16);
    let mut rng = StdRng::seed_from_u64(8);
    for game in 0..30u64 {
        let mut prev = HexState::new(4).expect("size").with_swap(game % 2 == 0);
        while let Some(&action) = prev.legal_actions().choose(&mut rng) {
            let state = prev.play(action).expect("legal");
            let a = solver.analyse(&state).expect("4×4");
            let values: Vec<_> = a.moves.iter().map(|m| (m.action, MoveValue::Bucket(m.bucket))).collect();
            check(&layout, &t, &prev, action, &values, a.best, game);
            prev = state;
        }
    }
}

#[test]
fn mcts_labelled_7x7_examples_round_trip_with_letters_and_swap() {
    let layout = Layout::from_command_list(GameKind::Hex, HEADER).expect("valid header");
    let t = Tokenizer::new();
    for size in [7, 13] {
        let empty = HexState::new(size).expect("size").with_swap(true);
        let first = empty.parse_action(if size == 13 { "m13" } else { "d4" }).expect("legal");
        let prev = empty.play(first).expect("legal");
        // The swap as the move into the example, and as a labelled move.
        let state = prev.play(HexAction::Swap).expect("legal");
        let r = mcts::search(&state, mcts::Config { playouts: 2000, ..mcts::Config::default() });
        let values: Vec<_> = r.moves.iter().map(|m| (m.action, MoveValue::Bucket(m.bucket))).collect();
        check(&layout, &t, &prev, HexAction::Swap, &values, r.best, 3);
        let r = mcts::search(&prev, mcts::Config { playouts: 2000, ..mcts::Config::default() });
        assert!(r.moves.iter().any(|m| m.action == HexAction::Swap));
        let values: Vec<_> = r.moves.iter().map(|m| (m.action, MoveValue::Bucket(m.bucket))).collect();
        check(&layout, &t, &empty, first, &values, r.best, 4);
    }
    assert_eq!(t.encode_to_tokens(" i13 swap"), [" ", "i", "1", "3", " ", "swap"]);
}

#[test]
fn headers_name_the_game_and_refuse_fen() {
    let l = Layout::parse("<mav game=hex> %state %top_1 </mav>").expect("valid");
    assert_eq!(l.game(), GameKind::Hex);
    assert_eq!(
        Layout::from_command_list(GameKind::Hex, "%FEN %top_1"),
        Err(HeaderError::FenNotAvailable("hex"))
    );
}
