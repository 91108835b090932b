//! Reviewing a whole PGN file: games streamed from the input, reviewed on the engine's worker pool (one
//! evaluator per worker), written in input order to a partial output that a second run can resume (see
//! [`super::resume`]), then renamed into place.
//!
//! Nothing is dropped: a game that cannot be read is copied through byte for byte after a `%` escape line
//! (a PGN comment line that readers skip) saying why; a game the model fails on is copied with a game
//! comment saying why; every other game keeps its original bytes with the review's tokens inserted.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::io::Read;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use super::batch_settings::{BatchOptions, BatchPaths, JudgeSpec};
use super::error::ReviewError;
use super::job::{Job, JobOutput, report_line, review_job};
use super::judge::{EngineJudge, describe_limits};
use super::output::{Sink, Slot, copied, copy_tail, finish, open_sink, save};
use super::resume::ResumeState;
use crate::engine::pool::{Done, JobError, Pool};
use crate::engine::{EvaluatorBox, EvaluatorFactory};
use crate::pgn::{GameTree, PgnReader, WriteOptions, game_to_string};

/// Where a run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Input games whose output is written (including those of an earlier, resumed run).
    pub games: usize,
    /// Of these, games done by an earlier run.
    pub resumed: usize,
    /// Games reviewed in this run.
    pub reviewed: usize,
    /// Games that could not be read (copied through).
    pub unreadable: usize,
    /// Games the model or a worker failed on (copied through with the reason).
    pub failed: usize,
    /// Positions evaluated (or searched) in this run.
    pub positions: u64,
    /// Input bytes read so far.
    pub bytes_read: u64,
    /// The input's size.
    pub input_len: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchEnd {
    /// Every game is written; the output is in place.
    Finished,
    /// Stopped on request; the partial output and the state wait for a second run.
    Interrupted,
}

/// The result of [`review_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSummary {
    /// The counts at the end.
    pub progress: Progress,
    /// How it ended.
    pub end: BatchEnd,
}

/// A `Read` that counts the bytes it passes on.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

fn settings_key(options: &BatchOptions, report: bool) -> String {
    let t = options.review.thresholds;
    let judge = options
        .judge
        .as_ref()
        .map(|j| format!("judge={} at {}; ", j.path.display(), describe_limits(&j.limits)))
        .unwrap_or_default();
    format!(
        "{judge}model={}; {}; thresholds={},{},{}; report={}",
        options.model,
        options.review.describe(),
        t.inaccuracy,
        t.mistake,
        t.blunder,
        if report { "yes" } else { "no" }
    )
}

/// Reviews every game of `paths.input` into `paths.output` (see the module documentation), calling
/// `on_progress` after each game written. Returns early with [`BatchEnd::Interrupted`] once `stop` is set;
/// a second call with the same paths and options resumes.
pub fn review_file(
    paths: &BatchPaths,
    options: &BatchOptions,
    factory: EvaluatorFactory,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<BatchSummary, ReviewError> {
    let (input, input_len) = open_input(paths, options)?;
    let mut pool = start_workers(options, factory)?;
    // The model loaded on every worker: only now are output files created or reopened.
    let settings = settings_key(options, paths.report.is_some());
    let (mut sink, mut state) = open_sink(paths, input_len, &settings)?;

    let mut input = Input::new(input);
    input.skip_done(state.games_done, paths)?;
    let mut progress =
        Progress { games: state.games_done, resumed: state.games_done, input_len, ..Progress::default() };
    progress.bytes_read = input.count.get();
    on_progress(&progress);

    let mut flight = InFlight::new(state.games_done, progress, options.workers * 2);
    let mut interrupted = false;
    loop {
        if stop.load(Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        flight.fill(&mut input, &mut pool, paths);
        flight.progress.bytes_read = input.count.get();
        flight.write_ready(&mut sink, &mut state, paths, stop, on_progress)?;
        if flight.eof && flight.slots.is_empty() {
            break;
        }
        if flight.pool_to_game.is_empty() {
            continue;
        }
        let done = match pool.results().recv_timeout(Duration::from_millis(100)) {
            Ok(done) => done,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                save(&mut sink, &mut state, paths)?;
                return Err(ReviewError::Workers("every review worker stopped".into()));
            }
        };
        flight.finish(done);
    }
    drop(pool);
    save(&mut sink, &mut state, paths)?;
    let InFlight { progress, fatal, .. } = flight;
    if let Some(e) = fatal {
        return Err(e);
    }
    if interrupted {
        return Ok(BatchSummary { progress, end: BatchEnd::Interrupted });
    }
    match input.consumed {
        Some(offset) => copy_tail(&paths.input, offset, &mut sink, paths)?,
        None => sink.end_with_newline(paths)?,
    }
    finish(sink, paths, options)?;
    Ok(BatchSummary { progress, end: BatchEnd::Finished })
}

/// The error for game `game` of the input that cannot be read at all.
fn input_error(paths: &BatchPaths, game: usize, reason: String) -> ReviewError {
    ReviewError::Input { path: paths.input.clone(), game, reason }
}

/// The input being read: its games, the bytes read and the bytes the games read so far cover.
struct Input<R: Read> {
    /// The games.
    reader: PgnReader<Counting<R>>,
    /// Input bytes read so far.
    count: Rc<Cell<u64>>,
    /// Input bytes covered by the games read so far (None once a game's bytes are not known exactly, as
    /// for a file that is not UTF-8): what follows the last game is copied from there.
    consumed: Option<u64>,
}

impl<R: Read> Input<R> {
    /// Starts reading `inner`.
    fn new(inner: R) -> Input<R> {
        let count = Rc::new(Cell::new(0));
        let reader = PgnReader::new(Counting { inner, count: Rc::clone(&count) });
        Input { reader, count, consumed: Some(0) }
    }

    /// The next game (or why it cannot be read), counting the bytes it covers.
    fn next(&mut self) -> Option<Result<GameTree, crate::pgn::GameError>> {
        let item = self.reader.next();
        self.consumed = self.consumed.and_then(|c| Some(c + covered(&item, &self.reader)?));
        item
    }

    /// Skips the `games_done` games an earlier run wrote, checking that the input still has them.
    fn skip_done(&mut self, games_done: usize, paths: &BatchPaths) -> Result<(), ReviewError> {
        for game in 1..=games_done {
            match self.next() {
                None => {
                    return Err(ReviewError::StateMismatch {
                        state: paths.state(),
                        partial: paths.partial(),
                        why: format!(
                            "it records {} games done but the input has only {}",
                            games_done,
                            game - 1
                        ),
                    });
                }
                Some(Err(e)) if e.is_fatal() => return Err(input_error(paths, game, e.to_string())),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// The games between the input and the output: read, at a worker, or done and waiting for their turn.
struct InFlight {
    /// Each game's slot, by game number.
    slots: BTreeMap<usize, Slot>,
    /// The game number of each job at the workers, by job index.
    pool_to_game: HashMap<usize, usize>,
    /// The next game to write.
    next_game: usize,
    /// Games read so far.
    read_games: usize,
    /// The most jobs at the workers at once.
    max_in_flight: usize,
    /// Whether reading has ended (at the end of the input or a fatal error).
    eof: bool,
    /// The fatal input error that ended reading, returned once the games before it are written.
    fatal: Option<ReviewError>,
    /// The counts so far.
    progress: Progress,
    /// When the resume state was last saved.
    last_save: Instant,
}

impl InFlight {
    /// Nothing in flight yet, `games_done` games already written.
    fn new(games_done: usize, progress: Progress, max_in_flight: usize) -> InFlight {
        InFlight {
            slots: BTreeMap::new(),
            pool_to_game: HashMap::new(),
            next_game: games_done + 1,
            read_games: games_done,
            max_in_flight,
            eof: false,
            fatal: None,
            progress,
            last_save: Instant::now(),
        }
    }

    /// Reads games and hands them to the workers while there is room; unreadable ones get their slot now.
    fn fill<R: Read>(
        &mut self,
        input: &mut Input<R>,
        pool: &mut Pool<Job, JobOutput, ReviewError>,
        paths: &BatchPaths,
    ) {
        while !self.eof
            && self.pool_to_game.len() < self.max_in_flight
            && self.slots.len() < 4 * self.max_in_flight
        {
            match input.next() {
                None => self.eof = true,
                Some(Ok(tree)) => {
                    self.read_games += 1;
                    let leading = tree.leading_text().map(str::to_owned);
                    let original = tree
                        .source()
                        .map_or_else(|| game_to_string(&tree, &WriteOptions::default()), str::to_owned);
                    let index = pool.submit(Job { game: self.read_games, tree });
                    self.pool_to_game.insert(index, self.read_games);
                    self.slots.insert(self.read_games, Slot::Waiting { leading, original });
                }
                Some(Err(e)) if e.is_fatal() => {
                    self.fatal = Some(input_error(paths, self.read_games + 1, e.to_string()));
                    self.eof = true;
                }
                Some(Err(e)) => {
                    self.read_games += 1;
                    let read_games = self.read_games;
                    let failed = input.reader.failed_source().cloned().unwrap_or_default();
                    let note =
                        format!("mavboard: game {read_games} could not be read and is copied unchanged: {e}");
                    let bytes = copied(&failed.leading, &note, &failed.text);
                    let report = report_line(read_games, "unreadable", None, Some(e.to_string()), None);
                    self.slots.insert(read_games, Slot::Raw { bytes, report });
                    self.progress.unreadable += 1;
                }
            }
        }
    }

    /// Writes the games ready in input order, saving the resume state at most once a second.
    fn write_ready(
        &mut self,
        sink: &mut Sink,
        state: &mut ResumeState,
        paths: &BatchPaths,
        stop: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), ReviewError> {
        while matches!(self.slots.get(&self.next_game), Some(Slot::Text { .. } | Slot::Raw { .. })) {
            let Some(slot) = self.slots.remove(&self.next_game) else { break };
            sink.write_slot(slot, paths)?;
            state.games_done = self.next_game;
            self.next_game += 1;
            self.progress.games += 1;
            on_progress(&self.progress);
            if self.last_save.elapsed() >= Duration::from_secs(1) {
                save(sink, state, paths)?;
                self.last_save = Instant::now();
            }
            if stop.load(Ordering::SeqCst) {
                break;
            }
        }
        Ok(())
    }

    /// Puts the result of a job the workers finished in its game's slot.
    fn finish(&mut self, done: Done<JobOutput, ReviewError>) {
        let Some(game) = self.pool_to_game.remove(&done.index) else { return };
        let Some(Slot::Waiting { leading, original }) = self.slots.remove(&game) else { return };
        let slot = finished_slot(done.result, game, leading, original, &mut self.progress);
        self.slots.insert(game, slot);
    }
}

/// Checks the options and the paths, and opens the input: the file and its length.
fn open_input(paths: &BatchPaths, options: &BatchOptions) -> Result<(File, u64), ReviewError> {
    options.review.validate()?;
    if options.workers == 0 {
        return Err(ReviewError::InvalidOption {
            name: "threads",
            why: "at least 1 worker is needed".into(),
        });
    }
    let input = File::open(&paths.input).map_err(|e| ReviewError::io(&paths.input, &e))?;
    let input_len = input.metadata().map_err(|e| ReviewError::io(&paths.input, &e))?.len();
    if let (Ok(a), Ok(b)) = (fs::canonicalize(&paths.input), fs::canonicalize(&paths.output))
        && a == b
    {
        return Err(ReviewError::InvalidOption {
            name: "output",
            why: "it is the input file; pick another name".into(),
        });
    }
    Ok((input, input_len))
}

/// The review workers: each loads the model (and starts its judge engine, if any) before any job runs.
fn start_workers(
    options: &BatchOptions,
    factory: EvaluatorFactory,
) -> Result<Pool<Job, JobOutput, ReviewError>, ReviewError> {
    let review = options.review;
    let model = options.model.clone();
    let judge = options.judge.clone();
    Pool::new(
        "review",
        options.workers,
        move |worker| {
            let evaluator = factory(worker).map_err(|e| {
                ReviewError::Workers(format!("worker {worker} could not load the model: {e}"))
            })?;
            let judge = judge.as_ref().map(|j| EngineJudge::start(&j.path, j.limits)).transpose()?;
            Ok((evaluator, judge))
        },
        move |(evaluator, judge): &mut (EvaluatorBox, Option<EngineJudge>), job: Job| {
            Ok(review_job(evaluator.as_mut(), judge.as_mut(), job, &review, &model))
        },
    )
    .map_err(|e| ReviewError::Workers(e.to_string()))
}

/// The slot of game `game` once its job is done: the reviewed text, or the original copied unchanged with
/// a note saying why. Counts the game in `progress`.
fn finished_slot(
    result: Result<JobOutput, JobError<ReviewError>>,
    game: usize,
    leading: Option<String>,
    original: String,
    progress: &mut Progress,
) -> Slot {
    match result {
        Ok(out) => {
            if out.reviewed {
                progress.reviewed += 1;
            } else {
                progress.failed += 1;
            }
            progress.positions += out.positions;
            Slot::Text { leading, text: out.text, report: out.report }
        }
        Err(e) => {
            progress.failed += 1;
            let why = match e {
                JobError::Failed(e) => e.to_string(),
                JobError::Panicked(m) => format!("the review worker panicked: {m}"),
            };
            let note = format!("mavboard: game {game} could not be reviewed and is copied unchanged: {why}");
            let bytes = copied(leading.as_deref().unwrap_or("\n").as_bytes(), &note, original.as_bytes());
            Slot::Raw { bytes, report: report_line(game, "review_failed", None, Some(why), None) }
        }
    }
}

/// The input bytes an item of the reader covers (what preceded the game, and the game), when known.
fn covered<R: Read>(
    item: &Option<Result<GameTree, crate::pgn::GameError>>,
    reader: &PgnReader<R>,
) -> Option<u64> {
    match item {
        None => Some(0),
        Some(Ok(tree)) => Some((tree.leading_text()?.len() + tree.source()?.len()) as u64),
        Some(Err(e)) if e.is_fatal() => None,
        Some(Err(_)) => reader.failed_source().map(|f| (f.leading.len() + f.text.len()) as u64),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::engine::EvaluatorBox;
    use crate::inference::material::MaterialEvaluator;
    use crate::review::options::ReviewOptions;
    use crate::review::resume::ResumeState;

    const PGN: &str = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
        [Event \"broken\"]\n\n1. e4 e4 *\n\n\
        % an escape line\n[Event \"c\"]\n\n{Old comment} 1. d4 {[%clk 0:01:00]} d5 $1 (1... Nf6 2. c4) 2. c4 *\n\n\
        [Event \"d\"]\n\n1. Nf3 Nf6 2. g3 g6 *\n";

    fn factory() -> EvaluatorFactory {
        Arc::new(|_| Ok(Box::new(MaterialEvaluator::new(9)) as EvaluatorBox))
    }

    fn setup(name: &str, report: bool) -> (PathBuf, BatchPaths) {
        let dir = std::env::temp_dir().join(format!("mavboard-batch-{name}-{}", std::process::id()));
        fs::remove_dir_all(&dir).ok();
        fs::create_dir_all(&dir).expect("tmp dir");
        let input = dir.join("games.pgn");
        fs::write(&input, PGN).expect("write input");
        let paths = BatchPaths {
            output: BatchPaths::default_output(&input),
            input,
            report: report.then(|| dir.join("report.json")),
        };
        (dir, paths)
    }

    fn options(workers: usize) -> BatchOptions {
        BatchOptions {
            review: ReviewOptions { batch_size: 3, ..ReviewOptions::default() },
            workers,
            model: "mock".into(),
            judge: None,
        }
    }

    #[test]
    fn a_file_is_annotated_in_order_and_nothing_is_dropped() {
        let (dir, paths) = setup("all", true);
        assert_eq!(paths.output, dir.join("games.annotated.pgn"));
        let mut seen = Vec::new();
        let summary =
            review_file(&paths, &options(2), factory(), &AtomicBool::new(false), &mut |p| seen.push(p.games))
                .expect("runs");
        assert_eq!(summary.end, BatchEnd::Finished);
        assert_eq!(
            (summary.progress.games, summary.progress.reviewed, summary.progress.unreadable),
            (4, 3, 1)
        );
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        assert_eq!(summary.progress.positions, 7 + 3 + 4);
        let out = fs::read_to_string(&paths.output).expect("output");
        assert!(!paths.partial().exists() && !paths.state().exists());
        assert!(out.contains("\n% mavboard: game 2 could not be read and is copied unchanged: "), "{out}");
        assert!(out.contains("[Event \"broken\"]\n\n1. e4 e4 *\n"));
        assert!(out.contains("% an escape line\n[Event \"c\"]\n\n{Old comment} {mavboard review (mock"));
        assert!(out.contains("1. d4 {[%clk 0:01:00]} {[%eval "), "{out}");
        let games: Vec<_> = PgnReader::new(out.as_bytes()).collect();
        assert_eq!(games.len(), 4);
        assert!(games[1].is_err());
        let report: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(paths.report.as_ref().expect("report")).expect("report file"),
        )
        .expect("report is JSON");
        let entries = report["games"].as_array().expect("games");
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[1]["status"], "unreadable");
        assert_eq!(entries[0]["headers"]["Event"], "a");
        assert_eq!(entries[0]["review"]["moves"].as_array().map(Vec::len), Some(7));
        assert_eq!(report["model"], "mock");
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_model_that_does_not_load_leaves_no_files() {
        let (dir, paths) = setup("noload", true);
        let broken: EvaluatorFactory = Arc::new(|_| Err("no such model".into()));
        let err = review_file(&paths, &options(2), broken, &AtomicBool::new(false), &mut |_| {})
            .expect_err("fails");
        assert!(err.to_string().contains("no such model"), "{err}");
        assert!(!paths.partial().exists() && !paths.state().exists() && !paths.output.exists());
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn threads_do_not_change_the_output() {
        let (dir, paths) = setup("threads", false);
        review_file(&paths, &options(1), factory(), &AtomicBool::new(false), &mut |_| {}).expect("runs");
        let one = fs::read(&paths.output).expect("output");
        review_file(&paths, &options(3), factory(), &AtomicBool::new(false), &mut |_| {}).expect("runs");
        assert_eq!(fs::read(&paths.output).expect("output"), one);
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_interrupted_run_leaves_valid_partial_output_and_resumes() {
        let (dir, paths) = setup("resume", true);
        review_file(&paths, &options(1), factory(), &AtomicBool::new(false), &mut |_| {}).expect("runs");
        let whole = fs::read_to_string(&paths.output).expect("output");
        let whole_report = fs::read_to_string(paths.report.as_ref().expect("report")).expect("report");
        fs::remove_file(&paths.output).expect("remove");
        // Stop after two games.
        let stop = AtomicBool::new(false);
        let summary = review_file(&paths, &options(2), factory(), &stop, &mut |p| {
            if p.games == 2 {
                stop.store(true, Ordering::SeqCst);
            }
        })
        .expect("runs");
        assert_eq!(summary.end, BatchEnd::Interrupted);
        assert!(!paths.output.exists());
        let state = ResumeState::load(&paths.state()).expect("state").expect("kept");
        assert_eq!(state.games_done, 2);
        let partial = fs::read_to_string(paths.partial()).expect("partial");
        assert_eq!(partial.len() as u64, state.output_len);
        assert!(whole.starts_with(&partial));
        let games: Vec<_> = PgnReader::new(partial.as_bytes()).collect();
        assert_eq!(games.len(), 2);
        // A crash after more bytes were written is cut back to the state.
        fs::OpenOptions::new()
            .append(true)
            .open(paths.partial())
            .and_then(|mut f| f.write_all(b"\n[Event \"half"))
            .expect("append");
        let mut resumed_from = None;
        let summary = review_file(&paths, &options(2), factory(), &AtomicBool::new(false), &mut |p| {
            resumed_from.get_or_insert(p.resumed);
        })
        .expect("resumes");
        assert_eq!(summary.end, BatchEnd::Finished);
        assert_eq!(resumed_from, Some(2));
        assert_eq!((summary.progress.games, summary.progress.reviewed), (4, 2));
        assert_eq!(fs::read_to_string(&paths.output).expect("output"), whole);
        assert_eq!(fs::read_to_string(paths.report.as_ref().expect("report")).expect("report"), whole_report);
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_state_from_other_settings_is_refused() {
        let (dir, paths) = setup("mismatch", false);
        let stop = AtomicBool::new(true);
        let summary = review_file(&paths, &options(1), factory(), &stop, &mut |_| {}).expect("runs");
        assert_eq!(summary.end, BatchEnd::Interrupted);
        let mut other = options(1);
        other.review.scoring = crate::inference::evaluator::Scoring::Max;
        let err = review_file(&paths, &other, factory(), &AtomicBool::new(false), &mut |_| {})
            .expect_err("refused");
        assert!(matches!(err, ReviewError::StateMismatch { .. }), "{err}");
        assert!(err.to_string().contains("max scoring"), "{err}");
        // The same settings resume.
        review_file(&paths, &options(1), factory(), &AtomicBool::new(false), &mut |_| {}).expect("resumes");
        assert!(paths.output.exists());
        let same_as_input = BatchPaths { output: paths.input.clone(), ..paths.clone() };
        assert!(
            review_file(&same_as_input, &options(1), factory(), &AtomicBool::new(false), &mut |_| {})
                .is_err()
        );
        fs::remove_dir_all(&dir).ok();
    }
}
