//! `mavboard bench inference --threads`: every thread count measured in the same run, each later count's
//! rows giving their speed over the first count's (the ratio the note reports: one ONNX Runtime thread
//! against every core).

use crate::common;

use common::mavboard;

#[test]
fn thread_counts_are_measured_in_one_run_with_their_ratio() {
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/mav-enc-tiny");
    let args = [
        "bench",
        "inference",
        "--model",
        shipped,
        "--positions",
        "4",
        "--batch",
        "4",
        "--k",
        "all",
        "--threads",
    ];
    let (ok, out, err) = mavboard(&[&args[..], &["1,2,1", "--json"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["threads"], serde_json::json!([1, 2]), "each count once, in order");
    let runs = v["runs"].as_array().expect("rows");
    assert_eq!(runs.len(), 2, "{v}");
    assert_eq!((runs[0]["threads"].as_u64(), runs[1]["threads"].as_u64()), (Some(1), Some(2)));
    assert!(runs[0]["vs_first_threads"].is_null(), "the first count is the reference");
    let ratio = runs[1]["vs_first_threads"].as_f64().expect("a ratio");
    let rate = |r: &serde_json::Value| r["positions_per_s"].as_f64().expect("pos/s");
    assert!((ratio - rate(&runs[1]) / rate(&runs[0])).abs() < 1e-9, "{v}");
    let (ok, _, err) = mavboard(&[&args[..], &["0"]].concat());
    assert!(!ok && err.contains("--threads 0"), "{err}");
}

/// `mavboard bench search --lc0`: lc0's rows run in turn with mavboard's, with lc0's search threads one per
/// inference worker (and ONNX Runtime thread) and its minibatch the batch. A stand-in for lc0 records how it
/// was called and answers as lc0's benchmark does.
#[cfg(unix)]
#[test]
fn lc0_rows_run_with_the_same_batch_and_threads() {
    // Under the target folder: the stand-in runs from there (a temporary folder may be mounted noexec).
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-lc0-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let calls = dir.join("calls.txt");
    let fake = dir.join("lc0");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nprintf 'bestmove e2e4\\nTotal time (ms) : 500\\nNodes searched  : 1000\\n'\n",
            calls.display()
        ),
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/mav-enc-tiny");
    let weights = dir.join("net.pb.gz");
    std::fs::write(&weights, b"not read by the stand-in").expect("write");
    let (fake_s, weights_s) = (fake.to_string_lossy().into_owned(), weights.to_string_lossy().into_owned());
    let common = [
        "bench",
        "search",
        "--model",
        shipped,
        "--sims",
        "8",
        "--positions",
        "2",
        "--batch",
        "4",
        "--lc0",
        &fake_s,
        "--lc0-weights",
        &weights_s,
        "--json",
    ];
    // The engine's batches on 2 workers, 2 passes: lc0 twice with 2 threads, minibatch 4, both positions.
    let (ok, out, err) = mavboard(&[&common[..], &["--in-flight", "2", "--repeat", "2"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let lc0 = &v["lc0"][0];
    assert_eq!((lc0["batch"].as_u64(), lc0["threads"].as_u64()), (Some(4), Some(2)), "{v}");
    // Two positions of 1000 nodes in 500 ms each: 2000 nodes/s.
    assert_eq!(lc0["nodes_per_s"].as_f64(), Some(2000.0), "{v}");
    let ours = v["rows"][0]["sims_per_s"].as_f64().expect("mavboard's rate");
    assert!((lc0["mavboard_over_lc0"].as_f64().expect("ratio") - ours / 2000.0).abs() < 1e-9, "{v}");
    let text = std::fs::read_to_string(&calls).expect("lc0 was called");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "2 passes × 2 positions: {text}");
    for l in &lines {
        assert!(l.starts_with("benchmark ") && l.contains(&format!("--weights={weights_s}")), "{l}");
        assert!(
            l.contains("--threads=2") && l.contains("--minibatch-size=4") && l.contains("--nodes=8"),
            "{l}"
        );
        assert!(l.contains("--fen="), "{l}");
    }
    // The synchronous driver: lc0 on --threads (1).
    std::fs::remove_file(&calls).expect("reset");
    let (ok, out, err) = mavboard(&common);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["lc0"][0]["threads"].as_u64(), Some(1), "{v}");
    let text = std::fs::read_to_string(&calls).expect("lc0 was called");
    assert!(text.lines().all(|l| l.contains("--threads=1")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
