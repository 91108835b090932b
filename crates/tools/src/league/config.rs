//! What a league is told ([`LeagueConfig`]): its agents, its game and openings ([`LeagueGameSetup`]), the
//! adjudication rules, Stockfish's limits and the output folder; read by the run and by each game.

use std::path::PathBuf;

use super::rules::Rules;
use super::settings::StockfishLimits;
use super::spec::AgentSpec;
use crate::inference::onnx::SessionOptions;

/// Which game a league plays, and where its openings come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeagueGameSetup {
    /// Chess (and Chess960) from an opening book: EPD/FEN lines or PGN games.
    Chess {
        /// The book.
        book: PathBuf,
    },
    /// Connect Four from every distinct position `plies` plies from the empty board.
    ConnectFour {
        /// Plies of the openings (2: the 49 two-move openings).
        plies: u32,
    },
    /// Hex on a `size` × `size` board (no swap) from every distinct position `plies` plies from the
    /// empty board.
    Hex {
        /// The board size.
        size: u32,
        /// Plies of the openings (1: every first stone).
        plies: u32,
    },
}

impl LeagueGameSetup {
    /// How the game's own rules end a game, in words.
    pub fn ends(&self) -> &'static str {
        match self {
            LeagueGameSetup::Chess { .. } => super::rules::CHESS_ENDS,
            LeagueGameSetup::ConnectFour { .. } => "four in a row; a full board is a draw",
            LeagueGameSetup::Hex { .. } => "a chain joining the player's two edges; Hex has no draws",
        }
    }

    /// Where the openings come from, in words (kept in `league.json`: a resume must agree).
    pub fn describe(&self) -> String {
        match self {
            LeagueGameSetup::Chess { book } => book.display().to_string(),
            LeagueGameSetup::ConnectFour { plies } => {
                format!("connect_four: every position after {}", plies_text(*plies))
            }
            LeagueGameSetup::Hex { size, plies } => {
                format!("hex {size}x{size}: every position after {}", plies_text(*plies))
            }
        }
    }
}

fn plies_text(plies: u32) -> String {
    if plies == 1 { "1 ply".to_owned() } else { format!("{plies} plies") }
}

/// Everything a league needs.
#[derive(Debug, Clone)]
pub struct LeagueConfig {
    /// The agents.
    pub agents: Vec<AgentSpec>,
    /// The model package of model agents without their own.
    pub model: PathBuf,
    /// The game and its openings.
    pub game: LeagueGameSetup,
    /// How many openings to draw from the book or the enumeration (`None`: all).
    pub openings: Option<usize>,
    /// The seed of that draw.
    pub seed: u64,
    /// The adjudication rules.
    pub rules: Rules,
    /// Stockfish's binary (needed by Stockfish agents and evaluation adjudication).
    pub stockfish: Option<PathBuf>,
    /// Stockfish agents' per-move limits.
    pub stockfish_limits: StockfishLimits,
    /// MCTS batch size b.
    pub batch: usize,
    /// ONNX Runtime settings.
    pub session: SessionOptions,
    /// The output folder.
    pub out: PathBuf,
    /// The PGN `Event`.
    pub event: String,
    /// The agent rated 0 (a label; the first agent when `None`).
    pub anchor: Option<String>,
    /// Virtual draws per pair in the rating fit.
    pub prior_draws: f64,
    /// Games played at once, each by its own agents on its own thread (1: one after the other).
    pub concurrency: usize,
}
