//! Tokenizer round trip (text → ids → text identical) on examples built from every position of the master
//! games in ../shared/data/pgn/master/*.pgn (not in the repository: skipped with a message when absent).
//! The repository's own PGN fixtures are covered the same way, so the check always runs on real games.

use std::path::Path;

use mavboard_core::mav::sample::random_example;
use mavboard_core::mav::tokenizer::Tokenizer;
use mavboard_core::pgn::PgnReader;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn round_trip_file(path: &Path, t: &Tokenizer) -> usize {
    let file = std::fs::File::open(path).expect("readable");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut n = 0;
    for game in PgnReader::new(std::io::BufReader::new(file)).flatten() {
        let Ok(line) = game.mainline_positions() else { continue };
        for pair in line.windows(2) {
            let (prev, (id, state)) = (&pair[0].1, &pair[1]);
            let Some(action) = game.node(*id).and_then(|node| node.mv()) else { continue };
            let Some(ex) = random_example(prev, action, state, &mut rng) else { continue };
            let text = ex.text();
            let ids = t.encode(&text);
            assert!(!ids.contains(&t.unk_id()), "unknown token in {text}");
            assert_eq!(t.decode(&ids).expect("valid ids"), text);
            n += 1;
        }
    }
    n
}

#[test]
fn master_games_round_trip() {
    let t = Tokenizer::new();
    let dir = mavboard_core::checkout_dir().join("../shared/data/pgn/master");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipped: {} is absent (it exists only beside the development checkout)", dir.display());
        return;
    };
    let mut total = 0;
    for e in entries.flatten() {
        if e.path().extension().is_some_and(|x| x == "pgn") {
            total += round_trip_file(&e.path(), &t);
        }
    }
    assert!(total > 50_000, "only {total} positions");
    println!("{total} positions round-tripped");
}

#[test]
fn fixture_games_round_trip() {
    let t = Tokenizer::new();
    let dir = mavboard_core::checkout_dir().join("tests/fixtures/pgn");
    let n = round_trip_file(&dir.join("twic1599_sample_1MB.pgn"), &t);
    assert!(n > 10_000, "only {n} positions");
}
