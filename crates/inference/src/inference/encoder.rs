//! The `mav-encoder` evaluator: one bidirectional pass values every legal move of every request.
//!
//! Input per request (the contract of `mav::encoder_input`): the `%state` tokens without spaces, `<sep>`,
//! the legal moves (one token each in chess and Connect Four; a Hex cell's tokens, moves then separated by
//! the space token). All requests of a batch go into one padded run; the value distribution of a move is
//! the softmax of the value logits at its (last) token, the best-action distribution the softmax of the
//! best logits over the moves.
//!
//! The model runs in a [`TensorBackend`]: a local ONNX Runtime session or an inference server (a remote
//! package); the tensors and their decoding are the same.

use std::time::Instant;

use ndarray::{Array2, Array3, ArrayView1, ArrayView2, Axis, Ix2, Ix3};

use super::answers::BatchAnswers;
use super::backend::{BackendError, TensorBackend};
use super::evaluator::{EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, MoveValue, TopK};
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use super::screen::{check_tokenizer, expect_shape};
use crate::game::GameKind;
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::mav::encoder_input::{EncoderInput, encoder_input};
use crate::mav::state::MavState;
use crate::mav::tokenizer::Tokenizer;
use crate::model::ModelPackage;

/// A `mav-encoder` model on one backend (an ONNX Runtime session or a server).
#[derive(Debug)]
pub struct EncoderEvaluator {
    backend: Box<dyn TensorBackend>,
    tokenizer: Tokenizer,
    buckets: Buckets,
    pad_id: u32,
    context: usize,
    /// The games the model was trained on (mav.json `games`).
    games: Vec<GameKind>,
    /// Summed time inside the backend's `run` (`Session::run`, or the HTTP calls of a remote model).
    pub model_time: std::time::Duration,
}

impl EncoderEvaluator {
    /// Opens the package's model.onnx (its graph is checked against mav.json by
    /// [`OnnxSession::open`](super::onnx::OnnxSession::open)).
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<EncoderEvaluator, SessionError> {
        EncoderEvaluator::with_backend(package, OnnxBackend::boxed(package, options)?)
    }

    /// The package's model on `backend` (already checked against the package's mav.json).
    pub fn with_backend(
        package: &ModelPackage,
        backend: Box<dyn TensorBackend>,
    ) -> Result<EncoderEvaluator, SessionError> {
        let tokenizer = check_tokenizer(package)?;
        let m = &package.manifest;
        let buckets = package.buckets()?;
        Ok(EncoderEvaluator {
            backend,
            tokenizer,
            buckets,
            pad_id: m.pad_token_id.unwrap_or(0),
            context: m.context_length,
            games: m.games.clone(),
            model_time: std::time::Duration::ZERO,
        })
    }

    /// Where the model runs.
    pub fn status(&self) -> &super::device::DeviceStatus {
        self.backend.status()
    }

    /// The games the model was trained on (mav.json `games`).
    pub fn games(&self) -> &[GameKind] {
        &self.games
    }
}

fn softmax(xs: &[f32]) -> Vec<f64> {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = xs.iter().map(|&x| f64::from(x - max).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

/// A request that needs the model: its index in the batch, its legal moves and its input.
type Job<A> = (usize, Vec<A>, EncoderInput);

/// The batch's `input_ids` (padded with `pad_id` to the longest input) and `attention_mask`.
fn padded<A>(jobs: &[Job<A>], pad_id: u32) -> (Array2<i64>, Array2<i64>) {
    let rows = jobs.len();
    let len = jobs.iter().map(|j| j.2.ids.len()).max().unwrap_or(0);
    let mut ids = Array2::<i64>::from_elem((rows, len), i64::from(pad_id));
    let mut mask = Array2::<i64>::zeros((rows, len));
    for (r, (_, _, input)) in jobs.iter().enumerate() {
        for (j, &t) in input.ids.iter().enumerate() {
            ids[[r, j]] = i64::from(t);
            mask[[r, j]] = 1;
        }
    }
    (ids, mask)
}

impl EncoderEvaluator {
    /// Runs the model on a padded batch: its value logits `[rows, len, K]` and best logits `[rows, len]`.
    fn run_batch(
        &mut self,
        ids: Array2<i64>,
        mask: Array2<i64>,
    ) -> Result<(Array3<f32>, Array2<f32>), EvalError> {
        let (rows, len) = ids.dim();
        self.backend
            .run(vec![("input_ids", ids), ("attention_mask", mask)], &["value_logits", "best_logits"])
            .map_err(BackendError::into_eval_error)
            .and_then(|outs| {
                let mut outs = outs.into_iter();
                let (Some(values), Some(best)) = (outs.next(), outs.next()) else {
                    return Err(EvalError::Backend(
                        "the backend returned fewer outputs than asked".to_owned(),
                    ));
                };
                let values = values
                    .into_dimensionality::<Ix3>()
                    .map_err(|e| EvalError::Backend(format!("value_logits: {e}")))?;
                let best = best
                    .into_dimensionality::<Ix2>()
                    .map_err(|e| EvalError::Backend(format!("best_logits: {e}")))?;
                let k = self.buckets.k() as usize;
                expect_shape("value_logits", values.shape(), &[rows, len, k])?;
                expect_shape("best_logits", best.shape(), &[rows, len])?;
                Ok((values, best))
            })
    }

    /// The answer to `req` from its row of the value logits (`[len, K]`) and of the best logits (`[len]`):
    /// the `%top_k` best moves by mean value, best first, with their best-action probabilities if asked.
    fn answer<S: MavState>(
        &self,
        req: &EvalRequest<S>,
        moves: &[S::Action],
        input: &EncoderInput,
        values: ArrayView2<'_, f32>,
        best: ArrayView1<'_, f32>,
        timing: EvalTiming,
    ) -> Result<EvalResult<S>, EvalError> {
        let mut mv = Vec::with_capacity(moves.len());
        let mut failed = None;
        for (&a, &p) in moves.iter().zip(&input.move_positions) {
            let logits: Vec<f32> = values.index_axis(Axis(0), p).to_vec();
            match ValueDistribution::from_logits(self.buckets, &logits) {
                Ok(dist) => mv.push(MoveValue::valued(a, req.state.action_to_text(a), dist)),
                Err(e) => failed = Some(e.to_string()),
            }
        }
        if let Some(e) = failed {
            return Err(EvalError::Backend(format!("the model's value logits are invalid: {e}")));
        }
        let best_logits: Vec<f32> = input.move_positions.iter().map(|&p| best[p]).collect();
        let mut best_p = softmax(&best_logits);
        // %top_k: the k best moves by mean value (all for %top_all), best first.
        let mut order: Vec<usize> = (0..mv.len()).collect();
        order.sort_by(|&x, &y| MoveValue::by_mean_value(&mv[x], &mv[y]));
        let keep = match req.top_k {
            TopK::All => order.len(),
            TopK::Count(k) => (k as usize).min(order.len()),
        };
        order.truncate(keep);
        let moves_out: Vec<_> = order.iter().map(|&j| mv[j].clone()).collect();
        best_p = order.iter().map(|&j| best_p[j]).collect();
        Ok(EvalResult {
            best_action: req.want_best_action.then_some(best_p),
            timing,
            ..EvalResult::values(moves_out, None)
        })
    }
}

impl<S: MavState> Evaluator<S> for EncoderEvaluator {
    /// Evaluates positions of any game the package was trained on; a position of another game is answered
    /// with [`EvalError::Unsupported`] naming its game and the package's games.
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = BatchAnswers::new(requests.len());
        // (request index, moves, input) of the requests that need the model.
        let mut jobs: Vec<Job<S::Action>> = Vec::new();
        for (i, r, moves) in out.screen(requests, "mav-encoder", &self.games) {
            match encoder_input(&self.tokenizer, &r.state, &moves) {
                Ok(input) if input.ids.len() > self.context => {
                    out[i] = Some(Err(EvalError::ContextTooLong {
                        needed: input.ids.len(),
                        context: self.context,
                    }))
                }
                Ok(input) => jobs.push((i, moves, input)),
                Err(e) => out[i] = Some(Err(EvalError::Backend(e.to_string()))),
            }
        }
        if jobs.is_empty() {
            return out.finish();
        }
        let rows = jobs.len();
        let (ids, mask) = padded(&jobs, self.pad_id);
        let queue = out.queue_time();
        let start = Instant::now();
        let run = self.run_batch(ids, mask);
        let model = start.elapsed();
        self.model_time += model;
        match run {
            Err(e) => {
                for (i, _, _) in &jobs {
                    out[*i] = Some(Err(e.clone()));
                }
            }
            Ok((values, best)) => {
                for (r, (i, moves, input)) in jobs.into_iter().enumerate() {
                    let share = model / rows as u32;
                    let timing = EvalTiming { queue, model: share, tokens: input.ids.len() };
                    let (row, best_row) = (values.index_axis(Axis(0), r), best.row(r));
                    out[i] = Some(self.answer(&requests[i], &moves, &input, row, best_row, timing));
                }
            }
        }
        out.finish()
    }
}
