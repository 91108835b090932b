//! Labelling on many machines: `labels --shard K/N` runs merged by `datagen merge` give the single run's
//! label folder byte for byte (records, order, split, files, manifest); the merge refuses shards of other
//! settings, missing shards and a shard that stopped short (and says how far to resume it); ordinary
//! folders are joined without duplicates. The labeller is a small deterministic stand-in for Stockfish
//! (one-ply material count, as in `datagen_run.rs`).

use crate::datagen_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use datagen_common::{MaterialLabeler, mix};
use mavboard::datagen::manifest::Manifest;
use mavboard::datagen::render::RenderOptions;
use mavboard::datagen::render_run::render_dirs;
use mavboard::datagen::run::{LabelSettings, RunPlan};
use mavboard::datagen::shard::read_shard;
use mavboard::datagen::source::parse_epd_line;
use mavboard::datagen::{
    DatagenError, LabelRecord, ShardSpec, merge_label_sets, run_labels, run_labels_shard,
};
use mavboard::game::GameState;

fn settings(positions: usize, search_share: f64) -> LabelSettings {
    LabelSettings { search_share, search_breadth: 2, search_depth: 1, ..datagen_common::settings(positions) }
}

struct Temp(PathBuf);

impl Temp {
    fn new(name: &str) -> Temp {
        let dir = std::env::temp_dir().join(format!("mavboard-shard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Temp(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(
    dir: &Path,
    s: &LabelSettings,
    shard: Option<ShardSpec>,
    threads: usize,
) -> Result<Manifest, DatagenError> {
    let plan = RunPlan { out: dir, settings: s, shard, threads, stop_after_shards: None };
    run_labels_shard(plan, &mix(), |_| Ok(MaterialLabeler), &mut |_| {}).map(|r| r.manifest)
}

fn shard(k: u64, n: u64, s: &LabelSettings) -> ShardSpec {
    ShardSpec::new(k, n, s.positions).expect("valid shard")
}

fn records(dir: &Path, m: &Manifest) -> Vec<LabelRecord> {
    m.shards.iter().flat_map(|f| read_shard(&dir.join(&f.file)).expect("shard reads")).collect()
}

fn file_bytes(dir: &Path, m: &Manifest) -> Vec<Vec<u8>> {
    m.shards.iter().map(|f| std::fs::read(dir.join(&f.file)).expect("readable")).collect()
}

/// Runs the single run and N shards of `s`, merges the shards and checks the result is the single run's.
fn sharded_equals_single(name: &str, s: &LabelSettings, n: u64) -> (Temp, Manifest) {
    let t = Temp::new(name);
    let single = run(&t.join("single"), s, None, 2).expect("single run");
    assert!(single.complete && single.records == s.positions);
    let mut dirs = Vec::new();
    for k in 0..n {
        let dir = t.join(&format!("shard{k}"));
        let m = run(&dir, s, Some(shard(k, n, s)), 1 + k as usize % 2).expect("shard run");
        assert!(m.complete && m.shard.is_some());
        dirs.push(dir);
    }
    dirs.reverse(); // any order
    let merged = t.join("merged");
    let summary = merge_label_sets(&dirs, &merged).expect("merge");
    assert!(summary.sharded);
    let m = &summary.manifest;
    let (a, b) = (records(&t.join("single"), &single), records(&merged, m));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "record {i}");
    }
    assert_eq!(*m, single, "the merged manifest is the single run's");
    assert_eq!(Manifest::load(&merged).expect("reads"), Some(single.clone()));
    assert_eq!(file_bytes(&merged, m), file_bytes(&t.join("single"), &single));
    (t, single)
}

#[test]
fn shards_merged_equal_the_single_run() {
    let s = settings(80, 0.0);
    let (t, single) = sharded_equals_single("two", &s, 2);
    // Positions repeat across chains (the books are small), so shards hold duplicates of each other.
    let total: usize = (0..2)
        .map(|k| Manifest::load(&t.join(&format!("shard{k}"))).expect("reads").expect("exists").records)
        .sum();
    assert!(total > single.records, "{total} shard records for {} merged", single.records);
    // The merged folder is an ordinary label folder: it resumes (nothing to do) and renders.
    let again = run_labels(&t.join("merged"), &s, &mix(), 1, |_| Ok(MaterialLabeler), None, &mut |_| {})
        .expect("resumes as the single run");
    assert_eq!(again.manifest, single);
    assert_eq!(again.written_now, 0);
    let rendered =
        render_dirs(&[t.join("merged")], &t.join("render"), &RenderOptions::default()).expect("render");
    assert_eq!(rendered.labels, 80);
    let seen: HashSet<String> = records(&t.join("merged"), &single).into_iter().map(|r| r.fen).collect();
    assert_eq!(seen.len(), 80);
}

#[test]
fn three_shards_with_search_trees_merge_to_the_single_run() {
    let (t, single) = sharded_equals_single("trees", &settings(70, 0.3), 3);
    let trees = records(&t.join("single"), &single).iter().filter(|r| !r.search_path.is_empty()).count();
    assert!(trees > 0, "the chains carry search-tree nodes");
}

#[test]
fn a_short_shard_is_named_and_resumed_with_a_larger_target() {
    let s = settings(60, 0.0);
    let t = Temp::new("short");
    let single = run(&t.join("single"), &s, None, 1).expect("single run");
    let one = t.join("shard1");
    run(&t.join("shard0"), &s, Some(shard(0, 2, &s)), 1).expect("shard 0");
    let small = ShardSpec { target: 5, ..shard(1, 2, &s) };
    run(&one, &s, Some(small), 1).expect("a shard with a small target");
    let dirs = [t.join("shard0"), one.clone()];
    let e = merge_label_sets(&dirs, &t.join("merged")).expect_err("shard 1 is short");
    let DatagenError::ShardShort { dir, shard: name, suggested, .. } = &e else { panic!("{e}") };
    assert_eq!((dir, name.as_str()), (&one, "1/2"));
    assert!(e.to_string().contains("--shard-target"), "{e}");
    let names: Vec<_> = std::fs::read_dir(t.join("merged")).expect("out exists").collect();
    assert!(names.is_empty(), "a failed merge leaves nothing behind");
    // Resuming with the suggested target (only the target may change) makes it long enough.
    let resumed = run(&one, &s, Some(ShardSpec { target: *suggested, ..small }), 2).expect("resumed");
    assert!(resumed.records > 5);
    let m = merge_label_sets(&dirs, &t.join("merged")).expect("merge after the resume").manifest;
    assert_eq!(m, single);
    assert_eq!(records(&t.join("merged"), &m), records(&t.join("single"), &single));
}

#[test]
fn merge_refuses_other_settings_missing_shards_and_mixtures() {
    let s = settings(30, 0.0);
    let t = Temp::new("refuse");
    let out = t.join("out");
    for k in 0..2 {
        run(&t.join(&format!("s{k}")), &s, Some(shard(k, 2, &s)), 1).expect("shard");
    }
    let mut other = s.clone();
    other.seed += 1;
    run(&t.join("other-seed"), &other, Some(shard(1, 2, &other)), 1).expect("shard of another seed");
    let e = merge_label_sets(&[t.join("s0"), t.join("other-seed")], &out).expect_err("seeds differ");
    assert!(matches!(e, DatagenError::MergeMismatch { .. }), "{e}");
    assert!(e.to_string().contains("settings.seed: 2024 vs 2025"), "{e}");
    run(&t.join("three"), &s, Some(shard(2, 3, &s)), 1).expect("shard 2/3");
    let e = merge_label_sets(&[t.join("s0"), t.join("three")], &out).expect_err("shard counts differ");
    assert!(e.to_string().contains("shards: 2 vs 3"), "{e}");
    let e = merge_label_sets(&[t.join("s1")], &out).expect_err("shard 0 missing");
    assert!(matches!(e, DatagenError::ShardMissing { .. }) && e.to_string().contains("0/2"), "{e}");
    let e = merge_label_sets(&[t.join("s1"), t.join("s1")], &out).expect_err("twice");
    assert!(e.to_string().contains("both shard 1/2"), "{e}");
    run(&t.join("plain"), &s, None, 1).expect("ordinary run");
    let e = merge_label_sets(&[t.join("s0"), t.join("plain")], &out).expect_err("shard and not");
    assert!(e.to_string().contains("plain is not"), "{e}");
    let e = merge_label_sets(&[t.join("s0"), t.join("missing")], &out).expect_err("no folder");
    assert!(matches!(e, DatagenError::NoManifest { .. }), "{e}");
    let e = merge_label_sets(&[t.join("s0"), t.join("s1")], &t.join("plain")).expect_err("out not empty");
    assert!(matches!(e, DatagenError::OutNotEmpty { .. }), "{e}");
    // A shard cannot be resumed as another shard or as the whole run.
    let e = run(&t.join("s0"), &s, Some(shard(1, 2, &s)), 1).expect_err("other shard");
    assert!(e.to_string().contains("--shard 0/2 there, --shard 1/2 now"), "{e}");
    let e = run(&t.join("s0"), &s, None, 1).expect_err("whole run");
    assert!(matches!(e, DatagenError::SettingsMismatch { .. }), "{e}");
    merge_label_sets(&[t.join("s1"), t.join("s0")], &out).expect("the right shards merge");
}

#[test]
fn merging_overlapping_ordinary_folders_removes_duplicates() {
    let t = Temp::new("join");
    let (s40, s60) = (settings(40, 0.0), settings(60, 0.0));
    let mut other = settings(50, 0.0);
    other.seed = 7;
    run(&t.join("a40"), &s40, None, 1).expect("a40");
    run(&t.join("a60"), &s60, None, 2).expect("a60");
    run(&t.join("b"), &other, None, 1).expect("b");
    let hash = |r: &LabelRecord| parse_epd_line(&r.fen, r.chess960).expect("FEN").hash64();
    let mut expected = Vec::new();
    let mut seen = HashSet::new();
    for dir in ["a60", "a40", "b"] {
        let m = Manifest::load(&t.join(dir)).expect("reads").expect("exists");
        expected.extend(records(&t.join(dir), &m).into_iter().filter(|r| seen.insert(hash(r))));
    }
    let merged = t.join("merged");
    let summary = merge_label_sets(&[t.join("a60"), t.join("a40"), t.join("b")], &merged).expect("join");
    let m = &summary.manifest;
    assert!(!summary.sharded);
    assert_eq!(summary.read, 150);
    assert_eq!(summary.duplicates, 150 - expected.len());
    assert!(summary.duplicates >= 40, "a40 is all in a60");
    assert_eq!(records(&merged, m), expected);
    assert_eq!(m.records, expected.len());
    assert_eq!(m.settings.positions, expected.len());
    let kept: Vec<usize> = m.joined.iter().map(|j| j.kept).collect();
    assert_eq!(kept[..2], [60, 0]);
    assert_eq!(m.joined[2].seed, 7);
    // A joined folder is not one run: it cannot be resumed.
    let e = run(&merged, &m.settings, None, 1).expect_err("no resume");
    assert!(e.to_string().contains("joined by datagen merge"), "{e}");
    // Folders that differ in more than seed and positions are refused, naming the field.
    let mut split = settings(40, 0.0);
    split.val_fraction = 0.5;
    run(&t.join("c"), &split, None, 1).expect("c");
    let e = merge_label_sets(&[t.join("a40"), t.join("c")], &t.join("out2")).expect_err("val fraction");
    assert!(e.to_string().contains("settings.val_fraction: 0.2 vs 0.5"), "{e}");
}

fn mavboard(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard")).args(args).output().expect("the binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn connect_four_shards_through_the_cli() {
    let t = Temp::new("cli");
    let path = |name: &str| t.join(name).to_str().expect("utf-8 temp dir").to_owned();
    let common = [
        "datagen",
        "labels",
        "--game",
        "connect_four",
        "--positions",
        "8",
        "--threads",
        "1",
        "--seed",
        "3",
        "--opening-min",
        "18",
        "--opening-max",
        "20",
        "--continuations",
        "2",
        "--shard-chains",
        "2",
    ];
    let (single, s0, s1, merged) = (path("single"), path("s0"), path("s1"), path("merged"));
    let (ok, err) = mavboard(&[&common[..], &["--out", &single]].concat());
    assert!(ok, "{err}");
    for (dir, k) in [(&s0, "0/2"), (&s1, "1/2")] {
        let (ok, err) = mavboard(&[&common[..], &["--out", dir, "--shard", k]].concat());
        assert!(ok && err.contains(&format!("as shard {k}")), "{err}");
    }
    let (ok, err) = mavboard(&[&common[..], &["--out", &path("bad"), "--shard", "2/2"]].concat());
    assert!(!ok && err.contains("--shard must be K/N"), "{err}");
    let (ok, out) = mavboard(&["datagen", "merge", &s1, &s0, "--out", &merged]);
    assert!(ok && out.contains("merged 2 shards") && out.contains("8 records"), "{out}");
    let (a, b) = (Manifest::load(t.join("single").as_path()), Manifest::load(t.join("merged").as_path()));
    let (a, b) = (a.expect("reads").expect("single"), b.expect("reads").expect("merged"));
    assert_eq!(a, b);
    assert_eq!(records(&t.join("single"), &a), records(&t.join("merged"), &b));
}
