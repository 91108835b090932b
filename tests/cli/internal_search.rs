//! Internal search (paper §4): the explicit minimax's trace and tree over the shipped models and the CLI,
//! and the model-trace path (parser → tree → comparison) over hand-edited traces and scripted completers,
//! so it runs without an internal-search model.

use crate::common;

use std::process::Command;

use common::package;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::complete::{Completer, Completion, TraceModel, open_trace_model};
use mavboard::inference::evaluator::{EvalError, Scoring};
use mavboard::inference::mock::HashEvaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::StateFormat;
use mavboard::mav::trace::parse_trace;
use mavboard::search::internal::{
    ExplicitSearch, InternalConfig, ModelSide, TreeNode, explicit_search, judge_trace, model_side,
    run_internal,
};

fn config(breadth: usize, depth: u32) -> InternalConfig {
    InternalConfig {
        breadth,
        depth,
        scoring: Scoring::Mean,
        state_format: StateFormat::Fen,
        buckets: Buckets::mav(),
        decoding: Default::default(),
    }
}

/// Every node's backed-up value and choice follow from its children (or it is a leaf that chose one of
/// its legal moves), children are the best-valued moves in order, and exactly the chosen line is marked.
fn check_tree(n: &TreeNode, state: &ChessState, breadth: usize, depth: u32) {
    let legal: Vec<String> = state.legal_actions().into_iter().map(|a| state.action_to_text(a)).collect();
    if state.outcome().is_some() {
        assert!(n.children.is_empty() && n.choice.is_none());
        return;
    }
    let value = n.value.expect("every node of a search over a working model has a value");
    assert!((0.0..=1.0).contains(&value), "{}: {value}", n.name());
    let choice = n.choice.clone().expect("a node with legal moves chooses one");
    assert!(legal.contains(&choice), "{}: {choice} is legal", n.name());
    if n.path.len() as u32 == depth {
        assert!(n.children.is_empty(), "{} is a leaf at depth {depth}", n.name());
    } else {
        assert_eq!(n.children.len(), breadth.min(legal.len()), "{} expands b children", n.name());
        let best =
            n.children.iter().map(|c| 1.0 - c.value.expect("child value")).fold(f64::NEG_INFINITY, f64::max);
        assert!((value - best).abs() < 1e-12, "{}: backed-up {value} vs children {best}", n.name());
        let chosen = n.child(&choice).expect("an inner node chooses one of its children");
        assert!((1.0 - chosen.value.expect("value") - best).abs() < 1e-12);
        let means: Vec<f64> = n.children.iter().map(|c| c.move_mean.expect("move value")).collect();
        assert!(means.windows(2).all(|w| w[0] >= w[1]), "{}: children best first by mean", n.name());
    }
    for c in &n.children {
        let a = c.action.as_deref().expect("children have a move");
        assert!(legal.iter().any(|m| m == a));
        assert_eq!(c.on_chosen_line, n.on_chosen_line && n.choice.as_deref() == Some(a));
        let next = state.play(state.parse_action(a).expect("legal")).expect("plays");
        check_tree(c, &next, breadth, depth);
    }
}

/// The explicit trace reads back without a single issue and describes the same tree.
fn check_trace(e: &ExplicitSearch, buckets: Buckets) {
    assert!(e.trace.starts_with(&e.prompt));
    let parsed = parse_trace::<ChessState>(&e.trace, buckets).expect("the written trace is readable");
    assert!(parsed.issues.is_empty(), "issues in our own trace: {:?}", parsed.issues);
    assert_eq!(parsed.nodes.len(), e.tree.count());
    let playing = parsed.playing.expect("the root plays a move");
    assert!(e.tree.child(&playing).is_some() || e.tree.children.is_empty());
}

#[test]
fn explicit_search_over_the_shipped_encoder() {
    let (mut model, package) = open_trace_model(&package("mav-enc-tiny"), &SessionOptions::default())
        .expect("the shipped model opens");
    let buckets = Buckets::new(package.manifest.num_buckets as u32).expect("buckets");
    let root = ChessState::startpos();
    for (b, d) in [(2, 1), (3, 0), (2, 2)] {
        let cfg = InternalConfig { buckets, ..config(b, d) };
        let r = run_internal(&mut model, root.clone(), &cfg).expect("the search runs");
        assert_eq!((r.breadth, r.depth), (b, d));
        let expected_calls: u64 = (0..=d).map(|k| (b as u64).pow(k)).sum();
        assert_eq!(r.explicit.model_calls, expected_calls);
        assert_eq!(r.explicit.tree.count() as u64, expected_calls);
        assert!(r.explicit.tree.on_chosen_line);
        check_tree(&r.explicit.tree, &root, b, d);
        check_trace(&r.explicit, buckets);
        assert_eq!(r.explicit.choice, r.explicit.tree.choice);
        assert_eq!(r.explicit.tree.chosen_line().len() as u32, d + 1);
        match (&model, &r.model) {
            (TraceModel::ValuesOnly(..), ModelSide::Unsupported { why }) => {
                assert!(why.contains("internal_search"), "{why}");
            }
            (TraceModel::Writer(_), ModelSide::Written(_) | ModelSide::Failed { .. }) => {}
            (m, s) => panic!("{m:?} gave {s:?}"),
        }
    }
}

#[test]
fn explicit_search_over_the_shipped_text_model() {
    let (mut model, package) =
        open_trace_model(&package("mav-tiny"), &SessionOptions::default()).expect("the shipped model opens");
    let buckets = Buckets::new(package.manifest.num_buckets as u32).expect("buckets");
    let root = ChessState::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
        .expect("valid FEN");
    let r =
        run_internal(&mut model, root.clone(), &InternalConfig { buckets, ..config(2, 1) }).expect("runs");
    assert_eq!(r.explicit.tree.count(), 3);
    check_tree(&r.explicit.tree, &root, 2, 1);
    check_trace(&r.explicit, buckets);
    if !package.manifest.internal_search {
        assert!(matches!(r.model, ModelSide::Unsupported { .. }), "{:?}", r.model);
        return;
    }
    // A package trained on traces writes one that reads back into a tree over this root.
    let ModelSide::Written(m) = &r.model else { panic!("the trace writer wrote nothing: {:?}", r.model) };
    assert_eq!(m.parse_error, None, "{}", m.written);
    assert!(m.tokens > 0);
    let tree = m.tree.as_ref().expect("a tree");
    assert!(tree.path.is_empty() && tree.action.is_none(), "rooted at the position");
    assert!(m.comparison.is_some());
}

#[test]
fn cli_prints_the_trace_the_tree_and_the_choice_as_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["analyse", "--internal", "2,1", "--json", "--scoring", "max", "--model"])
        .arg(package("mav-enc-tiny"))
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["breadth"], 2);
    assert_eq!(v["scoring"], "max");
    let tree = &v["explicit"]["tree"];
    let kids = tree["children"].as_array().expect("children");
    assert_eq!(kids.len(), 2);
    let choice = v["explicit"]["choice"].as_str().expect("a choice");
    assert!(kids.iter().any(|k| k["action"] == choice && k["on_chosen_line"] == true));
    assert!(v["explicit"]["trace"].as_str().expect("trace").starts_with("Minimax breadth=2 depth=1\n"));
    assert!(v["model"]["status"].is_string());

    let text = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["analyse", "--internal", "2,1", "--model"])
        .arg(package("mav-enc-tiny"))
        .output()
        .expect("the binary runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Playing "), "{text}");
    assert!(text.contains("explicit search plays "), "{text}");
    assert!(text.contains("-- the model's own trace --"));

    let bad = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["analyse", "--internal", "0,1"])
        .output()
        .expect("the binary runs");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("breadth"));
}

/// An explicit search over a deterministic mock model: the reference for the model-trace tests.
fn mock_search() -> ExplicitSearch {
    let mut e = HashEvaluator::new(11);
    let root = ChessState::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
        .expect("valid FEN");
    let s = explicit_search(&mut e, root.clone(), &config(2, 1)).expect("runs");
    check_tree(&s.tree, &root, 2, 1);
    check_trace(&s, Buckets::mav());
    s
}

fn written(text: String) -> Completion {
    Completion {
        tokens: text.len(),
        text,
        truncated: false,
        repeats_avoided: 0,
        decoding: Default::default(),
    }
}

/// The response part of the explicit trace (what a perfect model would write).
fn response(s: &ExplicitSearch) -> String {
    s.trace[s.prompt.len()..].to_owned()
}

#[test]
fn a_perfect_model_trace_matches_the_explicit_search() {
    let s = mock_search();
    let r = judge_trace::<ChessState>(&s.prompt, &written(response(&s)), &s.tree, Buckets::mav());
    assert_eq!(r.parse_error, None);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    let tree = r.tree.expect("a tree");
    assert_eq!(tree.count(), s.tree.count());
    assert!(tree.issues.is_empty());
    let c = r.comparison.expect("compared");
    assert!(c.same_choice, "{c:?}");
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(tree.chosen_line(), s.tree.chosen_line());
}

#[test]
fn an_inconsistent_backed_up_value_is_marked_at_its_node() {
    let s = mock_search();
    let text = response(&s);
    let line = text.lines().find(|l| l.starts_with("Decision for node: <root> ")).expect("root decision");
    // Raise the first child's written value by one bucket (or lower it at the top).
    let start = line.find("<ctrl").expect("a value") + 5;
    let end = start + line[start..].find('>').expect("closing");
    let v: u32 = line[start..end].parse().expect("bucket");
    let w = if v < 63 { v + 1 } else { v - 1 };
    let edited_line = format!("{}{w}{}", &line[..start], &line[end..]);
    let r = judge_trace::<ChessState>(
        &s.prompt,
        &written(text.replace(line, &edited_line)),
        &s.tree,
        Buckets::mav(),
    );
    let tree = r.tree.expect("a tree");
    assert!(tree.issues.iter().any(|i| i.contains("inconsistent backed-up value")), "{:?}", tree.issues);
    assert!(tree.children.iter().all(|c| c.issues.is_empty()));
}

#[test]
fn illegal_moves_and_wrong_states_are_marked_and_the_trees_differ() {
    let s = mock_search();
    let text = response(&s);
    let first = s.tree.children[0].action.clone().expect("a child");
    let second = s.tree.children[1].action.clone().expect("a child");
    // The model expands an illegal move in place of the first child.
    let illegal = text.replace(&format!("<root {first}>"), "<root e1e8>");
    let r = judge_trace::<ChessState>(&s.prompt, &written(illegal), &s.tree, Buckets::mav());
    assert!(r.issues.iter().any(|i| i.text == "illegal move e1e8"), "{:?}", r.issues);
    let tree = r.tree.expect("a tree");
    let bad = tree.child("e1e8").expect("the illegal child is in the model's tree");
    assert!(bad.note.as_deref().is_some_and(|n| n.contains("not legal")));
    let c = r.comparison.expect("compared");
    assert!(c.differences.iter().any(|d| d.contains("e1e8")), "{:?}", c.differences);

    // The model writes the wrong state after the second child's move.
    let root_fen = s.tree_root_fen();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let at = lines.iter().position(|l| l == &format!("Evaluation for node: <root {second}>")).expect("node");
    let fen_line = (at..lines.len()).find(|&i| lines[i].starts_with("[%FEN ")).expect("state line");
    lines[fen_line] = format!("[%FEN {root_fen}]");
    let r = judge_trace::<ChessState>(&s.prompt, &written(lines.join("\n")), &s.tree, Buckets::mav());
    let tree = r.tree.expect("a tree");
    let node = tree.child(&second).expect("the child");
    assert!(node.issues.iter().any(|i| i.contains("wrong state")), "{:?}", node.issues);
}

trait RootFen {
    fn tree_root_fen(&self) -> String;
}

impl RootFen for ExplicitSearch {
    fn tree_root_fen(&self) -> String {
        let line = self.prompt.lines().find(|l| l.starts_with("[%FEN ")).expect("the root's FEN line");
        line["[%FEN ".len()..line.len() - 1].to_owned()
    }
}

struct Scripted(Result<String, EvalError>);

impl Completer for Scripted {
    fn complete(&mut self, prompt: &str) -> Result<Completion, EvalError> {
        assert!(prompt.starts_with("Minimax breadth=2 depth=1\nEvaluation for node: <root>\n"));
        self.0.clone().map(written)
    }
}

#[test]
fn the_model_side_is_written_unsupported_or_failed() {
    let s = mock_search();
    let mut perfect = Scripted(Ok(response(&s)));
    match model_side::<ChessState>(Some(&mut perfect), "unused", &s, Buckets::mav()) {
        ModelSide::Written(r) => assert!(r.issues.is_empty() && r.comparison.is_some_and(|c| c.same_choice)),
        other => panic!("{other:?}"),
    }
    // Garbage after the prompt: read, with issues, never a crash.
    let mut garbage = Scripted(Ok("Expand from node <root>:\n<root zz9>\nPlaying zz9!".to_owned()));
    match model_side::<ChessState>(Some(&mut garbage), "unused", &s, Buckets::mav()) {
        ModelSide::Written(r) => {
            assert!(!r.issues.is_empty());
            assert!(r.comparison.is_some_and(|c| !c.same_choice));
        }
        other => panic!("{other:?}"),
    }
    let mut failing = Scripted(Err(EvalError::ContextTooLong { needed: 900, context: 768 }));
    assert!(matches!(
        model_side::<ChessState>(Some(&mut failing), "unused", &s, Buckets::mav()),
        ModelSide::Failed { why } if why.contains("768")
    ));
    assert_eq!(
        model_side::<ChessState>(None, "not trained for it", &s, Buckets::mav()),
        ModelSide::Unsupported { why: "not trained for it".to_owned() }
    );
}

#[test]
fn the_shipped_text_model_continues_a_trace_prompt_and_is_judged() {
    let dir = package("mav-tiny");
    let pkg = mavboard::model::ModelPackage::open(&dir).expect("package");
    let mut lm =
        mavboard::inference::lm::MavLmEvaluator::open(&pkg, &SessionOptions::default()).expect("session");
    let buckets = Buckets::new(pkg.manifest.num_buckets as u32).expect("buckets");
    let s = explicit_search(&mut lm, ChessState::startpos(), &config(2, 1)).expect("runs");
    let c = lm.complete(&s.prompt).expect("the model writes");
    let prompt_tokens = mavboard::mav::tokenizer::Tokenizer::new().encode(&s.prompt).len();
    assert!(c.tokens + prompt_tokens <= pkg.manifest.context_length);
    assert!(c.truncated || !c.text.contains("<eos>"));
    // Whatever the model writes (mistakes included) is read and judged, never a crash.
    let r = judge_trace::<ChessState>(&s.prompt, &c, &s.tree, buckets);
    assert_eq!(r.written, c.text);
    assert!(r.parse_error.is_some() || r.tree.is_some());
}

/// Rules-constrained decoding on the shipped trace writer: over several positions every trace is a legal tree
/// of the asked shape (no illegal move, no wrong state, nothing missing), while the values and choices are the
/// model's; free decoding of the same positions is reported beside it, named as such.
#[test]
fn the_shipped_text_model_writes_legal_traces_by_the_rules() {
    use mavboard::inference::completer::TraceDecoding;
    use mavboard::mav::trace::{TraceIssueKind, parse_trace};
    let (mut model, package) =
        open_trace_model(&package("mav-tiny"), &SessionOptions::default()).expect("the shipped model opens");
    if !package.manifest.internal_search {
        return;
    }
    let buckets = Buckets::new(package.manifest.num_buckets as u32).expect("buckets");
    let mut truncated = 0;
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r3k2r/pp3ppp/2n1bn2/q1bpp3/4P3/2NP1N2/PPPBBPPP/R2QK2R b KQkq - 3 9",
    ];
    for fen in fens {
        let root = ChessState::from_fen(fen).expect("valid FEN");
        for decoding in TraceDecoding::ALL {
            let cfg = InternalConfig { buckets, decoding, ..config(2, 1) };
            let r = run_internal(&mut model, root.clone(), &cfg).expect("runs");
            let ModelSide::Written(m) = &r.model else { panic!("{decoding}: {:?}", r.model) };
            assert_eq!(m.decoding, decoding);
            let text = format!("{}{}", r.explicit.prompt, m.written);
            let broken = match parse_trace::<ChessState>(&text, buckets) {
                Err(e) => vec![e.to_string()],
                Ok(t) => t
                    .issues
                    .iter()
                    .filter(|i| {
                        matches!(
                            i.kind,
                            TraceIssueKind::IllegalMove(_)
                                | TraceIssueKind::Evaluation(_)
                                | TraceIssueKind::Malformed(_)
                                | TraceIssueKind::Missing(_)
                                | TraceIssueKind::UnknownNode(_)
                        )
                    })
                    .map(|i| format!("line {}: {:?}", i.line, i.kind))
                    .collect::<Vec<_>>(),
            };
            match decoding {
                // Free decoding is the model's world model at work: it may slip (what rules decoding avoids).
                TraceDecoding::Free => {}
                TraceDecoding::Rules if m.truncated => {
                    // Out of context (1024 tokens hold about three nodes of a middlegame): the trace is cut
                    // where a node ended, so the only issue is what is missing after the cut.
                    assert!(broken.iter().all(|b| b.contains("Missing")), "{fen}: {broken:?}\n{text}");
                    assert!(m.written.ends_with('"'), "cut at a node's selection line: {text}");
                    truncated += 1;
                }
                TraceDecoding::Rules => {
                    assert!(broken.is_empty(), "{fen}: {broken:?}\n{text}");
                    let tree = m.tree.as_ref().expect("a tree");
                    // The asked shape: b = 2 legal children of the root, each a leaf (d = 1).
                    let legal: Vec<String> =
                        root.legal_actions().into_iter().map(|a| root.action_to_text(a)).collect();
                    assert_eq!(tree.children.len(), 2, "{text}");
                    for k in &tree.children {
                        assert!(legal.iter().any(|l| Some(l.as_str()) == k.action.as_deref()), "{text}");
                        assert!(k.children.is_empty(), "{text}");
                    }
                    let c = m.comparison.as_ref().expect("compared");
                    let choice = c.model_choice.as_deref().expect("the model plays a move");
                    assert!(tree.children.iter().any(|k| k.action.as_deref() == Some(choice)), "{text}");
                }
            }
        }
    }
    assert!(truncated < fens.len(), "some traces fit the context");
}
