//! Game review end to end with the shipped model: real PGN files annotated, and proof that nothing was
//! lost — every game, header, move, comment, NAG and variation reads back, and the original bytes are all
//! there with only whole review tokens inserted. The CLI runs as a child process, is interrupted and
//! resumes.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{mavboard_command, temp_dir};
use mavboard::engine::{EvaluatorBox, EvaluatorFactory, FactoryError};
use mavboard::inference::load_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::pgn::{GameTree, NodeId, PgnReader};
use mavboard::review::{BatchEnd, BatchOptions, BatchPaths, ReviewOptions, review_file};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/pgn").join(name)
}

fn model_factory() -> EvaluatorFactory {
    Arc::new(|_| -> Result<EvaluatorBox, FactoryError> {
        let mavboard::inference::LoadedModel { evaluator: e, .. } =
            load_evaluator(&root().join("assets/models/mav-enc-tiny"), &SessionOptions::default())?;
        Ok(e)
    })
}

fn options() -> BatchOptions {
    BatchOptions { review: ReviewOptions::default(), workers: 1, model: "mav-enc-tiny".into(), judge: None }
}

/// The first `n` games of a PGN text (cut before the (n+1)-th `[Event` at the start of a line).
fn first_games(text: &str, n: usize) -> &str {
    let mut at = 0;
    for _ in 0..n {
        match text[at..].find("\n[Event ") {
            Some(i) => at += i + 1,
            None => return text,
        }
    }
    &text[..at]
}

/// The length of the review token at the start of `s` (`{...}` or `$digits`), if one starts there.
fn token_len(s: &[u8]) -> Option<usize> {
    match s.first()? {
        b'{' => s.iter().position(|&b| b == b'}').map(|i| i + 1),
        b'$' => {
            let digits = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            (digits > 0).then_some(1 + digits)
        }
        _ => None,
    }
}

/// Checks that `output` is `input` with only review tokens (` {…}`, ` $n`, a `{…} ` game comment) and
/// `% mavboard` lines inserted; returns how many were inserted.
fn inserted_tokens(input: &[u8], output: &[u8]) -> usize {
    let (mut i, mut j, mut tokens) = (0, 0, 0);
    while i < input.len() {
        if j < output.len() && input[i] == output[j] {
            i += 1;
            j += 1;
            continue;
        }
        let rest = &output[j.min(output.len())..];
        if rest.starts_with(b"% mavboard") {
            j += rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |p| p + 1);
        } else if rest.first() == Some(&b' ')
            && let Some(len) = token_len(&rest[1..])
        {
            j += 1 + len;
        } else if let Some(len) = token_len(rest) {
            j += len;
            if output.get(j) == Some(&b' ') {
                j += 1;
            }
        } else {
            let context = |b: &[u8], at: usize| {
                String::from_utf8_lossy(&b[at.saturating_sub(60)..(at + 60).min(b.len())]).into_owned()
            };
            panic!(
                "original byte {i} lost:\ninput  …{}…\noutput …{}…",
                context(input, i),
                context(output, j)
            );
        }
        tokens += 1;
    }
    let tail = &output[j.min(output.len())..];
    assert!(
        tail.is_empty() || tail == b"\n",
        "unexpected output after the last game: {:?}",
        String::from_utf8_lossy(tail)
    );
    tokens
}

/// Walks both trees: the same moves and variations; comments and NAGs of the original are kept, in
/// order, ahead of anything added.
fn same_game(original: &GameTree, annotated: &GameTree) {
    assert_eq!(original.headers(), annotated.headers());
    assert_eq!(original.start(), annotated.start());
    assert_eq!(original.result(), annotated.result());
    let mut stack = vec![(NodeId::ROOT, NodeId::ROOT)];
    while let Some((a, b)) = stack.pop() {
        let (x, y) = (original.node(a).expect("node"), annotated.node(b).expect("node"));
        assert_eq!(x.record(), y.record());
        assert_eq!(x.comments_before(), y.comments_before());
        assert!(
            y.comments_after().starts_with(x.comments_after()),
            "{:?} vs {:?}",
            x.comments_after(),
            y.comments_after()
        );
        assert!(y.nags().starts_with(x.nags()));
        assert_eq!(x.children().len(), y.children().len());
        stack.extend(x.children().iter().copied().zip(y.children().iter().copied()));
    }
}

/// Reads both files game by game and checks that nothing was lost; returns (games, reviewed games).
fn check_nothing_lost(input: &[u8], output: &[u8]) -> (usize, usize) {
    let originals: Vec<_> = PgnReader::new(input).collect();
    let annotated: Vec<_> = PgnReader::new(output).collect();
    assert_eq!(originals.len(), annotated.len(), "game count changed");
    let mut reviewed = 0;
    for (n, (o, a)) in originals.iter().zip(&annotated).enumerate() {
        match (o, a) {
            (Ok(o), Ok(a)) => {
                same_game(o, a);
                let summary =
                    a.root().comments_after().iter().any(|c| c.raw().starts_with("mavboard review ("));
                reviewed += usize::from(summary);
                if summary && o.mainline().next().is_some() {
                    let first = a.mainline().next().expect("a move");
                    let node = a.node(first).expect("node");
                    assert!(
                        node.comments_after().iter().any(|c| c.eval().is_some()),
                        "game {}: no eval",
                        n + 1
                    );
                }
            }
            (Err(o), Err(a)) => assert_eq!(o.kind, a.kind, "game {} fails differently", n + 1),
            (o, a) => panic!("game {} changed from {:?} to {:?}", n + 1, o.is_ok(), a.is_ok()),
        }
    }
    assert!(inserted_tokens(input, output) > 0);
    (originals.len(), reviewed)
}

fn annotate(dir: &Path, name: &str, text: &[u8]) -> (Vec<u8>, serde_json::Value) {
    let input = dir.join(name);
    fs::write(&input, text).expect("write input");
    let paths = BatchPaths {
        output: BatchPaths::default_output(&input),
        report: Some(dir.join(format!("{name}.json"))),
        input,
    };
    let summary = review_file(&paths, &options(), model_factory(), &AtomicBool::new(false), &mut |_| {})
        .expect("reviews");
    assert_eq!(summary.end, BatchEnd::Finished);
    let report = fs::read_to_string(paths.report.as_ref().expect("report")).expect("report written");
    (fs::read(&paths.output).expect("output written"), serde_json::from_str(&report).expect("report is JSON"))
}

#[test]
fn real_files_are_annotated_by_the_shipped_model_and_nothing_is_lost() {
    let dir = temp_dir("review", "fixtures");
    let lichess = fs::read_to_string(fixture("lichess_db_2025-05_sample_1MB.pgn")).expect("fixture");
    let slice = first_games(&lichess, 6);
    assert!(slice.contains("[%clk") && slice.contains("[%eval"));
    let mut inputs: Vec<(String, Vec<u8>)> = vec![
        ("lichess.pgn".into(), slice.as_bytes().to_vec()),
        ("broken.pgn".into(), fs::read(fixture("broken-middle.pgn")).expect("fixture")),
        ("chess960.pgn".into(), fs::read(fixture("kokopu-chess960.pgn")).expect("fixture")),
    ];
    for entry in fs::read_dir(fixture("python-chess")).expect("fixtures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        inputs.push((name, fs::read(&path).expect("fixture")));
    }
    let mut total_reviewed = 0;
    for (name, text) in &inputs {
        let (output, report) = annotate(&dir, name, text);
        let (games, reviewed) = check_nothing_lost(text, &output);
        let entries = report["games"].as_array().expect("games in the report");
        assert_eq!(entries.len(), games, "{name}");
        let ok = entries.iter().filter(|e| e["status"] == "reviewed").count();
        assert_eq!(ok, reviewed, "{name}");
        for e in entries.iter().filter(|e| e["status"] == "reviewed") {
            for m in e["review"]["moves"].as_array().expect("moves") {
                let loss = m["loss"].as_f64().expect("loss");
                let acc = m["accuracy"].as_f64().expect("accuracy");
                assert!((0.0..=1.0).contains(&loss) && (0.0..=100.0).contains(&acc), "{name}: {m}");
            }
        }
        total_reviewed += reviewed;
        if name == "broken.pgn" {
            let out = String::from_utf8_lossy(&output);
            assert_eq!((games, reviewed), (6, 4));
            assert!(out.contains("% mavboard: game 3 could not be read and is copied unchanged: "), "{out}");
            assert!(out.contains("% mavboard: game 5 could not be read and is copied unchanged: "), "{out}");
            assert_eq!(entries[2]["status"], "unreadable");
        }
        if name == "lichess.pgn" {
            assert_eq!((games, reviewed), (6, 6));
        }
    }
    assert!(total_reviewed >= 20, "{total_reviewed}");
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn world_championship_1886_when_the_shared_data_is_present() {
    let path = root().join("../shared/data/pgn/master/WorldChamp1886.pgn");
    let Ok(text) = fs::read(&path) else {
        eprintln!("skipped: {} is not present (shared data is not part of the repository)", path.display());
        return;
    };
    let dir = temp_dir("review", "wc1886");
    let (output, _) = annotate(&dir, "WorldChamp1886.pgn", &text);
    let (games, reviewed) = check_nothing_lost(&text, &output);
    assert_eq!(games, reviewed);
    assert!(games >= 20, "{games}");
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_cli_annotates_is_interrupted_and_resumes() {
    let dir = temp_dir("review", "cli");
    let lichess = fs::read_to_string(fixture("lichess_db_2025-05_sample_1MB.pgn")).expect("fixture");
    let input = dir.join("games.pgn");
    fs::write(&input, first_games(&lichess, 4)).expect("write");
    let model = root().join("assets/models/mav-enc-tiny");
    let out = mavboard_command()
        .arg("annotate")
        .arg(&input)
        .args(["--report"])
        .arg(dir.join("r.json"))
        .arg("--model")
        .arg(&model)
        .output()
        .expect("mavboard runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 games →") && stdout.contains("4 reviewed"), "{stdout}");
    let whole = fs::read(dir.join("games.annotated.pgn")).expect("default output name");
    check_nothing_lost(first_games(&lichess, 4).as_bytes(), &whole);
    let whole_report = fs::read_to_string(dir.join("r.json")).expect("report");

    // Interrupt a run (as Ctrl+C does, through the same stop flag) after two games, then let the CLI resume.
    let paths =
        BatchPaths { input: input.clone(), output: dir.join("again.pgn"), report: Some(dir.join("r2.json")) };
    let stop = AtomicBool::new(false);
    let summary = review_file(&paths, &options(), model_factory(), &stop, &mut |p| {
        if p.games == 2 {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .expect("runs");
    assert_eq!(summary.end, BatchEnd::Interrupted);
    let partial = fs::read(paths.partial()).expect("partial output");
    assert_eq!(PgnReader::new(partial.as_slice()).filter(|g| g.is_ok()).count(), 2);
    let out = mavboard_command()
        .arg("annotate")
        .arg(&input)
        .arg("-o")
        .arg(&paths.output)
        .arg("--report")
        .arg(dir.join("r2.json"))
        .arg("--model")
        .arg(&model)
        .args(["--threads", "1", "--batch", "8"])
        .output()
        .expect("mavboard runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("resuming after 2 games"), "{stderr}");
    assert!(stdout.contains("2 from an earlier run"), "{stdout}");
    assert_eq!(fs::read(&paths.output).expect("output"), whole);
    let report = fs::read_to_string(dir.join("r2.json")).expect("report");
    assert_eq!(report, whole_report);
    assert!(!paths.partial().exists() && !paths.state().exists());

    // Bad arguments are named.
    let out =
        mavboard_command().arg("annotate").arg(&input).args(["--scoring", "median"]).output().expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'median' for '--scoring"));
    fs::remove_dir_all(&dir).ok();
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_cli_with_a_valid_partial_output_and_a_second_run_resumes() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let dir = temp_dir("review", "sigint");
    let lichess = fs::read_to_string(fixture("lichess_db_2025-05_sample_1MB.pgn")).expect("fixture");
    let text = first_games(&lichess, 25);
    let input = dir.join("games.pgn");
    fs::write(&input, text).expect("write");
    let model = root().join("assets/models/mav-enc-tiny");
    let run = || {
        mavboard_command()
            .arg("annotate")
            .arg(&input)
            .arg("--model")
            .arg(&model)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mavboard starts")
    };
    let mut child = run();
    let state_path = dir.join("games.annotated.pgn.resume.json");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let done = fs::read_to_string(&state_path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["games_done"].as_u64())
            .unwrap_or(0);
        if done >= 1 {
            break;
        }
        assert!(child.try_wait().expect("child status").is_none(), "the run ended before it was interrupted");
        assert!(Instant::now() < deadline, "no game was done in time");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let out = child.wait_with_output().expect("child ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("interrupted after"), "{stderr}");
    let state: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&state_path).expect("state kept")).expect("state is JSON");
    let done = usize::try_from(state["games_done"].as_u64().expect("games_done")).expect("fits");
    assert!(done < 25, "{done}");
    let partial = fs::read(dir.join("games.annotated.pgn.partial")).expect("partial output kept");
    assert_eq!(partial.len() as u64, state["output_len"].as_u64().expect("output_len"));
    // The partial output is whole games: the first `done` games of the input, annotated.
    let prefix = first_games(text, done).trim_end();
    let (games, reviewed) =
        check_nothing_lost(prefix.as_bytes(), String::from_utf8_lossy(&partial).trim_end().as_bytes());
    assert_eq!((games, reviewed), (done, done));

    let out = run().wait_with_output().expect("second run ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("resuming after {done} games")), "{stderr}");
    let output = fs::read(dir.join("games.annotated.pgn")).expect("output");
    assert_eq!(check_nothing_lost(text.as_bytes(), &output), (25, 25));
    assert!(!state_path.exists());
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn stockfish_judges_and_the_model_view_is_kept_beside_it() {
    let stockfish = match mavboard::uci::locate::locate_stockfish(None) {
        Ok(p) => p,
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let dir = temp_dir("review", "uci-judge");
    // 3... Nf6?? allows mate in one; 4. Qxf7# mates.
    let input = dir.join("scholar.pgn");
    fs::write(&input, "[Event \"t\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n")
        .expect("write");
    let report = dir.join("r.json");
    let out = mavboard_command()
        .arg("annotate")
        .arg(&input)
        .arg("--report")
        .arg(&report)
        .arg("--reviewer")
        .arg(format!("uci:{}", stockfish.display()))
        .args(["--depth", "8"])
        .output()
        .expect("mavboard runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let annotated = fs::read_to_string(dir.join("scholar.annotated.pgn")).expect("output");
    assert!(annotated.contains("Stockfish") && annotated.contains("at depth 8"), "{annotated}");
    assert!(
        annotated.contains("the model beside") && annotated.contains("the model disagrees on"),
        "{annotated}"
    );
    assert!(
        annotated.contains("Nf6 ??") || annotated.contains("Nf6 $4"),
        "the judge calls 3... Nf6 a blunder: {annotated}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&report).expect("report")).expect("JSON");
    let entry = &report["games"][0];
    let moves = entry["review"]["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 7);
    for m in moves {
        let view = &m["model"];
        let (played, best, count) =
            (view["played_rank"].as_u64(), view["best_rank"].as_u64(), view["moves"].as_u64());
        let (Some(played), Some(best), Some(count)) = (played, best, count) else { panic!("{m}") };
        assert!((1..=count).contains(&played) && (1..=count).contains(&best), "{m}");
        let disagrees = view["classification"] != m["classification"];
        assert_eq!(view["disagrees"].as_bool(), Some(disagrees), "{m}");
    }
    // The judge's values: 3... Nf6 loses (the mate follows), 4. Qxf7# is valued by the rules.
    assert_eq!(moves[5]["san"], "Nf6");
    assert_eq!(moves[5]["classification"], "blunder");
    assert_eq!(moves[5]["best_san"].as_str().map(|s| s != "Nf6"), Some(true));
    assert_eq!((moves[6]["san"].as_str(), moves[6]["value_after"].as_f64()), (Some("Qxf7#"), Some(1.0)));
    let white = entry["review"]["white"]["model_disagrees"].as_u64().expect("count");
    let black = entry["review"]["black"]["model_disagrees"].as_u64().expect("count");
    let counted = moves.iter().filter(|m| m["model"]["disagrees"] == true).count() as u64;
    assert_eq!(white + black, counted);
    // --sims cannot go with a UCI reviewer; a bad reviewer name is refused with the choices.
    let bad = mavboard_command()
        .arg("annotate")
        .arg(&input)
        .args(["--reviewer", "deep-blue"])
        .output()
        .expect("runs");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use model, uci or uci:PATH"));
    fs::remove_dir_all(&dir).ok();
}
