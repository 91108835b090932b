//! Playing one game between two agents from an opening, under the league's [`Rules`].

use std::collections::HashMap;

use super::LeagueError;
use super::agent::{Agent, GameView};
use super::record::{GameResult, PlayedMove};
use super::rules::{EvalRules, ResignCounter, Rules};
use crate::game::{GameState, OutcomeReason, Player};
use crate::solve::stop::StopFlag;

/// Whoever evaluates positions for the adjudication rules (full-strength Stockfish for chess, see
/// [`super::stockfish::Adjudicator`]).
pub trait Adjudicate<G: GameState> {
    /// A new game starts.
    fn new_game(&mut self) -> Result<(), LeagueError>;

    /// The evaluation of `state` (reached by `moves` from `start`, not over) in centipawns from the first
    /// player's side; `None` when there is none.
    fn eval_white(&mut self, start: &G, moves: &[G::Action], state: &G) -> Result<Option<i32>, LeagueError>;
}

/// A game played to its end.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayedGame<A = shakmaty::Move> {
    /// The moves with their notes.
    pub moves: Vec<PlayedMove<A>>,
    /// The result.
    pub result: GameResult,
    /// Why it ended, in words.
    pub termination: String,
    /// Whether an adjudication rule decided it.
    pub adjudicated: bool,
}

fn reason_text(reason: OutcomeReason) -> &'static str {
    match reason {
        OutcomeReason::Checkmate => "checkmate",
        OutcomeReason::Stalemate => "stalemate",
        OutcomeReason::InsufficientMaterial => "insufficient material",
        OutcomeReason::FiftyMoves => "fifty-move rule",
        OutcomeReason::Repetition => "threefold repetition",
        OutcomeReason::FourInARow => "four in a row",
        OutcomeReason::BoardFull => "board full",
        OutcomeReason::Connection => "connection",
    }
}

/// Plays `white` (the first player) against `black` from `start`. The adjudicator must be given when
/// `rules.eval` is set. Returns `None` when `stop` was raised before the game ended (the game is then
/// thrown away).
pub fn play_game<G: GameState>(
    white: &mut dyn Agent<G>,
    black: &mut dyn Agent<G>,
    start: &G,
    rules: &Rules,
    mut adjudicator: Option<&mut dyn Adjudicate<G>>,
    stop: &StopFlag,
) -> Result<Option<PlayedGame<G::Action>>, LeagueError> {
    new_game(white, black, adjudicator.as_deref_mut())?;
    let eval_rules = rules.eval.filter(|_| adjudicator.is_some());
    let mut state = start.clone();
    let mut actions = Vec::new();
    let mut moves: Vec<PlayedMove<G::Action>> = Vec::new();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    seen.insert(state.hash64(), 1);
    let mut resign = ResignCounter::default();
    let start_ply = start.ply();
    let end = |moves, result, termination: String, adjudicated| {
        Ok(Some(PlayedGame { moves, result, termination, adjudicated }))
    };
    loop {
        if let Some((result, termination)) = natural_end(&state, &seen) {
            return end(moves, result, termination, false);
        }
        if moves.len() >= rules.max_plies as usize {
            let (result, termination) = max_plies_end(rules, eval_rules, &moves);
            return end(moves, result, termination, true);
        }
        if stop.is_set() {
            return Ok(None);
        }
        let view = GameView { start, moves: &actions, state: &state, ply: start_ply + moves.len() as u32 };
        let agent: &mut dyn Agent<G> =
            if state.to_move() == Player::First { &mut *white } else { &mut *black };
        let choice = agent.choose(&view);
        // A stop raised during the move may have cut the agent's search short: the game is dropped.
        if stop.is_set() {
            return Ok(None);
        }
        let choice = choice?;
        let next = state.play(choice.action).map_err(|e| LeagueError::Agent {
            agent: agent.label().to_owned(),
            why: format!("played an illegal move in {}: {e}", state.to_text()),
        })?;
        actions.push(choice.action);
        state = next;
        *seen.entry(state.hash64()).or_insert(0) += 1;
        let eval_white = match (adjudicator.as_deref_mut(), eval_rules) {
            (Some(a), Some(_)) if state.outcome().is_none() => a.eval_white(start, &actions, &state)?,
            _ => None,
        };
        moves.push(PlayedMove { action: choice.action, eval_white, note: choice.note });
        if let Some(e) = eval_rules
            && state.outcome().is_none()
            && let Some(white_wins) = resign.push(&e, eval_white)
        {
            return end(moves, GameResult::win(white_wins), resign_text(&e, white_wins), true);
        }
    }
}

/// Tells both agents and the adjudicator that a new game starts.
fn new_game<G: GameState>(
    white: &mut dyn Agent<G>,
    black: &mut dyn Agent<G>,
    adjudicator: Option<&mut (dyn Adjudicate<G> + '_)>,
) -> Result<(), LeagueError> {
    white.new_game()?;
    black.new_game()?;
    if let Some(a) = adjudicator {
        a.new_game()?;
    }
    Ok(())
}

/// The result and termination when `state` is over or has been seen three times (per `seen`).
fn natural_end<G: GameState>(state: &G, seen: &HashMap<u64, u32>) -> Option<(GameResult, String)> {
    if let Some(outcome) = state.outcome() {
        let result = match outcome.winner() {
            Some(Player::First) => GameResult::WhiteWins,
            Some(Player::Second) => GameResult::BlackWins,
            None => GameResult::Draw,
        };
        return Some((result, reason_text(outcome.reason()).to_owned()));
    }
    if seen.get(&state.hash64()).copied().unwrap_or(0) >= 3 {
        return Some((GameResult::Draw, reason_text(OutcomeReason::Repetition).to_owned()));
    }
    None
}

/// The result and termination of a game stopped at the ply limit, judged on the last move's evaluation.
fn max_plies_end<A>(
    rules: &Rules,
    eval_rules: Option<EvalRules>,
    moves: &[PlayedMove<A>],
) -> (GameResult, String) {
    let last = moves.last().and_then(|m| m.eval_white);
    match (eval_rules, last) {
        (Some(e), Some(cp)) if cp.abs() >= e.max_plies_win_cp => (
            GameResult::win(cp > 0),
            format!(
                "{} plies reached; {} wins on Stockfish's evaluation {}",
                rules.max_plies,
                if cp > 0 { "White" } else { "Black" },
                super::record::eval_text(cp)
            ),
        ),
        (Some(_), Some(cp)) => (
            GameResult::Draw,
            format!(
                "{} plies reached; drawn on Stockfish's evaluation {}",
                rules.max_plies,
                super::record::eval_text(cp)
            ),
        ),
        _ => (GameResult::Draw, format!("{} plies reached; drawn", rules.max_plies)),
    }
}

/// The termination of a game the side losing by `e`'s resignation rule gives up.
fn resign_text(e: &EvalRules, white_wins: bool) -> String {
    let loser = if white_wins { "Black" } else { "White" };
    format!(
        "{loser} resigns: Stockfish's evaluation beyond {:.2} pawns for {} plies",
        f64::from(e.resign_cp) / 100.0,
        e.resign_plies
    )
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::evaluator::Scoring;
    use crate::inference::material::MaterialEvaluator;
    use crate::league::agent::Choice;
    use crate::league::model_agent::MavAgent;

    /// Plays a fixed list of moves, then the first legal move.
    struct Scripted {
        moves: Vec<&'static str>,
        at: usize,
    }

    impl Agent for Scripted {
        fn label(&self) -> &str {
            "scripted"
        }
        fn new_game(&mut self) -> Result<(), LeagueError> {
            self.at = 0;
            Ok(())
        }
        fn choose(&mut self, game: &GameView<'_>) -> Result<Choice, LeagueError> {
            let action = match self.moves.get(self.at) {
                Some(t) => game
                    .state
                    .parse_action(t)
                    .map_err(|e| LeagueError::Agent { agent: "s".into(), why: e.to_string() })?,
                None => game.state.legal_actions()[0],
            };
            self.at += 1;
            Ok(Choice { action, note: None })
        }
    }

    fn stopped() -> StopFlag {
        let s = StopFlag::new();
        s.set();
        s
    }

    fn no_eval(max_plies: u32) -> Rules {
        Rules { max_plies, eval: None }
    }

    #[test]
    fn knights_dancing_is_a_threefold_repetition() {
        let mut w = Scripted { moves: vec!["g1f3", "f3g1", "g1f3", "f3g1"], at: 0 };
        let mut b = Scripted { moves: vec!["g8f6", "f6g8", "g8f6", "f6g8"], at: 0 };
        let g = play_game(&mut w, &mut b, &ChessState::startpos(), &no_eval(100), None, &StopFlag::new())
            .expect("plays")
            .expect("finished");
        assert_eq!(g.result, GameResult::Draw);
        assert_eq!(g.termination, "threefold repetition");
        assert_eq!(g.moves.len(), 8);
        assert!(!g.adjudicated);
    }

    #[test]
    fn fools_mate_and_max_plies() {
        let mut w = Scripted { moves: vec!["f2f3", "g2g4"], at: 0 };
        let mut b = Scripted { moves: vec!["e7e5", "d8h4"], at: 0 };
        let g = play_game(&mut w, &mut b, &ChessState::startpos(), &no_eval(100), None, &StopFlag::new())
            .expect("plays")
            .expect("finished");
        assert_eq!((g.result, g.termination.as_str()), (GameResult::BlackWins, "checkmate"));
        let g = play_game(&mut w, &mut b, &ChessState::startpos(), &no_eval(3), None, &StopFlag::new())
            .expect("plays")
            .expect("finished");
        assert_eq!(g.moves.len(), 3);
        assert_eq!(g.result, GameResult::Draw);
        assert!(g.adjudicated && g.termination.contains("3 plies"), "{}", g.termination);
    }

    #[test]
    fn a_raised_stop_flag_abandons_the_game() {
        let model: crate::league::model_agent::SharedEvaluator =
            Rc::new(RefCell::new(Box::new(MaterialEvaluator::new(0))));
        let mut a = MavAgent::new("a".into(), Scoring::Max, model.clone());
        let mut b = MavAgent::new("b".into(), Scoring::Mean, model);
        let g = play_game(&mut a, &mut b, &ChessState::startpos(), &no_eval(10), None, &stopped())
            .expect("plays");
        assert!(g.is_none());
    }

    #[test]
    fn ply_counts_from_the_fen() {
        assert_eq!(ChessState::startpos().ply(), 0);
        let s = ChessState::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
            .expect("fen");
        assert_eq!(s.ply(), 2);
    }
}
