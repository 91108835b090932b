//! Opening a model package as an [`Evaluator`], whatever its format.

use std::path::Path;

use super::device::DeviceStatus;
use super::encoder::EncoderEvaluator;
use super::evaluator::Evaluator;
use super::onnx::session::{SessionError, SessionOptions};
use crate::game::chess::ChessState;
use crate::mav::tokenizer::Tokenizer;
use crate::model::{ModelError, ModelFormat, ModelPackage};

/// Checks that the package's tokenizer.json has mavboard's vocabulary (the one its protocol module
/// writes) or a prefix of it (a package trained before later games appended their tokens), and returns
/// the tokenizer over exactly the package's tokens.
pub fn check_tokenizer(package: &ModelPackage) -> Result<Tokenizer, ModelError> {
    let path = package.tokenizer_path();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ModelError::Io { path: path.clone(), reason: e.to_string() })?;
    let theirs: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ModelError::Manifest { path: path.clone(), reason: format!("tokenizer.json: {e}") })?;
    let vocab = |v: &serde_json::Value| v.pointer("/model/vocab").cloned();
    let size = |v: &serde_json::Value| vocab(v).and_then(|m| m.as_object().map(|o| o.len())).unwrap_or(0);
    let full = Tokenizer::new();
    let mismatch = || ModelError::Mismatch {
        dir: package.dir.clone(),
        field: "tokenizer.json vocabulary".into(),
        expected: format!(
            "mavboard's {} tokens or a prefix of them (export it with `mavboard mav tokenizer`)",
            full.vocab_size()
        ),
        found: format!("{} tokens that differ", size(&theirs)),
    };
    let tokenizer = Tokenizer::with_size(size(&theirs)).ok_or_else(mismatch)?;
    let ours: serde_json::Value = serde_json::from_str(&tokenizer.to_hf_json()).map_err(|e| {
        ModelError::Manifest { path: path.clone(), reason: format!("built-in vocabulary: {e}") }
    })?;
    if vocab(&theirs) != vocab(&ours) {
        return Err(mismatch());
    }
    if package.manifest.vocab_size != tokenizer.vocab_size() && package.manifest.format == ModelFormat::MavLm
    {
        return Err(ModelError::Mismatch {
            dir: package.dir.clone(),
            field: "mav.json vocab_size".into(),
            expected: tokenizer.vocab_size().to_string(),
            found: package.manifest.vocab_size.to_string(),
        });
    }
    Ok(tokenizer)
}

/// Why a package cannot be opened as an evaluator.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    /// The package or its session.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The package itself.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// An opened evaluator, its package and its session's device status.
pub type LoadedWithStatus = (Box<dyn Evaluator<ChessState> + Send>, ModelPackage, DeviceStatus);

/// Opens the package in `dir` as an evaluator of chess positions, with the device status of its session
/// (the provider actually in use and any fallback notice).
pub fn load_evaluator_with_status(
    dir: &Path,
    options: &SessionOptions,
) -> Result<LoadedWithStatus, LoadError> {
    let package = ModelPackage::open(dir)?;
    match package.manifest.format {
        ModelFormat::MavEncoder => {
            let e = EncoderEvaluator::open(&package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), package, status))
        }
        ModelFormat::ActionValue => {
            let e = super::action_value::ActionValueEvaluator::open(&package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), package, status))
        }
        ModelFormat::MavLm => {
            let e = super::lm::MavLmEvaluator::open(&package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), package, status))
        }
    }
}

/// Opens the package in `dir` as an evaluator of chess positions.
pub fn load_evaluator(
    dir: &Path,
    options: &SessionOptions,
) -> Result<(Box<dyn Evaluator<ChessState> + Send>, ModelPackage), LoadError> {
    let package = ModelPackage::open(dir)?;
    match package.manifest.format {
        ModelFormat::MavEncoder => {
            let e = EncoderEvaluator::open(&package, options)?;
            Ok((Box::new(e), package))
        }
        ModelFormat::ActionValue => {
            let e = super::action_value::ActionValueEvaluator::open(&package, options)?;
            Ok((Box::new(e), package))
        }
        ModelFormat::MavLm => {
            let e = super::lm::MavLmEvaluator::open(&package, options)?;
            Ok((Box::new(e), package))
        }
    }
}
