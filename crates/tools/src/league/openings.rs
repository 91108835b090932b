//! Opening suites: for chess, EPD or FEN lines (one position a line, as Stockfish's books ship them) or PGN
//! games (the position after each game's main line); for Connect Four and Hex, every distinct position a
//! few plies from the start ([`after_plies`]); and the seeded choice of a few of them.

use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::LeagueError;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::pgn::reader::read_all;

/// The opening suite used when none is given, relative to the checkout (`../shared` beside it).
pub const DEFAULT_BOOK: &str = "../shared/data/openings/stockfish-books/2moves_v1.epd";

/// One start position from a book or an enumeration.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening<G: GameState = ChessState> {
    /// Its 0-based index in the book (the line or game number) or the enumeration.
    pub index: usize,
    /// The position as text (a FEN with X-FEN castling for chess).
    pub fen: String,
    /// The position.
    pub state: G,
    /// The moves from the game's initial position that reach it (empty for a book position given as text).
    pub moves: Vec<G::Action>,
}

/// The most positions [`after_plies`] enumerates.
pub const MAX_ENUMERATED: usize = 200_000;

/// Every distinct position (by [`GameState::hash64`]) `plies` plies after `start` where the game is not
/// over, each with the first line reaching it, in the rules' move order. More than [`MAX_ENUMERATED`]
/// positions at any ply is an error (the count grows by the number of moves each ply).
pub fn after_plies<G: GameState>(start: &G, plies: u32) -> Result<Vec<Opening<G>>, LeagueError> {
    let mut layer = vec![(start.clone(), Vec::new())];
    for ply in 0..plies {
        let mut seen = std::collections::HashSet::new();
        let mut next = Vec::new();
        for (state, line) in &layer {
            for action in state.legal_actions() {
                let Ok(child) = state.play(action) else { continue };
                if child.outcome().is_none() && seen.insert(child.hash64()) {
                    if next.len() == MAX_ENUMERATED {
                        return Err(LeagueError::Settings(format!(
                            "--opening-plies {plies}: more than {MAX_ENUMERATED} positions after {} plies; use \
                             fewer plies",
                            ply + 1
                        )));
                    }
                    let mut line: Vec<G::Action> = line.clone();
                    line.push(action);
                    next.push((child, line));
                }
            }
        }
        layer = next;
    }
    Ok(layer
        .into_iter()
        .enumerate()
        .map(|(index, (state, moves))| Opening { index, fen: state.to_text(), state, moves })
        .collect())
}

/// Reads a whole book. EPD lines are `board turn castling ep` followed by operations (`;`-separated, ignored)
/// or by the two move counters; empty lines and lines starting with `#` are skipped. `.pgn` files give one
/// opening per game: the position after its main line. Every position must be legal and not over.
pub fn read_book(path: &Path) -> Result<Vec<Opening>, LeagueError> {
    let bad = |why: String| LeagueError::Book { path: path.to_path_buf(), why };
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    if name.ends_with(".zip") || name.ends_with(".gz") || name.ends_with(".zst") {
        return Err(bad("compressed books are not read; unpack it and pass the .epd or .pgn inside".into()));
    }
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
    let openings =
        if name.ends_with(".pgn") { parse_pgn_book(path, &text)? } else { parse_epd_book(path, &text)? };
    if openings.is_empty() {
        return Err(bad("it holds no position".into()));
    }
    Ok(openings)
}

/// Reads EPD or FEN lines.
pub fn parse_epd_book(path: &Path, text: &str) -> Result<Vec<Opening>, LeagueError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(';').next().unwrap_or("").split_whitespace().collect();
        if fields.len() < 4 {
            return Err(LeagueError::Book {
                path: path.to_path_buf(),
                why: format!("line {}: `{line}` is not an EPD or FEN position", n + 1),
            });
        }
        // Six fields when the counters follow and are numbers; EPD operations otherwise.
        let counters =
            fields.len() >= 6 && fields[4].parse::<u32>().is_ok() && fields[5].parse::<u32>().is_ok();
        let fen = if counters { fields[..6].join(" ") } else { format!("{} 0 1", fields[..4].join(" ")) };
        let state = ChessState::from_fen(&fen).map_err(|source| LeagueError::BookFen {
            path: path.to_path_buf(),
            line: n + 1,
            source,
        })?;
        push(path, &mut out, state, format!("line {}", n + 1))?;
    }
    Ok(out)
}

/// Reads PGN games: each gives the position after its main line.
pub fn parse_pgn_book(path: &Path, text: &str) -> Result<Vec<Opening>, LeagueError> {
    let mut out = Vec::new();
    for (n, game) in read_all(text).into_iter().enumerate() {
        let tree = game.map_err(|e| LeagueError::Book {
            path: path.to_path_buf(),
            why: format!("game {}: {e}", n + 1),
        })?;
        let positions = tree.mainline_positions().map_err(|e| LeagueError::Book {
            path: path.to_path_buf(),
            why: format!("game {}: {e}", n + 1),
        })?;
        let state = positions.last().map_or_else(|| tree.start().clone(), |(_, s)| s.clone());
        push(path, &mut out, state, format!("game {}", n + 1))?;
    }
    Ok(out)
}

fn push(path: &Path, out: &mut Vec<Opening>, state: ChessState, at: String) -> Result<(), LeagueError> {
    if let Some(o) = state.outcome() {
        return Err(LeagueError::Book {
            path: path.to_path_buf(),
            why: format!("{at}: the game is already over ({o})"),
        });
    }
    out.push(Opening { index: out.len(), fen: state.fen(), state, moves: Vec::new() });
    Ok(())
}

/// `count` openings drawn without replacement from `book` by a generator seeded with `seed`, in book order;
/// the whole book when `count` is `None` or not smaller than the book.
pub fn choose<G: GameState>(book: Vec<Opening<G>>, count: Option<usize>, seed: u64) -> Vec<Opening<G>> {
    match count {
        Some(k) if k < book.len() => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut picked = rand::seq::index::sample(&mut rng, book.len(), k).into_vec();
            picked.sort_unstable();
            let mut book: Vec<Option<Opening<G>>> = book.into_iter().map(Some).collect();
            picked.into_iter().filter_map(|i| book[i].take()).collect()
        }
        _ => book,
    }
}

/// The default book path if it exists (relative to the current folder, then to the source checkout).
pub fn default_book() -> Option<PathBuf> {
    let here = PathBuf::from(DEFAULT_BOOK);
    if here.is_file() {
        return Some(here);
    }
    let checkout = crate::checkout_dir().join(DEFAULT_BOOK);
    checkout.is_file().then_some(checkout)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPD: &str = "\
# two of Stockfish's 2moves_v1 lines, an EPD with operations, and a FEN
rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3

rnbqkbnr/1p1ppppp/p1p5/8/8/4PQ2/PPPP1PPP/RNB1KBNR w KQkq - 0 3
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\"; c0 \"king's pawn\";
";

    #[test]
    fn epd_and_fen_lines() {
        let book = parse_epd_book(Path::new("t.epd"), EPD).expect("reads");
        assert_eq!(book.len(), 3);
        assert_eq!(book[0].fen, "rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3");
        assert_eq!(book[2].fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(book.iter().map(|o| o.index).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse_epd_book(Path::new("t.epd"), "8/8/8/8/8/8/8/8 w - -\n").expect_err("no kings");
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = parse_epd_book(Path::new("t.epd"), "hello world\n").expect_err("garbage");
        assert!(e.to_string().contains("line 1") && e.to_string().contains("hello world"), "{e}");
        // Fool's mate: already over.
        let mate = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n";
        let e = parse_epd_book(Path::new("t.epd"), mate).expect_err("over");
        assert!(e.to_string().contains("already over"), "{e}");
        let e = read_book(Path::new("/nonexistent/book.epd")).expect_err("missing");
        assert!(e.to_string().contains("/nonexistent/book.epd"), "{e}");
        let e = read_book(Path::new("/x/UHO.epd.zip")).expect_err("zip");
        assert!(e.to_string().contains("unpack"), "{e}");
    }

    #[test]
    fn pgn_games_give_their_final_positions() {
        let pgn = "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 *\n";
        let book = parse_pgn_book(Path::new("t.pgn"), pgn).expect("reads");
        assert_eq!(book.len(), 2);
        assert_eq!(book[0].fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
        assert_eq!(book[1].fen, "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1");
    }

    #[test]
    fn positions_after_plies_are_distinct_and_reached_by_their_moves() {
        use crate::game::connect_four::ConnectFourState;
        use crate::game::hex::HexState;
        let c4 = after_plies(&ConnectFourState::new(), 2).expect("49");
        assert_eq!(c4.len(), 49);
        let c4 = after_plies(&ConnectFourState::new(), 3).expect("a few hundred");
        // 7³ lines, but 1-2-3 and 3-2-1 reach the same stones.
        assert!(c4.len() < 343 && c4.len() > 200, "{}", c4.len());
        for o in &c4 {
            let mut s = ConnectFourState::new();
            for &m in &o.moves {
                s = s.play(m).expect("legal");
            }
            assert_eq!(s, o.state);
            assert_eq!(o.fen, s.to_text());
        }
        let hex = after_plies(&HexState::new(7).expect("7×7"), 1).expect("49");
        assert_eq!(hex.len(), 49);
        assert_eq!(hex.iter().map(|o| o.index).collect::<Vec<_>>(), (0..49).collect::<Vec<_>>());
        assert_eq!(after_plies(&ChessState::startpos(), 0).expect("the start").len(), 1);
        // Hex 13×13 four stones in: 169·168·167·166 lines, refused before they fill the memory.
        let e = after_plies(&HexState::new(13).expect("13×13"), 4).expect_err("too many");
        assert!(
            e.to_string().contains("--opening-plies 4") && e.to_string().contains("after 3 plies"),
            "{e}"
        );
    }

    #[test]
    fn choice_is_seeded_and_in_book_order() {
        let book = parse_epd_book(Path::new("t.epd"), EPD).expect("reads");
        let a = choose(book.clone(), Some(2), 5);
        let b = choose(book.clone(), Some(2), 5);
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
        assert!(a[0].index < a[1].index);
        assert_eq!(choose(book.clone(), None, 5).len(), 3);
        assert_eq!(choose(book, Some(10), 5).len(), 3);
    }
}
