//! [`Mcts`]: the tree plus the asynchronous batch state machine of §3.2 (Figure 4).
//!
//! One round: [`Mcts::select_batch`] runs b downward passes serially, each ending at a leaf that needs a
//! model call (a [`EvalTicket`]), at a terminal state (backed up at once, no call), or on a leaf whose
//! evaluation is already out (a *collision*: one evaluation serves both; the second pass only adds its
//! virtual counts, which weigh on later passes, and they leave with the ticket). Every pass that asks for
//! an evaluation puts virtual counts on its path. Results are then given back one at a time, in any order,
//! with [`Mcts::complete`]; evaluations that did not come back within the engine's timeout t0 are given up
//! with [`Mcts::abandon`]. Either way the ticket's virtual counts are removed; a result for a ticket that is
//! no longer out is discarded.
//!
//! Counting: a *simulation* is one backup (a completed evaluation of a non-root leaf, or a visit to a
//! terminal node). The first evaluation of the root only expands it (Algorithm 1, line 3) and is not a
//! simulation, so N(root) = simulations, and for every node N = own + Σ N(children), where `own` counts the
//! simulations that ended at the node.

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::backup::{add_virtual, backup, remove_virtual, revert_twofolds};
use super::noise::add_dirichlet_noise;
use super::params::{MctsParams, PriorSource, SearchStyle, VirtualCounts, WorldModel};
use super::prior::{policy_prior, prior};
use super::puct::{select_child, select_child_lc0};
use super::tree::{NONE, NodeData, NodeStatus, ROOT, Tree};
use crate::game::{GameState, Outcome, OutcomeReason};
use crate::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, PositionOutcome};
use crate::mav::buckets::ValueDistribution;
use crate::search::SearchError;

/// Names one evaluation that is out. Never reused within a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Ticket(pub u64);

/// An evaluation to run: give its result back with [`Mcts::complete`] under `ticket`.
#[derive(Debug, Clone)]
pub struct EvalTicket<S: GameState> {
    /// The ticket.
    pub ticket: Ticket,
    /// What to ask the model.
    pub request: EvalRequest<S>,
}

/// What one call of [`Mcts::select_batch`] did.
#[derive(Debug, Clone)]
pub struct Batch<S: GameState> {
    /// Evaluations to run (at most b).
    pub evals: Vec<EvalTicket<S>>,
    /// Passes that ended at a terminal state (already backed up).
    pub terminal: u32,
    /// Passes that reached a leaf already being evaluated.
    pub collisions: u32,
    /// Passes that found a node without selectable children (it is now failed).
    pub dead_ends: u32,
}

impl<S: GameState> Batch<S> {
    /// Whether the batch did anything at all (if not, the search cannot go on: see [`Mcts::is_stuck`]).
    pub fn made_progress(&self) -> bool {
        !self.evals.is_empty() || self.terminal > 0 || self.dead_ends > 0
    }
}

/// What [`Mcts::complete`] did with a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Completion {
    /// Backed up as a simulation (or, for the root's first evaluation, expanded the root).
    Applied,
    /// The evaluation failed or was unusable: the node is now failed (value −∞), nothing was backed up.
    NodeFailed(String),
    /// The ticket was not out (abandoned, unknown, or the tree moved on): the result was dropped.
    Discarded,
}

/// Counters of one search (since [`Mcts::new`] or the last [`Mcts::advance`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MctsStats {
    /// Completed simulations (backups), terminal visits included.
    pub simulations: u64,
    /// Of those, visits to terminal states (no model call).
    pub terminal_simulations: u64,
    /// Evaluations asked for (tickets issued).
    pub model_calls: u64,
    /// Evaluations that failed or were unusable (nodes marked −∞).
    pub failed: u64,
    /// Evaluations given up (timeout).
    pub abandoned: u64,
    /// Results dropped because their ticket was no longer out.
    pub discarded: u64,
    /// Passes that reached a leaf already being evaluated (model calls saved).
    pub collisions: u64,
    /// Passes that ended at a node without selectable children.
    pub dead_ends: u64,
    /// Hallucinations the model reported (free decoding), summed over evaluations.
    pub hallucinations: u64,
    /// Evaluated nodes kept by the last tree reuse: model calls the reuse saved.
    pub reused_evaluations: u64,
    /// Nodes kept by the last tree reuse.
    pub reused_nodes: u64,
    /// The deepest pass: plies from the root to the node where it ended (UCI's `seldepth`).
    #[serde(default)]
    pub max_depth: u64,
}

/// An evaluation that is out.
#[derive(Debug, Clone)]
struct Pending<S: GameState> {
    leaf: u32,
    /// The leaf's state by the rules (the evaluated state in the rules world model).
    state: S,
    /// Each pass waiting on this evaluation: its path (node, virtual count), root side first.
    paths: Vec<Vec<(u32, u32)>>,
}

/// How one downward pass ended.
enum Pass<S: GameState> {
    Eval(EvalTicket<S>),
    Terminal,
    Collision,
    DeadEnd,
    Stuck,
}

/// MAV-MCTS over one root position.
#[derive(Debug, Clone)]
pub struct Mcts<S: GameState> {
    pub(crate) params: MctsParams,
    pub(crate) tree: Tree<S>,
    rng: ChaCha8Rng,
    pub(crate) root_ply: u32,
    pending: BTreeMap<u64, Pending<S>>,
    /// Pending leaf → its ticket.
    pending_leaf: HashMap<u32, u64>,
    next_ticket: u64,
    pub(crate) stats: MctsStats,
    /// The root was expanded from a policy without values (a behavioural-cloning model): its children's
    /// priors are the policy, and there is nothing to back up, so the search ends there.
    pub(crate) policy_only: bool,
    /// The game's positions before the root, oldest first (at most [`HISTORY_KEPT`]): with the positions
    /// along a leaf's path they are the history its request carries (a model that reads history, an lc0
    /// network, sees them).
    root_history: Vec<S>,
    /// The root was kept by tree reuse from a node lc0's search evaluated for its position only: the next
    /// batch asks for its moves' values too, for display (the tree's statistics stay as they are).
    refresh_root: bool,
}

/// How many positions before a request's state the search passes on: an lc0 network shows seven, each
/// with its repetition count, which looks back to the last capture or pawn move (at most 100 plies by the
/// fifty-move rule).
pub const HISTORY_KEPT: usize = 128;

/// The expected score of a win/draw/loss split for the side to move (lc0's Q with draw score 0, on [0, 1]).
fn expected_score(o: &PositionOutcome) -> f64 {
    let [w, d, l] = o.wdl;
    let sum = w + d + l;
    if sum > 0.0 { (w + 0.5 * d) / sum } else { 0.5 }
}

/// A policy at softmax temperature `t`: each listed probability to the power 1/t, renormalised over the
/// listed moves (the same as a softmax of the logits divided by t); unlisted moves get 0, and when nothing
/// is listed every move gets the same share.
fn tempered(policy: &[Option<f64>], t: f64) -> Vec<f64> {
    let w: Vec<f64> = policy
        .iter()
        .map(|p| p.filter(|p| p.is_finite() && *p > 0.0).map_or(0.0, |p| p.powf(1.0 / t)))
        .collect();
    let sum: f64 = w.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        w.iter().map(|x| x / sum).collect()
    } else {
        vec![1.0 / policy.len().max(1) as f64; policy.len()]
    }
}

/// Each move of an answer → its first place in the answer's list.
fn index_by_action<S: GameState>(result: &EvalResult<S>) -> HashMap<S::Action, usize> {
    let mut by_action = HashMap::new();
    for (i, m) in result.moves.iter().enumerate() {
        by_action.entry(m.action).or_insert(i);
    }
    by_action
}

/// A leaf's value to back up: lc0 backs up the position's own outcome, MAV-MCTS its best move's value;
/// `Err` says why there is none.
fn leaf_value(lc0: bool, position: Option<&PositionOutcome>, values: &[Option<f64>]) -> Result<f64, String> {
    let q_star = values.iter().flatten().copied().reduce(f64::max);
    let leaf_value = if lc0 { position.map(expected_score).or(q_star) } else { q_star };
    leaf_value.ok_or_else(|| {
        if values.is_empty() {
            "the model listed no moves and no result".to_owned()
        } else if lc0 {
            "the model gave neither the position's outcome nor any move's value".to_owned()
        } else {
            "the model gave no value for any legal move".to_owned()
        }
    })
}

fn keep_last<S>(v: &mut Vec<S>) {
    if v.len() > HISTORY_KEPT {
        v.drain(..v.len() - HISTORY_KEPT);
    }
}

impl<S: GameState> Mcts<S> {
    /// A search from `root`, which is ply `root_ply` of its game (0 = the first move; the prior's temperature
    /// schedule reads it).
    pub fn new(root: S, root_ply: u32, params: MctsParams) -> Result<Mcts<S>, SearchError> {
        params.validate()?;
        let rng = ChaCha8Rng::seed_from_u64(params.seed);
        let mut tree = Tree::new(root);
        tree.by_prior = params.style == SearchStyle::Lc0;
        if let Some(outcome) = tree.state(ROOT).and_then(|s| s.outcome()) {
            let r = tree.node_mut(ROOT);
            r.status = NodeStatus::Terminal;
            r.terminal_value = outcome.value_for(r.player) as f32;
        }
        let mut mcts = Mcts {
            params,
            tree,
            rng,
            root_ply,
            pending: BTreeMap::new(),
            pending_leaf: HashMap::new(),
            next_ticket: 0,
            stats: MctsStats::default(),
            policy_only: false,
            root_history: Vec::new(),
            refresh_root: false,
        };
        mcts.restrict_root()?;
        Ok(mcts)
    }

    /// Sets the game's positions before the root, oldest first (the last [`HISTORY_KEPT`] are kept).
    pub fn set_root_history(&mut self, mut history: Vec<S>) {
        keep_last(&mut history);
        self.root_history = history;
    }

    /// The game's positions before the root that the search passes on, oldest first.
    pub fn root_history(&self) -> &[S] {
        &self.root_history
    }

    /// The history of a request at the end of `path` (nodes below the root, the leaf last): the positions
    /// before the root, the root, and the positions along the path before the leaf.
    fn history_for(&self, path: &[u32]) -> Vec<S> {
        let Some((_, above)) = path.split_last() else {
            return self.root_history.clone();
        };
        let mut h = self.root_history.clone();
        h.push(self.root_state().clone());
        h.extend(above.iter().filter_map(|&n| self.tree.state(n).cloned()));
        keep_last(&mut h);
        h
    }

    /// Marks the root's children outside [`MctsParams::root_moves`] as excluded (none when it is empty).
    fn restrict_root(&mut self) -> Result<(), SearchError> {
        let allowed = if self.params.root_moves.is_empty() {
            None
        } else {
            let state = self.root_state();
            let parsed: Result<Vec<S::Action>, SearchError> = self
                .params
                .root_moves
                .iter()
                .map(|t| {
                    state
                        .parse_action(t)
                        .map_err(|source| SearchError::IllegalAction { text: t.clone(), source })
                })
                .collect();
            Some(parsed?)
        };
        let children: Vec<u32> = self.tree.node(ROOT).children().collect();
        for c in children {
            let keep = match (&allowed, self.tree.node(c).action) {
                (None, _) => true,
                (Some(allowed), Some(a)) => allowed.contains(&a),
                (Some(_), None) => false,
            };
            self.tree.node_mut(c).excluded = !keep;
        }
        self.tree.node_mut(ROOT).excluded = false;
        Ok(())
    }

    /// The settings.
    pub fn params(&self) -> &MctsParams {
        &self.params
    }

    /// Changes the settings; they apply from the next pass (nodes already expanded keep their priors). The
    /// random generator is reseeded only if the seed changed. A tree holds its moves' values under one
    /// scoring: a new scoring starts a new tree from the root (an error while evaluations are out), and so
    /// does a search style other than the tree's (evaluations out are then dropped when they come back).
    pub fn set_params(&mut self, params: MctsParams) -> Result<(), SearchError> {
        params.validate()?;
        let restyled = params.style != self.params.style
            && match params.style {
                SearchStyle::Lc0 => !self.tree.by_prior,
                SearchStyle::Mav => self.tree.by_prior,
                // Decided by the root's answer: asked afresh.
                SearchStyle::Auto => true,
            };
        if params.scoring != self.params.scoring || restyled {
            if !self.pending.is_empty() && params.scoring != self.params.scoring {
                return Err(SearchError::ScoringChangedMidSearch {
                    from: self.params.scoring,
                    to: params.scoring,
                });
            }
            let mut fresh = Mcts::new(self.root_state().clone(), self.root_ply, params)?;
            fresh.root_history = std::mem::take(&mut self.root_history);
            // Tickets are never reused: an answer for one still out is discarded, not applied to a new leaf.
            fresh.next_ticket = self.next_ticket;
            *self = fresh;
            return Ok(());
        }
        let old = std::mem::replace(&mut self.params, params);
        if let Err(e) = self.restrict_root() {
            self.params = old;
            // The old restriction was valid for this root.
            let _ = self.restrict_root();
            return Err(e);
        }
        if self.params.seed != old.seed {
            self.rng = ChaCha8Rng::seed_from_u64(self.params.seed);
        }
        Ok(())
    }

    /// Whether the tree is searched as lc0 searches ([`SearchStyle::Lc0`], or [`SearchStyle::Auto`] once the
    /// root's answer showed a network that values a position).
    pub fn searches_as_lc0(&self) -> bool {
        self.tree.by_prior
    }

    /// The root position.
    pub fn root_state(&self) -> &S {
        // The root always has its state (set by `Tree::new` and kept by `advance`).
        &self.tree.data[self.tree.node(ROOT).data as usize].state
    }

    /// The root's ply.
    pub fn root_ply(&self) -> u32 {
        self.root_ply
    }

    /// The counters.
    pub fn stats(&self) -> MctsStats {
        self.stats
    }

    /// The number of nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// What the tree holds in memory.
    pub fn memory(&self) -> super::tree::TreeMemory {
        self.tree.memory()
    }

    /// N(root): completed simulations in this tree (including those kept by tree reuse).
    pub fn root_visits(&self) -> u32 {
        self.tree.node(ROOT).visits
    }

    /// Whether the root's own evaluation is out.
    pub fn is_root_pending(&self) -> bool {
        self.tree.node(ROOT).status == NodeStatus::Pending
    }

    /// Whether the root still waits for its first evaluation (not yet sent, or out): the search has no
    /// move to give yet.
    pub fn root_awaits_evaluation(&self) -> bool {
        matches!(self.tree.node(ROOT).status, NodeStatus::Unexpanded | NodeStatus::Pending)
    }

    /// Evaluations out.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// The tickets out, oldest first.
    pub fn in_flight_tickets(&self) -> Vec<Ticket> {
        self.pending.keys().map(|&t| Ticket(t)).collect()
    }

    /// The sum of all virtual counts in the tree (0 whenever no evaluation is out).
    pub fn virtual_count_total(&self) -> u64 {
        self.tree.nodes.iter().map(|n| u64::from(n.virtual_count)).sum()
    }

    /// True when no pass can reach an evaluation any more: the root is terminal or failed, or every root move
    /// is failed. Pending evaluations do not count (complete or abandon them first).
    pub fn is_stuck(&self) -> bool {
        let root = self.tree.node(ROOT);
        if self.policy_only {
            return true;
        }
        match root.status {
            NodeStatus::Terminal | NodeStatus::Failed => true,
            NodeStatus::Unexpanded | NodeStatus::Pending => false,
            NodeStatus::Expanded => root.children().all(|c| {
                let child = self.tree.node(c);
                child.status == NodeStatus::Failed || child.excluded
            }),
        }
    }

    /// Runs `b` downward passes and returns the evaluations they need (at most `b`; fewer when passes end at
    /// terminal states or collide). While the root has not been evaluated, the first pass asks for it and the
    /// others collide.
    pub fn select_batch(&mut self, b: usize) -> Batch<S> {
        let mut batch = Batch { evals: Vec::new(), terminal: 0, collisions: 0, dead_ends: 0 };
        if std::mem::take(&mut self.refresh_root) && self.tree.node(ROOT).status == NodeStatus::Expanded {
            batch.evals.push(self.root_refresh());
        }
        for _ in 0..b {
            match self.pass() {
                Pass::Eval(e) => batch.evals.push(e),
                Pass::Terminal => batch.terminal += 1,
                Pass::Collision => batch.collisions += 1,
                Pass::DeadEnd => batch.dead_ends += 1,
                Pass::Stuck => break,
            }
        }
        self.stats.collisions += u64::from(batch.collisions);
        self.stats.dead_ends += u64::from(batch.dead_ends);
        batch
    }

    /// One downward pass from the root.
    fn pass(&mut self) -> Pass<S> {
        let mut node = ROOT;
        let mut path: Vec<u32> = Vec::new();
        loop {
            match self.tree.node(node).status {
                // A policy's root has no value to back up below it.
                NodeStatus::Expanded if self.policy_only => return Pass::Stuck,
                NodeStatus::Expanded => {
                    let p = &self.params;
                    let chosen = if self.tree.by_prior {
                        let (n, value) = self.lc0_node_value(node);
                        let m = self.lc0_moves_left(node);
                        select_child_lc0(&self.tree, node, n, value, m, &p.lc0)
                    } else {
                        select_child(&self.tree, node, p.c_puct, p.first_play, &mut self.rng)
                    };
                    match chosen {
                        Some(c) => {
                            path.push(c);
                            self.stats.max_depth = self.stats.max_depth.max(path.len() as u64);
                            node = c;
                        }
                        None if node == ROOT => return Pass::Stuck,
                        None => {
                            self.fail(node);
                            return Pass::DeadEnd;
                        }
                    }
                }
                NodeStatus::Terminal if node == ROOT => return Pass::Stuck,
                NodeStatus::Terminal => {
                    let v = f64::from(self.tree.node(node).terminal_value);
                    let m = f64::from(self.tree.node(node).cycle);
                    backup(&mut self.tree, node, v, m);
                    self.stats.simulations += 1;
                    self.stats.terminal_simulations += 1;
                    return Pass::Terminal;
                }
                NodeStatus::Failed => return Pass::Stuck,
                NodeStatus::Pending => {
                    let counts = self.virtual_path(&path);
                    add_virtual(&mut self.tree, &counts);
                    if let Some(p) = self.pending_leaf.get(&node).and_then(|t| self.pending.get_mut(t)) {
                        p.paths.push(counts);
                    }
                    return Pass::Collision;
                }
                NodeStatus::Unexpanded => return self.start_eval(node, &path),
            }
        }
    }

    fn virtual_path(&self, path: &[u32]) -> Vec<(u32, u32)> {
        // lc0 counts each pending visit once on every edge of its path.
        let counts = if self.tree.by_prior { VirtualCounts::Fixed(1) } else { self.params.virtual_counts };
        path.iter().copied().zip(counts.for_path(path.len())).collect()
    }

    /// A node's visits and value (a win probability for its player to move) as lc0 counts them: its own
    /// evaluation is one of the visits, also at a root that no simulation has ended at (whose evaluation
    /// expanded it without a backup).
    fn lc0_node_value(&self, node: u32) -> (f64, f64) {
        let n = self.tree.node(node);
        let own = if n.own == 0 {
            self.tree.node_data(node).and_then(|d| d.outcome.as_ref()).map(expected_score)
        } else {
            None
        };
        let visits = f64::from(n.visits) + f64::from(u8::from(own.is_some()));
        let sum = n.value_sum + own.unwrap_or(0.0);
        (visits, if visits > 0.0 { sum / visits } else { 0.5 })
    }

    /// lc0's M of an expanded node: the average moves left backed up through it, its own evaluation counted
    /// as in [`Self::lc0_node_value`]; `None` when the network predicts no moves left.
    fn lc0_moves_left(&self, node: u32) -> Option<f64> {
        let n = self.tree.node(node);
        let own = self.tree.node_data(node).and_then(|d| d.outcome.as_ref())?.moves_left?;
        let (visits, sum) = if n.own == 0 {
            (f64::from(n.visits) + 1.0, n.moves_left_sum + own)
        } else {
            (f64::from(n.visits), n.moves_left_sum)
        };
        Some(if visits > 0.0 { sum / visits } else { own })
    }

    /// Reaching an unexpanded leaf: a terminal state (rules), a dead end, or a new ticket.
    fn start_eval(&mut self, leaf: u32, path: &[u32]) -> Pass<S> {
        let learned = self.params.world_model == WorldModel::Learned;
        let (state, previous) = if leaf == ROOT {
            (self.root_state().clone(), None)
        } else {
            let parent = self.tree.node(leaf).parent;
            let (Some(action), Some(pstate)) = (self.tree.node(leaf).action, self.tree.state(parent)) else {
                self.fail(leaf);
                return Pass::DeadEnd;
            };
            match pstate.play(action) {
                Ok(s) => {
                    let prev = learned.then(|| (pstate.clone(), action));
                    (s, prev)
                }
                // Only possible in the learned world model: the model's move is illegal in its own
                // predicted state.
                Err(_) => {
                    self.fail(leaf);
                    return Pass::DeadEnd;
                }
            }
        };
        let history = self.history_for(path);
        let repeated = if !learned && self.tree.by_prior && leaf != ROOT {
            self.repetition_draw(&state, &history, path.len())
        } else {
            None
        };
        let outcome = match repeated {
            Some(_) => Some(Outcome::Draw { reason: OutcomeReason::Repetition }),
            None if !learned => state.outcome(),
            None => None,
        };
        if let Some(outcome) = outcome {
            let n = self.tree.node_mut(leaf);
            n.status = NodeStatus::Terminal;
            n.terminal_value = outcome.value_for(n.player) as f32;
            n.cycle = repeated.unwrap_or(0);
            let v = f64::from(n.terminal_value);
            // The game ends here (lc0: 0 moves left), or a two-fold draw's cycle length.
            let m = f64::from(n.cycle);
            backup(&mut self.tree, leaf, v, m);
            self.stats.simulations += 1;
            self.stats.terminal_simulations += 1;
            return Pass::Terminal;
        }
        let request = EvalRequest {
            state: state.clone(),
            want_next_state: false,
            previous,
            history,
            top_k: self.params.request_top_k,
            mode: if learned { DecodeMode::Free } else { self.params.decode },
            want_best_action: self.params.prior_source == PriorSource::Policy || self.tree.by_prior,
            // Below the root lc0's search reads the position's outcome and policy only; the root's moves are
            // all valued, for display.
            position_only: self.tree.by_prior && leaf != ROOT,
        };
        let counts = self.virtual_path(path);
        add_virtual(&mut self.tree, &counts);
        self.tree.node_mut(leaf).status = NodeStatus::Pending;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.pending.insert(ticket, Pending { leaf, state, paths: vec![counts] });
        self.pending_leaf.insert(leaf, ticket);
        self.stats.model_calls += 1;
        Pass::Eval(EvalTicket { ticket: Ticket(ticket), request })
    }

    /// lc0's draws by repetition below the root, for `state` reached `depth` plies below it after `history`
    /// (oldest first): a third occurrence is a draw (`Some(0)`); a second one is a two-fold draw
    /// (`Some(cycle)`, the plies back to the earlier occurrence) when [`super::params::Lc0Params::two_fold_draws`] is on,
    /// the leaf is at least 4 plies deep and the earlier occurrence lies in the tree (at or below the
    /// root). Positions are compared by their hash (for chess: pieces, side to move, castling rights and
    /// en passant).
    fn repetition_draw(&self, state: &S, history: &[S], depth: usize) -> Option<u16> {
        let key = state.hash64();
        let mut earlier =
            history.iter().rev().enumerate().filter(|(_, s)| s.hash64() == key).map(|(i, _)| i + 1);
        let last = earlier.next()?;
        if earlier.next().is_some() {
            return Some(0);
        }
        (self.params.lc0.two_fold_draws && depth >= 4 && depth >= last)
            .then(|| u16::try_from(last).unwrap_or(u16::MAX))
    }

    /// The request that values an expanded root's moves (see `refresh_root`).
    fn root_refresh(&mut self) -> EvalTicket<S> {
        let state = self.root_state().clone();
        let request = EvalRequest {
            history: self.root_history.clone(),
            top_k: self.params.request_top_k,
            mode: self.params.decode,
            want_best_action: true,
            ..EvalRequest::values(state.clone())
        };
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.pending.insert(ticket, Pending { leaf: ROOT, state, paths: Vec::new() });
        self.stats.model_calls += 1;
        EvalTicket { ticket: Ticket(ticket), request }
    }

    /// Fills an expanded root's display data (its moves' values and policy, its own outcome) from a refresh's
    /// result; priors and statistics are left as they are.
    fn refreshed(&mut self, result: Result<EvalResult<S>, EvalError>) -> Completion {
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                self.stats.failed += 1;
                return Completion::NodeFailed(format!("the root's moves could not be valued: {e}"));
            }
        };
        let scoring = self.params.scoring;
        let children: Vec<u32> = self.tree.node(ROOT).children().collect();
        let by_action = index_by_action(&result);
        let policy = result.best_action.as_ref().filter(|p| p.len() == result.moves.len());
        let mut dists = Vec::with_capacity(children.len());
        let mut kept_policy = Vec::with_capacity(children.len());
        for &c in &children {
            let i = self.tree.node(c).action.and_then(|a| by_action.get(&a).copied());
            let value = i.and_then(|i| result.moves[i].value(scoring));
            self.tree.node_mut(c).model_value = value.map_or(f32::NAN, |v| v as f32);
            dists.push(i.and_then(|i| result.moves[i].dist.clone()));
            kept_policy.push(i.and_then(|i| policy.map(|p| p[i] as f32)));
        }
        let d = self.tree.node(ROOT).data as usize;
        let data = &mut self.tree.data[d];
        data.dists = Some(dists);
        data.policy = policy.map(|_| kept_policy);
        if let Some(p) = result.position {
            data.outcome = Some(*p);
        }
        Completion::Applied
    }

    /// Takes a ticket out of the pending set and removes its virtual counts.
    fn take(&mut self, ticket: Ticket) -> Option<Pending<S>> {
        let p = self.pending.remove(&ticket.0)?;
        self.pending_leaf.remove(&p.leaf);
        for path in &p.paths {
            remove_virtual(&mut self.tree, path);
        }
        Some(p)
    }

    /// Gives up an evaluation (its timeout passed): its virtual counts are removed and its leaf can be chosen
    /// again. Returns false if the ticket was not out.
    pub fn abandon(&mut self, ticket: Ticket) -> bool {
        match self.take(ticket) {
            Some(p) => {
                if p.leaf != ROOT || self.tree.node(ROOT).status != NodeStatus::Expanded {
                    self.tree.node_mut(p.leaf).status = NodeStatus::Unexpanded;
                } else {
                    // A refresh of the root's values: asked again with the next batch.
                    self.refresh_root = true;
                }
                self.stats.abandoned += 1;
                true
            }
            None => false,
        }
    }

    /// Gives up every evaluation out.
    pub fn abandon_all(&mut self) {
        for t in self.in_flight_tickets() {
            self.abandon(t);
        }
    }

    /// Backs up one evaluation's result (results may come in any order).
    pub fn complete(&mut self, ticket: Ticket, result: Result<EvalResult<S>, EvalError>) -> Completion {
        let Some(p) = self.take(ticket) else {
            self.stats.discarded += 1;
            return Completion::Discarded;
        };
        let leaf = p.leaf;
        if leaf == ROOT && self.tree.node(ROOT).status == NodeStatus::Expanded {
            return self.refreshed(result);
        }
        let result = match result {
            Ok(r) => r,
            Err(e) => return self.fail_eval(leaf, e.to_string()),
        };
        self.stats.hallucinations += result.hallucinations.len() as u64;
        let learned = self.params.world_model == WorldModel::Learned;
        let state = match self.leaf_state(leaf, p.state, &result) {
            Ok(s) => s,
            Err(why) => return self.fail_eval(leaf, why),
        };
        let hallucinations = u32::try_from(result.hallucinations.len()).unwrap_or(u32::MAX);
        if learned && let Some(outcome) = result.terminal {
            return self.complete_terminal(leaf, state, outcome, hallucinations);
        }
        self.expand(leaf, state, result, hallucinations)
    }

    /// The state at an evaluated leaf: the model's prediction below the root in the learned world model, else
    /// the state the search tracked; `Err` says why the model's prediction is unusable.
    fn leaf_state(&self, leaf: u32, tracked: S, result: &EvalResult<S>) -> Result<S, String> {
        if self.params.world_model != WorldModel::Learned || leaf == ROOT {
            return Ok(tracked);
        }
        match result.tracked_state.as_ref().and_then(|n| n.state.clone()) {
            Some(s) => Ok(s),
            None => {
                let text = result.tracked_state.as_ref().map_or("", |n| n.text.as_str());
                Err(format!("the model gave no valid state after the move (wrote {text:?})"))
            }
        }
    }

    /// Marks a leaf terminal with the outcome the model reported and backs its value up (not at the root).
    fn complete_terminal(
        &mut self,
        leaf: u32,
        state: S,
        outcome: Outcome,
        hallucinations: u32,
    ) -> Completion {
        let n = self.tree.node_mut(leaf);
        n.status = NodeStatus::Terminal;
        n.terminal_value = outcome.value_for(n.player) as f32;
        let v = f64::from(n.terminal_value);
        self.tree
            .set_data(leaf, NodeData { state, dists: None, policy: None, outcome: None, hallucinations });
        if leaf != ROOT {
            backup(&mut self.tree, leaf, v, 0.0);
            self.stats.simulations += 1;
        }
        Completion::Applied
    }

    /// Expands a leaf from the model's answer (its moves with priors and values) and backs its value up.
    fn expand(&mut self, leaf: u32, state: S, result: EvalResult<S>, hallucinations: u32) -> Completion {
        let learned = self.params.world_model == WorldModel::Learned;
        // The node's moves: the rules' in the rules world model, the model's own list otherwise.
        let by_action = index_by_action(&result);
        let actions: Vec<S::Action> = if learned {
            let mut seen = std::collections::HashSet::new();
            result.moves.iter().map(|m| m.action).filter(|a| seen.insert(*a)).collect()
        } else {
            state.legal_actions()
        };
        let scoring = self.params.scoring;
        let values: Vec<Option<f64>> =
            actions.iter().map(|a| by_action.get(a).and_then(|&i| result.moves[i].value(scoring))).collect();
        if leaf == ROOT && self.params.style == SearchStyle::Auto && !learned {
            // A model that values the position itself beside a policy is searched as lc0 searches.
            self.tree.by_prior = result.position.is_some() && result.best_action.is_some();
        }
        let lc0 = self.tree.by_prior;
        if !lc0
            && !result.has_values()
            && !result.moves.is_empty()
            && let Some(policy) = result.best_action.as_ref().filter(|p| p.len() == result.moves.len())
        {
            return self.expand_policy_only(leaf, state, &actions, &by_action, policy, hallucinations);
        }
        let leaf_value = match leaf_value(lc0, result.position.as_deref(), &values) {
            Ok(v) => v,
            Err(why) => return self.fail_eval(leaf, why),
        };
        let depth = self.tree.depth(leaf);
        let tau = self.params.temperature.at(self.root_ply + depth);
        let policy = result.best_action.as_deref().filter(|p| p.len() == result.moves.len());
        let priors = self.priors(leaf, tau, &actions, &by_action, &values, policy);
        let position: Option<PositionOutcome> = result.position.as_deref().copied();
        let keep = depth < self.params.keep_distributions_depth;
        let mut dists = keep.then(|| Vec::with_capacity(actions.len()));
        let kept_policy = policy.filter(|_| keep).map(|p| {
            actions.iter().map(|a| by_action.get(a).map(|&i| p[i] as f32)).collect::<Vec<Option<f32>>>()
        });
        let mut children = Vec::with_capacity(actions.len());
        let mut move_dists: Vec<Option<ValueDistribution>> =
            result.moves.into_iter().map(|m| m.dist).collect();
        for ((a, p), v) in actions.iter().zip(&priors).zip(&values) {
            let i = by_action.get(a).copied();
            let value = v.map_or(f32::NAN, |v| v as f32);
            if let Some(d) = dists.as_mut() {
                d.push(i.and_then(|i| move_dists[i].take()));
            }
            children.push((*a, *p as f32, value));
        }
        self.tree.add_children(leaf, children);
        self.tree.set_data(
            leaf,
            NodeData { state, dists, policy: kept_policy, outcome: position, hallucinations },
        );
        self.tree.node_mut(leaf).status = NodeStatus::Expanded;
        if leaf == ROOT {
            // Checked when the restriction was set: the moves are legal here.
            let _ = self.restrict_root();
        }
        if leaf != ROOT {
            let moves_left = position.and_then(|p| p.moves_left).unwrap_or(0.0);
            backup(&mut self.tree, leaf, leaf_value, moves_left);
            self.stats.simulations += 1;
        }
        Completion::Applied
    }

    /// Expands a leaf from a policy without values (behavioural cloning): the root's moves take its
    /// probabilities as their priors; below the root there is no value to back up, so the leaf fails.
    fn expand_policy_only(
        &mut self,
        leaf: u32,
        state: S,
        actions: &[S::Action],
        by_action: &HashMap<S::Action, usize>,
        policy: &[f64],
        hallucinations: u32,
    ) -> Completion {
        if leaf != ROOT {
            let why = "the model gives a policy and no values (behavioural cloning): a search deeper than \
                           its root needs a value model"
                .to_owned();
            return self.fail_eval(leaf, why);
        }
        let children: Vec<(S::Action, f32, f32)> = actions
            .iter()
            .map(|a| (*a, by_action.get(a).map_or(0.0, |&i| policy[i] as f32), f32::NAN))
            .collect();
        self.tree.add_children(leaf, children);
        self.tree
            .set_data(leaf, NodeData { state, dists: None, policy: None, outcome: None, hallucinations });
        self.tree.node_mut(leaf).status = NodeStatus::Expanded;
        self.policy_only = true;
        let _ = self.restrict_root();
        Completion::Applied
    }

    /// The priors of a leaf's moves: lc0's tempered policy (with Dirichlet noise at the root), the policy
    /// itself, or the MAV prior from the moves' values at temperature `tau`.
    fn priors(
        &mut self,
        leaf: u32,
        tau: f64,
        actions: &[S::Action],
        by_action: &HashMap<S::Action, usize>,
        values: &[Option<f64>],
        policy: Option<&[f64]>,
    ) -> Vec<f64> {
        match policy {
            Some(p) if self.tree.by_prior => {
                let listed: Vec<Option<f64>> =
                    actions.iter().map(|a| by_action.get(a).map(|&i| p[i])).collect();
                let mut priors = tempered(&listed, self.params.lc0.policy_temperature);
                if leaf == ROOT {
                    let p = &self.params.lc0;
                    add_dirichlet_noise(&mut priors, p.noise_epsilon, p.noise_alpha, &mut self.rng);
                }
                priors
            }
            Some(p) if self.params.prior_source == PriorSource::Policy => {
                let listed: Vec<Option<f64>> =
                    actions.iter().map(|a| by_action.get(a).map(|&i| p[i])).collect();
                policy_prior(&listed, self.params.epsilon)
            }
            _ => prior(values, self.params.prior_top_k, tau, self.params.epsilon),
        }
    }

    fn fail_eval(&mut self, leaf: u32, why: String) -> Completion {
        self.stats.failed += 1;
        if leaf == ROOT {
            // The root cannot be −∞; it goes back to unexpanded so a later round may retry.
            self.tree.node_mut(ROOT).status = NodeStatus::Unexpanded;
        } else {
            self.fail(leaf);
        }
        Completion::NodeFailed(why)
    }

    /// Marks a node failed; a parent left with only failed children fails too (the root never does).
    fn fail(&mut self, node: u32) {
        let mut node = node;
        while node != ROOT && node != NONE {
            self.tree.node_mut(node).status = NodeStatus::Failed;
            let parent = self.tree.node(node).parent;
            let all_failed =
                self.tree.node(parent).children().all(|c| self.tree.node(c).status == NodeStatus::Failed);
            if !all_failed {
                break;
            }
            node = parent;
        }
    }

    /// Checks the tree's bookkeeping: N(node) = own + Σ N(children) everywhere, virtual counts equal to the
    /// sum over pending paths, and N(root) = simulations of this tree.
    pub fn check_consistency(&self) -> Result<(), SearchError> {
        let t = &self.tree;
        for (i, n) in t.nodes.iter().enumerate() {
            let sum: u64 = n.children().map(|c| u64::from(t.node(c).visits)).sum();
            if u64::from(n.visits) != u64::from(n.own) + sum {
                return Err(SearchError::Inconsistent(format!(
                    "node {i}: N = {} but own {} + children {sum}",
                    n.visits, n.own
                )));
            }
            if n.visits > 0 && !(0.0..=f64::from(n.visits) + 1e-9).contains(&n.value_sum) {
                return Err(SearchError::Inconsistent(format!(
                    "node {i}: value sum {} outside [0, N = {}]",
                    n.value_sum, n.visits
                )));
            }
        }
        let mut expected = vec![0u64; t.nodes.len()];
        for p in self.pending.values() {
            for path in &p.paths {
                for &(node, c) in path {
                    expected[node as usize] += u64::from(c);
                }
            }
        }
        for (i, n) in t.nodes.iter().enumerate() {
            if u64::from(n.virtual_count) != expected[i] {
                return Err(SearchError::Inconsistent(format!(
                    "node {i}: virtual count {} but pending paths put {}",
                    n.virtual_count, expected[i]
                )));
            }
        }
        Ok(())
    }

    /// Replaces the tree by the subtree of `action` (played at the root), keeping its statistics (§3.2: tree
    /// reuse). Evaluations out are abandoned first. In the learned world model the subtree is kept only if
    /// the model's predicted state equals the real one. Returns how many evaluated nodes were kept (model
    /// calls saved); the counters restart with that figure in [`MctsStats::reused_evaluations`].
    pub fn advance(&mut self, action: S::Action) -> Result<u64, SearchError> {
        self.abandon_all();
        let root_state = self.root_state().clone();
        let next = root_state.play(action).map_err(|source| SearchError::IllegalAction {
            text: root_state.action_to_text(action),
            source,
        })?;
        let child = self.tree.child_by_action(ROOT, action).filter(|&c| {
            let n = self.tree.node(c);
            matches!(n.status, NodeStatus::Expanded | NodeStatus::Terminal)
                && self.tree.state(c).is_none_or(|s| s.hash64() == next.hash64())
        });
        let (tree, reused_evaluations) = match child {
            Some(c) => {
                let mut sub = self.tree.extract(c);
                let kept = sub.data.len() as u64;
                if sub.node(ROOT).data == NONE {
                    sub.set_data(
                        ROOT,
                        NodeData { state: next, dists: None, policy: None, outcome: None, hallucinations: 0 },
                    );
                } else {
                    let d = sub.node(ROOT).data as usize;
                    sub.data[d].state = next;
                }
                (sub, kept)
            }
            None => {
                let mut fresh = Tree::new(next);
                fresh.by_prior = self.params.style == SearchStyle::Lc0;
                (fresh, 0)
            }
        };
        let root_status_terminal = tree.state(ROOT).and_then(|s| s.outcome());
        self.tree = tree;
        // Two-fold draws whose earlier occurrence was the old root (or above it) are draws no more.
        revert_twofolds(&mut self.tree);
        if root_status_terminal.is_none() && self.tree.node(ROOT).status == NodeStatus::Terminal {
            // A draw by repetition below the root is a position to search once it is the root (lc0 makes the
            // new head non-terminal): only the rules' own ends stay terminal there.
            let r = self.tree.node_mut(ROOT);
            r.status = NodeStatus::Unexpanded;
            (r.visits, r.own, r.cycle, r.value_sum, r.moves_left_sum) = (0, 0, 0, 0.0, 0.0);
        }
        self.root_history.push(root_state);
        keep_last(&mut self.root_history);
        if let Some(outcome) = root_status_terminal {
            let r = self.tree.node_mut(ROOT);
            r.status = NodeStatus::Terminal;
            r.terminal_value = outcome.value_for(r.player) as f32;
        }
        self.root_ply += 1;
        self.pending_leaf.clear();
        // A policy's search never expanded below its root: the new root is evaluated afresh.
        self.policy_only = false;
        self.stats = MctsStats {
            reused_evaluations,
            reused_nodes: if reused_evaluations > 0 { self.tree.nodes.len() as u64 } else { 0 },
            ..MctsStats::default()
        };
        // The restriction named moves of the old root; the new root searches every move.
        self.params.root_moves.clear();
        let _ = self.restrict_root();
        self.refresh_root = self.tree.by_prior
            && self.tree.node(ROOT).status == NodeStatus::Expanded
            && self
                .tree
                .node_data(ROOT)
                .is_some_and(|d| d.dists.as_ref().is_none_or(|v| v.iter().all(Option::is_none)));
        Ok(reused_evaluations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::evaluator::Evaluator;
    use crate::inference::material::MaterialEvaluator;
    use crate::inference::material_net::MaterialNet;
    use crate::search::mcts::RunLimits;

    fn searched(state: &ChessState, sims: u64, b: usize, seed: u64) -> (Mcts<ChessState>, MaterialNet) {
        let mut net = MaterialNet::new(7);
        let mut mcts =
            Mcts::new(state.clone(), 0, MctsParams { seed, ..MctsParams::default() }).expect("params");
        mcts.run(&mut net, RunLimits { simulations: sims, batch_size: b }).expect("search");
        mcts.check_consistency().expect("consistent");
        (mcts, net)
    }

    fn policy_top(net: &mut MaterialNet, state: &ChessState) -> String {
        let r = net.evaluate(&[EvalRequest::values(state.clone())]).remove(0).expect("answer");
        let p = r.best_action.expect("a policy");
        let i = p.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i).expect("moves");
        r.moves[i].text.clone()
    }

    fn positions() -> Vec<ChessState> {
        [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnb1kbnr/pppp1ppp/8/4q3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 3",
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "8/5k2/8/8/3n4/8/1K6/7R b - - 0 60",
        ]
        .iter()
        .map(|f| ChessState::from_fen(f).expect("fen"))
        .collect()
    }

    #[test]
    fn a_network_with_a_position_outcome_is_searched_as_lc0_searches() {
        let s = ChessState::startpos();
        let (mcts, _) = searched(&s, 8, 1, 0);
        assert!(mcts.tree.by_prior, "auto style: an lc0-like answer makes an lc0 search");
        let mut material = MaterialEvaluator::new(1);
        let mut mav = Mcts::new(s.clone(), 0, MctsParams::default()).expect("params");
        mav.run(&mut material, RunLimits { simulations: 8, batch_size: 1 }).expect("search");
        assert!(!mav.tree.by_prior, "a MAV model keeps MAV-MCTS");
        let forced = MctsParams { style: SearchStyle::Mav, ..MctsParams::default() };
        let mut net = MaterialNet::new(7);
        let mut m = Mcts::new(s, 0, forced).expect("params");
        m.run(&mut net, RunLimits { simulations: 8, batch_size: 1 }).expect("search");
        assert!(!m.tree.by_prior, "the style can be forced");
    }

    #[test]
    fn repetitions_are_draws_as_lc0_counts_them() {
        let mcts = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("params");
        let mut line = vec![ChessState::startpos()];
        for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"] {
            let last = line.last().expect("a position");
            let next = last.play(last.parse_action(m).expect("legal")).expect("legal");
            line.push(next);
        }
        // The start position again 4 plies on: a two-fold draw when those plies are in the tree.
        assert_eq!(mcts.repetition_draw(&line[4], &line[..4], 4), Some(4));
        // Its earlier occurrence before the root (the leaf 3 plies deep): not a draw in the tree.
        assert_eq!(mcts.repetition_draw(&line[4], &line[..4], 3), None);
        // A third occurrence is a draw wherever the others were.
        assert_eq!(mcts.repetition_draw(&line[8], &line[..8], 1), Some(0));
        // A position seen once before is nothing when two-fold draws are off; a third still is.
        let mut off = MctsParams::default();
        off.lc0.two_fold_draws = false;
        let mcts = Mcts::new(ChessState::startpos(), 0, off).expect("params");
        assert_eq!(mcts.repetition_draw(&line[4], &line[..4], 4), None);
        assert_eq!(mcts.repetition_draw(&line[8], &line[..8], 1), Some(0));
        assert_eq!(mcts.repetition_draw(&line[3], &line[..3], 3), None, "a new position");
    }

    #[test]
    fn shuffling_kings_make_two_fold_draws_and_tree_reuse_undoes_the_stale_ones() {
        // Blocked pawns: only the kings move, so lines repeat early.
        let s = ChessState::from_fen("7k/8/8/p1p1p1p1/P1P1P1P1/8/8/7K w - - 0 1").expect("fen");
        let (mut mcts, mut net) = searched(&s, 600, 4, 3);
        assert!(mcts.tree.by_prior);
        let twofolds: Vec<u32> =
            (0..mcts.tree.nodes.len() as u32).filter(|&n| mcts.tree.node(n).cycle > 0).collect();
        assert!(!twofolds.is_empty(), "king shuffles repeat within 600 simulations");
        for &n in &twofolds {
            let node = mcts.tree.node(n);
            let depth = mcts.tree.depth(n);
            assert_eq!(node.status, NodeStatus::Terminal);
            assert!((node.terminal_value - 0.5).abs() < 1e-6, "a draw");
            assert!(depth >= 4 && depth >= u32::from(node.cycle), "depth {depth}, cycle {}", node.cycle);
        }
        // Play the most visited move: the draws that repeated the old root are undone, the tree stays
        // consistent, and the search goes on from there.
        let best = mcts.tree.node(ROOT).children().max_by_key(|&c| mcts.tree.node(c).visits).expect("moves");
        let action = mcts.tree.node(best).action.expect("a move");
        let under_best = |n: u32| {
            let mut up = n;
            while mcts.tree.node(up).parent != ROOT && mcts.tree.node(up).parent != NONE {
                up = mcts.tree.node(up).parent;
            }
            up == best
        };
        let stale = twofolds
            .iter()
            .filter(|&&n| under_best(n))
            .filter(|&&n| {
                let d = mcts.tree.depth(n) - 1;
                d < 4 || d < u32::from(mcts.tree.node(n).cycle)
            })
            .count();
        assert!(stale > 0, "some kept two-fold draws repeated the old root");
        mcts.advance(action).expect("advance");
        mcts.check_consistency().expect("consistent after reuse");
        for n in 0..mcts.tree.nodes.len() as u32 {
            let node = mcts.tree.node(n);
            if node.cycle > 0 {
                let depth = mcts.tree.depth(n);
                assert!(depth >= 4 && depth >= u32::from(node.cycle), "a stale two-fold draw kept");
            }
        }
        mcts.run(&mut net, RunLimits { simulations: 200, batch_size: 4 }).expect("search on");
        mcts.check_consistency().expect("consistent");
    }

    #[test]
    fn playing_into_a_third_repetition_leaves_a_root_to_search() {
        let mut line = vec![ChessState::startpos()];
        for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"] {
            let last = line.last().expect("a position");
            line.push(last.play(last.parse_action(m).expect("legal")).expect("legal"));
        }
        // The root: after 7 plies, Black to move; Ng8 brings the start position a third time.
        let mut mcts = Mcts::new(line[7].clone(), 7, MctsParams::default()).expect("params");
        mcts.set_root_history(line[..7].to_vec());
        let mut net = MaterialNet::new(7);
        mcts.run(&mut net, RunLimits { simulations: 400, batch_size: 1 }).expect("search");
        let back = line[7].parse_action("f6g8").expect("legal");
        let child = mcts.tree.child_by_action(ROOT, back).expect("the move");
        assert_eq!(mcts.tree.node(child).status, NodeStatus::Terminal, "a third occurrence is a draw");
        assert_eq!(mcts.tree.node(child).cycle, 0);
        mcts.advance(back).expect("advance");
        assert_ne!(mcts.tree.node(ROOT).status, NodeStatus::Terminal, "the new root is searched");
        mcts.check_consistency().expect("consistent");
        mcts.run(&mut net, RunLimits { simulations: 50, batch_size: 1 }).expect("search on");
        assert!(mcts.root_visits() > 0 && mcts.tree.node(ROOT).num_children > 0, "the root has moves");
    }

    #[test]
    fn reverting_a_two_fold_draw_takes_its_visits_off_the_path() {
        let s = ChessState::startpos();
        let mut t = Tree::new(s.clone());
        let m = s.legal_actions();
        t.add_children(ROOT, vec![(m[0], 1.0, f32::NAN)]);
        let mut node = t.node(ROOT).first_child;
        for &action in &m[1..4] {
            t.node_mut(node).status = NodeStatus::Expanded;
            t.add_children(node, vec![(action, 1.0, f32::NAN)]);
            node = t.node(node).first_child;
        }
        // A leaf 4 plies deep repeating the position 4 plies back (the root): a draw, visited 3 times.
        t.node_mut(node).status = NodeStatus::Terminal;
        t.node_mut(node).cycle = 4;
        for _ in 0..3 {
            backup(&mut t, node, 0.5, 4.0);
        }
        backup(&mut t, ROOT, 0.7, 30.0);
        assert_eq!(revert_twofolds(&mut t), 0, "still a draw at depth 4");
        let sub = t.extract(t.node(ROOT).first_child);
        let mut sub = sub;
        assert_eq!(revert_twofolds(&mut sub), 1, "at depth 3 its earlier occurrence is above the root");
        let leaf = (0..sub.nodes.len() as u32).find(|&n| sub.node(n).num_children == 0).expect("a leaf");
        assert_eq!(sub.node(leaf).status, NodeStatus::Unexpanded);
        assert_eq!((sub.node(leaf).visits, sub.node(leaf).cycle), (0, 0));
        assert_eq!(sub.node(ROOT).visits, 0, "the draws were all its visits");
        assert!(sub.node(ROOT).value_sum.abs() < 1e-12);
        assert!(sub.node(ROOT).moves_left_sum.abs() < 1e-12, "their moves left too");
    }

    #[test]
    fn root_noise_moves_the_root_priors_and_is_reproducible() {
        let s = ChessState::startpos();
        let priors = |eps: f64, seed: u64| {
            let mut params = MctsParams { seed, ..MctsParams::default() };
            params.lc0.noise_epsilon = eps;
            let mut mcts = Mcts::new(s.clone(), 0, params).expect("params");
            let mut net = MaterialNet::new(7);
            mcts.run(&mut net, RunLimits { simulations: 64, batch_size: 1 }).expect("search");
            mcts.tree.node(ROOT).children().map(|c| mcts.tree.node(c).prior).collect::<Vec<f32>>()
        };
        let plain = priors(0.0, 1);
        let noisy = priors(0.25, 1);
        assert_ne!(plain, noisy, "ε = 0.25 moves the root's priors");
        assert!(noisy.iter().zip(&plain).all(|(n, p)| *n >= 0.75 * p - 1e-6), "at least (1 − ε) of each");
        assert!((noisy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert_eq!(priors(0.25, 1), noisy, "the same seed, the same noise");
        assert_ne!(priors(0.25, 2), noisy, "another seed, other noise");
        assert_eq!(priors(0.0, 2), plain, "without noise the seed does not matter to the priors");
    }

    #[test]
    fn one_simulation_plays_the_policy_top_move() {
        for s in positions() {
            let (mcts, mut net) = searched(&s, 1, 1, 0);
            let best = mcts.best_action().map(|a| s.action_to_text(a));
            assert_eq!(best, Some(policy_top(&mut net, &s)), "{}", s.to_text());
        }
    }

    #[test]
    fn one_network_row_per_expanded_node_and_the_position_value_backed_up() {
        let s = ChessState::startpos();
        let (mcts, net) = searched(&s, 40, 1, 0);
        let st = mcts.stats();
        // The root's moves are all valued (for display); below it one row per new node.
        assert_eq!(net.rows, 1 + 20 + (st.simulations - st.terminal_simulations));
        assert_eq!(st.model_calls, 1 + st.simulations - st.terminal_simulations);
        // A leaf's backed-up value is its own position's expected score.
        let t = &mcts.tree;
        let leaf = (1..t.nodes.len() as u32)
            .find(|&i| t.node(i).visits == 1 && t.node(i).status == NodeStatus::Expanded)
            .expect("a leaf");
        let [w, d, _] = net.wdl(t.state(leaf).expect("evaluated"));
        assert!((t.node(leaf).value_sum - (w + d / 2.0)).abs() < 1e-12);
        // Priors: the policy at lc0's temperature.
        let children: Vec<u32> = t.node(ROOT).children().collect();
        let logits: Vec<f64> = children
            .iter()
            .map(|&c| net.logit(&s, t.node(c).action.expect("a move")) / mcts.params.lc0.policy_temperature)
            .collect();
        let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = logits.iter().map(|l| (l - max).exp()).sum();
        for (&c, l) in children.iter().zip(&logits) {
            assert!((f64::from(t.node(c).prior) - (l - max).exp() / z).abs() < 1e-6);
        }
    }

    #[test]
    fn batched_searches_are_reproducible_and_find_the_winning_capture() {
        let s = ChessState::from_fen("rnb1kbnr/pppp1ppp/8/4q3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 3")
            .expect("fen");
        let visits = |m: &Mcts<ChessState>| -> Vec<u32> {
            m.tree.node(ROOT).children().map(|c| m.tree.node(c).visits).collect()
        };
        let (a, _) = searched(&s, 300, 8, 5);
        let (b, _) = searched(&s, 300, 8, 5);
        assert_eq!(visits(&a), visits(&b));
        assert!(a.stats().simulations >= 300);
        assert_eq!(a.best_action().map(|m| s.action_to_text(m)).as_deref(), Some("d4e5"));
        // Every pending visit's count is gone once the batch is back.
        assert_eq!(a.virtual_count_total(), 0);
    }

    #[test]
    fn a_reused_root_gets_its_moves_valued_again_and_keeps_its_statistics() {
        let s = ChessState::startpos();
        let (mut mcts, mut net) = searched(&s, 200, 4, 0);
        let best = mcts.best_action().expect("a move");
        mcts.advance(best).expect("advance");
        let root = mcts.tree.node(ROOT).clone();
        assert!(root.visits > 0, "the subtree was kept");
        let unvalued =
            |d: &NodeData<ChessState>| d.dists.as_ref().is_none_or(|v| v.iter().all(Option::is_none));
        assert!(mcts.tree.node_data(ROOT).is_some_and(unvalued), "evaluated for its position only");
        let rows = net.rows;
        mcts.run(&mut net, RunLimits { simulations: 1, batch_size: 1 }).expect("search");
        mcts.check_consistency().expect("consistent");
        let data = mcts.tree.node_data(ROOT).expect("data");
        let n = mcts.tree.node(ROOT).num_children as usize;
        assert!(data.dists.as_ref().is_some_and(|d| d.len() == n && d.iter().all(Option::is_some)));
        assert!(data.policy.as_ref().is_some_and(|p| p.iter().all(Option::is_some)));
        assert!(mcts.tree.node(ROOT).children().all(|c| !mcts.tree.node(c).model_value.is_nan()));
        assert_eq!(mcts.tree.node(ROOT).visits, root.visits + 1, "one more simulation, nothing reset");
        assert!(net.rows >= rows + 1 + n as u64, "the refresh valued every move");
        // Once only.
        let rows = net.rows;
        mcts.run(&mut net, RunLimits { simulations: 1, batch_size: 1 }).expect("search");
        assert!(net.rows <= rows + 1);
    }

    #[test]
    fn a_new_style_mid_search_drops_the_answers_out() {
        let s = ChessState::startpos();
        let mut net = MaterialNet::new(7);
        let mut mcts = Mcts::new(s, 0, MctsParams::default()).expect("params");
        mcts.run(&mut net, RunLimits { simulations: 4, batch_size: 1 }).expect("search");
        let out = mcts.select_batch(4);
        assert!(!out.evals.is_empty());
        mcts.set_params(MctsParams { style: SearchStyle::Mav, ..MctsParams::default() }).expect("restyled");
        assert!(!mcts.searches_as_lc0() && mcts.root_awaits_evaluation(), "a fresh tree");
        mcts.run(&mut net, RunLimits { simulations: 4, batch_size: 1 }).expect("search");
        let fresh = mcts.select_batch(4);
        let requests: Vec<_> = out.evals.iter().map(|e| e.request.clone()).collect();
        for (e, r) in out.evals.iter().zip(net.evaluate(&requests)) {
            assert_eq!(mcts.complete(e.ticket, r), Completion::Discarded, "an old ticket is not a new one");
        }
        assert!(fresh.evals.iter().all(|e| out.evals.iter().all(|o| o.ticket != e.ticket)));
        mcts.abandon_all();
        mcts.check_consistency().expect("consistent");
        // The same style again keeps the tree.
        let before = mcts.tree_size();
        mcts.set_params(MctsParams { style: SearchStyle::Mav, seed: 9, ..MctsParams::default() })
            .expect("same");
        assert_eq!(mcts.tree_size(), before);
    }

    #[test]
    fn a_bad_capture_is_refuted_by_search() {
        // The policy loves Qxd7+ (a pawn and a check); the king takes the queen back. Searched, it is avoided.
        let s = ChessState::from_fen("rnbqkbnr/pp1ppppp/8/2p5/8/4P3/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
            .expect("fen");
        let s = s.play(s.parse_action("d1g4").expect("legal")).expect("play");
        let s = s.play(s.parse_action("a7a6").expect("legal")).expect("play");
        let (one, mut net) = searched(&s, 1, 1, 0);
        let top = policy_top(&mut net, &s);
        assert_eq!(top, "g4d7");
        assert_eq!(one.best_action().map(|a| s.action_to_text(a)).as_deref(), Some("g4d7"));
        let (deep, _) = searched(&s, 400, 4, 0);
        assert_ne!(deep.best_action().map(|a| s.action_to_text(a)).as_deref(), Some("g4d7"));
    }
}
