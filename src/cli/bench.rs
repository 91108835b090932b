//! `mavboard bench inference`: how fast model packages evaluate positions through mavboard's evaluators, at
//! several batch sizes and `%top_k` settings, and the ratio of the wall time to the time ONNX Runtime itself
//! spends in `Session::run` in the same run (the rest is mavboard's overhead: prompts, tokenizing, tensors,
//! decoding logic, result building).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::model::package::shipped_package_dirs;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Arguments of `mavboard bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to measure.
    #[command(subcommand)]
    what: What,
}

/// The benchmarks.
#[derive(Debug, clap::Subcommand)]
enum What {
    /// Positions and tokens per second of model packages at several batch sizes and `%top_k` settings, and
    /// the wall time over the time spent inside ONNX Runtime.
    Inference(InferenceArgs),
    /// The exact Connect Four solver: nodes/s and the time to solve every move of positions of 8, 12 and 16
    /// plies (and the empty board with --empty).
    Solve(super::solve::BenchArgs),
}

/// Arguments of `mavboard bench inference`.
#[derive(Debug, clap::Args)]
struct InferenceArgs {
    /// A model package folder; repeat for several [default: every shipped package].
    #[arg(long)]
    model: Vec<PathBuf>,
    /// Positions per measurement (drawn by seeded random play from the start position).
    #[arg(long, default_value_t = 32)]
    positions: usize,
    /// Batch sizes, comma-separated.
    #[arg(long, default_value = "1,8,32", value_delimiter = ',')]
    batch: Vec<usize>,
    /// Moves to ask for, comma-separated: numbers or `all`.
    #[arg(long, default_value = "5,all", value_delimiter = ',')]
    k: Vec<String>,
    /// Text models: free decoding instead of constrained.
    #[arg(long)]
    free: bool,
    /// ONNX Runtime intra-op threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seed of the positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `n` positions reached by random play of 0..60 plies from the start position (never terminal).
pub fn random_positions(n: usize, seed: u64) -> Vec<ChessState> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let plies = rng.random_range(0..60);
        let mut s = ChessState::startpos();
        for _ in 0..plies {
            let moves = s.legal_actions();
            let Some(&m) = moves.choose(&mut rng) else { break };
            match s.play(m) {
                Ok(next) if next.outcome().is_none() => s = next,
                _ => break,
            }
        }
        out.push(s);
    }
    out
}

fn parse_k(k: &str) -> anyhow::Result<TopK> {
    if k == "all" {
        return Ok(TopK::All);
    }
    let n: u32 = k.parse().with_context(|| format!("--k {k} is neither a number nor `all`"))?;
    anyhow::ensure!(n >= 1, "--k {k}: k must be at least 1");
    Ok(TopK::Count(n))
}

/// One measurement: a model, a k, a batch size.
#[derive(Debug, serde::Serialize)]
struct Row {
    model: String,
    format: &'static str,
    k: String,
    batch: usize,
    positions: usize,
    positions_per_s: f64,
    tokens: usize,
    tokens_per_s: f64,
    wall_s: f64,
    ort_s: f64,
    wall_over_ort: f64,
}

/// Runs `mavboard bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let a = match args.what {
        What::Inference(a) => a,
        What::Solve(a) => return super::solve::run_bench(a),
    };
    let dirs = if a.model.is_empty() { shipped_package_dirs() } else { a.model.clone() };
    anyhow::ensure!(!dirs.is_empty(), "no shipped model package found; pass --model DIR");
    let ks: Vec<TopK> = a.k.iter().map(|k| parse_k(k)).collect::<anyhow::Result<_>>()?;
    let mut options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
    options.threads.intra_op = a.threads.max(1);
    let positions = random_positions(a.positions.max(1), a.seed);
    let mode = if a.free { DecodeMode::Free } else { DecodeMode::Constrained };
    let mut rows = Vec::new();
    if !a.json {
        println!(
            "{} positions per row, {} ONNX Runtime thread(s), {}",
            positions.len(),
            options.threads.intra_op,
            if a.free { "free decoding" } else { "constrained decoding" }
        );
        println!(
            "{:<14} {:<13} {:>4} {:>6} {:>9} {:>10} {:>10} {:>10} {:>9}",
            "model", "format", "k", "batch", "pos/s", "tokens/s", "wall ms", "ORT ms", "wall/ORT"
        );
    }
    for dir in &dirs {
        let (mut evaluator, package) =
            load_evaluator(dir, &options).with_context(|| format!("opening {}", dir.display()))?;
        let name = package.manifest.name.clone();
        let format = package.manifest.format.name();
        for (&k, k_text) in ks.iter().zip(&a.k) {
            let requests: Vec<EvalRequest<ChessState>> = positions
                .iter()
                .map(|s| {
                    let mut r = EvalRequest::values(s.clone());
                    r.top_k = k;
                    r.mode = mode;
                    r
                })
                .collect();
            // Warm-up at the largest batch: the first runs of a session allocate.
            let warm = a.batch.iter().copied().max().unwrap_or(1).clamp(1, requests.len());
            for r in evaluator.evaluate(&requests[..warm]) {
                r.with_context(|| format!("{name}: an evaluation failed"))?;
            }
            for &b in &a.batch {
                let b = b.max(1);
                let mut model = Duration::ZERO;
                let mut tokens = 0usize;
                let start = Instant::now();
                let mut results = Vec::with_capacity(requests.len());
                for chunk in requests.chunks(b) {
                    results.extend(evaluator.evaluate(chunk));
                }
                let wall = start.elapsed();
                for r in results {
                    let r = r.with_context(|| format!("{name}: an evaluation failed"))?;
                    model += r.timing.model;
                    tokens += r.timing.tokens;
                }
                let secs = wall.as_secs_f64().max(1e-9);
                let row = Row {
                    model: name.clone(),
                    format,
                    k: k_text.clone(),
                    batch: b,
                    positions: requests.len(),
                    positions_per_s: requests.len() as f64 / secs,
                    tokens,
                    tokens_per_s: tokens as f64 / secs,
                    wall_s: wall.as_secs_f64(),
                    ort_s: model.as_secs_f64(),
                    wall_over_ort: wall.as_secs_f64() / model.as_secs_f64().max(1e-9),
                };
                if !a.json {
                    println!(
                        "{:<14} {:<13} {:>4} {:>6} {:>9.1} {:>10.0} {:>10.1} {:>10.1} {:>9.3}",
                        row.model,
                        row.format,
                        row.k,
                        row.batch,
                        row.positions_per_s,
                        row.tokens_per_s,
                        row.wall_s * 1e3,
                        row.ort_s * 1e3,
                        row.wall_over_ort
                    );
                }
                rows.push(row);
            }
        }
    }
    if a.json {
        let out = serde_json::json!({
            "positions": positions.len(), "threads": options.threads.intra_op, "free": a.free, "runs": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "(tokens: prompt + generated for text models, input tokens otherwise; wall/ORT: wall time over the \
             summed time inside ONNX Runtime's Session::run, 1.000 = no overhead)"
        );
    }
    Ok(())
}
