//! `mavboard pgn check` end to end over the fixtures.

use crate::common;

use common::mavboard_command;
use std::path::Path;

#[test]
fn check_reports_games_errors_and_speed() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/broken-middle.pgn");
    let out = mavboard_command().args(["pgn", "check"]).arg(&fixture).output().expect("mavboard runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("4 games read, 2 with errors"), "{stdout}");
    assert!(stdout.contains("MB/s"), "{stdout}");
    assert!(stdout.contains("game 3, line 17, column 19: 4... Bxc6 is not a legal move"), "{stdout}");
    assert!(stdout.contains("game 5, line 26:"), "{stdout}");
}

#[test]
fn check_fails_on_an_unreadable_file_but_reports_the_others() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/kokopu-chess960.pgn");
    let out = mavboard_command()
        .args(["pgn", "check", "/nonexistent/file.pgn"])
        .arg(&fixture)
        .output()
        .expect("mavboard runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(stdout.contains("could not be read"), "{stdout}");
    assert!(stdout.contains("4 games read, 0 with errors"), "{stdout}");
}

/// Movetext that is not PGN is an error of its game, named with its line, column and token; the game is
/// still counted (issue 33: `1. pawn goes to e4 *` read as `1. e4` with no error).
#[test]
fn check_names_tokens_that_are_not_pgn() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn/unrecognized-tokens.pgn");
    let dir = std::env::temp_dir().join(format!("mavboard-cli-pgn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pawn = dir.join("pawn.pgn");
    std::fs::write(&pawn, "1. pawn goes to e4 *").expect("write");
    let out =
        mavboard_command().args(["pgn", "check"]).arg(&pawn).arg(&fixture).output().expect("mavboard runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("pawn.pgn: 0 games read, 1 with errors"), "{stdout}");
    assert!(stdout.contains("  game 1, line 1, column 4: `pawn` is not PGN"), "{stdout}");
    // The stray token before a tag's `]` (line 65) no longer splits its game in two (issue 58).
    assert!(stdout.contains("unrecognized-tokens.pgn: 1 games read, 17 with errors"), "{stdout}");
    assert!(stdout.contains("  game 10, line 51, column 15: `…` is not PGN"), "{stdout}");
    assert!(
        stdout.contains("  game 13, line 65, column 19: `%~<|>` after the value of the Site tag"),
        "{stdout}"
    );
    assert!(stdout.contains("  game 17, line 83, column 13: 2. Ke3 is not a legal move"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
