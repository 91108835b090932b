//! The crash journal, tested the way it fails: the real binary (`mavboard journal-drill`, the app's state
//! and journal without a window) makes seeded random edits and is killed with SIGKILL at random moments,
//! again and again. After each kill the journal is read with the reader the app uses at start: it must
//! read (never half-written, no temporary file taken for it) and hold a state the drill handed over no
//! earlier than the last one it saw written; the next run must restore exactly that state. The worst lag
//! from an edit to its journal on disk is printed (and must stay under a second).

#![cfg(unix)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mavboard::app::journal::store::orphans;
use rand::{Rng, SeedableRng};

/// How many times the drill is killed.
const KILLS: usize = 100;

/// What one run of the drill said.
#[derive(Debug, Default)]
struct Said {
    restored: Option<(u64, u64)>,
    handed: HashMap<u64, u64>,
    last_handed: Option<u64>,
    last_written: Option<u64>,
    worst_lag_us: u64,
    writes: usize,
}

fn parse(lines: &[String]) -> Said {
    let mut said = Said::default();
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("digest {s}: {e}"));
    let num = |s: &str| s.parse::<u64>().unwrap_or_else(|e| panic!("number {s}: {e}"));
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["restored", g, d] => said.restored = Some((num(g), hex(d))),
            ["discarded", _] => {}
            ["handed", g, d] => {
                let g = num(g);
                assert!(said.last_handed.is_none_or(|last| g > last), "generations go up: {lines:?}");
                said.handed.insert(g, hex(d));
                said.last_handed = Some(g);
            }
            ["written", g, lag] => {
                said.last_written = Some(num(g));
                said.worst_lag_us = said.worst_lag_us.max(num(lag));
                said.writes += 1;
            }
            _ => panic!("an unexpected line from the drill: {line:?}"),
        }
    }
    said
}

fn temp_home() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-journal-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn temporaries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).count())
        .unwrap_or(0)
}

#[test]
fn killed_at_random_moments_the_journal_is_whole_and_the_next_start_restores_it() {
    let home = temp_home();
    let dir = home.join("mavboard").join("journal");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let mut on_disk: Option<(u64, u64)> = None;
    let (mut kills, mut restores, mut writes, mut worst_lag_us, mut temporaries_seen) = (0, 0, 0, 0, 0);
    let started = Instant::now();
    for run in 0..KILLS {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mavboard"))
            .args(["journal-drill", "--seed", &run.to_string()])
            .env("XDG_STATE_HOME", &home)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the mavboard binary starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            // Whole lines only: a line the kill cut short (no newline) is not taken.
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) && line.ends_with(b"\n") {
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                line.clear();
                if tx.send(text).is_err() {
                    break;
                }
            }
        });
        let mut lines = Vec::new();
        // A fifth of the kills land while the drill starts and restores; the rest during its edits.
        let early = rng.random_bool(0.2);
        if !early {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !lines.iter().any(|l: &String| l.starts_with("handed")) {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(line) => lines.push(line),
                    Err(_) => break,
                }
            }
        }
        let wait = Duration::from_millis(rng.random_range(0..if early { 40 } else { 150 }));
        std::thread::sleep(wait);
        child.kill().expect("kill");
        let status = child.wait().expect("wait");
        if status.signal() != Some(9) {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("run {run}: the drill ended by itself ({status}): {err}");
        }
        kills += 1;
        // The rest of its output: the reader ends at the closed pipe.
        lines.extend(rx.iter());
        let said = parse(&lines);
        if let Some(restored) = said.restored {
            restores += 1;
            assert_eq!(Some(restored), on_disk, "run {run}: the restored game is the last journaled state");
        } else {
            assert!(
                on_disk.is_none() || said.handed.is_empty(),
                "run {run}: a journal was on disk but not offered: {lines:?}"
            );
        }
        writes += said.writes;
        worst_lag_us = worst_lag_us.max(said.worst_lag_us);
        temporaries_seen += temporaries(&dir);

        // The journal as the app reads it at start.
        let (found, errors) = orphans(&dir);
        assert!(errors.is_empty(), "run {run}: a journal did not read: {errors:?}");
        assert!(found.len() <= 2, "run {run}: {} journals", found.len());
        let newest = found.first().map(|o| (o.entry.generation, o.entry.digest()));
        match newest {
            Some((g, d)) => {
                let from_this_run = said.handed.get(&g) == Some(&d);
                assert!(
                    from_this_run || newest == on_disk,
                    "run {run}: journal generation {g} ({d:016x}) is neither a state this run handed over \
                     nor the one before it: {lines:?}"
                );
                if let Some(w) = said.last_written {
                    assert!(from_this_run && g >= w, "run {run}: generation {w} was written, {g} is on disk");
                }
            }
            None => assert!(
                on_disk.is_none() && said.last_written.is_none(),
                "run {run}: the journal is gone: {lines:?}"
            ),
        }
        drop(found);
        on_disk = newest;
    }
    let elapsed = started.elapsed();
    println!(
        "journal kill test: {kills} kills in {:.1} s, {restores} restores, {writes} journal writes, \
         {temporaries_seen} temporary files left by kills (never read as journals); worst lag from an edit \
         to its journal on disk: {:.1} ms",
        elapsed.as_secs_f64(),
        worst_lag_us as f64 / 1000.0
    );
    assert!(kills >= 50);
    assert!(restores >= KILLS / 2, "only {restores} runs restored a journal");
    assert!(worst_lag_us < 1_000_000, "an edit reached the journal {worst_lag_us} µs late");
    let _ = std::fs::remove_dir_all(&home);
}
