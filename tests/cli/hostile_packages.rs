//! Hostile or damaged files handed to mavboard, each run by the real binary under a 1.5 GB address-space
//! limit (`ulimit -v`): a model.onnx whose weights live outside the package folder (a relative path that
//! climbs out, an absolute path), one that claims a 4 GiB tensor (external or embedded), a mav.json or a
//! tokenizer.json of 4 GiB, an inspection graph named outside the folder, a gzip bomb or a 2 GiB file given
//! to `import lc0`. Each is refused with a named error and exit status 1: no panic, no abort from a failed
//! allocation (which the limit would turn any unbounded read into).
//!
//! The model.onnx files are tests/fixtures/hostile/*.onnx (written by make_hostile.py there).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The address space the binary may use, in KiB (analysing with the shipped model takes well under 1 GB).
const LIMIT_KIB: u64 = 1_500_000;

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-hostile-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(dir.join("pkg")).expect("scratch");
    dir
}

/// A package folder `ROOT/pkg` with the shipped encoder's mav.json and tokenizer.json and `model` as its
/// model.onnx; `ROOT/secret.bin` lies outside it and `pkg/weights.bin` (16 bytes) inside.
fn package_with(tag: &str, model: &str) -> PathBuf {
    let root = scratch(tag);
    let pkg = root.join("pkg");
    let src = common::package("mav-enc-tiny");
    for f in ["mav.json", "tokenizer.json"] {
        std::fs::copy(src.join(f), pkg.join(f)).expect("copy");
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile").join(model);
    std::fs::copy(&fixture, pkg.join("model.onnx")).expect("model");
    std::fs::write(pkg.join("weights.bin"), [0u8; 16]).expect("weights");
    std::fs::write(root.join("secret.bin"), b"not the package's\n").expect("secret");
    pkg
}

/// Runs the binary with `args` under [`LIMIT_KIB`]: it must fail with status 1 and no panic; its stderr.
fn refused(args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_mavboard"))
        .args(args)
        .output()
        .expect("bash runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "refused by name, not aborted ({:?}): {stderr}", out.status);
    stderr
}

fn analyse(pkg: &Path) -> String {
    refused(&["analyse", "--model", pkg.to_str().expect("utf-8"), "--fen", START])
}

#[test]
fn the_shipped_model_analyses_under_the_limit() {
    // The control: the limit leaves room for an honest package (so the refusals below are not the limit's).
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_mavboard"))
        .args(["analyse", "--fen", START])
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn weights_outside_the_package_folder_are_refused() {
    let msg = analyse(&package_with("outside", "external-outside.onnx"));
    assert!(msg.contains("model.onnx") && msg.contains("escapes model directory"), "{msg}");
    let msg = analyse(&package_with("absolute", "external-absolute.onnx"));
    assert!(msg.contains("model.onnx") && msg.contains("Absolute path not allowed"), "{msg}");
}

#[test]
fn a_claimed_4_gib_tensor_is_refused_unread() {
    let msg = analyse(&package_with("huge-external", "external-huge.onnx"));
    assert!(msg.contains("4294967296") && msg.contains("out of bounds"), "{msg}");
    let msg = analyse(&package_with("huge-embedded", "embedded-huge.onnx"));
    assert!(msg.contains("4294967296") && msg.contains("exceeds"), "{msg}");
}

#[test]
fn a_4_gib_manifest_or_tokenizer_is_refused_unread() {
    for (file, limit) in [("mav.json", "16 MiB"), ("tokenizer.json", "64 MiB")] {
        let pkg = package_with(&format!("big-{file}"), "external-huge.onnx");
        std::fs::copy(common::package("mav-enc-tiny").join("model.onnx"), pkg.join("model.onnx"))
            .expect("model");
        let f = std::fs::File::create(pkg.join(file)).expect("create");
        f.set_len(4 << 30).expect("a sparse file of 4 GiB");
        let msg = analyse(&pkg);
        assert!(msg.contains(file) && msg.contains(&format!("larger than {limit}")), "{file}: {msg}");
    }
}

#[test]
fn an_inspection_graph_outside_the_folder_is_refused() {
    let root = scratch("inspection");
    let pkg = root.join("pkg");
    let src = common::package("mav-enc-tiny");
    for entry in std::fs::read_dir(&src).expect("shipped package") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), pkg.join(entry.file_name())).expect("copy");
    }
    let path = pkg.join("mav.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("mav.json")).expect("json");
    m["inspection"] = serde_json::json!({"file": "../inspect.onnx"});
    std::fs::write(&path, serde_json::to_string_pretty(&m).expect("json")).expect("write");
    let msg = refused(&["inspect", "--model", pkg.to_str().expect("utf-8"), "--fen", START]);
    assert!(msg.contains("inspection.file") && msg.contains("a file name in the package folder"), "{msg}");
}

#[test]
fn a_gzip_bomb_or_a_huge_file_given_to_import_lc0_is_refused() {
    use std::io::Write;
    let root = scratch("bomb");
    // 300 MiB of zeros pack into about 300 KB: past what such a file may unpack to.
    let bomb = root.join("bomb.pb.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&bomb).expect("create"),
        flate2::Compression::fast(),
    );
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..300 {
        gz.write_all(&zeros).expect("gzip");
    }
    gz.finish().expect("gzip");
    let out = root.join("out");
    let msg = refused(&["import", "lc0", bomb.to_str().expect("utf-8"), "-o", out.to_str().expect("utf-8")]);
    assert!(msg.contains("gzip bomb") && msg.contains("bomb.pb.gz"), "{msg}");
    assert!(!out.exists(), "nothing is written");

    let huge = root.join("huge.onnx");
    std::fs::File::create(&huge).expect("create").set_len(2 << 30).expect("a sparse file of 2 GiB");
    let msg = refused(&["import", "lc0", huge.to_str().expect("utf-8"), "-o", out.to_str().expect("utf-8")]);
    assert!(msg.contains("huge.onnx") && msg.contains("larger than 1024 MiB"), "{msg}");
    std::fs::remove_dir_all(&root).ok();
}
