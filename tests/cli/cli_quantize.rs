//! `mavboard package quantize`: int8 copies of real packages (the shipped `mav-enc-tiny` and the
//! action-value fixture) that open as packages, carry ONNX Runtime's integer operators, are smaller, and
//! value every move close to the fp32 package; a remote package and a full output folder are refused.
//!
//! The conversion needs the importer's Python packages (onnx and onnxruntime, `./packaging/dev.sh
//! import-deps`, which `./packaging/dev.sh test` runs): without them these tests skip with a message, unless
//! MAVBOARD_REQUIRE_IMPORT=1 (set by dev.sh test and so by CI), where they fail.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{mavboard_command, temp_dir};
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::mav::scoring::Scoring;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A Python with onnx and onnxruntime's quantization tooling, or `false` (skip) outside dev.sh/CI.
fn quantizer_ready() -> bool {
    for py in mavboard::model::import::find_python() {
        let ok = Command::new(&py)
            .args(["-c", "import onnx, onnxruntime.quantization"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return true;
        }
    }
    if std::env::var("MAVBOARD_REQUIRE_IMPORT").is_ok_and(|v| v == "1") {
        panic!(
            "onnx and onnxruntime are missing from the importer's environment: ./packaging/dev.sh import-deps"
        );
    }
    println!("skipped: onnx and onnxruntime are missing (./packaging/dev.sh import-deps)");
    false
}

fn quantize(package: &Path, out: &Path) -> std::process::Output {
    mavboard_command()
        .args(["package", "quantize"])
        .arg(package)
        .arg("-o")
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mavboard runs")
}

/// Each move's mean value in a few positions (the start, an open game, a middlegame, an endgame).
fn mean_values(package: &Path) -> HashMap<(usize, String), f64> {
    let positions = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 b - - 3 10",
        "8/5k2/8/3K4/8/8/4P3/8 w - - 0 1",
    ];
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        load_evaluator(package, &Default::default()).expect("the package opens");
    let mut out = HashMap::new();
    for (i, fen) in positions.iter().enumerate() {
        let mut req = EvalRequest::values(ChessState::from_fen(fen).expect("fen"));
        req.top_k = TopK::All;
        let r = eval.evaluate(&[req]).pop().expect("one").expect("valued");
        for m in r.moves {
            out.insert((i, m.text.clone()), m.value(Scoring::Mean).expect("valued"));
        }
    }
    out
}

#[test]
fn int8_copies_open_and_value_every_move_close_to_fp32() {
    if !quantizer_ready() {
        return;
    }
    let dir = temp_dir("quantize", "copies");
    for (source, name) in [
        ("assets/models/mav-enc-tiny", "mav-enc-tiny-int8"),
        ("tests/fixtures/models/av-fixture", "av-fixture-int8"),
    ] {
        let out = dir.join(name);
        let o = quantize(&repo(source), &out);
        assert!(o.status.success(), "{source}: {}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("MatMulInteger") && stdout.contains(name), "{stdout}");
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("mav.json")).expect("mav.json"))
                .expect("json");
        assert_eq!(manifest["name"], name);
        assert!(manifest.get("inspection").is_none() && !out.join("inspect.onnx").exists());
        let size = |p: &Path| std::fs::metadata(p).expect("model.onnx").len();
        let (fp32, int8) = (size(&repo(source).join("model.onnx")), size(&out.join("model.onnx")));
        // The matrix products shrink fourfold; the embeddings stay float (most of the tiny fixture).
        assert!(int8 < fp32, "{source}: {int8} bytes is not under {fp32}");
        println!("{source}: model.onnx {fp32} → {int8} bytes");
        let card = std::fs::read_to_string(out.join("MODEL_CARD.md")).expect("card");
        assert!(card.contains("## int8 copy"), "{card}");

        let (a, b) = (mean_values(&repo(source)), mean_values(&out));
        assert_eq!(a.len(), b.len(), "{source}: the same moves valued");
        let worst = a.iter().map(|(k, v)| (v - b[k]).abs()).fold(0.0, f64::max);
        println!("{source}: {} moves, largest |Δ mean value| int8 vs fp32 = {worst:.4}", a.len());
        assert!(worst < 0.03, "{source}: int8 moves a value by {worst}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn remote_packages_and_full_folders_are_refused() {
    let dir = temp_dir("quantize", "refused");
    let remote = dir.join("remote");
    std::fs::create_dir_all(&remote).expect("mkdir");
    let mut manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo("tests/fixtures/models/av-fixture/mav.json")).expect("mav.json"),
    )
    .expect("json");
    manifest["remote"] = serde_json::json!({"endpoint": "http://127.0.0.1:9", "model": "x"});
    std::fs::write(remote.join("mav.json"), manifest.to_string()).expect("write");
    let o = quantize(&remote, &dir.join("out"));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a remote package"), "{o:?}");
    let full = dir.join("full");
    std::fs::create_dir_all(&full).expect("mkdir");
    std::fs::write(full.join("keep.txt"), "mine").expect("write");
    let o = quantize(&repo("tests/fixtures/models/av-fixture"), &full);
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists and is not empty"), "{o:?}");
    assert_eq!(std::fs::read_to_string(full.join("keep.txt")).expect("kept"), "mine");
    let _ = std::fs::remove_dir_all(&dir);
}
