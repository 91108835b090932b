//! A Triton Inference Server model repository for a package: `REPO/NAME/config.pbtxt` (the ONNX Runtime
//! backend, the graph's exact inputs and outputs, dynamic batching) and `REPO/NAME/1/model.onnx`, the
//! package's graph unchanged. Triton then serves it over the same Open Inference Protocol that
//! [`super::RemoteBackend`] speaks.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::model::ModelPackage;
use crate::model::signature::{Dtype, GraphSignature, TensorSig};

/// Why a repository could not be written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TritonError {
    /// A tensor cannot be described to Triton.
    #[error("{side} {name}: {reason}")]
    Tensor {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A file could not be written.
    #[error("{path}: {reason}", path = .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// The package holds no model.onnx (a remote package).
    #[error("{dir} has no model.onnx to serve (it is a remote package)", dir = .dir.display())]
    NoGraph {
        /// The package folder.
        dir: PathBuf,
    },
}

fn data_type(side: &'static str, t: &TensorSig) -> Result<&'static str, TritonError> {
    match t.dtype {
        Dtype::I64 => Ok("TYPE_INT64"),
        Dtype::F32 => Ok("TYPE_FP32"),
        Dtype::Other(other) => Err(TritonError::Tensor {
            side,
            name: t.name.clone(),
            reason: format!("element type {other} is not one mavboard's formats use"),
        }),
    }
}

fn tensors(out: &mut String, side: &'static str, list: &[TensorSig]) -> Result<(), TritonError> {
    let _ = writeln!(out, "{side} [");
    for (i, t) in list.iter().enumerate() {
        let ty = data_type(side, t)?;
        if t.shape.first().is_some_and(|&d| d >= 0) {
            return Err(TritonError::Tensor {
                side,
                name: t.name.clone(),
                reason: format!(
                    "its first axis is fixed ({:?}); dynamic batching needs a batch axis",
                    t.shape
                ),
            });
        }
        // With max_batch_size > 0, Triton's dims leave out the batch axis.
        let dims = t.shape.iter().skip(1).map(i64::to_string).collect::<Vec<_>>().join(", ");
        let comma = if i + 1 < list.len() { "," } else { "" };
        let _ = writeln!(out, "  {{ name: \"{}\" data_type: {ty} dims: [ {dims} ] }}{comma}", t.name);
    }
    let _ = writeln!(out, "]");
    Ok(())
}

/// The `config.pbtxt` of model `name` with the graph signature `sig`.
pub fn config_pbtxt(name: &str, sig: &GraphSignature, max_batch_size: usize) -> Result<String, TritonError> {
    let mut out = String::new();
    let _ = writeln!(out, "# Written by mavboard (`mavboard package triton`).");
    let _ = writeln!(out, "name: \"{name}\"");
    let _ = writeln!(out, "backend: \"onnxruntime\"");
    let _ = writeln!(out, "max_batch_size: {max_batch_size}");
    tensors(&mut out, "input", &sig.inputs)?;
    tensors(&mut out, "output", &sig.outputs)?;
    // Requests of the same shape (the same padded length) are batched together.
    let _ = writeln!(out, "dynamic_batching {{ max_queue_delay_microseconds: 1000 }}");
    Ok(out)
}

/// Writes the repository for `package` (whose graph has the signature `sig`, already checked against the
/// package) under `repo`, and returns the model's folder.
pub fn write_repository(
    package: &ModelPackage,
    sig: &GraphSignature,
    repo: &Path,
    max_batch_size: usize,
) -> Result<PathBuf, TritonError> {
    let onnx = package.onnx_path();
    if !onnx.is_file() {
        return Err(TritonError::NoGraph { dir: package.dir.clone() });
    }
    let name = &package.manifest.name;
    let config = config_pbtxt(name, sig, max_batch_size)?;
    let dir = repo.join(name);
    let version = dir.join("1");
    let io =
        |path: &Path, e: std::io::Error| TritonError::Io { path: path.to_path_buf(), reason: e.to_string() };
    std::fs::create_dir_all(&version).map_err(|e| io(&version, e))?;
    let target = version.join("model.onnx");
    std::fs::copy(&onnx, &target).map_err(|e| io(&target, e))?;
    let config_path = dir.join("config.pbtxt");
    std::fs::write(&config_path, config).map_err(|e| io(&config_path, e))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(name: &str, dtype: Dtype, shape: &[i64]) -> TensorSig {
        TensorSig { name: name.into(), dtype, shape: shape.to_vec() }
    }

    #[test]
    fn config_lists_exact_tensors_without_the_batch_axis() {
        let g = GraphSignature {
            inputs: vec![
                sig("input_ids", Dtype::I64, &[-1, -1]),
                sig("attention_mask", Dtype::I64, &[-1, -1]),
            ],
            outputs: vec![
                sig("value_logits", Dtype::F32, &[-1, -1, 64]),
                sig("best_logits", Dtype::F32, &[-1, -1]),
            ],
        };
        let c = config_pbtxt("mav-enc-tiny", &g, 64).expect("valid");
        assert!(c.contains("name: \"mav-enc-tiny\"\nbackend: \"onnxruntime\"\nmax_batch_size: 64\n"), "{c}");
        assert!(c.contains("{ name: \"input_ids\" data_type: TYPE_INT64 dims: [ -1 ] },\n"), "{c}");
        assert!(c.contains("{ name: \"value_logits\" data_type: TYPE_FP32 dims: [ -1, 64 ] },\n"), "{c}");
        assert!(c.contains("{ name: \"best_logits\" data_type: TYPE_FP32 dims: [ -1 ] }\n]"), "{c}");
        assert!(c.contains("dynamic_batching"), "{c}");
        let fixed = GraphSignature { inputs: vec![sig("x", Dtype::I64, &[1, 3])], outputs: Vec::new() };
        assert!(config_pbtxt("m", &fixed, 8).expect_err("fixed batch").to_string().contains("input x"));
        let half =
            GraphSignature { inputs: vec![sig("x", Dtype::Other("float16"), &[-1])], outputs: Vec::new() };
        assert!(config_pbtxt("m", &half, 8).expect_err("fp16").to_string().contains("float16"));
    }
}
