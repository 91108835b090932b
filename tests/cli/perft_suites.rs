//! Perft suites from tests/fixtures/perft (see SOURCES.md there): every position's move-tree counts must
//! match the published numbers. The three suites are separate tests so the harness runs them in parallel.

use crate::common;

use std::path::PathBuf;

use common::mavboard_output;
use mavboard::game::GameKind;
use mavboard::game::GameState;
use mavboard::game::perft_suite::{PerftSuite, SuiteFormat, parse_suite};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/perft").join(name)
}

fn load(name: &str) -> PerftSuite {
    let path = fixture(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_suite(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Checks every case up to `max_depth`; returns the number of counts compared.
fn check_all(suite: &PerftSuite, max_depth: Option<u32>) -> usize {
    let mut compared = 0;
    let mut failures = Vec::new();
    for case in &suite.cases {
        for c in case.check(max_depth) {
            compared += 1;
            if !c.ok() {
                failures.push(format!(
                    "{} ({}): depth {} expected {} got {}",
                    case.name, case.fen, c.depth, c.expected, c.got
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    compared
}

#[test]
fn perftsuite_epd_to_depth_4() {
    let suite = load("perftsuite.epd");
    assert_eq!(suite.format, SuiteFormat::Epd);
    assert_eq!(suite.cases.len(), 126);
    assert!(suite.cases.iter().all(|c| c.state.kind() == GameKind::Chess));
    assert_eq!(check_all(&suite, Some(4)), 126 * 4);
}

#[test]
fn fischer_epd_to_depth_3() {
    let suite = load("fischer.epd");
    assert_eq!(suite.format, SuiteFormat::Epd);
    assert_eq!(suite.cases.len(), 960);
    // Shredder-FEN castling means Chess960; without castling rights the two rule sets coincide.
    for c in &suite.cases {
        let castling = c.fen.split_whitespace().nth(2).expect("castling field");
        let want = if castling == "-" { GameKind::Chess } else { GameKind::Chess960 };
        assert_eq!(c.state.kind(), want, "{}", c.fen);
    }
    assert_eq!(check_all(&suite, Some(3)), 960 * 3);
}

#[test]
fn tricky_perft_in_full() {
    let suite = load("tricky.perft");
    assert_eq!(suite.format, SuiteFormat::Blocks);
    assert_eq!(suite.cases.len(), 19);
    let total: usize = suite.cases.iter().map(|c| c.expected.len()).sum();
    assert_eq!(check_all(&suite, None), total);
    let xfen = suite.cases.iter().filter(|c| c.name.starts_with("xfen-")).collect::<Vec<_>>();
    assert_eq!(xfen.len(), 5);
    assert!(
        xfen.iter().all(|c| c.state.kind() == GameKind::Chess960),
        "X-FEN castling off e/a/h is Chess960"
    );
}

#[test]
fn cli_suite_passes_and_fails_with_exit_code() {
    let out = mavboard_output(&[
        "perft",
        "--suite",
        fixture("tricky.perft").to_str().expect("UTF-8 path"),
        "--max-depth",
        "2",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("OK   pos-2 [chess]: D1 48  D2 2039"), "{stdout}");
    assert!(stdout.contains("total: 19 positions"), "{stdout}");

    let bad = std::env::temp_dir().join(format!("mavboard-bad-suite-{}.epd", std::process::id()));
    std::fs::write(&bad, "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 67\n").expect("temp file written");
    let out = mavboard_output(&["perft", "--suite", bad.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_file(&bad);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a wrong count must fail");
    assert!(stdout.contains("FAIL line 1 [chess]: D1 15  D2 expected 67 got 66"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 perft count(s) differ"));
}

#[test]
fn cli_fen_and_divide() {
    let out = mavboard_output(&["perft", "--fen", "startpos", "--depth", "3", "--divide"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("e2e4 600\n"), "{stdout}");
    assert!(stdout.contains("moves: 20\n") && stdout.contains("depth 3: 8902 nodes"), "{stdout}");

    let out = mavboard_output(&["perft", "--fen", "4k3/8/8/8/8/8/8/4K2R w X - 0 1", "--depth", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad castling field `X`"));
}
