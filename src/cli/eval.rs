//! `mavboard eval`: a model against Stockfish labels (validation split) and Lichess puzzles.

use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mavboard::datagen::record::Split;
use mavboard::datagen::record::{LabelGame, LabelRecord};
use mavboard::datagen::render_run::shard_files;
use mavboard::datagen::shard::read_shard;
use mavboard::datagen::shard::write_atomic;
use mavboard::eval::internal::{InternalMetrics, eval_internal};
use mavboard::eval::puzzles::read_puzzles;
use mavboard::eval::run::PuzzleSearch;
use mavboard::eval::run::{EvalReport, LabelMetrics, eval_connect_four_labels, eval_hex_labels};
use mavboard::eval::{eval_labels, eval_puzzles};
use mavboard::game::GameKind;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::inference::complete::open_trace_model;
use mavboard::inference::evaluator::Scoring;
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::{load_evaluator, load_evaluator_for};
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::StateFormat;
use mavboard::model::package::default_package_dir;
use mavboard::search::internal::InternalConfig;

/// Arguments of `mavboard eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model package folder [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// A label folder from `mavboard datagen labels`; its validation split is used (chess, Connect Four
    /// and Hex labels are each measured with the model opened for that game).
    #[arg(long)]
    labels: Option<PathBuf>,
    /// A Lichess puzzle CSV (PuzzleId,FEN,Moves,Rating,…).
    #[arg(long)]
    puzzles: Option<PathBuf>,
    /// Use at most this many positions of each game / puzzles.
    #[arg(long)]
    limit: Option<usize>,
    /// Requests per model call.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// The scoring rules the puzzles are solved with, comma-separated (each one solves every puzzle):
    /// max, mean, quantile:Q, mean-sd:L. Label sets are always measured under max, mean, quantile:0.25 and
    /// mean-sd:1 (no extra model calls).
    #[arg(long, value_delimiter = ',', default_values_t = Scoring::ALL)]
    scoring: Vec<Scoring>,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// Write the report as JSON here too.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Measure internal search as `b,d` (e.g. 2,1): on the chess validation positions of --labels (at most
    /// --limit), the explicit minimax over the model's values and, for a package trained on traces, the
    /// model's own trace beside it (readable, issues, same choice, the labels' best move).
    #[arg(long, requires = "labels")]
    internal: Option<String>,
    /// Scoring of the explicit search of --internal: max, mean, quantile:Q or mean-sd:L.
    #[arg(long, default_value_t = Scoring::Mean)]
    internal_scoring: Scoring,
    /// How the model decodes its traces with --internal: `on` keeps it from listing a move twice on one
    /// line (moves of one token: chess, Connect Four), `off` is plain greedy decoding.
    #[arg(long, value_enum, default_value_t = super::internal::RepeatGuard::On)]
    repeat_guard: super::internal::RepeatGuard,
    /// Solve the puzzles with MAV-MCTS: this many simulations per solver move, a fresh tree each (the
    /// model's values alone choose when absent); --batch evaluations per model call.
    #[arg(long, requires = "puzzles", value_parser = clap::value_parser!(u64).range(1..))]
    sims: Option<u64>,
}

fn print_internal(m: &InternalMetrics) {
    println!(
        "internal search b{} d{}: {} positions; the explicit search over the model plays the labels' best move \
         {:.1}%",
        m.breadth,
        m.depth,
        m.positions,
        100.0 * m.explicit_best.mean
    );
    if let Some(why) = &m.failed_why {
        println!("  the search failed on {} positions (left out above): {why}", m.failed);
    }
    if let Some(why) = &m.unavailable_why {
        println!("  no model-written trace for {} positions: {why}", m.unavailable);
    }
    if m.parsed.count > 0 {
        println!(
            "  model traces: {} written, {:.1}% readable, {:.1}% with no issue, {:.1}% truncated; issues per \
             readable trace {:.1} (median {}); {:.0} tokens written on average; repeats avoided per trace {:.1} \
             (--repeat-guard {})",
            m.parsed.count,
            100.0 * m.parsed.mean,
            100.0 * m.clean.mean,
            100.0 * m.truncated.mean,
            m.issues.mean,
            m.median_issues().map_or_else(|| "-".to_owned(), |v| v.to_string()),
            m.tokens.mean,
            m.repeats_avoided.mean,
            if m.repeat_guard { "on" } else { "off" }
        );
        println!(
            "  the model plays the explicit search's move {:.1}%, the labels' best move {:.1}%; the same tree \
             as the explicit search {:.1}% of readable traces",
            100.0 * m.same_choice.mean,
            100.0 * m.model_best.mean,
            100.0 * m.same_tree.mean
        );
    }
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} {per_sec} eta {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_prefix(what.to_owned());
    pb
}

fn print_group(name: &str, g: &LabelMetrics) {
    if g.positions == 0 {
        return;
    }
    println!(
        "{name}: {} positions (a random move is a best-valued one {:.1}% of the time)",
        g.positions,
        100.0 * g.random_best_value.mean
    );
    for m in &g.scored {
        let label = m.scoring.to_string();
        println!(
            "  {label:<13} action accuracy {:5.1}% (a best-valued move {:5.1}%)   Kendall tau {:6.3}   win-prob MAE {:.3}",
            100.0 * m.action_accuracy.mean,
            100.0 * m.best_value_accuracy.mean,
            m.kendall_tau.mean,
            m.win_prob_mae.mean
        );
        if m.result_accuracy.count > 0 {
            println!(
                "                keeps the proven result {:5.1}% ({} positions solved exactly; a random move {:.1}%)",
                100.0 * m.result_accuracy.mean,
                m.result_accuracy.count,
                100.0 * g.random_result.mean
            );
        }
    }
    if let Some(f1) = g.free_legal_f1() {
        println!(
            "  free decoding: legal precision {:.3} recall {:.3} F1 {:.3}; best action legal {:.1}%; next state \
             correct {:.1}%; unusable outputs {}",
            g.free_legal_precision.mean,
            g.free_legal_recall.mean,
            f1,
            100.0 * g.free_best_legal.mean,
            100.0 * g.free_next_state_correct.mean,
            g.free_failures
        );
    }
}

/// Runs `mavboard eval`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.labels.is_none() && args.puzzles.is_none() {
        anyhow::bail!("give --labels DIR (a `mavboard datagen labels` folder) and/or --puzzles CSV");
    }
    let dir = match args.model {
        Some(d) => d,
        None => default_package_dir()?,
    };
    // Checked before the long label runs, so a typo does not cost them.
    let internal = match &args.internal {
        Some(spec) => Some((super::internal::parse_breadth_depth(spec)?, args.internal_scoring)),
        None => None,
    };
    let options = SessionOptions { ort_lib: args.ort_lib, ..SessionOptions::default() };
    let mut report = EvalReport::default();
    if let Some(labels) = &args.labels {
        let mut recs = Vec::new();
        for shard in shard_files(labels)? {
            recs.extend(read_shard(&shard)?.into_iter().filter(|r| r.split == Split::Val));
        }
        anyhow::ensure!(!recs.is_empty(), "{} has no validation records", labels.display());
        let of_game = |game: LabelGame| -> Vec<LabelRecord> {
            let mut v: Vec<LabelRecord> = recs.iter().filter(|r| r.game == game).cloned().collect();
            if let Some(n) = args.limit {
                v.truncate(n);
            }
            v
        };
        let (chess, four, hex) =
            (of_game(LabelGame::Chess), of_game(LabelGame::ConnectFour), of_game(LabelGame::Hex));
        if !chess.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator(&dir, &options)?;
            println!(
                "model {} ({}, {})",
                package.manifest.name,
                package.manifest.format.name(),
                dir.display()
            );
            let pb = bar(chess.len() as u64, "chess  ");
            eval_labels(evaluator.as_mut(), &chess, args.batch, &mut report, |n| pb.set_position(n))?;
            pb.finish_and_clear();
            print_group("game positions", &report.game_positions);
            print_group("book positions", &report.book_positions);
        }
        if !four.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator_for::<ConnectFourState>(&dir, &options, GameKind::ConnectFour)?;
            println!(
                "model {} ({}, {})",
                package.manifest.name,
                package.manifest.format.name(),
                dir.display()
            );
            let pb = bar(four.len() as u64, "connect four");
            eval_connect_four_labels(evaluator.as_mut(), &four, args.batch, &mut report, |n| {
                pb.set_position(n)
            })?;
            pb.finish_and_clear();
            if let Some(g) = &report.connect_four {
                print_group("connect four positions", g);
            }
        }
        if !hex.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator_for::<HexState>(&dir, &options, GameKind::Hex)?;
            println!(
                "model {} ({}, {})",
                package.manifest.name,
                package.manifest.format.name(),
                dir.display()
            );
            let pb = bar(hex.len() as u64, "hex    ");
            eval_hex_labels(evaluator.as_mut(), &hex, args.batch, &mut report, |n| pb.set_position(n))?;
            pb.finish_and_clear();
            if let Some(g) = &report.hex {
                print_group("hex positions", g);
            }
        }
        if let Some(note) = &report.free_note {
            println!("free decoding not measured: {note}");
        }
        if let Some(((breadth, depth), scoring)) = internal {
            anyhow::ensure!(
                !chess.is_empty(),
                "--internal measures chess positions, and {} has no chess validation records",
                labels.display()
            );
            let (mut model, package) = open_trace_model(&dir, &options)
                .with_context(|| format!("opening the model in {}", dir.display()))?;
            args.repeat_guard.apply(&mut model);
            let buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(u32::MAX))
                .context("mav.json num_buckets")?;
            let config = InternalConfig { breadth, depth, scoring, state_format: StateFormat::Fen, buckets };
            let pb = bar(chess.len() as u64, "internal");
            let mut m = eval_internal(&mut model, &chess, &config, |n| pb.set_position(n));
            m.repeat_guard = args.repeat_guard == super::internal::RepeatGuard::On && m.parsed.count > 0;
            pb.finish_and_clear();
            print_internal(&m);
            report.internal = Some(m);
        }
    }
    if let Some(path) = &args.puzzles {
        let mavboard::inference::LoadedModel { mut evaluator, package, .. } = load_evaluator(&dir, &options)?;
        println!("model {} ({}, {})", package.manifest.name, package.manifest.format.name(), dir.display());
        let mut ps = read_puzzles(path)?;
        if let Some(n) = args.limit {
            ps.truncate(n);
        }
        let pb = bar(ps.len() as u64, "puzzles");
        let search = args.sims.map(|simulations| PuzzleSearch { simulations, batch: args.batch.max(1) });
        let m = eval_puzzles(evaluator.as_mut(), &ps, search, &args.scoring, |n| pb.set_position(n))?;
        pb.finish_and_clear();
        let how = match args.sims {
            Some(n) => format!(" (MAV-MCTS, {n} simulations per move)"),
            None => String::new(),
        };
        println!("puzzles: {}{how}", m.puzzles);
        for s in &m.scored {
            println!(
                "  {:<13} solved {:5.1}%   first move found {:5.1}%",
                s.scoring.to_string(),
                100.0 * s.solved.mean,
                100.0 * s.first_move.mean
            );
        }
        if let Some(why) = &m.skipped_why {
            println!("{} puzzle(s) left out: their solution does not replay (the first: {why})", m.skipped);
        }
        report.puzzles = Some(m);
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
