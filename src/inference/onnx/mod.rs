//! ONNX Runtime sessions for model packages: one session per inference worker.

pub mod decoder;
pub mod session;

pub use session::{OnnxSession, SessionOptions};
