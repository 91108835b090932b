//! `mavboard solve --game hex` and `mavboard bench solve --game hex`: Hex labels from the exact solver
//! (small boards) or MCTS with random playouts (any size).

use std::time::Instant;

use anyhow::{Context, bail};
use mavboard::game::hex::record::{HexRecord, read_sgf};
use mavboard::game::hex::{HexAction, HexState};
use mavboard::game::{GameState, Player};
use mavboard::solve::hex::{MAX_EXACT_SIZE, Solver, mcts};
use rand::seq::IndexedRandom;
use rand::{SeedableRng, rngs::StdRng};

/// How to value the moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Exact when at most 16 cells are empty (every 4×4 position), else MCTS.
    Auto,
    /// The exact solver (boards up to 7×7; slow with many empty cells).
    Exact,
    /// UCT with random playouts.
    Mcts,
}

/// The Hex options of `mavboard solve`.
#[derive(Debug, Clone, clap::Args)]
pub struct HexArgs {
    /// Hex: the board size N (1 to 13).
    #[arg(long, default_value_t = mavboard::game::hex::DEFAULT_SIZE)]
    pub size: u32,
    /// Hex: play with the swap rule.
    #[arg(long)]
    pub swap: bool,
    /// Hex: a game record (SGF, HexGui/benzene dialect) to start from instead of --moves.
    #[arg(long)]
    pub sgf: Option<std::path::PathBuf>,
    /// Hex: how to value the moves.
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    pub method: Method,
    /// Hex: playouts of the MCTS evaluator.
    #[arg(long, default_value_t = 20_000)]
    pub playouts: u32,
    /// Hex: the MCTS seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Reads a move list such as `d4 c5 swap` or `d4,c5` from the empty board.
pub fn read_move_list(size: u32, swap: bool, text: &str) -> anyhow::Result<HexRecord> {
    let mut s = HexState::new(size)?.with_swap(swap);
    let mut moves = Vec::new();
    for (i, word) in text.split([' ', ',']).filter(|w| !w.is_empty()).enumerate() {
        let a = s.parse_action(word).with_context(|| format!("move {}", i + 1))?;
        s = s.play(a).with_context(|| format!("move {}", i + 1))?;
        moves.push(a);
    }
    Ok(HexRecord::new(size, swap, &moves)?)
}

fn exact_fits(s: &HexState) -> bool {
    let empty = s.size() * s.size() - s.stone_count();
    s.size() <= MAX_EXACT_SIZE && empty <= 16
}

/// Runs `mavboard solve --game hex`.
pub fn run(args: &HexArgs, moves: &str, json: bool, table_bits: u32) -> anyhow::Result<()> {
    let record = match &args.sgf {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            read_sgf(&text).with_context(|| format!("{}", path.display()))?
        }
        None => read_move_list(args.size, args.swap, moves)?,
    };
    let state = record.end()?;
    let listed: Vec<String> = record.moves.iter().map(ToString::to_string).collect();
    let side = if state.to_move() == Player::First { "x" } else { "o" };
    let exact = match args.method {
        Method::Exact => true,
        Method::Mcts => false,
        Method::Auto => exact_fits(&state),
    };
    let start = Instant::now();
    // The answer as JSON, or the board and the outcome before the table; true when nothing more to print.
    let header = |method: &str, analysis: serde_json::Value, secs: f64| -> anyhow::Result<bool> {
        if json {
            let out = serde_json::json!({
                "game": "hex", "size": state.size(), "swap_rule": state.swap_rule(), "moves": listed,
                "to_move": side, "outcome": state.outcome().map(|o| o.result_str()), "method": method,
                "analysis": analysis, "seconds": secs,
            });
            outln!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(true);
        }
        outln!("{}", state.diagram());
        if let Some(o) = state.outcome() {
            outln!("the game is over: {}", o.result_str());
            return Ok(true);
        }
        Ok(false)
    };
    if exact {
        let mut solver = Solver::with_table_bits(table_bits);
        let a = solver.analyse(&state)?;
        let secs = start.elapsed().as_secs_f64();
        if header("exact", serde_json::to_value(&a)?, secs)? {
            return Ok(());
        }
        outln!("{side} to move: {} (exact)", a.value.describe());
        outln!("{:>6}  {:<6} {:>8} {:>6}", "move", "value", "win prob", "bucket");
        for m in &a.moves {
            let mark = if Some(m.action) == a.best { "  best" } else { "" };
            outln!(
                "{:>6}  {:<6} {:>8.2} {:>6}{mark}",
                m.action.to_string(),
                m.value.describe(),
                m.win_prob,
                m.bucket
            );
        }
        outln!("{} positions searched in {secs:.3} s", a.nodes);
    } else {
        let cfg = mcts::Config { playouts: args.playouts, seed: args.seed, ..mcts::Config::default() };
        let r = mcts::search(&state, cfg);
        let secs = start.elapsed().as_secs_f64();
        if header("mcts", serde_json::to_value(&r)?, secs)? {
            return Ok(());
        }
        outln!("{side} to move: win probability {:.3} (MCTS, {} random playouts)", r.win_prob, r.playouts);
        outln!("{:>6}  {:>7} {:>8} {:>6}", "move", "visits", "win prob", "bucket");
        for m in &r.moves {
            let mark = if Some(m.action) == r.best { "  best" } else { "" };
            outln!("{:>6}  {:>7} {:>8.3} {:>6}{mark}", m.action.to_string(), m.visits, m.win_prob, m.bucket);
        }
        outln!(
            "{} playouts in {secs:.3} s ({:.0} playouts/s)",
            r.playouts,
            r.playouts as f64 / secs.max(1e-9)
        );
    }
    Ok(())
}

/// A position of `stones` random stones on an N×N board with no winner and no win in one for the
/// player to move, with its move list.
fn quiet_position(size: u32, stones: u32, rng: &mut StdRng) -> Option<(HexState, String)> {
    let wins_now =
        |s: &HexState| s.legal_actions().into_iter().any(|a| s.play(a).is_ok_and(|t| t.outcome().is_some()));
    'attempt: for _ in 0..10_000 {
        let mut s = HexState::new(size).ok()?;
        let mut moves = Vec::new();
        for _ in 0..stones {
            let safe: Vec<HexAction> = s
                .legal_actions()
                .into_iter()
                .filter(|&a| s.play(a).is_ok_and(|t| t.outcome().is_none() && !wins_now(&t)))
                .collect();
            let Some(&a) = safe.choose(rng) else { continue 'attempt };
            moves.push(a.to_string());
            s = s.play(a).ok()?;
        }
        return Some((s, moves.join(" ")));
    }
    None
}

/// Runs `mavboard bench solve --game hex`: the exact solver on seeded quiet positions of `size` with the
/// given stone counts (every move solved, empty table each), then MCTS playouts/s on the same positions.
pub fn run_bench(
    size: u32,
    stones: &[u32],
    positions: usize,
    seed: u64,
    table_bits: u32,
    json: bool,
) -> anyhow::Result<()> {
    if size > MAX_EXACT_SIZE {
        bail!("the exact solver takes boards up to {MAX_EXACT_SIZE}×{MAX_EXACT_SIZE}; pass --size 4 or 5");
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut solver = Solver::with_table_bits(table_bits);
    let mut rows = Vec::new();
    if !json {
        outln!(
            "{size}×{size}, table 2^{table_bits} entries emptied before each position; every legal move solved"
        );
        outln!(
            "{:>6}  {:<40} {:<5} {:>4} {:>12} {:>9} {:>9} {:>12}",
            "stones",
            "moves",
            "value",
            "best",
            "nodes",
            "seconds",
            "Mnodes/s",
            "playouts/s"
        );
    }
    for &n in stones {
        for _ in 0..positions {
            let Some((s, moves)) = quiet_position(size, n, &mut rng) else {
                bail!("found no quiet position with {n} stones on {size}×{size}");
            };
            solver.clear();
            let t = Instant::now();
            let a = solver.analyse(&s)?;
            let secs = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let r = mcts::search(&s, mcts::Config { playouts: 20_000, seed, ..mcts::Config::default() });
            let pps = r.playouts as f64 / t.elapsed().as_secs_f64().max(1e-9);
            let row = serde_json::json!({
                "stones": n, "moves": moves, "value": a.value.describe(),
                "best": a.best.map(|b| b.to_string()), "nodes": a.nodes, "seconds": secs,
                "mnodes_per_s": a.nodes as f64 / secs.max(1e-9) / 1e6, "mcts_playouts_per_s": pps,
                "mcts_best_is_winning": a.moves.iter().any(|m| Some(m.action) == r.best && m.value == mavboard::solve::hex::HexValue::Win),
            });
            if !json {
                outln!(
                    "{:>6}  {:<40} {:<5} {:>4} {:>12} {:>9.3} {:>9.2} {:>12.0}",
                    n,
                    moves,
                    a.value.describe(),
                    a.best.map_or("-".to_owned(), |b| b.to_string()),
                    a.nodes,
                    secs,
                    a.nodes as f64 / secs.max(1e-9) / 1e6,
                    pps
                );
            }
            rows.push(row);
        }
    }
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "game": "hex", "size": size, "rows": rows }))?
        );
    }
    Ok(())
}
