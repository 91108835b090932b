//! Internal-search data end to end: a labels run with search trees (a small deterministic labeller
//! standing in for Stockfish, and Stockfish itself when installed), then `render` with traces. Every trace
//! must read back with `parse_trace` without a single issue, and play the move of the minimax over the
//! label values, computed here from the label records.

use crate::common;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::temp_path;
use mavboard::datagen::render::RenderOptions;
use mavboard::datagen::render_run::{RenderSummary, render_dirs};
use mavboard::datagen::run::{LabelSettings, Limit};
use mavboard::datagen::shard::read_shard;
use mavboard::datagen::source::parse_epd_line;
use mavboard::datagen::tree::{is_search_root, search_order};
use mavboard::datagen::{
    DatagenError, EpdSource, Label, LabelRecord, Labeler, MoveLabel, SourceMix, Split, StockfishLabeler,
    run_labels,
};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::tokenizer::Tokenizer;
use mavboard::mav::trace::parse_trace;
use mavboard::uci::ScoreValue;
use mavboard::uci::locate::locate_stockfish;
use shakmaty::Position;

/// Scores each move by a hash of the position after it: whole pawns from −4 to +4 (so distinct values
/// never share a bucket), mate in 1 for a checkmate, 0 for a stalemate. Best first, like Stockfish.
struct HashLabeler;

impl Labeler for HashLabeler {
    fn name(&self) -> String {
        "hash-pawns".into()
    }

    fn label(&mut self, state: &ChessState) -> Result<Label, DatagenError> {
        let mut moves: Vec<MoveLabel> = state
            .legal_actions()
            .into_iter()
            .map(|m| {
                let after = state.play(m).expect("legal move");
                let score = if after.legal_actions().is_empty() && after.position().is_check() {
                    ScoreValue::Mate(1)
                } else if after.legal_actions().is_empty() {
                    ScoreValue::Cp(0)
                } else {
                    let h = mavboard::datagen::sample::mix64(after.hash64());
                    ScoreValue::Cp(100 * ((h % 9) as i32 - 4))
                };
                MoveLabel { uci: state.action_to_text(m), score: score.into() }
            })
            .collect();
        moves.sort_by(|a, b| b.score.win_probability().total_cmp(&a.score.win_probability()));
        let best = moves.first().map(|m| m.uci.clone()).expect("a legal move");
        Ok(Label { moves, best, depth: 1, nodes: 0 })
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datagen")
}

fn mix() -> SourceMix {
    let dir = fixtures();
    let mut mix = SourceMix::new();
    for (file, chess960, weight) in
        [("2moves_v1_head40.epd", false, 0.8), ("FRC_openings_head12.epd", true, 0.2)]
    {
        let path = dir.join(file);
        let source = EpdSource::open(&path, &EpdSource::tag_for(&path), chess960).expect("fixture opens");
        mix.add(Arc::new(source), weight).expect("valid weight");
    }
    mix
}

fn settings(positions: usize, share: f64, breadth: u32, depth: u32) -> LabelSettings {
    LabelSettings {
        positions,
        limit: Limit::Depth(1),
        continuations: 2,
        temperature: 0.3,
        seed: 99,
        val_fraction: 0.25,
        chains_per_shard: 4,
        hash_mb: 1,
        search_share: share,
        search_breadth: breadth,
        search_depth: depth,
        game: None,
    }
}

fn records(dir: &Path) -> Vec<LabelRecord> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("label dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "zst"))
        .collect();
    files.sort();
    files.iter().flat_map(|f| read_shard(f).expect("shard")).collect()
}

/// The text examples of one split as JSON values.
fn lm_lines(out: &Path, split: &str) -> Vec<serde_json::Value> {
    let file = std::fs::File::open(out.join(format!("lm_{split}.jsonl.zst"))).expect("lm file");
    let mut text = String::new();
    zstd::Decoder::new(file).expect("zstd").read_to_string(&mut text).expect("utf-8");
    text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

fn render(labels: &Path, out: &Path, search_share: f64) -> RenderSummary {
    let opts = RenderOptions { seed: 5, search_share, ..RenderOptions::default() };
    render_dirs(&[labels.to_path_buf()], out, &opts).expect("render")
}

/// The minimax over the labels: (value for the player to move, chosen move). With `buckets`, values are
/// the buckets of the win probabilities (a flip is K − 1 − b), as a trace writes them; without, the win
/// probabilities themselves. Equal values: the first child in expansion order.
fn minimax(
    labels: &HashMap<u64, LabelRecord>,
    state: &ChessState,
    breadth: u32,
    depth: u32,
    buckets: Option<Buckets>,
) -> (f64, Option<String>) {
    let value = |p: f64| match buckets {
        Some(b) => f64::from(b.bucket_of(p).expect("a probability")),
        None => p,
    };
    let flip = |v: f64| match buckets {
        Some(b) => f64::from(b.k() - 1) - v,
        None => 1.0 - v,
    };
    if let Some(o) = state.outcome() {
        return (value(o.value_for(state.to_move())), None);
    }
    let rec = labels.get(&state.hash64()).expect("every node of a written trace is labelled");
    let order = search_order(&rec.moves);
    if depth == 0 {
        let best = &rec.moves[order[0]];
        return (value(best.score.win_probability()), Some(best.uci.clone()));
    }
    let mut best: Option<(f64, String)> = None;
    for &i in order.iter().take(breadth as usize) {
        let uci = &rec.moves[i].uci;
        let child = state.play(state.parse_action(uci).expect("labelled move")).expect("legal");
        let v = flip(minimax(labels, &child, breadth, depth - 1, buckets).0);
        if best.as_ref().is_none_or(|(bv, _)| v > *bv) {
            best = Some((v, uci.clone()));
        }
    }
    best.map_or((0.0, None), |(v, m)| (v, Some(m)))
}

/// Checks every search example of `out`: it parses without issues, its breadth is 2 to `max_breadth` and
/// its depth 1 or 2, it fits in `max_tokens` and it plays the minimax move over `labels` in buckets, and
/// also over the exact win probabilities when `exact` (labels whose distinct values never share a bucket).
/// Returns the number checked per split.
fn check_traces(
    out: &Path,
    labels: &[LabelRecord],
    exact: bool,
    (max_breadth, max_tokens): (u32, usize),
) -> [usize; 2] {
    let mut by_hash: HashMap<u64, LabelRecord> = HashMap::new();
    for r in labels {
        let s = parse_epd_line(&r.fen, r.chess960).expect("label FEN");
        by_hash.entry(s.hash64()).or_insert_with(|| r.clone());
    }
    let tok = Tokenizer::new();
    let mut counts = [0; 2];
    for (i, split) in ["train", "val"].iter().enumerate() {
        for ex in lm_lines(out, split).iter().filter(|e| e["kind"] == "search") {
            let (prompt, target) =
                (ex["prompt"].as_str().expect("prompt"), ex["target"].as_str().expect("target"));
            let text = format!("{prompt}{target}");
            let parsed = parse_trace::<ChessState>(&text, Buckets::mav()).expect("the trace reads back");
            assert!(parsed.issues.is_empty(), "{:?}\n{text}", parsed.issues);
            assert!(
                (2..=max_breadth).contains(&parsed.breadth) && [1, 2].contains(&parsed.depth),
                "{}",
                parsed.breadth
            );
            let tokens = tok.encode(prompt).len() + tok.encode(target).len() + 1;
            assert!(tokens <= max_tokens, "{tokens} tokens");
            let root = parsed.nodes[0].state.clone().expect("root state");
            let root_label = &by_hash[&root.hash64()];
            assert_eq!(root_label.split == Split::Val, i == 1, "a trace is in its root's split");
            let (_, choice) = minimax(&by_hash, &root, parsed.breadth, parsed.depth, Some(Buckets::mav()));
            assert_eq!(parsed.playing, choice, "{text}");
            if exact {
                assert_eq!(parsed.playing, minimax(&by_hash, &root, parsed.breadth, parsed.depth, None).1);
            }
            // Every node of the tree is labelled in the root's split.
            for n in &parsed.nodes {
                if let Some(l) = n.state.as_ref().and_then(|s| by_hash.get(&s.hash64())) {
                    assert_eq!(l.split, root_label.split);
                }
            }
            counts[i] += 1;
        }
    }
    counts
}

#[test]
fn labels_with_search_trees_render_traces_that_follow_the_minimax() {
    let dir = temp_path("dgsearch", "labels");
    let s = settings(160, 0.3, 3, 2);
    let run = |dir: &Path, threads, stop| {
        run_labels(dir, &s, &mix(), threads, |_| Ok(HashLabeler), stop, &mut |_| {}).expect("labels run")
    };
    let m = run(&dir, 1, None).manifest;
    assert_eq!(m.records, 160);
    let labels = records(&dir);
    let nodes: Vec<&LabelRecord> = labels.iter().filter(|r| !r.search_path.is_empty()).collect();
    assert!(nodes.len() > 40, "{} tree nodes of 160", nodes.len());
    for r in &nodes {
        assert!(
            r.search_path.len() <= 2
                && r.moves.len() == parse_epd_line(&r.fen, r.chess960).expect("fen").legal_actions().len()
        );
    }
    // Tree roots are the chain positions the seeded hash picks.
    let roots = labels
        .iter()
        .filter(|r| r.search_path.is_empty())
        .filter(|r| {
            is_search_root(parse_epd_line(&r.fen, r.chess960).expect("fen").hash64(), s.seed, s.search_share)
        })
        .count();
    assert!(roots > 3, "{roots} roots");

    // Deterministic whatever the threads, and after a resume.
    let dir2 = temp_path("dgsearch", "labels-threads");
    run(&dir2, 2, Some(2));
    run(&dir2, 2, None);
    assert_eq!(labels, records(&dir2));

    // Traces: every one parses, follows the minimax, lands in its root's split.
    let out = temp_path("dgsearch", "render-all");
    let all = render(&dir, &out, 1.0);
    let counts = check_traces(&out, &labels, true, (3, 1024));
    assert_eq!((counts[0] + counts[1]) as u64, all.search[0] + all.search[1]);
    assert!(counts[0] > 10, "{counts:?} traces");
    assert!(all.search_tokens_max <= 1024 && all.search_roots > 0);
    eprintln!(
        "{} labels: {} traces ({} train, {} val) from {} roots; {:.0} tokens on average, {} at most; {} too long",
        all.labels,
        counts[0] + counts[1],
        counts[0],
        counts[1],
        all.search_roots,
        all.search_tokens as f64 / (counts[0] + counts[1]) as f64,
        all.search_tokens_max,
        all.search_too_long
    );

    // A share caps the traces per split, and the other examples stay exactly as without traces.
    let capped = temp_path("dgsearch", "render-share");
    let c = render(&dir, &capped, 0.2);
    for i in 0..2 {
        assert!(c.search[i] as f64 <= 0.2 * c.lm[i] as f64 + 1e-9, "{c:?}");
    }
    assert!(c.search[0] > 0 && c.search[0] < all.search[0], "{c:?}");
    let none = temp_path("dgsearch", "render-none");
    let n = render(&dir, &none, 0.0);
    assert_eq!(n.search, [0, 0]);
    for split in ["train", "val"] {
        let mav =
            |d: &Path| lm_lines(d, split).into_iter().filter(|e| e["kind"] == "mav").collect::<Vec<_>>();
        assert_eq!(mav(&capped), mav(&none), "{split}");
        assert_eq!(mav(&out), mav(&none), "{split}");
    }
    for d in [dir, dir2, out, capped, none] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn breadth_four_trees_render_traces_of_breadth_two_to_four_that_follow_the_minimax() {
    let dir = temp_path("dgsearch", "labels-b4");
    let s = settings(150, 0.3, 4, 2);
    run_labels(&dir, &s, &mix(), 1, |_| Ok(HashLabeler), None, &mut |_| {}).expect("labels run");
    let labels = records(&dir);
    let wide = |max_breadth, max_tokens| RenderOptions {
        seed: 5,
        search_share: 1.0,
        search_max_tokens: max_tokens,
        search_max_breadth: max_breadth,
        ..RenderOptions::default()
    };
    let out = temp_path("dgsearch", "render-b4");
    let summary = render_dirs(std::slice::from_ref(&dir), &out, &wide(4, 16_384)).expect("render");
    let counts = check_traces(&out, &labels, true, (4, 16_384));
    assert_eq!((counts[0] + counts[1]) as u64, summary.search[0] + summary.search[1]);
    let shapes: Vec<&str> = summary.search_shapes.keys().map(String::as_str).collect();
    for shape in ["b2d1", "b3d1", "b4d1", "b2d2", "b3d2", "b4d2"] {
        assert!(summary.search_shapes[shape].written > 0, "no {shape} trace: {shapes:?}");
    }
    // The default breadth leaves breadth 4 out, and every other example is the same.
    let three = temp_path("dgsearch", "render-b4-as-3");
    let summary3 = render_dirs(std::slice::from_ref(&dir), &three, &wide(3, 16_384)).expect("render");
    assert!(summary3.search_shapes.keys().all(|k| !k.starts_with("b4")), "{:?}", summary3.search_shapes);
    check_traces(&three, &labels, true, (3, 16_384));
    assert_eq!(summary3.lm[0] - summary3.search[0], summary.lm[0] - summary.search[0]);
    // A breadth outside 2 to 5 is refused by name.
    let err = render_dirs(std::slice::from_ref(&dir), &three, &wide(1, 16_384)).expect_err("breadth 1");
    assert!(err.to_string().contains("--search-max-breadth must be between 2 and 5, not 1"), "{err}");
    for d in [dir, out, three] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn stockfish_search_trees_render_consistent_traces() {
    let sf = match locate_stockfish(None) {
        Ok(p) => p,
        Err(e) => return eprintln!("SKIPPED: Stockfish is needed for this test: {e}"),
    };
    let dir = temp_path("dgsearch", "sf");
    let mut s = settings(24, 1.0, 2, 1);
    s.limit = Limit::Depth(4);
    s.continuations = 1;
    let limits = s.limit.search_limits().expect("an engine limit");
    run_labels(&dir, &s, &mix(), 2, move |_| StockfishLabeler::start(&sf, 4, limits), None, &mut |_| {})
        .expect("labels run");
    let labels = records(&dir);
    assert_eq!(labels.len(), 24);
    assert!(labels.iter().any(|r| !r.search_path.is_empty()));
    for r in &labels {
        let state = parse_epd_line(&r.fen, r.chess960).expect("FEN");
        assert_eq!(r.moves.len(), state.legal_actions().len(), "every legal move labelled in {}", r.fen);
    }
    let out = temp_path("dgsearch", "sf-render");
    let summary = render(&dir, &out, 1.0);
    let counts = check_traces(&out, &labels, false, (3, 1024));
    assert!(counts[0] + counts[1] > 0, "{summary:?}");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(out);
}
