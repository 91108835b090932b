//! Perft speed: the standard start position to depth 5 and Kiwipete to depth 4 (bulk counting).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mavboard::game::chess::ChessState;
use mavboard::game::perft::chess_perft;

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(20);
    let cases = [
        ("startpos_d5", ChessState::startpos(), 5, 4_865_609),
        ("kiwipete_d4", ChessState::from_fen(KIWIPETE).expect("Kiwipete FEN is valid"), 4, 4_085_603),
    ];
    for (name, state, depth, nodes) in cases {
        assert_eq!(chess_perft(&state, depth), nodes, "{name}: wrong count, benchmark would be meaningless");
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(name, |b| b.iter(|| chess_perft(black_box(&state), black_box(depth))));
    }
    group.finish();
}

criterion_group!(benches, bench_perft);
criterion_main!(benches);
