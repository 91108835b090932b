//! UCI `info` parsing speed: a labelling search at MultiPV 40 prints thousands of these lines.

use criterion::{Criterion, criterion_group, criterion_main};
use mavboard::uci::info::parse_info;

fn info_lines(c: &mut Criterion) {
    let multipv = "info depth 12 seldepth 17 multipv 2 score cp -31 nodes 153220 nps 1030012 hashfull 56 tbhits 0 \
                   time 148 pv e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1";
    let currmove = "info depth 24 currmove g1f3 currmovenumber 3";
    c.bench_function("parse_info multipv line", |b| b.iter(|| parse_info(std::hint::black_box(multipv))));
    c.bench_function("parse_info currmove line", |b| b.iter(|| parse_info(std::hint::black_box(currmove))));
}

criterion_group!(benches, info_lines);
criterion_main!(benches);
