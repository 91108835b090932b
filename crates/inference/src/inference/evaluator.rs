//! The narrow interface between search and models: a batch of [`EvalRequest`]s in, one result per request
//! out. Search never sees a tensor; every backend (ONNX formats, caches, mocks in tests) implements
//! [`Evaluator`].

use std::time::Duration;

use crate::game::{GameState, Outcome};
use crate::mav::buckets::ValueDistribution;

pub use crate::mav::command::TopK;
pub use crate::mav::scoring::Scoring;

/// How a text model decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecodeMode {
    /// The rules give the legal moves; the model picks their order and values but cannot hallucinate.
    #[default]
    Constrained,
    /// No masking: the model is its own world model; what it gets wrong is reported as hallucinations.
    Free,
}

/// One evaluation: a position, what to ask for and how.
#[derive(Debug, Clone)]
pub struct EvalRequest<S: GameState> {
    /// The position to evaluate.
    pub state: S,
    /// For state tracking: the previous position and the action that led here. A model that tracks state
    /// is then shown only these and predicts the current state itself (see `EvalResult::tracked_state`);
    /// `state` stays the rules' answer, against which hallucinations are classified.
    pub previous: Option<(S, S::Action)>,
    /// The positions of the game before `state`, oldest first, as far as they are known (empty when they are
    /// not). A model that reads history (an lc0 network: the last seven, for its repetition and history
    /// planes) is shown them; the others ignore them.
    pub history: Vec<S>,
    /// How many moves.
    pub top_k: TopK,
    /// How a text model decodes.
    pub mode: DecodeMode,
    /// Also ask for the best action (a distribution over the moves).
    pub want_best_action: bool,
    /// Also ask for the state after the best action (`%best_action` followed by the state line).
    pub want_next_state: bool,
    /// Ask only for what an AlphaZero-style search reads at a node: the position's own outcome
    /// ([`EvalResult::position`]) and the policy over its legal moves ([`EvalResult::best_action`]), the moves
    /// listed without values. A network that values a position (lc0's) then runs one row instead of one per
    /// move; a model that values every move in one pass answers as usual.
    pub position_only: bool,
}

impl<S: GameState> EvalRequest<S> {
    /// A request for every move's value in `state`, constrained decoding, nothing else.
    pub fn values(state: S) -> EvalRequest<S> {
        EvalRequest {
            state,
            previous: None,
            history: Vec::new(),
            top_k: TopK::All,
            mode: DecodeMode::Constrained,
            want_best_action: false,
            want_next_state: false,
            position_only: false,
        }
    }
}

/// A move and the model's value distribution for it, from the perspective of the player to move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveValue<A> {
    /// The move.
    pub action: A,
    /// The move as the model wrote it.
    pub text: String,
    /// Its win-probability distribution over the model's buckets; `None` from a model that gives no values
    /// (a behavioural-cloning policy: its probabilities are the result's `best_action`).
    pub dist: Option<ValueDistribution>,
}

impl<A> MoveValue<A> {
    /// A move with the model's value distribution for it.
    pub fn valued(action: A, text: String, dist: ValueDistribution) -> MoveValue<A> {
        MoveValue { action, text, dist: Some(dist) }
    }

    /// Its value under a scoring rule; `None` from a model that gives no values.
    pub fn value(&self, scoring: Scoring) -> Option<f64> {
        self.dist.as_ref().map(|d| scoring.value(d))
    }

    /// Orders moves best first by mean value (the order one-pass evaluators list them in); unvalued last.
    pub fn by_mean_value(x: &MoveValue<A>, y: &MoveValue<A>) -> std::cmp::Ordering {
        let key = |m: &MoveValue<A>| m.value(Scoring::Mean).unwrap_or(f64::NEG_INFINITY);
        key(y).total_cmp(&key(x))
    }
}

/// Something a model wrote that is wrong by the rules (free decoding), kept as data for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hallucination {
    /// Its class (`illegal move`, `duplicate move`, `missing legal moves`, `wrong next state`, ...).
    pub kind: String,
    /// What exactly, for the user.
    pub detail: String,
}

/// The state a model predicts after its best action.
#[derive(Debug, Clone)]
pub struct PredictedState<S> {
    /// As written.
    pub text: String,
    /// Parsed, when it is a valid state.
    pub state: Option<S>,
}

/// Where the time of one evaluation went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvalTiming {
    /// Waiting in a queue before the model ran.
    pub queue: Duration,
    /// This request's share of the model calls.
    pub model: Duration,
    /// Tokens processed (prompt + generated) for text models; input tokens otherwise.
    pub tokens: usize,
}

/// What a model says of the position itself, beside its moves (a network with a win/draw/loss head:
/// Leela's, Maia's), for the side to move.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PositionOutcome {
    /// Win, draw and loss shares, summing to 1.
    pub wdl: [f64; 3],
    /// The moves left in the game, when the network predicts them.
    pub moves_left: Option<f64>,
}

/// What a model said about one position.
#[derive(Debug, Clone)]
pub struct EvalResult<S: GameState> {
    /// The moves it valued, in the order it wrote them (only moves legal in the requested state).
    pub moves: Vec<MoveValue<S::Action>>,
    /// The best-action distribution over `moves` (same order), when asked and supported.
    pub best_action: Option<Vec<f64>>,
    /// The state after the best action, as the model predicts it (when `want_next_state` was asked).
    pub next_state: Option<PredictedState<S>>,
    /// State tracking: when the request gave `previous`, the state the model says that action led to (its
    /// own reconstruction of the current state, as in the paper's Figure 1). This is what a learned world
    /// model expands; `None` when the request had no `previous` or the model does not track state.
    pub tracked_state: Option<PredictedState<S>>,
    /// A terminal result, when the position is over (by the rules, or as the model says in free mode).
    pub terminal: Option<Outcome>,
    /// The raw generated text (text models); empty otherwise.
    pub raw_text: String,
    /// What the model got wrong by the rules (free decoding).
    pub hallucinations: Vec<Hallucination>,
    /// Timing.
    pub timing: EvalTiming,
    /// The model's outcome for the position itself, when it gives one (an lc0 network); boxed, as few
    /// models give it.
    pub position: Option<Box<PositionOutcome>>,
}

impl<S: GameState> EvalResult<S> {
    /// A result holding move values (and the terminal result) only: no best action, no predicted states,
    /// no text, no timing — what a one-pass evaluator fills in further.
    pub fn values(moves: Vec<MoveValue<S::Action>>, terminal: Option<Outcome>) -> EvalResult<S> {
        EvalResult {
            moves,
            best_action: None,
            next_state: None,
            tracked_state: None,
            terminal,
            raw_text: String::new(),
            hallucinations: Vec::new(),
            timing: EvalTiming::default(),
            position: None,
        }
    }
}

impl<S: GameState> EvalResult<S> {
    /// Whether the model valued the moves; `false` for a policy without values (behavioural cloning), whose
    /// probabilities are [`EvalResult::best_action`].
    pub fn has_values(&self) -> bool {
        self.moves.iter().any(|m| m.dist.is_some())
    }

    /// What ranks each move (in `moves`' order): its value under `scoring`, or, from a model without
    /// values, the policy's probability; `None` for a move with neither.
    pub fn ranking_scores(&self, scoring: Scoring) -> Vec<Option<f64>> {
        if self.has_values() {
            return self.moves.iter().map(|m| m.value(scoring)).collect();
        }
        (0..self.moves.len()).map(|i| self.best_action.as_ref().and_then(|p| p.get(i).copied())).collect()
    }

    /// The move the model prefers: the highest value under `scoring`, or from a model without values the
    /// policy's most likely move; with the number that ranked it.
    pub fn best_by(&self, scoring: Scoring) -> Option<(S::Action, f64)> {
        self.moves
            .iter()
            .zip(self.ranking_scores(scoring))
            .filter_map(|(m, v)| v.map(|v| (m.action, v)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// What an evaluator gives for one request: its result or the error that stopped it.
pub type EvalAnswer<S> = Result<EvalResult<S>, EvalError>;

/// Why an evaluation failed (as opposed to a model saying something wrong, which is data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// This model cannot do what was asked (e.g. free decoding on an encoder).
    #[error("this model cannot {what}: {why}")]
    Unsupported {
        /// What was asked.
        what: String,
        /// Why not, and what can.
        why: String,
    },
    /// The prompt would not fit the model's context.
    #[error("the prompt needs {needed} tokens but the model's context is {context}")]
    ContextTooLong {
        /// Tokens needed.
        needed: usize,
        /// The model's context length.
        context: usize,
    },
    /// The backend failed (ONNX Runtime error, worker gone).
    #[error("inference failed: {0}")]
    Backend(String),
    /// The inference server of a remote package failed: it could not be reached, did not answer in time,
    /// answered with an error status or with something that is not the model's output. The text is the
    /// [`crate::inference::remote::RemoteError`]'s, which names the server and what went wrong.
    #[error("the model server failed: {0}")]
    Server(String),
}

/// A model (or a decorator around one) that evaluates batches of positions.
/// Anything that values moves is an evaluator: an ONNX model, a model server, or a few lines of Rust.
///
/// ```
/// use mavboard_inference::game::GameState;
/// use mavboard_inference::game::connect_four::ConnectFourState;
/// use mavboard_inference::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator, MoveValue};
/// use mavboard_inference::mav::buckets::{Buckets, ValueDistribution};
///
/// /// A model that likes the centre: each Connect Four column's win probability falls off with its distance
/// /// from column 4, as a distribution peaked in one of 64 buckets.
/// struct Centre;
///
/// impl Evaluator<ConnectFourState> for Centre {
///     fn evaluate(
///         &mut self,
///         requests: &[EvalRequest<ConnectFourState>],
///     ) -> Vec<Result<EvalResult<ConnectFourState>, EvalError>> {
///         let buckets = Buckets::mav();
///         requests
///             .iter()
///             .map(|r| {
///                 let moves = r
///                     .state
///                     .legal_actions()
///                     .into_iter()
///                     .map(|a| {
///                         let p = 0.8 - 0.1 * (a.index() as f64 - 3.0).abs();
///                         let mut probs = vec![0.0; buckets.k() as usize];
///                         probs[((p * 63.0).round()) as usize] = 1.0;
///                         let dist = ValueDistribution::from_probs(buckets, probs).expect("sums to 1");
///                         MoveValue::valued(a, r.state.action_to_text(a), dist)
///                     })
///                     .collect();
///                 Ok(EvalResult::values(moves, r.state.outcome()))
///             })
///             .collect()
///     }
/// }
///
/// let request = EvalRequest::values(ConnectFourState::default());
/// let result = Centre.evaluate(&[request]).remove(0).expect("evaluated");
/// assert_eq!(result.moves.len(), 7);
/// ```
pub trait Evaluator<S: GameState> {
    /// Evaluates a batch; the result at index i answers request i.
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>>;
}
