//! FINALMOVESELECTION (Algorithm 8) and the principal variation.

use std::cmp::Ordering;

use super::puct::{model_value, q};
use super::tree::{NodeStatus, Tree};
use crate::game::GameState;

/// The child to play from `node`: the most visited; among equals the highest estimated value (Q from the
/// parent's perspective, or the model's value for an unvisited move — not in a tree searched as lc0
/// searches, where unvisited moves go by their prior as lc0's do), then the highest prior, then the first in
/// move order. Failed and excluded children are never chosen; `None` when there is no other.
pub(crate) fn best_child<S: GameState>(tree: &Tree<S>, node: u32) -> Option<u32> {
    let key = |c: u32| {
        let n = tree.node(c);
        let unvisited = if tree.by_prior { None } else { model_value(tree, c) };
        let value = q(tree, c).or(unvisited).unwrap_or(f64::NEG_INFINITY);
        (n.visits, value, n.prior)
    };
    let mut best: Option<(u32, (u32, f64, f32))> = None;
    for c in tree.node(node).children() {
        if tree.node(c).status == NodeStatus::Failed || tree.node(c).excluded {
            continue;
        }
        let k = key(c);
        let better = match &best {
            None => true,
            Some((_, b)) => {
                k.0.cmp(&b.0).then(k.1.total_cmp(&b.1)).then(k.2.total_cmp(&b.2)) == Ordering::Greater
            }
        };
        if better {
            best = Some((c, k));
        }
    }
    best.map(|(c, _)| c)
}

/// The line of best children from `node` while they have visits: node indices.
pub(crate) fn principal_variation<S: GameState>(tree: &Tree<S>, node: u32) -> Vec<u32> {
    let mut line = Vec::new();
    let mut at = node;
    while let Some(c) = best_child(tree, at) {
        if tree.node(c).visits == 0 {
            break;
        }
        line.push(c);
        at = c;
    }
    line
}

/// When `line` (from [`principal_variation`] of `from`) ends in a finished game: its exact result as a win
/// probability for the player to move at `from` (1 a win, 0 a loss, ½ a draw).
pub(crate) fn line_result<S: GameState>(tree: &Tree<S>, from: u32, line: &[u32]) -> Option<f64> {
    let &last = line.last()?;
    let end = tree.node(last);
    if end.status != NodeStatus::Terminal {
        return None;
    }
    let v = f64::from(end.terminal_value);
    Some(if end.player == tree.node(from).player { v } else { 1.0 - v })
}
