//! The search tree explorer's state: which nodes the user expanded (paths of moves from the root) and
//! their children's statistics as the engine last reported them. The engine answers each expanded path
//! from its search tree ([`crate::engine::Command::Explore`]); a running search refreshes them with every
//! report.

use std::collections::{BTreeSet, HashMap};

use crate::search::mcts::MoveStats;

/// A node of the tree: the moves (UCI) from the root to it.
pub type TreePath = Vec<String>;

/// What the explorer shows for the board position.
#[derive(Debug, Clone, Default)]
pub struct ExplorerState {
    /// Expanded nodes.
    pub expanded: BTreeSet<TreePath>,
    /// Children of expanded nodes, most visited first, or why the engine has none.
    pub children: HashMap<TreePath, Result<Vec<MoveStats>, crate::engine::ExploreError>>,
}

impl ExplorerState {
    /// Expands a collapsed node or collapses an expanded one (and everything under it); returns whether it
    /// is expanded now.
    pub fn toggle(&mut self, path: &TreePath) -> bool {
        if self.expanded.remove(path) {
            self.expanded.retain(|p| !p.starts_with(path));
            self.children.retain(|p, _| !p.starts_with(path));
            false
        } else {
            self.expanded.insert(path.clone());
            true
        }
    }

    /// Takes the engine's answer for `path` (ignored when the node was collapsed meanwhile).
    pub fn accept(&mut self, path: TreePath, children: Result<Vec<MoveStats>, crate::engine::ExploreError>) {
        if self.expanded.contains(&path) {
            self.children.insert(path, children);
        }
    }

    /// Forgets everything (the board position changed).
    pub fn clear(&mut self) {
        self.expanded.clear();
        self.children.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(moves: &[&str]) -> TreePath {
        moves.iter().map(|m| (*m).to_owned()).collect()
    }

    #[test]
    fn collapsing_a_node_forgets_what_is_under_it() {
        let mut e = ExplorerState::default();
        assert!(e.toggle(&p(&["e2e4"])));
        assert!(e.toggle(&p(&["e2e4", "e7e5"])));
        assert!(e.toggle(&p(&["d2d4"])));
        e.accept(p(&["e2e4", "e7e5"]), Ok(Vec::new()));
        e.accept(p(&["c2c4"]), Ok(Vec::new()));
        assert!(!e.children.contains_key(&p(&["c2c4"])), "answers for collapsed nodes are dropped");
        assert!(!e.toggle(&p(&["e2e4"])));
        assert_eq!(e.expanded.iter().collect::<Vec<_>>(), [&p(&["d2d4"])]);
        assert!(e.children.is_empty());
    }
}
