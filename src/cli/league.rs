//! `mavboard league`: games between agents from an opening suite, each opening with both colours; the
//! record of every game (PGN, Connect Four move strings, Hex SGF), Elo by maximum likelihood with 95 %
//! intervals, a crosstable; resumable. Chess, Chess960, Connect Four and Hex.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mavboard::game::GameKind;
use mavboard::inference::onnx::SessionOptions;
use mavboard::league::rules::{EvalRules, Rules};
use mavboard::league::run::{check_agents, model_provenance, needs_stockfish};
use mavboard::league::settings::StockfishLimits;
use mavboard::league::spec::parse_agents;
use mavboard::league::{LeagueConfig, LeagueGameSetup, LeagueSummary, Progress, run_league};
use mavboard::model::package::default_package_dir;
use mavboard::solve::stop::StopFlag;
use mavboard::uci::UciError;

use super::choice::GameArg;

const AFTER_HELP: &str = "\
Agents: mav-max and mav-mean (one model call per move, the best move by max or mean scoring), mcts:N and
mcts-max:N (MAV-MCTS with N simulations per move, mean or max scoring, batch --batch, tree reuse),
minimax:B:D (the explicit minimax over the model's values, B moves per node, D plies) and
internal:B:D[:free|rules] (the move of the trace a trace-writing mav-lm writes itself, free or rules-
constrained decoding; the explicit choice where a trace names no legal move or the context cut it). Model
agents may end in @MODEL_DIR to use another package than --model. Reference players: for chess
stockfish:SKILL (Skill Level 0..20) and stockfish-elo:ELO (UCI_LimitStrength); for Connect Four solver (the
exact solver: perfect play, slow in the first plies) and solver:DEPTH (alpha-beta DEPTH plies deep: it sees
wins and losses that near, and picks at random among the moves best that far); for Hex playouts:N (MCTS
with N random playouts per move, the paper's MCTS baseline).

Games (--game): chess (openings from --book), connect_four (every position --opening-plies from the empty
board, default 2: the 49 two-move openings), hex (on --hex-size, default 7, no swap; every position
--opening-plies from the empty board, default 1: each first stone). --openings draws that many of them.

Pairing: every pair of agents plays every chosen opening twice, once with each colour.

Adjudication: games end by the rules (checkmate, stalemate, insufficient material, fifty-move rule,
threefold repetition). With evaluation adjudication (--adjudicate eval, or auto when Stockfish is found), a
full-strength Stockfish evaluates every position at --adjudicate-depth: a side at or below -resign-cp for
--resign-plies consecutive plies loses; a game reaching --max-plies is won by a side at or above
--max-plies-win-cp and drawn otherwise. Without it, a game reaching --max-plies is drawn.

Elo: maximum likelihood of the logistic Elo model (draws count half), anchored at --anchor = 0 (default: the
first reference player, else the first agent), with --prior-draws virtual draws per pair that played (keeps
perfect scores finite; 0 = plain MLE); the interval is +-1.96 standard errors relative to the anchor.

Output (in --out): results.jsonl (one finished game a line; the same command resumes from it), the games
(games.pgn for chess; games.tsv for Connect Four: the move string from the empty board, result, players,
round, termination; games.sgf for Hex), table.txt, table.json, league.json (the settings a resume must
match). Connect Four and Hex games always end on the board: evaluation adjudication is for chess. Ctrl+C
stops after dropping the games in progress.

Concurrency: --concurrency N plays N games at once (as cutechess-cli's -concurrency), each on its own thread
with its own agents: its own model sessions (--threads intra-op threads each) and its own Stockfish. Give
each game a core; the files written are the same as one game at a time.";

/// Arguments of `mavboard league`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The agents, comma-separated (see below) [default: chess mav-max,mav-mean,mcts:100,stockfish:0;
    /// connect_four mav-max,mav-mean,mcts:100,solver:4; hex mav-max,mav-mean,mcts:100,playouts:1000].
    #[arg(long, value_delimiter = ',')]
    agents: Vec<String>,
    /// The game: chess, connect_four or hex.
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::Chess)]
    game: GameArg,
    /// Hex: the board size (5..=13).
    #[arg(long, default_value_t = 7)]
    hex_size: u32,
    /// Connect Four and Hex: the openings are every position this many plies from the empty board
    /// [default: 2 for Connect Four, 1 for Hex].
    #[arg(long)]
    opening_plies: Option<u32>,
    /// The model package of the model agents [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// The opening suite: EPD/FEN lines or PGN [default: ../shared/data/openings/stockfish-books/2moves_v1.epd].
    #[arg(long)]
    book: Option<PathBuf>,
    /// Openings drawn from the book (seeded); 0 = the whole book.
    #[arg(long, default_value_t = 4)]
    openings: usize,
    /// The seed of the openings' draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Plies after which a game is adjudicated.
    #[arg(long, default_value_t = 200)]
    max_plies: u32,
    /// Evaluation adjudication: eval (needs Stockfish), none, or auto (eval when Stockfish is found; chess
    /// only).
    #[arg(long, default_value = "auto")]
    adjudicate: String,
    /// Depth of the adjudicating Stockfish.
    #[arg(long, default_value_t = 10)]
    adjudicate_depth: u32,
    /// Resignation threshold in centipawns.
    #[arg(long, default_value_t = 800)]
    resign_cp: i32,
    /// Consecutive plies beyond the threshold that lose the game.
    #[arg(long, default_value_t = 6)]
    resign_plies: u32,
    /// At --max-plies, the evaluation (centipawns) that wins; below it the game is drawn.
    #[arg(long, default_value_t = 300)]
    max_plies_win_cp: i32,
    /// The Stockfish binary [default: `stockfish` on PATH, then /usr/games/stockfish].
    #[arg(long)]
    stockfish: Option<PathBuf>,
    /// Stockfish agents: depth per move.
    #[arg(long, default_value_t = 8)]
    sf_depth: u32,
    /// Stockfish agents: milliseconds per move (also), if given.
    #[arg(long)]
    sf_movetime: Option<u64>,
    /// Stockfish agents: nodes per move (also), if given.
    #[arg(long)]
    sf_nodes: Option<u64>,
    /// MCTS batch size b.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// ONNX Runtime intra-op threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Games played at once, each by its own agents (own model sessions, own Stockfish) on its own thread;
    /// the files written are the same as with 1.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// The output folder.
    #[arg(long, default_value = "league")]
    out: PathBuf,
    /// The PGN Event tag.
    #[arg(long, default_value = "mavboard league")]
    event: String,
    /// The agent rated 0.
    #[arg(long)]
    anchor: Option<String>,
    /// Virtual draws per pair in the rating fit (0 = plain maximum likelihood).
    #[arg(long, default_value_t = 1.0)]
    prior_draws: f64,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
}

/// Runs `mavboard league`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let kind = args.game.rules();
    let chess = kind == GameKind::Chess;
    let default_agents = match kind {
        GameKind::Chess | GameKind::Chess960 => "mav-max,mav-mean,mcts:100,stockfish:0",
        GameKind::ConnectFour => "mav-max,mav-mean,mcts:100,solver:4",
        GameKind::Hex => "mav-max,mav-mean,mcts:100,playouts:1000",
    };
    let texts: Vec<String> = if args.agents.is_empty() {
        default_agents.split(',').map(str::to_owned).collect()
    } else {
        args.agents.clone()
    };
    let agents = parse_agents(&texts)?;
    check_agents(kind, &agents)?;
    let model = match &args.model {
        Some(d) => d.clone(),
        None if agents.iter().any(|a| a.kind.uses_model() && a.model.is_none()) => default_package_dir()?,
        None => PathBuf::new(),
    };
    if !chess && args.book.is_some() {
        anyhow::bail!("--book is for chess; Connect Four and Hex openings come from --opening-plies");
    }
    let setup = match kind {
        GameKind::Chess | GameKind::Chess960 => LeagueGameSetup::Chess {
            book: match &args.book {
                Some(b) => b.clone(),
                None => mavboard::league::openings::default_book().with_context(|| {
                    format!(
                        "the default opening book {} is not there; pass --book FILE",
                        mavboard::league::openings::DEFAULT_BOOK
                    )
                })?,
            },
        },
        GameKind::Hex => LeagueGameSetup::Hex { size: args.hex_size, plies: args.opening_plies.unwrap_or(1) },
        GameKind::ConnectFour => LeagueGameSetup::ConnectFour { plies: args.opening_plies.unwrap_or(2) },
    };
    let eval = EvalRules {
        depth: args.adjudicate_depth,
        resign_cp: args.resign_cp,
        resign_plies: args.resign_plies,
        max_plies_win_cp: args.max_plies_win_cp,
    };
    let sf_found = mavboard::uci::locate::locate_stockfish(args.stockfish.as_deref());
    let eval = match args.adjudicate.as_str() {
        "eval" if !chess => anyhow::bail!(
            "--adjudicate eval is for chess (Stockfish evaluates); Connect Four and Hex games end on the board"
        ),
        "eval" => {
            sf_found.as_ref().map_err(|e| anyhow::anyhow!("--adjudicate eval needs Stockfish: {e}"))?;
            Some(eval)
        }
        "none" => None,
        "auto" if !chess => None,
        "auto" => sf_found.as_ref().ok().map(|_| eval),
        other => anyhow::bail!("--adjudicate {other}: use eval, none or auto"),
    };
    let rules = Rules { max_plies: args.max_plies, eval };
    if needs_stockfish(&agents, &rules)
        && let Err(e) = &sf_found
    {
        anyhow::bail!("{e}");
    }
    let anchor = args
        .anchor
        .clone()
        .or_else(|| agents.iter().find(|a| a.kind.is_reference()).or(agents.first()).map(|a| a.label()));
    let mut session = SessionOptions { ort_lib: args.ort_lib.clone(), ..SessionOptions::default() };
    session.threads.intra_op = args.threads.max(1);
    let config = LeagueConfig {
        agents,
        model: model.clone(),
        game: setup.clone(),
        openings: (args.openings > 0).then_some(args.openings),
        seed: args.seed,
        rules,
        stockfish: args.stockfish.clone(),
        stockfish_limits: StockfishLimits {
            depth: Some(args.sf_depth),
            movetime_ms: args.sf_movetime,
            nodes: args.sf_nodes,
        },
        batch: args.batch.max(1),
        session,
        out: args.out.clone(),
        event: args.event.clone(),
        anchor,
        prior_draws: args.prior_draws.max(0.0),
        concurrency: args.concurrency.max(1),
    };

    print_settings(&config, &model, &sf_found);
    let started = Instant::now();
    let summary = run_with_progress(&config)?;
    print_summary(&summary, &config, started);
    Ok(())
}

/// Prints (to stderr) who plays, with which model and Stockfish, from which openings, adjudicated how.
fn print_settings(config: &LeagueConfig, model: &Path, sf_found: &Result<PathBuf, UciError>) {
    eprintln!("agents      {}", config.agents.iter().map(|a| a.label()).collect::<Vec<_>>().join(", "));
    if config.agents.iter().any(|a| a.kind.uses_model()) {
        eprintln!(
            "model       {} — {}",
            model.display(),
            model_provenance(model).unwrap_or_else(|| "(could not read mav.json)".into())
        );
    }
    if let Ok(sf) = sf_found
        && needs_stockfish(&config.agents, &config.rules)
    {
        eprintln!(
            "stockfish   {} ({} per move for agents)",
            sf.display(),
            config.stockfish_limits.describe()
        );
    }
    eprintln!("openings    {}", config.game.describe());
    eprintln!("adjudication {}", config.rules.describe_with(config.game.ends()));
}

/// Runs the league with a progress bar (Ctrl+C stops it, dropping the games in progress), printing each game's
/// result as it ends.
fn run_with_progress(config: &LeagueConfig) -> anyhow::Result<LeagueSummary> {
    let stop = StopFlag::new();
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.set()).context("could not install the Ctrl+C handler")?;
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} games {msg} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // The games in progress, for the bar's message (several with --concurrency).
    let mut playing: Vec<String> = Vec::new();
    let result = run_league(config, &stop, &mut |p| match p {
        Progress::Start { total, done, openings } => {
            eprintln!(
                "openings    {} chosen (positions {})",
                openings.len(),
                openings.iter().map(|o| (o.0 + 1).to_string()).collect::<Vec<_>>().join(", ")
            );
            if done > 0 {
                eprintln!("resuming: {done} of {total} games already played");
            }
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        Progress::GameStart { white, black, game } => {
            playing.push(format!("{white} vs {black} (book {})", game.book_index + 1));
            bar.set_message(playing.join(", "));
        }
        Progress::GameEnd { record, done, .. } => {
            let label = format!("{} vs {} (book {})", record.white, record.black, record.book_index + 1);
            if let Some(i) = playing.iter().position(|p| *p == label) {
                playing.remove(i);
            }
            bar.set_message(playing.join(", "));
            bar.suspend(|| {
                eprintln!(
                    "{:<14} {:<14} {:<7} {:>3} plies {:>6.1} s  {}",
                    record.white,
                    record.black,
                    record.result.pgn(),
                    record.moves.len(),
                    record.seconds,
                    record.termination
                );
            });
            bar.set_position(done as u64);
        }
    });
    bar.finish_and_clear();
    // A stop (Ctrl+C) is said once, by the caller's error line: what is kept and how to go on.
    result.map_err(Into::into)
}

/// Prints the cross table, the adjudication, the timing and the files written.
fn print_summary(summary: &LeagueSummary, config: &LeagueConfig, started: Instant) {
    outln!("\n{}", summary.table.render());
    outln!("adjudication: {}", config.rules.describe_with(config.game.ends()));
    outln!(
        "{} games ({} played now, {} from an earlier run) in {:.1} s; MCTS tree reuse saved {} model calls",
        summary.total,
        summary.played,
        summary.resumed,
        started.elapsed().as_secs_f64(),
        summary.reused_evaluations
    );
    outln!(
        "files: {}, {}, {}, {}",
        summary.files.pgn.display(),
        summary.files.table.display(),
        summary.files.results.display(),
        summary.files.settings.display()
    );
}
