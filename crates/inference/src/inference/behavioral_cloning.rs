//! The `behavioral-cloning` evaluator (Ruoss et al. 2024, the behavioural-cloning predictor): a policy, not
//! a value — one row of the 77 state tokens of a FEN, a log-probability for each of the 1968 actions
//! (mav.json `av_action_vocab_size`, in the package's `av_action_order`). As the authors' `BCEngine` does,
//! the legal moves' log-probabilities are renormalised over the legal moves alone (a softmax of those
//! entries). A result has no values: every move's `dist` is `None` and its probability is the result's
//! `best_action` (same order), the moves most likely first. Every request of a batch is one row of one
//! model call; free decoding and state prediction are refused, as for the other one-pass formats.

use std::collections::HashMap;
use std::time::Duration;

use ndarray::Array2;

use super::answers::BatchAnswers;
use super::backend::TensorBackend;
use super::evaluator::{EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, MoveValue, TopK};
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use crate::game::{GameKind, GameState};
use crate::mav::searchless::{STATE_LEN, tokenize_fen};
use crate::model::ModelPackage;

/// The games a behavioural-cloning model plays: chess, standard or Chess960 (the FEN carries the castling
/// rights either way). Requests of any other game are refused by name.
pub const GAMES: [GameKind; 2] = [GameKind::Chess, GameKind::Chess960];

/// A request of a batch that needs the model: its index, and its legal moves with their action ids.
type Job<S> = (usize, Vec<(<S as GameState>::Action, u32)>);

/// A `behavioral-cloning` model on one backend.
#[derive(Debug)]
pub struct PolicyEvaluator {
    backend: Box<dyn TensorBackend>,
    actions: HashMap<String, u32>,
    /// Summed time inside the backend's runs.
    pub model_time: Duration,
}

impl PolicyEvaluator {
    /// Opens the package's model.onnx (its graph is checked against mav.json when the session opens).
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<PolicyEvaluator, SessionError> {
        Self::with_backend(package, || OnnxBackend::boxed(package, options))
    }

    /// The package's model on the backend `open_backend` opens once mav.json is checked (the state length
    /// and the action vocabulary, as for action-value).
    pub fn with_backend(
        package: &ModelPackage,
        open_backend: impl FnOnce() -> Result<Box<dyn TensorBackend>, SessionError>,
    ) -> Result<PolicyEvaluator, SessionError> {
        let actions = super::action_value::checked_actions(package)?;
        let backend = open_backend()?;
        Ok(PolicyEvaluator { backend, actions, model_time: Duration::ZERO })
    }

    /// Where the model runs.
    pub fn status(&self) -> &super::device::DeviceStatus {
        self.backend.status()
    }
}

/// The softmax of `logits` (log-probabilities over some actions): their probabilities renormalised to sum
/// to one, as the authors' `log_softmax` over the legal actions; `None` when an entry is not finite or all
/// are −∞.
pub fn renormalised(logits: &[f32]) -> Option<Vec<f64>> {
    let top = logits.iter().copied().map(f64::from).fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() || logits.iter().any(|l| l.is_nan() || *l == f32::INFINITY) {
        return None;
    }
    let exp: Vec<f64> = logits.iter().map(|&l| (f64::from(l) - top).exp()).collect();
    let sum: f64 = exp.iter().sum();
    Some(exp.into_iter().map(|e| e / sum).collect())
}

/// Generic over the game, as the other searchless evaluators: the input is the position's text (a FEN) and
/// the moves' text (UCI); requests of a game outside [`GAMES`] are refused by name.
impl<S: GameState> Evaluator<S> for PolicyEvaluator {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = BatchAnswers::new(requests.len());
        // (request, its row, its legal moves with their action ids).
        let mut jobs: Vec<Job<S>> = Vec::new();
        let mut rows: Vec<Vec<u32>> = Vec::new();
        for (i, r, moves) in out.screen(requests, "behavioral-cloning", &GAMES) {
            let ids = match tokenize_fen(&r.state.to_text()) {
                Ok(ids) => ids,
                Err(e) => {
                    out[i] = Some(Err(EvalError::Unsupported {
                        what: "score this position".into(),
                        why: format!("the behavioral-cloning input has no room for it: {e}"),
                    }));
                    continue;
                }
            };
            let mut with_ids = Vec::with_capacity(moves.len());
            for a in moves {
                let text = r.state.action_to_text(a);
                match self.actions.get(&text) {
                    Some(&id) => with_ids.push((a, id)),
                    None => {
                        out[i] = Some(Err(EvalError::Unsupported {
                            what: format!("score the move {text}"),
                            why: "it is not among the model's actions".into(),
                        }));
                        break;
                    }
                }
            }
            if out[i].is_none() {
                jobs.push((i, with_ids));
                rows.push(ids);
            }
        }
        let queue = out.queue_time();
        let before = self.model_time;
        let width = self.actions.len();
        let logits = if rows.is_empty() {
            Ok(Array2::zeros((0, width)))
        } else {
            let ids = Array2::from_shape_fn((rows.len(), STATE_LEN), |(r, j)| i64::from(rows[r][j]));
            super::backend::run_logits(self.backend.as_mut(), &mut self.model_time, ids, width)
        };
        let share = (self.model_time - before) / u32::try_from(jobs.len().max(1)).unwrap_or(u32::MAX);
        for (row, (i, moves)) in jobs.into_iter().enumerate() {
            let req = &requests[i];
            let logits = match &logits {
                Ok(l) => l,
                Err(e) => {
                    out[i] = Some(Err(e.clone()));
                    continue;
                }
            };
            let legal: Vec<f32> = moves.iter().map(|&(_, id)| logits[[row, id as usize]]).collect();
            let Some(probs) = renormalised(&legal) else {
                out[i] = Some(Err(EvalError::Backend(
                    "the model's action log-probabilities are not finite".into(),
                )));
                continue;
            };
            let mut order: Vec<usize> = (0..moves.len()).collect();
            order.sort_by(|&x, &y| probs[y].total_cmp(&probs[x]));
            if let TopK::Count(k) = req.top_k {
                order.truncate(k as usize);
            }
            let mv: Vec<MoveValue<S::Action>> = order
                .iter()
                .map(|&k| {
                    let a = moves[k].0;
                    MoveValue { action: a, text: req.state.action_to_text(a), dist: None }
                })
                .collect();
            out[i] = Some(Ok(EvalResult {
                best_action: Some(order.iter().map(|&k| probs[k]).collect()),
                timing: EvalTiming { queue, model: share, tokens: STATE_LEN },
                ..EvalResult::values(mv, None)
            }));
        }
        out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renormalising_is_a_softmax_over_the_entries_given() {
        let p = renormalised(&[(0.5f32).ln(), (0.25f32).ln()]).expect("finite");
        assert!((p[0] - 2.0 / 3.0).abs() < 1e-6 && (p[1] - 1.0 / 3.0).abs() < 1e-6, "{p:?}");
        assert_eq!(renormalised(&[0.0]), Some(vec![1.0]));
        assert!(renormalised(&[f32::NAN, 0.0]).is_none());
        assert!(renormalised(&[f32::NEG_INFINITY]).is_none());
        // Very negative log-probabilities (a 1968-way softmax) lose nothing: only differences count.
        let p = renormalised(&[-90.0, -91.0]).expect("finite");
        assert!((p[0] / p[1] - 1f64.exp()).abs() < 1e-9);
    }
}
