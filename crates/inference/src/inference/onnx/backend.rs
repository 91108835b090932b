//! [`TensorBackend`] on an ONNX Runtime session: the local way a one-pass model runs.

use std::borrow::Cow;

use ndarray::{Array2, ArrayD};
use ort::session::SessionInputValue;
use ort::value::Tensor;

use super::session::{OnnxSession, SessionError, SessionOptions};
use crate::inference::backend::{BackendError, TensorBackend, check_rows};
use crate::inference::device::DeviceStatus;
use crate::model::ModelPackage;

/// A package's `model.onnx` in one ONNX Runtime session (`run` takes `&mut self`: one per worker).
#[derive(Debug)]
pub struct OnnxBackend {
    session: OnnxSession,
}

fn rt<E: std::fmt::Display>(e: E) -> BackendError {
    BackendError::Onnx(e.to_string())
}

impl OnnxBackend {
    /// Opens the package's graph (checked against its mav.json by [`OnnxSession::open`]).
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<OnnxBackend, SessionError> {
        Ok(OnnxBackend { session: OnnxSession::open(package, options)? })
    }

    /// [`OnnxBackend::open`] as the boxed backend a one-pass evaluator's `with_backend` takes: every
    /// evaluator's `open` is its `with_backend` on this.
    pub fn boxed(
        package: &ModelPackage,
        options: &SessionOptions,
    ) -> Result<Box<dyn TensorBackend>, SessionError> {
        Ok(Box::new(OnnxBackend::open(package, options)?))
    }
}

impl TensorBackend for OnnxBackend {
    fn run(
        &mut self,
        inputs: Vec<(&str, Array2<i64>)>,
        outputs: &[&str],
    ) -> Result<Vec<ArrayD<f32>>, BackendError> {
        let rows = inputs.first().map_or(0, |(_, a)| a.nrows());
        let mut feed: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::with_capacity(inputs.len());
        for (name, a) in inputs {
            feed.push((Cow::Borrowed(name), Tensor::from_array(a).map_err(rt)?.into()));
        }
        let got = self.session.session.run(feed).map_err(rt)?;
        let mut out = Vec::with_capacity(outputs.len());
        for name in outputs {
            let v = got.get(name).ok_or_else(|| rt(format!("the graph returned no {name}")))?;
            out.push(v.try_extract_array::<f32>().map_err(rt)?.to_owned());
        }
        check_rows(outputs, &out, rows)?;
        Ok(out)
    }

    fn status(&self) -> &DeviceStatus {
        &self.session.status
    }
}
