//! The solver beside the board for Connect Four and Hex (the role Stockfish plays for chess): one thread
//! values every legal move of a position with the exact solvers of [`crate::solve`] (Connect Four always;
//! Hex up to [`HEX_EXACT_EMPTY`] empty cells on boards up to 7×7) or, for larger Hex positions, with MCTS
//! over random playouts in rounds of growing size. It publishes an [`OracleReport`] after each move it
//! values (exact) or each round (MCTS), so the panel fills in while it works.
//!
//! Dropping the [`Oracle`] handle stops the thread soon: the exact solvers check a [`StopFlag`] every few
//! thousand positions; MCTS checks it between rounds (a round of 40,000 playouts on 13×13 takes a few
//! seconds, during which a finished thread's work is wasted but nothing waits for it).

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::api::Repaint;
use crate::game::GameState;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::mav::buckets::Buckets;
use crate::solve::connect_four::Solver as ConnectFourSolver;
use crate::solve::hex::{MAX_EXACT_SIZE, Solver as HexSolver, mcts};
use crate::solve::stop::StopFlag;

/// Hex positions with at most this many empty cells (on boards up to 7×7) are solved exactly.
pub const HEX_EXACT_EMPTY: u32 = 16;

/// The MCTS rounds for larger Hex positions: playouts per round (each round searches afresh with more).
pub const HEX_MCTS_ROUNDS: [u32; 3] = [2_000, 10_000, 40_000];

/// Transposition tables of the oracle's solvers: 2^20 entries (8 MiB for Connect Four, 24 MiB for Hex).
const TABLE_BITS: u32 = 20;

/// A position for the oracle.
#[derive(Debug, Clone, PartialEq)]
pub enum OraclePosition {
    /// A Connect Four position.
    ConnectFour(ConnectFourState),
    /// A Hex position.
    Hex(HexState),
}

impl OraclePosition {
    /// The position's text (the game's `to_text`), which names the position in reports.
    pub fn text(&self) -> String {
        match self {
            OraclePosition::ConnectFour(s) => s.to_text(),
            OraclePosition::Hex(s) => s.to_text(),
        }
    }
}

/// How the moves were valued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OracleMethod {
    /// The exact solver.
    Exact,
    /// MCTS with random playouts; the round's playouts.
    Mcts {
        /// Playouts of the round the values come from.
        playouts: u64,
    },
}

/// One legal move and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleMove {
    /// The move in the game's notation (`4`, `c5`, `swap`).
    pub action: String,
    /// Its win probability for the player making it.
    pub win_prob: f64,
    /// Its MAV value bucket (64 buckets).
    pub bucket: u32,
    /// A short description (`win in 7`, `draw`, `loss`, `61 % (812 playouts)`).
    pub label: String,
    /// An order for the player making it (higher is better; sooner wins first for Connect Four).
    pub rank: i64,
}

/// What the oracle knows about a position so far.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleReport {
    /// The position's text ([`OraclePosition::text`]).
    pub position: String,
    /// How the values were found.
    pub method: OracleMethod,
    /// The moves valued so far, in the rules' order.
    pub moves: Vec<OracleMove>,
    /// Legal moves in the position.
    pub legal: usize,
    /// Whether the work is finished (every move valued, or the last MCTS round done).
    pub done: bool,
    /// Positions searched (exact) or playouts run (MCTS), all rounds together.
    pub work: u64,
    /// Time since the start.
    pub elapsed: Duration,
}

impl OracleReport {
    /// The best move valued so far: the highest rank, the first in the rules' order among equals.
    pub fn best(&self) -> Option<&OracleMove> {
        self.moves.iter().rev().max_by_key(|m| m.rank)
    }
}

/// The handle of a running oracle thread. Dropping it stops the thread.
pub struct Oracle {
    stop: StopFlag,
    reports: Receiver<OracleReport>,
    latest: Option<OracleReport>,
}

impl Oracle {
    /// Starts valuing the moves of `position`; `repaint` is called after each report.
    pub fn start(position: OraclePosition, repaint: Repaint) -> Result<Oracle, std::io::Error> {
        let stop = StopFlag::new();
        let (tx, rx) = unbounded();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("mavboard-oracle".into())
            .spawn(move || run(position, &flag, &tx, &repaint))?;
        Ok(Oracle { stop, reports: rx, latest: None })
    }

    /// Takes the reports that arrived; returns the newest one seen so far.
    pub fn poll(&mut self) -> Option<&OracleReport> {
        let _ = self.take_new();
        self.latest.as_ref()
    }

    /// The newest report when one arrived since the last call (`None` when nothing new came).
    pub fn take_new(&mut self) -> Option<OracleReport> {
        let mut newest = None;
        while let Ok(r) = self.reports.try_recv() {
            newest = Some(r);
        }
        if let Some(r) = &newest {
            self.latest = Some(r.clone());
        }
        newest
    }

    /// Asks the thread to stop.
    pub fn stop(&self) {
        self.stop.set();
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        self.stop.set();
    }
}

/// Values the moves of `position` (see the module documentation), sending a report after each step.
fn run(position: OraclePosition, stop: &StopFlag, tx: &Sender<OracleReport>, repaint: &Repaint) {
    let out = Reporter { start: Instant::now(), text: position.text(), tx, repaint, buckets: Buckets::mav() };
    match position {
        OraclePosition::ConnectFour(state) => connect_four_exact(&state, stop, &out),
        OraclePosition::Hex(state) => {
            let empty = state.size() * state.size() - state.stone_count();
            if state.size() <= MAX_EXACT_SIZE && empty <= HEX_EXACT_EMPTY {
                hex_exact(&state, stop, &out);
            } else {
                hex_mcts(&state, stop, &out);
            }
        }
    }
}

/// Where the oracle thread's reports go.
struct Reporter<'a> {
    /// When the work started.
    start: Instant,
    /// The position's text.
    text: String,
    /// The reports' channel to the handle.
    tx: &'a Sender<OracleReport>,
    /// Called after each report.
    repaint: &'a Repaint,
    /// The MAV buckets the moves' values fall in.
    buckets: Buckets,
}

impl Reporter<'_> {
    /// Sends a report of the moves valued so far and asks for a repaint.
    fn send(&self, method: OracleMethod, moves: &[OracleMove], legal: usize, done: bool, work: u64) {
        let report = OracleReport {
            position: self.text.clone(),
            method,
            moves: moves.to_vec(),
            legal,
            done,
            work,
            elapsed: self.start.elapsed(),
        };
        // A closed channel means the handle is gone; the flag stops the work next.
        let _ = self.tx.send(report);
        (self.repaint)();
    }

    /// The MAV bucket of a win probability.
    fn bucket(&self, p: f64) -> u32 {
        self.buckets.bucket_of(p).unwrap_or(0)
    }
}

/// Values every legal move of a Connect Four position with the exact solver.
fn connect_four_exact(state: &ConnectFourState, stop: &StopFlag, out: &Reporter<'_>) {
    let mut solver = ConnectFourSolver::with_table_bits(TABLE_BITS);
    solver.set_stop(stop.clone());
    let legal = state.legal_actions();
    let mut moves = Vec::new();
    out.send(OracleMethod::Exact, &moves, legal.len(), legal.is_empty(), 0);
    for (i, &column) in legal.iter().enumerate() {
        let Ok(child) = state.play(column) else { continue };
        let Some(v) = solver.value_until_stopped(&child) else { return };
        let v = v.before_move();
        moves.push(OracleMove {
            action: state.action_to_text(column),
            win_prob: v.win_prob(),
            bucket: out.bucket(v.win_prob()),
            label: v.describe(),
            rank: v.rank(),
        });
        out.send(OracleMethod::Exact, &moves, legal.len(), i + 1 == legal.len(), solver.nodes());
    }
}

/// Values every legal move of a small Hex position with the exact solver.
fn hex_exact(state: &HexState, stop: &StopFlag, out: &Reporter<'_>) {
    let legal = state.legal_actions();
    let mut solver = HexSolver::with_table_bits(TABLE_BITS);
    solver.set_stop(stop.clone());
    let mut moves = Vec::new();
    out.send(OracleMethod::Exact, &moves, legal.len(), legal.is_empty(), 0);
    for (i, &action) in legal.iter().enumerate() {
        let Ok(child) = state.play(action) else { continue };
        let v = match solver.value_until_stopped(&child) {
            Ok(Some(v)) => v.flipped(),
            // Stopped, or (never for these sizes) too large to solve.
            Ok(None) | Err(_) => return,
        };
        moves.push(OracleMove {
            action: state.action_to_text(action),
            win_prob: v.win_prob(),
            bucket: out.bucket(v.win_prob()),
            label: v.describe().to_owned(),
            rank: i64::from(v == crate::solve::hex::HexValue::Win),
        });
        out.send(OracleMethod::Exact, &moves, legal.len(), i + 1 == legal.len(), solver.nodes());
    }
}

/// Values the moves of a large Hex position with MCTS over random playouts, in rounds of growing size.
fn hex_mcts(state: &HexState, stop: &StopFlag, out: &Reporter<'_>) {
    let legal = state.legal_actions();
    let mut work = 0;
    for (round, &playouts) in HEX_MCTS_ROUNDS.iter().enumerate() {
        if stop.is_set() {
            return;
        }
        let r = mcts::search(state, mcts::Config { playouts, ..mcts::Config::default() });
        work += r.playouts;
        let moves: Vec<OracleMove> = r
            .moves
            .iter()
            .map(|m| OracleMove {
                action: m.action.to_string(),
                win_prob: m.win_prob,
                bucket: m.bucket,
                label: format!("{:.0} % ({} visits)", m.win_prob * 100.0, m.visits),
                rank: (m.win_prob * 1e6) as i64,
            })
            .collect();
        let done = round + 1 == HEX_MCTS_ROUNDS.len();
        out.send(OracleMethod::Mcts { playouts: r.playouts }, &moves, legal.len(), done, work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn finish(mut o: Oracle) -> OracleReport {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(r) = o.poll()
                && r.done
            {
                return r.clone();
            }
            assert!(Instant::now() < deadline, "the oracle did not finish");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn connect_four_moves_get_exact_values() {
        // x has three in the fourth column: playing it wins at once; o must block there.
        let state = ConnectFourState::from_moves("434343").expect("legal");
        let r = finish(Oracle::start(OraclePosition::ConnectFour(state), Arc::new(|| {})).expect("starts"));
        assert_eq!(r.moves.len(), 7);
        assert_eq!(r.legal, 7);
        assert_eq!(r.method, OracleMethod::Exact);
        let best = r.best().expect("a best move");
        assert_eq!(best.action, "4");
        assert_eq!(best.label, "win in 1");
        assert_eq!(best.bucket, 63);
        assert_eq!(r.position, state.to_text());
        // Every value agrees with the solver on its own.
        let mut solver = ConnectFourSolver::new();
        let a = solver.analyse(&state);
        for (m, s) in r.moves.iter().zip(&a.moves) {
            assert_eq!(m.action, s.column.number().to_string());
            assert_eq!(m.label, s.value.describe());
        }
    }

    #[test]
    fn small_hex_is_exact_and_large_hex_uses_mcts() {
        let small = HexState::new(3).expect("3×3");
        let r = finish(Oracle::start(OraclePosition::Hex(small), Arc::new(|| {})).expect("starts"));
        assert_eq!(r.method, OracleMethod::Exact);
        assert_eq!(r.moves.len(), 9);
        // The centre of 3×3 wins for the first player.
        let centre = r.moves.iter().find(|m| m.action == "b2").expect("b2 is legal");
        assert_eq!(centre.win_prob, 1.0);
        let large = HexState::new(9).expect("9×9");
        let r = finish(Oracle::start(OraclePosition::Hex(large), Arc::new(|| {})).expect("starts"));
        assert_eq!(r.method, OracleMethod::Mcts { playouts: u64::from(HEX_MCTS_ROUNDS[2]) });
        assert_eq!(r.moves.len(), 81);
        assert!(r.moves.iter().all(|m| (0.0..=1.0).contains(&m.win_prob)));
    }

    #[test]
    fn dropping_the_handle_stops_a_long_solve() {
        let flag_seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = flag_seen.clone();
        let o = Oracle::start(
            OraclePosition::ConnectFour(ConnectFourState::default()),
            Arc::new(move || {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
        )
        .expect("starts");
        std::thread::sleep(Duration::from_millis(30));
        let reports = o.reports.clone();
        drop(o);
        // The thread ends (its sender is dropped) long before the empty board would be solved.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match reports.recv_timeout(Duration::from_millis(50)) {
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                Ok(r) => assert!(!r.done, "the empty board cannot be solved this fast"),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            }
            assert!(Instant::now() < deadline, "the oracle thread did not stop");
        }
        assert!(flag_seen.load(std::sync::atomic::Ordering::Relaxed) >= 1, "the first report woke the UI");
    }
}
