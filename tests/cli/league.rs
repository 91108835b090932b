//! A tiny league with the shipped model: MAV max against MAV mean from two openings with both colours,
//! checked through its PGN, results file and table; rerun to show that finished games are not replayed;
//! the Stockfish part (agent and evaluation adjudication) when Stockfish is installed; bad input through the
//! CLI (also agents and settings of another game: Connect Four, Hex).

use crate::common;

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use common::{mavboard, temp_dir};
use mavboard::inference::onnx::SessionOptions;
use mavboard::league::rules::{EvalRules, Rules};
use mavboard::league::settings::StockfishLimits;
use mavboard::league::spec::parse_agents;
use mavboard::league::{LeagueConfig, LeagueError, LeagueGameSetup, run_league};
use mavboard::pgn::reader::read_all;
use mavboard::solve::stop::StopFlag;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Two lines of Stockfish's 2moves_v1 book.
const BOOK: &str = "\
rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3
rnbqkbnr/1p1ppppp/p1p5/8/8/4PQ2/PPPP1PPP/RNB1KBNR w KQkq - 0 3
";

fn config(dir: &Path, agents: &[&str], rules: Rules, openings: Option<usize>) -> LeagueConfig {
    let book = dir.join("book.epd");
    fs::write(&book, BOOK).expect("book");
    LeagueConfig {
        agents: parse_agents(&agents.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).expect("agents"),
        model: root().join("assets/models/mav-enc-tiny"),
        game: LeagueGameSetup::Chess { book },
        openings,
        seed: 1,
        rules,
        stockfish: None,
        stockfish_limits: StockfishLimits { depth: Some(4), movetime_ms: None, nodes: None },
        batch: 8,
        session: SessionOptions::default(),
        out: dir.join("out"),
        event: "test league".into(),
        anchor: None,
        prior_draws: 1.0,
        concurrency: 1,
    }
}

#[test]
fn mav_max_against_mav_mean_pgn_table_and_resume() {
    let dir = temp_dir("league", "mav");
    let rules = Rules { max_plies: 12, eval: None };
    let cfg = config(&dir, &["mav-max", "mav-mean"], rules, None);
    let summary = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("league runs");
    assert_eq!((summary.total, summary.played, summary.resumed), (4, 4, 0));

    // PGN: four games that read back, each opening once with each colour assignment.
    let pgn = fs::read_to_string(&summary.files.pgn).expect("pgn written");
    let games: Vec<_> = read_all(&pgn).into_iter().map(|g| g.expect("game reads back")).collect();
    assert_eq!(games.len(), 4);
    let mut seen = HashSet::new();
    let openings: Vec<String> = BOOK.lines().map(str::to_owned).collect();
    for g in &games {
        let white = g.header("White").expect("White").to_owned();
        let black = g.header("Black").expect("Black").to_owned();
        assert_ne!(white, black);
        assert!(["mav-max", "mav-mean"].contains(&white.as_str()));
        let fen = g.start().fen();
        assert!(openings.contains(&fen), "{fen} is a book position");
        assert!(seen.insert((fen, white)), "each opening once per colour");
        let plies = g.mainline().count();
        assert!((1..=12).contains(&plies), "{plies} plies");
        assert_eq!(g.header("PlyCount"), Some(plies.to_string().as_str()));
        let result = g.header("Result").expect("Result");
        assert!(["1-0", "0-1", "1/2-1/2"].contains(&result), "{result}");
        // Every move was chosen by the model and says its values.
        let first = g.mainline().next().and_then(|id| g.node(id)).expect("a move");
        assert!(first.comments_after().iter().any(|c| c.text().contains("mean")), "the model's note");
    }

    // The table: each agent 4 games, 4 between them; the file says how ratings are made.
    let t = &summary.table;
    assert_eq!(t.labels, vec!["mav-max", "mav-mean"]);
    assert_eq!(t.cross[0][1].1, 4);
    assert!((t.cross[0][1].0 + t.cross[1][0].0 - 4.0).abs() < 1e-9);
    assert!(t.standings.iter().all(|s| s.games == 4 && s.rating.is_some()));
    let text = fs::read_to_string(&summary.files.table).expect("table written");
    assert!(
        text.contains("crosstable") && text.contains("maximum likelihood") && text.contains("12 plies"),
        "{text}"
    );
    let lines = fs::read_to_string(&summary.files.results).expect("results").lines().count();
    assert_eq!(lines, 4);

    // Rerun: nothing is replayed and the PGN is the same.
    let again = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("resumes");
    assert_eq!((again.played, again.resumed), (0, 4));
    assert_eq!(fs::read_to_string(&summary.files.pgn).expect("pgn"), pgn);

    // Lose the last finished game (as if the run had stopped before it): only that one is played again.
    let results = fs::read_to_string(&summary.files.results).expect("results");
    let kept: Vec<&str> = results.lines().take(3).collect();
    fs::write(&summary.files.results, kept.join("\n") + "\n").expect("truncates");
    let third = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("resumes");
    assert_eq!((third.played, third.resumed), (1, 3));

    // Other rules in the same folder are refused rather than mixed in.
    let other = Rules { max_plies: 20, eval: None };
    let e = run_league(&config(&dir, &["mav-max", "mav-mean"], other, None), &StopFlag::new(), &mut |_| {})
        .expect_err("other rules");
    assert!(matches!(e, LeagueError::Mismatch { .. }), "{e}");

    // A raised stop flag keeps what is finished and says how to go on.
    let stopped_dir = temp_dir("league", "stop");
    let e = run_league(
        &config(&stopped_dir, &["mav-max", "mav-mean"], rules, None),
        &{
            let s = StopFlag::new();
            s.set();
            s
        },
        &mut |_| {},
    )
    .expect_err("stopped");
    assert!(matches!(e, LeagueError::Interrupted { done: 0, total: 4 }), "{e}");
    fs::remove_dir_all(&dir).ok();
    fs::remove_dir_all(&stopped_dir).ok();
}

/// A results file's lines without the wall time, sorted by game.
fn results_without_time(path: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(path).expect("results");
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v.as_object_mut().expect("an object").remove("seconds");
            v
        })
        .collect();
    lines.sort_by_key(|v| v["id"].as_str().unwrap_or_default().to_owned());
    lines
}

#[test]
fn games_played_at_once_write_what_one_at_a_time_writes() {
    let dir = temp_dir("league", "concurrency");
    let rules = Rules { max_plies: 10, eval: None };
    let agents = ["mav-max", "mav-mean", "mcts:8"];
    let mut written = Vec::new();
    for concurrency in [1, 3] {
        let here = dir.join(format!("c{concurrency}"));
        fs::create_dir_all(&here).expect("dir");
        let mut cfg = config(&here, &agents, rules, None);
        cfg.concurrency = concurrency;
        let mut started = 0;
        let mut ended = Vec::new();
        let summary = run_league(&cfg, &StopFlag::new(), &mut |p| match p {
            mavboard::league::Progress::GameStart { .. } => started += 1,
            mavboard::league::Progress::GameEnd { done, .. } => ended.push(done),
            mavboard::league::Progress::Start { .. } => {}
        })
        .expect("league runs");
        assert_eq!((summary.total, summary.played), (12, 12), "three pairs, two openings, both colours");
        assert_eq!(started, 12);
        assert_eq!(ended, (1..=12).collect::<Vec<_>>(), "each end counted once, in order");
        written.push((
            fs::read_to_string(&summary.files.pgn).expect("pgn"),
            fs::read_to_string(&summary.files.table).expect("table"),
            results_without_time(&summary.files.results),
        ));
    }
    assert_eq!(written[0].0, written[1].0, "the same PGN");
    assert_eq!(written[0].1, written[1].1, "the same table");
    assert_eq!(written[0].2, written[1].2, "the same results");
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn stockfish_agent_and_eval_adjudication() {
    if mavboard::uci::locate::locate_stockfish(None).is_err() {
        eprintln!("Stockfish is not installed: skipping the Stockfish league test");
        return;
    }
    let dir = temp_dir("league", "sf");
    let rules = Rules {
        max_plies: 10,
        eval: Some(EvalRules { depth: 6, resign_cp: 800, resign_plies: 4, max_plies_win_cp: 300 }),
    };
    let cfg = config(&dir, &["mav-max", "stockfish:0"], rules, Some(1));
    let summary = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("league runs");
    assert_eq!(summary.total, 2);
    let pgn = fs::read_to_string(&summary.files.pgn).expect("pgn");
    let games: Vec<_> = read_all(&pgn).into_iter().map(|g| g.expect("reads back")).collect();
    assert_eq!(games.len(), 2);
    assert!(pgn.contains("[%eval "), "the adjudicator's evaluations are in the PGN");
    assert!(pgn.contains("sf depth"), "Stockfish's own note");
    let labels: HashSet<&str> = games.iter().filter_map(|g| g.header("White")).collect();
    assert_eq!(labels, ["mav-max", "sf-skill0"].into_iter().collect());
    // Anchored at the Stockfish agent when asked.
    let mut cfg = cfg;
    cfg.anchor = Some("sf-skill0".into());
    let again = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("resumes");
    let sf = again.table.standings.iter().find(|s| s.label == "sf-skill0").expect("rated");
    assert_eq!(sf.rating.expect("rated").elo, 0.0);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = temp_dir("league", "bad");
    let out = dir.join("out");
    let out = out.to_str().expect("utf-8 path");
    let (ok, _, err) = mavboard(&["league", "--agents", "mav-max,alphazero", "--out", out]);
    assert!(!ok && err.contains("unknown agent \"alphazero\""), "{err}");
    let (ok, _, err) = mavboard(&[
        "league",
        "--agents",
        "mav-max,mav-mean",
        "--book",
        "/nonexistent/book.epd",
        "--out",
        out,
    ]);
    assert!(!ok && err.contains("/nonexistent/book.epd"), "{err}");
    let bad_book = dir.join("bad.epd");
    fs::write(&bad_book, "this is not a position\n").expect("writes");
    let (ok, _, err) = mavboard(&[
        "league",
        "--agents",
        "mav-max,mav-mean",
        "--book",
        bad_book.to_str().expect("utf-8"),
        "--out",
        out,
    ]);
    assert!(!ok && err.contains("line 1"), "{err}");
    // A valid book of our own, so the next checks do not depend on ../shared (absent in a user's clone).
    let good_book = dir.join("good.epd");
    fs::write(&good_book, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n").expect("writes");
    let good_book = good_book.to_str().expect("utf-8");
    let (ok, _, err) = mavboard(&[
        "league",
        "--agents",
        "mav-max,stockfish:0",
        "--book",
        good_book,
        "--stockfish",
        "/nonexistent/sf",
        "--out",
        out,
    ]);
    assert!(!ok && err.contains("apt-get install stockfish"), "{err}");
    let (ok, _, err) = mavboard(&[
        "league",
        "--agents",
        "mav-max,mav-mean",
        "--book",
        good_book,
        "--model",
        "/nonexistent/model",
        "--out",
        out,
    ]);
    assert!(!ok && err.contains("/nonexistent/model"), "{err}");
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn agents_and_settings_of_another_game_are_refused() {
    let dir = temp_dir("league", "bad-game");
    let out = dir.join("out");
    let out = out.to_str().expect("utf-8 path");
    let (ok, _, err) =
        mavboard(&["league", "--game", "connect_four", "--agents", "mav-max,stockfish:0", "--out", out]);
    assert!(!ok && err.contains("sf-skill0 does not play Connect Four") && err.contains("solver"), "{err}");
    assert!(!Path::new(out).join("league.json").exists(), "nothing is written before the agents are checked");
    let (ok, _, err) = mavboard(&["league", "--game", "hex", "--agents", "mav-max,solver:3", "--out", out]);
    assert!(!ok && err.contains("does not play Hex") && err.contains("playouts:N"), "{err}");
    let (ok, _, err) =
        mavboard(&["league", "--game", "chess", "--agents", "mav-max,playouts:10", "--out", out]);
    assert!(!ok && err.contains("does not play chess"), "{err}");
    let (ok, _, err) = mavboard(&["league", "--game", "hex", "--adjudicate", "eval", "--out", out]);
    assert!(!ok && err.contains("for chess"), "{err}");
    let (ok, _, err) = mavboard(&["league", "--game", "hex", "--hex-size", "3", "--out", out]);
    assert!(!ok && err.contains("--hex-size 3"), "{err}");
    let (ok, _, err) = mavboard(&["league", "--game", "go", "--out", out]);
    assert!(!ok && err.contains("invalid value 'go' for '--game"), "{err}");
    fs::remove_dir_all(&dir).ok();
}

/// The planning agents with the shipped trace writer: the explicit minimax, the model's own trace decoded
/// freely and by the rules, one short game each way; every move is legal (the games read back) and its note
/// says how it was chosen. A values-only package cannot be an `internal` agent: a named error.
#[test]
fn minimax_and_internal_agents_play_with_the_trace_writer() {
    let tiny = root().join("assets/models/mav-tiny");
    let manifest = mavboard::model::ModelPackage::open(&tiny).expect("the shipped package").manifest;
    let dir = temp_dir("league", "internal");
    let rules = Rules { max_plies: 2, eval: None };
    let mut cfg = config(&dir, &["minimax:2:1", "internal:2:1", "internal:2:1:rules"], rules, Some(1));
    cfg.model = tiny;
    if manifest.internal_search {
        let summary = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("league runs");
        assert_eq!(summary.played, 6, "three pairs, one opening, both colours");
        let pgn = fs::read_to_string(&summary.files.pgn).expect("pgn written");
        let games: Vec<_> = read_all(&pgn).into_iter().map(|g| g.expect("game reads back")).collect();
        assert_eq!(games.len(), 6);
        let notes: Vec<String> = games
            .iter()
            .flat_map(|g| g.mainline().filter_map(|id| g.node(id)).collect::<Vec<_>>())
            .flat_map(|n| n.comments_after().iter().map(|c| c.text().to_owned()).collect::<Vec<_>>())
            .collect();
        assert!(notes.iter().any(|n| n.starts_with("minimax ")), "{notes:?}");
        assert!(notes.iter().any(|n| n.starts_with("rules trace")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("free trace")), "{notes:?}");
        // The rules trace always names a legal move: it never falls back to the explicit choice.
        assert!(!notes.iter().any(|n| n.starts_with("rules trace named no legal move")), "{notes:?}");
    }
    let values_only = temp_dir("league", "internal-values");
    let mut cfg = config(&values_only, &["mav-mean", "internal:2:1"], rules, Some(1));
    cfg.model = root().join("assets/models/mav-enc-tiny");
    let e = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect_err("no trace writer");
    assert!(e.to_string().contains("minimax:2:1"), "{e}");
    fs::remove_dir_all(&dir).ok();
    fs::remove_dir_all(&values_only).ok();
}
