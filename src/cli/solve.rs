//! `mavboard solve`: the exact value of every legal move of a Connect Four position, and `mavboard bench
//! solve`: the solver's speed on positions of given ply counts. Hex (`--game hex`) is in
//! [`super::solve_hex`].

use std::time::{Duration, Instant};

use anyhow::bail;
use mavboard::game::GameState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::connect_four::record::{read_moves, write_moves};
use mavboard::solve::connect_four::{Analysis, DEFAULT_TABLE_BITS, Solver};
use rand::seq::IndexedRandom;
use rand::{SeedableRng, rngs::StdRng};

use super::choice::GameArg;

/// Arguments of `mavboard solve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game: `connect_four` or `hex`.
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::ConnectFour)]
    game: GameArg,
    /// The position as the moves played from the empty board: Connect Four columns 1–7 (e.g. `4453`),
    /// Hex cells and `swap` separated by spaces or commas (e.g. `d4 c5 swap`); empty: the empty board.
    #[arg(long, default_value = "")]
    moves: String,
    #[command(flatten)]
    hex: super::solve_hex::HexArgs,
    /// Transposition table size: 2^N entries of 8 bytes.
    #[arg(long, default_value_t = DEFAULT_TABLE_BITS)]
    table_bits: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `mavboard solve`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.game == GameArg::Hex {
        let bits = if args.table_bits == DEFAULT_TABLE_BITS {
            mavboard::solve::hex::DEFAULT_TABLE_BITS
        } else {
            args.table_bits
        };
        return super::solve_hex::run(&args.hex, &args.moves, args.json, bits);
    }
    if args.game != GameArg::ConnectFour {
        bail!("there are solvers for connect_four and hex, not '{}'", args.game.kind().name());
    }
    let record = read_moves(&args.moves)?;
    let state = record.end();
    let mut solver = Solver::with_table_bits(args.table_bits);
    let start = Instant::now();
    let analysis = solver.analyse(&state);
    let elapsed = start.elapsed();
    if args.json {
        let out = serde_json::json!({
            "game": "connect_four",
            "moves": record.to_move_string(),
            "to_move": if state.to_move() == mavboard::game::Player::First { "x" } else { "o" },
            "outcome": state.outcome().map(|o| o.result_str()),
            "analysis": analysis,
            "seconds": elapsed.as_secs_f64(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print_analysis(&state, &record.to_move_string(), &analysis, elapsed);
    Ok(())
}

fn print_analysis(state: &ConnectFourState, moves: &str, a: &Analysis, elapsed: Duration) {
    let side = if state.to_move() == mavboard::game::Player::First { "x" } else { "o" };
    outln!("position: {} ({} plies)", if moves.is_empty() { "empty board" } else { moves }, state.plies());
    outln!("{}", state.diagram());
    if let Some(o) = state.outcome() {
        outln!("the game is over: {}", o.result_str());
        return;
    }
    outln!("{side} to move: {}", a.value.describe());
    outln!("{:>6}  {:<12} {:>8} {:>6}", "column", "value", "win prob", "bucket");
    for m in &a.moves {
        let mark = if Some(m.column) == a.best { "  best" } else { "" };
        outln!(
            "{:>6}  {:<12} {:>8.2} {:>6}{mark}",
            m.column.number(),
            m.value.describe(),
            m.win_prob,
            m.bucket
        );
    }
    if let Some(best) = a.best {
        outln!("best move: {best}");
    }
    outln!(
        "{} positions searched in {:.3} s ({:.2} M/s)",
        a.nodes,
        elapsed.as_secs_f64(),
        mnps(a.nodes, elapsed)
    );
}

fn mnps(nodes: u64, elapsed: Duration) -> f64 {
    nodes as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6
}

/// Arguments of `mavboard bench solve`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The game: `connect_four` or `hex`.
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::ConnectFour)]
    game: GameArg,
    /// Hex: the board size (the exact solver takes up to 7; 4 and 5 are practical).
    #[arg(long, default_value_t = 5)]
    size: u32,
    /// Ply counts of the positions (for Hex: stones on the board), comma-separated.
    #[arg(long, default_value = "8,12,16", value_delimiter = ',')]
    plies: Vec<u32>,
    /// Positions per ply count.
    #[arg(long, default_value_t = 3)]
    positions: usize,
    /// Seed of the positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Transposition table size: 2^N entries of 8 bytes.
    #[arg(long, default_value_t = DEFAULT_TABLE_BITS)]
    table_bits: u32,
    /// Also solve the empty board (its value only; slow).
    #[arg(long)]
    empty: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// A position after `plies` plies of random play in which no move hands the opponent an immediate win
/// and the player to move cannot win at once, so its value takes a real search, with its move string;
/// `None` if random play does not find one in many tries.
pub fn quiet_position(plies: u32, rng: &mut StdRng) -> Option<(ConnectFourState, String)> {
    let wins_now = |s: &ConnectFourState| {
        s.legal_actions().into_iter().any(|c| s.play(c).is_ok_and(|t| t.outcome().is_some()))
    };
    'attempt: for _ in 0..10_000 {
        let mut s = ConnectFourState::new();
        let mut moves = Vec::new();
        for _ in 0..plies {
            let safe: Vec<_> = s
                .legal_actions()
                .into_iter()
                .filter_map(|c| s.play(c).ok().map(|t| (c, t)))
                .filter(|(_, t)| t.outcome().is_none() && !wins_now(t))
                .collect();
            match safe.choose(rng) {
                Some(&(c, t)) => {
                    moves.push(c);
                    s = t;
                }
                None => continue 'attempt,
            }
        }
        if !wins_now(&s) {
            return Some((s, write_moves(&moves)));
        }
    }
    None
}

/// One measured solve.
#[derive(Debug, serde::Serialize)]
struct Row {
    plies: u32,
    all_moves: bool,
    moves: String,
    value: String,
    best: Option<u32>,
    nodes: u64,
    seconds: f64,
    mnodes_per_s: f64,
}

/// One row of the bench: `s` solved from an empty table (every move when `all`, else its value only).
fn solve_row(solver: &mut Solver, plies: u32, s: &ConnectFourState, moves: String, all: bool) -> Row {
    solver.clear();
    solver.reset_nodes();
    let start = Instant::now();
    let (value, best, nodes) = if all {
        let a = solver.analyse(s);
        (a.value, a.best.map(|c| c.number()), a.nodes)
    } else {
        let v = solver.value(s);
        (v, None, solver.nodes())
    };
    let elapsed = start.elapsed();
    Row {
        plies,
        all_moves: all,
        moves,
        value: value.describe(),
        best,
        nodes,
        seconds: elapsed.as_secs_f64(),
        mnodes_per_s: mnps(nodes, elapsed),
    }
}

/// Runs `mavboard bench solve`: for each ply count, seeded quiet positions, each solved (every legal move's
/// value) from an empty transposition table.
pub fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    if args.game == GameArg::Hex {
        let bits = if args.table_bits == DEFAULT_TABLE_BITS {
            mavboard::solve::hex::DEFAULT_TABLE_BITS
        } else {
            args.table_bits
        };
        return super::solve_hex::run_bench(
            args.size,
            &args.plies,
            args.positions,
            args.seed,
            bits,
            args.json,
        );
    }
    if args.game != GameArg::ConnectFour {
        bail!("there are solvers for connect_four and hex, not '{}'", args.game.kind().name());
    }
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut solver = Solver::with_table_bits(args.table_bits);
    let mut rows = Vec::new();
    // (plies, position, moves, whether to solve every move or only the position's value)
    let mut jobs: Vec<(u32, ConnectFourState, String, bool)> = Vec::new();
    for &plies in &args.plies {
        for _ in 0..args.positions {
            let Some((s, moves)) = quiet_position(plies, &mut rng) else {
                bail!("found no quiet position of {plies} plies by random play");
            };
            jobs.push((plies, s, moves, true));
        }
    }
    if args.empty {
        // Its value only: the values of its moves are seven more solves of nearly that size.
        jobs.push((0, ConnectFourState::new(), String::new(), false));
    }
    if !args.json {
        outln!(
            "table 2^{} entries, emptied before each position; 'all' rows solve every legal move",
            args.table_bits
        );
        outln!(
            "{:>5}  {:<20} {:<4} {:<12} {:>4} {:>14} {:>10} {:>8}",
            "plies",
            "moves",
            "what",
            "value",
            "best",
            "nodes",
            "seconds",
            "Mnodes/s"
        );
    }
    for (plies, s, moves, all) in jobs {
        let row = solve_row(&mut solver, plies, &s, moves, all);
        if !args.json {
            outln!(
                "{:>5}  {:<20} {:<4} {:<12} {:>4} {:>14} {:>10.3} {:>8.2}",
                row.plies,
                if row.moves.is_empty() { "(empty board)" } else { &row.moves },
                if row.all_moves { "all" } else { "pos" },
                row.value,
                row.best.map_or("-".to_owned(), |b| b.to_string()),
                row.nodes,
                row.seconds,
                row.mnodes_per_s
            );
        }
        rows.push(row);
    }
    let (nodes, secs): (u64, f64) = rows.iter().fold((0, 0.0), |(n, t), r| (n + r.nodes, t + r.seconds));
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "rows": rows, "nodes": nodes, "seconds": secs })
            )?
        );
    } else {
        outln!("total: {nodes} positions in {secs:.3} s ({:.2} M/s)", nodes as f64 / secs.max(1e-9) / 1e6);
    }
    Ok(())
}
