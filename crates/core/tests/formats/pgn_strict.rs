//! Strict PGN (issue 58): broken tag pairs, a tag after the moves, a `}` outside a comment and unbalanced
//! variations are each one error of one game, at their line, and the games after them read normally.
//!
//! `tests/fixtures/pgn/strict-errors.pgn` (written for mavboard) has one case a game and a valid game at
//! the end. [`kokopu_syntax_errors_when_present`] reads kokopu's own corpus of syntax errors when
//! `MAVBOARD_KOKOPU_DIR` names its folder (`test/resources/pgns/syntactic-error-1/` of yo35/kokopu,
//! which is not copied here).

use std::path::PathBuf;

use mavboard_core::pgn::index::{index_all, parse_game};
use mavboard_core::pgn::{GameError, GameErrorKind, GameTree, Malformed, PgnReader};

fn fixture() -> PathBuf {
    mavboard_core::checkout_dir().join("tests/fixtures/pgn/strict-errors.pgn")
}

fn read(bytes: &[u8]) -> Vec<Result<GameTree, GameError>> {
    PgnReader::new(bytes).collect()
}

/// Each broken game of the fixture: its number, the error's line and what it names.
fn cases() -> Vec<(usize, u64, Malformed)> {
    let name = |n: &str| n.to_owned();
    vec![
        (1, 2, Malformed::TagWithoutName),
        (2, 8, Malformed::TagWithoutValue { name: name("Round") }),
        (3, 13, Malformed::TagValueLineBreak { name: name("Event") }),
        (4, 19, Malformed::UnescapedQuote { name: name("Event") }),
        (5, 24, Malformed::TagWithoutOpen { name: name("White") }),
        (6, 29, Malformed::TagWithoutClose { name: name("Event") }),
        (7, 34, Malformed::TagStrayToken { name: name("Event"), token: name("junk") }),
        (8, 43, Malformed::TagAfterMovetext { name: name("Annotator") }),
        (9, 49, Malformed::StrayCloseBrace),
        (10, 53, Malformed::UnclosedVariation { open: 1 }),
        (11, 57, Malformed::NestedVariationStart),
        (12, 61, Malformed::UnmatchedCloseParen),
    ]
}

#[test]
fn every_case_is_one_game_with_its_error_on_its_line() {
    let bytes = std::fs::read(fixture()).expect("fixture");
    let games = read(&bytes);
    let cases = cases();
    assert_eq!(games.len(), cases.len() + 1, "one game a case and the valid one: {games:#?}");
    for (game, line, malformed) in cases {
        let e = games[game - 1].as_ref().expect_err("a broken game");
        assert_eq!((e.game, e.line), (game, line), "{e}");
        assert_eq!(e.kind, GameErrorKind::Malformed(malformed), "{e}");
        assert!(e.column.is_some(), "{e}");
        assert!(e.to_string().starts_with(&format!("game {game}, line {line}, column ")), "{e}");
        assert!(e.prefix.is_some(), "the game as far as it reads: {e}");
    }
    let last = games.last().and_then(|g| g.as_ref().ok()).expect("the valid game at the end reads");
    assert_eq!(last.header("Site"), Some("The \"Club\""));
    assert_eq!(last.mainline().count(), 7);
    // The games before the problem keep what reads: the tag after the moves of game 8 comes after 2. Nf3.
    let eighth = games[7].as_ref().expect_err("game 8");
    assert_eq!(eighth.prefix.as_ref().map(|p| p.mainline().count()), Some(3));
}

/// The index of a file splits it into the same games, and a game read back from its range has the same
/// error as in the whole file.
#[test]
fn the_index_agrees_with_the_reader() {
    let bytes = std::fs::read(fixture()).expect("fixture");
    let whole = read(&bytes);
    let index = index_all(bytes.as_slice()).expect("indexed");
    assert_eq!(index.len(), whole.len());
    for (game, read) in index.iter().zip(&whole) {
        let range = usize::try_from(game.offset).expect("offset")
            ..usize::try_from(game.offset + game.len).expect("end");
        let alone = parse_game(&bytes[range], game, Default::default());
        assert_eq!(
            alone.as_ref().err().map(|e| (e.game, e.line, &e.kind)),
            read.as_ref().err().map(|e| (e.game, e.line, &e.kind))
        );
    }
}

/// Each case alone, between two valid games: three games, the middle one broken, the last one whole.
#[test]
fn a_broken_game_never_takes_its_neighbours() {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    // Each game of the fixture ends with its result at the end of a line.
    let mut games = Vec::new();
    let mut game = String::new();
    for line in text.lines() {
        game.push_str(line);
        game.push('\n');
        if line.ends_with(" *") || line.ends_with(" 1-0") {
            games.push(std::mem::take(&mut game));
        }
    }
    assert_eq!(games.len(), cases().len() + 1);
    let valid = "[Event \"v\"]\n\n1. e4 e5 *";
    for game in games.iter().map(|g| g.trim()).take(cases().len()) {
        let pgn = format!("{valid}\n\n{game}\n\n{valid}\n");
        let read = read(pgn.as_bytes());
        assert_eq!(read.len(), 3, "{pgn}");
        assert!(read[0].is_ok() && read[1].is_err() && read[2].is_ok(), "{pgn}\n{read:#?}");
    }
}

/// kokopu's corpus of syntax errors (`MAVBOARD_KOKOPU_DIR`: the folder `syntactic-error-1` of yo35/kokopu
/// with `database.pgn` and one `N.err` a broken game, whose second line is the error's line): every game
/// counted once, each broken one an error, the last one read, and each error's line kokopu's (except
/// where the missing `]` of a tag is: mavboard names the tag's own line, kokopu the next token's).
#[test]
fn kokopu_syntax_errors_when_present() {
    let Some(dir) = std::env::var_os("MAVBOARD_KOKOPU_DIR") else {
        println!("skipped: set MAVBOARD_KOKOPU_DIR to kokopu's test/resources/pgns/syntactic-error-1");
        return;
    };
    let dir = PathBuf::from(dir);
    let bytes = std::fs::read(dir.join("database.pgn")).expect("database.pgn in MAVBOARD_KOKOPU_DIR");
    let games = read(&bytes);
    let failed = games.iter().filter(|g| g.is_err()).count();
    println!("kokopu syntactic-error-1: {} games, {failed} with errors", games.len());
    let mut expected = 0;
    for (i, game) in games.iter().enumerate() {
        let Ok(err) = std::fs::read_to_string(dir.join(format!("{i}.err"))) else {
            assert!(game.is_ok(), "game {}: {game:?}", i + 1);
            continue;
        };
        expected += 1;
        let line: u64 = err.lines().nth(1).and_then(|l| l.trim().parse().ok()).expect("N.err: its line");
        let e = game.as_ref().expect_err("kokopu's broken game");
        let tag_without_close = matches!(e.kind, GameErrorKind::Malformed(Malformed::TagWithoutClose { .. }));
        println!("  game {}: kokopu line {line}: {e}", i + 1);
        if !tag_without_close {
            assert_eq!(e.line, line, "{e}");
        }
    }
    assert_eq!(failed, expected);
    assert!(games.last().is_some_and(|g| g.is_ok()), "the valid game at the end");
}

/// What real files do stays readable: a result inside an annotator's variation, and games that have no
/// result and whose headers do not start with `Event` (puzzle sets of FEN headers, exports that lead with
/// `White`), each still its own game; a lone tag line after the moves is the only "tag after the moves".
#[test]
fn lenient_where_real_files_need_it() {
    let games = read(b"[Event \"a\"]\n\n1. e4 e5 2. Qh5 (2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0) 2... Nc6 *\n");
    assert_eq!(games.len(), 1);
    let tree = games[0].as_ref().expect("a result inside a variation reads");
    assert_eq!(tree.mainline_positions().expect("replays").len(), 5);
    let puzzles = b"[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n[SetUp \"1\"]\n\n1. O-O\n\n\
        [FEN \"4k3/8/8/8/8/8/8/R3K3 w Q - 0 1\"]\n[SetUp \"1\"]\n\n1. O-O-O\n";
    let games = read(puzzles);
    assert_eq!(games.len(), 2, "{games:?}");
    assert!(games.iter().all(Result::is_ok), "{games:?}");
    let no_event = b"[White \"a\"]\n[Black \"b\"]\n\n1. e4 e5\n\n[White \"c\"]\n[Black \"d\"]\n\n1. d4 d5\n";
    let games = read(no_event);
    assert_eq!(games.len(), 2, "{games:?}");
    assert!(games.iter().all(Result::is_ok), "{games:?}");
    let lone = read(b"[White \"a\"]\n[Black \"b\"]\n\n1. e4 e5\n\n[Site \"here\"]\n\n2. Nf3 *\n");
    assert_eq!(lone.len(), 1, "{lone:?}");
    assert!(lone[0].is_err());
}

/// A `[` within a line of moves is not a tag misplaced: it is reported as a token that is not PGN.
#[test]
fn a_bracket_within_the_moves_is_not_called_a_tag() {
    let games = read(b"[Event \"a\"]\n\n1. e4 [%clk 0:01:00] e5 *\n");
    let Err(e) = &games[0] else { panic!("an error: {games:?}") };
    assert!(!matches!(e.kind, GameErrorKind::Malformed { .. }), "{e}");
    assert!(!e.to_string().contains("after the moves"), "{e}");
}
