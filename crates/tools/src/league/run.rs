//! Running a league: the schedule, resuming from the results file, building the agents, playing the games
//! (one after the other, or several at once on worker threads: [`super::pool`]), and keeping
//! `results.jsonl`, the games' records (`games.pgn` for chess, `games.tsv` for Connect Four, `games.sgf` for
//! Hex), `table.txt` and `table.json` up to date in the output folder after every game. One generic run
//! serves every [`LeagueGame`].

use super::internal_agent::{InternalAgent, MinimaxAgent};
use crate::mav::buckets::Buckets;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use super::LeagueError;
use super::agent::Agent;
pub use super::config::{LeagueConfig, LeagueGameSetup};
use super::crosstable::{Table, build};
use super::game::LeagueGame;
use super::model_agent::{MavAgent, MctsAgent, SharedEvaluator};
use super::openings::{Opening, after_plies, choose, read_book};
use super::play::play_game;
use super::pool::{PoolEvent, run_pool};
use super::record::{GameRecord, PgnHeaders, utc_date};
use super::results::{append, load, write_atomic};
use super::rules::Rules;
use super::schedule::{ScheduledGame, remaining, round_robin};
use super::settings::{Settings, fingerprint};
use super::spec::{AgentKind, AgentSpec};
use crate::game::chess::ChessState;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::game::{GameKind, GameState};
use crate::model::package::ModelPackage;
use crate::solve::stop::StopFlag;

/// The files of a league's output folder.
#[derive(Debug, Clone)]
pub struct OutputFiles {
    /// `league.json`.
    pub settings: PathBuf,
    /// `results.jsonl`.
    pub results: PathBuf,
    /// The games' records: `games.pgn` (chess), `games.tsv` (Connect Four) or `games.sgf` (Hex).
    pub pgn: PathBuf,
    /// `table.txt`.
    pub table: PathBuf,
    /// `table.json`.
    pub table_json: PathBuf,
}

impl OutputFiles {
    /// The files of a chess league in `dir`.
    pub fn in_dir(dir: &Path) -> OutputFiles {
        OutputFiles::for_records(dir, "games.pgn")
    }

    /// The files in `dir`, the games' records in `records`.
    pub fn for_records(dir: &Path, records: &str) -> OutputFiles {
        OutputFiles {
            settings: dir.join("league.json"),
            results: dir.join("results.jsonl"),
            pgn: dir.join(records),
            table: dir.join("table.txt"),
            table_json: dir.join("table.json"),
        }
    }
}

/// What the caller hears while the league runs.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Before the first game: how many are scheduled and how many the results file already holds.
    Start {
        /// Games scheduled.
        total: usize,
        /// Games already finished (kept from an earlier run).
        done: usize,
        /// The openings chosen: the index of each in its book or enumeration, and its position as text.
        openings: &'a [(usize, String)],
    },
    /// A game begins.
    GameStart {
        /// The game.
        game: &'a ScheduledGame,
        /// White's label.
        white: &'a str,
        /// Black's label.
        black: &'a str,
    },
    /// A game ended and is saved.
    GameEnd {
        /// Its record.
        record: &'a GameRecord,
        /// Games finished now.
        done: usize,
        /// Games scheduled.
        total: usize,
    },
}

/// How a league run ended.
#[derive(Debug, Clone)]
pub struct LeagueSummary {
    /// The table over every game in the results file.
    pub table: Table,
    /// Games played by this run.
    pub played: usize,
    /// Games found finished from an earlier run.
    pub resumed: usize,
    /// Games scheduled.
    pub total: usize,
    /// Model calls MCTS agents saved by tree reuse in this run.
    pub reused_evaluations: u64,
    /// The output files.
    pub files: OutputFiles,
}

/// What the label of an agent stands for, for the settings file.
fn describe(spec: &AgentSpec, model: &Path) -> Result<String, LeagueError> {
    match &spec.kind {
        k if k.uses_model() => {
            let dir = spec.model.as_deref().unwrap_or(model);
            let print = fingerprint(&dir.join("mav.json")).map_err(|_| {
                LeagueError::Settings(format!(
                    "{}: no model package at {} (mav.json missing); pass --model DIR",
                    spec.label(),
                    dir.display()
                ))
            })?;
            Ok(format!("{k:?}, model {} (mav.json {print})", dir.display()))
        }
        k => Ok(format!("{k:?}")),
    }
}

/// Whether this league needs Stockfish.
pub fn needs_stockfish(agents: &[AgentSpec], rules: &Rules) -> bool {
    rules.eval.is_some() || agents.iter().any(|a| a.kind.is_stockfish())
}

/// Runs (or resumes) the league in `config.out`. `stop` ends it between moves (the game in progress is
/// dropped, the finished ones are kept) with [`LeagueError::Interrupted`].
pub fn run_league(
    config: &LeagueConfig,
    stop: &StopFlag,
    on: &mut dyn FnMut(Progress<'_>),
) -> Result<LeagueSummary, LeagueError> {
    if config.openings == Some(0) {
        return Err(LeagueError::Settings("--openings must be at least 1".into()));
    }
    let none =
        |what: &str| LeagueError::Settings(format!("{what} gives no opening position that is not over"));
    match &config.game {
        LeagueGameSetup::Chess { book } => {
            let openings = choose(read_book(book)?, config.openings, config.seed);
            run_game::<ChessState>(config, openings, stop, on)
        }
        LeagueGameSetup::ConnectFour { plies } => {
            let all = after_plies(&ConnectFourState::new(), *plies)?;
            if all.is_empty() {
                return Err(none(&config.game.describe()));
            }
            run_game::<ConnectFourState>(config, choose(all, config.openings, config.seed), stop, on)
        }
        LeagueGameSetup::Hex { size, plies } => {
            if !(5..=13).contains(size) {
                return Err(LeagueError::Settings(format!(
                    "--hex-size {size}: Hex boards run from 5x5 to 13x13"
                )));
            }
            let start =
                HexState::new(*size).map_err(|e| LeagueError::Settings(format!("--hex-size {size}: {e}")))?;
            let all = after_plies(&start, *plies)?;
            if all.is_empty() {
                return Err(none(&config.game.describe()));
            }
            run_game::<HexState>(config, choose(all, config.openings, config.seed), stop, on)
        }
    }
}

/// Checks that every reference player among `agents` plays `game` (Stockfish plays chess, the solver
/// Connect Four, playout MCTS Hex), naming the one that does not and the game's reference players.
pub fn check_agents(game: GameKind, agents: &[AgentSpec]) -> Result<(), LeagueError> {
    match game {
        GameKind::Chess | GameKind::Chess960 => check_agents_for::<ChessState>(agents),
        GameKind::ConnectFour => check_agents_for::<ConnectFourState>(agents),
        GameKind::Hex => check_agents_for::<HexState>(agents),
    }
}

fn check_agents_for<G: LeagueGame>(agents: &[AgentSpec]) -> Result<(), LeagueError> {
    match agents.iter().find(|spec| !spec.kind.uses_model() && !G::is_reference_player(&spec.kind)) {
        Some(spec) => Err(super::game::not_for::<G>(&spec.label())),
        None => Ok(()),
    }
}

/// Runs (or resumes) the league of `G` from `openings` in `config.out`.
fn run_game<G: LeagueGame>(
    config: &LeagueConfig,
    openings: Vec<Opening<G>>,
    stop: &StopFlag,
    on: &mut dyn FnMut(Progress<'_>),
) -> Result<LeagueSummary, LeagueError> {
    let labels = check_setup::<G>(config)?;
    let stockfish = locate_needed_stockfish(config)?;
    let files = prepare_output::<G>(config, &openings)?;

    let schedule = round_robin(&labels, &openings.iter().map(|o| o.index).collect::<Vec<_>>());
    let mut records = load(&files.results)?;
    let done_ids: HashSet<String> = records.iter().map(|r| r.id.clone()).collect();
    check_openings_kept(&schedule, &records, &openings, &files.results)?;
    let todo = remaining(&schedule, &done_ids);
    let resumed = schedule.len() - todo.len();
    let listed: Vec<(usize, String)> = openings.iter().map(|o| (o.index, o.fen.clone())).collect();
    on(Progress::Start { total: schedule.len(), done: resumed, openings: &listed });
    let run = LeagueRun {
        config,
        openings: &openings,
        labels: &labels,
        order: schedule.iter().enumerate().map(|(i, g)| (g.id.as_str(), i)).collect(),
        files: &files,
        stockfish: stockfish.as_deref(),
        date: utc_date(),
    };
    let mut played = 0;
    let end = run_pool(
        config.concurrency,
        &todo,
        stop,
        |halt| run.seat(halt),
        |seat, g, halt| run.play(seat, g, halt),
        |s| s.agents.mcts_reuse(),
        &mut |event| {
            match event {
                PoolEvent::Started(g) => {
                    on(Progress::GameStart { game: g, white: &labels[g.white], black: &labels[g.black] });
                }
                PoolEvent::Finished(record) => {
                    append(&files.results, &record)?;
                    played += 1;
                    records.push(record.clone());
                    run.write_outputs(&mut records)?;
                    on(Progress::GameEnd { record: &record, done: resumed + played, total: schedule.len() });
                }
            }
            Ok(())
        },
    )?;
    if end.stopped {
        return Err(LeagueError::Interrupted { done: resumed + played, total: schedule.len() });
    }
    let reused = end.tally;
    let table = run.write_outputs(&mut records)?;
    Ok(LeagueSummary { table, played, resumed, total: schedule.len(), reused_evaluations: reused, files })
}

/// Checks the agents (at least two, each playing `G`) and the anchor; returns the agents' labels.
fn check_setup<G: LeagueGame>(config: &LeagueConfig) -> Result<Vec<String>, LeagueError> {
    config.rules.validate()?;
    if config.agents.len() < 2 {
        return Err(LeagueError::Settings("a league needs at least two agents".into()));
    }
    let labels: Vec<String> = config.agents.iter().map(AgentSpec::label).collect();
    check_agents_for::<G>(&config.agents)?;
    if let Some(a) = &config.anchor
        && !labels.contains(a)
    {
        return Err(LeagueError::Settings(format!(
            "the anchor {a} is not one of the agents ({})",
            labels.join(", ")
        )));
    }
    Ok(labels)
}

/// The Stockfish binary, found when the league needs one.
fn locate_needed_stockfish(config: &LeagueConfig) -> Result<Option<PathBuf>, LeagueError> {
    if !needs_stockfish(&config.agents, &config.rules) {
        return Ok(None);
    }
    crate::uci::locate::locate_stockfish(config.stockfish.as_deref())
        .map(Some)
        .map_err(|source| LeagueError::Uci { agent: "stockfish".into(), source: Box::new(source) })
}

/// Creates the output folder and writes the settings file there (checked against an earlier run's).
fn prepare_output<G: LeagueGame>(
    config: &LeagueConfig,
    openings: &[Opening<G>],
) -> Result<OutputFiles, LeagueError> {
    let mut agents_described = BTreeMap::new();
    for spec in &config.agents {
        agents_described.insert(spec.label(), describe(spec, &config.model)?);
    }
    let settings = Settings {
        book: config.game.describe(),
        openings: openings.iter().map(|o| (o.index, o.fen.clone())).collect(),
        rules: config.rules,
        stockfish_limits: config.stockfish_limits,
        batch: config.batch,
        agents: agents_described,
    };
    std::fs::create_dir_all(&config.out).map_err(|e| LeagueError::io(&config.out, &e))?;
    let files = OutputFiles::for_records(&config.out, G::RECORDS_FILE);
    let settings = match Settings::load(&files.settings)? {
        Some(old) => settings.resume(&old, &files.settings)?,
        None => settings,
    };
    settings.save(&files.settings)?;
    Ok(files)
}

/// Checks that every finished game in `records` was played from the opening it is scheduled from now.
fn check_openings_kept<G: GameState>(
    schedule: &[ScheduledGame],
    records: &[GameRecord],
    openings: &[Opening<G>],
    results: &Path,
) -> Result<(), LeagueError> {
    for g in schedule {
        if let Some(r) = records.iter().find(|r| r.id == g.id)
            && r.opening_fen != openings[g.opening].fen
        {
            return Err(LeagueError::Mismatch {
                path: results.to_path_buf(),
                why: format!(
                    "game {} was played from {} but the opening is now {}",
                    g.id, r.opening_fen, openings[g.opening].fen
                ),
            });
        }
    }
    Ok(())
}

/// What the games of one league run share: its settings, agents' labels, openings and output files.
struct LeagueRun<'a, G: GameState> {
    /// The league's settings.
    config: &'a LeagueConfig,
    /// The openings, by the schedule's opening number.
    openings: &'a [Opening<G>],
    /// The agents' labels, by the schedule's agent number.
    labels: &'a [String],
    /// Each game's place in the schedule, by id.
    order: HashMap<&'a str, usize>,
    /// The output files.
    files: &'a OutputFiles,
    /// The Stockfish binary, when the league needs one.
    stockfish: Option<&'a Path>,
    /// The date for the records' headers.
    date: String,
}

impl<G: LeagueGame> LeagueRun<'_, G> {
    /// Sorts `records` into schedule order and rewrites the records file and the tables; returns the table.
    fn write_outputs(&self, records: &mut [GameRecord]) -> Result<Table, LeagueError> {
        let (config, files) = (self.config, self.files);
        records.sort_by_key(|r| self.order.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
        write_atomic(&files.pgn, G::all_records(records).as_bytes())?;
        let table = build(self.labels, records, config.anchor.as_deref(), config.prior_draws);
        let text =
            format!("{}\nadjudication: {}\n", table.render(), config.rules.describe_with(config.game.ends()));
        write_atomic(&files.table, text.as_bytes())?;
        let json = serde_json::to_string_pretty(&table)
            .map_err(|e| LeagueError::Io { path: files.table_json.clone(), why: e.to_string() })?;
        write_atomic(&files.table_json, json.as_bytes())?;
        Ok(table)
    }

    /// One worker's seat: its own agents (watching the pool's flag `halt`) and adjudicator.
    fn seat(&self, halt: &StopFlag) -> Result<Seat<G>, LeagueError> {
        let mut agents = build_agents::<G>(self.config, self.stockfish)?;
        for agent in &mut agents.list {
            agent.watch(halt);
        }
        Ok(Seat { agents, adjudicator: G::adjudicator(self.config, self.stockfish)? })
    }

    /// Plays game `g` at `seat`; `None` when `halt` was raised before it ended.
    fn play(
        &self,
        seat: &mut Seat<G>,
        g: &ScheduledGame,
        halt: &StopFlag,
    ) -> Result<Option<GameRecord>, LeagueError> {
        let (config, labels) = (self.config, self.labels);
        let opening = &self.openings[g.opening];
        let started = Instant::now();
        let (white, black) = pair_mut(&mut seat.agents.list, g.white, g.black)?;
        let judge = seat.adjudicator.as_mut().map(|a| a.as_mut() as &mut dyn super::play::Adjudicate<G>);
        let Some(game) = play_game(white, black, &opening.state, &config.rules, judge, halt)? else {
            return Ok(None);
        };
        let headers = PgnHeaders {
            event: config.event.clone(),
            date: self.date.clone(),
            round: self.order.get(g.id.as_str()).map_or(0, |i| i + 1),
            white: labels[g.white].clone(),
            black: labels[g.black].clone(),
            book_index: opening.index,
        };
        let pgn = G::record_text(&headers, opening, &game)?;
        Ok(Some(GameRecord {
            id: g.id.clone(),
            white: labels[g.white].clone(),
            black: labels[g.black].clone(),
            book_index: opening.index,
            opening_fen: opening.fen.clone(),
            moves: action_texts(&opening.state, game.moves.iter().map(|m| m.action)),
            result: game.result,
            termination: game.termination,
            adjudicated: game.adjudicated,
            seconds: started.elapsed().as_secs_f64(),
            pgn,
        }))
    }
}

/// The moves in the game's notation (UCI for chess), each read in the position it was played in.
fn action_texts<G: GameState>(start: &G, moves: impl Iterator<Item = G::Action>) -> Vec<String> {
    let mut state = start.clone();
    let mut out = Vec::new();
    for m in moves {
        out.push(state.action_to_text(m));
        match state.play(m) {
            Ok(next) => state = next,
            Err(_) => break,
        }
    }
    out
}

/// What one worker plays with: its agents and its adjudicator.
struct Seat<G: GameState> {
    agents: Agents<G>,
    adjudicator: Option<Box<dyn super::play::Adjudicate<G>>>,
}

/// The agents of a league, built once per worker.
struct Agents<G: GameState> {
    list: Vec<Box<dyn Agent<G>>>,
    mcts: Vec<Rc<RefCell<u64>>>,
}

impl<G: GameState> Agents<G> {
    fn mcts_reuse(&self) -> u64 {
        self.mcts.iter().map(|c| *c.borrow()).sum()
    }
}

/// An MCTS agent that reports its tree-reuse savings through a shared counter.
struct CountingMcts<G: GameState> {
    inner: MctsAgent<G>,
    saved: Rc<RefCell<u64>>,
}

impl<G: GameState> Agent<G> for CountingMcts<G> {
    fn label(&self) -> &str {
        self.inner.label()
    }
    fn new_game(&mut self) -> Result<(), LeagueError> {
        self.inner.new_game()
    }
    fn choose(
        &mut self,
        game: &super::agent::GameView<'_, G>,
    ) -> Result<super::agent::Choice<G>, LeagueError> {
        let c = self.inner.choose(game);
        *self.saved.borrow_mut() = self.inner.reused_evaluations;
        c
    }
}

fn build_agents<G: LeagueGame>(
    config: &LeagueConfig,
    stockfish: Option<&Path>,
) -> Result<Agents<G>, LeagueError> {
    let mut models: HashMap<PathBuf, SharedEvaluator<G>> = HashMap::new();
    let mut list: Vec<Box<dyn Agent<G>>> = Vec::new();
    let mut mcts = Vec::new();
    for spec in &config.agents {
        let label = spec.label();
        let model =
            |models: &mut HashMap<PathBuf, SharedEvaluator<G>>| -> Result<SharedEvaluator<G>, LeagueError> {
                let dir = spec.model.clone().unwrap_or_else(|| config.model.clone());
                if let Some(m) = models.get(&dir) {
                    return Ok(m.clone());
                }
                let shared: SharedEvaluator<G> = Rc::new(RefCell::new(G::open_model(&dir, &config.session)?));
                models.insert(dir, shared.clone());
                Ok(shared)
            };
        let agent: Box<dyn Agent<G>> = match spec.kind {
            AgentKind::Mav { scoring } => {
                Box::new(MavAgent::new(label.clone(), scoring, model(&mut models)?))
            }
            AgentKind::Mcts { simulations, scoring } => {
                let saved = Rc::new(RefCell::new(0));
                mcts.push(saved.clone());
                let inner =
                    MctsAgent::new(label.clone(), simulations, scoring, config.batch, 0, model(&mut models)?);
                Box::new(CountingMcts { inner, saved })
            }
            AgentKind::Minimax { breadth, depth } => {
                let dir = spec.model.clone().unwrap_or_else(|| config.model.clone());
                let package = ModelPackage::open(&dir)
                    .map_err(|e| LeagueError::Settings(format!("{label}: {}: {e}", dir.display())))?;
                let buckets =
                    Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(u32::MAX))
                        .map_err(|e| LeagueError::Settings(format!("{label}: mav.json num_buckets: {e}")))?;
                Box::new(MinimaxAgent::new(label.clone(), breadth, depth, buckets, model(&mut models)?))
            }
            AgentKind::Internal { breadth, depth, decoding } => {
                let dir = spec.model.clone().unwrap_or_else(|| config.model.clone());
                Box::new(InternalAgent::new(
                    label.clone(),
                    breadth,
                    depth,
                    decoding,
                    dir,
                    config.session.clone(),
                ))
            }
            _ => G::reference_agent(spec, label.clone(), config, stockfish)?,
        };
        list.push(agent);
    }
    Ok(Agents { list, mcts })
}

/// Two distinct agents, mutably.
fn pair_mut<G: GameState>(
    list: &mut [Box<dyn Agent<G>>],
    a: usize,
    b: usize,
) -> Result<(&mut dyn Agent<G>, &mut dyn Agent<G>), LeagueError> {
    if a == b || a >= list.len() || b >= list.len() {
        return Err(LeagueError::Settings(format!("bad pairing {a} vs {b}")));
    }
    if a < b {
        let (lo, hi) = list.split_at_mut(b);
        Ok((lo[a].as_mut(), hi[0].as_mut()))
    } else {
        let (lo, hi) = list.split_at_mut(a);
        Ok((hi[0].as_mut(), lo[b].as_mut()))
    }
}

/// The model package's `training` block from its mav.json (to say which model played), if it has one.
pub fn model_provenance(dir: &Path) -> Option<String> {
    let package = ModelPackage::open(dir).ok()?;
    let text = crate::model::bounded_read::read_text(
        &dir.join("mav.json"),
        crate::model::bounded_read::MAX_MANIFEST_BYTES,
        "mav.json",
    )
    .ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let training = json.get("training").map(|t| t.to_string()).unwrap_or_else(|| "no training block".into());
    Some(format!("{} ({}): {training}", package.manifest.name, package.manifest.format.name()))
}
