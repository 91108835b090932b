//! PGN reading speed over the shared PGN files in ../shared/data/pgn (absent on a fresh clone: the bench
//! then says so and measures nothing).
//!
//! - `pgn/count_moves`: pgn-reader with a visitor that only counts moves (raw parsing throughput);
//! - `pgn/trees`: mavboard's `PgnReader`, building a full `GameTree` per game (legal-move checking,
//!   comments, variations, kept source text).
//!
//! Throughput is reported in MB/s (decimal megabytes of PGN text per second).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mavboard::pgn::PgnReader;
use pgn_reader::{Reader, SanPlus, Skip, Visitor};

/// Counts the moves of every line, variations included.
struct MoveCounter;

impl Visitor for MoveCounter {
    type Tags = ();
    type Movetext = usize;
    type Output = usize;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Continue(0)
    }

    fn san(&mut self, movetext: &mut usize, _san: SanPlus) -> ControlFlow<Self::Output> {
        *movetext += 1;
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _movetext: &mut usize) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(false))
    }

    fn end_game(&mut self, movetext: usize) -> usize {
        movetext
    }
}

fn shared_files() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pgn");
    let sets: [(&str, &[&str]); 3] = [
        ("lichess", &["lichess/lichess_db_2025-05_sample_1MB.pgn"]),
        ("twic", &["master/twic1599_sample_1MB.pgn"]),
        ("all", &[]),
    ];
    if !dir.is_dir() {
        return None;
    }
    let mut all_files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pgn") {
                all_files.push(path);
            }
        }
    }
    all_files.sort();
    let mut out = Vec::new();
    for (name, files) in sets {
        let paths: Vec<PathBuf> =
            if files.is_empty() { all_files.clone() } else { files.iter().map(|f| dir.join(f)).collect() };
        let mut bytes = Vec::new();
        for p in paths {
            bytes.extend(std::fs::read(&p).ok()?);
            bytes.extend_from_slice(b"\n\n");
        }
        out.push((name.to_owned(), bytes));
    }
    Some(out)
}

fn bench(c: &mut Criterion) {
    let Some(sets) = shared_files() else {
        eprintln!(
            "pgn bench: ../shared/data/pgn is absent (it exists only in the development workspace); skipped"
        );
        return;
    };
    let mut group = c.benchmark_group("pgn");
    group.sample_size(20);
    for (name, bytes) in &sets {
        group.throughput(Throughput::BytesDecimal(bytes.len() as u64));
        group.bench_function(format!("count_moves/{name}"), |b| {
            b.iter(|| {
                let mut reader = Reader::new(bytes.as_slice());
                let mut moves = 0usize;
                while let Ok(Some(n)) = reader.read_game(&mut MoveCounter) {
                    moves += n;
                }
                moves
            })
        });
        group.bench_function(format!("trees/{name}"), |b| {
            b.iter(|| {
                PgnReader::new(bytes.as_slice()).filter_map(Result::ok).map(|g| g.move_count()).sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
