//! `mavboard datagen`: training data generation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mavboard::datagen::label_settings::{DEFAULT_SEARCH_BREADTH, DEFAULT_SEARCH_DEPTH};
use mavboard::datagen::render::{DEFAULT_SEARCH_MAX_BREADTH, DEFAULT_SEARCH_MAX_TOKENS, RenderOptions};
use mavboard::datagen::render_run::render_dirs;
use mavboard::datagen::run::RunPlan;
use mavboard::datagen::{
    EpdSource, GameLabelSettings, HexLabelOptions, LabelGame, LabelSettings, Limit, PgnSource, Progress,
    ShardSpec, SourceMix, StockfishLabeler, merge_label_sets, run_game_labels_shard, run_labels_shard,
};
use mavboard::game::GameKind;
use mavboard::uci::locate::locate_stockfish;

use super::choice::GameArg;

/// Arguments of `mavboard datagen`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: DatagenCommand,
}

#[derive(Debug, clap::Subcommand)]
enum DatagenCommand {
    /// Label positions: every legal move's score, as zstd-compressed JSON-lines shards (chess: Stockfish;
    /// Connect Four and Hex: mavboard's solvers, see --game).
    Labels(Box<LabelsArgs>),
    /// Render training examples (mav-lm texts, mav-encoder and action-value records) from label folders.
    Render(RenderArgs),
    /// Join label folders into one without duplicate positions: the shards of one run (`labels --shard
    /// K/N`, giving exactly the single run's records) or ordinary folders of different seeds.
    Merge(MergeArgs),
}

/// Arguments of `mavboard datagen merge`.
#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// Label folders: every shard of one run (any order), or ordinary label folders (kept in this order,
    /// each position where it first occurs).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The label folder to write (new or empty).
    #[arg(long)]
    out: PathBuf,
}

/// Arguments of `mavboard datagen render`.
#[derive(Debug, clap::Args)]
struct RenderArgs {
    /// Label folders written by `mavboard datagen labels` (read in the order given).
    #[arg(long = "labels", required = true)]
    labels: Vec<PathBuf>,
    /// The training data folder to write (the contract in training/README.md).
    #[arg(long)]
    out: PathBuf,
    /// Random seed for headers, k, move order and state tracking.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Text examples per position.
    #[arg(long, default_value_t = 1)]
    lm_per_position: usize,
    /// Share of text examples with state tracking (when the position's parent is known).
    #[arg(long, default_value_t = 0.3)]
    state_tracking: f64,
    /// Share of text examples asking for every move (`%top_all`).
    #[arg(long, default_value_t = 0.3)]
    top_all: f64,
    /// Share of internal-search traces (`kind: "search"`) among each split's text examples, written for
    /// labels whose search trees are labelled (`datagen labels --search-share`); the paper used 0.4.
    /// 0 = none.
    #[arg(long, default_value_t = 0.0)]
    search_share: f64,
    /// The longest trace to write, in tokens (prompt + target + <eos>): the model's context length.
    #[arg(long, default_value_t = DEFAULT_SEARCH_MAX_TOKENS)]
    search_max_tokens: usize,
    /// The largest trace breadth: traces of breadth 2 up to it and depth 1–2, as far as the labels' trees
    /// reach (`datagen labels --search-breadth`).
    #[arg(long, default_value_t = DEFAULT_SEARCH_MAX_BREADTH)]
    search_max_breadth: u32,
}

/// The opening suites of `--mix`, inside `<shared>/openings/stockfish-books/`.
const BOOKS: &[(&str, &str, bool)] = &[
    ("2moves", "2moves_v1.epd", false),
    ("uho", "UHO_4060_v2.epd.zip", false),
    ("frc", "FRC_openings.epd", true),
];

#[derive(Debug, clap::Args)]
struct LabelsArgs {
    /// Output folder (created; an existing run there with the same settings is resumed).
    #[arg(long)]
    out: PathBuf,
    /// The game: chess (Stockfish), connect_four (exact solver) or hex (exact solver up to --exact-empty
    /// empty cells, else MCTS with --playouts random playouts).
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::Chess)]
    game: GameArg,
    /// Connect Four, Hex: the fewest random plies from the empty board before a chain's first labelled
    /// position [default: 10 for Connect Four (the exact solver is slow nearer the empty board), 2 for Hex].
    #[arg(long)]
    opening_min: Option<u32>,
    /// Connect Four, Hex: the most random opening plies [default: 20 for Connect Four, 12 for Hex].
    #[arg(long)]
    opening_max: Option<u32>,
    /// Hex: the board size N.
    #[arg(long, default_value_t = mavboard::game::hex::DEFAULT_SIZE)]
    size: u32,
    /// Hex: play with the swap rule.
    #[arg(long)]
    swap: bool,
    /// Hex: solve exactly when at most this many cells are empty (boards up to 7×7).
    #[arg(long, default_value_t = mavboard::datagen::game_label::DEFAULT_HEX_EXACT_EMPTY)]
    exact_empty: u32,
    /// Hex: MCTS playouts per position beyond the exact solver's reach.
    #[arg(long, default_value_t = 20_000)]
    playouts: u32,
    /// Records to write (distinct positions); with --shard, of the whole run.
    #[arg(long, default_value_t = 10_000)]
    positions: usize,
    /// Label only shard K of N of the run (0 <= K < N): every N-th chain of seeded positions, from chain
    /// K. Run each shard anywhere with the same settings, then join them with `datagen merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// With --shard: stop once the shard holds this many records [default: ceil(1.25 · positions / N) +
    /// 16]. Raise it to resume a shard that `datagen merge` found short.
    #[arg(long, requires = "shard")]
    shard_target: Option<usize>,
    /// Search depth per position [default: 8 when --nodes is not given].
    #[arg(long, conflicts_with = "nodes")]
    depth: Option<u32>,
    /// Search this many nodes per position instead of a fixed depth.
    #[arg(long)]
    nodes: Option<u64>,
    /// Worker threads, one Stockfish process each [default: the number of CPUs].
    #[arg(long)]
    threads: Option<usize>,
    /// Random seed: the same seed and settings give the same records.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Plies to play on from each seed, sampling moves from the labels (0 = seeds only).
    #[arg(long, default_value_t = 0)]
    continuations: u32,
    /// Softmax temperature over win probabilities for continuation moves (0 = always the best).
    #[arg(long, default_value_t = 0.2)]
    temperature: f64,
    /// The shared data folder holding openings/stockfish-books/.
    #[arg(long, default_value = "../shared/data")]
    shared: PathBuf,
    /// Weights of the built-in opening suites: 2moves (2moves_v1), uho (UHO_4060_v2), frc (Chess960).
    #[arg(long, default_value = "2moves=0.45,uho=0.45,frc=0.1")]
    mix: String,
    /// An EPD/FEN file (or .zip of one) to draw seeds from, as PATH or PATH:WEIGHT; repeatable. When any
    /// --book or --book960 is given, --mix and --shared are not used.
    #[arg(long)]
    book: Vec<String>,
    /// Like --book, for Chess960 positions (X-FEN or Shredder-FEN castling).
    #[arg(long)]
    book960: Vec<String>,
    /// A PGN file whose games' main-line positions seed the run, as PATH or PATH:WEIGHT; repeatable. Like
    /// --book, it replaces --mix.
    #[arg(long)]
    pgn: Vec<String>,
    /// Share of positions (by hash) in the validation split.
    #[arg(long, default_value_t = 0.05)]
    val_fraction: f64,
    /// Stockfish hash size in MiB per process (cleared before every position).
    #[arg(long, default_value_t = 16)]
    hash: u32,
    /// The most seed draws labelled per shard.
    #[arg(long, default_value_t = 64)]
    shard_chains: u64,
    /// The Stockfish binary [default: stockfish on PATH, then /usr/games/stockfish].
    #[arg(long)]
    stockfish: Option<PathBuf>,
    /// Stop after writing this many shards (run again to resume).
    #[arg(long)]
    max_shards: Option<usize>,
    /// Share of positions (chosen by position hash and seed) that also get a search tree labelled for
    /// internal-search traces: the positions after their --search-breadth best moves, --search-depth plies
    /// deep. 0 = none.
    #[arg(long, default_value_t = 0.0)]
    search_share: f64,
    /// Moves expanded per search-tree node (2-5).
    #[arg(long, default_value_t = DEFAULT_SEARCH_BREADTH)]
    search_breadth: u32,
    /// Plies a search tree reaches below its root (1-2).
    #[arg(long, default_value_t = DEFAULT_SEARCH_DEPTH)]
    search_depth: u32,
}

/// Runs `mavboard datagen`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        DatagenCommand::Labels(a) => labels(*a),
        DatagenCommand::Render(a) => render(a),
        DatagenCommand::Merge(a) => merge(a),
    }
}

fn merge(a: MergeArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let s = merge_label_sets(&a.dirs, &a.out)?;
    let m = &s.manifest;
    let val: usize = m.shards.iter().map(|f| f.val).sum();
    outln!(
        "merged {} {} into {}: {} records ({} train, {val} val) in {} files; {} read, {} duplicates left out; \
         {:.1} s",
        a.dirs.len(),
        if s.sharded { "shards" } else { "label folders" },
        a.out.display(),
        m.records,
        m.records - val,
        m.shards.len(),
        s.read,
        s.duplicates,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The `--shard` of a labels run (with `--shard-target`), if any.
fn shard_spec(a: &LabelsArgs) -> anyhow::Result<Option<ShardSpec>> {
    let Some(text) = &a.shard else { return Ok(None) };
    let mut spec = ShardSpec::parse(text, a.positions)?;
    if let Some(target) = a.shard_target {
        spec.target = target;
        spec.check()?;
    }
    Ok(Some(spec))
}

/// What the progress bar counts to: the shard's target or the run's positions.
fn bar_target(settings: &LabelSettings, shard: Option<ShardSpec>) -> usize {
    shard.map_or(settings.positions, |s| s.target)
}

/// The `(shard K/N of …)` part of the start message.
fn shard_note(shard: Option<ShardSpec>) -> String {
    shard
        .map_or_else(String::new, |s| format!(" as shard {} (until it holds {} records)", s.name(), s.target))
}

fn render(a: RenderArgs) -> anyhow::Result<()> {
    let opts = RenderOptions {
        seed: a.seed,
        lm_per_position: a.lm_per_position.max(1),
        state_tracking: a.state_tracking,
        top_all: a.top_all,
        search_share: a.search_share,
        search_max_tokens: a.search_max_tokens,
        search_max_breadth: a.search_max_breadth,
    };
    let start = Instant::now();
    let s = render_dirs(&a.labels, &a.out, &opts)?;
    outln!(
        "rendered {} labels ({} with a known parent, {} skipped) into {} in {:.1} s",
        s.labels,
        s.with_parent,
        s.skipped,
        a.out.display(),
        start.elapsed().as_secs_f64()
    );
    outln!("  mav-lm:       {} train, {} val ({} terminal)", s.lm[0], s.lm[1], s.terminal);
    if opts.search_share > 0.0 {
        let traces = s.search[0] + s.search[1];
        outln!(
            "  of which internal-search traces: {} train, {} val ({:.1} % of the text examples; {} roots; \
             {:.0} tokens on average, {} at most; {} left out as longer than {} tokens)",
            s.search[0],
            s.search[1],
            100.0 * s.search_share(),
            s.search_roots,
            if traces > 0 { s.search_tokens as f64 / traces as f64 } else { 0.0 },
            s.search_tokens_max,
            s.search_too_long,
            opts.search_max_tokens
        );
        for (shape, st) in &s.search_shapes {
            let n = st.written + st.too_long;
            outln!(
                "    {shape}: {} written, {} too long; tokens {} to {}, {:.0} on average",
                st.written,
                st.too_long,
                st.tokens_min,
                st.tokens_max,
                if n > 0 { st.tokens_all as f64 / n as f64 } else { 0.0 }
            );
        }
    }
    outln!("  mav-encoder:  {} train, {} val", s.enc[0], s.enc[1]);
    outln!("  action-value: {} train, {} val", s.av[0], s.av[1]);
    if s.av_skipped > 0 {
        outln!(
            "  ({} Connect Four/Hex labels have no action-value format: none written for them)",
            s.av_skipped
        );
    }
    Ok(())
}

fn book_spec(spec: &str) -> anyhow::Result<(PathBuf, f64)> {
    if let Some((path, weight)) = spec.rsplit_once(':')
        && let Ok(w) = weight.parse::<f64>()
    {
        return Ok((PathBuf::from(path), w));
    }
    if spec.is_empty() {
        bail!("--book needs a path (PATH or PATH:WEIGHT)");
    }
    Ok((PathBuf::from(spec), 1.0))
}

fn build_mix(a: &LabelsArgs) -> anyhow::Result<SourceMix> {
    let mut mix = SourceMix::new();
    if !a.book.is_empty() || !a.book960.is_empty() || !a.pgn.is_empty() {
        for spec in &a.pgn {
            let (path, weight) = book_spec(spec)?;
            let source = PgnSource::open(&path, &PgnSource::tag_for(&path))?;
            if source.skipped() > 0 {
                eprintln!(
                    "{}: {} games could not be read and are left out",
                    path.display(),
                    source.skipped()
                );
            }
            mix.add(Arc::new(source), weight)?;
        }
        let specs = a.book.iter().map(|s| (s, false)).chain(a.book960.iter().map(|s| (s, true)));
        for (spec, chess960) in specs {
            let (path, weight) = book_spec(spec)?;
            let source = EpdSource::open(&path, &EpdSource::tag_for(&path), chess960)?;
            mix.add(Arc::new(source), weight)?;
        }
        return Ok(mix);
    }
    let dir = a.shared.join("openings").join("stockfish-books");
    for part in a.mix.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, weight)) = part.split_once('=') else {
            bail!("--mix entry {part:?} must be NAME=WEIGHT (names: 2moves, uho, frc)");
        };
        let weight: f64 =
            weight.trim().parse().with_context(|| format!("--mix weight {weight:?} is not a number"))?;
        if weight == 0.0 {
            continue;
        }
        let Some((_, file, chess960)) = BOOKS.iter().find(|(n, _, _)| *n == name.trim()) else {
            bail!("--mix names an unknown suite {name:?} (known: 2moves, uho, frc)");
        };
        let path = dir.join(file);
        if !path.exists() {
            bail!(
                "{} not found: pass --shared DIR (the folder holding openings/stockfish-books/) or give your own \
                 positions with --book PATH",
                path.display()
            );
        }
        let source = EpdSource::open(&path, &EpdSource::tag_for(&path), *chess960)?;
        mix.add(Arc::new(source), weight)?;
    }
    Ok(mix)
}

/// The `datagen labels` progress bar.
fn progress_bar(positions: usize) -> anyhow::Result<ProgressBar> {
    let bar = ProgressBar::with_draw_target(Some(positions as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} positions  {per_sec}  ETA {eta}  {msg}",
        )
        .context("progress bar template")?
        .progress_chars("=> "),
    );
    Ok(bar)
}

/// Prints what a labels run wrote and how fast.
fn report(out: &std::path::Path, summary: &mavboard::datagen::RunSummary, secs: f64) {
    let m = &summary.manifest;
    let bytes: u64 = m.shards.iter().map(|s| s.bytes).sum();
    let val: usize = m.shards.iter().map(|s| s.val).sum();
    eprintln!(
        "{}: {} records ({} train, {val} val) in {} shards, {bytes} bytes ({:.1} bytes/record); engine {}",
        out.display(),
        m.records,
        m.records - val,
        m.shards.len(),
        if m.records > 0 { bytes as f64 / m.records as f64 } else { 0.0 },
        m.engine
    );
    eprintln!(
        "this run: {} records written, {} positions labelled in {secs:.1} s ({:.2} labelled positions/s){}",
        summary.written_now,
        summary.labelled_now,
        summary.labelled_now as f64 / secs.max(1e-9),
        if m.complete { "" } else { "; not complete yet, run the same command again to resume" }
    );
    if let Some(shard) = m.shard.filter(|_| m.complete) {
        eprintln!(
            "shard {} of a run of {} positions is done; when every shard is, join them with `mavboard datagen \
             merge DIR… --out DIR`",
            shard.name(),
            m.settings.positions
        );
    }
}

/// `datagen labels --game connect_four|hex`: the solvers label, on the same run machinery as chess.
fn game_labels(a: &LabelsArgs, threads: usize) -> anyhow::Result<()> {
    let chess_only = [
        ("--depth", a.depth.is_some()),
        ("--nodes", a.nodes.is_some()),
        ("--stockfish", a.stockfish.is_some()),
        ("--book", !a.book.is_empty()),
        ("--book960", !a.book960.is_empty()),
        ("--pgn", !a.pgn.is_empty()),
    ];
    if let Some((flag, _)) = chess_only.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} is for chess labels; Connect Four and Hex are labelled by their solvers from random openings"
        );
    }
    let (game, hex, (min, max)) = match a.game.rules() {
        GameKind::ConnectFour => (LabelGame::ConnectFour, None, (10, 20)),
        GameKind::Hex => (
            LabelGame::Hex,
            Some(HexLabelOptions {
                size: a.size,
                swap: a.swap,
                exact_empty: a.exact_empty,
                playouts: a.playouts,
            }),
            (2, 12),
        ),
        GameKind::Chess | GameKind::Chess960 => bail!("chess is labelled by Stockfish"),
    };
    let g = GameLabelSettings {
        game,
        opening_min: a.opening_min.unwrap_or(min),
        opening_max: a.opening_max.unwrap_or(max),
        hex,
    };
    let settings = LabelSettings {
        positions: a.positions,
        limit: Limit::Solver,
        continuations: a.continuations,
        temperature: a.temperature,
        seed: a.seed,
        val_fraction: a.val_fraction,
        chains_per_shard: a.shard_chains,
        hash_mb: 0,
        search_share: a.search_share,
        search_breadth: a.search_breadth,
        search_depth: a.search_depth,
        game: Some(g.clone()),
    };
    let shard = shard_spec(a)?;
    eprintln!(
        "labelling {} {} positions{} with the {} ({threads} threads), openings of {} to {} random plies",
        settings.positions,
        game.name(),
        shard_note(shard),
        g.labeler_name(),
        g.opening_min,
        g.opening_max
    );
    let bar = progress_bar(bar_target(&settings, shard))?;
    let started = Instant::now();
    let mut on_progress = |p: Progress| {
        bar.set_position(((p.written + p.pending) as u64).min(p.target as u64));
        bar.set_message(format!("{} shards", p.shards));
    };
    let summary = run_game_labels_shard(&a.out, &settings, shard, threads, a.max_shards, &mut on_progress)?;
    bar.finish_and_clear();
    report(&a.out, &summary, started.elapsed().as_secs_f64());
    Ok(())
}

fn labels(a: LabelsArgs) -> anyhow::Result<()> {
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if a.game.rules() != GameKind::Chess {
        return game_labels(&a, threads);
    }
    let limit = match (a.depth, a.nodes) {
        (_, Some(n)) => Limit::Nodes(n),
        (Some(d), None) => Limit::Depth(d),
        (None, None) => Limit::Depth(8),
    };
    let settings = LabelSettings {
        positions: a.positions,
        limit,
        continuations: a.continuations,
        temperature: a.temperature,
        seed: a.seed,
        val_fraction: a.val_fraction,
        chains_per_shard: a.shard_chains,
        hash_mb: a.hash,
        search_share: a.search_share,
        search_breadth: a.search_breadth,
        search_depth: a.search_depth,
        game: None,
    };
    let shard = shard_spec(&a)?;
    let stockfish = locate_stockfish(a.stockfish.as_deref())?;
    let mix = build_mix(&a)?;
    eprintln!(
        "labelling {} positions{} with {} ({:?}, {threads} threads) from {}",
        settings.positions,
        shard_note(shard),
        stockfish.display(),
        settings.limit,
        mavboard::datagen::run::describe_sources(&mix)
    );

    let bar = progress_bar(bar_target(&settings, shard))?;
    let started = Instant::now();
    let mut first: Option<usize> = None;
    let mut on_progress = |p: Progress| {
        let done = (p.written + p.pending) as u64;
        if first.is_none() {
            first = Some(p.written);
            bar.set_position(p.written as u64);
            bar.reset_eta();
        }
        bar.set_position(done.min(p.target as u64));
        bar.set_message(format!("{} shards", p.shards));
    };
    let hash = settings.hash_mb;
    let search = settings.limit.search_limits().context("chess needs an engine limit")?;
    let plan = RunPlan { out: &a.out, settings: &settings, shard, threads, stop_after_shards: a.max_shards };
    let summary = run_labels_shard(
        plan,
        &mix,
        move |_| StockfishLabeler::start(&stockfish, hash, search),
        &mut on_progress,
    )?;
    bar.finish_and_clear();
    report(&a.out, &summary, started.elapsed().as_secs_f64());
    Ok(())
}
