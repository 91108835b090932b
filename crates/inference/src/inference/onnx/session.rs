//! Opening a package's `model.onnx` on the chosen device and checking its graph against `mav.json`.

use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::value::{TensorElementType, ValueType};

use crate::inference::device::{Device, DeviceError, DeviceStatus, SessionThreads, session_builder};
use crate::inference::ort_lib::{self, OrtLibError};
use crate::model::signature::{Dtype, GraphSignature, TensorSig, check_graph};
use crate::model::{ModelError, ModelPackage};

/// How to open sessions: which ONNX Runtime library, device and threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionOptions {
    /// An explicit ONNX Runtime library (`--ort-lib`); `None` searches the usual places.
    pub ort_lib: Option<PathBuf>,
    /// The device to run on.
    pub device: Device,
    /// Threads per session.
    pub threads: SessionThreads,
}

/// Why a session could not be opened.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    /// ONNX Runtime is missing or broken.
    #[error(transparent)]
    Runtime(#[from] OrtLibError),
    /// The device could not be used.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The package does not fit its format.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// An open session for a package, with its device status.
#[derive(Debug)]
pub struct OnnxSession {
    /// The session (`run` takes `&mut self`: one per worker).
    pub session: Session,
    /// The provider in use and any fallback notice.
    pub status: DeviceStatus,
}

fn dtype(t: TensorElementType) -> Dtype {
    match t {
        TensorElementType::Int64 => Dtype::I64,
        TensorElementType::Float32 => Dtype::F32,
        TensorElementType::Float16 => Dtype::Other("float16"),
        TensorElementType::Bfloat16 => Dtype::Other("bfloat16"),
        TensorElementType::Int32 => Dtype::Other("int32"),
        TensorElementType::Float64 => Dtype::Other("float64"),
        _ => Dtype::Other("another element type"),
    }
}

fn sig(name: &str, ty: &ValueType) -> TensorSig {
    match ty {
        ValueType::Tensor { ty, shape, .. } => {
            TensorSig { name: name.to_owned(), dtype: dtype(*ty), shape: shape.iter().copied().collect() }
        }
        _ => TensorSig { name: name.to_owned(), dtype: Dtype::Other("not a tensor"), shape: Vec::new() },
    }
}

/// The inputs and outputs of an open session.
pub fn graph_signature(session: &Session) -> GraphSignature {
    GraphSignature {
        inputs: session.inputs().iter().map(|o| sig(o.name(), o.dtype())).collect(),
        outputs: session.outputs().iter().map(|o| sig(o.name(), o.dtype())).collect(),
    }
}

impl OnnxSession {
    /// Loads ONNX Runtime if needed, opens the package's graph on the requested device, and checks the graph
    /// against the package's mav.json.
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<OnnxSession, SessionError> {
        let runtime = ort_lib::init(options.ort_lib.as_deref())?;
        let (mut builder, status) = session_builder(runtime, options.device, options.threads)?;
        let dir: &Path = &package.dir;
        let session = builder
            .commit_from_file(package.onnx_path())
            .map_err(|e| ModelError::Onnx { dir: dir.to_path_buf(), reason: e.to_string() })?;
        check_graph(dir, &package.manifest, &graph_signature(&session))?;
        Ok(OnnxSession { session, status })
    }
}
