//! `mavboard perft`: count move-tree leaves for one position, or check a whole perft suite.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::fen::ModeChoice;
use mavboard::game::perft::{chess_perft, divide};
use mavboard::game::perft_suite::{SuiteFormat, parse_suite};

/// Arguments of `mavboard perft`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["fen", "suite"])))]
pub struct Args {
    /// The position: a FEN (standard, Shredder-FEN or X-FEN castling; quote it) or `startpos`.
    #[arg(long, requires = "depth")]
    fen: Option<String>,
    /// Plies to search from the FEN.
    #[arg(long)]
    depth: Option<u32>,
    /// Print the leaf count below each root move.
    #[arg(long, requires = "fen")]
    divide: bool,
    /// Read the FEN as Chess960 even when its castling field looks standard.
    #[arg(long, requires = "fen")]
    chess960: bool,
    /// A perft suite: EPD lines `FEN ;D1 20 ;D2 400 …` or python-chess blocks (`id`/`epd`/`perft N count`).
    #[arg(long, conflicts_with_all = ["fen", "depth", "divide"])]
    suite: Option<PathBuf>,
    /// With --suite: check only depths up to this.
    #[arg(long, requires = "suite")]
    max_depth: Option<u32>,
}

/// Runs `mavboard perft`. Fails (non-zero exit) if any suite count disagrees.
pub fn run(args: Args) -> anyhow::Result<()> {
    match (&args.fen, &args.suite) {
        (Some(fen), _) => {
            let Some(depth) = args.depth else { bail!("--fen needs --depth N") };
            run_position(fen, depth, args.divide, args.chess960)
        }
        (None, Some(path)) => run_suite(path, args.max_depth),
        (None, None) => bail!("give --fen FEN --depth N, or --suite FILE"),
    }
}

fn mnps(nodes: u64, elapsed: Duration) -> f64 {
    nodes as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6
}

fn run_position(fen: &str, depth: u32, show_divide: bool, chess960: bool) -> anyhow::Result<()> {
    let mode = if chess960 { ModeChoice::Chess960 } else { ModeChoice::Auto };
    let state = if fen.trim() == "startpos" {
        ChessState::from_fen_mode(mavboard::game::fen::STARTPOS_FEN, mode)?
    } else {
        ChessState::from_fen_mode(fen, mode)?
    };
    outln!("position: {} ({})", state.to_text(), state.kind().name());
    let start = Instant::now();
    let nodes = if show_divide {
        let entries = divide(&state, depth);
        for e in &entries {
            outln!("{} {}", e.uci, e.nodes);
        }
        outln!("moves: {}", entries.len());
        entries.iter().map(|e| e.nodes).sum()
    } else {
        chess_perft(&state, depth)
    };
    let elapsed = start.elapsed();
    outln!(
        "depth {depth}: {nodes} nodes in {:.3} s ({:.1} Mnps)",
        elapsed.as_secs_f64(),
        mnps(nodes, elapsed)
    );
    Ok(())
}

fn run_suite(path: &PathBuf, max_depth: Option<u32>) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let suite = parse_suite(&text).with_context(|| format!("in {}", path.display()))?;
    let format = match suite.format {
        SuiteFormat::Epd => "EPD lines",
        SuiteFormat::Blocks => "id/epd/perft blocks",
    };
    let limit = max_depth.map_or_else(|| "all depths".to_owned(), |d| format!("depths up to {d}"));
    outln!("{}: {} positions ({format}), {limit}", path.display(), suite.cases.len());

    let (mut passed, mut failed, mut nodes) = (0usize, 0usize, 0u64);
    let mut failed_cases = Vec::new();
    let start = Instant::now();
    for case in &suite.cases {
        let checks = case.check(max_depth);
        let mut parts = Vec::new();
        let mut case_ok = true;
        for c in &checks {
            nodes += c.got;
            if c.ok() {
                passed += 1;
                parts.push(format!("D{} {}", c.depth, c.got));
            } else {
                failed += 1;
                case_ok = false;
                parts.push(format!("D{} expected {} got {}", c.depth, c.expected, c.got));
            }
        }
        if !case_ok {
            failed_cases.push(case.name.clone());
        }
        let status = if checks.is_empty() {
            "SKIP"
        } else if case_ok {
            "OK"
        } else {
            "FAIL"
        };
        outln!(
            "{status:<4} {} [{}]: {}  {}",
            case.name,
            case.state.kind().name(),
            parts.join("  "),
            case.fen
        );
    }
    let elapsed = start.elapsed();
    outln!(
        "total: {} positions, {passed} counts OK, {failed} FAIL; {nodes} nodes in {:.3} s ({:.1} Mnps)",
        suite.cases.len(),
        elapsed.as_secs_f64(),
        mnps(nodes, elapsed)
    );
    if failed > 0 {
        bail!("{failed} perft count(s) differ, in: {}", failed_cases.join(", "));
    }
    Ok(())
}
