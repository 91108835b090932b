//! Internal-search traces: writer → parser round trips and inconsistency marking.

use crate::common;

use common::chess;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::{StateFormat, TopK};
use mavboard::mav::response::HallucinationKind;
use mavboard::mav::trace::{
    NodeEval, ParsedTrace, TraceConfig, TraceIssueKind, build_tree, parse_trace, write_trace,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn cfg(breadth: u32, depth: u32, state_format: StateFormat) -> TraceConfig {
    TraceConfig { breadth, depth, state_format, top: TopK::All, buckets: Buckets::mav() }
}

/// A trace over random (seeded) evaluations: every legal move gets a random bucket, the best action is
/// the highest one.
fn random_trace(state: ChessState, c: &TraceConfig, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut eval = |s: &ChessState| {
        let values: Vec<_> = s.legal_actions().into_iter().map(|m| (m, rng.random_range(0..64u32))).collect();
        let best = values.iter().max_by_key(|(_, v)| *v).map(|(m, _)| *m);
        NodeEval { values, best }
    };
    let tree = build_tree(state, c, &mut eval);
    write_trace(&tree, c).expect("a built tree is writable").text()
}

fn parse(text: &str) -> ParsedTrace<ChessState> {
    parse_trace::<ChessState>(text, Buckets::mav()).expect("the prompt is readable")
}

const FIG6_ROOT: &str = "2r3k1/p3p3/4N1Pp/3Q4/8/5Pq1/PPr3P1/1K5R b - - 0 1";

#[test]
fn written_traces_parse_back_without_issues() {
    for (seed, (b, d, f)) in [
        (3, 1, StateFormat::State),
        (2, 2, StateFormat::Fen),
        (2, 3, StateFormat::State),
        (4, 0, StateFormat::Fen),
    ]
    .into_iter()
    .enumerate()
    {
        let c = cfg(b, d, f);
        let text = random_trace(chess(FIG6_ROOT), &c, seed as u64);
        let t = parse(&text);
        assert!(t.issues.is_empty(), "breadth {b} depth {d}: {:#?}", t.issues);
        let expected_nodes: usize = (0..=d).map(|i| (b as usize).pow(i)).sum();
        assert_eq!(t.nodes.len(), expected_nodes);
        assert_eq!(t.playing, t.nodes[0].selected.as_ref().map(|(m, _)| m.clone()));
        assert!(text.starts_with(&format!(
            "Minimax breadth={b} depth={d}\nEvaluation for node: <root>\n<mav game=chess> "
        )));
    }
}

#[test]
fn figure_six_shape() {
    let c = cfg(3, 1, StateFormat::State);
    let text = random_trace(chess(FIG6_ROOT), &c, 11);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[2], "<mav game=chess> %state %top_all %best_action </mav>");
    assert!(lines[3].starts_with("[%state b || "));
    assert_eq!(lines[6], "Expand from node <root>:");
    assert!(text.contains("<mav game=chess> %prev_state %prev_action %state %top_all %best_action </mav>"));
    let decision = lines.iter().find(|l| l.starts_with("Decision for node: <root> ")).expect("root decision");
    assert_eq!(decision.matches(" : \"<ctrl").count(), 3);
    assert!(lines.last().is_some_and(|l| l.starts_with("Playing ") && l.ends_with('!')));
    let parsed = parse(&text);
    let root = &parsed.nodes[0];
    // The backed-up value of each child is K − 1 − the child's selected bucket.
    for (m, v) in &root.decision {
        let child = root
            .children
            .iter()
            .map(|&c| &parsed.nodes[c])
            .find(|c| c.path.last() == Some(m))
            .expect("child");
        assert_eq!(*v, 63 - child.selected.as_ref().expect("selected").1);
    }
}

fn issues_after(text: &str, from: &str, to: &str) -> Vec<TraceIssueKind> {
    assert!(text.contains(from), "{from} not in the trace");
    parse(&text.replacen(from, to, 1)).issues.into_iter().map(|i| i.kind).collect()
}

#[test]
fn inconsistencies_are_marked() {
    let c = cfg(2, 2, StateFormat::Fen);
    let text = random_trace(chess(FIG6_ROOT), &c, 5);
    let t = parse(&text);
    let root = &t.nodes[0];
    let (child, v) = root.decision[0].clone();

    // A backed-up value that does not match the child's selection.
    let wrong = (v + 1) % 64;
    let from = format!("{child} : \"<ctrl{v}>\"");
    let kinds = issues_after(
        &text,
        &format!("Decision for node: <root> {from}"),
        &format!("Decision for node: <root> {child} : \"<ctrl{wrong}>\""),
    );
    assert!(
        kinds.iter().any(|k| matches!(k, TraceIssueKind::BackedUpValue { got, .. } if *got == wrong)),
        "{kinds:?}"
    );

    // A wrong state inside a child's call.
    let first_child = &t.nodes[root.children[0]];
    let fen = first_child.state.as_ref().expect("legal").fen();
    let kinds = issues_after(&text, &format!("[%FEN {fen}]"), "[%FEN 8/8/8/8/8/8/8/K6k w - - 0 1]");
    assert!(
        kinds.iter().any(|k| matches!(k, TraceIssueKind::Evaluation(h) if matches!(h.kind, HallucinationKind::WrongState { .. }))),
        "{kinds:?}"
    );

    // An illegal move in the expansion.
    let kinds = issues_after(&text, &format!("<root {child}>\n"), "<root a1a8>\n");
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::IllegalMove(m) if m == "a1a8")), "{kinds:?}");
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::ExpansionMismatch { .. })));

    // Playing something else than the root selection.
    let playing = t.playing.clone().expect("root plays");
    let other = root.decision.iter().map(|(m, _)| m.clone()).find(|m| *m != playing).expect("two children");
    let kinds = issues_after(&text, &format!("Playing {playing}!"), &format!("Playing {other}!"));
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::SelectionMismatch { .. })), "{kinds:?}");

    // A leaf selecting something other than its best action.
    let leaf = t.nodes.iter().find(|n| n.children.is_empty() && n.selected.is_some()).expect("a leaf");
    let (sel, sv) = leaf.selected.clone().expect("selected");
    let name = format!("<root {}>", leaf.path.join(" "));
    let kinds = issues_after(
        &text,
        &format!("Decision for node: {name}\nSelecting: {sel} : \"<ctrl{sv}>\""),
        &format!("Decision for node: {name}\nSelecting: {sel} : \"<ctrl{}>\"", (sv + 7) % 64),
    );
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::SelectionMismatch { .. })), "{kinds:?}");

    // Garbage lines are reported, not fatal.
    let kinds = issues_after(&text, "Expand from node <root>:", "Expand from node <root>:\nsomething else");
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::Malformed(_))), "{kinds:?}");
}

#[test]
fn terminal_nodes_select_invalid_with_the_result_value() {
    // White mates in one with Qh7#? Use a position where one of the moves mates.
    let s = chess("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1");
    let c = cfg(40, 1, StateFormat::Fen);
    let text = random_trace(s, &c, 2);
    assert!(text.contains("[%top_all invalid : \"1-0\"]"), "a1a8 mates");
    assert!(text.contains("Selecting: invalid : \"<ctrl0>\""), "the mated side has value 0");
    assert!(text.contains(" a1a8 : \"<ctrl63>\""), "the mating move is worth 63 for White");
    assert!(parse(&text).issues.is_empty());
}

#[test]
fn unusable_prompts_are_errors() {
    assert!(parse_trace::<ChessState>("", Buckets::mav()).is_err());
    assert!(parse_trace::<ChessState>("Minimax breadth=2 depth=1\nhello", Buckets::mav()).is_err());
    assert!(parse_trace::<ChessState>("Minimax breadth=2 depth=1\nEvaluation for node: <root>\n<mav game=chess> %state %top_all </mav>\n[%state nonsense]", Buckets::mav()).is_err());
}

/// Figure 6 of the paper with its own numbers: the root lists g3d6 (35), g3g6 (33), c2e2 (32) best; the
/// leaves select d5d6 (32), e6f4 (22), e6f4 (32). Minimax then plays g3g6, as in the figure. The figure's
/// decision line (values 33/43/33 and the non-child g3g5, a model slip) is flagged.
#[test]
fn figure_six_numbers_and_its_slips() {
    let root = chess(FIG6_ROOT);
    let c = cfg(3, 1, StateFormat::State);
    let play = |s: &ChessState, m: &str| s.play(s.parse_action(m).expect("legal")).expect("legal");
    let special: Vec<(ChessState, &str, u32)> = vec![
        (root.clone(), "g3d6", 35),
        (play(&root, "g3d6"), "d5d6", 32),
        (play(&root, "g3g6"), "e6f4", 22),
        (play(&root, "c2e2"), "e6f4", 32),
    ];
    let extra = [("g3g6", 33), ("c2e2", 32)];
    let mut eval = |s: &ChessState| {
        let (_, best, bv) = special.iter().find(|(x, _, _)| x.fen() == s.fen()).expect("a figure node");
        let values: Vec<_> = s
            .legal_actions()
            .into_iter()
            .map(|m| {
                let t = s.action_to_text(m);
                let v = if t == *best { *bv } else { extra.iter().find(|(e, _)| *e == t).map_or(1, |e| e.1) };
                (m, v)
            })
            .collect();
        NodeEval { values, best: Some(s.parse_action(best).expect("legal")) }
    };
    let text = write_trace(&build_tree(root, &c, &mut eval), &c).expect("writable").text();
    let ours = "Decision for node: <root> g3d6 : \"<ctrl31>\" g3g6 : \"<ctrl41>\" c2e2 : \"<ctrl31>\"\nSelecting: g3g6 : \"<ctrl41>\"\nPlaying g3g6!";
    assert!(text.ends_with(ours), "{text}");
    assert!(text.contains("Expand from node <root>:\n<root g3d6>\n<root g3g6>\n<root c2e2>\n"));
    assert!(parse(&text).issues.is_empty());
    let figure = "Decision for node: <root> g3d6 : \"<ctrl33>\" g3g5 : \"<ctrl43>\" c2e2 : \"<ctrl33>\"\nSelecting: g3g6 : \"<ctrl43>\"\nPlaying g3g6!";
    let kinds: Vec<TraceIssueKind> =
        parse(&text.replace(ours, figure)).issues.into_iter().map(|i| i.kind).collect();
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::DecisionMismatch(_))), "{kinds:?}");
    assert!(
        kinds.contains(&TraceIssueKind::BackedUpValue { child: "g3d6".to_owned(), expected: 31, got: 33 }),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&TraceIssueKind::BackedUpValue { child: "c2e2".to_owned(), expected: 31, got: 33 }),
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|k| matches!(k, TraceIssueKind::SelectionMismatch { .. })), "{kinds:?}");
}
