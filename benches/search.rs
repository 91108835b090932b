//! MCTS simulations per second with an instant mock evaluator (seeded hash values, no model), at batch sizes
//! 1 and 16; prints the tree's memory per node once.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mavboard::game::chess::ChessState;
use mavboard::inference::mock::HashEvaluator;
use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};
use mavboard::search::minimax::{MinimaxParams, minimax};

const SIMS: u64 = 1000;

fn run(b: usize) -> Mcts<ChessState> {
    let mut e = HashEvaluator::new(1);
    let mut m =
        Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("default params are valid");
    m.run(&mut e, RunLimits { simulations: SIMS, batch_size: b }).expect("the mock never fails");
    m
}

fn bench(c: &mut Criterion) {
    for b in [1usize, 16] {
        let m = run(b);
        let mem = m.memory();
        eprintln!(
            "b = {b}: {SIMS} simulations → {} nodes ({} evaluated); node size {} B; {:.1} B/node in all \
             (arena {} B, evaluated-node data {} B, kept distributions {} B)",
            mem.nodes,
            mem.evaluated,
            mem.node_size,
            mem.per_node(),
            mem.node_bytes,
            mem.data_bytes,
            mem.distribution_bytes
        );
    }
    let mut g = c.benchmark_group("mcts");
    g.throughput(Throughput::Elements(SIMS));
    g.sample_size(20);
    for b in [1usize, 16] {
        g.bench_function(format!("startpos_{SIMS}_sims_b{b}"), |bench| bench.iter(|| black_box(run(b))));
    }
    g.finish();
    // The mock alone, for comparison: the cost of answering the same number of requests.
    let mut g = c.benchmark_group("mock");
    g.throughput(Throughput::Elements(1));
    g.bench_function("hash_evaluator_startpos_request", |bench| {
        let mut e = HashEvaluator::new(1);
        let req = [mavboard::inference::evaluator::EvalRequest::values(ChessState::startpos())];
        bench.iter(|| {
            black_box(mavboard::inference::evaluator::Evaluator::<ChessState>::evaluate(&mut e, &req))
        })
    });
    g.bench_function("minimax_b3_d2_startpos", |bench| {
        bench.iter(|| {
            let mut e = HashEvaluator::new(1);
            black_box(minimax(
                &mut e,
                ChessState::startpos(),
                &MinimaxParams { breadth: 3, depth: 2, ..Default::default() },
            ))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
