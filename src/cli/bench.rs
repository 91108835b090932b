//! `mavboard bench inference`: how fast a model package evaluates positions through mavboard's evaluator,
//! as a ratio against the time ONNX Runtime itself spends in `Session::run` in the same run (the rest is
//! mavboard's overhead: tokenizing, tensors, decoding logic, result building).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::model::package::default_package_dir;
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
    /// Positions per second of a model package at several batch sizes, and the share of the time spent
    /// inside ONNX Runtime.
    Inference(InferenceArgs),
}

/// Arguments of `mavboard bench inference`.
#[derive(Debug, clap::Args)]
struct InferenceArgs {
    /// The model package folder [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Positions per batch size (drawn by seeded random play from the start position).
    #[arg(long, default_value_t = 64)]
    positions: usize,
    /// Batch sizes, comma-separated.
    #[arg(long, default_value = "1,8,32", value_delimiter = ',')]
    batch: Vec<usize>,
    /// Moves to ask for: a number or `all`.
    #[arg(long, default_value = "all")]
    k: String,
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

/// Runs `mavboard bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let What::Inference(a) = args.what;
    let dir = match a.model {
        Some(d) => d,
        None => default_package_dir()?,
    };
    let top_k = if a.k == "all" {
        TopK::All
    } else {
        TopK::Count(a.k.parse().with_context(|| format!("--k {} is neither a number nor `all`", a.k))?)
    };
    let mut options = SessionOptions { ort_lib: a.ort_lib, ..SessionOptions::default() };
    options.threads.intra_op = a.threads.max(1);
    let (mut evaluator, package) = load_evaluator(&dir, &options)?;
    let positions = random_positions(a.positions.max(1), a.seed);
    let mode = if a.free { DecodeMode::Free } else { DecodeMode::Constrained };
    let requests: Vec<EvalRequest<ChessState>> = positions
        .into_iter()
        .map(|s| {
            let mut r = EvalRequest::values(s);
            r.top_k = top_k;
            r.mode = mode;
            r
        })
        .collect();
    // Warm-up: the first run of a session allocates.
    let _ = evaluator.evaluate(&requests[..1]);
    let mut rows = Vec::new();
    if !a.json {
        println!(
            "model {} ({}), {} positions, {} ONNX Runtime thread(s), {}",
            package.manifest.name,
            package.manifest.format.name(),
            requests.len(),
            options.threads.intra_op,
            if a.free { "free decoding" } else { "constrained" }
        );
        println!("{:>6} {:>10} {:>12} {:>12} {:>10} {:>9}", "batch", "pos/s", "wall ms", "ORT ms", "wall/ORT", "tokens");
    }
    for &b in &a.batch {
        let b = b.max(1);
        let start = Instant::now();
        let mut model = Duration::ZERO;
        let mut tokens = 0usize;
        for chunk in requests.chunks(b) {
            for r in evaluator.evaluate(chunk) {
                let r = r.context("an evaluation failed")?;
                model += r.timing.model;
                tokens += r.timing.tokens;
            }
        }
        let wall = start.elapsed();
        let pps = requests.len() as f64 / wall.as_secs_f64();
        let ratio = wall.as_secs_f64() / model.as_secs_f64().max(1e-9);
        if !a.json {
            println!(
                "{b:>6} {pps:>10.1} {:>12.1} {:>12.1} {ratio:>10.2} {tokens:>9}",
                wall.as_secs_f64() * 1e3,
                model.as_secs_f64() * 1e3
            );
        }
        rows.push(serde_json::json!({
            "batch": b, "positions_per_s": pps, "wall_s": wall.as_secs_f64(), "ort_s": model.as_secs_f64(),
            "wall_over_ort": ratio, "tokens": tokens,
        }));
    }
    if a.json {
        let out = serde_json::json!({
            "model": package.manifest.name, "format": package.manifest.format.name(),
            "positions": requests.len(), "threads": options.threads.intra_op, "free": a.free, "runs": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("(wall/ORT: total time over the time inside ONNX Runtime's Session::run; 1.00 = no overhead)");
    }
    Ok(())
}
