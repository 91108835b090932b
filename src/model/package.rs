//! Opening a model package folder and finding the default one.

use std::path::{Path, PathBuf};

use super::error::ModelError;
use super::manifest::{Manifest, ModelFormat};
use super::signature::check_manifest;

/// The shipped packages, in the order the app prefers them for analysis on a CPU.
pub const SHIPPED: &[&str] = &["mav-enc-tiny", "mav-tiny"];

/// A model package whose files exist and whose mav.json is consistent. The ONNX graph itself is checked
/// when a session opens it.
#[derive(Debug, Clone)]
pub struct ModelPackage {
    /// The folder.
    pub dir: PathBuf,
    /// Its mav.json.
    pub manifest: Manifest,
}

impl ModelPackage {
    /// Opens the package in `dir`: checks that model.onnx (unless mav.json has a `remote` section) and
    /// mav.json (and tokenizer.json for the MAV formats) exist and that mav.json is valid and
    /// self-consistent.
    pub fn open(dir: &Path) -> Result<ModelPackage, ModelError> {
        if !dir.is_dir() {
            return Err(ModelError::Io {
                path: dir.to_path_buf(),
                reason: "not a folder (pass the package folder that holds model.onnx and mav.json)".into(),
            });
        }
        let manifest_path = dir.join("mav.json");
        if !manifest_path.is_file() {
            return Err(ModelError::MissingFile { dir: dir.to_path_buf(), file: "mav.json" });
        }
        let text = std::fs::read_to_string(&manifest_path)
            .map_err(|e| ModelError::Io { path: manifest_path.clone(), reason: e.to_string() })?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| ModelError::Manifest { path: manifest_path.clone(), reason: e.to_string() })?;
        // A remote package's weights live on its server (mav.json `remote`): no model.onnx.
        if manifest.remote.is_none() && !dir.join("model.onnx").is_file() {
            return Err(ModelError::MissingFile { dir: dir.to_path_buf(), file: "model.onnx" });
        }
        if manifest.format != ModelFormat::ActionValue && !dir.join("tokenizer.json").is_file() {
            return Err(ModelError::MissingFile { dir: dir.to_path_buf(), file: "tokenizer.json" });
        }
        check_manifest(dir, &manifest)?;
        Ok(ModelPackage { dir: dir.to_path_buf(), manifest })
    }

    /// The ONNX file.
    pub fn onnx_path(&self) -> PathBuf {
        self.dir.join("model.onnx")
    }

    /// The tokenizer file (MAV formats).
    pub fn tokenizer_path(&self) -> PathBuf {
        self.dir.join("tokenizer.json")
    }
}

/// Folders that may hold `assets/models`: beside the executable (installed layouts), up from it (a cargo
/// build inside the checkout), and the checkout this binary was built from.
pub fn model_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        for up in dir.ancestors().take(4) {
            roots.push(up.join("assets").join("models"));
        }
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join("models"));
    let mut seen = std::collections::HashSet::new();
    roots.retain(|p| seen.insert(p.clone()));
    roots
}

/// Every shipped package found under [`model_roots`] (the first copy of each), in [`SHIPPED`] order.
pub fn shipped_package_dirs() -> Vec<PathBuf> {
    let roots = model_roots();
    SHIPPED
        .iter()
        .filter_map(|name| roots.iter().map(|r| r.join(name)).find(|d| d.join("mav.json").is_file()))
        .collect()
}

/// The default package: the first shipped one found under [`model_roots`]. The error lists where it looked.
pub fn default_package_dir() -> Result<PathBuf, ModelError> {
    let roots = model_roots();
    for name in SHIPPED {
        for root in &roots {
            let dir = root.join(name);
            if dir.join("mav.json").is_file() {
                return Ok(dir);
            }
        }
    }
    Err(ModelError::Io {
        path: roots.first().cloned().unwrap_or_default(),
        reason: format!(
            "no shipped model package ({}) found under {}; pass --model DIR",
            SHIPPED.join(", "),
            roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_folder_and_files_are_named() {
        let err = ModelPackage::open(Path::new("/nonexistent/pkg")).expect_err("missing");
        assert!(err.to_string().contains("not a folder"));
        let tmp = std::env::temp_dir().join(format!("mavboard-pkg-test-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).expect("tmp");
        let err = ModelPackage::open(&tmp).expect_err("no manifest");
        assert!(err.to_string().contains("missing mav.json"), "{err}");
        std::fs::write(tmp.join("mav.json"), "{ not json").expect("write");
        let err = ModelPackage::open(&tmp).expect_err("bad json");
        assert!(err.to_string().contains("mav.json is invalid"), "{err}");
        std::fs::remove_dir_all(&tmp).ok();
    }
}
