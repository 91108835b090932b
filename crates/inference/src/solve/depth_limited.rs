//! Negamax with alpha-beta to a fixed depth over any [`GameState`]: it sees every win and loss within
//! `depth` plies and nothing beyond (a position at the horizon scores as a draw). The Connect Four league's
//! "solver at a depth limit" opponents; with a depth reaching the end of the game it is exact. Pure.

use crate::game::{GameState, Outcome};

/// The score of a win `plies` plies from the root: sooner wins score higher, later losses lose less.
const WIN: i32 = 10_000;

/// Every legal move of `state` that is best within `depth` plies (the move itself counted), and its score
/// for the player making it: `WIN − plies` for a win found `plies` plies ahead, its negation for a loss, 0
/// for a draw or nothing found. Moves keep the rules' order. `nodes` counts the positions visited.
pub fn best_moves<G: GameState>(state: &G, depth: u32, nodes: &mut u64) -> (Vec<G::Action>, i32) {
    let mut best = Vec::new();
    let mut best_score = i32::MIN;
    for action in state.legal_actions() {
        let Ok(child) = state.play(action) else { continue };
        // A full window for each root move, so that every move tied at the best is found.
        let score = -negamax(&child, depth.saturating_sub(1), 1, -WIN - 1, WIN + 1, nodes);
        if score > best_score {
            best_score = score;
            best.clear();
        }
        if score == best_score {
            best.push(action);
        }
    }
    let score = if best.is_empty() { 0 } else { best_score };
    (best, score)
}

/// The score of `state` for the player to move, searched `depth` more plies; `ply` is its distance from
/// the root.
fn negamax<G: GameState>(state: &G, depth: u32, ply: u32, mut alpha: i32, beta: i32, nodes: &mut u64) -> i32 {
    *nodes += 1;
    let horizon = i32::try_from(ply).unwrap_or(i32::MAX);
    match state.outcome() {
        // The player who just moved won: the player to move has lost.
        Some(Outcome::Win { .. }) => return -(WIN - horizon),
        Some(Outcome::Draw { .. }) => return 0,
        None => {}
    }
    if depth == 0 {
        return 0;
    }
    let mut best = i32::MIN + 1;
    for action in state.legal_actions() {
        let Ok(child) = state.play(action) else { continue };
        let score = -negamax(&child, depth - 1, ply + 1, -beta, -alpha, nodes);
        best = best.max(score);
        alpha = alpha.max(score);
        if alpha >= beta {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::connect_four::record::read_moves;

    fn c4(moves: &str) -> ConnectFourState {
        read_moves(moves).expect("a legal record").end()
    }

    fn texts(state: &ConnectFourState, moves: &[<ConnectFourState as GameState>::Action]) -> Vec<String> {
        moves.iter().map(|&m| state.action_to_text(m)).collect()
    }

    #[test]
    fn depth_one_takes_an_immediate_win() {
        // First player: three in column 1; second player: column 2. Column 1 wins at once.
        let s = c4("121212");
        let (best, score) = best_moves(&s, 1, &mut 0);
        assert_eq!(texts(&s, &best), ["1"]);
        assert_eq!(score, WIN - 1);
    }

    #[test]
    fn depth_two_blocks_a_threat_and_depth_one_does_not_see_it() {
        // The second player to move; the first threatens column 1 (three stones there).
        let s = c4("12121");
        let (shallow, score) = best_moves(&s, 1, &mut 0);
        assert_eq!(score, 0);
        assert_eq!(shallow.len(), 7, "at depth 1 every move looks the same");
        let (best, score) = best_moves(&s, 2, &mut 0);
        assert_eq!(texts(&s, &best), ["1"], "only blocking column 1 avoids the loss");
        assert_eq!(score, 0);
    }

    #[test]
    fn searched_to_the_end_it_agrees_with_the_exact_solver() {
        use rand::{Rng, SeedableRng};

        use crate::solve::connect_four::{GameValue, Solver};
        let mut solver = Solver::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut checked = 0;
        while checked < 12 {
            // A random game to 32 plies (10 empty cells), so that the depth reaches the end.
            let mut s = ConnectFourState::new();
            for _ in 0..32 {
                let moves = s.legal_actions();
                if moves.is_empty() {
                    break;
                }
                s = s.play(moves[rng.random_range(0..moves.len())]).expect("legal");
            }
            if s.outcome().is_some() {
                continue;
            }
            checked += 1;
            let (best, score) = best_moves(&s, 42, &mut 0);
            let analysis = solver.analyse(&s);
            let top = analysis.moves.iter().map(|m| m.value.rank()).max().expect("moves");
            let exact: Vec<String> = analysis
                .moves
                .iter()
                .filter(|m| m.value.rank() == top)
                .map(|m| s.action_to_text(m.column))
                .collect();
            assert_eq!(texts(&s, &best), exact, "{}", s.to_text());
            let sign = match analysis.value {
                GameValue::Win { .. } => 1,
                GameValue::Loss { .. } => -1,
                GameValue::Draw { .. } => 0,
            };
            assert_eq!(score.signum(), sign, "{}", s.to_text());
        }
    }
}
