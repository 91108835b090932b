//! BACKPROPAGATE (Algorithm 5) and the virtual counts of §3.2.
//!
//! A simulation that ends at node `leaf` with value `q` for the player to move there adds `q` to the leaf's
//! value sum and 1 to its visits, then walks to the root flipping the value (1 − q: win probabilities of a
//! two-player zero-sum game) at each ply. Unlike Algorithm 5 the root's visits are counted too, so N(root)
//! is the number of completed simulations.

use super::tree::{NONE, Tree};
use crate::game::GameState;

/// Backs up `q` (the value for the player to move at `leaf`) from `leaf` to the root, with `moves_left`
/// (the moves left in the game from `leaf`, one more at each ply up; 0 when unknown).
pub(crate) fn backup<S: GameState>(tree: &mut Tree<S>, leaf: u32, q: f64, moves_left: f64) {
    tree.node_mut(leaf).own += 1;
    let mut node = leaf;
    let mut q = q;
    let mut m = moves_left;
    loop {
        let n = tree.node_mut(node);
        n.visits += 1;
        n.value_sum += q;
        n.moves_left_sum += m;
        if n.parent == NONE {
            break;
        }
        node = n.parent;
        q = 1.0 - q;
        m += 1.0;
    }
}

/// Undoes two-fold draws that no longer hold after tree reuse (lc0's `EnsureNodeTwoFoldCorrectForDepth`): a
/// node made a draw because its position occurred `cycle` plies earlier is one only while that earlier
/// occurrence lies in the tree (depth ≥ cycle) and at least 4 plies below the root. Each such node's visits
/// (draws, worth ½ to either player) are taken off it and its ancestors, and it becomes unexpanded, to be
/// evaluated by the network when next reached. Returns how many nodes were reverted.
pub(crate) fn revert_twofolds<S: GameState>(tree: &mut Tree<S>) -> usize {
    let mut reverted = 0;
    for node in 0..tree.nodes.len() {
        let node = u32::try_from(node).unwrap_or(NONE - 1);
        let cycle = u32::from(tree.node(node).cycle);
        if cycle == 0 {
            continue;
        }
        let depth = tree.depth(node);
        if depth >= 4 && depth >= cycle {
            continue;
        }
        let (visits, value, moves_left) = {
            let n = tree.node_mut(node);
            let taken = (n.visits, n.value_sum, n.moves_left_sum);
            n.status = super::tree::NodeStatus::Unexpanded;
            n.cycle = 0;
            n.own = 0;
            taken
        };
        // A draw is worth ½ to both players: the same sum comes off every node of the path; its moves left
        // grew by one a ply.
        let mut at = node;
        let mut m = moves_left;
        loop {
            let n = tree.node_mut(at);
            n.visits = n.visits.saturating_sub(visits);
            n.value_sum -= value;
            n.moves_left_sum -= m;
            if n.parent == NONE {
                break;
            }
            at = n.parent;
            m += f64::from(visits);
        }
        reverted += 1;
    }
    reverted
}

/// Adds each path entry's virtual count to its node.
pub(crate) fn add_virtual<S: GameState>(tree: &mut Tree<S>, path: &[(u32, u32)]) {
    for &(node, count) in path {
        tree.node_mut(node).virtual_count += count;
    }
}

/// Removes what [`add_virtual`] added.
pub(crate) fn remove_virtual<S: GameState>(tree: &mut Tree<S>, path: &[(u32, u32)]) {
    for &(node, count) in path {
        let n = tree.node_mut(node);
        debug_assert!(n.virtual_count >= count, "virtual count underflow");
        n.virtual_count = n.virtual_count.saturating_sub(count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use crate::search::mcts::params::VirtualCounts;
    use crate::search::mcts::tree::ROOT;

    /// Builds the tree of Figure 5 and puts three simulations' dynamic counts (n_max = 8, n_min = 2) on it:
    /// root → X → {Y1 → L1, Y2 → L2} and root → W → Z → L3.
    #[test]
    fn moves_left_grow_by_one_a_ply_up() {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let m = s.legal_actions();
        t.add_children(ROOT, vec![(m[0], 1.0, f32::NAN)]);
        let a = t.node(ROOT).first_child;
        t.add_children(a, vec![(m[1], 1.0, f32::NAN)]);
        let b = t.node(a).first_child;
        backup(&mut t, b, 0.25, 12.0);
        backup(&mut t, b, 0.25, 8.0);
        assert_eq!(
            [t.node(b).moves_left_sum, t.node(a).moves_left_sum, t.node(ROOT).moves_left_sum],
            [20.0, 22.0, 24.0]
        );
        assert_eq!([t.node(b).value_sum, t.node(a).value_sum, t.node(ROOT).value_sum], [0.5, 1.5, 0.5]);
    }

    #[test]
    fn figure_5_counts_add_up() {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let m = s.legal_actions();
        let child = |t: &mut Tree<ChessState>, parent: u32, k: usize| -> u32 {
            t.add_children(parent, vec![(m[k], 0.5, f32::NAN), (m[k + 1], 0.5, f32::NAN)]);
            t.node(parent).first_child
        };
        let x = child(&mut t, ROOT, 0);
        let w = x + 1;
        let y1 = child(&mut t, x, 2);
        let y2 = y1 + 1;
        let l1 = child(&mut t, y1, 4);
        let l2 = child(&mut t, y2, 6);
        let z = child(&mut t, w, 8);
        let l3 = child(&mut t, z, 10);
        let vc = VirtualCounts::Dynamic { n_max: 8, n_min: 2 };
        let mut paths = Vec::new();
        for nodes in [vec![x, y1, l1], vec![x, y2, l2], vec![w, z, l3]] {
            let path: Vec<(u32, u32)> = nodes.iter().copied().zip(vc.for_path(nodes.len())).collect();
            add_virtual(&mut t, &path);
            paths.push(path);
        }
        let got: Vec<u32> = [x, y1, y2, l1, l2, w, z, l3].iter().map(|&n| t.node(n).virtual_count).collect();
        // X: +4 = (+2) + (+2); Y1, Y2: +4; leaves +8; W: +2; Z: +4.
        assert_eq!(got, vec![4, 4, 4, 8, 8, 2, 4, 8]);
        for p in &paths {
            remove_virtual(&mut t, p);
        }
        assert!(t.nodes.iter().all(|n| n.virtual_count == 0));
    }

    #[test]
    fn backup_flips_perspective() {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let m = s.legal_actions();
        t.add_children(ROOT, vec![(m[0], 1.0, f32::NAN)]);
        let c = t.node(ROOT).first_child;
        t.add_children(c, vec![(m[1], 1.0, f32::NAN)]);
        let g = t.node(c).first_child;
        backup(&mut t, g, 0.9, 0.0);
        assert_eq!(t.node(g).value_sum, 0.9);
        assert!((t.node(c).value_sum - 0.1).abs() < 1e-12);
        assert!((t.node(ROOT).value_sum - 0.9).abs() < 1e-12);
        assert_eq!((t.node(ROOT).visits, t.node(c).visits, t.node(g).visits), (1, 1, 1));
        assert_eq!((t.node(ROOT).own, t.node(c).own, t.node(g).own), (0, 0, 1));
    }
}
