//! The labels driver over the fixture opening files, with a small deterministic labeller (one-ply
//! material count) standing in for Stockfish: resume, thread-independence, dedupe and split.

use crate::common;

use crate::datagen_common;

use std::collections::HashSet;
use std::path::Path;

use common::temp_path;
use datagen_common::{MaterialLabeler, mix, settings};
use mavboard::datagen::manifest::Manifest;
use mavboard::datagen::run::LabelSettings;
use mavboard::datagen::sample::split_of;
use mavboard::datagen::shard::read_shard;
use mavboard::datagen::source::parse_epd_line;
use mavboard::datagen::{DatagenError, run_labels};
use mavboard::game::GameState;

fn run(dir: &Path, s: &LabelSettings, threads: usize, stop: Option<usize>) -> Result<Manifest, DatagenError> {
    run_labels(dir, s, &mix(), threads, |_| Ok(MaterialLabeler), stop, &mut |_| {}).map(|r| r.manifest)
}

fn shard_bytes(dir: &Path, m: &Manifest) -> Vec<Vec<u8>> {
    m.shards.iter().map(|s| std::fs::read(dir.join(&s.file)).expect("shard readable")).collect()
}

#[test]
fn same_output_for_any_thread_count_and_after_resume() {
    let s = settings(60);
    let a = temp_path("datagen", "a");
    let full = run(&a, &s, 1, None).expect("full run");
    assert!(full.complete);
    assert_eq!(full.records, 60);

    let b = temp_path("datagen", "b");
    let partial = run(&b, &s, 3, Some(2)).expect("interrupted run");
    assert!(!partial.complete);
    assert_eq!(partial.shards.len(), 2);
    assert!(partial.records < 60);
    // A stale temporary file from a killed write must not matter.
    std::fs::write(b.join(".shard-00002.jsonl.zst.tmp"), b"half a shard").expect("write junk");
    let resumed = run(&b, &s, 3, None).expect("resumed run");
    assert_eq!(resumed, full);
    assert_eq!(shard_bytes(&b, &resumed), shard_bytes(&a, &full));

    // Running a complete folder again does nothing and changes nothing.
    let again = run(&b, &s, 2, None).expect("rerun");
    assert_eq!(again, full);

    // Other settings in the same folder are refused with an explanation.
    let mut other = s.clone();
    other.seed += 1;
    let e = run(&b, &other, 2, None).expect_err("mismatch");
    assert!(matches!(e, DatagenError::SettingsMismatch { .. }), "{e}");
    assert!(e.to_string().contains("another --out folder"), "{e}");

    // A different seed gives different data.
    let c = temp_path("datagen", "c");
    let m = run(&c, &other, 2, None).expect("other seed");
    assert_ne!(shard_bytes(&c, &m), shard_bytes(&a, &full));
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn records_are_distinct_split_by_hash_and_cover_continuations() {
    let s = settings(80);
    let dir = temp_path("datagen", "dedupe");
    let m = run(&dir, &s, 2, None).expect("run");
    let mut hashes = HashSet::new();
    let mut plies = HashSet::new();
    let mut sources = HashSet::new();
    let mut val = 0;
    for shard in &m.shards {
        let records = read_shard(&dir.join(&shard.file)).expect("shard reads");
        assert_eq!(records.len(), shard.records);
        for r in records {
            let state = parse_epd_line(&r.fen, r.chess960).expect("stored FEN parses");
            assert!(hashes.insert(state.hash64()), "duplicate position {}", r.fen);
            assert_eq!(r.split, split_of(state.hash64(), s.val_fraction));
            assert_eq!(r.moves.len(), state.legal_actions().len());
            assert!(r.ply <= s.continuations);
            plies.insert(r.ply);
            sources.insert(r.source.clone());
            if r.split == mavboard::datagen::Split::Val {
                val += 1;
            }
        }
    }
    assert_eq!(hashes.len(), 80);
    assert!(plies.len() > 3, "continuations reach several plies: {plies:?}");
    assert_eq!(sources.len(), 3, "{sources:?}");
    assert!(val > 0 && val < 40, "{val} validation records of 80 at 20%");
    assert_eq!(m.shards.iter().map(|s| s.val).sum::<usize>(), val);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_corrupt_shard_is_reported_on_resume() {
    let s = settings(30);
    let dir = temp_path("datagen", "corrupt");
    let m = run(&dir, &s, 1, Some(1)).expect("one shard");
    std::fs::write(dir.join(&m.shards[0].file), b"not zstd").expect("damage");
    let e = run(&dir, &s, 1, None).expect_err("corrupt");
    assert!(matches!(e, DatagenError::Corrupt { .. }), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}
