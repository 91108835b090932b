//! The tolerant parser on clean and corrupted model outputs: each hallucination kind and its location.

use crate::common;

use common::chess;
use mavboard::game::chess::ChessState;
use mavboard::game::{GameKind, GameState};
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::Layout;
use mavboard::mav::example::{ExampleSpec, MoveOrder, MoveValue, render_example};
use mavboard::mav::response::{HallucinationKind, parse_example_text, parse_response};

const FEN: &str = "r1b1nr2/pp1np1bk/2ppPpp1/q7/3P1P2/2NQB3/PPP1B1PP/R4RK1 b - - 0 13";

/// A clean `%FEN %top_all %best_action %state` example for FEN, and its layout.
fn clean() -> (Layout, ChessState, String) {
    let state = chess(FEN);
    let layout =
        Layout::from_command_list(GameKind::Chess, "%FEN %top_all %best_action %state").expect("valid");
    let values: Vec<_> = state
        .legal_actions()
        .into_iter()
        .enumerate()
        .map(|(i, m)| (m, MoveValue::Bucket((i * 7 % 64) as u32)))
        .collect();
    let best = state.parse_action("f6f5").expect("legal");
    let ex = render_example(&ExampleSpec {
        layout: &layout,
        previous: None,
        state: &state,
        values: &values,
        best: Some(best),
        order: MoveOrder::Shuffled(4),
        buckets: Buckets::mav(),
    })
    .expect("valid");
    (layout, state, ex.response())
}

fn kinds(layout: &Layout, state: &ChessState, text: &str) -> Vec<(usize, HallucinationKind)> {
    parse_response(layout, state, Buckets::mav(), text, 1)
        .hallucinations
        .into_iter()
        .map(|h| (h.line, h.kind))
        .collect()
}

#[test]
fn a_clean_output_has_no_hallucinations() {
    let (layout, state, text) = clean();
    let p = parse_response(&layout, &state, Buckets::mav(), &text, 1);
    assert!(p.is_clean(), "{:?}", p.hallucinations);
    assert_eq!(p.top.len(), state.legal_actions().len());
    assert_eq!(p.best.map(|m| state.action_to_text(m)).as_deref(), Some("f6f5"));
}

#[test]
fn each_kind_is_classified_where_it_occurs() {
    let (layout, state, text) = clean();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let with = |i: usize, l: String| {
        let mut v = lines.clone();
        v[i] = l;
        v.join("\n")
    };
    // Malformed line.
    let k = kinds(&layout, &state, &with(1, "%best_action f6f5".to_owned()));
    assert!(k.iter().any(|(l, k)| *l == 2 && matches!(k, HallucinationKind::MalformedLine { .. })), "{k:?}");
    // Unknown token: a bucket past K and a bad move notation.
    let top = lines[0].replacen(":<ctrl", ":<ctrl9", 1);
    let k = kinds(&layout, &state, &with(0, top));
    assert!(k.iter().any(|(_, k)| matches!(k, HallucinationKind::UnknownToken { .. })), "{k:?}");
    let k = kinds(&layout, &state, &with(0, lines[0].replacen("[%top_all ", "[%top_all zz99:<ctrl3> ", 1)));
    assert!(
        k.iter().any(|(_, k)| matches!(k, HallucinationKind::UnknownToken { token } if token == "zz99")),
        "{k:?}"
    );
    // Illegal move, with its column.
    let bad = lines[0].replacen("[%top_all ", "[%top_all e2e4:<ctrl3> ", 1);
    let p = parse_response(&layout, &state, Buckets::mav(), &with(0, bad), 1);
    let h = p
        .hallucinations
        .iter()
        .find(|h| matches!(h.kind, HallucinationKind::IllegalMove { .. }))
        .expect("illegal move found");
    assert_eq!((h.line, h.column), (1, 11));
    // Duplicate move.
    let first = lines[0].trim_start_matches("[%top_all ").split(' ').next().expect("an entry").to_owned();
    let k = kinds(&layout, &state, &with(0, lines[0].replacen("]", &format!(" {first}]"), 1)));
    assert!(k.iter().any(|(_, k)| matches!(k, HallucinationKind::DuplicateMove { .. })), "{k:?}");
    // Missing legal moves.
    let k = kinds(&layout, &state, &with(0, lines[0].replacen(&format!("{first} "), "", 1)));
    let mv = first.split(':').next().expect("move").to_owned();
    assert!(
        k.iter().any(
            |(_, k)| matches!(k, HallucinationKind::MissingLegalMoves { actions } if *actions == [mv.clone()])
        ),
        "{k:?}"
    );
    // Wrong next state.
    let k = kinds(&layout, &state, &with(2, lines[2].replacen(" . ", " p ", 1)));
    assert!(k.iter().any(|(l, k)| *l == 3 && matches!(k, HallucinationKind::WrongState { .. })), "{k:?}");
    // Illegal best move.
    let k = kinds(&layout, &state, &with(1, "[%best_action a1a2]".to_owned()));
    assert!(k.iter().any(|(l, k)| *l == 2 && matches!(k, HallucinationKind::IllegalMove { .. })), "{k:?}");
    // Missing and unexpected lines.
    let k = kinds(&layout, &state, &lines[..2].join("\n"));
    assert!(k.iter().any(|(_, k)| matches!(k, HallucinationKind::MissingLine)), "{k:?}");
    let k = kinds(&layout, &state, &format!("{text}\n[%best_action f6f5]"));
    assert!(k.iter().any(|(l, k)| *l == 4 && matches!(k, HallucinationKind::UnexpectedLine)), "{k:?}");
    // A running game called terminal.
    let k = kinds(&layout, &state, "[%top_all invalid : \"1-0\"]");
    assert_eq!(
        k,
        vec![(1, HallucinationKind::WrongOutcome { expected: "moves".to_owned(), got: "1-0".to_owned() })]
    );
}

#[test]
fn top_k_counts_and_terminal_states() {
    let state = chess(FEN);
    let layout = Layout::from_command_list(GameKind::Chess, "%FEN %top_3").expect("valid");
    let k = kinds(&layout, &state, "[%top_3 f6f5:<ctrl33> d7b6:<ctrl28>]");
    assert_eq!(k, vec![(1, HallucinationKind::WrongMoveCount { expected: 3, got: 2 })]);
    assert!(kinds(&layout, &state, "[%top_3 f6f5:<ctrl33> d7b6:<ctrl28> a5a2:<ctrl1>]").is_empty());
    let mate = chess("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    let l = Layout::from_command_list(GameKind::Chess, "%FEN %top_1 %best_action %FEN").expect("valid");
    assert!(kinds(&l, &mate, "[%top_1 invalid : \"0-1\"]").is_empty());
    let k = kinds(&l, &mate, "[%top_1 invalid : \"1/2-1/2\"]");
    assert!(matches!(&k[..], [(1, HallucinationKind::WrongOutcome { .. })]), "{k:?}");
    let k = kinds(&l, &mate, "[%top_1 e2e3:<ctrl5>]\n[%best_action e2e3]");
    assert!(k.iter().any(|(_, k)| matches!(k, HallucinationKind::WrongOutcome { .. })), "{k:?}");
}

#[test]
fn whole_examples_read_their_prompt() {
    let text = "<mav game=chess> %prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN </mav>
[%prev_FEN r1b1nr2/pp1np1bk/2pp1pp1/q3P3/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 13]
[%prev_action e5e6]
[%FEN r1b1nr2/pp1np1bk/2ppPpp1/q7/3P1P2/2NQB3/PPP1B1PP/R4RK1 b - - 0 13]
[%state b || R . . . . R K . P P P . B . P P . . N Q B . . . . . . P . P . . q . . . . . . . . . p p P p p . p p . n p . b k r . b . n r . . |00000000013||]
[%top_5 d7b6:<ctrl28> f6f5:<ctrl33> d7c5:<ctrl28> f8h8:<ctrl29> a5f5:<ctrl29>]
[%best_action f6f5]
[%FEN r1b1nr2/pp1np1bk/2ppP1p1/q4p2/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 14]";
    let (_, state, p) = parse_example_text::<ChessState>(text, Buckets::mav()).expect("prompt ok");
    assert_eq!(state.fen(), FEN);
    assert!(p.is_clean(), "{:?}", p.hallucinations);
    let broken = text.replace("f8h8:<ctrl29>", "f8h9:<ctrl29>");
    let (_, _, p) = parse_example_text::<ChessState>(&broken, Buckets::mav()).expect("prompt ok");
    assert_eq!(p.hallucinations.len(), 2, "{:?}", p.hallucinations); // an unknown token, then one move short
    assert_eq!(p.hallucinations[0].line, 6);
    assert!(
        parse_example_text::<ChessState>("<mav game=chess> %FEN %top_1 </mav>\n[%FEN bad]", Buckets::mav())
            .is_err()
    );
}
