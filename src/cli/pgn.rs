//! `mavboard pgn`: headless work with PGN files.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use mavboard::pgn::{PgnReader, ReadOptions};

/// Arguments of `mavboard pgn`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PgnCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PgnCommand {
    /// Read every game of each file into a game tree; report games read, games with errors (game number,
    /// line, column where the error is one token, reason) and the reading speed. Exits non-zero if a file
    /// could not be read at all.
    Check {
        /// PGN files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// Runs `mavboard pgn`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        PgnCommand::Check { files } => check(&files),
    }
}

fn check(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut unreadable = 0usize;
    for path in files {
        match check_file(path) {
            Ok(()) => {}
            Err(e) => {
                unreadable += 1;
                outln!("{}: could not be read: {e:#}", path.display());
            }
        }
    }
    if unreadable > 0 {
        anyhow::bail!("{unreadable} of {} file(s) could not be read", files.len());
    }
    Ok(())
}

fn check_file(path: &PathBuf) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let started = Instant::now();
    let mut read = 0usize;
    let mut errors = Vec::new();
    let reader =
        PgnReader::with_options(BufReader::with_capacity(1 << 16, file), ReadOptions { keep_source: false });
    for game in reader {
        match game {
            Ok(_) => read += 1,
            Err(e) if e.is_fatal() => {
                return Err(anyhow::Error::new(e)).with_context(|| format!("reading {}", path.display()));
            }
            Err(e) => errors.push(e),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let mb_per_s = if seconds > 0.0 { bytes as f64 / 1e6 / seconds } else { 0.0 };
    outln!(
        "{}: {} games read, {} with errors, {:.1} MB in {:.3} s ({:.1} MB/s)",
        path.display(),
        read,
        errors.len(),
        bytes as f64 / 1e6,
        seconds,
        mb_per_s
    );
    for e in &errors {
        // "game N, line L[, column C]: reason"
        outln!("  {e}");
    }
    Ok(())
}
