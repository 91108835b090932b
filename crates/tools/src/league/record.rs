//! A finished game as the results file keeps it, and its PGN.

use shakmaty::{Color, KnownOutcome, Move};

use super::LeagueError;
use crate::game::chess::ChessState;
use crate::pgn::{Comment, GameTree, NodeId, WriteOptions, game_to_string};

/// Who won.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
}

impl GameResult {
    /// The PGN result.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// White's points.
    pub fn white_points(self) -> f64 {
        match self {
            GameResult::WhiteWins => 1.0,
            GameResult::BlackWins => 0.0,
            GameResult::Draw => 0.5,
        }
    }

    /// The win of `white` (true) or Black.
    pub fn win(white: bool) -> GameResult {
        if white { GameResult::WhiteWins } else { GameResult::BlackWins }
    }

    fn known(self) -> KnownOutcome {
        match self {
            GameResult::WhiteWins => KnownOutcome::Decisive { winner: Color::White },
            GameResult::BlackWins => KnownOutcome::Decisive { winner: Color::Black },
            GameResult::Draw => KnownOutcome::Draw,
        }
    }
}

/// One finished game (a line of the results file).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameRecord {
    /// The schedule's key (see [`super::schedule::game_id`]).
    pub id: String,
    /// White's label.
    pub white: String,
    /// Black's label.
    pub black: String,
    /// The opening's index in the book.
    pub book_index: usize,
    /// The opening position.
    pub opening_fen: String,
    /// The moves, in UCI notation.
    pub moves: Vec<String>,
    /// The result.
    pub result: GameResult,
    /// Why the game ended, in words.
    pub termination: String,
    /// Whether the result was decided by the adjudication rules rather than on the board.
    pub adjudicated: bool,
    /// Seconds the game took.
    pub seconds: f64,
    /// The game as PGN.
    pub pgn: String,
}

/// One played move with its notes (a chess [`Move`] unless another game's action is given).
#[derive(Debug, Clone, PartialEq)]
pub struct PlayedMove<A = Move> {
    /// The move.
    pub action: A,
    /// The adjudicator's evaluation after it (White's side, centipawns).
    pub eval_white: Option<i32>,
    /// The agent's note.
    pub note: Option<String>,
}

/// PGN headers that are not about the moves.
#[derive(Debug, Clone, PartialEq)]
pub struct PgnHeaders {
    /// `Event`.
    pub event: String,
    /// `Date` (`YYYY.MM.DD`).
    pub date: String,
    /// `Round` (the game's number in the schedule).
    pub round: usize,
    /// `White`.
    pub white: String,
    /// `Black`.
    pub black: String,
    /// The opening's index in the book, for the `Opening` tag.
    pub book_index: usize,
}

/// A centipawn figure for a mate: mates rank beyond every centipawn score, nearer mates higher.
pub const MATE_CP: i32 = 100_000;

/// The `[%eval]` text of a White-side centipawn score (mates as `#n`).
pub fn eval_text(cp: i32) -> String {
    let mate = MATE_CP;
    if cp.abs() > mate - 1000 {
        let n = mate - cp.abs();
        if cp > 0 { format!("#{n}") } else { format!("#-{n}") }
    } else {
        format!("{:.2}", f64::from(cp) / 100.0)
    }
}

/// The game as PGN: headers (with `FEN`/`SetUp` for the opening), every move with a comment holding the
/// adjudicator's `[%eval]` and the agent's note, and the termination as the last comment.
pub fn pgn_text(
    headers: &PgnHeaders,
    start: &ChessState,
    moves: &[PlayedMove],
    result: GameResult,
    termination: &str,
    adjudicated: bool,
) -> Result<String, LeagueError> {
    let bad = |why: String| LeagueError::Agent { agent: "pgn".into(), why };
    let tags = vec![
        ("Event".to_owned(), headers.event.clone()),
        ("Site".to_owned(), "mavboard league".to_owned()),
        ("Date".to_owned(), headers.date.clone()),
        ("Round".to_owned(), headers.round.to_string()),
        ("White".to_owned(), headers.white.clone()),
        ("Black".to_owned(), headers.black.clone()),
        ("Result".to_owned(), result.pgn().to_owned()),
        ("FEN".to_owned(), start.fen()),
        ("SetUp".to_owned(), "1".to_owned()),
        ("Opening".to_owned(), format!("book position {}", headers.book_index + 1)),
        ("PlyCount".to_owned(), moves.len().to_string()),
        ("Termination".to_owned(), if adjudicated { "adjudication" } else { "normal" }.to_owned()),
    ];
    let mut tree = GameTree::with_headers(tags).map_err(|e| bad(e.to_string()))?;
    let mut at = NodeId::ROOT;
    for m in moves {
        at = tree.add_move(at, m.action).map_err(|e| bad(e.to_string()))?;
        let mut parts = Vec::new();
        if let Some(cp) = m.eval_white {
            parts.push(format!("[%eval {}]", eval_text(cp)));
        }
        if let Some(n) = &m.note {
            parts.push(n.replace(['{', '}'], ""));
        }
        if !parts.is_empty() {
            tree.append_comment(at, Comment::new(parts.join(" ")).map_err(|e| bad(e.to_string()))?)
                .map_err(|e| bad(e.to_string()))?;
        }
    }
    let end = Comment::new(termination.replace(['{', '}'], "")).map_err(|e| bad(e.to_string()))?;
    tree.append_comment(at, end).map_err(|e| bad(e.to_string()))?;
    tree.set_result(shakmaty::Outcome::Known(result.known()));
    Ok(game_to_string(&tree, &WriteOptions::default()))
}

/// Today's date in UTC as `YYYY.MM.DD` (the PGN `Date` format).
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    format!("{y:04}.{m:02}.{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::pgn::reader::read_all;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_416), (2025, 11, 24));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn evals_and_mates() {
        assert_eq!(eval_text(34), "0.34");
        assert_eq!(eval_text(-250), "-2.50");
        assert_eq!(eval_text(MATE_CP - 3), "#3");
        assert_eq!(eval_text(-MATE_CP + 2), "#-2");
    }

    #[test]
    fn pgn_reads_back_with_the_opening_and_comments() {
        let start = ChessState::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
            .expect("fen");
        let m1 = start.parse_action("g1f3").expect("legal");
        let s1 = start.play(m1).expect("plays");
        let m2 = s1.parse_action("b8c6").expect("legal");
        let moves = vec![
            PlayedMove { action: m1, eval_white: Some(40), note: Some("max 55.0% mean {54.1%}".into()) },
            PlayedMove { action: m2, eval_white: None, note: None },
        ];
        let headers = PgnHeaders {
            event: "test".into(),
            date: "2026.11.23".into(),
            round: 3,
            white: "mav-max".into(),
            black: "sf-skill0".into(),
            book_index: 4,
        };
        let text =
            pgn_text(&headers, &start, &moves, GameResult::Draw, "max plies (2): draw", true).expect("pgn");
        assert!(text.contains("[Termination \"adjudication\"]") && text.contains("[%eval 0.40]"), "{text}");
        assert!(text.contains("1/2-1/2"), "{text}");
        let games = read_all(&text);
        let tree = games.into_iter().next().expect("one game").expect("reads");
        assert_eq!(tree.header("White"), Some("mav-max"));
        assert_eq!(tree.start().fen(), start.fen());
        assert_eq!(tree.mainline().count(), 2);
    }
}
