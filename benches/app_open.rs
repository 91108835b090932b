//! Opening a PGN file in the app: reading its games on the UI thread the old way (`GameList::read` after
//! reading the file) against the background open (`PgnLoad`: a thread indexing and checking the games,
//! progress counters, the games over a channel) on the same file, so the cost of keeping the UI free shows
//! as a ratio. `plain_thread_read` does the old read on a bare spawned thread: the part of the difference
//! that any fresh thread costs (its allocations), apart from the loader's progress reporting and channel.
//!
//! The file is the 1 MB TWIC sample in tests/fixtures/pgn (in the repository).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mavboard::app::game_list::GameList;
use mavboard::app::pgn_loader::PgnLoad;

fn open(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/twic1599_sample_1MB.pgn");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut group = c.benchmark_group("app_open");
    group.throughput(Throughput::Bytes(size));
    group.sample_size(10);
    group.bench_function("ui_thread_read", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&path).expect("the fixture is in the repository");
            GameList::read(&String::from_utf8_lossy(&bytes), "twic").entries.len()
        })
    });
    group.bench_function("plain_thread_read", |b| {
        b.iter(|| {
            let p = path.clone();
            std::thread::spawn(move || {
                let bytes = std::fs::read(&p).expect("the fixture is in the repository");
                GameList::read(&String::from_utf8_lossy(&bytes), "twic")
            })
            .join()
            .expect("joins")
            .entries
            .len()
        })
    });
    group.bench_function("background_open", |b| {
        b.iter(|| {
            let mut load = PgnLoad::start(&path, Arc::new(|| {}));
            let mut games = 0;
            loop {
                let news = load.take_news();
                games += news.games.len();
                if let Some(done) = news.done {
                    done.expect("reads");
                    break games;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, open);
criterion_main!(benches);
