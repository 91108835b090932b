//! Tokenizer and example-rendering speed on synthetic MAV examples.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mavboard::mav::sample::random_examples;
use mavboard::mav::tokenizer::Tokenizer;

fn bench(c: &mut Criterion) {
    let t = Tokenizer::new();
    let texts: Vec<String> = random_examples(200, 1).iter().map(|e| e.text()).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let ids: Vec<Vec<u32>> = texts.iter().map(|s| t.encode(s)).collect();
    let mut g = c.benchmark_group("mav_tokenizer");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("encode_200_examples", |b| {
        b.iter(|| texts.iter().map(|s| t.encode(black_box(s)).len()).sum::<usize>())
    });
    g.bench_function("decode_200_examples", |b| {
        b.iter(|| ids.iter().map(|i| t.decode(black_box(i)).map_or(0, |s| s.len())).sum::<usize>())
    });
    g.finish();
    c.bench_function("render_50_examples", |b| b.iter(|| random_examples(black_box(50), 2).len()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
