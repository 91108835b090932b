//! The macOS bundle and Windows install-folder layouts, with the binary cargo just built: it is placed in a
//! temporary tree shaped like `mavboard.app/Contents/{MacOS,Frameworks,Resources}` (the layout of the
//! cargo-packager configuration in `Cargo.toml`), or like the Windows install folder (the executable with the
//! library and `assets/models` beside it), and must analyse a position from an unrelated working directory
//! without `ORT_DYLIB_PATH`, taking its model and ONNX Runtime from that tree.
//!
//! This runs on Linux with Linux files (the library keeps this system's name, `libonnxruntime.so`), so it
//! checks mavboard's lookups in those layouts, not a real bundle or installer. It needs the checkout's ONNX
//! Runtime (`./packaging/dev.sh ort`); without it the tests skip with a message, unless
//! `MAVBOARD_REQUIRE_DEB=1` (set by `./packaging/dev.sh test`), where they fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::packaging_common;
use packaging_common::Scratch;

/// The checkout's ONNX Runtime library, or `None` (after saying why) when the test skips.
fn checkout_library() -> Option<PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ort/lib/libonnxruntime.so");
    if lib.is_file() {
        return std::fs::canonicalize(&lib).ok();
    }
    let why = format!("{} is missing", lib.display());
    assert!(
        !std::env::var("MAVBOARD_REQUIRE_DEB").is_ok_and(|v| v == "1"),
        "MAVBOARD_REQUIRE_DEB=1 but {why}"
    );
    eprintln!("SKIP: {why}; fetch it with `./packaging/dev.sh ort`");
    None
}

/// Places the built binary at `to` (a hard link where the file system allows, else a copy: not a symbolic
/// link, which the running program would see through).
fn place_binary(to: &Path) {
    let bin = Path::new(env!("CARGO_BIN_EXE_mavboard"));
    std::fs::create_dir_all(to.parent().expect("a folder")).expect("binary folder");
    if std::fs::hard_link(bin, to).is_err() {
        std::fs::copy(bin, to).expect("copy the binary");
    }
}

/// Copies every file under `from` to the same place under `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for entry in std::fs::read_dir(from).expect("read a folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// Runs `bin analyse --fen startpos` from an empty folder without `ORT_DYLIB_PATH`, and checks that it
/// valued the twenty first moves with the model from `models` and the library from `lib_dir`.
fn assert_analyses_with(bin: &Path, models: &Path, lib_dir: &Path, tag: &str) {
    let elsewhere = Scratch::new(&format!("{tag}-cwd"));
    let out = Command::new(bin)
        .args(["analyse", "--fen", "startpos"])
        .current_dir(&elsewhere.0)
        .env_remove("ORT_DYLIB_PATH")
        .env("RUST_LOG", "mavboard=info")
        .output()
        .expect("run mavboard");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{} failed ({}):\n{stdout}\n{stderr}", bin.display(), out.status);
    let model_line = stdout.lines().find(|l| l.starts_with("model")).expect("a model line");
    assert!(
        model_line.contains(&models.display().to_string()),
        "model not from {}: {model_line}",
        models.display()
    );
    assert!(
        stderr.contains(&format!("ONNX Runtime library loaded from {}", lib_dir.display())),
        "ONNX Runtime not from {}:\n{stderr}",
        lib_dir.display()
    );
    let moves = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[0].len() == 4 && w[0].chars().all(|c| c.is_ascii_alphanumeric()))
        .filter(|w| w[1].parse::<f64>().is_ok() && w[2].parse::<f64>().is_ok())
        .count();
    assert_eq!(moves, 20, "expected 20 moves with values:\n{stdout}");
}

#[test]
fn macos_bundle_layout_finds_its_frameworks_and_resources() {
    let Some(lib) = checkout_library() else { return };
    let scratch = Scratch::new("bundle");
    // Real paths: the temporary folder may itself be reached through a link.
    let root = std::fs::canonicalize(&scratch.0).expect("scratch");
    let contents = root.join("mavboard.app").join("Contents");
    let bin = contents.join("MacOS").join("mavboard");
    place_binary(&bin);
    let frameworks = contents.join("Frameworks");
    std::fs::create_dir_all(&frameworks).expect("Frameworks");
    std::fs::copy(&lib, frameworks.join("libonnxruntime.so")).expect("copy the library");
    let models = contents.join("Resources").join("assets").join("models");
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models"), &models);
    assert_analyses_with(&bin, &models, &frameworks, "bundle");
}

#[test]
fn windows_install_folder_layout_finds_everything_beside_the_executable() {
    let Some(lib) = checkout_library() else { return };
    let scratch = Scratch::new("install");
    let root = std::fs::canonicalize(&scratch.0).expect("scratch");
    let install = root.join("mavboard");
    let bin = install.join("mavboard");
    place_binary(&bin);
    std::fs::copy(&lib, install.join("libonnxruntime.so")).expect("copy the library");
    let models = install.join("assets").join("models");
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models"), &models);
    assert_analyses_with(&bin, &models, &install, "install");
}
