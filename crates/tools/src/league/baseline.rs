//! The reference players of the Connect Four and Hex leagues (the paper's baselines): the Connect Four
//! solver, exact or at a depth limit, and MCTS with random playouts for Hex.

use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::LeagueError;
use super::agent::{Agent, Choice, GameView};
use crate::game::GameState;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::solve::connect_four::Solver;
use crate::solve::depth_limited::best_moves;
use crate::solve::hex::mcts::{Config, search};
use crate::solve::stop::StopFlag;

/// The Connect Four solver: exact (`depth: None`, the solver's best move: the soonest win, else a draw,
/// else the longest loss; centre first among equals) or searching `depth` plies and choosing at random,
/// seeded, among the moves that are best that far (it sees wins and losses within the depth only).
pub struct SolverAgent {
    label: String,
    depth: Option<u32>,
    seed: u64,
    rng: ChaCha8Rng,
    solver: Option<Solver>,
    stop: Option<StopFlag>,
}

impl SolverAgent {
    /// An agent named `label`; `seed` makes its tie-breaks repeatable (each game starts from it again).
    pub fn new(label: String, depth: Option<u32>, seed: u64) -> SolverAgent {
        SolverAgent { label, depth, seed, rng: ChaCha8Rng::seed_from_u64(seed), solver: None, stop: None }
    }
}

impl Agent<ConnectFourState> for SolverAgent {
    fn label(&self) -> &str {
        &self.label
    }

    /// The exact solver stops within a few thousand positions of the flag being set (its move is then
    /// meaningless, and the game is dropped).
    fn watch(&mut self, stop: &StopFlag) {
        self.stop = Some(stop.clone());
        if let Some(solver) = self.solver.as_mut() {
            solver.set_stop(stop.clone());
        }
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        self.rng = ChaCha8Rng::seed_from_u64(self.seed);
        Ok(())
    }

    fn choose(
        &mut self,
        game: &GameView<'_, ConnectFourState>,
    ) -> Result<Choice<ConnectFourState>, LeagueError> {
        let none = || LeagueError::Agent {
            agent: self.label.clone(),
            why: format!("no legal move in {}", game.state.to_text()),
        };
        match self.depth {
            None => {
                let stop = self.stop.clone();
                let solver = self.solver.get_or_insert_with(|| {
                    let mut solver = Solver::new();
                    if let Some(flag) = stop {
                        solver.set_stop(flag);
                    }
                    solver
                });
                let analysis = solver.analyse(game.state);
                let action = analysis.best.ok_or_else(none)?;
                Ok(Choice { action, note: Some(format!("solver: {}", analysis.value.describe())) })
            }
            Some(depth) => {
                let mut nodes = 0;
                let (best, score) = best_moves(game.state, depth, &mut nodes);
                let action = *best.choose(&mut self.rng).ok_or_else(none)?;
                let seen = match score {
                    0 => "nothing decided".to_owned(),
                    s if s > 0 => "a win".to_owned(),
                    _ => "a loss".to_owned(),
                };
                Ok(Choice {
                    action,
                    note: Some(format!(
                        "depth {depth}: {seen}, {} best of {}, {nodes} nodes",
                        best.len(),
                        game.state.legal_actions().len()
                    )),
                })
            }
        }
    }
}

/// Hex MCTS with random playouts (UCT, [`crate::solve::hex::mcts`]): `playouts` per move, the most visited
/// move. The seed changes with the ply, so each move's search is repeatable.
pub struct PlayoutAgent {
    label: String,
    playouts: u32,
    seed: u64,
}

impl PlayoutAgent {
    /// An agent named `label`.
    pub fn new(label: String, playouts: u32, seed: u64) -> PlayoutAgent {
        PlayoutAgent { label, playouts: playouts.max(1), seed }
    }
}

impl Agent<HexState> for PlayoutAgent {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        Ok(())
    }

    fn choose(&mut self, game: &GameView<'_, HexState>) -> Result<Choice<HexState>, LeagueError> {
        let config =
            Config { playouts: self.playouts, seed: self.seed ^ u64::from(game.ply), ..Config::default() };
        let result = search(game.state, config);
        let action = result.best.ok_or_else(|| LeagueError::Agent {
            agent: self.label.clone(),
            why: format!("no legal move in {}", game.state.to_text()),
        })?;
        Ok(Choice {
            action,
            note: Some(format!("{} playouts, win {:.1}%", result.playouts, 100.0 * result.win_prob)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::connect_four::record::read_moves;

    #[test]
    fn a_depth_two_solver_blocks_a_threat() {
        // The second player to move; the first has three stones in column 1.
        let s = read_moves("12121").expect("record").end();
        let mut agent = SolverAgent::new("s".into(), Some(2), 3);
        agent.new_game().expect("new game");
        let view = GameView { start: &s, moves: &[], state: &s, ply: 5 };
        let c = agent.choose(&view).expect("a move");
        assert_eq!(s.action_to_text(c.action), "1");
    }

    #[test]
    fn the_exact_solver_plays_a_move_of_the_best_value() {
        // Late in a random game (28 plies), where solving is quick.
        use rand::Rng;
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let s = loop {
            let mut s = ConnectFourState::new();
            for _ in 0..28 {
                let moves = s.legal_actions();
                if let Some(&m) = moves.get(rng.random_range(0..moves.len().max(1))) {
                    s = s.play(m).expect("legal");
                }
            }
            if s.outcome().is_none() {
                break s;
            }
        };
        let mut agent = SolverAgent::new("s".into(), None, 3);
        let view = GameView { start: &s, moves: &[], state: &s, ply: 28 };
        let c = agent.choose(&view).expect("a move");
        let analysis = Solver::new().analyse(&s);
        let top = analysis.moves.iter().map(|m| m.value.rank()).max().expect("moves");
        let chosen = analysis.moves.iter().find(|m| m.column == c.action).expect("a legal move");
        assert_eq!(chosen.value.rank(), top);
        assert!(c.note.expect("note").starts_with("solver: "));
    }

    #[test]
    fn a_raised_stop_flag_cuts_the_exact_solver_short() {
        // Three plies in, the exact solver searches about 190 M positions for a move; stopped, a few thousand.
        let s = read_moves("445").expect("record").end();
        let mut agent = SolverAgent::new("s".into(), None, 3);
        let stop = StopFlag::new();
        agent.watch(&stop);
        stop.set();
        let view = GameView { start: &s, moves: &[], state: &s, ply: 3 };
        let c = agent.choose(&view).expect("a move, meaningless");
        assert!(s.play(c.action).is_ok());
        let nodes = agent.solver.as_ref().expect("made").nodes();
        assert!(nodes < 1_000_000, "{nodes} positions searched after the stop");
    }

    #[test]
    fn a_depth_limited_solver_repeats_its_game_after_new_game() {
        let s = ConnectFourState::new();
        let mut agent = SolverAgent::new("s".into(), Some(1), 5);
        let view = GameView { start: &s, moves: &[], state: &s, ply: 0 };
        agent.new_game().expect("new game");
        let first: Vec<_> = (0..6).map(|_| agent.choose(&view).expect("move").action).collect();
        agent.new_game().expect("new game");
        let again: Vec<_> = (0..6).map(|_| agent.choose(&view).expect("move").action).collect();
        assert_eq!(first, again);
        assert!(first.iter().any(|&a| a != first[0]), "ties are broken at random: {first:?}");
    }

    #[test]
    fn playouts_find_the_winning_cell() {
        use crate::game::Player;
        use crate::game::hex::Cell;
        // 3×3: the first player, with a3 and b2, wins with b1 or c1.
        let cell = |t: &str| Cell::parse(t).expect("cell");
        let s = HexState::from_cells(
            3,
            false,
            &[cell("a3"), cell("b2")],
            &[cell("a1"), cell("c3")],
            Player::First,
        )
        .expect("reachable");
        let mut agent = PlayoutAgent::new("p".into(), 2000, 1);
        let view = GameView { start: &s, moves: &[], state: &s, ply: 4 };
        let c = agent.choose(&view).expect("a move");
        assert!(s.play(c.action).expect("legal").outcome().is_some(), "{}", s.action_to_text(c.action));
    }
}
