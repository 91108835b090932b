//! Lichess puzzles: the CSV, and solving one with a move chooser.
//!
//! A puzzle's FEN is the position *before* the opponent's first move; the solver then has to find the 2nd,
//! 4th, … moves, the opponent's replies being played in between. Any move that mates counts as correct
//! (Lichess accepts every mate in one).

use std::path::{Path, PathBuf};

use crate::game::GameState;
use crate::game::OutcomeReason;
use crate::game::chess::ChessState;

/// One puzzle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Puzzle {
    /// Lichess id.
    pub id: String,
    /// The position before the opponent's first move.
    pub fen: String,
    /// The moves in UCI: the opponent's first, then the solver's and the opponent's alternately.
    pub moves: Vec<String>,
    /// Lichess rating.
    pub rating: u32,
}

/// A puzzle file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PuzzleError {
    /// I/O.
    #[error("{path}: {reason}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A line is not `PuzzleId,FEN,Moves,Rating,…`.
    #[error("{path} line {line}: {reason} (expected the Lichess puzzle CSV: PuzzleId,FEN,Moves,Rating,…)", path = .path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// Line number from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// A puzzle whose own line cannot be played (a bad FEN, an illegal move, too few moves), or a chooser's
/// move that is not legal; it names the puzzle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("puzzle {id}: {problem}")]
pub struct BrokenPuzzle {
    /// The puzzle's id.
    pub id: String,
    /// What cannot be played, and why.
    pub problem: String,
}

/// Reads a puzzle CSV: the Lichess puzzle database's (`PuzzleId,FEN,Moves,Rating,…`; a header line starting
/// with `PuzzleId` is skipped), or the searchless-chess authors' `puzzles.csv` (their `data/download.sh`),
/// recognised by a `PGN` column in its header: each puzzle is the game up to the puzzle, whose final
/// position (with its real move counters, which their tokenizer reads) is the puzzle's start, as their
/// `puzzles.py` does.
pub fn read_puzzles(path: &Path) -> Result<Vec<Puzzle>, PuzzleError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PuzzleError::Io { path: path.into(), reason: e.to_string() })?;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.split(',').any(|h| h.trim().trim_matches('"') == "PGN") {
        return read_pgn_puzzles(path, &text);
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("PuzzleId") {
            continue;
        }
        let err = |reason: &str| PuzzleError::Line { path: path.into(), line: i + 1, reason: reason.into() };
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 {
            return Err(err("fewer than 4 fields"));
        }
        let moves: Vec<String> = f[2].split_whitespace().map(str::to_owned).collect();
        if moves.len() < 2 {
            return Err(err("a puzzle needs the opponent's move and at least one solution move"));
        }
        let rating = f[3].trim().parse().map_err(|_| err("the rating is not a number"))?;
        out.push(Puzzle { id: f[0].to_owned(), fen: f[1].to_owned(), moves, rating });
    }
    Ok(out)
}

/// CSV records with RFC 4180 quoting (a quoted field may hold commas, doubled quotes and line ends), each
/// with the line it starts on.
fn csv_records(text: &str) -> Result<Vec<(usize, Vec<String>)>, usize> {
    let mut out = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let (mut line, mut start, mut quoted, mut was_quoted) = (1usize, 1usize, false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
        }
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, _) => field.push(c),
            (false, '"') if field.is_empty() => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                record.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                let r = std::mem::take(&mut record);
                if !(r.len() == 1 && r[0].trim().is_empty() && !was_quoted) {
                    out.push((start, r));
                }
                was_quoted = false;
                start = line;
            }
            (false, '\r') => {}
            (false, _) => field.push(c),
        }
    }
    if quoted {
        return Err(start);
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        out.push((start, record));
    }
    Ok(out)
}

/// The searchless-chess authors' puzzle CSV: columns `PGN`, `Moves`, `Rating` (found by name; an id from
/// `PuzzleId` or else the first column).
fn read_pgn_puzzles(path: &Path, text: &str) -> Result<Vec<Puzzle>, PuzzleError> {
    let line_err = |line: usize, reason: String| PuzzleError::Line { path: path.into(), line, reason };
    let records = csv_records(text).map_err(|l| line_err(l, "a quoted field is never closed".into()))?;
    let Some(((_, header), rows)) = records.split_first() else { return Ok(Vec::new()) };
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let (Some(pgn), Some(moves), Some(rating)) = (col("PGN"), col("Moves"), col("Rating")) else {
        return Err(line_err(1, "the header needs PGN, Moves and Rating columns".into()));
    };
    let id = col("PuzzleId").unwrap_or(0);
    let mut out = Vec::with_capacity(rows.len());
    for (line, r) in rows {
        let field = |i: usize| r.get(i).map(String::as_str).unwrap_or("");
        let err = |reason: String| line_err(*line, reason);
        let game = crate::pgn::PgnReader::new(field(pgn).as_bytes())
            .next()
            .ok_or_else(|| err("the PGN field holds no game".into()))?
            .map_err(|e| err(format!("the PGN field does not read: {e}")))?;
        let positions = game.mainline_positions().map_err(|e| err(format!("the PGN's moves: {e}")))?;
        let fen =
            positions.last().map(|(_, s)| s.fen()).ok_or_else(|| err("the PGN has no position".into()))?;
        let moves: Vec<String> = field(moves).split_whitespace().map(str::to_owned).collect();
        if moves.len() < 2 {
            return Err(err("a puzzle needs the opponent's move and at least one solution move".into()));
        }
        let rating = field(rating).trim().parse().map_err(|_| err("the rating is not a number".into()))?;
        out.push(Puzzle { id: field(id).to_owned(), fen, moves, rating });
    }
    Ok(out)
}

/// How a chooser fared on one puzzle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PuzzleOutcome {
    /// Solver moves in the puzzle's solution.
    pub solver_moves: usize,
    /// Solver moves the chooser found, in order, before its first miss (a mate ends the puzzle as found).
    pub found: usize,
}

impl PuzzleOutcome {
    /// Every solver move was found (or a mate was played).
    pub fn solved(&self) -> bool {
        self.found == self.solver_moves
    }

    /// The first solver move was found: the partial credit of a puzzle whose tactic the chooser saw.
    pub fn first_move(&self) -> bool {
        self.found > 0
    }
}

impl Puzzle {
    /// An error message that names the puzzle.
    fn named(&self, e: impl std::fmt::Display) -> BrokenPuzzle {
        BrokenPuzzle { id: self.id.clone(), problem: e.to_string() }
    }

    /// The position the puzzle starts from (before the opponent's move); an error names the puzzle.
    fn start(&self) -> Result<ChessState, BrokenPuzzle> {
        ChessState::from_fen(&self.fen).map_err(|e| self.named(e))
    }

    /// Plays the solution's move `text` in `state`; an error names the puzzle.
    fn play(&self, state: &ChessState, text: &str) -> Result<ChessState, BrokenPuzzle> {
        let a = state.parse_action(text).map_err(|e| self.named(e))?;
        state.play(a).map_err(|e| self.named(e))
    }

    /// Replays the whole solution: an error names the puzzle and its first unplayable move (or a missing
    /// solver move), so a broken line is found before any chooser is measured on it.
    pub fn check(&self) -> Result<(), BrokenPuzzle> {
        if self.moves.len() < 2 {
            return Err(self.named("it needs the opponent's move and at least one solver move"));
        }
        let mut state = self.start()?;
        for m in &self.moves {
            state = self.play(&state, m)?;
        }
        Ok(())
    }
}

/// Plays the puzzle with `choose` picking the solver's moves; the outcome says how many it found.
/// A puzzle whose own moves are illegal, or a chooser's move that is not legal, is an error naming it.
pub fn solve<E>(
    p: &Puzzle,
    mut choose: impl FnMut(&ChessState) -> Result<Option<shakmaty::Move>, E>,
) -> Result<Result<PuzzleOutcome, E>, BrokenPuzzle> {
    let mut state = p.start()?;
    let first = p.moves.first().ok_or_else(|| p.named("it has no moves"))?;
    state = p.play(&state, first)?;
    let solver_moves = p.moves.len() / 2;
    let mut out = PuzzleOutcome { solver_moves, found: 0 };
    let mut i = 1;
    while i < p.moves.len() {
        let chosen = match choose(&state) {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        let Some(chosen) = chosen else { return Ok(Ok(out)) };
        let after = state.play(chosen).map_err(|e| p.named(format_args!("the chooser played {e}")))?;
        if after.outcome().is_some_and(|o| o.reason() == OutcomeReason::Checkmate) {
            out.found = solver_moves;
            return Ok(Ok(out));
        }
        if state.action_to_text(chosen) != p.moves[i] {
            return Ok(Ok(out));
        }
        out.found += 1;
        state = after;
        if let Some(reply) = p.moves.get(i + 1) {
            state = p.play(&state, reply)?;
        }
        i += 2;
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        crate::checkout_dir().join("tests/fixtures/puzzles/lichess-puzzles-dev.csv")
    }

    #[test]
    fn reads_the_fixture_and_an_oracle_solves_everything() {
        let ps = read_puzzles(&fixture()).expect("reads");
        assert_eq!(ps.len(), 500);
        for p in &ps {
            // The oracle plays the listed solution.
            let mut k = 1;
            let solved = solve(p, |s: &ChessState| -> Result<_, ()> {
                let m = s.parse_action(&p.moves[k]).ok();
                k += 2;
                Ok(m)
            })
            .expect("valid puzzle")
            .expect("the oracle never fails");
            assert!(solved.solved() && solved.first_move(), "{}", p.id);
            assert_eq!(solved.solver_moves, p.moves.len() / 2, "{}", p.id);
        }
    }

    #[test]
    fn a_wrong_move_fails_and_bad_lines_are_named() {
        let ps = read_puzzles(&fixture()).expect("reads");
        let solved = solve(&ps[0], |s: &ChessState| -> Result<_, ()> {
            Ok(s.legal_actions().into_iter().find(|a| s.action_to_text(*a) != ps[0].moves[1]))
        })
        .expect("valid")
        .expect("the chooser never fails");
        assert_eq!(solved, PuzzleOutcome { solver_moves: ps[0].moves.len() / 2, found: 0 });
        assert!(!solved.solved() && !solved.first_move());
        // The right first move and a wrong second one: partial credit only.
        assert!(ps[0].moves.len() >= 4, "the first fixture puzzle has two solver moves");
        let mut k = 0;
        let solved = solve(&ps[0], |s: &ChessState| -> Result<_, ()> {
            k += 1;
            let right = s.parse_action(&ps[0].moves[1]).ok();
            Ok(if k == 1 {
                right
            } else {
                s.legal_actions().into_iter().find(|a| s.action_to_text(*a) != ps[0].moves[3])
            })
        })
        .expect("valid")
        .expect("the chooser never fails");
        assert_eq!(solved.found, 1);
        assert!(solved.first_move() && !solved.solved());
        let tmp = std::env::temp_dir().join(format!("mavboard-puzzles-{}.csv", std::process::id()));
        std::fs::write(&tmp, "PuzzleId,FEN,Moves,Rating\nx,8/8 w - - 0 1,e2e4 e7e5,abc\n").expect("write");
        let err = read_puzzles(&tmp).expect_err("bad rating").to_string();
        // A solution with an illegal later move is caught by `check` before any chooser runs.
        assert!(ps.iter().all(|p| p.check().is_ok()));
        let mut broken = ps[0].clone();
        broken.moves[3] = "a1a1".into();
        let why = broken.check().expect_err("an illegal solution move");
        assert_eq!(why.id, broken.id);
        assert!(why.to_string().contains("a1a1"), "{why}");
        broken.moves.clear();
        assert!(broken.check().is_err());
        assert!(
            solve(&broken, |_: &ChessState| -> Result<_, ()> { Ok(None) }).is_err(),
            "no moves: an error, no panic"
        );
        assert!(err.contains("line 2") && err.contains("rating"), "{err}");
        std::fs::remove_file(&tmp).ok();
    }

    #[test]
    fn reads_the_searchless_authors_puzzle_csv() {
        let tmp = std::env::temp_dir().join(format!("mavboard-puzzles-pgn-{}.csv", std::process::id()));
        // Their layout: an unnamed index column, the game up to the puzzle as PGN (quoted: commas, quotes,
        // line ends), the moves from the opponent's first, the rating.
        let csv = ",PGN,Moves,Rating\n\
                   0,\"[Event \"\"Rated, blitz\"\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 *\",g8f6 h5f7,600\n\
                   1,\"1. d4 d5 *\",c1f4 c8f5 e2e3,1200\n";
        std::fs::write(&tmp, csv).expect("write");
        let ps = read_puzzles(&tmp).expect("reads");
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].id, "0");
        assert_eq!(ps[0].fen, "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3");
        assert_eq!((ps[0].moves.len(), ps[0].rating), (2, 600));
        assert_eq!(ps[1].fen, "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2");
        // Qxf7# solves the first.
        let out = solve(&ps[0], |s: &ChessState| -> Result<_, ()> { Ok(s.parse_action("h5f7").ok()) })
            .expect("valid")
            .expect("ok");
        assert!(out.solved());
        std::fs::write(&tmp, ",PGN,Moves,Rating\n0,\"1. e4 e5,e2e4 e7e5,5\n").expect("write");
        let err = read_puzzles(&tmp).expect_err("unclosed quote").to_string();
        assert!(err.contains("line 2") && err.contains("never closed"), "{err}");
        std::fs::write(&tmp, ",PGN,Moves,Rating\n0,1. e4 Ke7 Ke5,a1a2 a2a3,5\n").expect("write");
        assert!(read_puzzles(&tmp).is_err(), "an illegal game is an error");
        std::fs::remove_file(&tmp).ok();
    }
}
