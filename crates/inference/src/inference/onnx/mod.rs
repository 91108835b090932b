//! ONNX Runtime sessions for model packages: one session per inference worker.

pub mod backend;
pub mod decoder;
pub mod session;

pub use backend::OnnxBackend;
pub use session::{OnnxSession, SessionOptions};
