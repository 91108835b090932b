//! Integration tests of the PGN reader, game tree and writer over the fixtures in tests/fixtures/pgn
//! (and, when present, every file under ../shared/data/pgn).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mavboard_core::game::{GameKind, GameState};
use mavboard_core::pgn::reader::GameErrorKind;
use mavboard_core::pgn::writer::write_games;
use mavboard_core::pgn::{Eval, GameTree, Malformed, PgnReader, WriteOptions, game_to_string};

fn fixtures() -> PathBuf {
    mavboard_core::checkout_dir().join("tests/fixtures/pgn")
}

fn pgn_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pgn") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn read_file(path: &Path) -> Vec<Result<GameTree, mavboard_core::pgn::GameError>> {
    let file = std::fs::File::open(path).expect("fixture exists");
    PgnReader::new(std::io::BufReader::new(file)).collect()
}

/// Blank lines inside a game's movetext (a comment in its own paragraph, before the first move, inside a
/// variation, before the result, with CRLF line ends) do not split the game: the standard ends a game at
/// its termination marker.
#[test]
fn blank_lines_inside_movetext_keep_each_game_whole() {
    let games = read_file(&fixtures().join("blank-lines.pgn"));
    let plies: Vec<usize> =
        games.iter().map(|g| g.as_ref().expect("every game reads").mainline().count()).collect();
    assert_eq!(plies, [5, 7, 3, 4, 1]);
    let first = games[0].as_ref().expect("read");
    let comment = first.node(first.mainline().nth(2).expect("3rd ply")).expect("node").comments_after();
    assert!(comment[0].raw().contains("It has two paragraphs itself."), "{comment:?}");
}

const REGENERATE: WriteOptions = WriteOptions { line_width: 80, use_source: false };

/// Exports every game without its source, re-imports it and checks the tree is identical; also checks the
/// source-preserving export. Returns (games, games whose regenerated text equals the source).
fn round_trip_file(path: &Path) -> (usize, usize) {
    let mut games = 0;
    let mut same_bytes = 0;
    for game in read_file(path).into_iter().flatten() {
        games += 1;
        let text = game_to_string(&game, &REGENERATE);
        let again: Vec<_> = PgnReader::new(text.as_bytes()).collect();
        assert_eq!(
            again.len(),
            1,
            "{}: export of game {games} re-reads as one game:\n{text}",
            path.display()
        );
        let again = again.into_iter().next().and_then(Result::ok).expect("exported game re-reads");
        assert_eq!(again, game, "{}: game {games} round-trips:\n{text}", path.display());
        let source = game.source().expect("unmodified UTF-8 games keep their source");
        let kept = game_to_string(&game, &WriteOptions::default());
        assert!(kept.starts_with(source), "source-preserving export starts with the source");
        if text == kept {
            same_bytes += 1;
        }
    }
    (games, same_bytes)
}

/// For a file whose games all read: asserts that writing the unmodified games reproduces the file (up to
/// trailing whitespace) and returns true; returns false for files with failed games.
fn file_written_back_identically(path: &Path) -> bool {
    let games: Vec<_> = read_file(path).into_iter().collect();
    if games.iter().any(Result::is_err) {
        return false;
    }
    let games: Vec<_> = games.into_iter().flatten().collect();
    let original = std::fs::read(path).expect("readable file");
    let mut out = Vec::new();
    write_games(&mut out, &games, &WriteOptions::default()).expect("write to memory");
    assert_eq!(out.trim_ascii_end(), original.trim_ascii_end(), "{}", path.display());
    true
}

/// Appends a comment and a NAG to every 5th node (root and variations included) of every game and checks
/// the review path: the original bytes with just the new tokens inserted. Returns the number of games.
fn annotate_file(path: &Path) -> usize {
    let mut games = 0;
    for mut game in read_file(path).into_iter().flatten() {
        games += 1;
        let source = game.source().expect("source kept").to_owned();
        let mut all = vec![mavboard_core::pgn::NodeId::ROOT];
        let mut k = 0;
        while k < all.len() {
            let children = game.node(all[k]).expect("node").children().to_vec();
            all.extend(children);
            k += 1;
        }
        let mut added = 0;
        for (i, &id) in all.iter().enumerate().filter(|(i, _)| i % 5 == 0) {
            let c = mavboard_core::pgn::Comment::new(format!("[%eval 0.{i}] review")).expect("no brace");
            added += c.raw().len() + 3;
            game.append_comment(id, c).expect("node");
            game.append_nag(id, mavboard_core::pgn::Nag(i as u8 % 7 + 1)).expect("node");
            added += format!(" ${}", i % 7 + 1).len();
        }
        let text = mavboard_core::pgn::source_with_additions(&game)
            .unwrap_or_else(|| panic!("{}: game {games} splices:\n{source}", path.display()));
        assert_eq!(text.len(), source.len() + added, "only the new tokens are added:\n{text}");
        let again = PgnReader::new(text.as_bytes()).next().expect("a game").expect("reads");
        assert_eq!(again, game);
    }
    games
}

#[test]
fn review_annotations_are_inserted_into_the_original_bytes() {
    for path in pgn_files(&fixtures()) {
        annotate_file(&path);
    }
}

#[test]
fn every_fixture_game_round_trips() {
    let files = pgn_files(&fixtures());
    assert!(files.len() >= 15, "fixtures present");
    for path in files {
        round_trip_file(&path);
    }
}

#[test]
fn expected_game_counts() {
    let expected: &[(&str, usize, usize)] = &[
        ("lichess_db_2025-05_sample_1MB.pgn", 438, 0),
        ("twic1599_sample_1MB.pgn", 1110, 0),
        ("kokopu-chess960.pgn", 4, 0),
        ("broken-middle.pgn", 4, 2),
        ("unrecognized-tokens.pgn", 1, 17),
        ("python-chess/anastasian-lewis.pgn", 1, 0),
        ("python-chess/antichess-programfox.pgn", 0, 2),
        ("python-chess/chessbase-empty-line.pgn", 1, 0),
        ("python-chess/cutechess-fischerrandom.pgn", 4, 0),
        ("python-chess/kasparov-deep-blue-1997.pgn", 6, 0),
        ("python-chess/knightvuillaume-jannlee-zh-lichess.pgn", 0, 1),
        ("python-chess/molinari-bordais-1979.pgn", 1, 0),
        ("python-chess/nepomniachtchi-liren-game1.pgn", 1, 0),
        ("python-chess/saturs-jannlee-zh-lichess.pgn", 0, 1),
        ("python-chess/stockfish-learning.pgn", 1, 0),
        ("python-chess/uci-moves.pgn", 1, 0),
        ("python-chess/utf8-bom.pgn", 2, 0),
    ];
    for &(name, ok, failed) in expected {
        let games = read_file(&fixtures().join(name));
        let got_ok = games.iter().filter(|g| g.is_ok()).count();
        assert_eq!((got_ok, games.len() - got_ok), (ok, failed), "{name}");
    }
}

#[test]
fn broken_game_in_the_middle_keeps_the_others() {
    let games = read_file(&fixtures().join("broken-middle.pgn"));
    assert_eq!(games.len(), 6);
    let events: Vec<_> = games
        .iter()
        .filter_map(|g| g.as_ref().ok())
        .filter_map(|g| g.header("Event").map(str::to_owned))
        .collect();
    assert_eq!(events, ["Broken middle 1", "Broken middle 2", "Broken middle 4", "Broken middle 6"]);
    let illegal = games[2].as_ref().expect_err("game 3 has an illegal move");
    assert_eq!((illegal.game, illegal.line), (3, 17));
    assert!(matches!(illegal.kind, GameErrorKind::IllegalMove { .. }));
    assert!(illegal.to_string().contains("4... Bxc6"), "{illegal}");
    let fen = games[4].as_ref().expect_err("game 5 has a bad FEN");
    assert_eq!((fen.game, fen.line), (5, 26));
    assert!(fen.to_string().contains("FEN"), "{fen}");
}

/// One case of `unrecognized-tokens.pgn`: the game's number, the error's line and column, the offending
/// token (`None` for an illegal move or a broken tag, `broken` then saying which) and the main line that
/// reads before it.
struct TokenCase {
    game: usize,
    line: u64,
    column: u32,
    token: Option<&'static str>,
    prefix: &'static [&'static str],
}

/// The broken tags of `unrecognized-tokens.pgn` (games 13 and 14), by game.
fn broken(game: usize) -> Option<Malformed> {
    let site = || "Site".to_owned();
    match game {
        13 => Some(Malformed::TagStrayToken { name: site(), token: "%~<|>".to_owned() }),
        14 => Some(Malformed::TagWithoutOpen { name: "Event".to_owned() }),
        _ => None,
    }
}

const TOKEN_CASES: &[TokenCase] = &[
    TokenCase { game: 1, line: 4, column: 4, token: Some("pawn"), prefix: &[] },
    TokenCase { game: 2, line: 9, column: 4, token: Some("Pe4"), prefix: &[] },
    TokenCase { game: 3, line: 14, column: 27, token: Some("brace"), prefix: &["e4"] },
    TokenCase { game: 4, line: 21, column: 1, token: Some("whatever"), prefix: &["e4", "e5", "Nf3", "Nf6"] },
    TokenCase { game: 5, line: 26, column: 7, token: Some("$"), prefix: &["e4"] },
    TokenCase { game: 6, line: 31, column: 16, token: Some("$300"), prefix: &["d4", "d5", "c4"] },
    TokenCase {
        game: 7,
        line: 36,
        column: 41,
        token: Some("1-"),
        prefix: &["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"],
    },
    TokenCase { game: 8, line: 41, column: 10, token: Some("1/2"), prefix: &["c4", "c5"] },
    TokenCase { game: 9, line: 46, column: 13, token: Some("Nf3x"), prefix: &["e4", "d5"] },
    TokenCase { game: 10, line: 51, column: 15, token: Some("…"), prefix: &["e4"] },
    TokenCase { game: 11, line: 56, column: 14, token: Some("or"), prefix: &["e4"] },
    TokenCase {
        game: 12,
        line: 61,
        column: 25,
        token: Some("resigned"),
        prefix: &["f3", "e5", "g4", "Qh4#"],
    },
    TokenCase { game: 13, line: 65, column: 19, token: None, prefix: &[] },
    TokenCase { game: 14, line: 69, column: 1, token: None, prefix: &[] },
    TokenCase { game: 15, line: 73, column: 24, token: Some("zz"), prefix: &["e4", "e5", "Nf3", "Nc6"] },
    TokenCase { game: 16, line: 78, column: 10, token: Some("huh"), prefix: &["e4", "e5"] },
    TokenCase { game: 17, line: 83, column: 13, token: None, prefix: &[] },
];

fn mainline_sans(tree: &GameTree) -> Vec<String> {
    tree.mainline().filter_map(|id| tree.node(id).and_then(|n| n.san_text())).collect()
}

/// Tokens that are neither moves, move numbers, NAGs, comments, variations nor results (kokopu's kind of
/// syntax error): each is its game's error, at its line and column, with the moves before it readable.
#[test]
fn unrecognized_tokens_are_errors_with_line_column_and_token() {
    let path = fixtures().join("unrecognized-tokens.pgn");
    let games = read_file(&path);
    // Every game stays listed, each once: the movetext below game 13's broken tag line is its own
    // (issue 58: it was a game of its own).
    assert_eq!(games.len(), TOKEN_CASES.len() + 1, "every game stays listed");
    for case in TOKEN_CASES {
        let e = games[case.game - 1].as_ref().expect_err("a broken game");
        assert_eq!((e.game, e.line, e.column), (case.game, case.line, Some(case.column)), "{e}");
        match case.token {
            Some(token) => {
                assert_eq!(e.kind, GameErrorKind::Unrecognized { token: token.to_owned() }, "{e}");
                let shown = format!(
                    "game {}, line {}, column {}: `{token}` is not PGN",
                    case.game, case.line, case.column
                );
                assert!(e.to_string().starts_with(&shown), "{e}");
                let prefix = e.prefix.as_ref().expect("the readable prefix");
                assert_eq!(mainline_sans(prefix), case.prefix, "game {}", case.game);
                assert!(prefix.source().is_none(), "the prefix is not the game's text");
            }
            None => match broken(case.game) {
                Some(malformed) => assert_eq!(e.kind, GameErrorKind::Malformed(malformed), "{e}"),
                None => {
                    assert!(matches!(e.kind, GameErrorKind::IllegalMove { .. }), "{e}");
                    assert!(e.prefix.is_none());
                }
            },
        }
    }
    let last = games.last().and_then(|g| g.as_ref().ok()).expect("the valid game at the end");
    assert_eq!(mainline_sans(last).len(), 7);
    // The variation before the word in game 11 is kept too.
    let eleventh = games[10].as_ref().expect_err("game 11").prefix.as_ref().expect("prefix");
    assert_eq!(eleventh.root().children().len(), 2, "1. e4 and the variation 1. d4");
    // The headers of a broken game are in its prefix.
    let first = games[0].as_ref().expect_err("game 1").prefix.as_ref().expect("prefix");
    assert_eq!(first.header("Event"), Some("Words instead of moves"));
}

/// A broken game's bytes are kept: the good games' sources and the failed games' texts, each with what
/// stood before it, give the file back byte for byte (as a batch review copies it).
#[test]
fn files_with_unrecognized_tokens_are_copied_byte_for_byte() {
    let path = fixtures().join("unrecognized-tokens.pgn");
    let original = std::fs::read(&path).expect("fixture");
    let mut reader = PgnReader::new(original.as_slice());
    let mut copy = Vec::new();
    while let Some(game) = reader.next() {
        match game {
            Ok(tree) => {
                copy.extend_from_slice(tree.leading_text().expect("leading kept").as_bytes());
                copy.extend_from_slice(tree.source().expect("source kept").as_bytes());
            }
            Err(_) => {
                let failed = reader.failed_source().expect("a broken game keeps its bytes");
                copy.extend_from_slice(&failed.leading);
                copy.extend_from_slice(&failed.text);
            }
        }
    }
    assert_eq!(copy.trim_ascii_end(), original.trim_ascii_end());
}

/// The index of a large file (the app's game list) finds the same errors when each game is parsed alone.
#[test]
fn the_index_gives_the_same_unrecognized_token_errors() {
    let path = fixtures().join("unrecognized-tokens.pgn");
    let bytes = std::fs::read(&path).expect("fixture");
    let whole = read_file(&path);
    let index = mavboard_core::pgn::index::index_all(bytes.as_slice()).expect("indexed");
    assert_eq!(index.len(), whole.len());
    for (game, read) in index.iter().zip(&whole) {
        let alone = mavboard_core::pgn::index::parse_game(&bytes[game.range()], game, Default::default());
        match (alone, read) {
            (Err(a), Err(b)) => {
                assert_eq!((a.game, a.line, a.column, &a.kind), (b.game, b.line, b.column, &b.kind));
                assert_eq!(a.prefix, b.prefix);
            }
            (Ok(a), Ok(b)) => assert_eq!(&a, b),
            (a, b) => panic!("game {}: {a:?} alone, {b:?} in the file", game.number),
        }
    }
}

#[test]
fn crazyhouse_and_antichess_are_clear_errors() {
    let games = read_file(&fixtures().join("python-chess/saturs-jannlee-zh-lichess.pgn"));
    let e = games[0].as_ref().expect_err("crazyhouse");
    assert!(e.to_string().contains("Crazyhouse") && e.to_string().contains("not supported"), "{e}");
    // The same drops without a Variant header fail at the first drop, on its line.
    let text = "[Event \"x\"]\n\n1. e4 e5 2. Nc3 Nc6 3. Nf3 Bc5 4. Bc4 Nf6 5. d3 O-O 6. O-O d6 7. Nd5 h6\n\
                8. Be3 Bg4 9. c3 Bxe3 10. fxe3 Nxd5 11. Bxd5 B@b6 *\n";
    let games: Vec<_> = PgnReader::new(text.as_bytes()).collect();
    let e = games[0].as_ref().expect_err("drop");
    assert!(matches!(e.kind, GameErrorKind::Drop { .. }) && e.line == 4, "{e}");
}

#[test]
fn chess960_variant_spellings_and_positions() {
    for name in ["kokopu-chess960.pgn", "python-chess/cutechess-fischerrandom.pgn"] {
        for game in read_file(&fixtures().join(name)) {
            let game = game.expect("Chess960 game reads");
            assert_eq!(game.start().kind(), GameKind::Chess960, "{name}: {:?}", game.header("Variant"));
            if let Some(last) = game.mainline().last() {
                let end = game.position_at(last).expect("mainline node");
                assert_eq!(end.kind(), GameKind::Chess960);
            }
        }
    }
}

#[test]
fn lichess_clock_and_eval_commands() {
    let games = read_file(&fixtures().join("lichess_db_2025-05_sample_1MB.pgn"));
    let first = games[0].as_ref().expect("first game reads");
    let node = first.node(first.mainline().next().expect("a move")).expect("node");
    assert!(node.comments_after().iter().any(|c| c.clock().is_some()), "first move has [%clk]");
    let with_eval = games
        .iter()
        .filter_map(|g| g.as_ref().ok())
        .flat_map(|g| {
            g.mainline()
                .filter_map(|id| g.node(id))
                .flat_map(|n| n.comments_after().to_vec())
                .collect::<Vec<_>>()
        })
        .filter(|c| c.eval().is_some())
        .count();
    assert!(with_eval > 0, "some Lichess games carry [%eval]");

    let games = read_file(&fixtures().join("broken-middle.pgn"));
    let last = games[5].as_ref().expect("game 6 reads");
    let comments: Vec<_> = last
        .mainline()
        .filter_map(|id| last.node(id))
        .filter_map(|n| n.comments_after().first().cloned())
        .collect();
    assert_eq!(comments[0].eval(), Some(Eval::Pawns(-0.5)));
    assert_eq!(comments[0].clock(), Some(Duration::from_secs(180)));
    assert_eq!(comments[1].eval_depth(), Some(18));
    assert_eq!(comments[1].clock(), Some(Duration::from_secs_f64(178.5)));
    assert_eq!(comments[2].eval(), Some(Eval::Mate(-1)));
    assert_eq!(comments[0].raw(), " [%eval -0.5] [%clk 0:03:00] ");
}

#[test]
fn unmodified_games_write_back_byte_identical() {
    let checked = pgn_files(&fixtures()).iter().filter(|path| file_written_back_identically(path)).count();
    assert!(checked >= 10, "most fixtures read without errors");
}

#[test]
fn editing_drops_the_source_and_regenerates() {
    let mut games: Vec<_> = read_file(&fixtures().join("python-chess/molinari-bordais-1979.pgn"));
    let mut game = games.remove(0).expect("reads");
    let first = game.mainline().next().expect("a move");
    game.set_comment(first, "King's pawn").expect("node");
    assert!(game.source().is_none());
    let text = game_to_string(&game, &WriteOptions::default());
    assert!(text.contains("1. e4 {King's pawn} 1... c5"), "{text}");
    let again = PgnReader::new(text.as_bytes()).next().expect("one game").expect("reads");
    assert_eq!(again, game);
}

#[test]
fn shared_data_round_trips_when_present() {
    let shared = mavboard_core::checkout_dir().join("../shared/data/pgn");
    if !shared.is_dir() {
        println!("skipped: {} is absent (it only exists in the development workspace)", shared.display());
        return;
    }
    for path in pgn_files(&shared) {
        let (games, same) = round_trip_file(&path);
        assert_eq!(annotate_file(&path), games);
        let whole = if file_written_back_identically(&path) {
            "file written back byte-identical"
        } else {
            "has failed games"
        };
        println!("{}: {games} games round-trip; {same} regenerate byte-identical; {whole}", path.display());
    }
}

#[test]
fn gui_edits_on_a_read_game_round_trip() {
    let mut game =
        read_file(&fixtures().join("python-chess/molinari-bordais-1979.pgn")).remove(0).expect("reads");
    let main: Vec<_> = game.mainline().collect();
    let after_e4 = main[0];
    // 1... e5 as a new variation of 1... c5.
    let e5 = {
        let pos = game.position_at(after_e4).expect("node");
        let mv = pos.parse_action("e7e5").expect("legal");
        game.add_move(after_e4, mv).expect("legal")
    };
    assert_eq!(game.node(after_e4).expect("node").children(), &[main[1], e5]);
    let nf3 = {
        let mv = game.position_at(e5).expect("node").parse_action("g1f3").expect("legal");
        game.add_move(e5, mv).expect("legal")
    };
    game.set_nags(e5, vec![mavboard_core::pgn::Nag::GOOD_MOVE]).expect("node");
    let text = game_to_string(&game, &WriteOptions::default());
    assert!(text.contains("1. e4 c5 (1... e5 $1 2. Nf3) 2. c4"), "{text}");
    let again = PgnReader::new(text.as_bytes()).next().expect("a game").expect("reads");
    assert_eq!(again, game);

    game.promote_to_mainline(nf3).expect("node");
    assert_eq!(game.mainline().take(3).collect::<Vec<_>>(), vec![after_e4, e5, nf3]);
    assert_eq!(
        game.position_at(nf3).expect("node").fen(),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
    );
    game.delete(e5).expect("node");
    assert_eq!(game.mainline().collect::<Vec<_>>(), main);
    let again = PgnReader::new(game_to_string(&game, &WriteOptions::default()).as_bytes())
        .next()
        .expect("a game")
        .expect("reads");
    assert_eq!(again, game);
}

#[test]
fn long_comments_and_chess960_without_fen() {
    let long = "x".repeat(3000);
    let text = format!("[Variant \"Fischer Random\"]\n\n1. e4 {{{long}}} e5 *\n");
    let game = PgnReader::new(text.as_bytes()).next().expect("a game").expect("reads");
    assert_eq!(game.start().kind(), GameKind::Chess960);
    let first = game.node(game.mainline().next().expect("move")).expect("node");
    assert_eq!(first.comments_after().len(), 1);
    assert_eq!(first.comments_after()[0].raw(), long);
    let mainline_positions = game.mainline_positions().expect("legal");
    assert_eq!(mainline_positions.len(), 3);
}

mod no_panics {
    use super::*;
    use proptest::prelude::*;

    fn read_and_round_trip(bytes: &[u8]) {
        for game in PgnReader::new(bytes).flatten() {
            let text = game_to_string(&game, &REGENERATE);
            let again = PgnReader::new(text.as_bytes()).next().and_then(Result::ok);
            assert_eq!(again.as_ref(), Some(&game), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = PgnReader::new(bytes.as_slice()).count();
        }

        #[test]
        fn pgn_like_text_never_panics_and_round_trips(
            tokens in proptest::collection::vec(
                prop_oneof![
                    Just("e4"), Just("e5"), Just("Nf3"), Just("Nc6"), Just("d4"), Just("--"), Just("("), Just(")"),
                    Just("{c}"), Just("$1"), Just("!?"), Just("1."), Just("2..."), Just("*"), Just("1-0"),
                    Just("\n"), Just("\n\n"), Just("[Event \"x\"]\n"), Just("[FEN \"8/8/8/8/8/8/8/K1k5 w - - 0 1\"]\n"),
                    Just("{ [%clk 0:01:00] }"), Just(";rest\n"), Just("\n%escape\n"), Just("O-O"), Just("Z0"),
                ],
                0..60,
            )
        ) {
            read_and_round_trip(tokens.join(" ").as_bytes());
        }
    }

    #[test]
    fn truncated_files_never_panic() {
        let bytes = std::fs::read(fixtures().join("lichess_db_2025-05_sample_1MB.pgn")).expect("fixture");
        for cut in (0..20_000).step_by(997) {
            read_and_round_trip(&bytes[..cut]);
        }
    }
}
