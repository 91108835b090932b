//! `mavboard package quantize`: an int8 copy of a model package, made with ONNX Runtime's own quantization
//! tooling (dynamic quantization: weights as signed 8-bit integers with one scale per output channel,
//! activations quantized per batch at run time). The graph is converted by a Python step
//! (`training/quantize/quantize_onnx.py`, built into this binary, run with the importer's Python
//! environment); this module copies the rest of the package around it — mav.json with the name given
//! `-int8` and no inspection graph (its weights were shared with the fp32 graph, which the copy does not
//! have), the tokenizer, the model card with a line on the conversion — into a scratch folder renamed into
//! place only when everything is written.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ModelPackage;
use super::python_step::{self, StepOutcome};
use super::staging::{StagingError, io};

/// The conversion script, written to a scratch file and run by Python.
const SCRIPT: &str = include_str!("../../../../training/quantize/quantize_onnx.py");

/// The files of a package that the copy does not take: the fp32 weights and the inspection graph.
const LEFT_OUT: [&str; 3] = ["model.onnx", "model.onnx.data", "inspect.onnx"];

/// Why a package could not be quantized.
#[derive(Debug, thiserror::Error)]
pub enum QuantizeError {
    /// The package does not open.
    #[error(transparent)]
    Package(#[from] super::ModelError),
    /// A remote package has no weights here.
    #[error("{} is a remote package: its weights live on its server; quantize the package it serves", .0.display())]
    Remote(PathBuf),
    /// The output folder is in the way.
    #[error("{} already exists and is not empty; choose another folder or remove it", .0.display())]
    OutputExists(PathBuf),
    /// No Python could be started.
    #[error(
        "no Python to run the quantization ({tried}); install its packages with {}",
        super::import::INSTALL_HINT
    )]
    NoPython {
        /// The interpreters tried.
        tried: String,
    },
    /// The tooling refused or failed on the graph.
    #[error("{graph}: {reason}", graph = .graph.display())]
    Graph {
        /// The graph.
        graph: PathBuf,
        /// Why.
        reason: String,
    },
    /// The output folder is taken, or a file could not be read or written.
    #[error(transparent)]
    Files(#[from] StagingError),
}

/// What the conversion did.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct QuantizeReport {
    /// model.onnx before, in bytes.
    pub bytes_in: u64,
    /// model.onnx after.
    pub bytes_out: u64,
    /// Graph nodes before.
    pub nodes_in: usize,
    /// Graph nodes after.
    pub nodes_out: usize,
    /// The integer operators in the new graph, by type.
    pub int8_ops: std::collections::BTreeMap<String, usize>,
    /// The new package's name.
    #[serde(default)]
    pub name: String,
}

/// Writes the int8 copy of the package in `package` to `out` (which must not exist or be empty), with
/// `python` or the importer's environment.
pub fn quantize_package(
    package: &Path,
    out: &Path,
    python: Option<&Path>,
) -> Result<QuantizeReport, QuantizeError> {
    let source = ModelPackage::open(package)?;
    if source.manifest.remote.is_some() {
        return Err(QuantizeError::Remote(package.to_path_buf()));
    }
    super::staging::write_staged(out, |tmp| write_copy(&source, tmp, python))
}

fn write_copy(
    source: &ModelPackage,
    dir: &Path,
    python: Option<&Path>,
) -> Result<QuantizeReport, QuantizeError> {
    let graph = source.onnx_path();
    let args = vec![graph.clone().into_os_string(), dir.join("model.onnx").into_os_string()];
    let outcome = python_step::run(dir, "quantize_onnx.py", SCRIPT, &args, python)
        .map_err(|(path, e)| QuantizeError::Files(StagingError::Io { path, reason: e.to_string() }))?;
    let line = match outcome {
        StepOutcome::Done(line) => line,
        StepOutcome::Refused(reason) => return Err(QuantizeError::Graph { graph, reason }),
        StepOutcome::Failed { status, stderr } => {
            return Err(QuantizeError::Graph {
                graph,
                reason: format!("the Python step failed ({status}): {stderr}"),
            });
        }
        StepOutcome::NoPython { tried } => return Err(QuantizeError::NoPython { tried }),
    };
    let mut report: QuantizeReport = serde_json::from_str(&line).map_err(|e| QuantizeError::Graph {
        graph: graph.clone(),
        reason: format!("the Python step's report could not be read ({e}): {line}"),
    })?;
    for entry in std::fs::read_dir(&source.dir).map_err(io(&source.dir))? {
        let entry = entry.map_err(io(&source.dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().map_err(io(&entry.path()))?.is_file();
        if !is_file || LEFT_OUT.contains(&name.as_str()) || name == "mav.json" || name == "MODEL_CARD.md" {
            continue;
        }
        std::fs::copy(entry.path(), dir.join(&name)).map_err(io(&entry.path()))?;
    }
    let manifest_path = source.dir.join("mav.json");
    let text =
        super::bounded_read::read_text(&manifest_path, super::bounded_read::MAX_MANIFEST_BYTES, "mav.json")
            .map_err(|e| {
            QuantizeError::Files(StagingError::Io { path: manifest_path.clone(), reason: e.to_string() })
        })?;
    let mut value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        QuantizeError::Files(StagingError::Io { path: manifest_path.clone(), reason: e.to_string() })
    })?;
    report.name = format!("{}-int8", source.manifest.name);
    value["name"] = serde_json::Value::String(report.name.clone());
    if let Some(fields) = value.as_object_mut() {
        fields.remove("inspection");
    }
    let json = serde_json::to_string_pretty(&value).map_err(|e| {
        QuantizeError::Files(StagingError::Io { path: manifest_path.clone(), reason: e.to_string() })
    })?;
    let path = dir.join("mav.json");
    std::fs::write(&path, json + "\n").map_err(io(&path))?;
    let card_path = source.dir.join("MODEL_CARD.md");
    let card =
        std::fs::read_to_string(&card_path).unwrap_or_else(|_| format!("# {}\n", source.manifest.name));
    let card = format!(
        "{card}\n## int8 copy\n\n`{name}` is `mavboard package quantize` of `{from}`: ONNX Runtime's dynamic \
         quantization (weights int8 with one scale per output channel, activations quantized per batch at run \
         time; {ops}); model.onnx {before} → {after} bytes. It has no inspection graph. Measure what it costs \
         before relying on it: `mavboard eval --puzzles FILE --model {from} --model THIS`.\n",
        name = report.name,
        from = source.dir.display(),
        ops = report.int8_ops.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", "),
        before = report.bytes_in,
        after = report.bytes_out,
    );
    let path = dir.join("MODEL_CARD.md");
    std::fs::write(&path, card).map_err(io(&path))?;
    // The copy is a package like any other.
    ModelPackage::open(dir)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_packages_and_full_folders_are_refused_before_any_work() {
        let dir = std::env::temp_dir().join(format!("mavboard-quantize-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("full")).expect("mkdir");
        std::fs::write(dir.join("full").join("x"), "x").expect("write");
        let shipped = crate::checkout_dir().join("assets/models/mav-enc-tiny");
        let err = quantize_package(&shipped, &dir.join("full"), None).expect_err("full");
        assert!(matches!(err, QuantizeError::Files(StagingError::OutputExists(_))), "{err}");
        let err = quantize_package(&dir.join("nothing"), &dir.join("new"), None).expect_err("no package");
        assert!(matches!(err, QuantizeError::Package(_)), "{err}");
        let missing = dir.join("no-such-python");
        let err = quantize_package(&shipped, &dir.join("new"), Some(&missing)).expect_err("no python");
        assert!(err.to_string().contains("import-deps"), "{err}");
        assert!(!dir.join("new").exists(), "a failed conversion leaves nothing behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
