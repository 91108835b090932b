//! Subcommands whose output is closed early (`mavboard analyse … | head -3`, issue 58) end quietly with
//! status 0, as ripgrep does (src/cli/out.rs), rather than panicking ("failed printing to stdout: Broken
//! pipe", status 101), and still write the files they were asked for. The reader that closes before
//! anything is written makes the first write meet a closed pipe every time; after one line, only the
//! commands with more output than a pipe holds (`pgn check` here) are sure to meet it.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use common::mavboard_command;

/// Runs `mavboard` with `args`, its stdout a pipe whose reader takes `lines` lines (none: it closes the
/// pipe before anything is written, so the first write meets a closed pipe) and then closes it; asserts
/// the quiet end.
fn closed_after(args: &[&str], lines: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = mavboard_command()
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut reader = BufReader::new(stdout);
    for _ in 0..lines {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).expect("a line") > 0, "{args:?} wrote no line");
    }
    drop(reader);
    let out = child.wait_with_output().expect("the binary ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} after {lines} line(s):\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "{args:?} after {lines} line(s):\n{stderr}");
}

fn both_ways(args: &[&str]) {
    closed_after(args, 1);
    closed_after(args, 0);
}

#[test]
fn analyse_ends_quietly() {
    both_ways(&["analyse"]);
}

#[test]
fn pgn_check_ends_quietly() {
    // Enough errors to fill any pipe's buffer after the first line.
    let fixture = "tests/fixtures/pgn/strict-errors.pgn";
    let mut args = vec!["pgn", "check"];
    args.extend(std::iter::repeat_n(fixture, 2000));
    both_ways(&args);
}

#[test]
fn perft_ends_quietly() {
    both_ways(&["perft", "--fen", "startpos", "--depth", "3", "--divide"]);
}

#[test]
fn eval_ends_quietly() {
    both_ways(&["eval", "--labels", "training/data/labels-c4", "--limit", "8", "--batch", "8"]);
}

/// Output closed before the first line: what else the command was asked to write is still written.
#[test]
fn files_asked_for_are_written_after_stdout_closes() {
    let json = std::env::temp_dir().join(format!("mavboard-broken-pipe-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&json);
    let path = json.to_string_lossy().into_owned();
    closed_after(
        &["eval", "--labels", "training/data/labels-c4", "--limit", "8", "--batch", "8", "--json", &path],
        0,
    );
    let report = std::fs::read_to_string(&json).expect("the report was written");
    assert!(report.trim_start().starts_with('{'), "{report}");
    let _ = std::fs::remove_file(&json);
}
