//! Monte Carlo tree search with random playouts for Hex on any board size: the paper's plain "MCTS"
//! baseline, and our Hex label source on boards the exact solver cannot take.
//!
//! UCT (UCB1 with exploration constant [`Config::c`]) over the rules' [`HexState`]; each new node gets
//! one playout, which fills every empty cell at random (the players alternating) and asks who joined its
//! edges: a full Hex board has exactly one winner, and the winner of the filled board is the winner of
//! the game played out in that order, so one connection check per playout suffices. Deterministic for a
//! seed. Pure: no threads, no I/O.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::game::hex::cells::CellSet;
use crate::game::hex::{HexAction, HexState};
use crate::game::{GameState, Player};
use crate::mav::buckets::Buckets;

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Playouts (one per simulation).
    pub playouts: u32,
    /// The UCB1 exploration constant.
    pub c: f64,
    /// The random seed.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { playouts: 20_000, c: 0.7, seed: 1 }
    }
}

/// One root move's statistics.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MctsMove {
    /// The move.
    #[serde(serialize_with = "action_text")]
    pub action: HexAction,
    /// Simulations through it.
    pub visits: u32,
    /// Its estimated win probability for the player making it (a proven win or loss is 1 or 0).
    pub win_prob: f64,
    /// Its MAV value bucket (64 buckets).
    pub bucket: u32,
}

fn action_text<S: serde::Serializer>(a: &HexAction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&a.to_string())
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MctsResult {
    /// Every legal root move in the rules' order.
    pub moves: Vec<MctsMove>,
    /// The most visited move (`None` when the game is over).
    #[serde(serialize_with = "optional_action_text")]
    pub best: Option<HexAction>,
    /// The estimated win probability of the player to move (of the best move).
    pub win_prob: f64,
    /// Playouts run.
    pub playouts: u64,
}

fn optional_action_text<S: serde::Serializer>(a: &Option<HexAction>, s: S) -> Result<S::Ok, S::Error> {
    match a {
        Some(a) => s.serialize_some(&a.to_string()),
        None => s.serialize_none(),
    }
}

struct Node {
    state: HexState,
    untried: Vec<HexAction>,
    children: Vec<(HexAction, usize)>,
    visits: u32,
    /// Wins of the player who moved into this node.
    wins: f64,
}

/// Who wins when the empty cells of `state` are filled at random, the player to move first.
pub fn playout(state: &HexState, rng: &mut StdRng) -> Player {
    if let Some(o) = state.outcome() {
        return o.winner().unwrap_or(Player::First);
    }
    let n = state.size();
    let mut empty: Vec<u32> =
        state.cells().filter(|&c| state.owner(c).is_none()).map(|c| c.row() * (n + 1) + c.col()).collect();
    empty.shuffle(rng);
    // The mover gets the cells at even positions of the shuffled list, the other player the rest; only
    // the first player's stones decide the winner.
    let mover_first = state.to_move() == Player::First;
    let first = empty
        .iter()
        .enumerate()
        .filter(|(i, _)| (i % 2 == 0) == mover_first)
        .fold(state.stones(Player::First), |a, (_, &b)| a.or(CellSet::bit(b)));
    let m = crate::game::hex::cells::Masks::new(n);
    let joined = !m.top.flood(first, n).and(m.bottom).is_empty();
    if joined { Player::First } else { Player::Second }
}

/// Runs UCT from `state` and returns every root move's statistics.
pub fn search(state: &HexState, config: Config) -> MctsResult {
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut nodes = vec![Node {
        state: *state,
        untried: state.legal_actions(),
        children: Vec::new(),
        visits: 0,
        wins: 0.0,
    }];
    let mut played = 0u64;
    if !nodes[0].untried.is_empty() {
        for _ in 0..config.playouts {
            // Selection.
            let mut path = vec![0usize];
            let mut cur = 0usize;
            while nodes[cur].untried.is_empty() && !nodes[cur].children.is_empty() {
                let ln = f64::from(nodes[cur].visits.max(1)).ln();
                let mut best = (f64::NEG_INFINITY, 0usize);
                for &(_, child) in &nodes[cur].children {
                    let ch = &nodes[child];
                    let v = f64::from(ch.visits);
                    let u = ch.wins / v + config.c * (ln / v).sqrt();
                    if u > best.0 {
                        best = (u, child);
                    }
                }
                cur = best.1;
                path.push(cur);
            }
            // Expansion.
            if !nodes[cur].untried.is_empty() {
                let i = rng.random_range(0..nodes[cur].untried.len());
                let action = nodes[cur].untried.swap_remove(i);
                if let Ok(next) = nodes[cur].state.play(action) {
                    let id = nodes.len();
                    nodes.push(Node {
                        state: next,
                        untried: next.legal_actions(),
                        children: Vec::new(),
                        visits: 0,
                        wins: 0.0,
                    });
                    nodes[cur].children.push((action, id));
                    cur = id;
                    path.push(cur);
                }
            }
            // Playout and backup.
            let winner = playout(&nodes[cur].state, &mut rng);
            played += 1;
            for &id in &path {
                let n = &mut nodes[id];
                n.visits += 1;
                // The player who moved into this node is the other one than the one to move there.
                if n.state.to_move().other() == winner {
                    n.wins += 1.0;
                }
            }
        }
    }
    let buckets = Buckets::mav();
    let root = &nodes[0];
    let moves: Vec<MctsMove> = state
        .legal_actions()
        .into_iter()
        .map(|action| {
            let (visits, p) = match root.children.iter().find(|(a, _)| *a == action) {
                Some(&(_, id)) => {
                    let n = &nodes[id];
                    let p = match n.state.outcome() {
                        Some(_) => 1.0,
                        None => n.wins / f64::from(n.visits.max(1)),
                    };
                    (n.visits, p)
                }
                None => (0, 0.5),
            };
            MctsMove { action, visits, win_prob: p, bucket: buckets.bucket_of(p).unwrap_or(0) }
        })
        .collect();
    let best = moves.iter().max_by(|a, b| a.visits.cmp(&b.visits).then(b.action.cmp(&a.action))).copied();
    MctsResult {
        best: best.map(|m| m.action),
        win_prob: best.map_or(0.0, |m| m.win_prob),
        moves,
        playouts: played,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::hex::Cell;

    /// 3×3, the first player to move with a3 and b2 (the second has a1 and c3): b1 or c1 wins at once.
    fn first_needs_b1_or_c1() -> HexState {
        HexState::from_cells(
            3,
            false,
            &[Cell::parse("a3").expect("a3"), Cell::parse("b2").expect("b2")],
            &[Cell::parse("a1").expect("a1"), Cell::parse("c3").expect("c3")],
            Player::First,
        )
        .expect("reachable")
    }

    #[test]
    fn playouts_pick_the_winner_of_the_filled_board() {
        let mut rng = StdRng::seed_from_u64(1);
        // Black has a3 and b2 and needs b1 or c1: most random fillings give it one of them.
        let s = first_needs_b1_or_c1();
        let wins = (0..2000).filter(|_| playout(&s, &mut rng) == Player::First).count();
        assert!(wins > 1000, "{wins}");
    }

    #[test]
    fn search_finds_the_forced_win_and_is_deterministic() {
        // Black to move on 3×3 with a3 and b2: b1 and c1 win at once.
        let s = first_needs_b1_or_c1();
        let cfg = Config { playouts: 3000, ..Config::default() };
        let r = search(&s, cfg);
        let best = r.best.expect("moves");
        assert!(s.play(best).expect("legal").outcome().is_some(), "{best} does not win at once");
        assert_eq!(r.moves.len(), 5);
        assert_eq!(r.playouts, 3000);
        assert_eq!(search(&s, cfg), r);
        assert!(r.moves.iter().all(|m| (0.0..=1.0).contains(&m.win_prob) && m.bucket < 64));
    }
}
