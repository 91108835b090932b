//! Golden tests of the MAV example writer against the paper's Figure 1, and its rules.

use crate::common;

use common::chess;
use mavboard::game::GameKind;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::Layout;
use mavboard::mav::example::{ExampleError, ExampleSpec, MoveOrder, MoveValue, render_example};

/// Figure 1 of Schultz et al. (2024), as extracted from the PDF: the lines of the example, one per line.
const FIGURE_1: &str = "<mav game=chess> %prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN </mav>
[%prev_FEN r1b1nr2/pp1np1bk/2pp1pp1/q3P3/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 13]
[%prev_action e5e6]
[%FEN r1b1nr2/pp1np1bk/2ppPpp1/q7/3P1P2/2NQB3/PPP1B1PP/R4RK1 b - - 0 13]
[%state b || R . . . . R K . P P P . B . P P . . N Q B . . . . . . P . P . . q . . . . . . . . . p p P p p . p p . n p . b k r . b . n r . . |00000000013||]
[%top_5 d7b6:<ctrl28> f6f5:<ctrl33> d7c5:<ctrl28> f8h8:<ctrl29> a5f5:<ctrl29>]
[%best_action f6f5]
[%FEN r1b1nr2/pp1np1bk/2ppP1p1/q4p2/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 14]";

#[test]
fn figure_one_byte_for_byte() {
    let prev = chess("r1b1nr2/pp1np1bk/2pp1pp1/q3P3/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 13");
    let action = prev.parse_action("e5e6").expect("legal");
    let state = prev.play(action).expect("legal");
    let values: Vec<_> = [("d7b6", 28), ("f6f5", 33), ("d7c5", 28), ("f8h8", 29), ("a5f5", 29)]
        .iter()
        .map(|(m, b)| (state.parse_action(m).expect("legal"), MoveValue::Bucket(*b)))
        .collect();
    let layout = Layout::parse(FIGURE_1.lines().next().expect("header")).expect("valid header");
    let spec = ExampleSpec {
        layout: &layout,
        previous: Some((&prev, action)),
        state: &state,
        values: &values,
        best: Some(state.parse_action("f6f5").expect("legal")),
        order: MoveOrder::AsGiven,
        buckets: Buckets::mav(),
    };
    let ex = render_example(&spec).expect("valid example");
    assert_eq!(ex.text(), FIGURE_1);
    assert_eq!(ex.prompt() + &ex.response(), ex.text());
    assert!(ex.prompt().ends_with("[%prev_action e5e6]\n"));
    assert!(ex.response().starts_with("[%FEN r1b1nr2/pp1np1bk/2ppPpp1/"));
}

fn all_values(state: &ChessState) -> Vec<(shakmaty::Move, MoveValue)> {
    state
        .legal_actions()
        .into_iter()
        .enumerate()
        .map(|(i, m)| (m, MoveValue::WinProb((i as f64 * 0.137).fract())))
        .collect()
}

#[test]
fn top_k_lists_the_best_k_in_seeded_random_order() {
    let state = ChessState::startpos();
    let values = all_values(&state);
    let layout =
        Layout::from_command_list(GameKind::Chess, "%FEN %top_3 %best_action %state").expect("valid");
    let render = |seed| {
        render_example(&ExampleSpec {
            layout: &layout,
            previous: None,
            state: &state,
            values: &values,
            best: Some(values[0].0),
            order: MoveOrder::Shuffled(seed),
            buckets: Buckets::mav(),
        })
        .expect("valid")
    };
    let a = render(1);
    assert_eq!(a, render(1), "same seed, same example");
    let top = &a.lines()[2];
    let mut listed: Vec<&str> = top.trim_start_matches("[%top_3 ").trim_end_matches(']').split(' ').collect();
    let mut expected: Vec<(f64, String)> = values
        .iter()
        .map(|(m, v)| match v {
            MoveValue::WinProb(p) => {
                (*p, format!("{}:<ctrl{}>", state.action_to_text(*m), (p * 64.0).floor()))
            }
            MoveValue::Bucket(_) => unreachable!("test gives win probabilities"),
        })
        .collect();
    expected.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut best3: Vec<&str> = expected[..3].iter().map(|(_, s)| s.as_str()).collect();
    listed.sort_unstable();
    best3.sort_unstable();
    assert_eq!(listed, best3);
    let orders: std::collections::HashSet<String> = (0..20).map(|s| render(s).lines()[2].clone()).collect();
    assert!(orders.len() > 1, "different seeds shuffle differently");
    assert_eq!(a.prompt_line_count(), 2);
    assert!(a.lines()[4].starts_with("[%state b || "));
}

#[test]
fn terminal_states_answer_invalid_with_the_result() {
    let mut s = ChessState::startpos();
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        s = s.play(s.parse_action(m).expect("legal")).expect("legal");
    }
    let layout = Layout::from_command_list(GameKind::Chess, "%FEN %top_1 %best_action %FEN").expect("valid");
    let ex = render_example(&ExampleSpec {
        layout: &layout,
        previous: None,
        state: &s,
        values: &[],
        best: None,
        order: MoveOrder::Shuffled(0),
        buckets: Buckets::mav(),
    })
    .expect("valid");
    assert_eq!(ex.response(), "[%top_1 invalid : \"0-1\"]");
    let stalemate = chess("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let layout = Layout::from_command_list(GameKind::Chess, "%state %top_all").expect("valid");
    let ex = render_example(&ExampleSpec {
        layout: &layout,
        previous: None,
        state: &stalemate,
        values: &[],
        best: None,
        order: MoveOrder::AsGiven,
        buckets: Buckets::mav(),
    })
    .expect("valid");
    assert_eq!(ex.response(), "[%top_all invalid : \"1/2-1/2\"]");
}

#[test]
fn bad_inputs_are_named() {
    let state = ChessState::startpos();
    let values = all_values(&state);
    let layout = Layout::from_command_list(GameKind::Chess, "%FEN %top_all %best_action").expect("valid");
    let spec = |values, best| ExampleSpec {
        layout: &layout,
        previous: None,
        state: &state,
        values,
        best,
        order: MoveOrder::Shuffled(3),
        buckets: Buckets::mav(),
    };
    assert!(
        matches!(render_example(&spec(&values[1..], Some(values[0].0))), Err(ExampleError::MissingValues(m)) if m.len() == 1)
    );
    assert!(matches!(render_example(&spec(&values, None)), Err(ExampleError::MissingBest)));
    let mut dup = values.clone();
    dup.push(values[0]);
    assert!(matches!(render_example(&spec(&dup, Some(values[0].0))), Err(ExampleError::DuplicateValue(_))));
    let other = chess("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    let illegal = vec![(other.parse_action("e7e5").expect("legal there"), MoveValue::Bucket(3))];
    assert!(matches!(render_example(&spec(&illegal, None)), Err(ExampleError::IllegalValueMove(_))));
    let bad_bucket = vec![(values[0].0, MoveValue::Bucket(64))];
    let l1 = Layout::from_command_list(GameKind::Chess, "%FEN %top_1").expect("valid");
    let r = render_example(&ExampleSpec { layout: &l1, values: &bad_bucket, ..spec(&[], None) });
    assert!(matches!(r, Err(ExampleError::Bucket(_))));
    let lp = Layout::from_command_list(GameKind::Chess, "%prev_FEN %prev_action %FEN").expect("valid");
    let r = render_example(&ExampleSpec { layout: &lp, ..spec(&[], None) });
    assert!(matches!(r, Err(ExampleError::MissingPrevious)));
    let e2e4 = state.parse_action("e2e4").expect("legal");
    let r = render_example(&ExampleSpec { layout: &lp, previous: Some((&state, e2e4)), ..spec(&[], None) });
    assert!(matches!(r, Err(ExampleError::PreviousMismatch { .. })));
}
