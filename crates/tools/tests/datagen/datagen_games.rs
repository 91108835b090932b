//! Connect Four and Hex training data end to end: label runs with the solvers in a temp dir (Connect Four,
//! Hex 5×5 exact, Hex 7×7 by MCTS), resume, render; the text examples re-parse with the protocol parser
//! without a hallucination and with the solvers' buckets, the encoder examples carry the solvers' buckets,
//! and nothing tokenizes to `<unk>`.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use mavboard_tools::datagen::game_label::{four_state, hex_state};
use mavboard_tools::datagen::render::RenderOptions;
use mavboard_tools::datagen::render_run::{render_dirs, shard_files};
use mavboard_tools::datagen::run::{LabelSettings, Limit};
use mavboard_tools::datagen::sample::mix64;
use mavboard_tools::datagen::score::exact_win_probability;
use mavboard_tools::datagen::shard::read_shard;
use mavboard_tools::datagen::{
    ExactResult, GameLabelSettings, HexLabelOptions, LabelGame, LabelRecord, LabelScore, Split,
    run_game_labels,
};
use mavboard_tools::game::GameState;
use mavboard_tools::game::connect_four::ConnectFourState;
use mavboard_tools::game::hex::HexState;
use mavboard_tools::mav::buckets::Buckets;
use mavboard_tools::mav::response::parse_example_text;
use mavboard_tools::mav::state::MavState;
use mavboard_tools::mav::tokenizer::Tokenizer;
use mavboard_tools::solve::connect_four::{GameValue, Solver as FourSolver};
use mavboard_tools::solve::hex::{HexValue, Solver as HexSolver, mcts};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-games-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn settings(positions: usize, game: GameLabelSettings) -> LabelSettings {
    LabelSettings {
        positions,
        limit: Limit::Solver,
        continuations: 4,
        temperature: 0.25,
        seed: 11,
        val_fraction: 0.25,
        chains_per_shard: 3,
        hash_mb: 0,
        search_share: 0.0,
        search_breadth: 3,
        search_depth: 2,
        game: Some(game),
    }
}

fn four() -> GameLabelSettings {
    // The debug build solves about ten times slower than a release build: start deep enough.
    GameLabelSettings { game: LabelGame::ConnectFour, opening_min: 16, opening_max: 20, hex: None }
}

fn hex(size: u32, opening: (u32, u32), playouts: u32) -> GameLabelSettings {
    GameLabelSettings {
        game: LabelGame::Hex,
        opening_min: opening.0,
        opening_max: opening.1,
        hex: Some(HexLabelOptions { size, swap: size == 5, exact_empty: 16, playouts }),
    }
}

fn records(dir: &Path) -> Vec<LabelRecord> {
    shard_files(dir).expect("shards").iter().flat_map(|p| read_shard(p).expect("reads")).collect()
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    let mut text = String::new();
    zstd::Decoder::new(std::fs::File::open(path).expect("open"))
        .expect("zstd")
        .read_to_string(&mut text)
        .expect("reads");
    text.lines().map(|l| serde_json::from_str(l).expect("json")).collect()
}

/// The solver's win probability of every move of a record's position (independent of the run).
fn solver_values(rec: &LabelRecord, seed: u64, playouts: u32) -> HashMap<String, f64> {
    match rec.game {
        LabelGame::ConnectFour => {
            let s = four_state(&rec.fen).expect("state");
            let a = FourSolver::with_table_bits(20).analyse(&s);
            a.moves
                .iter()
                .map(|m| {
                    let (result, plies) = match m.value {
                        GameValue::Win { plies } => (ExactResult::Win, plies),
                        GameValue::Draw { plies } => (ExactResult::Draw, plies),
                        GameValue::Loss { plies } => (ExactResult::Loss, plies),
                    };
                    (m.column.to_string(), exact_win_probability(result, Some(plies)))
                })
                .collect()
        }
        LabelGame::Hex => {
            let s = hex_state(&rec.fen).expect("state");
            if s.size() * s.size() - s.stone_count() <= 16 {
                let a = HexSolver::with_table_bits(18).analyse(&s).expect("exact");
                a.moves
                    .iter()
                    .map(|m| (m.action.to_string(), if m.value == HexValue::Win { 1.0 } else { 0.0 }))
                    .collect()
            } else {
                let config = mcts::Config { playouts, c: 0.7, seed: mix64(seed ^ s.hash64()) };
                mcts::search(&s, config).moves.iter().map(|m| (m.action.to_string(), m.win_prob)).collect()
            }
        }
        LabelGame::Chess => panic!("no chess here"),
    }
}

/// The moves of an encoder example as text: the tokens from after the separator (or the previous move
/// and its space) to each move position.
fn encoder_moves(tok: &Tokenizer, ids: &[u32], move_pos: &[usize]) -> Vec<String> {
    let sep = ids.iter().position(|&i| i == tok.sep_id()).expect("separator");
    let mut start = sep + 1;
    let mut out = Vec::new();
    for &p in move_pos {
        let text: String = ids[start..=p].iter().map(|&i| tok.token_of(i).expect("token")).collect();
        out.push(text.trim_start().to_owned());
        start = p + 1;
    }
    out
}

fn check_render<S: MavState>(labels: &Path, out: &Path, seed: u64, playouts: u32, game: &str) {
    let recs = records(labels);
    let opts = RenderOptions { seed: 3, lm_per_position: 2, ..RenderOptions::default() };
    let summary = render_dirs(&[labels.to_path_buf()], out, &opts).expect("renders");
    assert_eq!(summary.skipped, 0);
    assert_eq!(summary.labels, recs.len() as u64);
    assert_eq!(summary.av, [0, 0], "no action-value examples for {game}");
    assert_eq!(summary.av_skipped, recs.len() as u64);
    let tok = Tokenizer::new();
    let mav = Buckets::mav();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).expect("meta")).expect("json");
    assert_eq!(meta["games"], serde_json::json!([game]));

    // Text examples: clean, no <unk>, buckets of the labelled moves.
    let values: HashMap<String, HashMap<String, f64>> =
        recs.iter().map(|r| (r.fen.clone(), solver_values(r, seed, playouts))).collect();
    let (mut lm, mut compared) = (0, 0);
    for split in ["lm_train", "lm_val"] {
        for ex in lines(&out.join(format!("{split}.jsonl.zst"))) {
            lm += 1;
            let text = format!(
                "{}{}",
                ex["prompt"].as_str().expect("prompt"),
                ex["target"].as_str().expect("target")
            );
            assert!(text.starts_with(&format!("<mav game={game}>")), "{text}");
            assert!(!tok.encode(&text).contains(&tok.unk_id()), "{text}");
            let (_, state, parsed) = parse_example_text::<S>(&text, mav).expect("the prompt reads");
            assert!(parsed.is_clean(), "{text}\n{:?}", parsed.hallucinations);
            if let Some(v) = values.get(&state.mav_state()) {
                for (a, b) in &parsed.top {
                    let wp = v[&state.action_to_text(*a)];
                    assert_eq!(*b, mav.bucket_of(wp).expect("bucket"), "{text}");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(lm, summary.lm[0] + summary.lm[1]);
    assert!(lm >= 2 * recs.len() as u64);
    assert!(compared >= recs.len(), "the text examples' buckets were compared ({compared})");

    // Encoder examples: one per label, in label order within each split, with the solver's buckets.
    let train = lines(&out.join("enc_train.jsonl.zst"));
    let val = lines(&out.join("enc_val.jsonl.zst"));
    let (mut t, mut v) = (train.iter(), val.iter());
    for rec in &recs {
        let e =
            if rec.split == Split::Val { v.next() } else { t.next() }.expect("an encoder example per label");
        let ids: Vec<u32> = serde_json::from_value(e["ids"].clone()).expect("ids");
        let pos: Vec<usize> = serde_json::from_value(e["move_pos"].clone()).expect("move_pos");
        let buckets: Vec<u32> = serde_json::from_value(e["buckets"].clone()).expect("buckets");
        assert!(!ids.contains(&tok.unk_id()));
        let moves = encoder_moves(&tok, &ids, &pos);
        assert_eq!(moves.len(), rec.moves.len());
        let solved = &values[&rec.fen];
        for (m, b) in moves.iter().zip(&buckets) {
            assert_eq!(*b, mav.bucket_of(solved[m]).expect("bucket"), "{} move {m}", rec.fen);
        }
        let best = e["best"].as_u64().expect("best") as usize;
        assert_eq!(moves[best], rec.best);
    }
    assert!(t.next().is_none() && v.next().is_none());
}

#[test]
fn connect_four_labels_resume_and_render() {
    let (a, b, out) = (temp("c4-a"), temp("c4-b"), temp("c4-render"));
    let s = settings(14, four());
    let whole = run_game_labels(&a, &s, 2, None, &mut |_| {}).expect("labels");
    assert!(whole.manifest.complete && whole.manifest.records == 14);
    assert!(whole.manifest.engine.contains("Connect Four"), "{}", whole.manifest.engine);
    let first = run_game_labels(&b, &s, 1, Some(1), &mut |_| {}).expect("one shard");
    assert!(!first.manifest.complete);
    run_game_labels(&b, &s, 2, None, &mut |_| {}).expect("resumes");
    let (ra, rb) = (records(&a), records(&b));
    assert_eq!(ra, rb, "a resumed run on other threads writes the same records");
    for r in &ra {
        assert_eq!(r.game, LabelGame::ConnectFour);
        let st = four_state(&r.fen).expect("state");
        assert!(st.plies() >= 16);
        assert_eq!(r.moves.len(), st.legal_actions().len());
        assert!(r.moves.iter().all(|m| matches!(m.score, LabelScore::Exact { plies: Some(_), .. })));
    }
    let hashes: std::collections::HashSet<u64> =
        ra.iter().map(|r| four_state(&r.fen).expect("state").hash64()).collect();
    assert_eq!(hashes.len(), ra.len(), "deduplicated");
    // A chess-style change of settings is refused on resume.
    let mut other = s.clone();
    other.seed += 1;
    assert!(run_game_labels(&a, &other, 1, None, &mut |_| {}).is_err());
    check_render::<ConnectFourState>(&a, &out, s.seed, 0, "connect_four");
    for d in [a, b, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn hex_5x5_exact_and_7x7_mcts_labels_render() {
    let (small, big, out5, out7) = (temp("hex5"), temp("hex7"), temp("hex5-render"), temp("hex7-render"));
    let s5 = settings(10, hex(5, (11, 13), 50));
    run_game_labels(&small, &s5, 2, None, &mut |_| {}).expect("labels");
    let r5 = records(&small);
    assert_eq!(r5.len(), 10);
    assert!(r5.iter().all(|r| r.game == LabelGame::Hex));
    assert!(
        r5.iter().any(|r| r.moves.iter().all(|m| matches!(m.score, LabelScore::Exact { plies: None, .. })))
    );
    let s7 = settings(6, hex(7, (2, 6), 300));
    run_game_labels(&big, &s7, 2, None, &mut |_| {}).expect("labels");
    let r7 = records(&big);
    assert_eq!(r7.len(), 6);
    for r in &r7 {
        assert_eq!(hex_state(&r.fen).expect("state").size(), 7);
        assert_eq!(r.nodes, 300, "an MCTS label records its playouts");
        assert!(r.moves.iter().all(|m| matches!(m.score, LabelScore::Mcts { .. })));
    }
    check_render::<HexState>(&small, &out5, s5.seed, 50, "hex");
    check_render::<HexState>(&big, &out7, s7.seed, 300, "hex");
    for d in [small, big, out5, out7] {
        let _ = std::fs::remove_dir_all(d);
    }
}
