//! Drives the real Stockfish through the UCI client. Skips (printing why) when Stockfish is not installed
//! (`apt-get install stockfish`; CI installs it).

use std::path::PathBuf;
use std::time::Duration;

use mavboard_inference::game::GameState;
use mavboard_inference::game::chess::ChessState;
use mavboard_inference::uci::locate::locate_stockfish;
use mavboard_inference::uci::{SearchLimits, UciEngine, UciError};

fn stockfish() -> Option<PathBuf> {
    match locate_stockfish(None) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

#[test]
fn handshake_multipv_search_and_stop() {
    let Some(path) = stockfish() else { return };
    let mut e = UciEngine::start(&path, &[]).expect("stockfish starts");
    assert!(e.name().starts_with("Stockfish"), "{}", e.name());
    assert!(e.options().iter().any(|o| o.name == "MultiPV" && o.kind == "spin"));
    e.set_option("Threads", "1").expect("option");
    e.set_option("multipv", "3").expect("option names are case-insensitive");
    assert!(matches!(e.set_option("No Such Thing", "1"), Err(UciError::UnknownOption { .. })));
    e.new_game().expect("ready");

    let start = ChessState::startpos();
    e.position("startpos", &["e2e4", "e7e5"]).expect("position");
    let r = e.go(&SearchLimits::depth(6)).expect("search");
    assert_eq!(r.lines.len(), 3);
    let after = {
        let mut s = start.clone();
        for m in ["e2e4", "e7e5"] {
            s = s.play(s.parse_action(m).expect("legal")).expect("legal");
        }
        s
    };
    let mut firsts = Vec::new();
    for (i, line) in r.lines.iter().enumerate() {
        assert_eq!(line.multipv, Some(i as u32 + 1));
        assert_eq!(line.depth, Some(6));
        assert!(line.score.is_some() && line.nodes.is_some());
        let first = line.pv.first().expect("a pv");
        after.parse_action(first).expect("the pv starts with a legal move");
        firsts.push(first.clone());
    }
    firsts.dedup();
    assert_eq!(firsts.len(), 3, "three different root moves");
    assert_eq!(r.bestmove.as_ref(), Some(&r.lines[0].pv[0]));

    // An infinite search runs until stopped.
    e.set_option("MultiPV", "1").expect("option");
    e.position(&start.fen(), &[]).expect("position");
    e.start_search(&SearchLimits::infinite()).expect("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    let r = e.stop().expect("stopped");
    let best = r.bestmove.expect("a best move");
    start.parse_action(&best).expect("legal");
    e.is_ready().expect("still responsive");

    // Checkmated: no move.
    e.position("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", &[]).expect("position");
    let r = e.go(&SearchLimits::depth(3)).expect("search");
    assert_eq!(r.bestmove, None);
    e.quit().expect("quit");
}
