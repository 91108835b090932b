//! `mavboard mav` end to end: the Figure 1 example, the tokenizer export and the hallucination report.

use crate::common;

use common::mavboard;

#[test]
fn example_reproduces_figure_one() {
    let (ok, out, err) = mavboard(&[
        "mav",
        "example",
        "--prev-fen",
        "r1b1nr2/pp1np1bk/2pp1pp1/q3P3/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 13",
        "--action",
        "e5e6",
        "--commands",
        "%prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN",
        "--values",
        "d7b6=28,f6f5=33,d7c5=28,f8h8=29,a5f5=29",
        "--best",
        "f6f5",
        "--keep-order",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("\n[%top_5 d7b6:<ctrl28> f6f5:<ctrl33> d7c5:<ctrl28> f8h8:<ctrl29> a5f5:<ctrl29>]\n")
    );
    assert!(out.ends_with("[%FEN r1b1nr2/pp1np1bk/2ppP1p1/q4p2/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 14]\n"));
}

#[test]
fn tokenizer_export_and_parse_report() {
    let dir = std::env::temp_dir().join(format!("mavboard-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = dir.join("tokenizer.json");
    let (ok, out, err) = mavboard(&["mav", "tokenizer", "-o", json.to_str().expect("utf-8 path")]);
    assert!(ok, "{err}");
    assert!(out.contains("2188 tokens"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("written")).expect("JSON");
    assert_eq!(v["model"]["type"], "WordLevel");
    let output = dir.join("out.txt");
    std::fs::write(&output, "[%top_all e2e4:<ctrl40> e2e4:<ctrl40>]\n[%best_action e2e5]").expect("write");
    let (ok, out, err) = mavboard(&[
        "mav",
        "parse",
        output.to_str().expect("utf-8 path"),
        "--fen",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "--commands",
        "%FEN %top_all %best_action",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("duplicate move e2e4")
            && out.contains("missing legal moves")
            && out.contains("illegal move e2e5"),
        "{out}"
    );
    let (ok, _, err) = mavboard(&["mav", "parse", output.to_str().expect("utf-8 path")]);
    assert!(!ok && err.contains("--fen"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
