//! The UCI server: mavboard as a chess engine for GUIs and tournament managers (cutechess, Arena, ...).
//!
//! [`serve`] reads UCI commands line by line, drives an [`Engine`] and writes the answers: `id`/`option`/
//! `uciok`, `readyok` (after the model has loaded), `info` lines about every 100 ms while searching and
//! `bestmove`. Models come from a [`FactoryBuilder`], so tests use mock evaluators and the CLI the real
//! ones. An `info` line's depth is the length of the principal variation, nodes are the simulations of
//! this search, and the score is the root's value turned back into centipawns with the inverse of the
//! Lichess formula.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::select;

use crate::engine::line_reader::spawn_line_reader;
use crate::engine::{
    Command, Engine, EngineConfig, EngineError, EvaluatorFactory, Event, GamePosition, GoLimits, SearchReport,
};
use crate::game::chess::ChessState;
use crate::game::fen::ModeChoice;
use crate::game::{GameState, Player};
use crate::inference::device::Device;
use crate::inference::evaluator::Scoring;
use crate::mav::buckets::cp_from_win_prob;
use crate::search::mcts::{MctsParams, WorldModel};

/// The model settings a UCI GUI can change; a [`FactoryBuilder`] turns them into evaluators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model package folder (`ModelPath`), if one is set.
    pub model: Option<PathBuf>,
    /// Where it runs (`Device`).
    pub device: Device,
    /// How many inference workers (`Threads`).
    pub threads: usize,
}

/// Builds the evaluator factory for a model choice (fast: the factory does the loading, on the workers).
pub type FactoryBuilder = Box<dyn Fn(&ModelChoice) -> Result<EvaluatorFactory, String> + Send>;

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

/// The largest centipawn score reported (a root value of exactly 0 or 1 would be infinite).
const MAX_CP: f64 = 10_000.0;

/// The UCI options and their defaults, as announced after `uci`.
const OPTIONS: &[&str] = &[
    "option name Simulations type spin default 800 min 1 max 100000000",
    "option name CPuct type string default 1.0",
    "option name Batch type spin default 16 min 1 max 4096",
    "option name Scoring type combo default mean var mean var max",
    "option name WorldModel type combo default rules var rules var learned",
    "option name ModelPath type string default <empty>",
    "option name Device type combo default auto var auto var cpu var cuda var coreml",
    "option name Threads type spin default 1 min 1 max 256",
    "option name UCI_Chess960 type check default false",
];

struct Server<W: Write> {
    out: W,
    engine: Engine,
    builder: FactoryBuilder,
    config: EngineConfig,
    params: MctsParams,
    simulations: u64,
    model: ModelChoice,
    chess960: bool,
    position: GamePosition,
    /// The model choice changed since the last load.
    needs_load: bool,
    /// A load is running.
    loading: bool,
    /// `isready` waits for the load.
    ready_pending: bool,
    /// Searches started and not yet answered with `bestmove`.
    searching: usize,
    /// The running search is `go infinite` and `stop` has not come yet.
    infinite: bool,
    /// A `bestmove` held back until `stop` (infinite search that ended by itself).
    held: Option<String>,
}

/// Serves the UCI protocol on `input` / `output` until `quit` or the end of the input.
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
        model: ModelChoice { model: None, device: Device::Auto, threads: 1 },
        chess960: false,
        position: GamePosition { start: start.clone(), moves: Vec::new(), current: start },
        needs_load: true,
        loading: false,
        ready_pending: false,
        searching: 0,
        infinite: false,
        held: None,
    };
    let lines = spawn_line_reader("mavboard-uci-input", input);
    loop {
        let events = server.engine.events().clone();
        select! {
            recv(lines) -> line => match line {
                Ok(line) => {
                    if !server.line(line.trim())? {
                        break;
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
    Ok(())
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
            "ucinewgame" => {}
            "position" => self.position(rest)?,
            "go" => self.go(rest)?,
            "stop" => {
                self.infinite = false;
                if let Some(best) = self.held.take() {
                    self.say(&best)?;
                } else {
                    self.engine.send(Command::Stop)?;
                }
            }
            "setoption" => self.setoption(rest)?,
            "quit" => return Ok(false),
            "debug" | "register" | "ponderhit" => {}
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
            Ok(factory) => {
                self.engine.send(Command::LoadEvaluator { factory, workers: self.model.threads.max(1) })?;
                self.loading = true;
            }
            Err(e) => self.problem(&e)?,
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
        let mut i = 0;
        while i < words.len() {
            let number = words.get(i + 1).and_then(|v| v.parse::<i64>().ok()).map(|v| v.max(0) as u64);
            let mut took_value = true;
            match words[i] {
                "nodes" => limits.simulations = number,
                "movetime" => limits.movetime = number.map(Duration::from_millis),
                "wtime" => wtime = number,
                "btime" => btime = number,
                "winc" => winc = number.unwrap_or(0),
                "binc" => binc = number.unwrap_or(0),
                "movestogo" => movestogo = number,
                "depth" | "mate" => {}
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
            // A share of the remaining time plus most of the increment, never the whole clock.
            let share = t / movestogo.unwrap_or(30).max(1) + inc * 3 / 4;
            limits.movetime = Some(Duration::from_millis(share.min(t.saturating_sub(50)).max(10)));
        }
        if !limits.infinite && limits.movetime.is_none() && limits.simulations.is_none() {
            limits.simulations = Some(self.simulations);
        }
        self.ensure_loaded()?;
        self.infinite = limits.infinite;
        self.held = None;
        self.searching += 1;
        self.engine.send(Command::Go { limits, params: self.params.clone() })?;
        Ok(())
    }

    fn setoption(&mut self, words: &[&str]) -> Result<(), UciServerError> {
        let value_at = words.iter().position(|w| w.eq_ignore_ascii_case("value")).unwrap_or(words.len());
        let name = words.get(1..value_at).unwrap_or_default().join(" ");
        let value = words.get(value_at + 1..).unwrap_or_default().join(" ");
        let bad = |why: &str| format!("option {name}: '{value}' {why}");
        let result: Result<(), String> = match name.to_ascii_lowercase().as_str() {
            "simulations" => match value.parse::<u64>() {
                Ok(n) if n > 0 => {
                    self.simulations = n;
                    Ok(())
                }
                _ => Err(bad("is not a positive whole number")),
            },
            "cpuct" => match value.parse::<f64>() {
                Ok(c) if c.is_finite() && c >= 0.0 => {
                    self.params.c_puct = c;
                    Ok(())
                }
                _ => Err(bad("is not a non-negative number")),
            },
            "batch" => match value.parse::<usize>() {
                Ok(b) if b > 0 => {
                    self.config.batch_size = b;
                    self.engine.send(Command::SetConfig(self.config))?;
                    Ok(())
                }
                _ => Err(bad("is not a positive whole number")),
            },
            "scoring" => match value.to_ascii_lowercase().as_str() {
                "mean" => Ok(Scoring::Mean),
                "max" => Ok(Scoring::Max),
                _ => Err(bad("is not mean or max")),
            }
            .map(|s| self.params.scoring = s),
            "worldmodel" => match value.to_ascii_lowercase().as_str() {
                "rules" => Ok(WorldModel::Rules),
                "learned" => Ok(WorldModel::Learned),
                _ => Err(bad("is not rules or learned")),
            }
            .map(|w| self.params.world_model = w),
            "modelpath" => {
                let empty = value.is_empty() || value == "<empty>";
                self.model.model = (!empty).then(|| PathBuf::from(&value));
                self.needs_load = true;
                Ok(())
            }
            "device" => value.parse::<Device>().map_err(|e| e.to_string()).map(|d| {
                self.model.device = d;
                self.needs_load = true;
            }),
            "threads" => match value.parse::<usize>() {
                Ok(n) if n > 0 => {
                    self.model.threads = n;
                    self.needs_load = true;
                    Ok(())
                }
                _ => Err(bad("is not a positive whole number")),
            },
            "uci_chess960" => match value.to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad("is not true or false")),
            }
            .map(|on| self.chess960 = on),
            _ => Err(format!("unknown option '{name}'")),
        };
        if let Err(e) = result {
            self.problem(&e)?;
        }
        Ok(())
    }

    fn event(&mut self, event: Event) -> Result<(), UciServerError> {
        match event {
            Event::Info(report) => self.say(&info_line(&report))?,
            Event::Done { report, best_move } => {
                if let Some(report) = &report {
                    self.say(&info_line(report))?;
                }
                self.searching = self.searching.saturating_sub(1);
                let line = format!("bestmove {}", best_move.as_deref().unwrap_or("0000"));
                if self.infinite && self.searching == 0 {
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

    fn load_ended(&mut self) -> Result<(), UciServerError> {
        self.loading = false;
        if self.ready_pending {
            self.ready_pending = false;
            self.say("readyok")?;
        }
        Ok(())
    }
}

/// A UCI `info` line for a search report.
pub fn info_line(report: &SearchReport) -> String {
    let s = &report.snapshot;
    let ms = report.elapsed.as_millis();
    let nps = (u128::from(report.simulations) * 1000).checked_div(ms).unwrap_or(0);
    let mut line =
        format!("info depth {} nodes {} nps {nps} time {ms}", s.pv.len().max(1), report.simulations);
    if let Some(v) = s.value {
        let cp = cp_from_win_prob(v).clamp(-MAX_CP, MAX_CP).round() as i64;
        line.push_str(&format!(" score cp {cp}"));
    }
    if !s.pv.is_empty() {
        line.push_str(" pv ");
        line.push_str(&s.pv.join(" "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::mcts::Mcts;
    use crate::search::mcts::RunLimits;
    use crate::search::mock::MaterialEvaluator;

    #[test]
    fn info_line_inverts_the_lichess_formula() {
        let mut tree = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("valid params");
        tree.run(&mut MaterialEvaluator::new(3), RunLimits { simulations: 64, batch_size: 8 }).expect("runs");
        let mut snapshot = tree.snapshot();
        snapshot.value = Some(crate::mav::buckets::win_prob_from_cp(123.0));
        let report =
            SearchReport { snapshot, elapsed: Duration::from_millis(500), simulations: 64, cache_hits: 0 };
        let line = info_line(&report);
        let pv = report.snapshot.pv.join(" ");
        let depth = report.snapshot.pv.len();
        assert_eq!(line, format!("info depth {depth} nodes 64 nps 128 time 500 score cp 123 pv {pv}"));
        let mut report = report;
        report.snapshot.value = Some(1.0);
        assert!(info_line(&report).contains("score cp 10000"));
    }
}
