//! The `mavboard` command line. With no subcommand it opens the analysis board; subcommands are headless.

#[macro_use]
mod cli;

/// The memory allocator: mimalloc rather than glibc's malloc. glibc keeps an arena per thread that ever
/// allocated and rarely gives a freed arena's pages back, so memory freed by short-lived threads (a PGN
/// file's index built on its reader thread, a review's workers) stays resident: in the one-hour soak
/// (results/soak-2026-11-27) resident memory grew by 58 % while the live data did not. mimalloc returns
/// freed pages to the system. Built without its transparent huge pages (`no_thp`): with them, 354 of 547 MiB
/// of the app's anonymous memory were 2 MiB pages in a soak, which a partly freed page keeps resident whole.
/// The C and C++ libraries (ONNX Runtime, Mesa) still use glibc's malloc: `main` tunes it first
/// (`mavboard::c_heap`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// mavboard: an analysis board for multi-action-value (MAV) game models.
#[derive(Debug, Parser)]
#[command(name = "mavboard", version, about, long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// A file to open in the board: a PGN file, or a FEN or EPD file (its first position).
    file: Option<std::path::PathBuf>,
    /// A position to set up in the board (FEN).
    #[arg(long)]
    fen: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The model's view of a position: every move's value distribution, max vs mean scoring; --sims adds MCTS.
    Analyse(cli::analyse::Args),
    /// Review every game of a PGN file with the model: [%eval], ?!/?/??, best moves, accuracy; resumable.
    Annotate(cli::annotate::Args),
    /// Benchmarks: `bench inference` (positions/s, time inside ONNX Runtime vs total), `bench search` (MCTS),
    /// `bench solve` (Connect Four and Hex solvers).
    Bench(cli::bench::Args),
    /// Measure a model against Stockfish labels and Lichess puzzles (max and mean scoring).
    Eval(cli::eval::Args),
    /// Convert published checkpoints into model packages (`import searchless`: DeepMind's searchless models).
    Import(cli::import::Args),
    /// Inside the model for one position: values after each layer (logit lens), a head's attention, a head
    /// switched off (needs a package with an inspection graph).
    Inspect(cli::inspect::Args),
    /// Write a package for a serving engine (`package triton`: a Triton Inference Server model repository).
    Package(cli::package::Args),
    /// Count leaf nodes of the move tree (move-generator check and speed test).
    Perft(cli::perft::Args),
    /// Work with PGN files (check, ...).
    Pgn(cli::pgn::Args),
    /// The MAV text protocol: render examples, tokenizer export, parse model output.
    Mav(cli::mav::Args),
    /// Generate training data (Stockfish labels, ...).
    Datagen(cli::datagen::Args),
    /// Games between agents (MAV max/mean, MCTS, Stockfish levels) from an opening suite: PGN, Elo, crosstable.
    League(cli::league::Args),
    /// Exact Connect Four values of every legal move (win/draw/loss and in how many plies), the best move.
    Solve(cli::solve::Args),
    /// Play as a UCI chess engine on stdin/stdout (for GUIs and tournament managers).
    Uci(cli::uci::Args),
    /// The crash journal under scripted edits, for the kill test (no window).
    #[command(hide = true)]
    JournalDrill(cli::journal_drill::Args),
    /// The window under a scripted workload for a given time, for the soak test (packaging/soak.sh).
    #[command(hide = true)]
    Soak(cli::soak::Args),
}

/// The app's log file and crash reports (see `mavboard::logging`); a message for the user when the last
/// run crashed or no log can be written (the app runs either way).
fn start_app_log() -> Option<mavboard::app::command::Command> {
    use mavboard::app::command::ViewCommand;
    let Some(dir) = mavboard::logging::log_dir() else {
        let _ = mavboard::logging::init_stderr();
        return None;
    };
    if let Err(e) = mavboard::logging::init_file(&dir) {
        let _ = mavboard::logging::init_stderr();
        return Some(ViewCommand::ShowError(format!("No log is written: {e}")).into());
    }
    mavboard::logging::take_crash_report(&dir).map(|report| {
        ViewCommand::ShowError(format!(
            "mavboard stopped unexpectedly last time. The report is {} (Help → Open log folder).",
            report.display()
        ))
        .into()
    })
}

fn main() -> std::process::ExitCode {
    // Before any thread starts: glibc's settings for the C and C++ libraries' memory (crates/core/src/c_heap.rs).
    if let Err(e) = mavboard::c_heap::tune() {
        eprintln!("mavboard: {e}");
    }
    let cli = Cli::parse();
    // The window (and the soak, which is the window) logs to its file; the other subcommands to stderr.
    if cli.command.as_ref().is_some_and(|c| !matches!(c, Command::Soak(_))) {
        // The command line logs to stderr; a second logger cannot be installed, which only happens in tests.
        let _ = mavboard::logging::init_stderr();
    }
    let result = match cli.command {
        Some(Command::Perft(args)) => cli::perft::run(args),
        Some(Command::Pgn(args)) => cli::pgn::run(args),
        Some(Command::Mav(args)) => cli::mav::run(args),
        Some(Command::Datagen(args)) => cli::datagen::run(args),
        Some(Command::Uci(args)) => cli::uci::run(args),
        Some(Command::Analyse(args)) => cli::analyse::run(args),
        Some(Command::Bench(args)) => cli::bench::run(args),
        Some(Command::Eval(args)) => cli::eval::run(args),
        Some(Command::Solve(args)) => cli::solve::run(args),
        Some(Command::Annotate(args)) => cli::annotate::run(args),
        Some(Command::League(args)) => cli::league::run(args),
        Some(Command::Import(args)) => cli::import::run(args),
        Some(Command::Inspect(args)) => cli::inspect::run(args),
        Some(Command::Package(args)) => cli::package::run(args),
        Some(Command::JournalDrill(args)) => cli::journal_drill::run(args),
        Some(Command::Soak(args)) => cli::soak::run(args, start_app_log().into_iter().collect()),
        None => {
            let mut startup = mavboard::app::startup_commands(cli.file.as_deref(), cli.fen.as_deref());
            startup.extend(start_app_log());
            mavboard::shell::run_with(startup)
                .map_err(|e| anyhow::anyhow!("the analysis board could not start: {e}"))
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // stdout was closed before the output was written (`mavboard … | head`): quietly (src/cli/out.rs).
        Err(e) if cli::out::is_broken_pipe(&e) => std::process::ExitCode::from(cli::out::BROKEN_PIPE_STATUS),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
