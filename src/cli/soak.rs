//! `mavboard soak` (hidden): the analysis board window driven by the soak workload
//! ([`mavboard::app::soak`]) for a given time, then closed normally; `packaging/soak.sh` runs it under Xvfb
//! for an hour and samples the process's memory, threads and open files.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use mavboard::app::soak::SoakConfig;

/// Arguments of `mavboard soak`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The PGN file opened at the start of every cycle (the soak wants a large one, e.g. 1 GB).
    #[arg(long)]
    pgn: PathBuf,
    /// The UCI engine that judges one review per cycle and runs beside the model.
    #[arg(long, default_value = "/usr/games/stockfish")]
    stockfish: PathBuf,
    /// The UCI judge's depth per position.
    #[arg(long, default_value_t = 8)]
    depth: u32,
    /// The model package switched to once per cycle (default: the second shipped package).
    #[arg(long)]
    model: Option<PathBuf>,
    /// How long to run, in minutes (fractions allowed).
    #[arg(long, default_value_t = 60.0)]
    minutes: f64,
}

/// Opens the window and runs the workload until the time is up. `startup` are the commands the window
/// applies first (the log's messages).
pub fn run(args: Args, startup: Vec<mavboard::app::command::Command>) -> anyhow::Result<()> {
    if !args.pgn.is_file() {
        bail!("{}: not a file", args.pgn.display());
    }
    if !args.stockfish.is_file() {
        bail!("{}: no UCI engine there", args.stockfish.display());
    }
    if !(args.minutes.is_finite() && args.minutes > 0.0) {
        bail!("--minutes must be a positive number, not {}", args.minutes);
    }
    let other_model = match args.model {
        Some(dir) => Some(dir),
        None => mavboard::model::package::shipped_package_dirs().into_iter().nth(1),
    };
    let config = SoakConfig { pgn: args.pgn, uci_engine: args.stockfish, uci_depth: args.depth, other_model };
    let duration = Duration::from_secs_f64(args.minutes * 60.0);
    mavboard::shell::run_soak(startup, config, duration)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("the soak's window could not run")
}
