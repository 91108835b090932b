//! The narrow interface between a one-pass evaluator and where its model runs: named integer tensors in,
//! named float tensors out. The evaluators build the tensors from positions and decode the outputs; a
//! backend only runs the graph — in an ONNX Runtime session ([`crate::inference::onnx::OnnxBackend`]) or on
//! an inference server ([`crate::inference::remote::RemoteBackend`]).

use ndarray::{Array2, ArrayD};

use super::device::DeviceStatus;
use super::evaluator::EvalError;
use super::remote_error::RemoteError;

/// Why a backend call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// ONNX Runtime failed.
    #[error("ONNX Runtime: {0}")]
    Onnx(String),
    /// The inference server failed or could not be reached.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The outputs do not have the shape the call needs.
    #[error("the model's output {name} has shape {found:?}, expected {expected}")]
    Shape {
        /// The output's name.
        name: String,
        /// What was expected (in words).
        expected: String,
        /// The shape returned.
        found: Vec<usize>,
    },
}

impl BackendError {
    /// The evaluation error for the requests of a batch this error failed: [`EvalError::Server`] for a
    /// remote server's fault (so that the app can show the server's state), [`EvalError::Backend`] else.
    pub fn into_eval_error(self) -> EvalError {
        match self {
            BackendError::Remote(e) => EvalError::Server(e.to_string()),
            other => EvalError::Backend(other.to_string()),
        }
    }
}

/// Runs a model on a batch of rows. Every input is `[rows, …]` with the same row count; every output the
/// backend returns has that row count on its first axis (checked by the backend).
pub trait TensorBackend: Send + std::fmt::Debug {
    /// Runs the model on `inputs` (64-bit integer tensors by name) and returns the float outputs named in
    /// `outputs`, in that order.
    fn run(
        &mut self,
        inputs: Vec<(&str, Array2<i64>)>,
        outputs: &[&str],
    ) -> Result<Vec<ArrayD<f32>>, BackendError>;

    /// Where the model runs: the provider of a local session, or the server of a remote one.
    fn status(&self) -> &DeviceStatus;
}

/// Runs a one-pass graph with the single input `input_ids` and reads its `logits` output as a
/// [rows, `width`] matrix: the call both searchless evaluators (action-value, state-value) make. The time
/// inside the backend is added to `model_time`; a missing or misshapen output is an [`EvalError`].
pub fn run_logits(
    backend: &mut dyn TensorBackend,
    model_time: &mut std::time::Duration,
    ids: Array2<i64>,
    width: usize,
) -> Result<Array2<f32>, EvalError> {
    let rows = ids.nrows();
    let start = std::time::Instant::now();
    let outputs = backend.run(vec![("input_ids", ids)], &["logits"]).map_err(BackendError::into_eval_error);
    *model_time += start.elapsed();
    outputs?
        .into_iter()
        .next()
        .ok_or_else(|| EvalError::Backend("the backend returned no logits".to_owned()))?
        .into_dimensionality::<ndarray::Ix2>()
        .map_err(|e| EvalError::Backend(format!("logits: {e}")))
        .and_then(|logits| {
            super::screen::expect_shape("logits", logits.shape(), &[rows, width])?;
            Ok(logits)
        })
}

/// Checks that every output has `rows` rows (the backends' common promise).
pub(crate) fn check_rows(outputs: &[&str], values: &[ArrayD<f32>], rows: usize) -> Result<(), BackendError> {
    for (name, v) in outputs.iter().zip(values) {
        if v.shape().first() != Some(&rows) {
            return Err(BackendError::Shape {
                name: (*name).to_owned(),
                expected: format!("{rows} rows (one per input row)"),
                found: v.shape().to_vec(),
            });
        }
    }
    Ok(())
}
