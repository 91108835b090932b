//! SELECT (Algorithm 4): the child maximising Q + c_puct·P·√N(s)/(1 + N(s, a)), ties broken at random.
//!
//! Counts include virtual counts: N(s, a) is the edge's visits plus its virtual count and N(s) is their sum
//! over the children (the paper's N(s) = Σ_a N(s, a)). Q is the child's value from the parent's
//! perspective over those counts, so a virtual count lowers Q as a virtual loss would; an unvisited child
//! without virtual counts gets the [`FirstPlayValue`].

use rand::Rng;

use super::params::{FirstPlayValue, Lc0Params};
use super::tree::{NodeStatus, Tree};
use crate::game::GameState;

/// The model's value of a child's move (parent's perspective) under the tree's scoring, if it gave one.
pub(crate) fn model_value<S: GameState>(tree: &Tree<S>, child: u32) -> Option<f64> {
    let v = tree.node(child).model_value;
    (!v.is_nan()).then_some(f64::from(v))
}

/// Q of a child from its parent's perspective over real + virtual counts; `None` when both are 0.
pub(crate) fn q_with_virtual<S: GameState>(tree: &Tree<S>, child: u32) -> Option<f64> {
    let n = tree.node(child);
    let count = f64::from(n.visits) + f64::from(n.virtual_count);
    (count > 0.0).then(|| (f64::from(n.visits) - n.value_sum) / count)
}

/// Q of a child from its parent's perspective over real visits only; `None` when unvisited.
pub(crate) fn q<S: GameState>(tree: &Tree<S>, child: u32) -> Option<f64> {
    let n = tree.node(child);
    (n.visits > 0).then(|| (f64::from(n.visits) - n.value_sum) / f64::from(n.visits))
}

/// The PUCT choice among `node`'s selectable (not failed) children; `None` if there is none.
pub(crate) fn select_child<S: GameState, R: Rng>(
    tree: &Tree<S>,
    node: u32,
    c_puct: f64,
    first_play: FirstPlayValue,
    rng: &mut R,
) -> Option<u32> {
    let range = tree.node(node).children();
    let n_parent: f64 =
        range.clone().map(|c| f64::from(tree.node(c).visits) + f64::from(tree.node(c).virtual_count)).sum();
    let sqrt_n = n_parent.sqrt();
    let fallback = match first_play {
        FirstPlayValue::Loss => 0.0,
        FirstPlayValue::Draw => 0.5,
        FirstPlayValue::ModelValue => {
            range.clone().filter_map(|c| model_value(tree, c)).fold(f64::INFINITY, f64::min)
        }
    };
    let fallback = if fallback.is_finite() { fallback } else { 0.0 };
    let mut best = f64::NEG_INFINITY;
    let mut ties: Vec<u32> = Vec::new();
    for c in range {
        let child = tree.node(c);
        if child.status == NodeStatus::Failed || child.excluded {
            continue;
        }
        let q = q_with_virtual(tree, c).unwrap_or_else(|| match first_play {
            FirstPlayValue::ModelValue => model_value(tree, c).unwrap_or(fallback),
            _ => fallback,
        });
        let n = f64::from(child.visits) + f64::from(child.virtual_count);
        let score = q + c_puct * f64::from(child.prior) * sqrt_n / (1.0 + n);
        if score > best {
            best = score;
            ties.clear();
            ties.push(c);
        } else if score == best {
            ties.push(c);
        }
    }
    match ties.len() {
        0 => None,
        1 => Some(ties[0]),
        n => Some(ties[rng.random_range(0..n)]),
    }
}

/// lc0's PUCT choice among `node`'s selectable children, on lc0's scale (Q from −1 to 1 for the player
/// choosing): the child maximising Q + c(N)·P·√(Σ N(children)) / (1 + N_started(child)), where
/// c(N) = c_puct + factor·ln((N + base)/base), N = `parent_n`, N_started counts the child's visits and its
/// pending ones (virtual counts weigh on exploration only), and an unvisited child's Q is the first-play
/// value: the parent's Q (`parent_value`, a win probability for the player to move at `node`) minus the
/// reduction times √(the prior already visited). Ties go to the higher prior, then the first child.
pub(crate) fn select_child_lc0<S: GameState>(
    tree: &Tree<S>,
    node: u32,
    parent_n: f64,
    parent_value: f64,
    parent_moves_left: Option<f64>,
    params: &Lc0Params,
) -> Option<u32> {
    // lc0's moves-left utility: for a network with a moves-left head, below a parent whose |Q| is past the
    // threshold, on visited children only.
    let parent_m =
        parent_moves_left.filter(|_| (2.0 * parent_value - 1.0).abs() > params.moves_left_threshold);
    let range = tree.node(node).children();
    let mut children_visits = 0.0;
    let mut visited_policy = 0.0;
    for c in range.clone() {
        let child = tree.node(c);
        children_visits += f64::from(child.visits);
        if child.visits > 0 {
            visited_policy += f64::from(child.prior);
        }
    }
    let fpu = (2.0 * parent_value - 1.0) - params.fpu_reduction * visited_policy.sqrt();
    let puct_mult = params.cpuct_at(parent_n) * children_visits.max(1.0).sqrt();
    let mut best: Option<(u32, f64, f32)> = None;
    for c in range {
        let child = tree.node(c);
        if child.status == NodeStatus::Failed || child.excluded {
            continue;
        }
        let q = q(tree, c).map_or(fpu, |q| 2.0 * q - 1.0);
        let utility = match parent_m {
            Some(pm) if child.visits > 0 => {
                params.moves_left_utility(child.moves_left_sum / f64::from(child.visits), pm, q)
            }
            _ => 0.0,
        };
        let started = f64::from(child.visits) + f64::from(child.virtual_count);
        let score = q + utility + f64::from(child.prior) * puct_mult / (1.0 + started);
        let better = match best {
            None => true,
            Some((_, s, p)) => score > s || (score == s && child.prior > p),
        };
        if better {
            best = Some((c, score, child.prior));
        }
    }
    best.map(|(c, _, _)| c)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::game::chess::ChessState;
    use crate::search::mcts::tree::ROOT;

    fn tree(priors: &[f32], model: &[f32]) -> Tree<ChessState> {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let m = s.legal_actions();
        t.add_children(
            ROOT,
            priors.iter().zip(model).enumerate().map(|(i, (&p, &v))| (m[i], p, v)).collect(),
        );
        t
    }

    #[test]
    fn puct_formula_and_virtual_loss() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut t = tree(&[0.5, 0.3, 0.2], &[0.5, 0.5, 0.5]);
        // Child 1: 4 visits at 0.25 for the child's player → Q = 0.75 for the parent.
        t.node_mut(2).visits = 4;
        t.node_mut(2).value_sum = 1.0;
        t.node_mut(ROOT).visits = 4;
        // Child 0 unvisited: Q = model value 0.5, U = 0.5·√4/1 = 1.0 → 1.5; child 1: 0.75 + 0.3·2/5 = 0.87.
        assert_eq!(select_child(&t, ROOT, 1.0, FirstPlayValue::ModelValue, &mut rng), Some(1));
        // With c = 0 the visited child's higher Q wins.
        assert_eq!(select_child(&t, ROOT, 0.0, FirstPlayValue::ModelValue, &mut rng), Some(2));
        // A virtual count on child 1 lowers its Q to 1/(4+4)·(4 − 1) = 0.375 < 0.5.
        t.node_mut(2).virtual_count = 4;
        let pick = select_child(&t, ROOT, 0.0, FirstPlayValue::ModelValue, &mut rng);
        assert_ne!(pick, Some(2));
        // Loss first-play value: unvisited children are worth 0 without exploration.
        t.node_mut(2).virtual_count = 0;
        assert_eq!(select_child(&t, ROOT, 0.0, FirstPlayValue::Loss, &mut rng), Some(2));
        // Failed children are never chosen.
        t.node_mut(2).status = NodeStatus::Failed;
        assert_ne!(select_child(&t, ROOT, 0.0, FirstPlayValue::Loss, &mut rng), Some(2));
    }

    #[test]
    fn lc0_puct_by_hand() {
        let p = Lc0Params::default();
        let mut t = tree(&[0.5, 0.3, 0.2], &[f32::NAN; 3]);
        // Nothing visited: every child's Q is the first-play value, the highest prior wins.
        assert_eq!(select_child_lc0(&t, ROOT, 1.0, 0.5, None, &p), Some(1));
        // Child 1 (prior 0.5) visited 3 times at 0.9 for the child's player: Q = 2·0.1 − 1 = −0.8 for the root.
        t.node_mut(1).visits = 3;
        t.node_mut(1).value_sum = 2.7;
        t.node_mut(ROOT).visits = 3;
        // FPU = (2·0.6 − 1) − 0.33·√0.5; U(child 2) = c(4)·0.3·√3 / 1.
        let c = p.cpuct + p.cpuct_factor * ((4.0 + p.cpuct_base) / p.cpuct_base).ln();
        let fpu = 0.2 - 0.33 * 0.5f64.sqrt();
        let s1 = -0.8 + c * 0.5 * 3f64.sqrt() / 4.0;
        let s2 = fpu + c * 0.3 * 3f64.sqrt();
        assert!(s2 > s1);
        assert_eq!(select_child_lc0(&t, ROOT, 4.0, 0.6, None, &p), Some(2));
        // Pending visits on child 2 weigh on its exploration term only: enough of them and child 3 wins.
        t.node_mut(2).virtual_count = 10;
        assert_eq!(select_child_lc0(&t, ROOT, 4.0, 0.6, None, &p), Some(3));
        // An excluded root move is never chosen.
        t.node_mut(3).excluded = true;
        assert_eq!(select_child_lc0(&t, ROOT, 4.0, 0.6, None, &p), Some(2));
    }

    #[test]
    fn moves_left_utility_by_hand() {
        let p = Lc0Params::default();
        // Winning (Q 0.95): 10 moves shorter than the parent is worth 0.0027·10, weighted by the rescaled
        // |Q| 0.75: 1.6521·0.75 − 0.6521·0.75².
        let w = 1.6521 * 0.75 - 0.6521 * 0.5625;
        assert!((p.moves_left_utility(30.0, 40.0, 0.95) - 0.027 * w).abs() < 1e-12);
        // Losing, the shorter line costs as much.
        assert!((p.moves_left_utility(30.0, 40.0, -0.95) + 0.027 * w).abs() < 1e-12);
        // Capped at 0.0345 before the weight; nothing at or below the threshold.
        assert!((p.moves_left_utility(0.0, 100.0, 0.95) - 0.0345 * w).abs() < 1e-12);
        assert_eq!(p.moves_left_utility(30.0, 40.0, 0.8), 0.0);
    }

    #[test]
    fn lc0_prefers_the_shorter_win_with_a_moves_left_head() {
        let p = Lc0Params::default();
        let mut t = tree(&[0.5, 0.5], &[f32::NAN; 2]);
        // Both children visited 10 times and lost for the child's player (a win for the root's), the second
        // one with fewer moves left.
        for (c, m) in [(1, 40.0), (2, 20.0)] {
            let n = t.node_mut(c);
            n.visits = 10;
            n.value_sum = 0.2;
            n.moves_left_sum = 10.0 * m;
        }
        t.node_mut(ROOT).visits = 20;
        // Without moves left the first (same score, same prior) is kept; with them, the shorter win.
        assert_eq!(select_child_lc0(&t, ROOT, 21.0, 0.98, None, &p), Some(1));
        assert_eq!(select_child_lc0(&t, ROOT, 21.0, 0.98, Some(31.0), &p), Some(2));
        // A parent below the threshold leaves it out.
        assert_eq!(select_child_lc0(&t, ROOT, 21.0, 0.85, Some(31.0), &p), Some(1));
    }

    #[test]
    fn ties_are_broken_by_the_seeded_rng() {
        let t = tree(&[0.25; 4], &[0.5; 4]);
        let picks = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..32).map(|_| select_child(&t, ROOT, 1.0, FirstPlayValue::Draw, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(picks(3), picks(3));
        let all = picks(3);
        for c in 1..=4 {
            assert!(all.contains(&Some(c)), "child {c} never picked among equals");
        }
    }
}
