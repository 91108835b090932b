//! Stockfish as a league agent (weakened by `Skill Level` or `UCI_Elo`) and as the adjudicator (full
//! strength, fixed depth), both through [`crate::uci::client`].

use std::path::Path;

use shakmaty::Move;

use super::LeagueError;
use super::agent::{Agent, Choice, GameView};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::uci::{ScoreValue, SearchLimits, UciEngine, UciError};

/// How strong a Stockfish agent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// `Skill Level` 0..=20.
    Skill(u32),
    /// `UCI_LimitStrength` with `UCI_Elo`.
    Elo(u32),
    /// Unrestricted (the adjudicator).
    Full,
}

pub use super::record::MATE_CP;

/// The score in centipawns from the side to move (mates as ±([`MATE_CP`] − moves)).
pub fn score_cp(value: ScoreValue) -> i32 {
    match value {
        ScoreValue::Cp(cp) => cp,
        ScoreValue::Mate(m) if m > 0 => MATE_CP - m,
        ScoreValue::Mate(m) => -MATE_CP - m,
    }
}

/// Starts Stockfish at `path` with one thread, a 16 MB hash and the given strength.
pub fn start_engine(path: &Path, strength: Strength, who: &str) -> Result<UciEngine, LeagueError> {
    let uci = |source: UciError| LeagueError::Uci { agent: who.to_owned(), source: Box::new(source) };
    let mut engine = UciEngine::start(path, &[]).map_err(uci)?;
    let has = |e: &UciEngine, name: &str| e.options().iter().any(|o| o.name.eq_ignore_ascii_case(name));
    if has(&engine, "Threads") {
        engine.set_option("Threads", "1").map_err(uci)?;
    }
    if has(&engine, "Hash") {
        engine.set_option("Hash", "16").map_err(uci)?;
    }
    let range = |e: &UciEngine, name: &str| {
        e.options().iter().find(|o| o.name.eq_ignore_ascii_case(name)).map(|o| (o.min, o.max))
    };
    let check =
        |name: &str, value: u32, range: Option<(Option<i64>, Option<i64>)>| -> Result<(), LeagueError> {
            let Some((min, max)) = range else {
                return Err(LeagueError::Agent {
                    agent: who.to_owned(),
                    why: format!("the engine at {} has no `{name}` option", path.display()),
                });
            };
            let v = i64::from(value);
            if min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m) {
                return Err(LeagueError::Agent {
                    agent: who.to_owned(),
                    why: format!(
                        "{name} {value} is outside the engine's range {}..{}",
                        min.map_or("?".into(), |m| m.to_string()),
                        max.map_or("?".into(), |m| m.to_string())
                    ),
                });
            }
            Ok(())
        };
    match strength {
        Strength::Skill(level) => {
            check("Skill Level", level, range(&engine, "Skill Level"))?;
            engine.set_option("Skill Level", &level.to_string()).map_err(uci)?;
        }
        Strength::Elo(elo) => {
            check("UCI_Elo", elo, range(&engine, "UCI_Elo"))?;
            engine.set_option("UCI_LimitStrength", "true").map_err(uci)?;
            engine.set_option("UCI_Elo", &elo.to_string()).map_err(uci)?;
        }
        Strength::Full => {}
    }
    engine.is_ready().map_err(uci)?;
    Ok(engine)
}

/// Sends the game's position (start FEN and the moves since) and `UCI_Chess960` when it changes.
fn set_position(
    engine: &mut UciEngine,
    chess960: &mut bool,
    start: &ChessState,
    moves: &[Move],
) -> Result<(), UciError> {
    let frc = start.castling_mode() == shakmaty::CastlingMode::Chess960;
    if frc != *chess960 && engine.options().iter().any(|o| o.name.eq_ignore_ascii_case("UCI_Chess960")) {
        engine.set_option("UCI_Chess960", if frc { "true" } else { "false" })?;
        *chess960 = frc;
    }
    let texts: Vec<String> = moves.iter().map(|m| m.to_uci(start.castling_mode()).to_string()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    engine.position(&start.fen(), &refs)
}

/// Stockfish playing at a limited strength with fixed per-move limits.
pub struct StockfishAgent {
    label: String,
    engine: UciEngine,
    limits: SearchLimits,
    chess960: bool,
}

impl StockfishAgent {
    /// Starts the engine at `path`.
    pub fn start(
        label: String,
        path: &Path,
        strength: Strength,
        limits: SearchLimits,
    ) -> Result<StockfishAgent, LeagueError> {
        let engine = start_engine(path, strength, &label)?;
        Ok(StockfishAgent { label, engine, limits, chess960: false })
    }

    fn uci(&self, source: UciError) -> LeagueError {
        LeagueError::Uci { agent: self.label.clone(), source: Box::new(source) }
    }
}

impl Agent for StockfishAgent {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        self.engine.new_game().map_err(|e| self.uci(e))
    }

    fn choose(&mut self, game: &GameView<'_>) -> Result<Choice, LeagueError> {
        set_position(&mut self.engine, &mut self.chess960, game.start, game.moves)
            .map_err(|e| self.uci(e))?;
        let result = self.engine.go(&self.limits).map_err(|e| self.uci(e))?;
        let text = result.bestmove.ok_or_else(|| LeagueError::Agent {
            agent: self.label.clone(),
            why: format!("Stockfish found no move in {}", game.state.to_text()),
        })?;
        let action = game.state.parse_action(&text).map_err(|e| LeagueError::Agent {
            agent: self.label.clone(),
            why: format!("Stockfish played {text}, which is not legal in {}: {e}", game.state.to_text()),
        })?;
        let line = result.lines.first();
        let note = line.map(|l| {
            let score = l.score.map_or("-".into(), |s| match s.value {
                ScoreValue::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
                ScoreValue::Mate(m) => format!("#{m}"),
            });
            format!("sf depth {} score {score}", l.depth.unwrap_or(0))
        });
        Ok(Choice { action, note })
    }
}

/// Full-strength Stockfish at a fixed depth, giving the evaluation the adjudication rules read.
pub struct Adjudicator {
    engine: UciEngine,
    depth: u32,
    chess960: bool,
}

impl Adjudicator {
    /// Starts the engine at `path`.
    pub fn start(path: &Path, depth: u32) -> Result<Adjudicator, LeagueError> {
        let engine = start_engine(path, Strength::Full, "adjudicator")?;
        Ok(Adjudicator { engine, depth: depth.max(1), chess960: false })
    }

    /// The search depth.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// A new game starts.
    pub fn new_game(&mut self) -> Result<(), LeagueError> {
        self.engine
            .new_game()
            .map_err(|source| LeagueError::Uci { agent: "adjudicator".into(), source: Box::new(source) })
    }

    /// The evaluation of the position after `moves` from `start` (not over), in centipawns from White's
    /// side (mates as ±[`MATE_CP`] less the distance); `None` if the engine gave no score.
    pub fn eval_white(
        &mut self,
        start: &ChessState,
        moves: &[Move],
        state: &ChessState,
    ) -> Result<Option<i32>, LeagueError> {
        let uci =
            |source: UciError| LeagueError::Uci { agent: "adjudicator".into(), source: Box::new(source) };
        set_position(&mut self.engine, &mut self.chess960, start, moves).map_err(uci)?;
        let result = self.engine.go(&SearchLimits::depth(self.depth)).map_err(uci)?;
        let cp = result.lines.first().and_then(|l| l.score).map(|s| score_cp(s.value));
        let white_to_move = state.to_move() == crate::game::Player::First;
        Ok(cp.map(|c| if white_to_move { c } else { -c }))
    }
}

impl super::play::Adjudicate<ChessState> for Adjudicator {
    fn new_game(&mut self) -> Result<(), LeagueError> {
        Adjudicator::new_game(self)
    }

    fn eval_white(
        &mut self,
        start: &ChessState,
        moves: &[Move],
        state: &ChessState,
    ) -> Result<Option<i32>, LeagueError> {
        Adjudicator::eval_white(self, start, moves, state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_rank_beyond_centipawns() {
        assert_eq!(score_cp(ScoreValue::Cp(-35)), -35);
        assert!(score_cp(ScoreValue::Mate(1)) > score_cp(ScoreValue::Mate(5)));
        assert!(score_cp(ScoreValue::Mate(5)) > 10_000);
        assert!(score_cp(ScoreValue::Mate(-1)) < score_cp(ScoreValue::Mate(-5)));
        assert!(score_cp(ScoreValue::Mate(-5)) < -10_000);
    }
}
