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

/// Reads a Lichess puzzle CSV (a header line starting with `PuzzleId` is skipped).
pub fn read_puzzles(path: &Path) -> Result<Vec<Puzzle>, PuzzleError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PuzzleError::Io { path: path.into(), reason: e.to_string() })?;
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
    fn named(&self, e: impl std::fmt::Display) -> String {
        format!("puzzle {}: {e}", self.id)
    }

    /// The position the puzzle starts from (before the opponent's move); an error names the puzzle.
    fn start(&self) -> Result<ChessState, String> {
        ChessState::from_fen(&self.fen).map_err(|e| self.named(e))
    }

    /// Plays the solution's move `text` in `state`; an error names the puzzle.
    fn play(&self, state: &ChessState, text: &str) -> Result<ChessState, String> {
        let a = state.parse_action(text).map_err(|e| self.named(e))?;
        state.play(a).map_err(|e| self.named(e))
    }

    /// Replays the whole solution: an error names the puzzle and its first unplayable move (or a missing
    /// solver move), so a broken line is found before any chooser is measured on it.
    pub fn check(&self) -> Result<(), String> {
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
) -> Result<Result<PuzzleOutcome, E>, String> {
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
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/puzzles/lichess-puzzles-dev.csv")
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
        assert!(why.contains(&broken.id) && why.contains("a1a1"), "{why}");
        broken.moves.clear();
        assert!(broken.check().is_err());
        assert!(
            solve(&broken, |_: &ChessState| -> Result<_, ()> { Ok(None) }).is_err(),
            "no moves: an error, no panic"
        );
        assert!(err.contains("line 2") && err.contains("rating"), "{err}");
        std::fs::remove_file(&tmp).ok();
    }
}
