//! The `mavboard datagen labels` command line: errors a user can meet before any labelling starts, and a
//! small Connect Four run rendered through the CLI.

use crate::common;

use common::mavboard;
use std::process::Command;

#[test]
fn missing_stockfish_names_the_path_and_the_fix() {
    let out = std::env::temp_dir().join(format!("mavboard-cli-dg-{}", std::process::id()));
    let (ok, _, err) = mavboard(&[
        "datagen",
        "labels",
        "--out",
        out.to_str().expect("utf-8 temp dir"),
        "--stockfish",
        "/nonexistent/stockfish-binary",
    ]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/stockfish-binary"), "{err}");
    assert!(err.contains("apt-get install stockfish") && err.contains("--stockfish PATH"), "{err}");
    assert!(!out.exists(), "nothing is written when the engine is missing");
}

#[test]
fn bad_mix_and_missing_books_are_explained() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/datagen");
    let out = std::env::temp_dir().join(format!("mavboard-cli-dg2-{}", std::process::id()));
    let out = out.to_str().expect("utf-8 temp dir");
    // Only meaningful where an engine is found: otherwise that error comes first (tested above).
    if mavboard::uci::locate::locate_stockfish(None).is_err() {
        return eprintln!("SKIPPED: no Stockfish installed");
    }
    let (ok, _, err) =
        mavboard(&["datagen", "labels", "--out", out, "--shared", fixtures, "--mix", "2moves=1"]);
    assert!(!ok);
    assert!(err.contains("2moves_v1.epd not found") && err.contains("--shared DIR"), "{err}");
    let (ok, _, err) = mavboard(&["datagen", "labels", "--out", out, "--mix", "4moves=1"]);
    assert!(!ok);
    assert!(err.contains("unknown suite"), "{err}");
    let (ok, _, err) = mavboard(&["datagen", "labels", "--out", out, "--book", "/nonexistent/book.epd"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/book.epd"), "{err}");
}

#[test]
fn connect_four_labels_and_render_through_the_cli() {
    let base = std::env::temp_dir().join(format!("mavboard-cli-dg-c4-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (labels, render) = (base.join("labels"), base.join("render"));
    let (l, r) = (labels.to_str().expect("utf-8"), render.to_str().expect("utf-8"));
    let (ok, _, err) = mavboard(&["datagen", "labels", "--game", "connect_four", "--out", l, "--depth", "4"]);
    assert!(!ok && err.contains("--depth is for chess labels"), "{err}");
    let args =
        ["datagen", "labels", "--game", "connect_four", "--out", l, "--positions", "6", "--threads", "1"];
    let (ok, _, err) = mavboard(
        &[&args[..], &["--opening-min", "18", "--opening-max", "20", "--continuations", "2"]].concat(),
    );
    assert!(ok, "{err}");
    assert!(err.contains("6 records") && err.contains("Connect Four solver"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["datagen", "render", "--labels", l, "--out", r])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("rendered 6 labels") && stdout.contains("no action-value format"), "{stdout}");
    let meta = std::fs::read_to_string(render.join("meta.json")).expect("meta.json");
    assert!(meta.contains("\"connect_four\""), "{meta}");
    let _ = std::fs::remove_dir_all(&base);
}
