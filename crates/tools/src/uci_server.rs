//! The UCI server: mavboard as a chess engine for GUIs and tournament managers (cutechess, Arena, ...).
//!
//! Layering: this module sits *above* [`crate::engine`] (it drives an [`Engine`]), while the UCI client in
//! [`crate::uci`] sits below it, so the two halves of UCI never form an import cycle with the engine. Only
//! the CLI (`mavboard uci`) and tests use it.
//!
//! [`serve`] reads UCI commands line by line, drives an [`Engine`] and writes the answers: `id`/`option`/
//! `uciok`, `readyok` (after the model has loaded), `info` lines about every 100 ms while searching and
//! `bestmove`. Models come from a [`FactoryBuilder`], so tests use mock evaluators and the CLI the real
//! ones.
//!
//! An `info` line (one per line of `MultiPV`, best first) gives: `depth`, the length of the line's
//! principal variation; `seldepth`, the deepest pass of the search; `nodes`, the simulations of this
//! search; `score cp`, the move's search value turned back into centipawns with the inverse of the Lichess
//! formula, or `score mate N` when the line ends in checkmate; with `UCI_ShowWDL`, `wdl W D L` from the
//! model's value distribution ([`crate::mav::wdl`]); `hashfull`, how full the engine's cache of model
//! answers is. `go depth` stops when the principal variation is that long, `go mate N` when it mates in at
//! most N moves, `go ponder` searches until `ponderhit` (then the clock limits of that `go` apply) or
//! `stop`, and `searchmoves` restricts the root's moves.
//!
//! Every `go` is answered by one `bestmove`, in order, with one exception: a search that a later `go`,
//! `position` or `ucinewgame` replaces before it ended and without a `stop` (a GUI that skipped the
//! `stop`) is not answered, since a GUI would take its `bestmove` for the newer question's. A search that
//! got a `stop` is always answered. A `ponderhit` with no `go ponder` running is named in an
//! `info string` and otherwise ignored, as Stockfish ignores it.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::select;

use crate::engine::{
    Command, Engine, EngineConfig, EngineError, EvaluatorFactory, Event, GamePosition, GoLimits, SearchReport,
};
use crate::game::chess::ChessState;
use crate::game::fen::ModeChoice;
use crate::game::{GameState, Player};
use crate::inference::device::{Device, SessionThreads};
use crate::inference::evaluator::Scoring;
use crate::mav::buckets::cp_from_win_prob;
use crate::mav::wdl::wdl;
use crate::search::mcts::{MctsParams, WorldModel};
use crate::search::mcts::{MctsSnapshot, MoveStats, NodeStatus};
use crate::uci::line_reader::spawn_line_reader;

pub mod clock;

/// The model settings a UCI GUI can change; a [`FactoryBuilder`] turns them into evaluators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model package folder (`ModelPath`), if one is set.
    pub model: Option<PathBuf>,
    /// Where it runs (`Device`).
    pub device: Device,
    /// The CPU threads the model may use (`Threads`; by default the automatic count of
    /// [`SessionThreads::default`]): the builder splits them into inference workers and session threads.
    pub threads: usize,
}

/// What a [`FactoryBuilder`] makes of a model choice.
pub struct BuiltModel {
    /// Opens an evaluator on each inference worker.
    pub factory: EvaluatorFactory,
    /// Inference workers: batches out at once.
    pub workers: usize,
}

/// Builds the evaluator factory for a model choice (fast: the factory does the loading, on the workers).
pub type FactoryBuilder = Box<dyn Fn(&ModelChoice) -> Result<BuiltModel, NoModelSet> + Send>;

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum UciServerError {
    /// Writing to the GUI failed (it closed the pipe).
    #[error("could not write to the GUI: {0}")]
    Output(#[from] std::io::Error),
    /// The engine thread could not be started or ended.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Why a `setoption` was not taken (told to the GUI as `info string error: …`; the option keeps its value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// The value is out of the option's range or of the wrong kind.
    #[error("option {name}: '{value}' {why}")]
    BadValue {
        /// The option as the GUI named it.
        name: String,
        /// The value sent.
        value: String,
        /// What the option takes.
        why: String,
    },
    /// The value does not read as the option's type (the reader's own message).
    #[error("option {name}: {reason}")]
    Unreadable {
        /// The option as the GUI named it.
        name: String,
        /// Why the value does not read.
        reason: String,
    },
    /// No option of this name.
    #[error("unknown option '{0}'")]
    Unknown(String),
}

/// The GUI's option set has no model to load (the text says how to give one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no model is set: start with `mavboard uci --model DIR`, send `setoption name ModelPath value DIR`, or use \
     `mavboard uci --mock`"
)]
pub struct NoModelSet;

/// The largest centipawn score reported (a root value of exactly 0 or 1 would be infinite).
const MAX_CP: f64 = 10_000.0;

/// The UCI options and their defaults, as announced after `uci`.
const OPTIONS: &[&str] = &[
    "option name Simulations type spin default 800 min 1 max 100000000",
    "option name CPuct type string default 1.0",
    "option name Batch type spin default 16 min 1 max 4096",
    "option name WorldModel type combo default rules var rules var learned",
    "option name SearchStyle type combo default auto var auto var mav var lc0",
    "option name Lc0CPuct type string default 1.745",
    "option name TwoFoldDraws type check default true",
    "option name DirichletNoiseEpsilon type string default 0",
    "option name DirichletNoiseAlpha type string default 0.3",
    "option name ModelPath type string default <empty>",
    "option name Device type combo default auto var auto var cpu var cuda var coreml",
    "option name UCI_Chess960 type check default false",
    "option name MultiPV type spin default 1 min 1 max 500",
    "option name UCI_ShowWDL type check default false",
    "option name Ponder type check default false",
    "option name Move Overhead type spin default 30 min 0 max 5000",
];

/// The `Scoring` option line: its choices every rule of [`Scoring::ALL`] (and `default` if it is not one); a
/// GUI may also set any other rule by its text (`quantile:0.1`).
fn scoring_option(default: Scoring) -> String {
    let mut line = format!("option name Scoring type combo default {default}");
    for rule in Scoring::ALL {
        line.push_str(&format!(" var {rule}"));
    }
    if !Scoring::ALL.contains(&default) {
        line.push_str(&format!(" var {default}"));
    }
    line
}

/// The most `Threads` (each a session of the model, with its own copy of the weights).
const MAX_THREADS: usize = 256;

/// The largest `MultiPV`.
const MAX_MULTIPV: usize = 500;

/// What the `info` lines show, from the UCI options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoOptions {
    /// How many lines (`MultiPV`): the best moves, best first.
    pub multipv: usize,
    /// Add `wdl W D L` (`UCI_ShowWDL`).
    pub wdl: bool,
}

impl Default for InfoOptions {
    fn default() -> Self {
        InfoOptions { multipv: 1, wdl: false }
    }
}

struct Server<W: Write> {
    out: W,
    engine: Engine,
    builder: FactoryBuilder,
    config: EngineConfig,
    params: MctsParams,
    simulations: u64,
    model: ModelChoice,
    chess960: bool,
    info: InfoOptions,
    /// Milliseconds of each move's time kept back for delays the clock sees (`Move Overhead`).
    move_overhead_ms: u64,
    position: GamePosition,
    /// The model choice changed since the last load.
    needs_load: bool,
    /// A load is running.
    loading: bool,
    /// `isready` waits for the load.
    ready_pending: bool,
    /// What each search sent to the engine and not yet ended is owed, oldest first (the engine ends
    /// every `go` with one `Done`, in order).
    owed: VecDeque<Owed>,
    /// The running search is `go infinite` and `stop` has not come yet.
    infinite: bool,
    /// A `bestmove` held back until `stop` (infinite search that ended by itself).
    held: Option<String>,
    /// While pondering (`go ponder`): the limits and settings of that `go`, which apply from `ponderhit`.
    pondering: Option<(GoLimits, MctsParams)>,
}

/// What a search's end (its `Done` event) is owed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owed {
    /// A `bestmove` (held back while a `go infinite` that ended by itself waits for `stop`).
    Bestmove,
    /// A `bestmove`, since `stop` came for it: a `go` that follows before it ended does not replace it.
    Stopped,
    /// Nothing: a later `go`, `position` or `ucinewgame` replaced it without `stop`, or it was the ponder
    /// search that `ponderhit` turned into a normal one (that one answers).
    Replaced,
}

/// Serves the UCI protocol on `input` / `output` until `quit`, or the end of the input once the answers
/// it still owes (`readyok`, `bestmove`) are written.
pub fn serve<R, W>(
    input: R,
    output: W,
    builder: FactoryBuilder,
    config: EngineConfig,
) -> Result<(), UciServerError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let engine = Engine::start(config, Arc::new(|| {}))?;
    let start = ChessState::startpos();
    let mut server = Server {
        out: output,
        engine,
        builder,
        config,
        params: MctsParams::default(),
        simulations: 800,
        model: ModelChoice { model: None, device: Device::Auto, threads: SessionThreads::default().intra_op },
        chess960: false,
        info: InfoOptions::default(),
        move_overhead_ms: clock::DEFAULT_MOVE_OVERHEAD_MS,
        position: GamePosition { start: start.clone(), moves: Vec::new(), current: start },
        needs_load: true,
        loading: false,
        ready_pending: false,
        owed: VecDeque::new(),
        infinite: false,
        held: None,
        pondering: None,
    };
    let lines = spawn_line_reader("mavboard-uci-input", input);
    loop {
        let events = server.engine.events().clone();
        select! {
            recv(lines) -> line => match line {
                Ok(line) => {
                    if !server.line(line.trim())? {
                        return Ok(());
                    }
                }
                Err(_) => break,
            },
            recv(events) -> event => match event {
                Ok(event) => server.event(event)?,
                Err(_) => return Err(EngineError::Thread("it has ended".into()).into()),
            },
        }
    }
    server.finish()
}

impl<W: Write> Server<W> {
    fn say(&mut self, line: &str) -> Result<(), UciServerError> {
        writeln!(self.out, "{line}")?;
        self.out.flush()?;
        Ok(())
    }

    fn problem(&mut self, what: &str) -> Result<(), UciServerError> {
        self.say(&format!("info string error: {what}"))
    }

    /// Handles one command line; false on `quit`.
    fn line(&mut self, line: &str) -> Result<bool, UciServerError> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, rest)) = words.split_first() else { return Ok(true) };
        match command {
            "uci" => {
                self.say(&format!("id name mavboard {}", env!("CARGO_PKG_VERSION")))?;
                self.say("id author the mavboard authors")?;
                for option in OPTIONS {
                    self.say(option)?;
                }
                self.say(&scoring_option(MctsParams::default().scoring))?;
                let threads = SessionThreads::default().intra_op;
                self.say(&format!(
                    "option name Threads type spin default {threads} min 1 max {MAX_THREADS}"
                ))?;
                self.say("uciok")?;
            }
            "isready" => {
                self.ensure_loaded()?;
                if self.loading {
                    self.ready_pending = true;
                } else {
                    self.say("readyok")?;
                }
            }
            "ucinewgame" => {
                self.pondering = None;
                self.replace_running();
                self.engine.send(Command::NewGame)?;
            }
            "position" => self.position(rest)?,
            "go" => self.go(rest)?,
            "stop" => {
                self.infinite = false;
                self.pondering = None;
                for owed in self.owed.iter_mut().filter(|o| **o == Owed::Bestmove) {
                    *owed = Owed::Stopped;
                }
                if let Some(best) = self.held.take() {
                    self.say(&best)?;
                } else {
                    self.engine.send(Command::Stop)?;
                }
            }
            "setoption" => self.setoption(rest)?,
            "quit" => return Ok(false),
            "ponderhit" => self.ponderhit()?,
            "debug" | "register" => {}
            other => self.problem(&format!("unknown command '{other}'"))?,
        }
        Ok(true)
    }

    fn ensure_loaded(&mut self) -> Result<(), UciServerError> {
        if !self.needs_load {
            return Ok(());
        }
        self.needs_load = false;
        match (self.builder)(&self.model) {
            Ok(BuiltModel { factory, workers }) => {
                self.engine.send(Command::LoadEvaluator { factory, workers: workers.max(1) })?;
                self.loading = true;
            }
            Err(e) => self.problem(&e.to_string())?,
        }
        Ok(())
    }

    fn position(&mut self, words: &[&str]) -> Result<(), UciServerError> {
        let moves_at = words.iter().position(|w| *w == "moves").unwrap_or(words.len());
        let moves: Vec<String> =
            words.get(moves_at + 1..).unwrap_or_default().iter().map(|s| (*s).to_owned()).collect();
        let start = match words.first() {
            Some(&"startpos") if self.chess960 => ChessState::chess960(518).map_err(|e| e.to_string()),
            Some(&"startpos") => Ok(ChessState::startpos()),
            Some(&"fen") => {
                let fen = words[1..moves_at].join(" ");
                let mode = if self.chess960 { ModeChoice::Chess960 } else { ModeChoice::Auto };
                ChessState::from_fen_mode(&fen, mode).map_err(|e| format!("bad FEN '{fen}': {e}"))
            }
            _ => {
                Err("expected 'position startpos [moves ...]' or 'position fen <FEN> [moves ...]'".to_owned())
            }
        };
        let position = start.and_then(|s| GamePosition::new(s, &moves).map_err(|e| e.to_string()));
        match position {
            Ok(p) => {
                // The engine ends a running search on a new position (a ponder search too).
                self.replace_running();
                self.pondering = None;
                self.engine.send(Command::SetPosition { start: p.start.clone(), moves })?;
                self.position = p;
            }
            Err(e) => self.problem(&format!("position not changed: {e}"))?,
        }
        Ok(())
    }

    fn go(&mut self, words: &[&str]) -> Result<(), UciServerError> {
        let mut limits = GoLimits::default();
        let (mut wtime, mut btime, mut winc, mut binc, mut movestogo) = (None, None, 0u64, 0u64, None);
        let (mut ponder, mut search_moves) = (false, Vec::new());
        let mut i = 0;
        while i < words.len() {
            let number = words.get(i + 1).and_then(|v| v.parse::<i64>().ok()).map(|v| v.max(0) as u64);
            let mut took_value = true;
            match words[i] {
                "depth" => limits.depth = number.map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
                "mate" => limits.mate = number.map(|m| u32::try_from(m).unwrap_or(u32::MAX)),
                "ponder" => {
                    ponder = true;
                    took_value = false;
                }
                "searchmoves" => {
                    let moves: Vec<String> = words[i + 1..]
                        .iter()
                        .take_while(|w| !GO_WORDS.contains(w))
                        .map(|w| (*w).to_owned())
                        .collect();
                    i += moves.len();
                    search_moves = moves;
                    took_value = false;
                }
                "nodes" => limits.simulations = number,
                "movetime" => limits.movetime = number.map(Duration::from_millis),
                "wtime" => wtime = number,
                "btime" => btime = number,
                "winc" => winc = number.unwrap_or(0),
                "binc" => binc = number.unwrap_or(0),
                "movestogo" => movestogo = number,
                "infinite" => {
                    limits.infinite = true;
                    took_value = false;
                }
                _ => took_value = false,
            }
            i += if took_value { 2 } else { 1 };
        }
        let (clock, inc) = match self.position.current.to_move() {
            Player::First => (wtime, winc),
            Player::Second => (btime, binc),
        };
        if limits.movetime.is_none()
            && let Some(t) = clock
        {
            let planned = clock::move_time(t, inc, movestogo, self.move_overhead_ms);
            limits.movetime = Some(planned.soft);
            limits.stop_grace = Some(planned.grace);
        }
        let unlimited = limits.movetime.is_none() && limits.simulations.is_none();
        if !limits.infinite && unlimited && limits.depth.is_none() && limits.mate.is_none() {
            limits.simulations = Some(self.simulations);
        }
        let params = MctsParams { root_moves: search_moves, ..self.params.clone() };
        self.ensure_loaded()?;
        self.replace_running();
        self.owed.push_back(Owed::Bestmove);
        let limits = if ponder {
            // The search runs until `ponderhit` (then `limits` apply) or `stop`, like `go infinite`.
            self.pondering = Some((limits, params.clone()));
            GoLimits { infinite: true, ..GoLimits::default() }
        } else {
            self.pondering = None;
            limits
        };
        self.infinite = limits.infinite;
        self.engine.send(Command::Go { limits, params })?;
        Ok(())
    }

    /// `ponderhit`: the opponent played the expected move, so the ponder search goes on as a normal search
    /// with the limits of its `go` (the tree it built is kept: the engine reuses it for the same position).
    fn ponderhit(&mut self) -> Result<(), UciServerError> {
        let Some((limits, params)) = self.pondering.take() else {
            return self.problem("ponderhit with no 'go ponder' running: ignored (send position and go)");
        };
        // The ponder search's answer (held back, or still to come) gives way to its successor's.
        self.replace_running();
        self.infinite = limits.infinite;
        self.owed.push_back(Owed::Bestmove);
        self.engine.send(Command::Go { limits, params })?;
        Ok(())
    }

    /// A new question for the engine (`go`, `position`, `ucinewgame`, `ponderhit`) replaces the running
    /// search: unless `stop` came for it, its answer is not written, nor one held back.
    fn replace_running(&mut self) {
        self.held = None;
        for owed in self.owed.iter_mut().filter(|o| **o == Owed::Bestmove) {
            *owed = Owed::Replaced;
        }
    }

    fn setoption(&mut self, words: &[&str]) -> Result<(), UciServerError> {
        let value_at = words.iter().position(|w| w.eq_ignore_ascii_case("value")).unwrap_or(words.len());
        let name = words.get(1..value_at).unwrap_or_default().join(" ");
        let value = words.get(value_at + 1..).unwrap_or_default().join(" ");
        let option = OptionText { name, value };
        if let Err(e) = self.apply_option(&option)? {
            self.problem(&e.to_string())?;
        }
        Ok(())
    }

    /// Sets the option `option` names; the inner error says why its value was not taken.
    fn apply_option(&mut self, option: &OptionText) -> Result<Result<(), OptionError>, UciServerError> {
        let value = &option.value;
        let key = option.name.to_ascii_lowercase();
        Ok(match key.as_str() {
            "simulations" => option
                .parse_where(|&n: &u64| n > 0, "is not a positive whole number")
                .map(|n| self.simulations = n),
            "cpuct" => option
                .parse_where(|&c: &f64| c.is_finite() && c >= 0.0, "is not a non-negative number")
                .map(|c| self.params.c_puct = c),
            "batch" => match option.parse_where(|&b: &usize| b > 0, "is not a positive whole number") {
                Ok(b) => {
                    self.config.batch_size = b;
                    self.engine.send(Command::SetConfig(self.config))?;
                    Ok(())
                }
                Err(e) => Err(e),
            },
            // The combo's rules, or any other in the same text form (quantile:0.1, mean-sd:0.5).
            "scoring" => {
                value.parse::<Scoring>().map_err(|e| option.unreadable(&e)).map(|s| self.params.scoring = s)
            }
            "worldmodel" => match value.to_ascii_lowercase().as_str() {
                "rules" => Ok(WorldModel::Rules),
                "learned" => Ok(WorldModel::Learned),
                _ => Err(option.bad("is not rules or learned")),
            }
            .map(|w| self.params.world_model = w),
            "searchstyle" => value
                .to_ascii_lowercase()
                .parse::<crate::search::mcts::SearchStyle>()
                .map_err(|e| option.unreadable(&e))
                .map(|s| self.params.style = s),
            "modelpath" | "device" | "threads" => self.set_model_option(&key, option),
            "lc0cpuct" | "dirichletnoiseepsilon" | "dirichletnoisealpha" | "twofolddraws" => {
                self.set_lc0_option(&key, option)
            }
            "uci_chess960" => option.flag().map(|on| self.chess960 = on),
            "multipv" => option
                .parse_where(
                    |n: &usize| (1..=MAX_MULTIPV).contains(n),
                    &format!("is not a whole number from 1 to {MAX_MULTIPV}"),
                )
                .map(|n| self.info.multipv = n),
            "uci_showwdl" => option.flag().map(|on| self.info.wdl = on),
            "move overhead" => option
                .parse_where(
                    |&n: &u64| n <= clock::MAX_MOVE_OVERHEAD_MS,
                    &format!("is not a whole number from 0 to {}", clock::MAX_MOVE_OVERHEAD_MS),
                )
                .map(|n| self.move_overhead_ms = n),
            // The GUI says whether it will send `go ponder`; nothing to change here.
            "ponder" => option.flag().map(|_| ()),
            _ => Err(OptionError::Unknown(option.name.clone())),
        })
    }

    /// Sets `ModelPath`, `Device` or `Threads` (`key`, in lower case): the model loads again before it is
    /// next used.
    fn set_model_option(&mut self, key: &str, option: &OptionText) -> Result<(), OptionError> {
        let value = &option.value;
        match key {
            "modelpath" => {
                let empty = value.is_empty() || value == "<empty>";
                self.model.model = (!empty).then(|| PathBuf::from(value));
                self.needs_load = true;
                Ok(())
            }
            "device" => value.parse::<Device>().map_err(|e| option.unreadable(&e)).map(|d| {
                self.model.device = d;
                self.needs_load = true;
            }),
            _ => option
                .parse_where(
                    |n: &usize| (1..=MAX_THREADS).contains(n),
                    &format!("is not a whole number from 1 to {MAX_THREADS}"),
                )
                .map(|n| {
                    self.model.threads = n;
                    self.needs_load = true;
                }),
        }
    }

    /// Sets one of the Lc0-style search options (`key`, in lower case).
    fn set_lc0_option(&mut self, key: &str, option: &OptionText) -> Result<(), OptionError> {
        let lc0 = &mut self.params.lc0;
        match key {
            "lc0cpuct" => option
                .parse_where(|&c: &f64| c.is_finite() && c >= 0.0, "is not a non-negative number")
                .map(|c| lc0.cpuct = c),
            "dirichletnoiseepsilon" => option
                .parse_where(|e: &f64| (0.0..=1.0).contains(e), "is not a number from 0 to 1")
                .map(|e| lc0.noise_epsilon = e),
            "dirichletnoisealpha" => option
                .parse_where(|&a: &f64| a.is_finite() && a > 0.0, "is not a positive number")
                .map(|a| lc0.noise_alpha = a),
            _ => option.flag().map(|on| lc0.two_fold_draws = on),
        }
    }

    fn event(&mut self, event: Event) -> Result<(), UciServerError> {
        match event {
            Event::Info(report) => {
                for line in info_lines(&report, self.info) {
                    self.say(&line)?;
                }
            }
            Event::Done { report, best_move } => {
                if self.owed.pop_front() == Some(Owed::Replaced) {
                    return Ok(());
                }
                if let Some(report) = &report {
                    for line in info_lines(report, self.info) {
                        self.say(&line)?;
                    }
                }
                let fallback = match best_move {
                    Some(_) => None,
                    None => self.fallback_move()?,
                };
                let line = bestmove_line(best_move.as_deref().or(fallback.as_deref()), report.as_ref());
                if self.infinite && self.owed.is_empty() {
                    self.held = Some(line);
                } else {
                    self.say(&line)?;
                }
            }
            Event::EvaluatorReady { .. } => self.load_ended()?,
            // This server never sends `Command::Evaluate` or `Command::Explore`.
            Event::Evaluated { .. } | Event::Explored { .. } => {}
            Event::Error(e) => {
                let load_failed = matches!(e, EngineError::Load(_));
                self.problem(&e.to_string())?;
                if load_failed && self.loading {
                    self.needs_load = true;
                    self.load_ended()?;
                }
            }
        }
        Ok(())
    }

    /// The end of the input, taken as `quit` after the answers still owed, as Stockfish does: a pending
    /// `isready` is answered once the model has loaded, a search with limits runs to its `bestmove`, and a
    /// search that only `stop` would end (`go infinite`, `go ponder`) is stopped and answered.
    fn finish(&mut self) -> Result<(), UciServerError> {
        if self.pondering.take().is_some() || self.infinite {
            self.infinite = false;
            match self.held.take() {
                Some(best) => self.say(&best)?,
                None => self.engine.send(Command::Stop)?,
            }
        }
        let events = self.engine.events().clone();
        while self.ready_pending || !self.owed.is_empty() {
            match events.recv() {
                Ok(event) => self.event(event)?,
                Err(_) => return Err(EngineError::Thread("it has ended".into()).into()),
            }
        }
        Ok(())
    }

    /// The move answered when the search has none (no evaluation came back, e.g. the model failed or is
    /// slower than the time given): the first legal move, said in an `info string`, since GUIs take
    /// `bestmove 0000` for a null move and tournament managers for an illegal one. `None` where the game is
    /// over.
    fn fallback_move(&mut self) -> Result<Option<String>, UciServerError> {
        let here = &self.position.current;
        let Some(text) = here.legal_actions().first().map(|a| here.action_to_text(*a)) else {
            return Ok(None);
        };
        self.problem(&format!("the search has no move (no evaluation came back in time): playing {text}"))?;
        Ok(Some(text))
    }

    fn load_ended(&mut self) -> Result<(), UciServerError> {
        self.loading = false;
        if self.ready_pending {
            self.ready_pending = false;
            self.say("readyok")?;
        }
        Ok(())
    }
}

/// The `bestmove` line: the move (`0000` when there is none) and, as Stockfish adds it, `ponder` with the
/// expected reply when the principal variation starts with that move and goes on (a GUI ponders on it).
fn bestmove_line(best: Option<&str>, report: Option<&SearchReport>) -> String {
    let Some(best) = best else { return "bestmove 0000".to_owned() };
    let pv = report.map(|r| r.snapshot.pv.as_slice()).unwrap_or_default();
    match pv {
        [first, reply, ..] if first == best => format!("bestmove {best} ponder {reply}"),
        _ => format!("bestmove {best}"),
    }
}

/// The words of `go` that start a new argument (they end a `searchmoves` list).
const GO_WORDS: &[&str] = &[
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// A `setoption`'s option name (as the GUI wrote it) and value, read into the option's type.
struct OptionText {
    /// The option's name.
    name: String,
    /// The value sent.
    value: String,
}

impl OptionText {
    /// The error for a value the option does not take, `why` saying what it takes.
    fn bad(&self, why: &str) -> OptionError {
        OptionError::BadValue { name: self.name.clone(), value: self.value.clone(), why: why.to_owned() }
    }

    /// The error for a value that does not read, in the reader's words `e`.
    fn unreadable(&self, e: &dyn std::fmt::Display) -> OptionError {
        OptionError::Unreadable { name: self.name.clone(), reason: e.to_string() }
    }

    /// The value read as a `T` that passes `ok`; otherwise the error saying `why`.
    fn parse_where<T: std::str::FromStr>(
        &self,
        ok: impl Fn(&T) -> bool,
        why: &str,
    ) -> Result<T, OptionError> {
        match self.value.parse::<T>() {
            Ok(v) if ok(&v) => Ok(v),
            _ => Err(self.bad(why)),
        }
    }

    /// The value of a `check` option.
    fn flag(&self) -> Result<bool, OptionError> {
        parse_check(&self.value).map_err(|()| self.bad("is not true or false"))
    }
}

/// A `check` option's value.
fn parse_check(value: &str) -> Result<bool, ()> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(()),
    }
}

/// The root moves shown as `MultiPV` lines, best first: the search's choice, then the others that were
/// visited, most visited first (failed and excluded moves are left out).
fn ranked_moves(s: &MctsSnapshot) -> Vec<&MoveStats> {
    let usable = |m: &&MoveStats| m.status != NodeStatus::Failed && m.visits > 0;
    let best = s.best.as_deref().and_then(|b| s.moves.iter().find(|m| m.action == b));
    let mut ranked: Vec<&MoveStats> = best.into_iter().collect();
    ranked.extend(s.moves.iter().filter(usable).filter(|m| Some(m.action.as_str()) != s.best.as_deref()));
    ranked
}

/// The `score` of a line: `mate N` (N > 0: the side to move mates in N moves; N < 0: it is mated) when the
/// line ends in a won or lost finished game, else `cp X` from the value.
fn score(value: f64, plies: usize, result: Option<f64>) -> String {
    let moves = |plies: usize| i64::try_from(plies.div_ceil(2)).unwrap_or(i64::MAX);
    match result {
        Some(r) if r >= 1.0 => format!("mate {}", moves(plies)),
        Some(r) if r <= 0.0 => format!("mate -{}", moves(plies)),
        _ => format!("cp {}", cp_from_win_prob(value).clamp(-MAX_CP, MAX_CP).round() as i64),
    }
}

/// The UCI `info` lines for a search report: one per `MultiPV` line, best first (one line without a
/// score or pv before the root has a visited move).
pub fn info_lines(report: &SearchReport, options: InfoOptions) -> Vec<String> {
    let s = &report.snapshot;
    let ms = report.elapsed.as_millis();
    let nps = (u128::from(report.simulations) * 1000).checked_div(ms).unwrap_or(0);
    let hashfull = (report.cache_used * 1000).checked_div(report.cache_capacity).unwrap_or(0).min(1000);
    let seldepth = s.totals.stats.max_depth;
    let stats = format!("nodes {} nps {nps} hashfull {hashfull} time {ms}", report.simulations);
    let ranked = ranked_moves(s);
    if ranked.is_empty() {
        let depth = s.pv.len().max(1);
        let mut line = format!("info depth {depth} seldepth {} {stats}", seldepth.max(depth as u64));
        if let Some(v) = s.value {
            line.push_str(&format!(" score {}", score(v, s.pv.len(), s.pv_result)));
        }
        return vec![line];
    }
    let multi = options.multipv > 1;
    ranked
        .into_iter()
        .take(options.multipv.max(1))
        .enumerate()
        .map(|(i, m)| {
            let depth = m.pv.len().max(1);
            let mut line = format!("info depth {depth} seldepth {}", seldepth.max(depth as u64));
            if multi {
                line.push_str(&format!(" multipv {}", i + 1));
            }
            // A policy without values (behavioural cloning) has no score to give: the line has none.
            if m.policy.is_none() {
                let value = m.q.or(m.model).or(s.value).unwrap_or(0.5);
                line.push_str(&format!(" score {}", score(value, m.pv.len(), m.pv_result)));
                if options.wdl {
                    let w = wdl(value, m.distribution.as_deref());
                    line.push_str(&format!(" wdl {} {} {}", w.win, w.draw, w.loss));
                }
            }
            line.push_str(&format!(" {stats} pv {}", m.pv.join(" ")));
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::inference::material::MaterialEvaluator;
    use crate::search::mcts::Mcts;
    use crate::search::mcts::RunLimits;
    use crate::uci::info::{ScoreValue, parse_info};

    #[test]
    fn the_scoring_option_lists_every_rule() {
        let line = scoring_option(Scoring::Mean);
        assert!(line.starts_with("option name Scoring type combo default mean var "), "{line}");
        for rule in Scoring::ALL {
            assert!(line.contains(&format!(" var {rule}")), "{rule} missing: {line}");
        }
        let odd = Scoring::quantile(0.1).expect("a rule");
        assert!(scoring_option(odd).ends_with(" var quantile:0.1"), "{}", scoring_option(odd));
    }

    fn report(fen: &str, simulations: u64) -> SearchReport {
        let start = ChessState::from_fen(fen).expect("valid FEN");
        let mut tree = Mcts::new(start, 0, MctsParams::default()).expect("valid params");
        let limits = RunLimits { simulations, batch_size: 8 };
        tree.run(&mut MaterialEvaluator::new(3), limits).expect("runs");
        SearchReport {
            snapshot: tree.snapshot(),
            elapsed: Duration::from_millis(500),
            simulations,
            cache_hits: 0,
            cache_used: 512,
            cache_capacity: 2048,
        }
    }

    #[test]
    fn info_lines_invert_the_lichess_formula_for_the_best_move() {
        let mut report = report("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 64);
        let best = report.snapshot.best.clone().expect("a best move");
        let m = report.snapshot.moves.iter_mut().find(|m| m.action == best).expect("the best move's stats");
        m.q = Some(crate::mav::buckets::win_prob_from_cp(123.0));
        let pv = m.pv.join(" ");
        let depth = m.pv.len();
        let seldepth = report.snapshot.totals.stats.max_depth.max(depth as u64);
        let lines = info_lines(&report, InfoOptions::default());
        assert_eq!(
            lines,
            [format!(
                "info depth {depth} seldepth {seldepth} score cp 123 nodes 64 nps 128 hashfull 250 time 500 pv {pv}"
            )]
        );
        let m = report.snapshot.moves.iter_mut().find(|m| m.action == best).expect("the best move's stats");
        m.q = Some(1.0);
        assert!(info_lines(&report, InfoOptions::default())[0].contains("score cp 10000"));
        // A policy's moves have no score (not a made-up 0.00).
        for m in &mut report.snapshot.moves {
            (m.q, m.model, m.policy) = (None, None, Some(0.05));
        }
        report.snapshot.value = None;
        let lines = info_lines(&report, InfoOptions { multipv: 3, wdl: true });
        assert!(!lines.is_empty());
        for line in &lines {
            assert!(!line.contains("score") && !line.contains("wdl") && line.contains(" pv "), "{line}");
        }
    }

    #[test]
    fn multipv_lines_are_ranked_with_wdl_that_matches_the_score() {
        let report = report("3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1", 300);
        let lines = info_lines(&report, InfoOptions { multipv: 3, wdl: true });
        assert_eq!(lines.len(), 3, "{lines:#?}");
        for (i, line) in lines.iter().enumerate() {
            let info = parse_info(line).expect("a valid info line");
            assert_eq!(info.multipv, Some(i as u32 + 1));
            let [w, d, l] = info.wdl.expect("wdl");
            assert_eq!(w + d + l, 1000);
            let Some(ScoreValue::Cp(cp)) = info.score.map(|s| s.value) else { panic!("{line}") };
            let expected = (f64::from(w) + f64::from(d) / 2.0) / 1000.0;
            let from_cp = crate::mav::buckets::win_prob_from_cp(cp as f64);
            assert!((expected - from_cp).abs() < 0.002, "{line}");
            assert_eq!(info.hashfull, Some(250));
            assert!(info.seldepth >= info.depth, "{line}");
        }
        // The search's choice first: taking the queen.
        assert!(lines[0].contains(" pv d1d8"), "{}", lines[0]);
        // Lines other than the first differ in their first move.
        let first = |l: &String| parse_info(l).expect("valid").pv[0].clone();
        assert_ne!(first(&lines[1]), first(&lines[2]));
    }

    #[test]
    fn a_line_that_ends_in_checkmate_is_a_mate_score() {
        // Back-rank mate in one: Rd8#.
        let report = report("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 200);
        let lines = info_lines(&report, InfoOptions { multipv: 2, wdl: true });
        assert!(lines[0].starts_with("info depth 1 "), "{}", lines[0]);
        assert!(lines[0].contains(" score mate 1 wdl 1000 0 0 "), "{}", lines[0]);
        assert!(lines[0].ends_with(" pv d1d8"), "{}", lines[0]);
        assert!(!lines[1].contains("mate"), "{}", lines[1]);
        assert_eq!(score(0.0, 4, Some(0.0)), "mate -2");
        assert_eq!(score(1.0, 3, Some(1.0)), "mate 2");
        assert_eq!(score(0.5, 6, Some(0.5)), "cp 0");
    }
}
