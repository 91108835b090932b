//! The league for Connect Four and Hex with the shipped multi-game model: the model against the Connect
//! Four solver at a depth limit and against Hex MCTS with random playouts, each opening with both colours;
//! checked through the records (move strings that replay to the recorded result, SGF that reads back), the
//! results file, the table and a resume. (Wrong pairings of agent and game through the CLI: `tests/cli/league.rs`.)

use crate::common;

use std::fs;
use std::path::Path;

use common::temp_dir;
use mavboard::game::GameState;
use mavboard::game::connect_four::record::read_moves;
use mavboard::game::hex::record::read_sgf;
use mavboard::inference::onnx::SessionOptions;
use mavboard::league::rules::Rules;
use mavboard::league::settings::StockfishLimits;
use mavboard::league::spec::parse_agents;
use mavboard::league::{LeagueConfig, LeagueGameSetup, run_league};
use mavboard::solve::stop::StopFlag;

fn config(dir: &Path, game: LeagueGameSetup, agents: &[&str], openings: usize) -> LeagueConfig {
    LeagueConfig {
        agents: parse_agents(&agents.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).expect("agents"),
        model: Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/mav-enc-tiny"),
        game,
        openings: Some(openings),
        seed: 3,
        rules: Rules { max_plies: 200, eval: None },
        stockfish: None,
        stockfish_limits: StockfishLimits::default(),
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
fn connect_four_model_against_a_depth_limited_solver() {
    let dir = temp_dir("league-games", "c4");
    let cfg =
        config(&dir, LeagueGameSetup::ConnectFour { plies: 2 }, &["mav-mean", "mcts:16", "solver:2"], 2);
    let summary = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("league runs");
    // Three pairs, two openings, both colours.
    assert_eq!((summary.total, summary.played), (12, 12));
    assert!(summary.files.pgn.ends_with("games.tsv"));
    let text = fs::read_to_string(&summary.files.pgn).expect("records written");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(mavboard::league::game::CONNECT_FOUR_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 12);
    for row in &rows {
        assert_eq!(row.len(), 6, "{row:?}");
        // The move string replays from the empty board (two opening moves first) to the recorded end.
        let record = read_moves(row[0]).expect("the move string replays");
        assert!(record.moves().len() > 2);
        let end = record.end();
        match end.outcome() {
            Some(o) => assert_eq!(o.result_str(), row[1], "{row:?}"),
            None => panic!("a Connect Four game ends on the board: {row:?}"),
        }
        assert_ne!(row[2], row[3]);
    }
    let t = &summary.table;
    assert_eq!(t.labels, vec!["mav-mean", "mcts-16", "solver-d2"]);
    assert!(t.standings.iter().all(|s| s.games == 8 && s.rating.is_some()));
    let table = fs::read_to_string(&summary.files.table).expect("table.txt");
    assert!(table.contains("games end by the rules (four in a row; a full board is a draw)"), "{table}");
    let settings = fs::read_to_string(&summary.files.settings).expect("league.json");
    assert!(settings.contains("connect_four: every position after 2 plies"), "{settings}");

    // A resume replays nothing; a different opening depth is refused.
    let again = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("resumes");
    assert_eq!((again.played, again.resumed), (0, 12));
    let mut other = cfg.clone();
    other.game = LeagueGameSetup::ConnectFour { plies: 3 };
    assert!(run_league(&other, &StopFlag::new(), &mut |_| {}).is_err());
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn hex_model_against_playout_mcts() {
    let dir = temp_dir("league-games", "hex");
    let cfg = config(&dir, LeagueGameSetup::Hex { size: 7, plies: 1 }, &["mav-max", "playouts:200"], 2);
    let summary = run_league(&cfg, &StopFlag::new(), &mut |_| {}).expect("league runs");
    assert_eq!((summary.total, summary.played), (4, 4));
    let text = fs::read_to_string(&summary.files.pgn).expect("records written");
    let games: Vec<&str> = text.split("(;").filter(|g| !g.trim().is_empty()).collect();
    assert_eq!(games.len(), 4);
    for g in games {
        let record = read_sgf(&format!("(;{g}")).expect("the SGF reads back");
        assert_eq!(record.size, 7);
        let end = record.end().expect("the moves replay");
        let winner = end.outcome().expect("a Hex game ends with a connection").result_str();
        let re = record.properties.iter().find(|(k, _)| k == "RE").map(|(_, v)| v.as_str());
        assert_eq!(re, Some(if winner == "1-0" { "B+" } else { "W+" }));
        let players: Vec<&str> = record
            .properties
            .iter()
            .filter(|(k, _)| k == "PB" || k == "PW")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(players.len(), 2);
        assert!(players.contains(&"mav-max") && players.contains(&"playouts-200"), "{players:?}");
    }
    assert!(summary.table.standings.iter().all(|s| s.games == 4));
    fs::remove_dir_all(&dir).ok();
}
