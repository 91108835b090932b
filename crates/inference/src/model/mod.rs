//! Model packages: a folder with `model.onnx`, `mav.json` and (for the MAV formats) `tokenizer.json`.
//!
//! Nothing about a model is hard-coded in Rust: token ids, bucket count, layer count and KV shapes come from
//! [`manifest::Manifest`] and are checked against the ONNX graph by [`signature`].

pub mod bounded_read;
pub mod capabilities;
pub mod checksum;
pub mod error;
pub mod hf;
pub mod import;
pub mod lc0_import;
pub mod lc0_interface;
pub mod lc0_onnx;
pub mod manifest;
pub mod onnx_write;
pub mod package;
pub mod python_step;
pub mod quantize;
pub mod signature;
pub mod staging;

pub use capabilities::{BatchShape, Capabilities};
pub use error::ModelError;
pub use manifest::{Manifest, ModelFormat};
pub use package::ModelPackage;
