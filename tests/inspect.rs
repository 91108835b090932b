//! The shipped mav-enc-tiny's inspection graph: the logit lens at the last layer is the model's output, every
//! attention row sums to 1, scaling every head by 1 changes nothing, removing a layer's heads changes the
//! values, and the attention maps onto the board's squares.

use std::path::Path;

use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::inference::encoder::EncoderEvaluator;
use mavboard::inference::evaluator::{EvalRequest, Evaluator};
use mavboard::inference::inspect::{HeadScale, InspectError, Inspection, Inspector, TokenRole};
use mavboard::inference::onnx::SessionOptions;
use mavboard::mav::state::MavState;
use mavboard::model::ModelPackage;

fn package_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/mav-enc-tiny"))
}

fn package() -> ModelPackage {
    ModelPackage::open(package_dir()).expect("the shipped package opens")
}

fn inspector() -> Inspector {
    Inspector::open(&package(), &SessionOptions::default())
        .expect("the shipped package has an inspection graph")
}

fn positions() -> Vec<ChessState> {
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/pbq2ppp/1pn1p3/2bpP3/3N4/2N1B3/PPPQ1PPP/R3KB1R w KQkq d6 0 10",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    ]
    .iter()
    .map(|f| ChessState::from_fen(f).expect("valid fen"))
    .collect()
}

fn max_prob_diff(
    a: &mavboard::mav::buckets::ValueDistribution,
    b: &mavboard::mav::buckets::ValueDistribution,
) -> f64 {
    a.probs().iter().zip(b.probs()).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max)
}

/// The lens at the last layer, and the graph's values, against the normal evaluator on model.onnx.
fn check_against_evaluator<S: MavState>(ins: &Inspection, state: &S, eval: &mut EncoderEvaluator) {
    let res =
        Evaluator::<S>::evaluate(eval, &[EvalRequest::values(state.clone())]).remove(0).expect("evaluates");
    assert_eq!(res.moves.len(), ins.moves.len());
    for m in &res.moves {
        let i = ins.move_index(&m.text).unwrap_or_else(|| panic!("{} is inspected", m.text));
        let lens = ins.moves[i].layers.last().expect("layers");
        let d = max_prob_diff(lens, &m.dist);
        assert!(d <= 1e-5, "{}: the last layer's lens differs from model.onnx by {d}", m.text);
        let d = max_prob_diff(&ins.moves[i].value, &m.dist);
        assert!(d <= 1e-5, "{}: the inspection graph's values differ from model.onnx by {d}", m.text);
        assert!((lens.mean_value() - m.dist.mean_value()).abs() <= 1e-5);
    }
}

#[test]
fn last_layer_lens_equals_the_models_output() {
    let package = package();
    let mut ins = inspector();
    let mut eval = EncoderEvaluator::open(&package, &SessionOptions::default()).expect("model.onnx opens");
    for state in positions() {
        let got = ins.inspect(&state, &ins.ones()).expect("inspects");
        assert_eq!(got.moves.len(), state.legal_actions().len());
        assert!(got.moves.iter().all(|m| m.layers.len() == 6));
        check_against_evaluator(&got, &state, &mut eval);
    }
    let c4 = ConnectFourState::from_moves("4453").expect("moves");
    let got = ins.inspect(&c4, &ins.ones()).expect("inspects Connect Four");
    check_against_evaluator(&got, &c4, &mut eval);
}

#[test]
fn the_lens_changes_with_depth() {
    let mut ins = inspector();
    let got = ins.inspect(&positions()[1], &ins.ones()).expect("inspects");
    // the first layer's reading is not already the output: the lens shows something the output does not
    let d = got.moves.iter().map(|m| max_prob_diff(&m.layers[0], &m.value)).fold(0.0, f64::max);
    assert!(d > 1e-3, "layer 0's lens equals the output ({d}): the lens reads the wrong stream");
}

#[test]
fn attention_rows_sum_to_one_and_shapes_match() {
    let mut ins = inspector();
    let state = &positions()[1];
    let got = ins.inspect(state, &ins.ones()).expect("inspects");
    let n = got.tokens.len();
    assert_eq!(got.attention.dim(), (6, 6, n, n));
    assert_eq!(got.residual.dim(), (7, n, 192));
    for l in 0..6 {
        for h in 0..6 {
            for q in 0..n {
                let row = got.attention_row(l, h, q).expect("in range");
                let sum: f32 = row.iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "layer {l} head {h} query {q}: row sums to {sum}");
                assert!(row.iter().all(|p| (0.0..=1.0 + 1e-6).contains(p)));
            }
        }
    }
    assert!(matches!(got.attention_row(6, 0, 0), Err(InspectError::HeadOutOfRange { .. })));
    assert!(matches!(got.attention_row(0, 0, n), Err(InspectError::TokenOutOfRange { .. })));
}

#[test]
fn scaling_every_head_by_one_changes_nothing_and_removing_a_layer_changes_the_values() {
    let mut ins = inspector();
    let state = &positions()[1];
    let ones = ins.ones();
    let a = ins.inspect(state, &ones).expect("inspects");
    let b = ins.inspect(state, &ones).expect("inspects again");
    for (x, y) in a.moves.iter().zip(&b.moves) {
        assert_eq!(x.value.probs(), y.value.probs(), "the same run twice gives the same values");
    }
    let mut all_ones = HeadScale::ones(6, 6);
    for l in 0..6 {
        for h in 0..6 {
            all_ones.set(l, h, 1.0).expect("in range");
        }
    }
    assert!(all_ones.changed().is_empty());
    let c = ins.inspect(state, &all_ones).expect("inspects");
    for (x, y) in a.moves.iter().zip(&c.moves) {
        assert!(max_prob_diff(&x.value, &y.value) <= 1e-6);
    }
    for layer in [0, 5] {
        let off =
            ins.inspect(state, &HeadScale::without_layer(6, 6, layer).expect("in range")).expect("inspects");
        let d = a
            .moves
            .iter()
            .zip(&off.moves)
            .map(|(x, y)| max_prob_diff(&x.value, &y.value))
            .fold(0.0, f64::max);
        assert!(d > 1e-3, "removing every head of layer {layer} changed the values by only {d}");
        // layers before the removed one are untouched
        if layer == 5 {
            for (x, y) in a.moves.iter().zip(&off.moves) {
                assert!(max_prob_diff(&x.layers[4], &y.layers[4]) <= 1e-6);
            }
        }
    }
    let wrong = HeadScale::ones(5, 6);
    assert!(matches!(ins.inspect(state, &wrong), Err(InspectError::HeadOutOfRange { .. })));
}

#[test]
fn board_attention_is_indexed_by_square() {
    let mut ins = inspector();
    let state = &positions()[1];
    let got = ins.inspect(state, &ins.ones()).expect("inspects");
    let e4 = got.cell_token("e5").expect("a square");
    assert_eq!(got.tokens[e4].text, "P", "e5 holds a white pawn");
    assert_eq!(got.tokens[got.cell_token("c6").expect("c6")].text, "n");
    let m = got.move_index("e5d6").expect("en passant is legal");
    assert!(matches!(got.tokens[got.moves[m].token].role, TokenRole::Move(i) if i == m));
    let board = got.board_attention(5, 0, got.moves[m].token).expect("in range");
    assert_eq!(board.len(), 64);
    let row = got.attention_row(5, 0, got.moves[m].token).expect("in range");
    for (cell, p) in &board {
        assert_eq!(*p, row[got.cell_token(&cell.name).expect("cell")]);
    }
}

#[test]
fn packages_without_an_inspection_graph_say_so() {
    // another format
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/mav-tiny"));
    let package = ModelPackage::open(dir).expect("mav-tiny opens");
    let err = Inspector::open(&package, &SessionOptions::default()).expect_err("mav-tiny is a mav-lm");
    assert!(matches!(err, InspectError::Format { .. }), "{err}");
    // the encoder package with its mav.json as before the inspection graph: it loads, and says what is missing
    let src = package_dir();
    let tmp = std::env::temp_dir().join(format!("mavboard-inspect-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    for f in ["model.onnx", "tokenizer.json"] {
        std::fs::copy(src.join(f), tmp.join(f)).expect("copies");
    }
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("mav.json")).expect("reads")).expect("json");
    assert!(meta.as_object_mut().expect("object").remove("inspection").is_some());
    std::fs::write(tmp.join("mav.json"), meta.to_string()).expect("writes");
    let old = ModelPackage::open(&tmp).expect("a package without `inspection` still opens");
    let err = Inspector::open(&old, &SessionOptions::default()).expect_err("no inspection graph");
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(matches!(err, InspectError::NotDeclared { .. }), "{err}");
    assert!(err.to_string().contains("mavtrain.inspect_export"), "{err}");
}

#[test]
fn a_changed_model_onnx_is_refused() {
    let src = package_dir();
    let tmp = std::env::temp_dir().join(format!("mavboard-inspect-changed-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    for f in ["model.onnx", "tokenizer.json", "mav.json", "inspect.onnx"] {
        std::fs::copy(src.join(f), tmp.join(f)).expect("copies");
    }
    // the copy opens as it is
    let same = ModelPackage::open(&tmp).expect("opens");
    Inspector::open(&same, &SessionOptions::default()).expect("an unchanged copy inspects");
    // one weight byte changed, the size kept: the graph would read other weights
    let mut bytes = std::fs::read(tmp.join("model.onnx")).expect("reads");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(tmp.join("model.onnx"), &bytes).expect("writes");
    let changed = ModelPackage::open(&tmp).expect("opens");
    let err = Inspector::open(&changed, &SessionOptions::default()).expect_err("refused");
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(err.to_string().contains("checksum"), "{err}");
}
