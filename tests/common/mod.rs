//! Helpers the integration tests share (the UI tests have their own, `tests/ui_common`): temporary
//! folders, the `mavboard` binary, chess positions from FEN, and the model packages in the tree.
//!
//! Each test binary uses some of them, so the rest would be dead code there.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

use mavboard::game::chess::ChessState;
use shakmaty::CastlingMode;
use shakmaty::fen::Fen;

/// A path under the system's temporary folder for this test process, `mavboard-{prefix}-{name}-{pid}`,
/// with whatever an earlier run left there removed; nothing is created.
pub fn temp_path(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// [`temp_path`], created as an empty folder.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = temp_path(prefix, name);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A command that runs the `mavboard` binary built for these tests.
pub fn mavboard_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mavboard"))
}

/// Runs `mavboard` with `args` and waits for it.
pub fn mavboard_output(args: &[&str]) -> Output {
    mavboard_command().args(args).output().expect("the binary runs")
}

/// Runs `mavboard` with `args`: whether it succeeded, its stdout and its stderr. It must not panic.
pub fn mavboard(args: &[&str]) -> (bool, String, String) {
    let out = mavboard_output(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// The standard-chess position of `fen` (which must be valid and legal).
pub fn chess(fen: &str) -> ChessState {
    let fen: Fen = fen.parse().expect("test FEN is valid");
    ChessState::new(
        fen.into_position(CastlingMode::Standard).expect("legal test position"),
        CastlingMode::Standard,
    )
}

/// The shipped model package `name` (`assets/models/NAME`).
pub fn package(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models").join(name)
}

/// The test model package `name` (`tests/fixtures/models/NAME`).
pub fn fixture_package(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models").join(name)
}

/// What the python-chess UCI checks need: `.venv-uci/`'s Python and Stockfish, or `None` (with a message)
/// when they may skip. With MAVBOARD_REQUIRE_UCI_CHECK set (as `./packaging/dev.sh test` sets it, so CI
/// runs them) a missing one fails instead.
pub fn uci_check_requirements() -> Option<(PathBuf, PathBuf)> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-uci/bin/python");
    let missing = match mavboard::uci::locate::locate_stockfish(None) {
        Ok(stockfish) if python.is_file() => return Some((python, stockfish)),
        Ok(_) => format!("no python-chess venv at {}", python.display()),
        Err(e) => e.to_string(),
    };
    assert!(
        std::env::var_os("MAVBOARD_REQUIRE_UCI_CHECK").is_none(),
        "MAVBOARD_REQUIRE_UCI_CHECK is set, but: {missing} (./packaging/dev.sh test installs both)"
    );
    eprintln!("skipped: {missing} (./packaging/dev.sh test installs both)");
    None
}
