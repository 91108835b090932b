//! Agents that play with a MAV model: the searchless ones (one model call, the best move by max or mean
//! scoring) and MAV-MCTS with a simulation budget per move and tree reuse between moves.

use std::cell::RefCell;
use std::rc::Rc;

use super::LeagueError;
use super::agent::{Agent, Choice, GameView};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalRequest, Evaluator, Scoring};
use crate::search::mcts::{HISTORY_KEPT, Mcts, MctsParams, RunLimits, VirtualCounts};

/// A model shared by every agent that uses it (the league plays one game at a time).
pub type SharedEvaluator<G = ChessState> = Rc<RefCell<Box<dyn Evaluator<G>>>>;

/// One model call per move: the move whose value distribution scores best under `scoring` (ties: its
/// tie-breaking rule, then the model's order); from a model without values (behavioural cloning), the
/// policy's most likely move.
pub struct MavAgent<G: GameState = ChessState> {
    label: String,
    scoring: Scoring,
    model: SharedEvaluator<G>,
}

impl<G: GameState> MavAgent<G> {
    /// An agent named `label` playing the best move by `scoring`.
    pub fn new(label: String, scoring: Scoring, model: SharedEvaluator<G>) -> MavAgent<G> {
        MavAgent { label, scoring, model }
    }
}

impl<G: GameState> Agent<G> for MavAgent<G> {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        Ok(())
    }

    fn choose(&mut self, game: &GameView<'_, G>) -> Result<Choice<G>, LeagueError> {
        let request =
            EvalRequest { history: game.history(HISTORY_KEPT), ..EvalRequest::values(game.state.clone()) };
        let result = self
            .model
            .borrow_mut()
            .evaluate(std::slice::from_ref(&request))
            .pop()
            .ok_or_else(|| LeagueError::Agent {
                agent: self.label.clone(),
                why: "the model returned no result".into(),
            })?
            .map_err(|e| LeagueError::Agent {
                agent: self.label.clone(),
                why: format!("the model failed: {e}"),
            })?;
        let other = self.scoring.tie_breaker();
        if !result.has_values() {
            // A policy without values (behavioural cloning) plays its most likely move.
            let (action, p) = result.best_by(self.scoring).ok_or_else(|| LeagueError::Agent {
                agent: self.label.clone(),
                why: format!("the policy gave no legal move a probability in {}", game.state.to_text()),
            })?;
            return Ok(Choice { action, note: Some(format!("policy {:.1}%", 100.0 * p)) });
        }
        let best = result
            .moves
            .iter()
            .filter_map(|m| Some((m, m.value(self.scoring)?, m.value(other)?)))
            .reduce(|a, b| if (b.1, b.2) > (a.1, a.2) { b } else { a })
            .ok_or_else(|| LeagueError::Agent {
                agent: self.label.clone(),
                why: format!("the model valued no legal move in {}", game.state.to_text()),
            })?;
        let (m, value, tie) = best;
        let note = format!("{} {:.1}% {} {:.1}%", self.scoring, 100.0 * value, other, 100.0 * tie);
        Ok(Choice { action: m.action, note: Some(note) })
    }
}

/// MAV-MCTS with `simulations` per move, batch `b`, the paper's dynamic virtual counts for that budget, and
/// the subtree of the moves played kept between moves.
pub struct MctsAgent<G: GameState = ChessState> {
    label: String,
    simulations: u64,
    batch: usize,
    scoring: Scoring,
    seed: u64,
    model: SharedEvaluator<G>,
    /// The tree and how many game moves its root is after.
    tree: Option<(Mcts<G>, usize)>,
    /// Model calls saved by tree reuse (evaluated nodes kept), over the agent's life.
    pub reused_evaluations: u64,
}

impl<G: GameState> MctsAgent<G> {
    /// An agent named `label`.
    pub fn new(
        label: String,
        simulations: u64,
        scoring: Scoring,
        batch: usize,
        seed: u64,
        model: SharedEvaluator<G>,
    ) -> MctsAgent<G> {
        MctsAgent {
            label,
            simulations,
            batch: batch.max(1),
            scoring,
            seed,
            model,
            tree: None,
            reused_evaluations: 0,
        }
    }

    fn params(&self) -> MctsParams {
        MctsParams {
            scoring: self.scoring,
            virtual_counts: VirtualCounts::paper_dynamic(self.simulations),
            seed: self.seed,
            ..MctsParams::default()
        }
    }

    /// The tree for `game`: the previous one moved along the moves played since, or a new one.
    fn tree_for(&mut self, game: &GameView<'_, G>) -> Result<Mcts<G>, LeagueError> {
        if let Some((mut mcts, at)) = self.tree.take()
            && at <= game.moves.len()
        {
            let mut ok = true;
            for &m in &game.moves[at..] {
                match mcts.advance(m) {
                    Ok(kept) => self.reused_evaluations += kept,
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && mcts.root_state().hash64() == game.state.hash64() {
                return Ok(mcts);
            }
        }
        let mut mcts = Mcts::new(game.state.clone(), game.ply, self.params())
            .map_err(|source| LeagueError::Search { agent: self.label.clone(), source: Box::new(source) })?;
        mcts.set_root_history(game.history(HISTORY_KEPT));
        Ok(mcts)
    }
}

impl<G: GameState> Agent<G> for MctsAgent<G> {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        self.tree = None;
        Ok(())
    }

    fn choose(&mut self, game: &GameView<'_, G>) -> Result<Choice<G>, LeagueError> {
        let mut mcts = self.tree_for(game)?;
        let limits = RunLimits { simulations: self.simulations, batch_size: self.batch };
        {
            let mut model = self.model.borrow_mut();
            mcts.run(model.as_mut(), limits).map_err(|source| LeagueError::Search {
                agent: self.label.clone(),
                source: Box::new(source),
            })?;
        }
        let action = mcts.best_action().ok_or_else(|| LeagueError::Agent {
            agent: self.label.clone(),
            why: format!("the search found no playable move in {}", game.state.to_text()),
        })?;
        let snapshot = mcts.snapshot();
        let best = snapshot.moves.iter().find(|m| Some(&m.action) == snapshot.best.as_ref());
        let note = best.map(|m| {
            format!(
                "mcts N={} visits {:.0}% Q {}",
                snapshot.totals.root_visits,
                100.0 * m.visit_share,
                m.q.map_or("-".into(), |q| format!("{:.1}%", 100.0 * q))
            )
        });
        self.tree = Some((mcts, game.moves.len()));
        Ok(Choice { action, note })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::material::MaterialEvaluator;

    fn shared() -> SharedEvaluator {
        Rc::new(RefCell::new(Box::new(MaterialEvaluator::new(1))))
    }

    #[test]
    fn mav_agent_takes_a_free_queen() {
        // White's queen on d1 can take an undefended black queen on d7.
        let state = ChessState::from_fen("4k3/3q4/8/8/8/8/8/3QK3 w - - 0 1").expect("fen");
        for scoring in Scoring::ALL {
            let mut agent = MavAgent::new("m".into(), scoring, shared());
            let view = GameView { start: &state, moves: &[], state: &state, ply: 0 };
            let c = agent.choose(&view).expect("moves");
            assert_eq!(state.action_to_text(c.action), "d1d7", "{scoring}");
            let note = c.note.expect("note");
            assert!(note.starts_with(&format!("{scoring} ")) && note.contains("mean"), "{note}");
        }
    }

    #[test]
    fn both_agents_show_the_model_the_games_positions() {
        let start = ChessState::startpos();
        let mut state = start.clone();
        let mut moves = Vec::new();
        for t in ["e2e4", "e7e5", "g1f3", "b8c6"] {
            let m = state.parse_action(t).expect("legal");
            state = state.play(m).expect("plays");
            moves.push(m);
        }
        let view = GameView { start: &start, moves: &moves, state: &state, ply: 4 };
        let recording = crate::inference::mock::RecordingEvaluator::new(MaterialEvaluator::new(1));
        let asked = recording.asked();
        let longest = || asked.borrow().iter().map(|(_, h)| h.len()).max().unwrap_or(0);
        let model: SharedEvaluator = Rc::new(RefCell::new(Box::new(recording)));
        MavAgent::new("m".into(), Scoring::Mean, model.clone()).choose(&view).expect("a move");
        assert_eq!(longest(), 4);
        asked.borrow_mut().clear();
        let mut mcts = MctsAgent::new("t".into(), 16, Scoring::Mean, 4, 1, model);
        mcts.choose(&view).expect("a move");
        assert!(longest() >= 5, "a leaf below the root sees the game and the root: {}", longest());
    }

    /// The material evaluator's answers with the values taken away and a policy put in their place that
    /// likes the material evaluator's worst move best.
    struct Contrary(MaterialEvaluator);

    impl Evaluator<ChessState> for Contrary {
        fn evaluate(
            &mut self,
            requests: &[EvalRequest<ChessState>],
        ) -> Vec<
            Result<
                crate::inference::evaluator::EvalResult<ChessState>,
                crate::inference::evaluator::EvalError,
            >,
        > {
            let mut out = self.0.evaluate(requests);
            for r in out.iter_mut().flatten() {
                let w: Vec<f64> =
                    r.moves.iter().map(|m| 1.0 - m.value(Scoring::Mean).unwrap_or(0.5)).collect();
                let sum: f64 = w.iter().sum();
                r.best_action = Some(w.iter().map(|x| x / sum).collect());
                r.moves.iter_mut().for_each(|m| m.dist = None);
            }
            out
        }
    }

    #[test]
    fn a_policy_without_values_plays_its_most_likely_move() {
        let state = ChessState::from_fen("4k3/3q4/8/8/8/8/8/3QK3 w - - 0 1").expect("fen");
        let view = GameView { start: &state, moves: &[], state: &state, ply: 0 };
        let model: SharedEvaluator = Rc::new(RefCell::new(Box::new(Contrary(MaterialEvaluator::new(1)))));
        let want = {
            let r = model.borrow_mut().evaluate(&[EvalRequest::values(state.clone())]).remove(0).expect("ok");
            r.best_by(Scoring::Mean).expect("a move").0
        };
        let mut agent = MavAgent::new("bc".into(), Scoring::Max, model);
        let c = agent.choose(&view).expect("moves");
        assert_eq!(c.action, want);
        assert_ne!(state.action_to_text(c.action), "d1d7", "not the value model's choice");
        assert!(c.note.expect("note").starts_with("policy "));
    }

    #[test]
    fn mcts_agent_reuses_its_tree() {
        let start = ChessState::startpos();
        let mut agent = MctsAgent::new("t".into(), 32, Scoring::Mean, 8, 0, shared());
        let view = GameView { start: &start, moves: &[], state: &start, ply: 0 };
        let first = agent.choose(&view).expect("moves").action;
        let s1 = start.play(first).expect("legal");
        // The reply the search expects (its PV's second move), so its subtree has evaluated nodes.
        let pv = agent.tree.as_ref().expect("kept").0.snapshot().pv;
        assert!(pv.len() >= 2, "{pv:?}");
        let reply = s1.parse_action(&pv[1]).expect("legal");
        let s2 = s1.play(reply).expect("legal");
        let moves = [first, reply];
        let view = GameView { start: &start, moves: &moves, state: &s2, ply: 2 };
        let c = agent.choose(&view).expect("moves");
        assert!(s2.play(c.action).is_ok());
        assert!(agent.reused_evaluations > 0, "the subtree after the two moves was kept");
        agent.new_game().expect("resets");
        assert!(agent.tree.is_none());
    }
}
