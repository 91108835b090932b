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
use mavboard::eval::move_matching::{MatchingReport, RatedMove, move_matching};
use mavboard::eval::plot::{Series, rating_svg, series};
use mavboard::eval::puzzles::read_puzzles;
use mavboard::eval::run::{EvalReport, LabelMetrics, eval_connect_four_labels, eval_hex_labels};
use mavboard::eval::run::{PuzzleMetrics, PuzzleSearch};
use mavboard::eval::{eval_labels, eval_puzzles};
use mavboard::game::GameKind;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::inference::complete::{TraceModel, open_trace_model};
use mavboard::inference::completer::TraceDecoding;
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
    /// The model package folder [default: the shipped mav-enc-tiny]; give it again for more models, each
    /// measured on the same positions and puzzles, with one row per model at the end.
    #[arg(long)]
    model: Vec<PathBuf>,
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
    /// Write the report as JSON here too (with several models: `{"models": [{dir, name, report}, …]}`).
    #[arg(long)]
    json: Option<PathBuf>,
    /// With --puzzles: write the share of puzzles solved by rating (200-point bands) as an SVG plot here,
    /// one line per model and rule; with --move-matching, the share of moves matched by the mover's rating
    /// (100-point bands), one line per model.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Move matching (Maia's measure): predict every move of the rated games of this PGN file (WhiteElo /
    /// BlackElo) with each model's top move — its policy's when it gives one, else its best value under
    /// --matching-scoring — and report the share matched per 100-point band of the mover's rating.
    #[arg(long)]
    move_matching: Option<PathBuf>,
    /// With --move-matching: leave out each game's first plies.
    #[arg(long, default_value_t = 0)]
    skip_plies: usize,
    /// With --move-matching: the rule a model without a policy picks its top move by.
    #[arg(long, default_value_t = Scoring::Mean)]
    matching_scoring: Scoring,
    /// With --move-matching --plot: draw only bands with at least this many moves.
    #[arg(long, default_value_t = 20)]
    plot_min_moves: u64,
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
    /// How the model writes its traces with --internal, comma-separated, each measured on the same
    /// positions: `free` (the model writes every move and state) and `rules` (moves legal and states by the
    /// rules; values and choices the model's).
    #[arg(long, value_delimiter = ',', default_value = "free,rules")]
    trace_decoding: Vec<TraceDecoding>,
    /// Solve the puzzles with MAV-MCTS: this many simulations per solver move, a fresh tree each (the
    /// model's values alone choose when absent); --batch evaluations per model call.
    #[arg(long, requires = "puzzles", value_parser = clap::value_parser!(u64).range(1..))]
    sims: Option<u64>,
}

fn print_internal(m: &InternalMetrics, first: bool) {
    if first {
        outln!(
            "internal search b{} d{}: {} positions; the explicit search over the model plays the labels' best \
             move {:.1}%",
            m.breadth,
            m.depth,
            m.positions,
            100.0 * m.explicit_best.mean
        );
    }
    if let Some(why) = &m.failed_why {
        outln!("  the search failed on {} positions (left out above): {why}", m.failed);
    }
    if let Some(why) = &m.unavailable_why {
        outln!("  no model-written trace for {} positions: {why}", m.unavailable);
    }
    if m.parsed.count > 0 {
        let guard = match m.decoding {
            TraceDecoding::Free => format!(
                "; repeats avoided per trace {:.1} (--repeat-guard {})",
                m.repeats_avoided.mean,
                if m.repeat_guard { "on" } else { "off" }
            ),
            TraceDecoding::Rules => String::new(),
        };
        outln!(
            "  model traces, {} decoding: {} written, {:.1}% readable, {:.1}% with no issue, {:.1}% truncated; \
             issues per readable trace {:.1} (median {}); {:.0} tokens written on average{guard}",
            m.decoding,
            m.parsed.count,
            100.0 * m.parsed.mean,
            100.0 * m.clean.mean,
            100.0 * m.truncated.mean,
            m.issues.mean,
            m.median_issues().map_or_else(|| "-".to_owned(), |v| v.to_string()),
            m.tokens.mean,
        );
        outln!(
            "  issues that break the tree (illegal moves, wrong states, lines out of the format, nodes missing \
             from a trace not cut) per readable trace {:.2}; {:.1}% of readable traces have none",
            m.tree_issues.mean,
            100.0 * m.legal_tree.mean
        );
        outln!(
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
    outln!(
        "{name}: {} positions (a random move is a best-valued one {:.1}% of the time)",
        g.positions,
        100.0 * g.random_best_value.mean
    );
    for m in &g.scored {
        let label = m.scoring.to_string();
        outln!(
            "  {label:<13} action accuracy {:5.1}% (a best-valued move {:5.1}%)   Kendall tau {:6.3}   win-prob MAE {:.3}",
            100.0 * m.action_accuracy.mean,
            100.0 * m.best_value_accuracy.mean,
            m.kendall_tau.mean,
            m.win_prob_mae.mean
        );
        if m.result_accuracy.count > 0 {
            outln!(
                "                keeps the proven result {:5.1}% ({} positions solved exactly; a random move {:.1}%)",
                100.0 * m.result_accuracy.mean,
                m.result_accuracy.count,
                100.0 * g.random_result.mean
            );
        }
    }
    if g.free_measured() {
        outln!(
            "  free decoding: legal precision {:.3} recall {:.3} F1 {}; best action legal {:.1}%; next state \
             correct {:.1}%; unusable outputs {}",
            g.free_legal_precision.mean,
            g.free_legal_recall.mean,
            g.free_legal_f1().map_or_else(|| "-".to_owned(), |f1| format!("{f1:.3}")),
            100.0 * g.free_best_legal.mean,
            100.0 * g.free_next_state_correct.mean,
            g.free_failures
        );
    }
}

/// Runs `mavboard eval`: every model of `--model` (the shipped one when none is given) on the same
/// positions and puzzles, one after another, then one row per model when there are several.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.labels.is_none() && args.puzzles.is_none() && args.move_matching.is_none() {
        anyhow::bail!(
            "give --labels DIR (a `mavboard datagen labels` folder), --puzzles CSV and/or --move-matching PGN"
        );
    }
    if args.plot.is_some() && (args.puzzles.is_some() == args.move_matching.is_some()) {
        anyhow::bail!(
            "--plot draws the puzzles (--puzzles) or the move matching (--move-matching): give one of them"
        );
    }
    let dirs = if args.model.is_empty() { vec![default_package_dir()?] } else { args.model.clone() };
    // Checked before the long label runs, so a typo does not cost them.
    let internal = match &args.internal {
        Some(spec) => Some((super::internal::parse_breadth_depth(spec)?, args.internal_scoring)),
        None => None,
    };
    let options = SessionOptions { ort_lib: args.ort_lib.clone(), ..SessionOptions::default() };
    let labels = match &args.labels {
        Some(dir) => Some(read_labels(dir, args.limit)?),
        None => None,
    };
    let puzzles = match &args.puzzles {
        Some(path) => {
            let mut ps = read_puzzles(path)?;
            if let Some(n) = args.limit {
                ps.truncate(n);
            }
            Some(ps)
        }
        None => None,
    };
    let rated = match &args.move_matching {
        Some(path) => Some(super::eval_matching::read(path, args.skip_plies, args.limit)?),
        None => None,
    };
    let mut runs = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        if dirs.len() > 1 {
            outln!(
                "{}== model {} of {}: {}",
                if i > 0 { "\n" } else { "" },
                i + 1,
                dirs.len(),
                dir.display()
            );
        }
        let (name, mut report) =
            eval_model(dir, &args, &options, labels.as_ref(), puzzles.as_deref(), internal)?;
        let mut name = name;
        if let Some(moves) = &rated {
            let (package, m) = matching(dir, &options, moves, &args)?;
            name = package;
            report.move_matching = Some(m);
        }
        runs.push(ModelRun { dir: dir.display().to_string(), name, report });
    }
    let matched: Vec<(String, &MatchingReport)> =
        runs.iter().filter_map(|r| r.report.move_matching.as_ref().map(|m| (r.name.clone(), m))).collect();
    if runs.len() > 1 && (labels.is_some() || puzzles.is_some()) {
        print_summary(&runs);
    }
    if matched.len() > 1 {
        super::eval_matching::print_side_by_side(&matched);
    }
    if let (Some(path), false) = (&args.plot, matched.is_empty()) {
        let svg = super::eval_matching::plot_svg(&matched, args.plot_min_moves)?;
        write_atomic(path, svg.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        outln!("move matching by rating plotted in {}", path.display());
    } else if let Some(path) = &args.plot {
        let lines: Vec<Series> = runs
            .iter()
            .filter_map(|r| r.report.puzzles.as_ref().map(|m| series(&r.name, m)))
            .flatten()
            .collect();
        let svg = rating_svg(&lines).context("--plot")?;
        write_atomic(path, svg.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        outln!("puzzle accuracy by rating plotted in {}", path.display());
    }
    if let Some(path) = &args.json {
        let text = match runs.as_slice() {
            [one] => serde_json::to_string_pretty(&one.report)?,
            _ => serde_json::to_string_pretty(&serde_json::json!({ "models": runs }))?,
        };
        write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// One model's report, with where it came from.
#[derive(serde::Serialize)]
struct ModelRun {
    dir: String,
    name: String,
    report: EvalReport,
}

/// The validation records of a label folder, by game (at most `limit` of each).
struct Labels {
    dir: PathBuf,
    chess: Vec<LabelRecord>,
    connect_four: Vec<LabelRecord>,
    hex: Vec<LabelRecord>,
}

fn read_labels(dir: &std::path::Path, limit: Option<usize>) -> anyhow::Result<Labels> {
    let mut recs = Vec::new();
    for shard in shard_files(dir)? {
        recs.extend(read_shard(&shard)?.into_iter().filter(|r| r.split == Split::Val));
    }
    anyhow::ensure!(!recs.is_empty(), "{} has no validation records", dir.display());
    let of_game = |game: LabelGame| -> Vec<LabelRecord> {
        let mut v: Vec<LabelRecord> = recs.iter().filter(|r| r.game == game).cloned().collect();
        if let Some(n) = limit {
            v.truncate(n);
        }
        v
    };
    Ok(Labels {
        dir: dir.to_path_buf(),
        chess: of_game(LabelGame::Chess),
        connect_four: of_game(LabelGame::ConnectFour),
        hex: of_game(LabelGame::Hex),
    })
}

/// One row per model: its action accuracy on the chess positions and its puzzles solved, under each rule.
fn print_summary(runs: &[ModelRun]) {
    outln!("\n{:<24} {:<13} {:>10} {:>10} {:>10}", "model", "rule", "game acc%", "book acc%", "puzzles%");
    for r in runs {
        let rules: Vec<Scoring> = r
            .report
            .puzzles
            .as_ref()
            .map(|m| m.scored.iter().map(|s| s.scoring).collect())
            .filter(|v: &Vec<Scoring>| !v.is_empty())
            .unwrap_or_else(|| r.report.game_positions.scored.iter().map(|s| s.scoring).collect());
        for scoring in rules {
            let acc = |g: &LabelMetrics| {
                g.scored
                    .iter()
                    .find(|m| m.scoring == scoring && g.positions > 0)
                    .map_or_else(|| "-".to_owned(), |m| format!("{:.1}", 100.0 * m.action_accuracy.mean))
            };
            let puzzles = r
                .report
                .puzzles
                .as_ref()
                .and_then(|m| m.scored(scoring))
                .map_or_else(|| "-".to_owned(), |s| format!("{:.1}", 100.0 * s.solved.mean));
            outln!(
                "{:<24} {:<13} {:>10} {:>10} {:>10}",
                r.name,
                scoring.to_string(),
                acc(&r.report.game_positions),
                acc(&r.report.book_positions),
                puzzles
            );
        }
    }
}

/// The move matching of the model in `dir` on `moves`, with the package's name.
fn matching(
    dir: &std::path::Path,
    options: &SessionOptions,
    moves: &[RatedMove],
    args: &Args,
) -> anyhow::Result<(String, MatchingReport)> {
    let mavboard::inference::LoadedModel { mut evaluator, package, .. } = load_evaluator(dir, options)?;
    let name = opened(&package, dir);
    let pb = bar(moves.len() as u64, "move matching");
    let m = move_matching(evaluator.as_mut(), moves, args.batch, args.matching_scoring, |n| {
        pb.set_position(n as u64)
    });
    pb.finish_and_clear();
    super::eval_matching::print(&m);
    Ok((name, m))
}

/// Says which package was opened from `dir`; its name.
fn opened(package: &mavboard::model::ModelPackage, dir: &std::path::Path) -> String {
    outln!("model {} ({}, {})", package.manifest.name, package.manifest.format.name(), dir.display());
    package.manifest.name.clone()
}

/// Measures the model in `dir` on the label sets and puzzles; its name and report.
fn eval_model(
    dir: &std::path::Path,
    args: &Args,
    options: &SessionOptions,
    labels: Option<&Labels>,
    puzzles: Option<&[mavboard::eval::puzzles::Puzzle]>,
    internal: Option<((usize, u32), Scoring)>,
) -> anyhow::Result<(String, EvalReport)> {
    let mut report = EvalReport::default();
    // The package's name, from the first session opened (every run opens at least one).
    let mut name = dir.display().to_string();
    if let Some(labels) = labels {
        let (chess, four, hex) = (&labels.chess, &labels.connect_four, &labels.hex);
        if !chess.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator(dir, options)?;
            name = opened(&package, dir);
            let pb = bar(chess.len() as u64, "chess  ");
            eval_labels(evaluator.as_mut(), chess, args.batch, &mut report, |n| pb.set_position(n))?;
            pb.finish_and_clear();
            print_group("game positions", &report.game_positions);
            print_group("book positions", &report.book_positions);
        }
        if !four.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator_for::<ConnectFourState>(dir, options, GameKind::ConnectFour)?;
            name = opened(&package, dir);
            let pb = bar(four.len() as u64, "connect four");
            eval_connect_four_labels(evaluator.as_mut(), four, args.batch, &mut report, |n| {
                pb.set_position(n)
            })?;
            pb.finish_and_clear();
            if let Some(g) = &report.connect_four {
                print_group("connect four positions", g);
            }
        }
        if !hex.is_empty() {
            let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
                load_evaluator_for::<HexState>(dir, options, GameKind::Hex)?;
            name = opened(&package, dir);
            let pb = bar(hex.len() as u64, "hex    ");
            eval_hex_labels(evaluator.as_mut(), hex, args.batch, &mut report, |n| pb.set_position(n))?;
            pb.finish_and_clear();
            if let Some(g) = &report.hex {
                print_group("hex positions", g);
            }
        }
        if let Some(note) = &report.free_note {
            outln!("free decoding not measured: {note}");
        }
        if let Some((shape, scoring)) = internal {
            anyhow::ensure!(
                !chess.is_empty(),
                "--internal measures chess positions, and {} has no chess validation records",
                labels.dir.display()
            );
            eval_internal_runs(dir, args, options, chess, shape, scoring, &mut report)?;
        }
    }
    if let Some(ps) = puzzles {
        let mavboard::inference::LoadedModel { mut evaluator, package, .. } = load_evaluator(dir, options)?;
        name = opened(&package, dir);
        let pb = bar(ps.len() as u64, "puzzles");
        let search = args.sims.map(|simulations| PuzzleSearch { simulations, batch: args.batch.max(1) });
        let m = eval_puzzles(evaluator.as_mut(), ps, search, &args.scoring, |n| pb.set_position(n))?;
        pb.finish_and_clear();
        print_puzzles(&m, args.sims, package.manifest.format.capabilities().values);
        report.puzzles = Some(m);
    }
    Ok((name, report))
}

/// `--internal`: the model's own search trace over the chess validation records, once per trace decoding
/// (once only for a package that writes no trace: the decodings differ only in its trace).
fn eval_internal_runs(
    dir: &std::path::Path,
    args: &Args,
    options: &SessionOptions,
    chess: &[LabelRecord],
    (breadth, depth): (usize, u32),
    scoring: Scoring,
    report: &mut EvalReport,
) -> anyhow::Result<()> {
    let (mut model, package) =
        open_trace_model(dir, options).with_context(|| format!("opening the model in {}", dir.display()))?;
    args.repeat_guard.apply(&mut model);
    let buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(u32::MAX))
        .context("mav.json num_buckets")?;
    let writes = matches!(model, TraceModel::Writer(_));
    let decodings = args.trace_decoding.iter().take(if writes { usize::MAX } else { 1 });
    for (i, &decoding) in decodings.enumerate() {
        let config =
            InternalConfig { breadth, depth, scoring, state_format: StateFormat::Fen, buckets, decoding };
        let pb = bar(chess.len() as u64, &format!("internal ({decoding})"));
        let mut m = eval_internal(&mut model, chess, &config, |n| pb.set_position(n));
        m.repeat_guard = args.repeat_guard == super::internal::RepeatGuard::On
            && decoding == TraceDecoding::Free
            && m.parsed.count > 0;
        pb.finish_and_clear();
        print_internal(&m, i == 0);
        report.internal.push(m);
    }
    Ok(())
}

/// The puzzles' lines: solved and first move found per rule, by rating band, and the puzzles left out.
fn print_puzzles(m: &PuzzleMetrics, sims: Option<u64>, values: bool) {
    let how = match sims {
        Some(n) => format!(" (MAV-MCTS, {n} simulations per move)"),
        None => String::new(),
    };
    outln!("puzzles: {}{how}", m.puzzles);
    if !values {
        outln!("  (a policy without values: every rule plays its most likely move)");
    }
    for s in &m.scored {
        outln!(
            "  {:<13} solved {:5.1}%   first move found {:5.1}%",
            s.scoring.to_string(),
            100.0 * s.solved.mean,
            100.0 * s.first_move.mean
        );
    }
    if !m.by_rating.is_empty() {
        let mut head = format!("  {:<11} {:>7}", "rating", "puzzles");
        for s in &m.scored {
            head.push_str(&format!(" {:>13}", s.scoring.to_string()));
        }
        outln!("{head}");
        for b in &m.by_rating {
            let count = b.solved.first().map_or(0, |s| s.count);
            let mut line = format!("  {:<11} {count:>7}", format!("{}-{}", b.from, b.to - 1));
            for s in &b.solved {
                line.push_str(&format!(" {:>12.1}%", 100.0 * s.mean));
            }
            outln!("{line}");
        }
    }
    if let Some(why) = &m.skipped_why {
        outln!("{} puzzle(s) left out: their solution does not replay (the first: {why})", m.skipped);
    }
}
