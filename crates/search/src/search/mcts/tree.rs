//! The search tree as an arena: nodes in one `Vec`, children of a node contiguous, indices instead of
//! pointers. Per-node data is small (statistics, the edge's prior and model values); states and full value
//! distributions live in a side table for evaluated nodes only.

use crate::game::{GameState, Player};
use crate::mav::buckets::ValueDistribution;

/// "No node".
pub(crate) const NONE: u32 = u32::MAX;

/// The root's index.
pub(crate) const ROOT: u32 = 0;

/// Where a node is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// Created by its parent's expansion, never evaluated.
    Unexpanded,
    /// Its evaluation is out (a ticket is waiting for it).
    Pending,
    /// Evaluated; its children exist.
    Expanded,
    /// The game is over here; its exact result is backed up on every visit without a model call.
    Terminal,
    /// Its evaluation failed or it has no usable move (value −∞): never selected again.
    Failed,
}

/// One node: the state reached by `action` from the parent, and that edge's statistics.
#[derive(Debug, Clone)]
pub(crate) struct Node<A> {
    /// The parent's index, [`NONE`] for the root.
    pub parent: u32,
    /// The first child's index (children are contiguous); meaningless when `num_children` is 0.
    pub first_child: u32,
    /// How many children.
    pub num_children: u32,
    /// N(s, a): completed simulations through this node.
    pub visits: u32,
    /// Virtual counts of simulations whose evaluations are out.
    pub virtual_count: u32,
    /// Simulations that ended here (1 for a node evaluated as a leaf, one per visit for a terminal node).
    pub own: u32,
    /// Σ of backed-up values, each a win probability for `player` (the player to move here).
    pub value_sum: f64,
    /// Σ of backed-up moves left from here (lc0's M: a network's moves-left at the leaf, plus one per ply
    /// up to this node; 0 at the end of the game). 0 when the network predicts none.
    pub moves_left_sum: f64,
    /// P(s, a) of the edge into this node.
    pub prior: f32,
    /// The parent evaluation's value of this move under the search's scoring, parent's perspective (NaN:
    /// not valued). A tree is built under one scoring ([`crate::search::mcts::Mcts::set_params`]).
    pub model_value: f32,
    /// For terminal nodes: the exact value for `player`.
    pub terminal_value: f32,
    /// Index into [`Tree::data`] once evaluated (the root has one from the start), else [`NONE`].
    pub data: u32,
    /// The move from the parent (`None` at the root).
    pub action: Option<A>,
    /// The player to move here.
    pub player: Player,
    /// Life cycle.
    pub status: NodeStatus,
    /// A root move left out of the search ([`crate::search::mcts::MctsParams::root_moves`]): never selected
    /// nor chosen, like a failed one, but only while the restriction lasts.
    pub excluded: bool,
    /// A draw by two-fold repetition in lc0's search: how many plies back the position occurred before
    /// (0 for any other node). Valid only while that occurrence is in the tree (see
    /// `backup::revert_twofolds`).
    pub cycle: u16,
}

impl<A> Node<A> {
    pub(crate) fn new(parent: u32, action: Option<A>, player: Player, prior: f32) -> Node<A> {
        Node {
            parent,
            first_child: 0,
            num_children: 0,
            visits: 0,
            virtual_count: 0,
            own: 0,
            value_sum: 0.0,
            moves_left_sum: 0.0,
            prior,
            model_value: f32::NAN,
            terminal_value: 0.0,
            excluded: false,
            cycle: 0,
            data: NONE,
            action,
            player,
            status: NodeStatus::Unexpanded,
        }
    }

    /// The children's index range.
    pub(crate) fn children(&self) -> std::ops::Range<u32> {
        self.first_child..self.first_child + self.num_children
    }
}

/// What an evaluated node keeps besides its statistics.
#[derive(Debug, Clone)]
pub(crate) struct NodeData<S> {
    /// The node's state (predicted by the model in the learned world model).
    pub state: S,
    /// The model's value distribution for each child's move (same order as the children), kept only near
    /// the root.
    pub dists: Option<Vec<Option<ValueDistribution>>>,
    /// The model's policy probability of each child's move (same order), when its answer carried a policy
    /// beside the values (an lc0 network's), kept only near the root as `dists` is.
    pub policy: Option<Vec<Option<f32>>>,
    /// The model's outcome for this node's position itself, when it gave one (an lc0 network's WDL).
    pub outcome: Option<crate::inference::evaluator::PositionOutcome>,
    /// Hallucinations the model reported in this node's evaluation.
    pub hallucinations: u32,
}

/// The arena.
#[derive(Debug, Clone)]
pub(crate) struct Tree<S: GameState> {
    pub nodes: Vec<Node<S::Action>>,
    pub data: Vec<NodeData<S>>,
    /// Searched as lc0 searches ([`crate::search::mcts::SearchStyle::Lc0`]): among equally visited unvisited
    /// moves the prior decides, not the model's value of the move.
    pub by_prior: bool,
}

impl<S: GameState> Tree<S> {
    /// A tree holding only the root `state`.
    pub(crate) fn new(state: S) -> Tree<S> {
        let mut root = Node::new(NONE, None, state.to_move(), 1.0);
        root.data = 0;
        Tree {
            nodes: vec![root],
            data: vec![NodeData { state, dists: None, policy: None, outcome: None, hallucinations: 0 }],
            by_prior: false,
        }
    }

    pub(crate) fn node(&self, i: u32) -> &Node<S::Action> {
        &self.nodes[i as usize]
    }

    pub(crate) fn node_mut(&mut self, i: u32) -> &mut Node<S::Action> {
        &mut self.nodes[i as usize]
    }

    /// The state of an evaluated node (and of the root).
    pub(crate) fn state(&self, i: u32) -> Option<&S> {
        let d = self.node(i).data;
        (d != NONE).then(|| &self.data[d as usize].state)
    }

    pub(crate) fn node_data(&self, i: u32) -> Option<&NodeData<S>> {
        let d = self.node(i).data;
        (d != NONE).then(|| &self.data[d as usize])
    }

    /// Stores (or replaces) a node's data.
    pub(crate) fn set_data(&mut self, i: u32, data: NodeData<S>) {
        let d = self.node(i).data;
        if d == NONE {
            self.node_mut(i).data = self.len32(self.data.len());
            self.data.push(data);
        } else {
            self.data[d as usize] = data;
        }
    }

    /// Appends one child per entry of `children` (action, prior, model value) under `parent`.
    pub(crate) fn add_children(&mut self, parent: u32, children: Vec<(S::Action, f32, f32)>) {
        let first = self.len32(self.nodes.len());
        let player = self.node(parent).player.other();
        let n = self.len32(children.len());
        for (action, prior, value) in children {
            let mut c = Node::new(parent, Some(action), player, prior);
            c.model_value = value;
            self.nodes.push(c);
        }
        let p = self.node_mut(parent);
        p.first_child = first;
        p.num_children = n;
    }

    /// The child of `node` reached by `action`.
    pub(crate) fn child_by_action(&self, node: u32, action: S::Action) -> Option<u32> {
        self.node(node).children().find(|&c| self.node(c).action == Some(action))
    }

    /// Depth of a node (the root is 0).
    pub(crate) fn depth(&self, mut i: u32) -> u32 {
        let mut d = 0;
        while self.node(i).parent != NONE {
            i = self.node(i).parent;
            d += 1;
        }
        d
    }

    /// The subtree of `new_root` as a tree of its own (statistics kept, ancestors and siblings dropped):
    /// copied breadth first so children stay contiguous.
    pub(crate) fn extract(&self, new_root: u32) -> Tree<S> {
        let mut nodes: Vec<Node<S::Action>> = Vec::new();
        let mut data: Vec<NodeData<S>> = Vec::new();
        let mut old_of_new: Vec<u32> = vec![new_root];
        let mut head = 0usize;
        let mut root = self.node(new_root).clone();
        root.parent = NONE;
        root.action = None;
        root.prior = 1.0;
        nodes.push(root);
        while head < old_of_new.len() {
            let old = old_of_new[head];
            let new = self.len32(head);
            let range = self.node(old).children();
            let first = self.len32(nodes.len());
            for c in range.clone() {
                let mut n = self.node(c).clone();
                n.parent = new;
                nodes.push(n);
                old_of_new.push(c);
            }
            let d = self.node(old).data;
            let nn = &mut nodes[head];
            nn.first_child = if range.is_empty() { 0 } else { first };
            if d != NONE {
                nn.data = self.len32(data.len());
                data.push(self.data[d as usize].clone());
            } else {
                nn.data = NONE;
            }
            head += 1;
        }
        Tree { nodes, data, by_prior: self.by_prior }
    }

    fn len32(&self, n: usize) -> u32 {
        // Trees larger than u32::MAX − 1 nodes would need > 200 GiB; search never gets there.
        u32::try_from(n).unwrap_or(NONE - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;

    #[test]
    fn children_are_contiguous_and_extract_keeps_a_subtree() {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let moves = s.legal_actions();
        t.add_children(ROOT, moves.iter().map(|&m| (m, 0.05, 0.5)).collect());
        assert_eq!(t.node(ROOT).num_children, 20);
        let c = t.child_by_action(ROOT, moves[3]).expect("child exists");
        let cs = s.play(moves[3]).expect("legal");
        t.set_data(
            c,
            NodeData { state: cs.clone(), dists: None, policy: None, outcome: None, hallucinations: 0 },
        );
        let replies = cs.legal_actions();
        t.add_children(c, replies.iter().map(|&m| (m, 0.05, 0.5)).collect());
        t.node_mut(c).visits = 7;
        assert_eq!(t.depth(t.node(c).first_child), 2);
        let sub = t.extract(c);
        assert_eq!(sub.nodes.len(), 1 + replies.len());
        assert_eq!(sub.node(ROOT).visits, 7);
        assert_eq!(sub.node(ROOT).parent, NONE);
        assert_eq!(sub.state(ROOT), Some(&cs));
        for ch in sub.node(ROOT).children() {
            assert_eq!(sub.node(ch).parent, ROOT);
        }
    }
}

/// Memory held by a search tree (heap inside states is not counted: chess states have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TreeMemory {
    /// Nodes.
    pub nodes: usize,
    /// Evaluated nodes (with a stored state).
    pub evaluated: usize,
    /// Bytes of one node (`size_of`).
    pub node_size: usize,
    /// Bytes of the node arena (capacity × node size).
    pub node_bytes: usize,
    /// Bytes of the evaluated nodes' data (capacity × its size).
    pub data_bytes: usize,
    /// Heap bytes of the kept value distributions.
    pub distribution_bytes: usize,
}

impl TreeMemory {
    /// All bytes.
    pub fn total(&self) -> usize {
        self.node_bytes + self.data_bytes + self.distribution_bytes
    }

    /// Bytes per node, everything included.
    pub fn per_node(&self) -> f64 {
        if self.nodes == 0 { 0.0 } else { self.total() as f64 / self.nodes as f64 }
    }
}

impl<S: GameState> Tree<S> {
    /// What the tree holds in memory.
    pub(crate) fn memory(&self) -> TreeMemory {
        let dist_size = std::mem::size_of::<Option<ValueDistribution>>();
        let distribution_bytes = self
            .data
            .iter()
            .filter_map(|d| d.dists.as_ref())
            .map(|v| {
                v.capacity() * dist_size
                    + v.iter().flatten().map(|d| std::mem::size_of_val(d.probs())).sum::<usize>()
            })
            .sum();
        TreeMemory {
            nodes: self.nodes.len(),
            evaluated: self.data.len(),
            node_size: std::mem::size_of::<Node<S::Action>>(),
            node_bytes: self.nodes.capacity() * std::mem::size_of::<Node<S::Action>>(),
            data_bytes: self.data.capacity() * std::mem::size_of::<NodeData<S>>(),
            distribution_bytes,
        }
    }
}
