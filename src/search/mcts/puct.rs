//! SELECT (Algorithm 4): the child maximising Q + c_puct·P·√N(s)/(1 + N(s, a)), ties broken at random.
//!
//! Counts include virtual counts: N(s, a) is the edge's visits plus its virtual count and N(s) is their sum
//! over the children (the paper's N(s) = Σ_a N(s, a)). Q is the child's value from the parent's
//! perspective over those counts, so a virtual count lowers Q as a virtual loss would; an unvisited child
//! without virtual counts gets the [`FirstPlayValue`].

use rand::Rng;

use super::params::FirstPlayValue;
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
