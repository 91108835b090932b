//! `mavboard bench inference`: how fast model packages evaluate positions through mavboard's evaluators, at
//! several batch sizes and `%top_k` settings, and the ratio of the wall time to the time ONNX Runtime itself
//! spends in `Session::run` in the same run (the rest is mavboard's overhead: prompts, tokenizing, tensors,
//! decoding logic, result building).
//!
//! `mavboard bench search`: MAV-MCTS with the model — simulations per second at several batch sizes, and the
//! search overhead: the wall time of whole searches over the summed time inside ONNX Runtime (and over the
//! time inside the evaluator's calls, which separates the tree's own cost from the evaluator's).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, TopK};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::model::package::shipped_package_dirs;
use mavboard::search::mcts::{Mcts, MctsParams, RunLimits, VirtualCounts};
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
    /// MAV-MCTS with a model: simulations/s at each batch size, and wall time over model time.
    Search(SearchArgs),
    /// The exact Connect Four solver: nodes/s and the time to solve every move of positions of 8, 12 and 16
    /// plies (and the empty board with --empty).
    Solve(super::solve::BenchArgs),
}

/// Arguments of `mavboard bench search`.
#[derive(Debug, clap::Args)]
struct SearchArgs {
    /// The model package folder [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Simulations per search.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Batch sizes b, comma-separated.
    #[arg(long, default_value = "1,8,16", value_delimiter = ',')]
    batch: Vec<usize>,
    /// Searches per batch size (one per position, drawn by seeded random play).
    #[arg(long, default_value_t = 8)]
    positions: usize,
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

/// An evaluator decorator that adds up where the time of its calls went.
struct Timed<'a> {
    inner: &'a mut (dyn Evaluator<ChessState> + Send),
    /// Summed per-request model time (inside ONNX Runtime's `Session::run`).
    model: Duration,
    /// Wall time inside `evaluate` calls.
    inside: Duration,
    batches: u64,
    requests: u64,
}

impl Evaluator<ChessState> for Timed<'_> {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        let start = Instant::now();
        let out = self.inner.evaluate(requests);
        self.inside += start.elapsed();
        self.batches += 1;
        self.requests += requests.len() as u64;
        self.model += out.iter().flatten().map(|r| r.timing.model).sum::<Duration>();
        out
    }
}

/// One batch size's measurement.
#[derive(Debug, serde::Serialize)]
struct SearchRow {
    batch: usize,
    searches: usize,
    simulations: u64,
    model_calls: u64,
    evaluate_calls: u64,
    wall_s: f64,
    evaluate_s: f64,
    ort_s: f64,
    sims_per_s: f64,
    wall_over_ort: f64,
    wall_over_evaluate: f64,
}

fn bench_search(a: SearchArgs) -> anyhow::Result<()> {
    let dir = match a.model.clone() {
        Some(d) => d,
        None => mavboard::model::package::default_package_dir()?,
    };
    let mut options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
    options.threads.intra_op = a.threads.max(1);
    let (mut evaluator, package) =
        load_evaluator(&dir, &options).with_context(|| format!("opening {}", dir.display()))?;
    anyhow::ensure!(a.sims >= 1, "--sims must be at least 1");
    let positions = random_positions(a.positions.max(1), a.seed);
    let params = |sims: u64| MctsParams {
        virtual_counts: VirtualCounts::paper_dynamic(sims),
        ..MctsParams::default()
    };
    // Warm-up: one search at the largest batch (first runs of a session allocate).
    let warm_b = a.batch.iter().copied().max().unwrap_or(16).max(1);
    let mut warm = Mcts::new(positions[0].clone(), 0, params(a.sims))?;
    warm.run(evaluator.as_mut(), RunLimits { simulations: a.sims.min(64), batch_size: warm_b })?;
    if !a.json {
        println!(
            "{} ({}), {} searches of {} simulations per row, {} ONNX Runtime thread(s), mean scoring, rules world \
             model, synchronous driver (Mcts::run)",
            package.manifest.name,
            package.manifest.format.name(),
            positions.len(),
            a.sims,
            options.threads.intra_op
        );
        println!(
            "{:>6} {:>9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10}",
            "batch", "sims", "calls", "wall ms", "eval ms", "ORT ms", "sims/s", "wall/ORT", "wall/eval"
        );
    }
    let mut rows = Vec::new();
    for &b in &a.batch {
        let b = b.max(1);
        let mut timed = Timed {
            inner: evaluator.as_mut(),
            model: Duration::ZERO,
            inside: Duration::ZERO,
            batches: 0,
            requests: 0,
        };
        let (mut wall, mut sims) = (Duration::ZERO, 0u64);
        for s in &positions {
            let mut mcts = Mcts::new(s.clone(), 0, params(a.sims))?;
            let start = Instant::now();
            mcts.run(&mut timed, RunLimits { simulations: a.sims, batch_size: b })?;
            wall += start.elapsed();
            sims += mcts.stats().simulations;
        }
        let secs = wall.as_secs_f64().max(1e-9);
        let row = SearchRow {
            batch: b,
            searches: positions.len(),
            simulations: sims,
            model_calls: timed.requests,
            evaluate_calls: timed.batches,
            wall_s: secs,
            evaluate_s: timed.inside.as_secs_f64(),
            ort_s: timed.model.as_secs_f64(),
            sims_per_s: sims as f64 / secs,
            wall_over_ort: secs / timed.model.as_secs_f64().max(1e-9),
            wall_over_evaluate: secs / timed.inside.as_secs_f64().max(1e-9),
        };
        if !a.json {
            println!(
                "{:>6} {:>9} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>9.1} {:>9.3} {:>10.3}",
                row.batch,
                row.simulations,
                row.model_calls,
                row.wall_s * 1e3,
                row.evaluate_s * 1e3,
                row.ort_s * 1e3,
                row.sims_per_s,
                row.wall_over_ort,
                row.wall_over_evaluate
            );
        }
        rows.push(row);
    }
    if a.json {
        let out = serde_json::json!({
            "model": package.manifest.name, "format": package.manifest.format.name(), "sims": a.sims,
            "threads": options.threads.intra_op, "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "(wall: the searches' wall time; eval: time inside the evaluator's calls; ORT: the summed time inside \
             ONNX Runtime's Session::run. wall/ORT is the search overhead over pure model time, wall/eval the \
             tree's own share; 1.000 = none)"
        );
    }
    Ok(())
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
        What::Search(a) => return bench_search(a),
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
                        "{:<14} {:<13} {:>4} {:>6} {:>9} {:>10.0} {:>10.1} {:>10.1} {:>9.3}",
                        row.model,
                        row.format,
                        row.k,
                        row.batch,
                        // Three significant digits: a large model does well under one position a second.
                        if row.positions_per_s >= 10.0 {
                            format!("{:.1}", row.positions_per_s)
                        } else {
                            format!("{:.3}", row.positions_per_s)
                        },
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
