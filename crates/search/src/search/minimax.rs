//! Explicit minimax over model calls: the search that the paper's internal search (§4, Figure 6) writes out
//! as text, run here with one model call per node so its tree can be shown, compared with the model's own
//! trace, or written as training data by the MAV trace writer.
//!
//! Breadth b, depth d: the root is evaluated; at each node above depth d the b moves with the best model
//! values (under the chosen scoring; equal values keep the model's order) are expanded and their positions
//! evaluated; a node at depth d (a leaf) is worth the best of its own move values, an inner node the best of
//! its children's values seen from its side (1 − the child's value), a terminal position its exact result.
//! Depth 0 is the model alone. Calls are batched per level: d + 1 calls of `evaluate`, with
//! 1, b, b², … requests.
//!
//! The result is a tree of [`MinimaxNode`]s in the order the trace is written (depth first, children in
//! expansion order): each node holds its state, the move and previous state that led to it, its whole
//! evaluation (the model's moves with their distributions, best action, predicted state, hallucinations, or
//! the terminal result, or why it failed), its children, its backed-up value and its decision.

use crate::game::{GameState, Outcome, Player};
use crate::inference::evaluator::{DecodeMode, EvalRequest, EvalResult, Evaluator, Scoring, TopK};
use crate::search::SearchError;
use crate::search::mcts::WorldModel;

/// Minimax settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MinimaxParams {
    /// b: moves expanded per node (≥ 1).
    pub breadth: usize,
    /// d: plies expanded below the root (0 = the model alone).
    pub depth: u32,
    /// Which value each move contributes.
    pub scoring: Scoring,
    /// Rules or the model's predicted states.
    pub world_model: WorldModel,
    /// How many moves each request asks for.
    pub request_top_k: TopK,
    /// Decoding in the rules world model (the learned world model always decodes freely).
    pub decode: DecodeMode,
    /// Ask for the best action too (the trace shows `%best_action`).
    pub want_best_action: bool,
}

impl Default for MinimaxParams {
    fn default() -> Self {
        MinimaxParams {
            breadth: 3,
            depth: 1,
            scoring: Scoring::Mean,
            world_model: WorldModel::Rules,
            request_top_k: TopK::All,
            decode: DecodeMode::Constrained,
            want_best_action: true,
        }
    }
}

/// What a node's evaluation gave.
#[derive(Debug, Clone)]
pub enum NodeEvaluation<S: GameState> {
    /// The model's answer (kept whole: moves, distributions, best action, predicted state, hallucinations).
    Model(EvalResult<S>),
    /// The game is over here by the rules (no model call).
    Terminal(Outcome),
    /// The evaluation failed or its answer is unusable; the node takes no part in the decision.
    Failed(String),
}

/// Where a node's decision points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionSource {
    /// Index into the node's `children` (inner node).
    Child(usize),
    /// Index into the node's evaluation's `moves` (leaf: the model's best move there).
    Move(usize),
}

/// The move a node chooses and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision<A> {
    /// The move.
    pub action: A,
    /// The move in the game's notation.
    pub text: String,
    /// Its value for the player to move at the node (a win probability).
    pub value: f64,
    /// Where it comes from.
    pub source: DecisionSource,
}

/// One node of the minimax tree.
#[derive(Debug, Clone)]
pub struct MinimaxNode<S: GameState> {
    /// The moves from the root to here, as texts (`[]` at the root; the trace's `<root g3d6>` label).
    pub path: Vec<String>,
    /// The move from the parent.
    pub action: Option<S::Action>,
    /// The parent's state and the move: the `%prev_state` / `%prev_action` of a state-tracking prompt.
    pub previous: Option<(S, S::Action)>,
    /// The node's state: by the rules, or as the model predicted it (learned world model; for a failed
    /// prediction, the rules' state).
    pub state: S,
    /// The player to move here.
    pub player: Player,
    /// Plies below the root.
    pub depth: u32,
    /// The evaluation.
    pub evaluation: NodeEvaluation<S>,
    /// The expanded children, best model value first.
    pub children: Vec<MinimaxNode<S>>,
    /// The backed-up value for `player` (`None` for a failed node).
    pub value: Option<f64>,
    /// The chosen move (`None` at failed and terminal nodes).
    pub decision: Option<Decision<S::Action>>,
}

impl<S: GameState> MinimaxNode<S> {
    /// Nodes in the subtree (this one included).
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(MinimaxNode::count).sum::<usize>()
    }
}

/// The outcome of a minimax search.
#[derive(Debug, Clone)]
pub struct MinimaxResult<S: GameState> {
    /// The tree.
    pub root: MinimaxNode<S>,
    /// The move chosen at the root.
    pub best: Option<S::Action>,
    /// The root's backed-up value for the player to move.
    pub value: Option<f64>,
    /// Model requests made.
    pub model_calls: u64,
    /// Hallucinations reported over all evaluations.
    pub hallucinations: u64,
}

/// A node under construction.
struct Slot<S: GameState> {
    path: Vec<String>,
    action: Option<S::Action>,
    previous: Option<(S, S::Action)>,
    state: S,
    player: Player,
    depth: u32,
    evaluation: Option<NodeEvaluation<S>>,
    children: Vec<usize>,
}

/// Runs minimax from `root` (see the module documentation).
pub fn minimax<S: GameState, E: Evaluator<S> + ?Sized>(
    evaluator: &mut E,
    root: S,
    params: &MinimaxParams,
) -> Result<MinimaxResult<S>, SearchError> {
    if params.breadth == 0 {
        return Err(SearchError::InvalidParam { name: "breadth", why: "b must be at least 1".into() });
    }
    let mut slots: Vec<Slot<S>> = vec![Slot {
        path: Vec::new(),
        action: None,
        previous: None,
        player: root.to_move(),
        state: root,
        depth: 0,
        evaluation: None,
        children: Vec::new(),
    }];
    let mut counts = Counts { model_calls: 0, hallucinations: 0 };
    let mut level: Vec<usize> = vec![0];
    for depth in 0..=params.depth {
        evaluate_level(evaluator, &mut slots, &level, params, &mut counts)?;
        if depth == params.depth {
            break;
        }
        let next = expand_level(&mut slots, &level, params, depth);
        if next.is_empty() {
            break;
        }
        level = next;
    }
    let root = build(&mut slots, 0, params.scoring);
    Ok(MinimaxResult {
        best: root.decision.as_ref().map(|d| d.action),
        value: root.value,
        root,
        model_calls: counts.model_calls,
        hallucinations: counts.hallucinations,
    })
}

/// Model requests made and hallucinations reported so far.
struct Counts {
    model_calls: u64,
    hallucinations: u64,
}

/// Evaluates one level's slots: terminal states by the rules, the rest in one batch; a failed or unusable
/// root evaluation is an error.
fn evaluate_level<S: GameState, E: Evaluator<S> + ?Sized>(
    evaluator: &mut E,
    slots: &mut [Slot<S>],
    level: &[usize],
    params: &MinimaxParams,
    counts: &mut Counts,
) -> Result<(), SearchError> {
    let learned = params.world_model == WorldModel::Learned;
    let (asked, requests) = level_requests(slots, level, params);
    if requests.is_empty() {
        return Ok(());
    }
    counts.model_calls += requests.len() as u64;
    let results = evaluator.evaluate(&requests);
    let mut results = results.into_iter();
    for &i in &asked {
        let r = results.next().unwrap_or_else(|| {
            Err(crate::inference::evaluator::EvalError::Backend(
                "the evaluator returned fewer results than requests".into(),
            ))
        });
        let eval = match r {
            Err(e) if i == 0 => return Err(SearchError::RootEvaluation(e)),
            Err(e) => NodeEvaluation::Failed(e.to_string()),
            Ok(r) => {
                counts.hallucinations += r.hallucinations.len() as u64;
                accept(&mut slots[i], r, learned)
            }
        };
        if let (0, NodeEvaluation::Failed(why)) = (i, &eval) {
            return Err(SearchError::RootUnusable(why.clone()));
        }
        slots[i].evaluation = Some(eval);
    }
    Ok(())
}

/// The requests for a level's slots that need the model, with their slots; terminal states (rules world
/// model) are valued by the rules on the way.
fn level_requests<S: GameState>(
    slots: &mut [Slot<S>],
    level: &[usize],
    params: &MinimaxParams,
) -> (Vec<usize>, Vec<EvalRequest<S>>) {
    let learned = params.world_model == WorldModel::Learned;
    let mut asked: Vec<usize> = Vec::new();
    let mut requests: Vec<EvalRequest<S>> = Vec::new();
    for &i in level {
        if slots[i].evaluation.is_some() {
            continue;
        }
        if !learned && let Some(o) = slots[i].state.outcome() {
            slots[i].evaluation = Some(NodeEvaluation::Terminal(o));
            continue;
        }
        let s = &slots[i];
        requests.push(EvalRequest {
            state: s.state.clone(),
            previous: if learned { s.previous.clone() } else { None },
            history: Vec::new(),
            top_k: params.request_top_k,
            mode: if learned { DecodeMode::Free } else { params.decode },
            want_best_action: params.want_best_action,
            want_next_state: false,
            position_only: false,
        });
        asked.push(i);
    }
    (asked, requests)
}

/// Expands a level's evaluated nodes (at `depth`): each gets its b best moves by model value as children;
/// returns the new slots.
fn expand_level<S: GameState>(
    slots: &mut Vec<Slot<S>>,
    level: &[usize],
    params: &MinimaxParams,
    depth: u32,
) -> Vec<usize> {
    let mut next = Vec::new();
    for &i in level {
        let Some(NodeEvaluation::Model(r)) = &slots[i].evaluation else { continue };
        let mut ranked: Vec<(f64, usize)> =
            r.moves.iter().enumerate().filter_map(|(k, m)| Some((m.value(params.scoring)?, k))).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let chosen: Vec<S::Action> =
            ranked.iter().take(params.breadth).map(|&(_, k)| r.moves[k].action).collect();
        for a in chosen {
            let child = child_slot(&slots[i], a, depth + 1);
            slots.push(child);
            let c = slots.len() - 1;
            slots[i].children.push(c);
            next.push(c);
        }
    }
    next
}

/// The slot of `parent`'s child after move `a`, at `depth` (failed if the rules refuse the move).
fn child_slot<S: GameState>(parent: &Slot<S>, a: S::Action, depth: u32) -> Slot<S> {
    let text = parent.state.action_to_text(a);
    let mut path = parent.path.clone();
    path.push(text);
    let (state, evaluation) = match parent.state.play(a) {
        Ok(s) => (s, None),
        Err(e) => (parent.state.clone(), Some(NodeEvaluation::Failed(e.to_string()))),
    };
    Slot {
        path,
        action: Some(a),
        previous: Some((parent.state.clone(), a)),
        player: parent.player.other(),
        state,
        depth,
        evaluation,
        children: Vec::new(),
    }
}

/// Takes a model answer for a slot: in the learned world model the predicted state replaces the rules' one.
fn accept<S: GameState>(slot: &mut Slot<S>, r: EvalResult<S>, learned: bool) -> NodeEvaluation<S> {
    if learned && slot.previous.is_some() {
        match r.tracked_state.as_ref().and_then(|n| n.state.clone()) {
            Some(s) => slot.state = s,
            None => {
                let text = r.tracked_state.as_ref().map_or("", |n| n.text.as_str()).to_owned();
                return NodeEvaluation::Failed(format!(
                    "the model gave no valid state after the move (wrote {text:?})"
                ));
            }
        }
    }
    if learned && let Some(o) = r.terminal {
        return NodeEvaluation::Terminal(o);
    }
    if r.moves.is_empty() {
        return NodeEvaluation::Failed("the model listed no moves and no result".into());
    }
    NodeEvaluation::Model(r)
}

/// Turns the slots into the nested tree, backing values up.
fn build<S: GameState>(slots: &mut [Slot<S>], i: usize, scoring: Scoring) -> MinimaxNode<S> {
    let child_ids = std::mem::take(&mut slots[i].children);
    let children: Vec<MinimaxNode<S>> = child_ids.iter().map(|&c| build(slots, c, scoring)).collect();
    let s = &mut slots[i];
    let evaluation = s.evaluation.take().unwrap_or(NodeEvaluation::Failed("never evaluated".into()));
    let (value, decision) = match &evaluation {
        NodeEvaluation::Failed(_) => (None, None),
        NodeEvaluation::Terminal(o) => (Some(o.value_for(s.player)), None),
        NodeEvaluation::Model(r) => {
            let from_children = children
                .iter()
                .enumerate()
                .filter_map(|(k, c)| Some((1.0 - c.value?, k, c.action?)))
                .fold(None, |best: Option<(f64, usize, S::Action)>, x| match best {
                    Some(b) if b.0 >= x.0 => Some(b),
                    _ => Some(x),
                });
            match from_children {
                Some((v, k, a)) => (
                    Some(v),
                    Some(Decision {
                        action: a,
                        text: s.state.action_to_text(a),
                        value: v,
                        source: DecisionSource::Child(k),
                    }),
                ),
                None => {
                    let best =
                        r.moves.iter().enumerate().filter_map(|(k, m)| Some((m.value(scoring)?, k))).fold(
                            None,
                            |best: Option<(f64, usize)>, x| match best {
                                Some(b) if b.0 >= x.0 => Some(b),
                                _ => Some(x),
                            },
                        );
                    match best {
                        Some((v, k)) => (
                            Some(v),
                            Some(Decision {
                                action: r.moves[k].action,
                                text: s.state.action_to_text(r.moves[k].action),
                                value: v,
                                source: DecisionSource::Move(k),
                            }),
                        ),
                        None => (None, None),
                    }
                }
            }
        }
    };
    MinimaxNode {
        path: std::mem::take(&mut s.path),
        action: s.action,
        previous: s.previous.take(),
        state: s.state.clone(),
        player: s.player,
        depth: s.depth,
        evaluation,
        children,
        value,
        decision,
    }
}
