//! End-to-end labels with the real Stockfish over the fixture openings, and a check of the full opening
//! suites in ../shared/data. Each test skips (printing why) when what it needs is absent.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::temp_path;
use mavboard::datagen::run::{LabelSettings, Limit};
use mavboard::datagen::shard::read_shard;
use mavboard::datagen::source::parse_epd_line;
use mavboard::datagen::{EpdSource, Labeler, PositionSource, SourceMix, StockfishLabeler, run_labels};
use mavboard::game::{GameKind, GameState};
use mavboard::uci::SearchLimits;
use mavboard::uci::locate::locate_stockfish;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn three_positions_end_to_end() {
    let sf = match locate_stockfish(None) {
        Ok(p) => p,
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let fixtures = root().join("tests/fixtures/datagen");
    let mut mix = SourceMix::new();
    for (file, chess960) in [("2moves_v1_head40.epd", false), ("FRC_openings_head12.epd", true)] {
        let path = fixtures.join(file);
        let source = EpdSource::open(&path, &EpdSource::tag_for(&path), chess960).expect("fixture");
        mix.add(Arc::new(source), 1.0).expect("weight");
    }
    let settings = LabelSettings {
        positions: 3,
        limit: Limit::Depth(4),
        continuations: 1,
        temperature: 0.2,
        seed: 11,
        val_fraction: 0.05,
        chains_per_shard: 2,
        hash_mb: 4,
        search_share: 0.0,
        search_breadth: 3,
        search_depth: 2,
        game: None,
    };
    let dir = temp_path("dg-sf", "e2e");
    let limits = settings.limit.search_limits().expect("an engine limit");
    let summary = run_labels(
        &dir,
        &settings,
        &mix,
        2,
        move |_| StockfishLabeler::start(&sf, 4, limits),
        None,
        &mut |_| {},
    )
    .expect("labels run");
    let m = summary.manifest;
    assert!(m.complete);
    assert!(m.engine.starts_with("Stockfish"), "{}", m.engine);
    let mut records = Vec::new();
    for s in &m.shards {
        records.extend(read_shard(&dir.join(&s.file)).expect("shard"));
    }
    assert_eq!(records.len(), 3);
    for r in &records {
        let state = parse_epd_line(&r.fen, r.chess960).expect("FEN");
        assert_eq!(state.kind() == GameKind::Chess960, r.chess960);
        let mut legal: Vec<String> =
            state.legal_actions().into_iter().map(|a| state.action_to_text(a)).collect();
        let mut labelled: Vec<String> = r.moves.iter().map(|m| m.uci.clone()).collect();
        legal.sort();
        labelled.sort();
        assert_eq!(labelled, legal, "every legal move labelled once in {}", r.fen);
        assert_eq!(r.best, r.moves[0].uci);
        assert_eq!(r.depth, 4);
        assert!(r.nodes > 0);
        let wp: Vec<f64> = r.moves.iter().map(|m| m.score.win_probability()).collect();
        assert!(wp.windows(2).all(|w| w[0] >= w[1]), "moves best first: {:?}", r.moves);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn castling_is_labelled_in_each_notation() {
    let sf = match locate_stockfish(None) {
        Ok(p) => p,
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let mut labeler = StockfishLabeler::start(&sf, 4, SearchLimits::depth(3)).expect("stockfish starts");
    // Chess960 (king-takes-rook `g1h1`), then standard (`e1g1`), then Chess960 again: the labeller must
    // switch UCI_Chess960 back and forth.
    for (fen, chess960, castle) in [
        ("bqnbr1kr/pppppppp/8/8/8/8/PPPPPPPP/BQNBR1KR w HEhe - 0 1", true, "g1h1"),
        ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", false, "e1g1"),
        ("bqnbr1kr/pppppppp/8/8/8/8/PPPPPPPP/BQNBR1KR w HEhe - 0 1", true, "g1h1"),
    ] {
        let state = parse_epd_line(fen, chess960).expect("FEN");
        let label = labeler.label(&state).expect("labelled");
        assert_eq!(label.moves.len(), state.legal_actions().len());
        assert!(label.moves.iter().any(|m| m.uci == castle), "{castle} missing in {fen}: {:?}", label.moves);
    }
}

#[test]
fn shared_opening_suites_parse() {
    let books = root().join("../shared/data/openings/stockfish-books");
    if !books.exists() {
        return eprintln!("SKIPPED: {} is absent (only in the development checkout)", books.display());
    }
    for (file, chess960, count) in [
        ("2moves_v1.epd", false, 40_457),
        ("UHO_4060_v2.epd.zip", false, 242_201),
        ("FRC_openings.epd", true, 960),
    ] {
        let path = books.join(file);
        let source = EpdSource::open(&path, &EpdSource::tag_for(&path), chess960).expect("suite opens");
        assert_eq!(source.len(), count, "{file}");
        // Every 97th line (all of FRC), so the check stays fast.
        let step = if chess960 { 1 } else { 97 };
        for i in (0..source.len()).step_by(step) {
            let s = source.position(i).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.kind() == GameKind::Chess960, chess960);
            assert!(!s.legal_actions().is_empty());
        }
    }
}
