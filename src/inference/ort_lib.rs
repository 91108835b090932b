//! Finding and loading the ONNX Runtime shared library.
//!
//! mavboard links ONNX Runtime dynamically (ort's `load-dynamic`): the library is looked up at run time, in
//! this order — an explicit path (`--ort-lib` or the app's settings), the `ORT_DYLIB_PATH` environment
//! variable, beside the executable, and the project-local copy that `./packaging/dev.sh` installs under
//! `.ort/lib/`. A missing or too-old library is an [`OrtLibError`] naming every path tried and the fix.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The file names of the library on this platform, most specific first.
#[cfg(target_os = "linux")]
const LIB_NAMES: &[&str] = &["libonnxruntime.so", "libonnxruntime.so.1"];
#[cfg(target_os = "macos")]
const LIB_NAMES: &[&str] = &["libonnxruntime.dylib"];
#[cfg(target_os = "windows")]
const LIB_NAMES: &[&str] = &["onnxruntime.dll"];
#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
const LIB_NAMES: &[&str] = &["libonnxruntime.so"];

/// The command that installs the library where mavboard finds it.
pub const INSTALL_HINT: &str = "run `./packaging/dev.sh ort` in the mavboard checkout (it fetches the PyPI wheel \
onnxruntime==1.31.1 and places libonnxruntime.so under .ort/lib/), or point ORT_DYLIB_PATH at an ONNX Runtime \
1.31 library";

/// Why the ONNX Runtime library could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OrtLibError {
    /// No candidate file exists.
    #[error("the ONNX Runtime library was not found; looked for:\n{tried}\nFix: {hint}", tried = list(.tried), hint = INSTALL_HINT)]
    NotFound {
        /// Every path looked at, in order.
        tried: Vec<PathBuf>,
    },
    /// A file was found but could not be loaded (wrong architecture, too old, missing symbols).
    #[error("the ONNX Runtime library at {path} could not be loaded: {reason}\nFix: {hint}", path = .path.display(), hint = INSTALL_HINT)]
    Load {
        /// The file that failed.
        path: PathBuf,
        /// ort's reason.
        reason: String,
    },
    /// The library loaded but the runtime environment could not be created.
    #[error("ONNX Runtime loaded from {path} but its environment could not be created: {reason}", path = .path.display())]
    Environment {
        /// The library in use.
        path: PathBuf,
        /// ONNX Runtime's reason.
        reason: String,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| format!("  - {}", p.display())).collect::<Vec<_>>().join("\n")
}

/// The candidate paths, in lookup order, for an optional explicit path.
pub fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = explicit {
        out.push(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        out.push(PathBuf::from(p));
    }
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        out.extend(LIB_NAMES.iter().map(|n| dir.join(n)));
        // target/{debug,release}/mavboard and target/debug/deps/test-binary → the checkout's .ort/lib.
        for up in dir.ancestors().skip(1).take(3) {
            out.extend(LIB_NAMES.iter().map(|n| up.join(".ort").join("lib").join(n)));
        }
    }
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ort").join("lib");
    out.extend(LIB_NAMES.iter().map(|n| project.join(n)));
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Finds the library: the first candidate that exists. An explicit path that does not exist is an error
/// (the user asked for that file), not a reason to look elsewhere.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, OrtLibError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(OrtLibError::NotFound { tried: vec![p.to_path_buf()] })
        };
    }
    let tried = candidates(None);
    tried.iter().find(|p| p.is_file()).cloned().ok_or(OrtLibError::NotFound { tried })
}

/// The loaded runtime: where it came from and its environment (kept alive for the whole process).
#[derive(Debug)]
pub struct OrtRuntime {
    /// The library file in use.
    pub path: PathBuf,
    env: ort::environment::Environment,
}

impl OrtRuntime {
    /// The process-wide ONNX Runtime environment that sessions are built from.
    pub fn environment(&self) -> &ort::environment::Environment {
        &self.env
    }
}

static RUNTIME: OnceLock<OrtRuntime> = OnceLock::new();
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Loads ONNX Runtime once per process and returns it; later calls return the same runtime (their
/// `explicit` path is then ignored). Never panics: every failure is an [`OrtLibError`].
pub fn init(explicit: Option<&Path>) -> Result<&'static OrtRuntime, OrtLibError> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let path = locate(explicit)?;
    let builder =
        ort::init_from(&path).map_err(|e| OrtLibError::Load { path: path.clone(), reason: e.to_string() })?;
    let env = builder
        .with_name("mavboard")
        .with_telemetry(false)
        .build()
        .map_err(|e| OrtLibError::Environment { path: path.clone(), reason: e.to_string() })?;
    Ok(RUNTIME.get_or_init(|| OrtRuntime { path, env }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_missing_path_is_not_found_with_hint() {
        let p = Path::new("/nonexistent/libonnxruntime.so");
        let err = locate(Some(p)).expect_err("missing");
        let msg = err.to_string();
        assert!(msg.contains("/nonexistent/libonnxruntime.so"), "{msg}");
        assert!(msg.contains("dev.sh ort"), "{msg}");
    }

    #[test]
    fn candidates_start_with_explicit_and_include_project_copy() {
        let p = Path::new("/x/libonnxruntime.so");
        let c = candidates(Some(p));
        assert_eq!(c[0], p);
        assert!(c.iter().any(|q| q.ends_with(".ort/lib/libonnxruntime.so")));
    }
}
