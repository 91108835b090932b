//! Finding and loading the ONNX Runtime shared library.
//!
//! mavboard links ONNX Runtime dynamically (ort's `load-dynamic`): the library is looked up at run time, in
//! this order — an explicit path (`--ort-lib` or the app's settings), the `ORT_DYLIB_PATH` environment
//! variable, beside the executable (where the Windows installer puts `onnxruntime.dll`), a `.ort/lib/` up
//! from it, the installed layout (`<prefix>/lib/mavboard/` for `<prefix>/bin/mavboard`, where the Debian
//! package and the Linux tarball put it: see `packaging/README.md`), a macOS app bundle's
//! `Contents/Frameworks/` (for `mavboard.app/Contents/MacOS/mavboard`), and the project-local copy that
//! `./packaging/dev.sh` installs under `.ort/lib/` in the checkout the binary was built from. The
//! executable's folder is taken both as reported and with its links resolved, so an unpacked package works
//! from any root. A missing or too-old library is an [`OrtLibError`] naming every path tried and the fix.

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
1.31 library; an installed mavboard package carries its own copy in <prefix>/lib/mavboard/ (on macOS in \
mavboard.app/Contents/Frameworks/, on Windows beside mavboard.exe; reinstall the package if it is missing)";

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

/// Where an installed package keeps its private copy of the library, relative to the folder of its
/// executable: `<prefix>/bin/mavboard` → `<prefix>/lib/mavboard/` (the Debian package's
/// `/usr/lib/mavboard/`).
pub fn installed_lib_dir(exe_dir: &Path) -> Option<PathBuf> {
    exe_dir.parent().map(|prefix| prefix.join("lib").join("mavboard"))
}

/// Where a macOS app bundle keeps its private copy of the library, relative to the folder of its
/// executable: `mavboard.app/Contents/MacOS/` → `mavboard.app/Contents/Frameworks/` (where cargo-packager
/// copies the `frameworks` of `[package.metadata.packager.macos]`). `None` for any other layout.
pub fn bundle_frameworks_dir(exe_dir: &Path) -> Option<PathBuf> {
    crate::model::package::bundle_contents_dir(exe_dir).map(|contents| contents.join("Frameworks"))
}

/// The candidate paths, in lookup order, for an optional explicit path.
pub fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let env = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()).map(PathBuf::from);
    let exe_dirs = crate::model::package::executable_dirs();
    candidates_for(explicit, env.as_deref(), &exe_dirs, crate::checkout_dir())
}

/// [`candidates`] for given inputs: an explicit path, the value of `ORT_DYLIB_PATH`, the executable's
/// folders and the checkout the binary was built from. In lookup order, without duplicates.
pub fn candidates_for(
    explicit: Option<&Path>,
    env_path: Option<&Path>,
    exe_dirs: &[PathBuf],
    checkout: &Path,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    out.extend(explicit.map(Path::to_path_buf));
    out.extend(env_path.map(Path::to_path_buf));
    let in_dir = |dir: &Path| LIB_NAMES.iter().map(|n| dir.join(n)).collect::<Vec<_>>();
    for dir in exe_dirs {
        out.extend(in_dir(dir));
        // target/{debug,release}/mavboard and target/debug/deps/test-binary → the checkout's .ort/lib.
        for up in dir.ancestors().skip(1).take(3) {
            out.extend(in_dir(&up.join(".ort").join("lib")));
        }
    }
    for dir in exe_dirs {
        if let Some(lib) = installed_lib_dir(dir) {
            out.extend(in_dir(&lib));
        }
    }
    for dir in exe_dirs {
        if let Some(frameworks) = bundle_frameworks_dir(dir) {
            out.extend(in_dir(&frameworks));
        }
    }
    out.extend(in_dir(&checkout.join(".ort").join("lib")));
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Finds the library: the first candidate that exists, as an absolute path ([`absolute_lib_path`]). An
/// explicit path that does not exist is an error (the user asked for that file), not a reason to look
/// elsewhere.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, OrtLibError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(absolute_lib_path(p))
        } else {
            Err(OrtLibError::NotFound { tried: vec![p.to_path_buf()] })
        };
    }
    let tried = candidates(None);
    tried.iter().find(|p| p.is_file()).map(|p| absolute_lib_path(p)).ok_or(OrtLibError::NotFound { tried })
}

/// The path handed to the loader, made absolute against the working folder (nothing is read). Windows'
/// `LoadLibrary` looks a relative name up along its own search order (the executable's folder, then
/// System32, and the working folder only after those), so `--ort-lib onnxruntime.dll` or a relative
/// `ORT_DYLIB_PATH` could load another copy than the file checked here, such as an older ONNX Runtime in
/// System32; an absolute path loads exactly that file, everywhere.
pub fn absolute_lib_path(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
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
    tracing::info!("ONNX Runtime library loaded from {}", path.display());
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
    fn a_relative_library_path_is_loaded_by_its_absolute_path() {
        let cwd = std::env::current_dir().expect("working folder");
        let name = LIB_NAMES[0];
        let abs = absolute_lib_path(Path::new(name));
        assert!(abs.is_absolute(), "{}", abs.display());
        assert_eq!(abs, cwd.join(name));
        let nested = absolute_lib_path(&Path::new("lib").join(name));
        assert_eq!(nested, cwd.join("lib").join(name));
        // An absolute path is kept as it is.
        assert_eq!(absolute_lib_path(&cwd.join(name)), cwd.join(name));
    }

    #[test]
    fn an_explicit_relative_library_that_exists_is_located_by_its_absolute_path() {
        // A file under the working folder (the crate root under cargo test), named relatively.
        let dir = Path::new("target").join(format!("ort-lib-relative-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let rel = dir.join(LIB_NAMES[0]);
        std::fs::write(&rel, b"").expect("library stand-in");
        let found = locate(Some(&rel));
        std::fs::remove_dir_all(&dir).ok();
        let found = found.expect("the file exists");
        assert!(found.is_absolute(), "{}", found.display());
        assert_eq!(found, std::env::current_dir().expect("working folder").join(&rel));
    }

    #[test]
    fn candidates_start_with_explicit_and_include_project_copy() {
        let p = Path::new("/x/libonnxruntime.so");
        let c = candidates(Some(p));
        assert_eq!(c[0], p);
        assert!(c.iter().any(|q| q.ends_with(".ort/lib/libonnxruntime.so")));
    }

    #[test]
    fn installed_lib_dir_is_beside_the_bin_folder() {
        assert_eq!(installed_lib_dir(Path::new("/usr/bin")), Some(PathBuf::from("/usr/lib/mavboard")));
        assert_eq!(
            installed_lib_dir(Path::new("/tmp/root/usr/bin")),
            Some(PathBuf::from("/tmp/root/usr/lib/mavboard"))
        );
    }

    #[test]
    fn installed_candidates_come_after_the_existing_ones() {
        let explicit = Path::new("/x/libonnxruntime.so");
        let env = Path::new("/env/libonnxruntime.so");
        let exe = PathBuf::from("/opt/root/usr/bin");
        let c =
            candidates_for(Some(explicit), Some(env), std::slice::from_ref(&exe), Path::new("/src/mavboard"));
        assert_eq!(c[0], explicit);
        assert_eq!(c[1], env);
        assert_eq!(c[2], exe.join(LIB_NAMES[0]), "beside the executable before anything else");
        let pos = |p: &str| c.iter().position(|q| q == Path::new(p)).expect(p);
        let installed = pos(&format!("/opt/root/usr/lib/mavboard/{}", LIB_NAMES[0]));
        assert!(pos(&format!("/opt/root/usr/.ort/lib/{}", LIB_NAMES[0])) < installed);
        assert!(installed < pos(&format!("/src/mavboard/.ort/lib/{}", LIB_NAMES[0])));
    }

    #[test]
    fn bundle_frameworks_dir_is_only_for_contents_macos() {
        assert_eq!(
            bundle_frameworks_dir(Path::new("/Applications/mavboard.app/Contents/MacOS")),
            Some(PathBuf::from("/Applications/mavboard.app/Contents/Frameworks"))
        );
        assert_eq!(bundle_frameworks_dir(Path::new("/usr/bin")), None);
        assert_eq!(bundle_frameworks_dir(Path::new("/opt/MacOS")), None);
    }

    #[test]
    fn bundle_candidates_come_after_the_installed_ones() {
        let exe = PathBuf::from("/Applications/mavboard.app/Contents/MacOS");
        let c = candidates_for(None, None, std::slice::from_ref(&exe), Path::new("/src/mavboard"));
        assert_eq!(c[0], exe.join(LIB_NAMES[0]), "beside the executable first");
        let pos = |p: &str| c.iter().position(|q| q == Path::new(p)).expect(p);
        let installed = pos(&format!("/Applications/mavboard.app/Contents/lib/mavboard/{}", LIB_NAMES[0]));
        let bundle = pos(&format!("/Applications/mavboard.app/Contents/Frameworks/{}", LIB_NAMES[0]));
        assert!(installed < bundle, "{c:?}");
        assert!(bundle < pos(&format!("/src/mavboard/.ort/lib/{}", LIB_NAMES[0])), "{c:?}");
        // A Linux prefix gets no bundle candidates.
        let linux = candidates_for(None, None, &[PathBuf::from("/usr/bin")], Path::new("/src/mavboard"));
        assert!(!linux.iter().any(|p| p.to_string_lossy().contains("Frameworks")), "{linux:?}");
    }

    #[test]
    fn library_beside_a_windows_style_install_folder_is_found_first() {
        // The Windows installer puts the library beside the executable: the first folder looked in.
        let install = PathBuf::from("/Program Files/mavboard");
        let c = candidates_for(None, None, std::slice::from_ref(&install), Path::new("/src/mavboard"));
        assert_eq!(c[0], install.join(LIB_NAMES[0]));
    }

    #[test]
    fn library_in_a_macos_bundle_is_the_first_that_exists() {
        let root = std::env::temp_dir().join(format!("mavboard-ort-bundle-{}", std::process::id()));
        std::fs::remove_dir_all(&root).ok();
        let contents = root.join("mavboard.app").join("Contents");
        let macos = contents.join("MacOS");
        let frameworks = contents.join("Frameworks");
        std::fs::create_dir_all(&macos).expect("MacOS");
        std::fs::create_dir_all(&frameworks).expect("Frameworks");
        let lib = frameworks.join(LIB_NAMES[0]);
        std::fs::write(&lib, b"").expect("library stand-in");
        let c = candidates_for(None, None, &[macos], &root.join("no-checkout"));
        let found = c.iter().find(|p| p.is_file()).cloned();
        std::fs::remove_dir_all(&root).ok();
        assert_eq!(found, Some(lib));
    }

    #[test]
    fn library_in_an_unpacked_installed_tree_is_the_first_that_exists() {
        let root = std::env::temp_dir().join(format!("mavboard-ort-installed-{}", std::process::id()));
        std::fs::remove_dir_all(&root).ok();
        let bin = root.join("usr").join("bin");
        let lib_dir = root.join("usr").join("lib").join("mavboard");
        std::fs::create_dir_all(&bin).expect("bin");
        std::fs::create_dir_all(&lib_dir).expect("lib");
        let lib = lib_dir.join(LIB_NAMES[LIB_NAMES.len() - 1]);
        std::fs::write(&lib, b"").expect("library stand-in");
        let c = candidates_for(None, None, &[bin], &root.join("no-checkout"));
        let found = c.iter().find(|p| p.is_file()).cloned();
        std::fs::remove_dir_all(&root).ok();
        assert_eq!(found, Some(lib));
    }
}
