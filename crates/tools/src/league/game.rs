//! What a game needs to be played in a league ([`LeagueGame`]): how its model is opened, which reference
//! players it has, who adjudicates, and how its games are written down. Chess (and Chess960) use an opening
//! book, Stockfish and PGN; Connect Four the solver and move strings; Hex playout MCTS and SGF. The game loop,
//! the model agents, the schedule, the results file and the ratings are the same for all.

use std::path::Path;

use super::LeagueError;
use super::agent::Agent;
use super::baseline::{PlayoutAgent, SolverAgent};
use super::config::LeagueConfig;
use super::openings::Opening;
use super::play::{Adjudicate, PlayedGame};
use super::record::{GameRecord, GameResult, PgnHeaders, pgn_text};
use super::results::all_pgn;
use super::spec::{AgentKind, AgentSpec};
use super::stockfish::{Adjudicator, StockfishAgent, Strength};
use crate::game::chess::ChessState;
use crate::game::connect_four::ConnectFourState;
use crate::game::connect_four::record::write_moves;
use crate::game::hex::HexState;
use crate::game::hex::record::HexRecord;
use crate::game::{GameKind, GameState};
use crate::inference::evaluator::Evaluator;
use crate::inference::load::load_evaluator_for;
use crate::inference::onnx::SessionOptions;
use crate::mav::state::MavState;

/// A game a league can be played in.
pub trait LeagueGame: MavState {
    /// The game's name in messages.
    const NAME: &'static str;

    /// The name of the file in the output folder that holds every game's record.
    const RECORDS_FILE: &'static str;

    /// Opens the model package in `dir` for this game (refused, naming the package's games, when the
    /// package was not trained on it).
    fn open_model(dir: &Path, session: &SessionOptions) -> Result<Box<dyn Evaluator<Self>>, LeagueError>;

    /// The reference players of this game, in words (for errors).
    const REFERENCE_PLAYERS: &'static str;

    /// Whether `kind` is one of this game's reference players.
    fn is_reference_player(kind: &AgentKind) -> bool;

    /// Builds an agent that is not a model agent, or says why this game has no such player.
    fn reference_agent(
        spec: &AgentSpec,
        label: String,
        config: &LeagueConfig,
        stockfish: Option<&Path>,
    ) -> Result<Box<dyn Agent<Self>>, LeagueError>;

    /// The adjudicator the rules ask for (`None` when they ask for none). Only chess has one: other games
    /// end on the board, and evaluation adjudication is refused for them.
    fn adjudicator(
        config: &LeagueConfig,
        _stockfish: Option<&Path>,
    ) -> Result<Option<Box<dyn Adjudicate<Self>>>, LeagueError> {
        match config.rules.eval {
            Some(_) => Err(LeagueError::Settings(format!(
                "evaluation adjudication uses Stockfish and is for chess; {} games end on the board (use \
                 --adjudicate none)",
                Self::NAME
            ))),
            None => Ok(None),
        }
    }

    /// One game's record: `opening` is where it started, `game` what was played from it.
    fn record_text(
        headers: &PgnHeaders,
        opening: &Opening<Self>,
        game: &PlayedGame<Self::Action>,
    ) -> Result<String, LeagueError>;

    /// The records file's whole text from the games' records.
    fn all_records(records: &[GameRecord]) -> String;
}

fn model<S: MavState>(
    dir: &Path,
    session: &SessionOptions,
    game: GameKind,
) -> Result<Box<dyn Evaluator<S>>, LeagueError> {
    let crate::inference::LoadedModel { evaluator: e, .. } = load_evaluator_for::<S>(dir, session, game)
        .map_err(|source| LeagueError::Model { dir: dir.to_path_buf(), source: Box::new(source) })?;
    Ok(e)
}

/// The error for an agent that `G` has no place for.
pub fn not_for<G: LeagueGame>(label: &str) -> LeagueError {
    LeagueError::Settings(format!(
        "{label} does not play {}; its reference players are {}",
        G::NAME,
        G::REFERENCE_PLAYERS
    ))
}

/// Every move of a game from the game's initial position: the opening's line, then what was played.
fn whole_game<G: GameState>(opening: &Opening<G>, game: &PlayedGame<G::Action>) -> Vec<G::Action> {
    opening.moves.iter().copied().chain(game.moves.iter().map(|m| m.action)).collect()
}

impl LeagueGame for ChessState {
    const NAME: &'static str = "chess";
    const RECORDS_FILE: &'static str = "games.pgn";
    const REFERENCE_PLAYERS: &'static str = "stockfish:SKILL and stockfish-elo:ELO";

    fn is_reference_player(kind: &AgentKind) -> bool {
        kind.is_stockfish()
    }

    fn open_model(dir: &Path, session: &SessionOptions) -> Result<Box<dyn Evaluator<Self>>, LeagueError> {
        let crate::inference::LoadedModel { evaluator: e, .. } =
            crate::inference::load_evaluator(dir, session)
                .map_err(|source| LeagueError::Model { dir: dir.to_path_buf(), source: Box::new(source) })?;
        Ok(e)
    }

    fn reference_agent(
        spec: &AgentSpec,
        label: String,
        config: &LeagueConfig,
        stockfish: Option<&Path>,
    ) -> Result<Box<dyn Agent<Self>>, LeagueError> {
        let strength = match spec.kind {
            AgentKind::StockfishSkill { skill } => Strength::Skill(skill),
            AgentKind::StockfishElo { elo } => Strength::Elo(elo),
            _ => return Err(not_for::<Self>(&label)),
        };
        let path = stockfish
            .ok_or_else(|| LeagueError::Settings(format!("{label} needs Stockfish, which was not found")))?;
        Ok(Box::new(StockfishAgent::start(label, path, strength, config.stockfish_limits.search_limits())?))
    }

    fn adjudicator(
        config: &LeagueConfig,
        stockfish: Option<&Path>,
    ) -> Result<Option<Box<dyn Adjudicate<Self>>>, LeagueError> {
        Ok(match (config.rules.eval, stockfish) {
            (Some(e), Some(path)) => Some(Box::new(Adjudicator::start(path, e.depth)?)),
            _ => None,
        })
    }

    fn record_text(
        headers: &PgnHeaders,
        opening: &Opening<Self>,
        game: &PlayedGame<Self::Action>,
    ) -> Result<String, LeagueError> {
        pgn_text(headers, &opening.state, &game.moves, game.result, &game.termination, game.adjudicated)
    }

    fn all_records(records: &[GameRecord]) -> String {
        all_pgn(records)
    }
}

/// The first line of a Connect Four league's `games.tsv`.
pub const CONNECT_FOUR_HEADER: &str = "moves\tresult\tfirst\tsecond\tround\ttermination";

impl LeagueGame for ConnectFourState {
    const NAME: &'static str = "Connect Four";
    const RECORDS_FILE: &'static str = "games.tsv";
    const REFERENCE_PLAYERS: &'static str = "solver and solver:DEPTH";

    fn is_reference_player(kind: &AgentKind) -> bool {
        matches!(kind, AgentKind::Solver { .. })
    }

    fn open_model(dir: &Path, session: &SessionOptions) -> Result<Box<dyn Evaluator<Self>>, LeagueError> {
        model(dir, session, GameKind::ConnectFour)
    }

    fn reference_agent(
        spec: &AgentSpec,
        label: String,
        _config: &LeagueConfig,
        _stockfish: Option<&Path>,
    ) -> Result<Box<dyn Agent<Self>>, LeagueError> {
        match spec.kind {
            AgentKind::Solver { depth } => Ok(Box::new(SolverAgent::new(label, depth, 1))),
            _ => Err(not_for::<Self>(&label)),
        }
    }

    /// One line: the move string from the empty board (opening included, as the app's *Copy record*
    /// writes it), the result, the players, the round and why the game ended, separated by tabs.
    fn record_text(
        headers: &PgnHeaders,
        opening: &Opening<Self>,
        game: &PlayedGame<Self::Action>,
    ) -> Result<String, LeagueError> {
        Ok(format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            write_moves(&whole_game(opening, game)),
            game.result.pgn(),
            headers.white,
            headers.black,
            headers.round,
            game.termination.replace(['\t', '\n'], " ")
        ))
    }

    fn all_records(records: &[GameRecord]) -> String {
        let mut out = format!("{CONNECT_FOUR_HEADER}\n");
        for r in records {
            out.push_str(r.pgn.trim_end());
            out.push('\n');
        }
        out
    }
}

impl LeagueGame for HexState {
    const NAME: &'static str = "Hex";
    const RECORDS_FILE: &'static str = "games.sgf";
    const REFERENCE_PLAYERS: &'static str = "playouts:N";

    fn is_reference_player(kind: &AgentKind) -> bool {
        matches!(kind, AgentKind::Playouts { .. })
    }

    fn open_model(dir: &Path, session: &SessionOptions) -> Result<Box<dyn Evaluator<Self>>, LeagueError> {
        model(dir, session, GameKind::Hex)
    }

    fn reference_agent(
        spec: &AgentSpec,
        label: String,
        _config: &LeagueConfig,
        _stockfish: Option<&Path>,
    ) -> Result<Box<dyn Agent<Self>>, LeagueError> {
        match spec.kind {
            AgentKind::Playouts { playouts } => Ok(Box::new(PlayoutAgent::new(label, playouts, 1))),
            _ => Err(not_for::<Self>(&label)),
        }
    }

    /// SGF in the HexGui dialect (`GM[11]`), from the empty board with the opening's stones as the first
    /// moves, the players in `PB`/`PW` (the first player is Black there), the result in `RE`.
    fn record_text(
        headers: &PgnHeaders,
        opening: &Opening<Self>,
        game: &PlayedGame<Self::Action>,
    ) -> Result<String, LeagueError> {
        let all = whole_game(opening, game);
        let mut record = HexRecord::new(opening.state.size(), opening.state.swap_rule(), &all)
            .map_err(|e| LeagueError::Agent { agent: "sgf".into(), why: e.to_string() })?;
        let result = match game.result {
            GameResult::WhiteWins => "B+",
            GameResult::BlackWins => "W+",
            GameResult::Draw => "0",
        };
        record.properties = vec![
            ("EV".into(), headers.event.clone()),
            ("DT".into(), headers.date.replace('.', "-")),
            ("RO".into(), headers.round.to_string()),
            ("PB".into(), headers.white.clone()),
            ("PW".into(), headers.black.clone()),
            ("RE".into(), result.into()),
            ("GC".into(), format!("opening {}; {}", headers.book_index + 1, game.termination)),
        ];
        Ok(record.to_sgf())
    }

    fn all_records(records: &[GameRecord]) -> String {
        all_pgn(records)
    }
}
