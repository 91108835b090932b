//! `mavboard annotate`: review every game of a PGN file with the model (or a UCI engine such as Stockfish,
//! with the model's view beside it) and write it back annotated (`[%eval]`, `?!`/`?`/`??`, best-move
//! comments), with an optional JSON report. Resumable after Ctrl+C.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mavboard::engine::{EvaluatorBox, EvaluatorFactory, FactoryError};
use mavboard::inference::device::SessionThreads;
use mavboard::inference::evaluator::Scoring;
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::model::ModelPackage;
use mavboard::model::package::default_package_dir;
use mavboard::review::batch::JudgeSpec;
use mavboard::review::{
    BatchEnd, BatchOptions, BatchPaths, Progress, ReviewOptions, Thresholds, review_file,
};
use mavboard::uci::SearchLimits;
use mavboard::uci::locate::locate_stockfish;

/// Arguments of `mavboard annotate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The PGN file to review.
    input: PathBuf,
    /// Where to write the annotated PGN [default: IN.annotated.pgn beside the input].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Run an MCTS of this many simulations per position (default: the model alone, one call per position).
    #[arg(long, conflicts_with = "reviewer")]
    sims: Option<u64>,
    /// Who judges the moves: `model` (the default), or `uci` (Stockfish, found as for the app's UCI
    /// panel) or `uci:PATH` (any UCI engine with MultiPV) — then the model's view is kept beside each move:
    /// its values and ranks of the played and the engine's best move, and where it would class the move
    /// differently ("model disagrees").
    #[arg(long)]
    reviewer: Option<String>,
    /// With a UCI reviewer: search each position to this depth [default: 10 unless --nodes is given].
    #[arg(long, requires = "reviewer")]
    depth: Option<u32>,
    /// With a UCI reviewer: search each position this many nodes.
    #[arg(long, requires = "reviewer")]
    nodes: Option<u64>,
    /// Scoring of a move's value distribution: max, mean, quantile:Q (0 < Q < 1) or mean-sd:L.
    #[arg(long, default_value_t = Scoring::Mean)]
    scoring: Scoring,
    /// Worker threads, each with its own copy of the model; games are spread over them.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Positions per model call (the MCTS batch size with --sims).
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Also write a JSON report (per game: headers, every move's values, loss, class, accuracy).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Classification thresholds on the −1..1 winning-chances scale: inaccuracy,mistake,blunder.
    #[arg(long, default_value = "0.1,0.2,0.3")]
    thresholds: String,
    /// The model package folder [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
}

fn message(p: &Progress, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let done = p.games - p.resumed;
    let mut text = format!(
        "{} games, {:.2} games/s, {:.1} positions/s",
        p.games,
        done as f64 / secs,
        p.positions as f64 / secs
    );
    if p.unreadable + p.failed > 0 {
        text.push_str(&format!(" ({} unreadable, {} failed)", p.unreadable, p.failed));
    }
    text
}

/// The UCI judge `--reviewer` asks for (`None` for the model).
fn judge_spec(
    reviewer: Option<&str>,
    depth: Option<u32>,
    nodes: Option<u64>,
) -> anyhow::Result<Option<JudgeSpec>> {
    let path = match reviewer {
        None | Some("model") => return Ok(None),
        Some("uci") => locate_stockfish(None)?,
        Some(other) => match other.strip_prefix("uci:") {
            Some(path) if !path.is_empty() => locate_stockfish(Some(std::path::Path::new(path)))?,
            _ => anyhow::bail!("--reviewer {other}: use model, uci or uci:PATH"),
        },
    };
    anyhow::ensure!(depth != Some(0) && nodes != Some(0), "--depth and --nodes must be at least 1");
    let limits = SearchLimits {
        depth: depth.or(if nodes.is_none() { Some(10) } else { None }),
        nodes,
        ..SearchLimits::default()
    };
    Ok(Some(JudgeSpec { path, limits }))
}

/// Runs `mavboard annotate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scoring = args.scoring;
    let review = ReviewOptions {
        scoring,
        simulations: args.sims,
        batch_size: args.batch,
        thresholds: Thresholds::parse(&args.thresholds)?,
    };
    review.validate()?;
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    let judge = judge_spec(args.reviewer.as_deref(), args.depth, args.nodes)?;
    let dir = match args.model {
        Some(d) => d,
        None => default_package_dir()?,
    };
    let package = ModelPackage::open(&dir)?;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let session = SessionOptions {
        ort_lib: args.ort_lib,
        threads: SessionThreads { intra_op: (cores / args.threads).clamp(1, 4) },
        ..SessionOptions::default()
    };
    let factory: EvaluatorFactory = Arc::new(move |_worker| -> Result<EvaluatorBox, FactoryError> {
        let mavboard::inference::LoadedModel { evaluator, .. } = load_evaluator(&dir, &session)?;
        Ok(evaluator)
    });
    let paths = BatchPaths {
        output: args.output.unwrap_or_else(|| BatchPaths::default_output(&args.input)),
        input: args.input,
        report: args.report,
    };
    let options = BatchOptions { review, workers: args.threads, model: package.manifest.name.clone(), judge };

    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("could not install the Ctrl+C handler")?;

    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} [{bar:30}] {percent:>3}% {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let judged_by =
        options.judge.as_ref().map(|j| format!("{} judging, ", j.path.display())).unwrap_or_default();
    eprintln!(
        "annotating {} with {judged_by}{} ({}) on {} worker(s) → {}",
        paths.input.display(),
        options.model,
        options.review.describe(),
        options.workers,
        paths.output.display()
    );
    let summary = review_file(&paths, &options, factory, &stop, &mut |p| {
        if p.games == p.resumed && p.resumed > 0 {
            bar.suspend(|| eprintln!("resuming after {} games done by an earlier run", p.resumed));
        }
        bar.set_length(p.input_len.max(1));
        bar.set_position(p.bytes_read);
        bar.set_message(message(p, started));
    });
    bar.finish_and_clear();
    let summary = summary?;
    let p = summary.progress;
    match summary.end {
        BatchEnd::Finished => {
            outln!(
                "{} games → {} ({} reviewed, {} unreadable and copied, {} failed and copied{}) in {:.1}s",
                p.games,
                paths.output.display(),
                p.reviewed,
                p.unreadable,
                p.failed,
                if p.resumed > 0 { format!(", {} from an earlier run", p.resumed) } else { String::new() },
                started.elapsed().as_secs_f64()
            );
            if let Some(r) = &paths.report {
                outln!("report → {}", r.display());
            }
            Ok(())
        }
        BatchEnd::Interrupted => anyhow::bail!(
            "interrupted after {} games; the partial output is {} and {} records where it stopped: run the \
             same command again to resume",
            p.games,
            paths.partial().display(),
            paths.state().display()
        ),
    }
}
