//! mavboard's UCI server in a short tournament as GUIs run one (tests/uci/tournament.py): python-chess's
//! `chess.engine` plays mavboard (the shipped model) against Stockfish on real clocks (`wtime btime winc
//! binc`; 4 games at 5 s + 0.1 s, a margin for a loaded CI machine), with MultiPV and W/D/L on in half of
//! the games, pondering (`go ponder`, `ponderhit`, `stop`) in the others, `stop` sent at random moments
//! and `ucinewgame` between games. No protocol error, illegal
//! move, crash, time forfeit or late `bestmove` is allowed.
//!
//! The 100-game version is run by hand: `.venv-uci/bin/python tests/uci/tournament.py target/release/mavboard
//! /usr/games/stockfish out.pgn` (see the script). This test needs `.venv-uci/` and Stockfish, as
//! tests/cli/uci_python_chess.rs, and skips with a message without them unless MAVBOARD_REQUIRE_UCI_CHECK=1.
//! It is its own test binary so that nothing else runs beside its clocks.

use crate::common;

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn four_games_on_the_clock_against_stockfish_without_a_fault() {
    let Some((python, stockfish)) = common::uci_check_requirements() else { return };
    let dir = std::env::temp_dir().join(format!("mavboard-uci-tournament-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pgn = dir.join("tournament.pgn");
    // A debug build on a loaded CI machine: a looser lateness bound than the by-hand run's 50 ms, and a
    // ply cap that keeps the test short.
    let output = Command::new(python)
        .arg(root().join("tests/uci/tournament.py"))
        .arg(env!("CARGO_BIN_EXE_mavboard"))
        .arg(&stockfish)
        .arg(&pgn)
        .args(["--games", "4", "--clock", "5+0.1", "--max-plies", "80", "--late-ms", "250"])
        .current_dir(&dir)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}\n{stderr}");
    assert!(output.status.success(), "the tournament failed:\n{stdout}\n{stderr}");
    let games = std::fs::read_to_string(&pgn).expect("the tournament's PGN");
    assert_eq!(games.matches("[Event ").count(), 4, "{games}");
    assert!(games.contains("[TimeControl \"5+0.1\"]"), "{games}");
    for row in
        ["| protocol errors | 0 |", "| illegal moves | 0 |", "| crashes | 0 |", "| time forfeits | 0 |"]
    {
        assert!(stdout.contains(row), "{row} missing:\n{stdout}");
    }
    assert!(!stdout.contains("| stops sent | 0 |"), "some moves were stopped:\n{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}
