//! `mavboard pgn check` end to end over the fixtures.

mod common;

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
    assert!(stdout.contains("game 3, line 17:"), "{stdout}");
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
