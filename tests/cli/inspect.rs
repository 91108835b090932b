//! The shipped mav-enc-tiny's inspection graph, and an action-value package's (imported from the tiny
//! searchless fixture checkpoint): the logit lens at the last layer is the model's output, every attention
//! row sums to 1, scaling every head by 1 changes nothing, removing a layer's heads changes the values, and
//! the attention maps onto the board's squares.
//!
//! The action-value package is imported once per run with the importer's Python packages
//! (`./packaging/dev.sh import-deps`): without them those tests skip with a message, unless
//! MAVBOARD_REQUIRE_IMPORT=1, where they fail.

use std::path::Path;

use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::inference::action_value::ActionValueEvaluator;
use mavboard::inference::encoder::EncoderEvaluator;
use mavboard::inference::evaluator::{EvalRequest, Evaluator, TopK};
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
        let d = max_prob_diff(lens, m.dist.as_ref().expect("valued"));
        assert!(d <= 1e-5, "{}: the last layer's lens differs from model.onnx by {d}", m.text);
        let d = max_prob_diff(&ins.moves[i].value, m.dist.as_ref().expect("valued"));
        assert!(d <= 1e-5, "{}: the inspection graph's values differ from model.onnx by {d}", m.text);
        assert!((lens.mean_value() - m.dist.as_ref().expect("valued").mean_value()).abs() <= 1e-5);
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

/// Every attention row of every layer and head is a distribution; a layer, head or query past the end is a
/// named error.
fn assert_attention_rows(got: &Inspection) {
    let (layers, heads, n) = (got.num_layers(), got.num_heads(), got.tokens.len());
    for l in 0..layers {
        for h in 0..heads {
            for q in 0..n {
                let row = got.attention_row(l, h, q).expect("in range");
                let sum: f32 = row.iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "layer {l} head {h} query {q}: row sums to {sum}");
                assert!(row.iter().all(|p| (0.0..=1.0 + 1e-6).contains(p)));
            }
        }
    }
    assert!(matches!(got.attention_row(layers, 0, 0), Err(InspectError::HeadOutOfRange { .. })));
    assert!(matches!(got.attention_row(0, 0, n), Err(InspectError::TokenOutOfRange { .. })));
}

#[test]
fn attention_rows_sum_to_one_and_shapes_match() {
    let mut ins = inspector();
    let state = &positions()[1];
    let got = ins.inspect(state, &ins.ones()).expect("inspects");
    let n = got.tokens.len();
    assert_eq!(got.attention.dim(), (6, 6, n, n));
    assert_eq!(got.residual.dim(), (7, n, 192));
    assert_attention_rows(&got);
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

// ---- action-value: a package imported from the tiny searchless fixture (2 layers, width 32, 4 heads) ----

/// Every piece type of both colours, castling rights and an en-passant square.
const ALL_PIECES: &str = "r3k2r/pbq2ppp/1pn1p3/2bpP3/3N4/2N1B3/PPPQ1PPP/R3KB1R w KQkq d6 0 10";

/// The tiny fixture checkpoint imported (once per run) as an action-value package, or None (skip) when the
/// importer's Python packages are missing outside dev.sh/CI.
fn searchless_package() -> Option<ModelPackage> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let ready = mavboard::model::import::find_python().into_iter().any(|py| {
            std::process::Command::new(&py)
                .args(["-c", "import orbax.checkpoint, onnx, numpy"])
                .output()
                .is_ok_and(|o| o.status.success())
        });
        if !ready {
            if std::env::var("MAVBOARD_REQUIRE_IMPORT").is_ok_and(|v| v == "1") {
                panic!("the importer's Python packages are missing: run ./packaging/dev.sh import-deps");
            }
            return None;
        }
        let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("inspect-searchless-tiny-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let options = mavboard::model::import::ImportOptions {
            checkpoint: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/searchless/tiny"),
            out: out.clone(),
            step: None,
            ema: false,
            heads: Some(4),
            kind: None,
            name: None,
            python: None,
            created: "2026-01-01".into(),
        };
        mavboard::model::import::import_searchless(&options).expect("the tiny checkpoint imports");
        Some(out)
    });
    match dir {
        Some(d) => Some(ModelPackage::open(d).expect("the imported package opens")),
        None => {
            println!("skipped: the importer's Python packages are missing (./packaging/dev.sh import-deps)");
            None
        }
    }
}

fn searchless_inspector() -> Option<(ModelPackage, Inspector)> {
    let package = searchless_package()?;
    let ins = Inspector::open(&package, &SessionOptions::default()).expect("the import wrote inspect.onnx");
    Some((package, ins))
}

#[test]
fn action_value_last_layer_lens_equals_the_models_output() {
    let Some((package, mut ins)) = searchless_inspector() else { return };
    assert_eq!((ins.num_layers(), ins.num_heads()), (2, 4));
    assert!(ins.tokenizer().is_none());
    let mut eval =
        ActionValueEvaluator::open(&package, &SessionOptions::default()).expect("model.onnx opens");
    for state in positions() {
        let got = ins.inspect(&state, &ins.ones()).expect("inspects");
        assert_eq!(got.moves.len(), state.legal_actions().len());
        let mut req = EvalRequest::values(state.clone());
        req.top_k = TopK::All;
        let res = eval.evaluate(&[req]).remove(0).expect("evaluates");
        assert_eq!(res.moves.len(), got.moves.len());
        for m in &res.moves {
            let i = got.move_index(&m.text).unwrap_or_else(|| panic!("{} is inspected", m.text));
            let lens = &got.moves[i];
            assert_eq!(lens.layers.len(), 2);
            assert_eq!(lens.token, 78, "read at the action token");
            let d = max_prob_diff(lens.layers.last().expect("layers"), m.dist.as_ref().expect("valued"));
            assert!(d <= 1e-5, "{}: the last layer's lens differs from model.onnx by {d}", m.text);
            assert!(max_prob_diff(&lens.value, m.dist.as_ref().expect("valued")) <= 1e-5);
        }
        // the maps kept are those of the best move by mean value
        let best = got.attention_move.expect("an action-value inspection names its sequence");
        let top = got.moves.iter().map(|m| m.value.mean_value()).fold(f64::MIN, f64::max);
        assert_eq!(got.moves[best].value.mean_value(), top);
        assert_eq!(got.tokens[78].role, TokenRole::Move(best));
        assert_eq!(got.tokens[78].text, got.moves[best].text);
    }
    // the lens shows something the output does not
    let got = ins.inspect(&positions()[1], &ins.ones()).expect("inspects");
    let d = got.moves.iter().map(|m| max_prob_diff(&m.layers[0], &m.value)).fold(0.0, f64::max);
    assert!(d > 1e-3, "layer 0's lens equals the output ({d})");
}

#[test]
fn action_value_attention_rows_sum_to_one_and_shapes_match() {
    let Some((_, mut ins)) = searchless_inspector() else { return };
    let got = ins.inspect(&positions()[1], &ins.ones()).expect("inspects");
    let n = got.tokens.len();
    assert_eq!(n, 79, "the BOS token, 77 FEN tokens and the action");
    assert_eq!(got.attention.dim(), (2, 4, n, n));
    assert_eq!(got.residual.dim(), (3, n, 32));
    assert_attention_rows(&got);
}

#[test]
fn action_value_head_scales_of_one_change_nothing_and_removing_a_layer_changes_the_values() {
    let Some((_, mut ins)) = searchless_inspector() else { return };
    let state = &positions()[1];
    let a = ins.inspect(state, &ins.ones()).expect("inspects");
    let mut all_ones = HeadScale::ones(2, 4);
    for l in 0..2 {
        for h in 0..4 {
            all_ones.set(l, h, 1.0).expect("in range");
        }
    }
    let b = ins.inspect(state, &all_ones).expect("inspects");
    for (x, y) in a.moves.iter().zip(&b.moves) {
        assert!(max_prob_diff(&x.value, &y.value) <= 1e-6);
    }
    assert!((&a.attention - &b.attention).iter().all(|d| d.abs() <= 1e-6));
    for layer in [0, 1] {
        let off =
            ins.inspect(state, &HeadScale::without_layer(2, 4, layer).expect("in range")).expect("inspects");
        let d = a
            .moves
            .iter()
            .zip(&off.moves)
            .map(|(x, y)| max_prob_diff(&x.value, &y.value))
            .fold(0.0, f64::max);
        assert!(d > 1e-3, "removing every head of layer {layer} changed the values by only {d}");
        if layer == 1 {
            for (x, y) in a.moves.iter().zip(&off.moves) {
                assert!(max_prob_diff(&x.layers[0], &y.layers[0]) <= 1e-6, "layer 0 is before the change");
            }
        }
    }
    assert!(matches!(ins.inspect(state, &HeadScale::ones(2, 6)), Err(InspectError::HeadOutOfRange { .. })));
}

#[test]
fn action_value_tokens_map_to_their_squares() {
    let Some((_, mut ins)) = searchless_inspector() else { return };
    let state = ChessState::from_fen(ALL_PIECES).expect("fen");
    let got = ins.inspect(&state, &ins.ones()).expect("inspects");
    assert_eq!(got.tokens[0].role, TokenRole::Start);
    assert_eq!(got.tokens[1].role, TokenRole::SideToMove);
    assert_eq!(got.tokens[got.cell_token("e1").expect("e1")].text, "K", "the white king");
    assert_eq!(got.tokens[got.cell_token("e8").expect("e8")].text, "k");
    assert_eq!(got.tokens[got.cell_token("e5").expect("e5")].text, "P");
    assert_eq!(got.tokens[got.cell_token("c6").expect("c6")].text, "n");
    assert_eq!(got.tokens[got.cell_token("d2").expect("d2")].text, "Q");
    let mut kinds = std::collections::HashSet::new();
    let mut cells = 0;
    for t in &got.tokens {
        if let TokenRole::Cell(c) = &t.role {
            let sq = shakmaty::Square::from_coords(shakmaty::File::new(c.col), shakmaty::Rank::new(c.row));
            let piece = shakmaty::Position::board(state.position()).piece_at(sq).map_or('.', |p| p.char());
            assert_eq!(
                t.text,
                piece.to_string(),
                "the token of {} is {}, the square holds {piece}",
                c.name,
                t.text
            );
            kinds.insert(piece);
            cells += 1;
        }
    }
    assert_eq!((cells, kinds.len()), (64, 13), "every piece type of both colours and the empty square");
    let q = got.moves[got.attention_move.expect("a sequence")].token;
    let board = got.board_attention(1, 0, q).expect("in range");
    assert_eq!(board.len(), 64);
    let row = got.attention_row(1, 0, q).expect("in range");
    for (cell, p) in &board {
        assert_eq!(*p, row[got.cell_token(&cell.name).expect("cell")]);
    }
}

#[test]
fn action_value_maps_of_a_chosen_move() {
    let Some((_, mut ins)) = searchless_inspector() else { return };
    let state = ChessState::from_fen(ALL_PIECES).expect("fen");
    let best = ins.inspect(&state, &ins.ones()).expect("inspects");
    let shown = best.attention_move.expect("a sequence");
    let other = if best.moves[shown].text == "e5d6" { "a2a3" } else { "e5d6" };
    let got = ins.inspect_move(&state, &ins.ones(), other).expect("inspects");
    let i = got.move_index(other).expect("legal");
    assert_eq!(got.attention_move, Some(i));
    assert_eq!(got.tokens[78].role, TokenRole::Move(i));
    assert_eq!(got.tokens[78].text, other);
    for (x, y) in best.moves.iter().zip(&got.moves) {
        assert_eq!(x.value.probs(), y.value.probs(), "the values do not depend on the maps kept");
    }
    assert!(best.attention != got.attention, "another move's sequence has its own attention");
    assert!(matches!(ins.inspect_move(&state, &ins.ones(), "e2e5"), Err(InspectError::NoSuchMove(_))));
    // the encoder has one sequence: nothing to choose
    let mut enc = inspector();
    let e = enc.inspect_move(&state, &enc.ones(), "e5d6").expect("inspects");
    assert_eq!(e.attention_move, None);
}

#[test]
fn action_value_inspect_cli() {
    let Some(package) = searchless_package() else { return };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["inspect", "--model", package.dir.to_str().expect("utf-8"), "--fen", ALL_PIECES, "--json"])
        .args(["--query", "e5d6"])
        .output()
        .expect("mavboard runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["attention_move"], "e5d6", "the map of the move asked about");
    assert_eq!(v["tokens"].as_array().expect("tokens").len(), 79);
    assert_eq!(v["attention"]["to_cells"].as_array().expect("cells").len(), 64);
    assert_eq!(v["moves"].as_array().expect("moves").len(), state_moves(ALL_PIECES));
}

fn state_moves(fen: &str) -> usize {
    ChessState::from_fen(fen).expect("fen").legal_actions().len()
}

#[test]
fn action_value_outputs_of_the_wrong_shape_are_named_errors() {
    let Some(package) = searchless_package() else { return };
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("inspect-av-shape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    for f in ["model.onnx", "inspect.onnx"] {
        std::fs::copy(package.dir.join(f), tmp.join(f)).expect("copies");
    }
    // mav.json says 64 buckets; the graph writes 128
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(package.dir.join("mav.json")).expect("reads"))
            .expect("json");
    meta["num_buckets"] = 64.into();
    std::fs::write(tmp.join("mav.json"), meta.to_string()).expect("writes");
    let changed = ModelPackage::open(&tmp).expect("opens");
    let mut ins = Inspector::open(&changed, &SessionOptions::default()).expect("opens");
    let err = ins.inspect(&positions()[0], &ins.ones()).expect_err("the lens has 128 buckets");
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(matches!(&err, InspectError::Output { name, .. } if name == "lens_logits"), "{err}");
    assert!(err.to_string().contains("expected [20, 2, 64]"), "{err}");
}

/// Frames the Inside panel's state until its answer (or error) for `here` arrives.
fn inside_answer(inside: &mut mavboard::app::inside::InsideState, here: &ChessState, dir: &Path) {
    let options = SessionOptions::default();
    let repaint: mavboard::engine::Repaint = std::sync::Arc::new(|| {});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        inside.frame(here, Some((dir, &options)), &repaint);
        if !inside.running && (inside.view.is_some() || inside.error.is_some()) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no answer: {inside:?}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn the_inside_panel_looks_inside_an_imported_searchless_package() {
    use mavboard::app::inside::{InsideCommand, InsideState, head_effects};
    let Some(package) = searchless_package() else { return };
    let here = ChessState::startpos();
    let mut inside = InsideState::default();
    inside.apply(InsideCommand::Enable(true));
    inside_answer(&mut inside, &here, &package.dir);
    let view = inside.view.clone().unwrap_or_else(|| panic!("inspected: {:?}", inside.error));
    assert_eq!(view.clean.moves.len(), 20);
    assert!(view.clean.attention_move.is_some(), "an action-value model's maps are of one move's input");

    // A move as the query: the maps are of that move's sequence.
    inside.apply(InsideCommand::Query(Some("g1f3".into())));
    inside_answer(&mut inside, &here, &package.dir);
    let view = inside.view.clone().expect("inspected again");
    let g1f3 = view.clean.move_index("g1f3").expect("legal");
    assert_eq!(view.clean.attention_move, Some(g1f3));

    // Every head of the first layer off: the values move.
    for head in 0..view.clean.num_heads() {
        inside.apply(InsideCommand::ScaleHead { layer: 0, head, value: 0.0 });
    }
    inside_answer(&mut inside, &here, &package.dir);
    let view = inside.view.clone().expect("scaled");
    let effects = head_effects(&view, mavboard::mav::scoring::Scoring::Mean);
    assert_eq!(effects.len(), 20);
    assert!(effects.iter().any(|e| e.delta().abs() > 1e-4), "{effects:?}");
}
