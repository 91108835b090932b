//! mavboard's UCI server under a strict third-party client: python-chess's `chess.engine` analyses with
//! MultiPV 3 and W/D/L, then plays a short match against Stockfish (tests/uci/match_stockfish.py).
//!
//! Needs `.venv-uci/` (python-chess; `./packaging/dev.sh test` creates it) and Stockfish (apt). Skips with
//! a message when either is missing, unless MAVBOARD_REQUIRE_UCI_CHECK=1 (set by dev.sh test, so CI runs it).

use crate::common;

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn python_chess_analyses_with_multipv_and_wdl_and_plays_stockfish() {
    let Some((python, stockfish)) = common::uci_check_requirements() else { return };
    let dir = std::env::temp_dir().join(format!("mavboard-uci-python-chess-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pgn = dir.join("match.pgn");
    let output = Command::new(python)
        .arg(root().join("tests/uci/match_stockfish.py"))
        .arg(env!("CARGO_BIN_EXE_mavboard"))
        .arg(&stockfish)
        .arg(&pgn)
        .args(["--games", "2", "--plies", "30", "--nodes", "48"])
        // The shipped model is found without the repository as the working directory.
        .current_dir(&dir)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the python-chess check failed:\n{stdout}\n{stderr}");
    let games = std::fs::read_to_string(&pgn).expect("the match's PGN");
    println!("{stdout}\n{games}");
    assert_eq!(games.matches("[Event ").count(), 2, "{games}");
    assert!(games.contains("[White \"mavboard\"]") && games.contains("[Black \"mavboard\"]"), "{games}");
    assert!(games.contains(" wdl "), "mavboard's moves carry their W/D/L: {games}");
    std::fs::remove_dir_all(&dir).ok();
}
