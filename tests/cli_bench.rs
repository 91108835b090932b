//! `mavboard bench inference --threads`: every thread count measured in the same run, each later count's
//! rows giving their speed over the first count's (the ratio the note reports: one ONNX Runtime thread
//! against every core).

mod common;

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
