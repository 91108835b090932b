//! Errors of model packages.

use std::path::PathBuf;

/// Why a model package cannot be used. Each message names the field and what was expected.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// The folder or one of its files is missing.
    #[error("model package {dir}: missing {file} (a package is a folder with model.onnx, mav.json and, for MAV formats, tokenizer.json)", dir = .dir.display())]
    MissingFile {
        /// The package folder.
        dir: PathBuf,
        /// The missing file's name.
        file: &'static str,
    },
    /// A file could not be read.
    #[error("model package {path}: {reason}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// mav.json is not valid.
    #[error("model package {path}: mav.json is invalid: {reason}", path = .path.display())]
    Manifest {
        /// The mav.json file.
        path: PathBuf,
        /// serde's reason (with line and column).
        reason: String,
    },
    /// A field of mav.json, the tokenizer, or the ONNX graph does not match what the format needs.
    #[error("model package {dir}: {field}: expected {expected}, found {found}", dir = .dir.display())]
    Mismatch {
        /// The package folder.
        dir: PathBuf,
        /// What is wrong (`mav.json format_version`, `ONNX input input_ids`, ...).
        field: String,
        /// What mavboard expects.
        expected: String,
        /// What the package has.
        found: String,
    },
    /// ONNX Runtime could not open the graph.
    #[error("model package {dir}: ONNX Runtime could not load model.onnx: {reason}", dir = .dir.display())]
    Onnx {
        /// The package folder.
        dir: PathBuf,
        /// ONNX Runtime's reason.
        reason: String,
    },
}
