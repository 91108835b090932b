//! `mavboard bench inference`: how fast model packages evaluate positions through mavboard's evaluators, at
//! several batch sizes and `%top_k` settings, and the ratio of the wall time to the time ONNX Runtime itself
//! spends in `Session::run` in the same run (the rest is mavboard's overhead: prompts, tokenizing, tensors,
//! decoding logic, result building).
//!
//! `mavboard bench search`: MAV-MCTS with the model — simulations per second at several batch sizes, and the
//! search overhead: the wall time of whole searches over the summed time inside ONNX Runtime (and over the
//! time inside the evaluator's calls, which separates the tree's own cost from the evaluator's).
//!
//! Both accept a remote package (mav.json `remote`, a model on an Open Inference Protocol server) and then
//! measure it against its local twin — the package folder with the same model.onnx, `--local DIR` or the
//! shipped package of the same name — in the same run, so the figures are ratios taken under the same
//! load. `--latency-ms` puts a proxy of ours ([`LatencyProxy`]) in front of the server that delays every
//! request; `--in-flight` sets how many requests may be out at once: for `bench inference` the concurrent
//! requests one batch is split into (the package's `max_in_flight`), for `bench search` the batches the
//! engine keeps out at once (its inference workers; each batch goes as one request), which is how the
//! asynchronous batches hide the latency.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use mavboard::engine::{Command, Engine, EngineConfig, EvaluatorBox, EvaluatorFactory, Event, GoLimits};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, TopK};
use mavboard::inference::load::load_package_evaluator;
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::MAX_IN_FLIGHT;
use mavboard::inference::remote::latency_proxy::LatencyProxy;
use mavboard::model::ModelPackage;
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
    /// the wall time over the time spent inside ONNX Runtime. A remote package is measured against its
    /// local twin, at each --in-flight and --latency-ms.
    Inference(InferenceArgs),
    /// MAV-MCTS with a model: simulations/s at each batch size, and wall time over model time. A remote
    /// package (or --in-flight) runs the engine's asynchronous batches, remote against the local twin.
    Search(SearchArgs),
    /// The exact Connect Four solver: nodes/s and the time to solve every move of positions of 8, 12 and 16
    /// plies (and the empty board with --empty).
    Solve(super::solve::BenchArgs),
    /// Opening a big PGN file the way the app does: the time to the first game indexed and read back, the
    /// time to the whole index (with --mode app: every game also checked, as the app's list does), the
    /// games per second and the peak resident memory; --mode reference reads every game into a tree
    /// with the whole-file reader instead, for comparison.
    PgnIndex(PgnIndexArgs),
}

/// Arguments of `mavboard bench pgn-index`.
#[derive(Debug, clap::Args)]
struct PgnIndexArgs {
    /// The PGN file.
    file: PathBuf,
    /// What to run: `index` (the streaming index alone), `app` (the app's list entries, as its loader
    /// makes them: a big file's games indexed, a small file's also checked), `checked` (every game also
    /// checked, whatever the size) or `reference` (every game read into a tree by the whole-file reader).
    #[arg(long, default_value = "app")]
    mode: String,
}

/// Peak resident memory of this process in MiB (Linux; `None` elsewhere).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn bench_pgn_index(a: PgnIndexArgs) -> anyhow::Result<()> {
    use mavboard::app::game_list::GameEntry;
    use mavboard::pgn::index::{IndexedGame, index_games, read_game};
    let start = Instant::now();
    let file = std::fs::File::open(&a.file).with_context(|| format!("cannot open {}", a.file.display()))?;
    let size = file.metadata()?.len();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut first: Option<(Duration, Duration)> = None;
    let first_read = |game: &IndexedGame| -> anyhow::Result<(Duration, Duration)> {
        let indexed = start.elapsed();
        let mut again = std::fs::File::open(&a.file)?;
        read_game(&mut again, game, mavboard::pgn::ReadOptions::default())
            .map_err(|e| anyhow::anyhow!("the first game does not read back: {e}"))?;
        Ok((indexed, start.elapsed()))
    };
    let (games, good) = match a.mode.as_str() {
        "index" => {
            let mut index: Vec<IndexedGame> = Vec::new();
            let mut failed = None;
            index_games(std::io::BufReader::with_capacity(1 << 16, file), &stop, |game, _| {
                if first.is_none() {
                    match first_read(&game) {
                        Ok(t) => first = Some(t),
                        Err(e) => failed = Some(e),
                    }
                }
                index.push(game);
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            (index.len(), None)
        }
        "app" | "checked" => {
            // As the app's loader: a big file's games are parsed when opened, a small file's checked now.
            let check = a.mode == "checked" || size <= mavboard::app::pgn_loader::EARLY_LIST_BYTES;
            let mut entries: Vec<GameEntry> = Vec::new();
            let mut failed = None;
            index_games(std::io::BufReader::with_capacity(1 << 16, file), &stop, |game, bytes| {
                let entry = if check { GameEntry::check(game, bytes) } else { GameEntry::unchecked(game) };
                if first.is_none() && entry.game.is_ok() {
                    match first_read(&entry.index) {
                        Ok(t) => first = Some(t),
                        Err(e) => failed = Some(e),
                    }
                }
                entries.push(entry);
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            (entries.len(), Some(entries.iter().filter(|e| e.game.is_ok()).count()))
        }
        "reference" => {
            let mut trees = 0usize;
            let mut good = 0usize;
            for game in mavboard::pgn::PgnReader::new(std::io::BufReader::with_capacity(1 << 16, file)) {
                trees += 1;
                if game.is_ok() {
                    good += 1;
                    if first.is_none() {
                        let t = start.elapsed();
                        first = Some((t, t));
                    }
                }
            }
            (trees, Some(good))
        }
        other => anyhow::bail!("--mode {other}: use index, app, checked or reference"),
    };
    let total = start.elapsed();
    let (first_indexed, first_read) = first.unwrap_or_default();
    let mb = size as f64 / 1e6;
    outln!(
        "pgn-index {mode}: {file} ({mb:.0} MB): {games} games{good}; first game indexed {fi:.3} s, read back {fr:.3} \
         s; whole file {total:.2} s ({rate:.0} MB/s, {gps:.0} games/s); peak RSS {rss}",
        mode = a.mode,
        file = a.file.display(),
        good = good.map_or(String::new(), |g| format!(" ({g} readable)")),
        fi = first_indexed.as_secs_f64(),
        fr = first_read.as_secs_f64(),
        total = total.as_secs_f64(),
        rate = mb / total.as_secs_f64().max(1e-9),
        gps = games as f64 / total.as_secs_f64().max(1e-9),
        rss = peak_rss_mib().map_or("unknown".to_owned(), |m| format!("{m:.0} MiB")),
    );
    Ok(())
}

/// Arguments of `mavboard bench search`.
#[derive(Debug, clap::Args)]
struct SearchArgs {
    /// The model package folder, local or remote [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// The local twin of a remote --model: the package folder with the model.onnx the server serves
    /// [default: the shipped package of the same name].
    #[arg(long)]
    local: Option<PathBuf>,
    /// Simulations per search.
    #[arg(long, default_value_t = 400)]
    sims: u64,
    /// Batch sizes b, comma-separated.
    #[arg(long, default_value = "1,8,16", value_delimiter = ',')]
    batch: Vec<usize>,
    /// Batches out at once, comma-separated (the engine's inference workers; a remote batch is one
    /// request). Given, or with a remote --model, the searches run on the engine's asynchronous batches
    /// instead of the synchronous driver [default with a remote --model: 1].
    #[arg(long, value_delimiter = ',')]
    in_flight: Vec<usize>,
    /// Milliseconds a proxy of ours adds to every remote request, comma-separated [default: 0, no proxy].
    #[arg(long, value_delimiter = ',')]
    latency_ms: Vec<u64>,
    /// Measure every row this many times and keep the fastest: with --in-flight or a remote --model, local
    /// and remote in turn; with --lc0, mavboard's row and lc0's in turn (on a machine busy with other work
    /// the slower passes measure that work).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
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
    /// lc0's binary (built from its source): its own benchmark runs the same positions at the same
    /// simulations and batch sizes (its minibatch) with --lc0-weights, as the reference rows of the same run,
    /// in turn with mavboard's. Its search threads: --threads, or with --in-flight, one per inference worker
    /// and ONNX Runtime thread (each lc0 search thread computes its own batches, on one BLAS thread).
    #[arg(long, requires = "lc0_weights")]
    lc0: Option<PathBuf>,
    /// The lc0 weights file the package was imported from (for --lc0).
    #[arg(long, requires = "lc0")]
    lc0_weights: Option<PathBuf>,
    /// lc0's backend for --lc0.
    #[arg(long, default_value = "blas")]
    lc0_backend: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The local twin of the remote package `remote`: `explicit` (which must be a local package), or the
/// shipped package whose mav.json has the same name (or the served model's name) and format.
fn local_twin(remote: &ModelPackage, explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = explicit {
        let p = ModelPackage::open(dir).with_context(|| format!("opening --local {}", dir.display()))?;
        anyhow::ensure!(
            p.manifest.remote.is_none(),
            "--local {} is a remote package too: give the folder with the model.onnx the server serves",
            dir.display()
        );
        anyhow::ensure!(
            p.manifest.format == remote.manifest.format,
            "--local {} is a {} package, the remote one a {} package",
            dir.display(),
            p.manifest.format.name(),
            remote.manifest.format.name()
        );
        return Ok(dir.to_path_buf());
    }
    let served = remote.manifest.remote.as_ref().map(|r| r.model.as_str());
    for dir in shipped_package_dirs() {
        let Ok(p) = ModelPackage::open(&dir) else { continue };
        let same_name = p.manifest.name == remote.manifest.name || Some(p.manifest.name.as_str()) == served;
        if p.manifest.remote.is_none() && same_name && p.manifest.format == remote.manifest.format {
            return Ok(dir);
        }
    }
    anyhow::bail!(
        "{} is a remote package and no shipped package is its local twin (none is named {}); pass --local DIR, \
         the package folder with the model.onnx the server serves",
        remote.dir.display(),
        remote.manifest.name
    )
}

/// `package` (a remote one) pointed at `endpoint` and allowed `in_flight` requests per batch.
fn remote_variant(package: &ModelPackage, endpoint: &str, in_flight: usize) -> ModelPackage {
    let mut p = package.clone();
    if let Some(r) = p.manifest.remote.as_mut() {
        r.endpoint = endpoint.to_owned();
        r.max_in_flight = in_flight;
    }
    p
}

/// Checks `--in-flight` values (1 to the protocol client's limit).
fn check_in_flight(values: &[usize]) -> anyhow::Result<()> {
    for &n in values {
        anyhow::ensure!((1..=MAX_IN_FLIGHT).contains(&n), "--in-flight {n}: must be 1 to {MAX_IN_FLIGHT}");
    }
    Ok(())
}

/// One latency proxy per nonzero `--latency-ms` in front of `endpoint`; `None` for 0 (direct).
fn start_proxies(endpoint: &str, latencies: &[u64]) -> anyhow::Result<Vec<(u64, Option<LatencyProxy>)>> {
    latencies
        .iter()
        .map(|&ms| {
            let proxy = (ms > 0)
                .then(|| LatencyProxy::start(endpoint, Duration::from_millis(ms)))
                .transpose()
                .with_context(|| format!("starting a latency proxy for {endpoint}"))?;
            Ok((ms, proxy))
        })
        .collect()
}

/// Batches, requests and concurrency seen by [`Gauged`] evaluators (shared by an engine's workers).
#[derive(Debug, Default)]
struct Gauge {
    batches: AtomicU64,
    requests: AtomicU64,
    out: AtomicUsize,
    peak: AtomicUsize,
}

impl Gauge {
    fn reset(&self) {
        self.batches.store(0, Ordering::SeqCst);
        self.requests.store(0, Ordering::SeqCst);
        self.peak.store(self.out.load(Ordering::SeqCst), Ordering::SeqCst);
    }
}

/// An evaluator that counts its calls and how many are running at once (across the workers).
struct Gauged {
    inner: EvaluatorBox,
    gauge: Arc<Gauge>,
}

impl Evaluator<ChessState> for Gauged {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        let now = self.gauge.out.fetch_add(1, Ordering::SeqCst) + 1;
        self.gauge.peak.fetch_max(now, Ordering::SeqCst);
        let out = self.inner.evaluate(requests);
        self.gauge.out.fetch_sub(1, Ordering::SeqCst);
        self.gauge.batches.fetch_add(1, Ordering::SeqCst);
        self.gauge.requests.fetch_add(requests.len() as u64, Ordering::SeqCst);
        out
    }
}

/// What the engine's searches of one row did.
struct EngineRun {
    simulations: u64,
    wall: Duration,
    batches: u64,
    requests: u64,
    peak_batches: usize,
    failed: u64,
}

impl EngineRun {
    /// Simulations per second.
    fn rate(&self) -> f64 {
        self.simulations as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// The longest a bench search (or a model load) may take before the bench gives up.
const ENGINE_WAIT: Duration = Duration::from_secs(900);

/// Waits for the event `want` picks, failing on an engine error or after [`ENGINE_WAIT`].
fn wait_event<T>(engine: &Engine, what: &str, mut want: impl FnMut(Event) -> Option<T>) -> anyhow::Result<T> {
    let deadline = Instant::now() + ENGINE_WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match engine.events().recv_timeout(left) {
            Ok(Event::Error(e)) => anyhow::bail!("{what}: {e}"),
            Ok(event) => {
                if let Some(t) = want(event) {
                    return Ok(t);
                }
            }
            Err(_) => anyhow::bail!("{what}: no answer from the engine within {} s", ENGINE_WAIT.as_secs()),
        }
    }
}

/// One search of `sims` simulations of `state` on the engine: (simulations, wall time, failed evaluations).
fn engine_search(
    engine: &Engine,
    state: &ChessState,
    sims: u64,
    params: &MctsParams,
) -> anyhow::Result<(u64, Duration, u64)> {
    engine.send(Command::SetPosition { start: state.clone(), moves: Vec::new() })?;
    let start = Instant::now();
    let limits = GoLimits { simulations: Some(sims), ..GoLimits::default() };
    engine.send(Command::Go { limits, params: params.clone() })?;
    let report = wait_event(engine, "searching", |e| match e {
        Event::Done { report, .. } => Some(report),
        _ => None,
    })?;
    let wall = start.elapsed();
    let report = report.context("the engine ran no search")?;
    Ok((report.simulations, wall, report.snapshot.totals.stats.failed))
}

/// Searches every position on an engine with `workers` inference workers built by `build` and batches of
/// `b`, after one warm-up search.
fn engine_run(
    build: impl Fn() -> anyhow::Result<EvaluatorBox> + Send + Sync + 'static,
    workers: usize,
    b: usize,
    positions: &[ChessState],
    sims: u64,
    params: &MctsParams,
) -> anyhow::Result<EngineRun> {
    let gauge = Arc::new(Gauge::default());
    let worker_gauge = gauge.clone();
    let factory: EvaluatorFactory = Arc::new(move |_| {
        let inner = build().map_err(|e| format!("{e:#}"))?;
        let gauged: EvaluatorBox = Box::new(Gauged { inner, gauge: worker_gauge.clone() });
        Ok(gauged)
    });
    let config = EngineConfig {
        batch_size: b,
        // No answers kept between searches: every row pays for its own evaluations.
        cache_entries: 0,
        // A slow server is measured, not given up on.
        eval_timeout: Duration::from_secs(600),
        ..EngineConfig::default()
    };
    let engine = Engine::start(config, Arc::new(|| {}))?;
    engine.send(Command::LoadEvaluator { factory, workers })?;
    wait_event(&engine, "loading the model", |e| matches!(e, Event::EvaluatorReady { .. }).then_some(()))?;
    // Warm-up (first runs of a session allocate), on a position of its own.
    let start = ChessState::startpos();
    let warm = start.parse_action("g1f3").and_then(|m| start.play(m)).unwrap_or(start);
    let warm_sims = sims.min((2 * workers * b).max(64) as u64);
    engine_search(&engine, &warm, warm_sims, params)?;
    gauge.reset();
    let mut run = EngineRun {
        simulations: 0,
        wall: Duration::ZERO,
        batches: 0,
        requests: 0,
        peak_batches: 0,
        failed: 0,
    };
    for s in positions {
        let (n, wall, failed) = engine_search(&engine, s, sims, params)?;
        run.simulations += n;
        run.wall += wall;
        run.failed += failed;
    }
    run.batches = gauge.batches.load(Ordering::SeqCst);
    run.requests = gauge.requests.load(Ordering::SeqCst);
    run.peak_batches = gauge.peak.load(Ordering::SeqCst);
    Ok(run)
}

/// One row of the engine-driven search benchmark.
#[derive(Debug, serde::Serialize)]
struct EngineRow {
    batch: usize,
    in_flight: usize,
    /// `local` or `remote`.
    source: &'static str,
    latency_ms: u64,
    searches: usize,
    simulations: u64,
    evaluate_calls: u64,
    model_calls: u64,
    failed: u64,
    wall_s: f64,
    sims_per_s: f64,
    /// Simulations/s over the local twin's at the same batch size and in-flight limit.
    vs_local: Option<f64>,
    /// The most batches out on the workers at once.
    peak_batches: usize,
    /// The most requests the latency proxy saw out at once.
    proxy_peak: Option<usize>,
}

fn bench_search_engine(a: &SearchArgs, dir: &Path, package: &ModelPackage) -> anyhow::Result<()> {
    let bench = EngineBench::new(a, dir, package)?;
    if !a.json {
        bench.print_header();
    }
    let (mut rows, mut lc0_rows) = (Vec::new(), Vec::new());
    let in_flight = if a.in_flight.is_empty() { vec![1] } else { a.in_flight.clone() };
    for &b in &a.batch {
        let b = b.max(1);
        for &n in &in_flight {
            let best = bench.measure(b, n)?;
            let Some(local) = best.local else { continue };
            let row = bench.row(b, n, "local", 0, local, None, None);
            let local_rate = row.sims_per_s;
            let threads = n * a.threads.max(1);
            lc0_rows.extend(best.lc0.map(|run| Lc0Row::new(b, threads, run, local_rate)));
            rows.push(row);
            for ((ms, _), remote) in bench.proxies.iter().zip(best.remote) {
                if let Some((run, peak)) = remote {
                    rows.push(bench.row(b, n, "remote", *ms, run, Some(local_rate), peak));
                }
            }
        }
    }
    if a.json {
        let out = serde_json::json!({
            "model": package.manifest.name, "format": package.manifest.format.name(), "sims": a.sims,
            "threads": bench.options.threads.intra_op, "local": bench.local_dir, "driver": "engine",
            "repeat": a.repeat.max(1), "remote": bench.spec.as_ref().map(|s| s.endpoint.clone()), "rows": rows,
            "lc0": lc0_rows,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if let Some(bin) = &a.lc0 {
        outln!(
            "lc0 ({}, backend {}), the same {} positions at {} nodes, its minibatch = the batch, one search \
             thread per inference worker and ONNX Runtime thread, run in turn with mavboard's rows:",
            bin.display(),
            a.lc0_backend,
            bench.positions.len(),
            a.sims
        );
        print_lc0_rows(&lc0_rows);
    }
    outln!(
        "(in-flight: batches out at once, one inference worker each; +ms: latency added to every remote \
         request by a proxy; vs local: simulations/s over the local twin's at the same batch and in-flight; \
         peak: the most batches that were out at once; proxy: the most requests the proxy saw out at once)"
    );
    Ok(())
}

/// What every configuration of `bench search` on the engine's asynchronous batches shares.
struct EngineBench<'a> {
    a: &'a SearchArgs,
    package: &'a ModelPackage,
    /// The package's remote section, for a remote package.
    spec: Option<mavboard::model::manifest::RemoteSpec>,
    /// The local package (the remote one's twin).
    local_dir: PathBuf,
    /// One latency proxy per `--latency-ms` (none for 0 ms or a local package).
    proxies: Vec<(u64, Option<LatencyProxy>)>,
    options: SessionOptions,
    positions: Vec<ChessState>,
    params: MctsParams,
}

/// The fastest of a configuration's `--repeat` passes: local, through each proxy, and lc0's.
struct EngineBest {
    local: Option<EngineRun>,
    remote: Vec<Option<(EngineRun, Option<usize>)>>,
    lc0: Option<super::bench_lc0::Lc0Run>,
}

impl<'a> EngineBench<'a> {
    fn new(a: &'a SearchArgs, dir: &Path, package: &'a ModelPackage) -> anyhow::Result<EngineBench<'a>> {
        let spec = package.manifest.remote.clone();
        let local_dir = match spec {
            Some(_) => local_twin(package, a.local.as_deref())?,
            None => dir.to_path_buf(),
        };
        if !a.in_flight.is_empty() {
            check_in_flight(&a.in_flight)?;
        }
        let latencies = if a.latency_ms.is_empty() { vec![0] } else { a.latency_ms.clone() };
        let proxies = match &spec {
            Some(spec) => start_proxies(&spec.endpoint, &latencies)?,
            None => {
                anyhow::ensure!(
                    latencies.iter().all(|&l| l == 0),
                    "--latency-ms needs a remote --model (a package whose mav.json has a remote section)"
                );
                Vec::new()
            }
        };
        let mut options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
        options.threads.intra_op = a.threads.max(1);
        Ok(EngineBench {
            a,
            package,
            spec,
            local_dir,
            proxies,
            options,
            positions: random_positions(a.positions.max(1), a.seed),
            params: search_params(a.sims),
        })
    }

    fn print_header(&self) {
        outln!(
            "{} ({}), {} searches of {} simulations per row (the fastest of {}), {} ONNX Runtime thread(s) \
             per session, mean scoring, rules world model, the engine's asynchronous batches (no result cache)",
            self.package.manifest.name,
            self.package.manifest.format.name(),
            self.positions.len(),
            self.a.sims,
            self.a.repeat.max(1),
            self.options.threads.intra_op
        );
        outln!("local: {}", self.local_dir.display());
        if let Some(spec) = &self.spec {
            outln!("remote: {} model {} (one request per batch)", spec.endpoint, spec.model);
        }
        outln!(
            "{:>6} {:>9} {:>7} {:>6} {:>9} {:>8} {:>10} {:>9} {:>9} {:>6} {:>6}",
            "batch",
            "in-flight",
            "where",
            "+ms",
            "sims",
            "calls",
            "wall ms",
            "sims/s",
            "vs local",
            "peak",
            "proxy"
        );
    }

    /// Batch `b` on `n` workers `--repeat` times, local, remote and lc0 in turn, keeping the fastest of each.
    fn measure(&self, b: usize, n: usize) -> anyhow::Result<EngineBest> {
        let mut best =
            EngineBest { local: None, remote: self.proxies.iter().map(|_| None).collect(), lc0: None };
        for _ in 0..self.a.repeat.max(1) {
            // lc0 with one search thread per inference worker (each computing its own batches).
            if let (Some(bin), Some(weights)) = (&self.a.lc0, &self.a.lc0_weights) {
                let threads = n * self.a.threads.max(1);
                let run = super::bench_lc0::run(
                    bin,
                    weights,
                    &self.a.lc0_backend,
                    &self.positions,
                    self.a.sims,
                    threads,
                    b,
                )?;
                if best.lc0.is_none_or(|r| run.nodes_per_s() > r.nodes_per_s()) {
                    best.lc0 = Some(run);
                }
            }
            let (ldir, lopts) = (self.local_dir.clone(), self.options.clone());
            let local = engine_run(
                move || Ok(load_evaluator(&ldir, &lopts).map(|m| m.evaluator)?),
                n,
                b,
                &self.positions,
                self.a.sims,
                &self.params,
            )
            .with_context(|| format!("local {}", self.local_dir.display()))?;
            if best.local.as_ref().is_none_or(|r| local.rate() > r.rate()) {
                best.local = Some(local);
            }
            for ((_, proxy), slot) in self.proxies.iter().zip(best.remote.iter_mut()) {
                let Some((remote, peak)) = self.remote_pass(proxy.as_ref(), b, n)? else { continue };
                if slot.as_ref().is_none_or(|(r, _)| remote.rate() > r.rate()) {
                    *slot = Some((remote, peak));
                }
            }
        }
        Ok(best)
    }

    /// One pass through `proxy` (or straight to the server); `None` for a local package.
    fn remote_pass(
        &self,
        proxy: Option<&LatencyProxy>,
        b: usize,
        n: usize,
    ) -> anyhow::Result<Option<(EngineRun, Option<usize>)>> {
        let endpoint = match (proxy, &self.spec) {
            (Some(p), _) => p.endpoint(),
            (None, Some(s)) => s.endpoint.clone(),
            (None, None) => return Ok(None),
        };
        let variant = remote_variant(self.package, &endpoint, 1);
        let ropts = self.options.clone();
        if let Some(p) = proxy {
            p.reset_peak();
        }
        let remote = engine_run(
            move || Ok(load_package_evaluator(&variant, &ropts).map(|m| m.evaluator)?),
            n,
            b,
            &self.positions,
            self.a.sims,
            &self.params,
        )
        .with_context(|| format!("remote {endpoint}"))?;
        Ok(Some((remote, proxy.map(|p| p.stats().peak_in_flight))))
    }

    /// The row of `run`, printed unless the output is JSON.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &self,
        b: usize,
        n: usize,
        source: &'static str,
        latency_ms: u64,
        run: EngineRun,
        local: Option<f64>,
        proxy_peak: Option<usize>,
    ) -> EngineRow {
        let secs = run.wall.as_secs_f64().max(1e-9);
        let sims_per_s = run.simulations as f64 / secs;
        let row = EngineRow {
            batch: b,
            in_flight: n,
            source,
            latency_ms,
            searches: self.positions.len(),
            simulations: run.simulations,
            evaluate_calls: run.batches,
            model_calls: run.requests,
            failed: run.failed,
            wall_s: secs,
            sims_per_s,
            vs_local: local.map(|l| sims_per_s / l.max(1e-9)),
            peak_batches: run.peak_batches,
            proxy_peak,
        };
        if !self.a.json {
            print_engine_row(&row);
        }
        row
    }
}

/// Prints one row of the engine's table.
fn print_engine_row(row: &EngineRow) {
    outln!(
        "{:>6} {:>9} {:>7} {:>6} {:>9} {:>8} {:>10.1} {:>9.1} {:>9} {:>6} {:>6}",
        row.batch,
        row.in_flight,
        row.source,
        if row.source == "local" { "-".to_owned() } else { row.latency_ms.to_string() },
        row.simulations,
        row.evaluate_calls,
        row.wall_s * 1e3,
        row.sims_per_s,
        row.vs_local.map_or("-".to_owned(), |r| format!("{:.0} %", r * 100.0)),
        row.peak_batches,
        row.proxy_peak.map_or("-".to_owned(), |p| p.to_string()),
    );
    if row.failed > 0 {
        outln!("       ({} evaluations failed in this row)", row.failed);
    }
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
    /// Evaluation requests (one per expanded leaf: about one per simulation at any batch size).
    model_calls: u64,
    /// Calls of the evaluator (one per batch).
    evaluate_calls: u64,
    /// Requests per evaluator call: how full the batches were.
    mean_fill: f64,
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
    let package = ModelPackage::open(&dir).with_context(|| format!("opening {}", dir.display()))?;
    anyhow::ensure!(a.sims >= 1, "--sims must be at least 1");
    if package.manifest.remote.is_some() || !a.in_flight.is_empty() || !a.latency_ms.is_empty() {
        return bench_search_engine(&a, &dir, &package);
    }
    let mut options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
    options.threads.intra_op = a.threads.max(1);
    let mavboard::inference::LoadedModel { mut evaluator, package, .. } =
        load_evaluator(&dir, &options).with_context(|| format!("opening {}", dir.display()))?;
    let positions = random_positions(a.positions.max(1), a.seed);
    // Warm-up: one search at the largest batch (first runs of a session allocate).
    let warm_b = a.batch.iter().copied().max().unwrap_or(16).max(1);
    let mut warm = Mcts::new(positions[0].clone(), 0, search_params(a.sims))?;
    warm.run(evaluator.as_mut(), RunLimits { simulations: a.sims.min(64), batch_size: warm_b })?;
    let style = if warm.searches_as_lc0() { "lc0's PUCT" } else { "MAV-MCTS" };
    let lc0_ref = a.lc0.as_deref().zip(a.lc0_weights.as_deref());
    // Each batch size `--repeat` times, mavboard's row and lc0's in turn, keeping the fastest of each: on a
    // machine busy with other work the slower passes measure that work, and both sides see the same load.
    let mut rows = Vec::new();
    let mut lc0 = Vec::new();
    for &b in &a.batch {
        let b = b.max(1);
        let mut best: Option<SearchRow> = None;
        let mut best_lc0: Option<super::bench_lc0::Lc0Run> = None;
        for _ in 0..a.repeat.max(1) {
            let row = sync_search_row(evaluator.as_mut(), &positions, a.sims, b)?;
            if best.as_ref().is_none_or(|r| row.sims_per_s > r.sims_per_s) {
                best = Some(row);
            }
            if let Some((bin, weights)) = lc0_ref {
                let run = super::bench_lc0::run(
                    bin,
                    weights,
                    &a.lc0_backend,
                    &positions,
                    a.sims,
                    a.threads.max(1),
                    b,
                )?;
                if best_lc0.is_none_or(|r| run.nodes_per_s() > r.nodes_per_s()) {
                    best_lc0 = Some(run);
                }
            }
        }
        if let (Some(run), Some(row)) = (best_lc0, &best) {
            lc0.push(Lc0Row::new(b, a.threads.max(1), run, row.sims_per_s));
        }
        rows.extend(best);
    }
    if a.json {
        let out = serde_json::json!({
            "model": package.manifest.name, "format": package.manifest.format.name(), "sims": a.sims,
            "threads": options.threads.intra_op, "style": style, "repeat": a.repeat.max(1), "rows": rows,
            "lc0": lc0,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!(
        "{} ({}), {style}, {} searches of {} simulations per row, {} ONNX Runtime thread(s), mean scoring, \
         rules world model, synchronous driver (Mcts::run), the fastest of {} pass(es) per row",
        package.manifest.name,
        package.manifest.format.name(),
        positions.len(),
        a.sims,
        options.threads.intra_op,
        a.repeat.max(1)
    );
    print_search_rows(&rows);
    if let Some((bin, _)) = lc0_ref {
        outln!(
            "lc0 ({}, backend {}), the same {} positions at {} nodes, its minibatch = the batch, \
             run in turn with mavboard's rows:",
            bin.display(),
            a.lc0_backend,
            positions.len(),
            a.sims
        );
        print_lc0_rows(&lc0);
    }
    outln!(
        "(requests: leaves sent to the model, one per expanded node at any batch size; batches: evaluator \
         calls; fill: requests per call; wall: the searches' wall time; eval: time inside the evaluator's calls; ORT: the summed time inside \
         ONNX Runtime's Session::run. wall/ORT is the search overhead over pure model time, wall/eval the \
         tree's own share; 1.000 = none)"
    );
    Ok(())
}

/// lc0's reference row beside mavboard's.
#[derive(Debug, serde::Serialize)]
struct Lc0Row {
    batch: usize,
    /// lc0's search threads.
    threads: usize,
    nodes: u64,
    millis: u64,
    nodes_per_s: f64,
    /// mavboard's simulations per second in the same configuration.
    mavboard_sims_per_s: f64,
    mavboard_over_lc0: f64,
}

impl Lc0Row {
    fn new(batch: usize, threads: usize, run: super::bench_lc0::Lc0Run, mavboard: f64) -> Lc0Row {
        Lc0Row {
            batch,
            threads,
            nodes: run.nodes,
            millis: run.millis,
            nodes_per_s: run.nodes_per_s(),
            mavboard_sims_per_s: mavboard,
            mavboard_over_lc0: mavboard / run.nodes_per_s().max(1e-9),
        }
    }
}

/// Prints lc0's reference rows as a table.
fn print_lc0_rows(rows: &[Lc0Row]) {
    outln!(
        "{:>6} {:>8} {:>9} {:>9} {:>12} {:>15} {:>12}",
        "batch",
        "threads",
        "nodes",
        "ms",
        "lc0 nodes/s",
        "mavboard sims/s",
        "mavboard/lc0"
    );
    for r in rows {
        outln!(
            "{:>6} {:>8} {:>9} {:>9} {:>12.1} {:>15.1} {:>12.2}",
            r.batch,
            r.threads,
            r.nodes,
            r.millis,
            r.nodes_per_s,
            r.mavboard_sims_per_s,
            r.mavboard_over_lc0
        );
    }
}

/// The search settings of `bench search`'s synchronous rows.
fn search_params(sims: u64) -> MctsParams {
    MctsParams { virtual_counts: VirtualCounts::paper_dynamic(sims), ..MctsParams::default() }
}

/// One pass of the synchronous driver: a search of `sims` simulations from each of `positions` at batch `b`.
fn sync_search_row(
    evaluator: &mut (dyn Evaluator<ChessState> + Send),
    positions: &[ChessState],
    sims: u64,
    b: usize,
) -> anyhow::Result<SearchRow> {
    let mut timed =
        Timed { inner: evaluator, model: Duration::ZERO, inside: Duration::ZERO, batches: 0, requests: 0 };
    let (mut wall, mut simulations) = (Duration::ZERO, 0u64);
    for s in positions {
        let mut mcts = Mcts::new(s.clone(), 0, search_params(sims))?;
        let start = Instant::now();
        mcts.run(&mut timed, RunLimits { simulations: sims, batch_size: b })?;
        wall += start.elapsed();
        simulations += mcts.stats().simulations;
    }
    let secs = wall.as_secs_f64().max(1e-9);
    Ok(SearchRow {
        batch: b,
        searches: positions.len(),
        simulations,
        model_calls: timed.requests,
        evaluate_calls: timed.batches,
        mean_fill: timed.requests as f64 / timed.batches.max(1) as f64,
        wall_s: secs,
        evaluate_s: timed.inside.as_secs_f64(),
        ort_s: timed.model.as_secs_f64(),
        sims_per_s: simulations as f64 / secs,
        wall_over_ort: secs / timed.model.as_secs_f64().max(1e-9),
        wall_over_evaluate: secs / timed.inside.as_secs_f64().max(1e-9),
    })
}

/// Prints the synchronous rows as a table.
fn print_search_rows(rows: &[SearchRow]) {
    outln!(
        "{:>6} {:>9} {:>9} {:>8} {:>6} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10}",
        "batch",
        "sims",
        "requests",
        "batches",
        "fill",
        "wall ms",
        "eval ms",
        "ORT ms",
        "sims/s",
        "wall/ORT",
        "wall/eval"
    );
    for row in rows {
        outln!(
            "{:>6} {:>9} {:>9} {:>8} {:>6.1} {:>10.1} {:>10.1} {:>10.1} {:>9.1} {:>9.3} {:>10.3}",
            row.batch,
            row.simulations,
            row.model_calls,
            row.evaluate_calls,
            row.mean_fill,
            row.wall_s * 1e3,
            row.evaluate_s * 1e3,
            row.ort_s * 1e3,
            row.sims_per_s,
            row.wall_over_ort,
            row.wall_over_evaluate
        );
    }
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
    /// ONNX Runtime intra-op threads per session, comma-separated: numbers or `all` (every core); each
    /// count is measured in the same run, and rows after the first count give their speed over its.
    #[arg(long, default_value = "1,all", value_delimiter = ',')]
    threads: Vec<String>,
    /// Seed of the positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// The local twin of remote --model packages: the package folder with the model.onnx the server
    /// serves [default: the shipped package of the same name].
    #[arg(long)]
    local: Option<PathBuf>,
    /// Remote packages: the concurrent requests one batch is split into, comma-separated [default: the
    /// package's max_in_flight].
    #[arg(long, value_delimiter = ',')]
    in_flight: Vec<usize>,
    /// Remote packages: milliseconds a proxy of ours adds to every request, comma-separated [default: 0, no
    /// proxy].
    #[arg(long, value_delimiter = ',')]
    latency_ms: Vec<u64>,
    /// Measure every row this many times and keep the fastest (on a machine busy with other work the slower
    /// ones measure that work).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
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

/// One measurement: a model, a k, a batch size (and for a remote package, an in-flight limit and a
/// latency).
#[derive(Debug, serde::Serialize)]
struct Row {
    model: String,
    format: &'static str,
    /// `local` or `remote`.
    source: &'static str,
    in_flight: Option<usize>,
    latency_ms: Option<u64>,
    k: String,
    batch: usize,
    positions: usize,
    positions_per_s: f64,
    tokens: usize,
    tokens_per_s: f64,
    wall_s: f64,
    ort_s: f64,
    wall_over_ort: f64,
    /// Positions/s over the local twin's at the same k and batch size.
    vs_local: Option<f64>,
    /// ONNX Runtime intra-op threads of the session.
    threads: usize,
    /// Positions/s over the same row's at the first thread count measured.
    vs_first_threads: Option<f64>,
}

/// The thread counts of `--threads`: numbers, or `all` for every core (each kept once, in order).
fn thread_counts(texts: &[String]) -> anyhow::Result<Vec<usize>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut out = Vec::new();
    for t in texts {
        let n = match t.trim() {
            "all" => cores,
            other => other
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| format!("--threads {other}: give a positive number or `all`"))?,
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    anyhow::ensure!(!out.is_empty(), "--threads needs at least one count");
    Ok(out)
}

/// One evaluator to measure: a local package, or a remote one at an in-flight limit and a latency.
struct Variant {
    source: &'static str,
    in_flight: Option<usize>,
    latency_ms: Option<u64>,
    evaluator: Box<dyn Evaluator<ChessState> + Send>,
    name: String,
    format: &'static str,
}

/// The evaluators `bench inference` measures for the package in `dir`: the package itself when it is
/// local; its local twin, then the remote model at each latency and in-flight limit when it is remote
/// (with the proxies that add the latency, which must live as long as the evaluators).
fn inference_variants(
    a: &InferenceArgs,
    dir: &Path,
    options: &SessionOptions,
) -> anyhow::Result<(Vec<Variant>, Vec<LatencyProxy>)> {
    let package = ModelPackage::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let local = |d: &Path| -> anyhow::Result<Variant> {
        let mavboard::inference::LoadedModel { evaluator, package: p, .. } =
            load_evaluator(d, options).with_context(|| format!("opening {}", d.display()))?;
        Ok(Variant {
            source: "local",
            in_flight: None,
            latency_ms: None,
            evaluator,
            name: p.manifest.name.clone(),
            format: p.manifest.format.name(),
        })
    };
    let Some(spec) = package.manifest.remote.clone() else {
        anyhow::ensure!(
            a.latency_ms.iter().all(|&l| l == 0),
            "--latency-ms applies to remote packages only; {} is local",
            dir.display()
        );
        return Ok((vec![local(dir)?], Vec::new()));
    };
    let mut variants = vec![local(&local_twin(&package, a.local.as_deref())?)?];
    let in_flight = if a.in_flight.is_empty() { vec![spec.max_in_flight] } else { a.in_flight.clone() };
    check_in_flight(&in_flight)?;
    let latencies = if a.latency_ms.is_empty() { vec![0] } else { a.latency_ms.clone() };
    let mut kept = Vec::new();
    for (ms, proxy) in start_proxies(&spec.endpoint, &latencies)? {
        let endpoint = proxy.as_ref().map_or_else(|| spec.endpoint.clone(), LatencyProxy::endpoint);
        for &n in &in_flight {
            let mavboard::inference::LoadedModel { evaluator, .. } =
                load_package_evaluator(&remote_variant(&package, &endpoint, n), options)
                    .with_context(|| format!("opening {} at {endpoint}", dir.display()))?;
            variants.push(Variant {
                source: "remote",
                in_flight: Some(n),
                latency_ms: Some(ms),
                evaluator,
                name: package.manifest.name.clone(),
                format: package.manifest.format.name(),
            });
        }
        kept.extend(proxy);
    }
    Ok((variants, kept))
}

/// Runs `mavboard bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        What::Inference(a) => bench_inference(a),
        What::Search(a) => bench_search(a),
        What::Solve(a) => super::solve::run_bench(a),
        What::PgnIndex(a) => bench_pgn_index(a),
    }
}

/// `bench inference`: positions/s of each model (local and its remote variants) at each thread count, k
/// and batch size, the fastest of `--repeat` passes.
fn bench_inference(a: InferenceArgs) -> anyhow::Result<()> {
    let dirs = if a.model.is_empty() { shipped_package_dirs() } else { a.model.clone() };
    anyhow::ensure!(!dirs.is_empty(), "no shipped model package found; pass --model DIR");
    let ks: Vec<TopK> = a.k.iter().map(|k| parse_k(k)).collect::<anyhow::Result<_>>()?;
    let threads = thread_counts(&a.threads)?;
    let mut options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
    let positions = random_positions(a.positions.max(1), a.seed);
    let mode = if a.free { DecodeMode::Free } else { DecodeMode::Constrained };
    if !a.json {
        print_inference_header(&a, positions.len(), &threads);
    }
    let mut bench = InferenceBench {
        a: &a,
        ks: &ks,
        positions: &positions,
        mode,
        first_rate: std::collections::HashMap::new(),
        rows: Vec::new(),
    };
    for (ti, &t) in threads.iter().enumerate() {
        options.threads.intra_op = t;
        for dir in &dirs {
            let (variants, _proxies) = inference_variants(&a, dir, &options)?;
            // The local twin's positions/s by (k, batch), for the remote rows' ratios.
            let mut local_rate: std::collections::HashMap<(String, usize), f64> =
                std::collections::HashMap::new();
            for mut v in variants {
                bench.variant(&mut v, (ti, t), &mut local_rate)?;
            }
        }
    }
    print_inference_end(&a, positions.len(), &threads, &bench.rows)
}

/// Ends `bench inference`: the rows as JSON with `--json`, else the note on the table's columns.
fn print_inference_end(
    a: &InferenceArgs,
    positions: usize,
    threads: &[usize],
    rows: &[Row],
) -> anyhow::Result<()> {
    if a.json {
        let out = serde_json::json!({
            "positions": positions, "threads": threads, "free": a.free,
            "repeat": a.repeat.max(1), "runs": rows,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!(
            "(tokens: prompt + generated for text models, input tokens otherwise; wall/ORT: wall time over the \
             summed time inside ONNX Runtime's Session::run, 1.000 = no overhead — for a remote model, the time \
             inside the server calls; where: remote n=N is a batch split into up to N concurrent requests, +Lms \
             a proxy adding L ms to each; vs local: positions/s over the local twin's at the same k and batch; \
             vs first: positions/s over the same row's at the first --threads count)"
        );
    }
    Ok(())
}

/// Where a variant's model runs, as the table's `where` column says it.
fn variant_place(v: &Variant) -> String {
    match (v.in_flight, v.latency_ms) {
        (Some(n), Some(ms)) if ms > 0 => format!("remote n={n} +{ms}ms"),
        (Some(n), _) => format!("remote n={n}"),
        _ => "local".to_owned(),
    }
}

/// A `bench inference` run: what every row measures, and the rows so far.
struct InferenceBench<'a> {
    /// The command's arguments.
    a: &'a InferenceArgs,
    /// The k values, as `a.k` gives them.
    ks: &'a [TopK],
    /// The positions evaluated.
    positions: &'a [ChessState],
    /// Free or constrained decoding.
    mode: DecodeMode,
    /// Positions/s at the first thread count, by (model, where, k, batch), for the later counts' ratios.
    first_rate: std::collections::HashMap<(String, String, String, usize), f64>,
    /// The rows measured.
    rows: Vec<Row>,
}

impl InferenceBench<'_> {
    /// Measures variant `v` at every k and batch size with the `threads.0`-th thread count `threads.1`;
    /// `local_rate` holds the local twin's positions/s by (k, batch).
    fn variant(
        &mut self,
        v: &mut Variant,
        threads: (usize, usize),
        local_rate: &mut std::collections::HashMap<(String, usize), f64>,
    ) -> anyhow::Result<()> {
        let (a, ks) = (self.a, self.ks);
        for (&k, k_text) in ks.iter().zip(&a.k) {
            let requests = value_requests(self.positions, k, self.mode);
            // Warm-up at the largest batch: the first runs of a session allocate.
            let warm = a.batch.iter().copied().max().unwrap_or(1).clamp(1, requests.len());
            for r in v.evaluator.evaluate(&requests[..warm]) {
                r.with_context(|| format!("{}: an evaluation failed", v.name))?;
            }
            for &b in &a.batch {
                self.row(v, &requests, (k_text, b.max(1)), threads, local_rate)?;
            }
        }
        Ok(())
    }

    /// Measures variant `v` on `requests` at k `k_text` and batch `b` with the `ti`-th thread count `t`, and
    /// prints and keeps its row.
    fn row(
        &mut self,
        v: &mut Variant,
        requests: &[EvalRequest<ChessState>],
        (k_text, b): (&String, usize),
        (ti, t): (usize, usize),
        local_rate: &mut std::collections::HashMap<(String, usize), f64>,
    ) -> anyhow::Result<()> {
        let name = v.name.clone();
        let (wall, model, tokens) = fastest_pass(v.evaluator.as_mut(), requests, b, self.a.repeat.max(1))
            .with_context(|| format!("{name}: an evaluation failed"))?;
        let secs = wall.as_secs_f64().max(1e-9);
        let positions_per_s = requests.len() as f64 / secs;
        let key = (k_text.clone(), b);
        let vs_local = match v.source {
            "local" => {
                local_rate.insert(key, positions_per_s);
                None
            }
            _ => local_rate.get(&key).map(|l| positions_per_s / l.max(1e-9)),
        };
        let place = variant_place(v);
        let first_key = (name.clone(), place.clone(), k_text.clone(), b);
        let vs_first_threads = if ti == 0 {
            self.first_rate.insert(first_key, positions_per_s);
            None
        } else {
            self.first_rate.get(&first_key).map(|f| positions_per_s / f.max(1e-9))
        };
        let row = Row {
            threads: t,
            vs_first_threads,
            model: name,
            format: v.format,
            source: v.source,
            in_flight: v.in_flight,
            latency_ms: v.latency_ms,
            k: k_text.clone(),
            batch: b,
            positions: requests.len(),
            positions_per_s,
            tokens,
            tokens_per_s: tokens as f64 / secs,
            wall_s: wall.as_secs_f64(),
            ort_s: model.as_secs_f64(),
            wall_over_ort: wall.as_secs_f64() / model.as_secs_f64().max(1e-9),
            vs_local,
        };
        if !self.a.json {
            print_inference_row(&row, &place);
        }
        self.rows.push(row);
        Ok(())
    }
}

/// Every position's request for its moves' values, with `k` and `mode`.
fn value_requests(positions: &[ChessState], k: TopK, mode: DecodeMode) -> Vec<EvalRequest<ChessState>> {
    positions
        .iter()
        .map(|s| {
            let mut r = EvalRequest::values(s.clone());
            r.top_k = k;
            r.mode = mode;
            r
        })
        .collect()
}

/// The fastest of `repeat` passes over `requests` in batches of `batch`: its wall time, the time inside
/// the model it reported, and the tokens.
fn fastest_pass(
    evaluator: &mut (dyn Evaluator<ChessState> + Send),
    requests: &[EvalRequest<ChessState>],
    batch: usize,
    repeat: usize,
) -> Result<(Duration, Duration, usize), EvalError> {
    let (mut wall, mut model, mut tokens) = (Duration::MAX, Duration::ZERO, 0usize);
    for _ in 0..repeat {
        let start = Instant::now();
        let mut results = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(batch) {
            results.extend(evaluator.evaluate(chunk));
        }
        let this_wall = start.elapsed();
        let (mut this_model, mut this_tokens) = (Duration::ZERO, 0usize);
        for r in results {
            let r = r?;
            this_model += r.timing.model;
            this_tokens += r.timing.tokens;
        }
        if this_wall < wall {
            (wall, model, tokens) = (this_wall, this_model, this_tokens);
        }
    }
    Ok((wall, model, tokens))
}

/// The table's first lines: what each row measured, and the columns.
fn print_inference_header(a: &InferenceArgs, positions: usize, threads: &[usize]) {
    outln!(
        "{} positions per row (the fastest of {}), ONNX Runtime threads {} ({} cores here), {}",
        positions,
        a.repeat.max(1),
        threads.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        if a.free { "free decoding" } else { "constrained decoding" }
    );
    outln!(
        "{:<14} {:<13} {:<17} {:>7} {:>4} {:>6} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8} {:>9}",
        "model",
        "format",
        "where",
        "threads",
        "k",
        "batch",
        "pos/s",
        "tokens/s",
        "wall ms",
        "ORT ms",
        "wall/ORT",
        "vs local",
        "vs first"
    );
}

/// One row of the table; `place` is where the model ran (local, or remote with its concurrency and delay).
fn print_inference_row(row: &Row, place: &str) {
    outln!(
        "{:<14} {:<13} {:<17} {:>7} {:>4} {:>6} {:>9} {:>10.0} {:>10.1} {:>10.1} {:>9.3} {:>8} {:>9}",
        row.model,
        row.format,
        place,
        row.threads,
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
        row.wall_over_ort,
        row.vs_local.map_or("-".to_owned(), |r| format!("{:.0} %", r * 100.0)),
        row.vs_first_threads.map_or("-".to_owned(), |r| format!("{r:.2}×")),
    );
}
