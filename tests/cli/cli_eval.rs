//! `mavboard eval` end to end on the committed Connect Four and Hex solver labels with the shipped
//! multi-game encoder: each game is measured with the package opened for it, next to the random reference;
//! and internal search (`--internal`) on the chess labels with both shipped packages.

use std::process::Command;

fn eval(labels: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("training/data").join(labels);
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--labels"])
        .arg(&dir)
        .args(["--limit", "24", "--batch", "8"])
        .output()
        .expect("the binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout.into_owned()
}

/// The percentage printed after `key` on the first line that holds it.
fn percent_after(text: &str, key: &str) -> f64 {
    let at = text.find(key).unwrap_or_else(|| panic!("{key:?} in {text}")) + key.len();
    let num: String =
        text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    num.parse().unwrap_or_else(|_| panic!("a number after {key:?} in {text}"))
}

#[test]
fn connect_four_labels_are_measured_against_the_solver() {
    let out = eval("labels-c4");
    assert!(out.contains("model mav-enc-tiny (mav-encoder"), "{out}");
    assert!(out.contains("connect four positions: 24 positions"), "{out}");
    let random = percent_after(&out, "a random move is a best-valued one");
    assert!(random > 0.0 && random <= 100.0, "{out}");
    // Every Connect Four label is a proof, so the kept-result line is there for every scoring rule.
    assert_eq!(out.matches("keeps the proven result").count(), 4, "{out}");
    for rule in ["max", "mean", "quantile:0.25", "mean-sd:1"] {
        assert!(out.contains(&format!("  {rule:<13} action accuracy")), "{rule}: {out}");
    }
    assert!(out.contains("(24 positions solved exactly; a random move"), "{out}");
    assert!(!out.contains("book positions"), "no chess group without chess labels: {out}");
}

#[test]
fn hex_labels_are_measured_without_proofs() {
    let out = eval("labels-hex7");
    assert!(out.contains("hex positions: 24 positions"), "{out}");
    // 7×7 labels are MCTS estimates: no position is solved exactly.
    assert!(!out.contains("keeps the proven result"), "{out}");
    let tau = out.lines().find(|l| l.contains("Kendall tau")).expect("a measures line");
    assert!(tau.contains("win-prob MAE"), "{tau}");
}

/// `eval --internal 2,1` on chess labels: the explicit search is measured for every package; the model's own
/// traces only for a package trained to write them (the others say why not).
#[test]
fn internal_search_is_measured_on_the_chess_labels() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = std::env::temp_dir().join(format!("mavboard-cli-eval-internal-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    for name in ["mav-enc-tiny", "mav-tiny"] {
        let model = root.join("assets/models").join(name);
        let json = tmp.join(format!("{name}.json"));
        let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
            .args(["eval", "--internal", "2,1", "--limit", "3", "--labels"])
            .arg(root.join("training/data/labels-books"))
            .arg("--model")
            .arg(&model)
            .arg("--json")
            .arg(&json)
            .output()
            .expect("the binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("internal search b2 d1: 3 positions"), "{stdout}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).expect("the report")).expect("JSON");
        let runs = report["internal"].as_array().expect("one run per decoding");
        let m = &runs[0];
        assert_eq!(m["positions"], 3, "{m}");
        assert_eq!(m["explicit_best"]["count"], 3, "{m}");
        assert_eq!(m["decoding"], "free", "{m}");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(model.join("mav.json")).expect("mav.json")).expect("JSON");
        if manifest["internal_search"] == true {
            assert_eq!(m["unavailable"], 0, "{m}");
            assert_eq!(m["parsed"]["count"], 3, "{m}");
            assert!(stdout.contains("model traces, free decoding: 3 written"), "{stdout}");
            // Both decodings on the same positions (the default); the rules never write an illegal tree, so
            // every rules trace reads back.
            assert_eq!(runs.len(), 2, "{report}");
            let r = &runs[1];
            assert_eq!(r["decoding"], "rules", "{r}");
            assert_eq!(r["positions"], 3, "{r}");
            assert_eq!(r["parsed"]["count"], 3, "{r}");
            assert_eq!(r["parsed"]["mean"], 1.0, "{r}");
            assert!(stdout.contains("model traces, rules decoding: 3 written, 100.0% readable"), "{stdout}");
        } else {
            assert_eq!(runs.len(), 1, "a package that writes no trace is measured once: {report}");
            assert_eq!(m["unavailable"], 3, "{m}");
            assert!(stdout.contains("internal_search: false"), "{stdout}");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--internal", "2,1", "--limit", "2", "--labels"])
        .arg(root.join("training/data/labels-c4"))
        .output()
        .expect("the binary runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no chess validation records"));
    // A bad search shape or scoring is refused before any position is evaluated.
    for (flag, value, says) in [
        ("--internal", "0,1", "breadth"),
        ("--internal-scoring", "maxx", "unknown scoring 'maxx': use max, mean, quantile:Q"),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mavboard"));
        cmd.args(["eval", "--labels"]).arg(root.join("training/data/labels-books"));
        if flag == "--internal-scoring" {
            cmd.args(["--internal", "2,1"]);
        }
        let out = cmd.args([flag, value]).output().expect("the binary runs");
        assert!(!out.status.success());
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stdout.contains("positions"), "nothing was measured first: {stdout}");
    }
}

/// `eval --puzzles` with the shipped encoder: the model's values alone, then MAV-MCTS over them (`--sims`),
/// each reporting solved puzzles and first moves found; the JSON report names the search.
#[test]
fn puzzles_are_measured_with_values_and_with_search() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let csv = root.join("tests/fixtures/puzzles/lichess-puzzles-dev.csv");
    let json = std::env::temp_dir().join(format!("mavboard-cli-eval-puzzles-{}.json", std::process::id()));
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
            .args(["eval", "--limit", "6", "--batch", "8", "--puzzles"])
            .arg(&csv)
            .arg("--json")
            .arg(&json)
            .args(extra)
            .output()
            .expect("the binary runs");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{stdout}\n{stderr}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).expect("the report")).expect("JSON");
        (stdout.into_owned(), report["puzzles"].clone())
    };
    let (out, report) = run(&[]);
    assert!(out.contains("puzzles: 6\n"), "{out}");
    for rule in ["max", "mean", "quantile:0.25", "mean-sd:1"] {
        assert!(out.contains(&format!("  {rule:<13} solved ")), "{rule}: {out}");
    }
    assert!(out.contains("first move found"), "{out}");
    assert_eq!((report["puzzles"].as_u64(), report["simulations"].as_u64()), (Some(6), Some(0)), "{report}");
    let (out, report) = run(&["--sims", "16", "--scoring", "max,mean"]);
    assert!(out.contains("puzzles: 6 (MAV-MCTS, 16 simulations per move)"), "{out}");
    assert_eq!(report["simulations"].as_u64(), Some(16), "{report}");
    let scored = report["scored"].as_array().expect("per rule");
    assert_eq!(scored.iter().map(|s| s["scoring"].as_str()).collect::<Vec<_>>(), [Some("max"), Some("mean")]);
    for s in scored {
        for key in ["solved", "first_move"] {
            assert_eq!(s[key]["count"].as_u64(), Some(6), "{key}: {report}");
        }
        // A solved puzzle had its first move found.
        let share = |key: &str| s[key]["mean"].as_f64().expect("a share");
        assert!(share("first_move") >= share("solved"), "{report}");
    }
    assert_eq!((report["batch"].as_u64(), report["skipped"].as_u64()), (Some(8), Some(0)), "{report}");
    std::fs::remove_file(&json).ok();
    // --sims needs puzzles and at least one simulation.
    let refused = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--puzzles"])
        .arg(&csv)
        .args(["--sims", "0"])
        .output()
        .expect("the binary runs");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--sims"), "{refused:?}");
    let no_puzzles = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--labels", "training/data/labels-c4", "--sims", "8"])
        .current_dir(root)
        .output()
        .expect("the binary runs");
    assert!(!no_puzzles.status.success(), "--sims without --puzzles is refused");
    assert!(String::from_utf8_lossy(&no_puzzles.stderr).contains("--puzzles"), "{no_puzzles:?}");
}

/// Two models in one run — the shipped encoder and the action-value fixture — on the same puzzles: each one's
/// report with its rating bands, one row per model and rule at the end, and the bands plotted as SVG.
#[test]
fn several_models_are_measured_on_the_same_puzzles_with_a_rating_plot() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let csv = root.join("tests/fixtures/puzzles/lichess-puzzles-dev.csv");
    let av = root.join("tests/fixtures/models/av-fixture");
    let shipped = root.join("assets/models/mav-enc-tiny");
    let tmp = std::env::temp_dir().join(format!("mavboard-cli-eval-models-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (json, svg) = (tmp.join("report.json"), tmp.join("rating.svg"));
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--limit", "40", "--scoring", "max,mean", "--model"])
        .arg(&shipped)
        .arg("--model")
        .arg(&av)
        .arg("--puzzles")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .arg("--plot")
        .arg(&svg)
        .output()
        .expect("the binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("JSON");
    let models = report["models"].as_array().expect("one report per model");
    assert_eq!(
        models.iter().map(|m| m["name"].as_str()).collect::<Vec<_>>(),
        [Some("mav-enc-tiny"), Some("av-fixture")]
    );
    for m in models {
        let p = &m["report"]["puzzles"];
        assert_eq!(p["puzzles"].as_u64(), Some(40), "{p}");
        let bands = p["by_rating"].as_array().expect("rating bands");
        let counted: u64 = bands.iter().map(|b| b["solved"][0]["count"].as_u64().expect("count")).sum();
        assert_eq!(counted, 40, "every puzzle in one band: {p}");
        for b in bands {
            assert_eq!(b["to"].as_u64().zip(b["from"].as_u64()).map(|(t, f)| t - f), Some(200), "{b}");
        }
        // The summary's row for this model under max gives its puzzle share.
        let solved = p["scored"][0]["solved"]["mean"].as_f64().expect("share");
        let name = m["name"].as_str().expect("name");
        let row = stdout
            .lines()
            .find(|l| l.starts_with(name) && l.split_whitespace().nth(1) == Some("max"))
            .unwrap_or_else(|| panic!("a summary row for {name}: {stdout}"));
        assert_eq!(row.split_whitespace().last(), Some(format!("{:.1}", 100.0 * solved).as_str()), "{row}");
    }
    assert!(stdout.contains("rating") && stdout.contains("== model 2 of 2"), "{stdout}");
    let plot = std::fs::read_to_string(&svg).expect("the plot");
    assert!(plot.starts_with("<svg"), "{plot}");
    for line in ["mav-enc-tiny · max", "av-fixture · mean"] {
        assert!(plot.contains(line), "the legend names {line}");
    }
    std::fs::remove_dir_all(&tmp).ok();
}

/// Move matching (Maia's measure) on the Lichess sample: maia-1900 (imported here from the committed net)
/// beside the shipped encoder on the same rated moves, each with its bands, the side-by-side table and the
/// plot; the trained human-move network matches far more moves than the tiny encoder.
#[test]
fn move_matching_puts_maia_beside_the_shipped_model() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pgn = root.join("tests/fixtures/pgn/lichess_db_2025-05_sample_1MB.pgn");
    let tmp = std::env::temp_dir().join(format!("mavboard-cli-eval-matching-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let maia = tmp.join("maia-1900");
    let imported = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["import", "lc0"])
        .arg(root.join("tests/fixtures/lc0/maia-1900.pb.gz"))
        .arg("-o")
        .arg(&maia)
        .args(["--name", "maia-1900"])
        .output()
        .expect("the binary runs");
    assert!(imported.status.success(), "{imported:?}");
    let (json, svg) = (tmp.join("report.json"), tmp.join("matching.svg"));
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--limit", "400", "--skip-plies", "4", "--plot-min-moves", "1", "--model"])
        .arg(&maia)
        .arg("--model")
        .arg(root.join("assets/models/mav-enc-tiny"))
        .arg("--move-matching")
        .arg(&pgn)
        .arg("--json")
        .arg(&json)
        .arg("--plot")
        .arg(&svg)
        .output()
        .expect("the binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("move matching: 400 rated moves"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("JSON");
    let models = report["models"].as_array().expect("one report per model");
    let share = |i: usize| {
        let m = &models[i]["report"]["move_matching"];
        let total = &m["total"];
        assert_eq!(total["moves"].as_u64(), Some(400), "{m}");
        let bands = m["bands"].as_array().expect("bands");
        let counted: u64 = bands.iter().map(|b| b["moves"].as_u64().expect("moves")).sum();
        assert_eq!(counted, 400, "every move in one band: {m}");
        assert!(bands.iter().all(|b| b["from"].as_u64().is_some_and(|f| f % 100 == 0)), "{m}");
        total["matched"].as_f64().expect("matched") / 400.0
    };
    let (maia_share, tiny_share) = (share(0), share(1));
    assert_eq!(
        models[0]["report"]["move_matching"]["by_policy"].as_u64(),
        Some(400),
        "maia's policy predicts"
    );
    assert!(maia_share > 0.35 && maia_share > tiny_share + 0.1, "maia {maia_share}, tiny {tiny_share}");
    // The side-by-side table: one column per model, the last row the totals.
    let all = stdout.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(all.contains(&format!("{:.1}%", 100.0 * maia_share)), "{all}");
    let plot = std::fs::read_to_string(&svg).expect("the plot");
    assert!(plot.starts_with("<svg") && plot.contains("maia-1900") && plot.contains("mav-enc-tiny"));
    // --plot with neither or both sources is refused.
    let both = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["eval", "--move-matching"])
        .arg(&pgn)
        .arg("--puzzles")
        .arg(root.join("tests/fixtures/puzzles/lichess-puzzles-dev.csv"))
        .arg("--plot")
        .arg(&svg)
        .output()
        .expect("the binary runs");
    assert!(!both.status.success() && String::from_utf8_lossy(&both.stderr).contains("--plot"), "{both:?}");
    std::fs::remove_dir_all(&tmp).ok();
}
