//! Snapshots: plain serde data that the UI, the CLI's JSON output and UCI `info` lines render from. Moves are
//! texts in the game's notation (UCI for chess); values are win probabilities for the player to move at the
//! node whose children are listed.

use serde::{Deserialize, Serialize};

use super::final_move::{best_child, line_result, principal_variation};
use super::puct::{model_value, q};
use super::search::{Mcts, MctsStats};
use super::tree::{NONE, NodeStatus, ROOT};
use crate::game::{GameState, Player};
use crate::inference::evaluator::Scoring;
use crate::search::SearchError;

/// One child's statistics (a root move, or a move anywhere in the tree explorer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoveStats {
    /// The move.
    pub action: String,
    /// N(s, a).
    pub visits: u32,
    /// N(s, a) / Σ N over the siblings (0 when none is visited).
    pub visit_share: f64,
    /// Q(s, a): the mean backed-up value for the player choosing the move; `None` if unvisited.
    pub q: Option<f64>,
    /// P(s, a).
    pub prior: f64,
    /// The model's value for the move under the search's scoring (when it valued it).
    pub model: Option<f64>,
    /// The model's value distribution over its buckets (kept only near the root): every other rule's value
    /// comes from it ([`MoveStats::value`]).
    pub distribution: Option<Vec<f64>>,
    /// The policy's probability for the move: from a model that gives a policy and no values (behavioural
    /// cloning; then `model` and `distribution` are `None`), or from one that gives a policy beside its
    /// values (an lc0 network), kept near the root as `distribution` is.
    #[serde(default)]
    pub policy: Option<f64>,
    /// Virtual counts on it now (evaluations out below it).
    pub virtual_count: u32,
    /// Where the child is in its life.
    pub status: NodeStatus,
    /// Hallucinations the model reported when it evaluated this child (free decoding).
    pub hallucinations: u32,
    /// The principal variation from this move on (the move first).
    pub pv: Vec<String>,
    /// When that line ends in a finished game: its exact result for the player choosing the move (1 a win,
    /// e.g. checkmate; 0 a loss; ½ a draw).
    #[serde(default)]
    pub pv_result: Option<f64>,
}

impl MoveStats {
    /// The model's value for the move under `scoring`, from its distribution (`None` when the model did not
    /// value it or its distribution was not kept).
    pub fn value(&self, scoring: Scoring) -> Option<f64> {
        self.distribution.as_deref().filter(|d| !d.is_empty()).map(|d| scoring.of_probs(d))
    }

    /// The model's value under `scoring`, or, when the distribution was not kept, the search's own value
    /// (under the search's scoring).
    pub fn value_or_model(&self, scoring: Scoring) -> Option<f64> {
        self.value(scoring).or(self.model)
    }
}

/// Totals of the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// The counters since the search (or the last tree reuse) began.
    #[serde(flatten)]
    pub stats: MctsStats,
    /// N(root), reused simulations included.
    pub root_visits: u32,
    /// Nodes in the tree.
    pub tree_size: usize,
    /// Evaluations out now.
    pub in_flight: usize,
}

/// The whole search as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MctsSnapshot {
    /// The root position in its text notation.
    pub root: String,
    /// Who moves at the root.
    pub to_move: Player,
    /// The root's ply.
    pub root_ply: u32,
    /// The scoring in use.
    pub scoring: Scoring,
    /// The move the search would play now (Algorithm 8).
    pub best: Option<String>,
    /// The root's value for the player to move (mean backed-up value), when visited.
    pub value: Option<f64>,
    /// The principal variation.
    pub pv: Vec<String>,
    /// When the principal variation ends in a finished game: its exact result for the player to move at the
    /// root (1 a win, e.g. checkmate; 0 a loss; ½ a draw).
    #[serde(default)]
    pub pv_result: Option<f64>,
    /// The model's outcome for the root position itself, when it gave one (an lc0 network's win/draw/loss
    /// and moves left).
    #[serde(default)]
    pub root_outcome: Option<crate::inference::evaluator::PositionOutcome>,
    /// Per root move, most visited first.
    pub moves: Vec<MoveStats>,
    /// Totals.
    pub totals: Totals,
    /// Searched as lc0 searches (see [`crate::search::mcts::SearchStyle`]), not by MAV-MCTS.
    #[serde(default)]
    pub lc0_style: bool,
}

impl MctsSnapshot {
    /// The search's name for display: `lc0 PUCT` or `MAV-MCTS`.
    pub fn style_name(&self) -> &'static str {
        if self.lc0_style { "lc0 PUCT" } else { "MAV-MCTS" }
    }
}

impl<S: GameState> Mcts<S> {
    /// The move the search would play now (Algorithm 8); `None` before the root is expanded or when every
    /// move failed.
    pub fn best_action(&self) -> Option<S::Action> {
        best_child(&self.tree, ROOT).and_then(|c| self.tree.node(c).action)
    }

    /// The whole search as plain data.
    pub fn snapshot(&self) -> MctsSnapshot {
        let root = self.tree.node(ROOT);
        let line = principal_variation(&self.tree, ROOT);
        let mut moves = self.children_of(ROOT);
        moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        MctsSnapshot {
            root: self.root_state().to_text(),
            to_move: root.player,
            root_ply: self.root_ply,
            scoring: self.params.scoring,
            best: self.best_action().map(|a| self.root_state().action_to_text(a)),
            value: (root.visits > 0).then(|| root.value_sum / f64::from(root.visits)),
            pv: self.line_texts(&line),
            pv_result: line_result(&self.tree, ROOT, &line),
            root_outcome: self.tree.node_data(ROOT).and_then(|d| d.outcome),
            moves,
            totals: Totals {
                stats: self.stats,
                root_visits: root.visits,
                tree_size: self.tree.nodes.len(),
                in_flight: self.in_flight(),
            },
            lc0_style: self.tree.by_prior,
        }
    }

    /// The principal variation's length in plies and, when it ends in a finished game, its exact result
    /// for the player to move at the root (cheaper than a whole [`Mcts::snapshot`]).
    pub fn pv_outcome(&self) -> (usize, Option<f64>) {
        let line = principal_variation(&self.tree, ROOT);
        (line.len(), line_result(&self.tree, ROOT, &line))
    }

    /// The tree explorer: the children's statistics of the node reached from the root by `path`.
    pub fn children(&self, path: &[S::Action]) -> Result<Vec<MoveStats>, SearchError> {
        let mut node = ROOT;
        for (i, &a) in path.iter().enumerate() {
            let text = self.tree.state(node).map_or_else(|| format!("{a:?}"), |s| s.action_to_text(a));
            node = self.tree.child_by_action(node, a).ok_or(SearchError::NotInTree { index: i, text })?;
        }
        Ok(self.children_of(node))
    }

    /// [`Mcts::children`] with the path as move texts.
    pub fn children_by_text(&self, path: &[&str]) -> Result<Vec<MoveStats>, SearchError> {
        let mut node = ROOT;
        for (i, &text) in path.iter().enumerate() {
            let not_in_tree = || SearchError::NotInTree { index: i, text: text.to_owned() };
            let state = self.tree.state(node).ok_or_else(not_in_tree)?;
            let action = state
                .parse_action(text)
                .map_err(|source| SearchError::IllegalAction { text: text.to_owned(), source })?;
            node = self.tree.child_by_action(node, action).ok_or_else(not_in_tree)?;
        }
        Ok(self.children_of(node))
    }

    fn children_of(&self, node: u32) -> Vec<MoveStats> {
        let t = &self.tree;
        let n = t.node(node);
        let total: u64 = n.children().map(|c| u64::from(t.node(c).visits)).sum();
        let data = t.node_data(node);
        n.children()
            .enumerate()
            .map(|(i, c)| {
                let child = t.node(c);
                let action = match (child.action, data) {
                    (Some(a), Some(d)) => d.state.action_to_text(a),
                    (Some(a), None) => format!("{a:?}"),
                    (None, _) => String::new(),
                };
                let distribution = data
                    .and_then(|d| d.dists.as_ref())
                    .and_then(|v| v.get(i))
                    .and_then(|d| d.as_ref())
                    .map(|d| d.probs().to_vec());
                let mut line = vec![c];
                line.extend(principal_variation(t, c));
                let pv = self.line_texts(&line);
                MoveStats {
                    action,
                    visits: child.visits,
                    visit_share: if total > 0 { f64::from(child.visits) / total as f64 } else { 0.0 },
                    q: q(t, c),
                    prior: f64::from(child.prior),
                    model: model_value(t, c),
                    distribution,
                    policy: if self.policy_only && node == ROOT {
                        Some(f64::from(child.prior))
                    } else {
                        data.and_then(|d| d.policy.as_ref())
                            .and_then(|v| v.get(i).copied().flatten())
                            .map(f64::from)
                    },
                    virtual_count: child.virtual_count,
                    status: child.status,
                    hallucinations: t.node_data(c).map_or(0, |d| d.hallucinations),
                    pv,
                    pv_result: line_result(t, node, &line),
                }
            })
            .collect()
    }

    /// The moves into the nodes of `line`, in the game's notation.
    fn line_texts(&self, line: &[u32]) -> Vec<String> {
        let t = &self.tree;
        line.iter()
            .copied()
            .filter_map(|c| {
                let parent = t.node(c).parent;
                let a = t.node(c).action?;
                (parent != NONE).then(|| t.state(parent).map(|s| s.action_to_text(a)))?
            })
            .collect()
    }
}
