//! Game review speed: positions per second of a model-only review (one evaluation per position, every move
//! valued) with the shipped model at batch sizes 1, 8 and 32, next to the raw evaluator on the same
//! positions and batches (so the review's own overhead shows as the ratio), the review with an instant mock
//! evaluator (the overhead alone), and a whole file on 1 and 2 worker threads.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use mavboard::engine::{EvaluatorBox, EvaluatorFactory, FactoryError};
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{EvalRequest, Evaluator};
use mavboard::inference::load_evaluator;
use mavboard::inference::mock::HashEvaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::pgn::{GameTree, PgnReader};
use mavboard::review::{BatchOptions, BatchPaths, ReviewOptions, review_file, review_game};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn games(n: usize) -> Vec<GameTree> {
    let path = root().join("tests/fixtures/pgn/lichess_db_2025-05_sample_1MB.pgn");
    let file = std::fs::File::open(path).expect("the Lichess fixture");
    PgnReader::new(file).filter_map(Result::ok).filter(|g| g.mainline().count() >= 40).take(n).collect()
}

fn model() -> Option<Box<dyn Evaluator<ChessState> + Send>> {
    match load_evaluator(&root().join("assets/models/mav-enc-tiny"), &SessionOptions::default()) {
        Ok(model) => Some(model.evaluator),
        Err(e) => {
            eprintln!("the shipped model could not be loaded, model benches skipped: {e}");
            None
        }
    }
}

fn bench(c: &mut Criterion) {
    let game = games(1).remove(0);
    let positions: Vec<ChessState> = game
        .mainline_positions()
        .expect("a legal game")
        .into_iter()
        .map(|(_, s)| s)
        .take(game.mainline().count())
        .collect();
    let n = positions.len() as u64;
    eprintln!("one Lichess game of {n} positions");

    let mut g = c.benchmark_group("review_mock");
    g.throughput(Throughput::Elements(n));
    g.bench_function("hash_evaluator_b8", |bench| {
        let options = ReviewOptions { batch_size: 8, ..ReviewOptions::default() };
        let mut e = HashEvaluator::new(1);
        bench.iter(|| black_box(review_game(&game, &mut e, &options).expect("reviews")))
    });
    g.finish();

    let Some(mut e) = model() else { return };
    let mut g = c.benchmark_group("review_model");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    for b in [1usize, 8, 32] {
        let requests: Vec<_> = positions.iter().cloned().map(EvalRequest::values).collect();
        g.bench_function(format!("evaluator_only_b{b}"), |bench| {
            bench.iter(|| {
                for chunk in requests.chunks(b) {
                    black_box(e.evaluate(chunk));
                }
            })
        });
        let options = ReviewOptions { batch_size: b, ..ReviewOptions::default() };
        g.bench_function(format!("review_b{b}"), |bench| {
            bench.iter(|| black_box(review_game(&game, e.as_mut(), &options).expect("reviews")))
        });
    }
    g.finish();

    // A whole file of 4 games on 1 and 2 workers (each with its own session of one intra-op thread).
    let dir = std::env::temp_dir().join(format!("mavboard-bench-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("games.pgn");
    let text: String = games(4).iter().map(|g| g.source().unwrap_or_default().to_owned() + "\n\n").collect();
    std::fs::write(&input, &text).expect("write");
    let file_positions: u64 =
        PgnReader::new(text.as_bytes()).filter_map(Result::ok).map(|g| g.mainline().count() as u64).sum();
    let factory: EvaluatorFactory = Arc::new(|_| -> Result<EvaluatorBox, FactoryError> {
        let options = SessionOptions {
            threads: mavboard::inference::device::SessionThreads { intra_op: 1 },
            ..SessionOptions::default()
        };
        Ok(load_evaluator(&root().join("assets/models/mav-enc-tiny"), &options)?.evaluator)
    });
    let mut g = c.benchmark_group("review_file");
    g.throughput(Throughput::Elements(file_positions));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    for workers in [1usize, 2] {
        let paths =
            BatchPaths { input: input.clone(), output: dir.join(format!("out{workers}.pgn")), report: None };
        let options = BatchOptions {
            review: ReviewOptions { batch_size: 16, ..ReviewOptions::default() },
            workers,
            model: "mav-enc-tiny".into(),
            judge: None,
        };
        g.bench_function(format!("4_games_{workers}_workers"), |bench| {
            bench.iter(|| {
                let stop = AtomicBool::new(false);
                black_box(
                    review_file(&paths, &options, Arc::clone(&factory), &stop, &mut |_| {}).expect("runs"),
                )
            })
        });
    }
    g.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, bench);
criterion_main!(benches);
