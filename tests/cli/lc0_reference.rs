//! lc0 networks imported exactly: mavboard's input planes, policy indices and imported ONNX graph against
//! lc0 itself. The references in tests/fixtures/lc0/ were written by lc0 v0.32.1 (its own encoder and its
//! BLAS backend, through our tool `tests/fixtures/lc0/refgen/`; see the README there) for maia-1900 and for
//! tiny random networks of each input format (`make_random_net.py`), on the positions of
//! `positions.jsonl` with their whole game histories. Checked here: every plane mask, the transform, every
//! legal move's policy index, every legal move's policy logit (1e-4), the win/draw/loss or value (1e-4), the
//! moves-left output, and the same best move.
//!
//! Attention-body networks (Leela's BT family) too: `random-attention-body.pb.gz` is a tiny random
//! transformer (`make_random_net.py`: dense position encoding, gates, smolgen, 2 encoder layers, attention
//! policy, multi-head value and policy fields, moves-left head; see `RANDOM_NETS.md`);
//! `random-attention-legacy.pb.gz` (`make_random_attention_legacy.py`, seed 1009) the older single-head layout:
//! format 6 with `input_embedding = PE_DENSE` written, the heads in the top-level `Weights` fields, one policy
//! encoder layer (2 heads), no smolgen, no gates, ReLU everywhere, a scalar value head and a moves-left head.
//! `random-attention-pe-map.pb.gz` (`make_random_attention_pe_map.py`) uses lc0's fixed position table instead
//! of the dense encoding. What is not read is refused by name.

use crate::common;

use std::path::{Path, PathBuf};

use common::temp_dir;
use mavboard::game::chess::ChessState;
use mavboard::game::fen::ModeChoice;
use mavboard::lc0::history::History;
use mavboard::lc0::moves::move_index;
use mavboard::lc0::planes::{Fill, encode};
use mavboard::lc0::weights::Net;
use mavboard::model::lc0_import::{Lc0ImportOptions, import_lc0};
use serde_json::Value;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lc0")
}

/// One reference line with the history it was made from.
struct Case {
    id: String,
    history: History,
    reference: Value,
}

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn history_of(p: &Value) -> History {
    let mode =
        if p["variant"].as_str() == Some("chess960") { ModeChoice::Chess960 } else { ModeChoice::Standard };
    let start = ChessState::from_fen_mode(p["start_fen"].as_str().expect("start_fen"), mode).expect("a FEN");
    let mut pos: Chess = start.position().clone();
    let mut positions = vec![pos.clone()];
    for m in p["moves"].as_array().expect("moves") {
        let text = m.as_str().expect("a move");
        let mv =
            text.parse::<UciMove>().expect("UCI").to_move(&pos).unwrap_or_else(|e| panic!("{text}: {e}"));
        pos.play_unchecked(mv);
        positions.push(pos.clone());
    }
    History::new(positions)
}

fn cases(net: &str) -> Vec<Case> {
    let positions: std::collections::HashMap<String, Value> = jsonl(&fixtures().join("positions.jsonl"))
        .into_iter()
        .map(|p| (p["id"].as_str().expect("id").to_owned(), p))
        .collect();
    jsonl(&fixtures().join(format!("{net}.ref.jsonl")))
        .into_iter()
        .map(|r| {
            let id = r["id"].as_str().expect("id").to_owned();
            let p = positions.get(&id).unwrap_or_else(|| panic!("{id} is not in positions.jsonl"));
            Case { id, history: history_of(p), reference: r }
        })
        .collect()
}

fn parse_mask(v: &Value) -> u64 {
    let s = v.as_str().expect("a hex mask");
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
}

/// What `import lc0` is asked in these tests: `net` into `out`, told `input_format`, nothing else.
fn options(net: PathBuf, out: PathBuf, input_format: Option<mavboard::lc0::InputFormat>) -> Lc0ImportOptions {
    Lc0ImportOptions {
        net,
        out,
        name: None,
        origin: None,
        license: None,
        created: String::new(),
        input_format,
        heads: None,
    }
}

/// Compares one network's references: the encoder, the policy indices and the imported graph.
fn check_net(net: &str) {
    check_import(net, &fixtures().join(format!("{net}.pb.gz")), None, 1.0);
}

/// As [`check_net`], importing `file` — the weights or an ONNX export of them — told `input_format` (for an
/// ONNX file) and with the tolerances times `slack` (for a half-precision export).
fn check_import(net: &str, file: &Path, input_format: Option<mavboard::lc0::InputFormat>, slack: f32) {
    let path = fixtures().join(format!("{net}.pb.gz"));
    let bytes = std::fs::read(&path).expect("the net");
    let parsed = Net::from_gz(&bytes).unwrap_or_else(|e| panic!("{net}: {e}"));
    let format = parsed.format.input;
    let cases = cases(net);
    assert!(!cases.is_empty(), "{net}: no references");
    let mut rows = Vec::new();
    for c in &cases {
        let planes = encode(&c.history, format, Fill::FenOnly).expect("a position");
        let mut expected = [0u64; 112];
        let mut values = [1f64; 112];
        for p in c.reference["planes"].as_array().expect("planes") {
            let i = p[0].as_u64().expect("plane index") as usize;
            expected[i] = parse_mask(&p[1]);
            values[i] = p[2].as_f64().expect("plane value");
        }
        for (i, (ours, theirs)) in planes.masks.iter().zip(expected).enumerate() {
            assert_eq!(*ours, theirs, "{net} {}: plane {i}", c.id);
        }
        // Every plane's value is 1 but the fifty-move plane's: the count, or the count / 100.
        let rule50 = if format.hectoplies() { planes.rule50 as f32 / 100.0 } else { planes.rule50 as f32 };
        assert_eq!(values[109] as f32, rule50, "{net} {}: the fifty-move plane", c.id);
        assert!(
            values.iter().enumerate().all(|(i, v)| i == 109 || *v == 1.0),
            "{net} {}: plane values",
            c.id
        );
        assert_eq!(
            u64::from(planes.transform),
            c.reference["transform"].as_u64().expect("transform"),
            "{net} {}",
            c.id
        );
        let pos = &c.history.last().expect("a position").pos;
        for m in c.reference["policy"].as_array().expect("policy") {
            let text = m[0].as_str().expect("uci");
            let mv =
                text.parse::<UciMove>().expect("UCI").to_move(pos).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                move_index(pos, &mv, planes.transform),
                Some(m[1].as_u64().expect("index") as usize),
                "{net} {}: the policy index of {text}",
                c.id
            );
        }
        rows.push(planes.row());
    }
    let leaf = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let out = temp_dir("lc0-ref", &leaf);
    let _ = std::fs::remove_dir_all(&out);
    let imported = import_lc0(&options(file.to_path_buf(), out.clone(), input_format))
        .unwrap_or_else(|e| panic!("{net}: {e}"));
    let package = mavboard::model::ModelPackage::open(&out).expect("the package opens");
    let mut eval =
        mavboard::inference::lc0::Lc0Evaluator::open(&package, &Default::default()).expect("a session");
    let outputs = eval.run(&rows).expect("the network runs");
    let (mut worst_logit, mut worst_value) = (0f32, 0f32);
    let mut other_best = 0;
    for (c, o) in cases.iter().zip(&outputs) {
        let mut best = (f32::NEG_INFINITY, f32::NEG_INFINITY, String::new(), String::new());
        for m in c.reference["policy"].as_array().expect("policy") {
            let i = m[1].as_u64().expect("index") as usize;
            let theirs = m[2].as_f64().expect("logit") as f32;
            let ours = o.policy[i];
            worst_logit = worst_logit.max((ours - theirs).abs());
            // Within 1e-4, or 2e-5 of the logit's size above 5: lc0's BLAS backend computes 3×3 convolutions by
            // Winograd's transform in single precision, which on maia-1900 puts 3 of about 20,000 logits (all
            // above 6) 1.0–1.4e-4 from a float64 forward pass; mavboard's graph is within 2e-6 of it there.
            let tolerance = slack * 1e-4f32.max(2e-5 * theirs.abs());
            assert!(
                (ours - theirs).abs() <= tolerance,
                "{net} {}: {} logit {ours} vs lc0 {theirs}",
                c.id,
                m[0]
            );
            if theirs > best.0 {
                best.0 = theirs;
                best.2 = m[0].as_str().unwrap_or_default().to_owned();
            }
            if ours > best.1 {
                best.1 = ours;
                best.3 = m[0].as_str().unwrap_or_default().to_owned();
            }
        }
        if slack == 1.0 {
            assert_eq!(best.2, best.3, "{net} {}: the best move", c.id);
        } else if best.2 != best.3 {
            other_best += 1;
        }
        if let Some(wdl) = c.reference["wdl"].as_array() {
            for (k, v) in wdl.iter().enumerate() {
                let theirs = v.as_f64().expect("wdl") as f32;
                worst_value = worst_value.max((o.wdl[k] - theirs).abs());
                assert!(
                    (o.wdl[k] - theirs).abs() <= slack * 1e-4,
                    "{net} {}: wdl[{k}] {} vs {theirs}",
                    c.id,
                    o.wdl[k]
                );
            }
        } else {
            let q = c.reference["q"].as_f64().expect("q") as f32;
            let ours = o.wdl[0] - o.wdl[2];
            worst_value = worst_value.max((ours - q).abs());
            assert!((ours - q).abs() <= slack * 1e-4, "{net} {}: q {ours} vs {q}", c.id);
        }
        match (c.reference["m"].as_f64(), o.moves_left) {
            (Some(theirs), Some(ours)) => {
                let theirs = theirs as f32;
                assert!(
                    (ours - theirs).abs() <= slack * 1e-4 * theirs.abs().max(1.0),
                    "{net} {}: m {ours} vs {theirs}",
                    c.id
                );
            }
            (None, None) => {}
            (theirs, ours) => panic!("{net} {}: moves left {ours:?} vs lc0 {theirs:?}", c.id),
        }
    }
    eprintln!(
        "{leaf}: {} positions, {}; worst |Δ logit| {worst_logit:.2e}, worst |Δ value| {worst_value:.2e}, \
         another best move in {other_best}",
        cases.len(),
        imported.description
    );
    // At half precision a near tie may change places, not more.
    assert!(other_best * 20 <= cases.len(), "{leaf}: another best move in {other_best} of {}", cases.len());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn maia_1900_matches_lc0() {
    check_net("maia-1900");
}

#[test]
fn random_residual_nets_of_every_input_format_match_lc0() {
    for net in [
        "random-res-classical",
        "random-res-castling",
        "random-res-canonical",
        "random-res-hectoplies",
        "random-res-hectoplies-armageddon",
        "random-res-canonical-v2",
        "random-res-canonical-v2-armageddon",
    ] {
        check_net(net);
    }
}

#[test]
fn truncated_corrupt_and_foreign_files_are_named_errors() {
    let bytes = std::fs::read(fixtures().join("maia-1900.pb.gz")).expect("the net");
    // Cut anywhere: the gzip stream ends early.
    for cut in [0, 10, 1000, bytes.len() / 2, bytes.len() - 1] {
        let e = Net::from_gz(&bytes[..cut]).expect_err("a truncated file");
        assert!(e.to_string().contains("gzip"), "cut at {cut}: {e}");
    }
    // The protobuf inside cut or flipped: an error naming where, or (where the cut still frames) a missing
    // or misshapen layer; never a panic.
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut raw).expect("gunzip");
    for cut in (1..raw.len()).step_by(raw.len() / 97) {
        let e = Net::from_proto(&raw[..cut]).expect_err("a cut protobuf");
        assert!(!e.to_string().is_empty());
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut bad = raw.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed % bad.len() as u64) as usize;
            bad[i] ^= (seed >> 32) as u8 | 1;
        }
        if let Ok(net) = Net::from_proto(&bad) {
            // A flip inside a layer's numbers still reads; the graph still builds.
            assert!(!mavboard::model::lc0_import::graph(&net).expect("a graph").is_empty());
        }
    }
    let e = Net::from_gz(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00")
        .expect_err("an empty message");
    assert!(e.to_string().contains("magic"), "{e}");
}

/// The evaluator's whole path — the app's states and their history, trimmed to what lc0 reads, each
/// successor's planes and the policy over the legal moves — gives lc0's policy: the softmax of lc0's logits
/// over the legal moves, for every reference position of maia-1900 and of the v2 net (whose history planes
/// skip back to the last repetition), with the games' histories as the board would pass them.
#[test]
fn the_evaluator_with_the_games_history_gives_lc0s_policy() {
    use mavboard::game::GameState;
    use mavboard::inference::evaluator::{EvalRequest, Evaluator};
    for net in ["maia-1900", "random-res-canonical-v2"] {
        let out = temp_dir("lc0-eval", net);
        let mut eval = imported_evaluator(net, &out);
        let positions: std::collections::HashMap<String, Value> = jsonl(&fixtures().join("positions.jsonl"))
            .into_iter()
            .map(|p| (p["id"].as_str().expect("id").to_owned(), p))
            .collect();
        let mut checked = 0;
        let mut worst = 0f64;
        for r in jsonl(&fixtures().join(format!("{net}.ref.jsonl"))) {
            let id = r["id"].as_str().expect("id");
            // A start FEN's en-passant square that no pawn can take is lc0's only where the record starts; a
            // request's history does not say whether it begins there.
            if id.contains(":ep") {
                continue;
            }
            let mut states = game_states(&positions[id]);
            let last = states.pop().expect("a position");
            if last.outcome().is_some() {
                continue;
            }
            let request = EvalRequest { history: states, ..EvalRequest::values(last) };
            let answer = eval.evaluate(&[request]).remove(0).unwrap_or_else(|e| panic!("{net} {id}: {e}"));
            let policy = answer.best_action.expect("a policy");
            let logits: Vec<(String, f64)> = r["policy"]
                .as_array()
                .expect("policy")
                .iter()
                .map(|m| (m[0].as_str().expect("uci").to_owned(), m[2].as_f64().expect("logit")))
                .collect();
            let max = logits.iter().map(|(_, l)| *l).fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = logits.iter().map(|(_, l)| (l - max).exp()).sum();
            for (mv, prob) in answer.moves.iter().zip(&policy) {
                // lc0 names castling king-takes-rook in both variants; the board names standard castling e1g1.
                let theirs = logits
                    .iter()
                    .find(|(u, _)| *u == mv.text)
                    .or_else(|| logits.iter().find(|(u, _)| castling_alias(&mv.text, u)))
                    .unwrap_or_else(|| panic!("{net} {id}: {} is not in lc0's list", mv.text));
                let want = (theirs.1 - max).exp() / sum;
                worst = worst.max((prob - want).abs());
                assert!((prob - want).abs() < 2e-5, "{net} {id}: {} policy {prob} vs lc0 {want}", mv.text);
            }
            checked += 1;
        }
        eprintln!("{net}: the evaluator's policy on {checked} positions, worst |Δ| {worst:.1e}");
        assert!(checked > 100, "{net}: {checked} positions checked");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Whether `board` (standard castling, e1g1) and `lc0` (king takes rook, e1h1) name the same castling.
fn castling_alias(board: &str, lc0: &str) -> bool {
    matches!((board, lc0), ("e1g1", "e1h1") | ("e1c1", "e1a1") | ("e8g8", "e8h8") | ("e8c8", "e8a8"))
}

#[test]
fn random_attention_body_net_matches_lc0() {
    check_net("random-attention-body");
}

#[test]
fn random_legacy_single_head_attention_net_matches_lc0() {
    check_net("random-attention-legacy");
}

/// An attention body with lc0's fixed position table (`INPUT_EMBEDDING_PE_MAP`, the older BT nets), gates,
/// smolgen and the canonical v2 input (`make_random_attention_pe_map.py`, seed 1010).
#[test]
fn random_attention_net_with_lc0s_position_table_matches_lc0() {
    check_net("random-attention-pe-map");
}

#[test]
fn attention_net_reads_its_structure_and_refuses_other_heads() {
    use mavboard::lc0::format::{Activation, BodyFormat, InputEmbedding};
    use mavboard::lc0::weights::{Body, PolicyHead};
    let bytes = std::fs::read(fixtures().join("random-attention-body.pb.gz")).expect("the net");
    let net = Net::from_gz(&bytes).expect("reads");
    assert_eq!(net.format.body, BodyFormat::Attention);
    assert_eq!(net.format.embedding, InputEmbedding::PeDense);
    assert_eq!(
        (net.format.smolgen_activation, net.format.ffn_activation),
        (Activation::Swish, Activation::Relu2)
    );
    let Body::Attention(body) = &net.body else { panic!("an attention body") };
    assert_eq!((body.encoders.len(), body.heads, net.filters()), (2, 2, 16));
    assert!(body.encoders.iter().all(|l| l.smolgen.is_some()) && body.gates.is_some());
    assert!(matches!(net.policy, PolicyHead::Attention(_)));
    assert!(net.describe().contains("2 encoder layers × 16 embedding, 2 heads, smolgen, attention policy"));
    let e = Net::from_gz_heads(&bytes, "optimistic", "winner").expect_err("no optimistic head");
    assert!(e.to_string().contains("policy head \"optimistic\" (it has: vanilla)"), "{e}");
    let e = Net::from_gz_heads(&bytes, "vanilla", "q").expect_err("no q head");
    assert!(e.to_string().contains("value head \"q\" (it has: winner)"), "{e}");
}

#[test]
fn a_relabelled_or_missing_position_encoding_is_refused_by_name() {
    use std::io::Read;
    let bytes = std::fs::read(fixtures().join("random-attention-body.pb.gz")).expect("the net");
    let mut proto = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice()).read_to_end(&mut proto).expect("gzip");
    // NetworkFormat.input_embedding = 2 (key 0x50), the first such pair: the format precedes the weights.
    let at = proto.windows(2).position(|w| w == [0x50, 0x02]).expect("input_embedding = PE_DENSE");
    // Said to use lc0's table: its embedding takes 112 + 4 inputs a square, not 112 + 64.
    proto[at + 1] = 0x01;
    let e = Net::from_proto(&proto).expect_err("PE_MAP with a dense net's embedding");
    assert!(e.to_string().contains("ip_emb_w"), "{e}");
    proto[at + 1] = 0x00;
    let e = Net::from_proto(&proto).expect_err("no position encoding");
    assert!(e.to_string().contains("format.network_format.input_embedding = 0 (NONE)"), "{e}");
}

/// The fixture `net` imported into `out` (emptied first), on an evaluator.
fn imported_evaluator(net: &str, out: &Path) -> mavboard::inference::lc0::Lc0Evaluator {
    let _ = std::fs::remove_dir_all(out);
    import_lc0(&Lc0ImportOptions {
        name: Some(net.to_owned()),
        ..options(fixtures().join(format!("{net}.pb.gz")), out.to_path_buf(), None)
    })
    .expect("imports");
    let package = mavboard::model::ModelPackage::open(out).expect("opens");
    mavboard::inference::lc0::Lc0Evaluator::open(&package, &Default::default()).expect("session")
}

/// The states of a fixture position's game, the position itself last.
fn game_states(p: &Value) -> Vec<ChessState> {
    use mavboard::game::GameState;
    let mode =
        if p["variant"].as_str() == Some("chess960") { ModeChoice::Chess960 } else { ModeChoice::Standard };
    let mut state = ChessState::from_fen_mode(p["start_fen"].as_str().expect("fen"), mode).expect("FEN");
    let mut states = vec![state.clone()];
    for m in p["moves"].as_array().expect("moves") {
        let mv = state.parse_action(m.as_str().expect("move")).expect("legal");
        state = state.play(mv).expect("plays");
        states.push(state.clone());
    }
    states
}

/// maia-1900 searched as lc0 searches: with one simulation the search plays the policy's top move (as Maia is
/// meant to be played, lc0's `go nodes 1`), on positions with their games' histories; with more it plays
/// legal moves, the same ones again under the same seed; a position-only request (one network row) gives
/// the full request's policy and win/draw/loss. UCI's `go nodes 1` plays the same top move.
#[test]
fn maia_is_searched_as_lc0_searches() {
    use mavboard::game::GameState;
    use mavboard::inference::evaluator::{EvalRequest, Evaluator};
    use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};

    let tmp = temp_dir("lc0-search", "maia");
    let out = tmp.join("maia");
    let mut eval = imported_evaluator("maia-1900", &out);
    let top = |eval: &mut mavboard::inference::lc0::Lc0Evaluator, states: &[ChessState], brief: bool| {
        let (last, history) = states.split_last().expect("a position");
        let request = EvalRequest {
            history: history.to_vec(),
            position_only: brief,
            ..EvalRequest::values(last.clone())
        };
        let answer = eval.evaluate(&[request]).remove(0).expect("maia answers");
        let p = answer.best_action.clone().expect("a policy");
        let i = p.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i).expect("moves");
        (last.action_to_text(answer.moves[i].action), answer)
    };
    let mut checked = 0;
    for (n, p) in jsonl(&fixtures().join("positions.jsonl")).iter().enumerate().filter(|(n, _)| n % 12 == 0) {
        let states = game_states(p);
        let (last, history) = states.split_last().expect("a position");
        if last.outcome().is_some() {
            continue;
        }
        let (want, full) = top(&mut eval, &states, false);
        let (brief_top, brief) = top(&mut eval, &states, true);
        assert_eq!(brief_top, want, "{n}: the position-only policy");
        assert!(!brief.has_values() && full.has_values());
        let (fw, bw) = (full.position.expect("wdl").wdl, brief.position.expect("wdl").wdl);
        assert!((0..3).all(|k| (fw[k] - bw[k]).abs() < 1e-6), "{n}: {fw:?} vs {bw:?}");
        let search = |sims: u64, b: usize, eval: &mut mavboard::inference::lc0::Lc0Evaluator| {
            let mut mcts =
                Mcts::new(last.clone(), 0, MctsParams { seed: 3, ..MctsParams::default() }).expect("params");
            mcts.set_root_history(history.to_vec());
            mcts.run(eval, RunLimits { simulations: sims, batch_size: b }).expect("search");
            mcts.check_consistency().expect("consistent");
            assert!(mcts.searches_as_lc0(), "a network with a position outcome gets lc0's search");
            mcts
        };
        let one = search(1, 1, &mut eval);
        assert_eq!(one.best_action().map(|a| last.action_to_text(a)), Some(want.clone()), "{n}: at 1 node");
        if checked % 4 == 0 {
            let (a, b) = (search(120, 8, &mut eval), search(120, 8, &mut eval));
            let visits =
                |m: &Mcts<ChessState>| m.snapshot().moves.iter().map(|s| s.visits).collect::<Vec<_>>();
            assert_eq!(visits(&a), visits(&b), "{n}: reproducible");
            let best = a.best_action().expect("a move");
            assert!(last.legal_actions().contains(&best));
        }
        checked += 1;
    }
    assert!(checked >= 40, "{checked} positions searched");

    // UCI: `go nodes 1` after 1. e4 c5 plays the policy's top move for that position with its history.
    let start = ChessState::startpos();
    let e4 = start.play(start.parse_action("e2e4").expect("legal")).expect("plays");
    let c5 = e4.play(e4.parse_action("c7c5").expect("legal")).expect("plays");
    let (want, _) = top(&mut eval, &[start, e4, c5], false);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["uci", "--model"])
        .arg(&out)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"uci\nisready\nposition startpos moves e2e4 c7c5\ngo nodes 1\n").expect("writes");
    }
    let output = child.wait_with_output().expect("uci ends at the end of its input");
    let text = String::from_utf8_lossy(&output.stdout);
    let best = text.lines().find_map(|l| l.strip_prefix("bestmove ")).map(|l| l.split_whitespace().next());
    assert_eq!(best.flatten(), Some(want.as_str()), "{text}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Layers written as FLOAT32, FLOAT16 and BFLOAT16 (newer lczero-common's `Layer.encoding`; lc0 v0.32.1 reads
/// LINEAR16 only, so there is no lc0 reference of their own): `make_random_encodings.py` writes
/// random-res-classical with every layer holding the values its LINEAR16 layers dequantise to. In float32 that
/// is the same net, so lc0's references hold as tightly as for the LINEAR16 file; float16 and bfloat16 round
/// the weights (11 and 8 significant bits), so their logits move a little.
#[test]
fn float_encoded_layers_read_as_the_same_net() {
    for (encoding, slack) in [("float32", 1.0), ("float16", 100.0), ("bfloat16", 1500.0)] {
        let file = fixtures().join(format!("encoded-{encoding}-random-res-classical.pb.gz"));
        check_import("random-res-classical", &file, None, slack);
    }
}

/// An ONNX export of a fixture net (`lc0 leela2onnx`, stored gzipped), unpacked into a temporary file.
fn onnx_fixture(gz: &str) -> PathBuf {
    let bytes = std::fs::read(fixtures().join(gz)).expect("the export");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut raw).expect("gunzip");
    let path = temp_dir("lc0-onnx", gz).join(gz.trim_end_matches(".gz"));
    std::fs::write(&path, raw).expect("write the export");
    path
}

/// Networks exported by lc0 itself to ONNX, imported: the same references within the same tolerances as the
/// weights (float32; opset 17 and opset 11; a scalar value head; an ONNX model inside a weights file, whose
/// input format the file states), and a float16 export within the half precision's reach.
#[test]
fn lc0s_own_onnx_exports_import_and_match_lc0() {
    use mavboard::lc0::InputFormat;
    // leela2onnx (v0.32.1, opset 17, float32) of the castling-plane net with a scalar value head.
    let castling = onnx_fixture("leela2onnx-random-res-castling.onnx.gz");
    check_import("random-res-castling", &castling, Some(InputFormat::CastlingPlane), 1.0);
    // leela2onnx --onnx-opset=11, wrapped by onnx2leela into a weights file that names its input format.
    let embedded = fixtures().join("onnx2leela-opset11-random-res-hectoplies-armageddon.pb.gz");
    check_import("random-res-hectoplies-armageddon", &embedded, None, 1.0);
    // leela2onnx --onnx-data-type=f16: float16 weights and activations.
    let half = onnx_fixture("leela2onnx-f16-random-res-classical.onnx.gz");
    check_import("random-res-classical", &half, Some(InputFormat::Classical), 200.0);
}

/// A gzipped ONNX export and an unpacked (not gzipped) weights file import as they are.
#[test]
fn gzipped_exports_and_unpacked_weights_import() {
    use mavboard::lc0::InputFormat;
    let dir = temp_dir("lc0-forms", "files");
    let raw = dir.join("random-res-classical.pb");
    let bytes = std::fs::read(fixtures().join("random-res-classical.pb.gz")).expect("the net");
    let mut unpacked = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut unpacked).expect("gunzip");
    std::fs::write(&raw, unpacked).expect("write");
    for (file, format) in [
        (raw, None),
        (fixtures().join("leela2onnx-random-res-castling.onnx.gz"), Some(InputFormat::CastlingPlane)),
    ] {
        let out = dir.join("pkg");
        let _ = std::fs::remove_dir_all(&out);
        import_lc0(&options(file.clone(), out, format)).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

#[test]
fn onnx_files_without_what_the_import_needs_are_named_errors() {
    use mavboard::lc0::InputFormat;
    let import = |net: &Path, input_format: Option<InputFormat>| {
        let out = temp_dir("lc0-onnx-err", "out");
        let _ = std::fs::remove_dir_all(&out);
        import_lc0(&options(net.to_path_buf(), out, input_format))
            .map(|_| ())
            .expect_err("refused")
            .to_string()
    };
    let castling = onnx_fixture("leela2onnx-random-res-castling.onnx.gz");
    let e = import(&castling, None);
    assert!(e.contains("--input-format") && e.contains("describenet"), "{e}");
    let embedded = fixtures().join("onnx2leela-opset11-random-res-hectoplies-armageddon.pb.gz");
    let e = import(&embedded, Some(InputFormat::Classical));
    assert!(e.contains("canonical-hectoplies-armageddon") && e.contains("not classical"), "{e}");
    // Cut short: a protobuf error, never a panic.
    let bytes = std::fs::read(&castling).expect("the export");
    let dir = temp_dir("lc0-onnx-err", "cut");
    for cut in [1, 100, bytes.len() / 3, bytes.len() - 5] {
        let path = dir.join(format!("cut-{cut}.onnx"));
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let e = import(&path, Some(InputFormat::CastlingPlane));
        assert!(e.contains("ONNX") || e.contains("protobuf"), "cut at {cut}: {e}");
    }
    // Neither lc0 weights nor ONNX: the error says what is read.
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a network at all\n").expect("write");
    let e = import(&text, Some(InputFormat::Classical));
    assert!(e.contains(".pb.gz") && e.contains("ONNX"), "{e}");
    // Another network's ONNX (the shipped MAV encoder): its inputs are named, and lc0's are said.
    let mav = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/mav-enc-tiny/model.onnx");
    if mav.exists() {
        let e = import(&mav, Some(InputFormat::Classical));
        assert!(e.contains("input_ids") && e.contains("[batch, 112, 8, 8]"), "{e}");
    }
}

/// With lc0 at hand (`MAVBOARD_LC0=/path/to/lc0`, built as `tests/fixtures/lc0/README.md` says): maia-1900
/// exported by its `leela2onnx` imports and matches lc0's references as the weights do (the export is 2.5 MB,
/// so it is made here rather than committed). Skipped, saying so, without lc0.
#[test]
fn maia_exported_by_leela2onnx_matches_lc0_when_lc0_is_here() {
    let Some(lc0) = std::env::var_os("MAVBOARD_LC0") else {
        eprintln!("skipped: set MAVBOARD_LC0 to an lc0 binary to convert maia-1900 with its leela2onnx");
        return;
    };
    let dir = temp_dir("lc0-onnx", "maia");
    let onnx = dir.join("maia-1900.onnx");
    let status = std::process::Command::new(&lc0)
        .arg("leela2onnx")
        .arg(format!("--input={}", fixtures().join("maia-1900.pb.gz").display()))
        .arg(format!("--output={}", onnx.display()))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("lc0 runs");
    assert!(status.success(), "lc0 leela2onnx failed");
    check_import("maia-1900", &onnx, Some(mavboard::lc0::InputFormat::Classical), 1.0);
}

/// `mavboard import lc0` on an ONNX export: refused without `--input-format` (saying how to find it), refused
/// with a name that is not a format (listing them), imported and opened with it.
#[test]
fn the_import_command_takes_an_onnx_export_with_its_input_format() {
    let onnx = onnx_fixture("leela2onnx-random-res-castling.onnx.gz");
    let out = temp_dir("lc0-onnx-cli", "pkg");
    let _ = std::fs::remove_dir_all(&out);
    let run = |extra: &[&str]| {
        common::mavboard_command()
            .args(["import", "lc0"])
            .arg(&onnx)
            .arg("-o")
            .arg(&out)
            .args(extra)
            .output()
            .expect("the binary runs")
    };
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };
    let missing = run(&[]);
    assert!(!missing.status.success() && text(&missing).contains("--input-format"), "{}", text(&missing));
    let wrong = run(&["--input-format", "INPUT_CLASSICAL_112_PLANE"]);
    assert!(!wrong.status.success() && text(&wrong).contains("castling-plane"), "{}", text(&wrong));
    let done = run(&["--input-format", "castling-plane"]);
    assert!(done.status.success(), "{}", text(&done));
    assert!(text(&done).contains("wrote the package"), "{}", text(&done));
    let manifest = std::fs::read_to_string(out.join("mav.json")).expect("mav.json");
    assert!(manifest.contains("\"input_format\": \"castling-plane\""), "{manifest}");
    let _ = std::fs::remove_dir_all(&out);
    // An export has the heads it was made with; a weights file's are chosen by name.
    let heads = run(&["--input-format", "castling-plane", "--value-head", "q"]);
    assert!(!heads.status.success() && text(&heads).contains("leela2onnx --policy-head"), "{}", text(&heads));
    let multi = common::mavboard_command()
        .args(["import", "lc0"])
        .arg(fixtures().join("random-attention-body.pb.gz"))
        .arg("-o")
        .arg(&out)
        .args(["--policy-head", "optimistic"])
        .output()
        .expect("the binary runs");
    assert!(!multi.status.success(), "{}", text(&multi));
    assert!(text(&multi).contains("policy head \"optimistic\" (it has: vanilla)"), "{}", text(&multi));
}
