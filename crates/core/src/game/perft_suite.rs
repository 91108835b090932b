//! Perft test suites: positions with their expected leaf counts per depth.
//!
//! Two common formats are read, told apart by the first line that is not blank or a `#` comment:
//!
//! * EPD lines: `FEN ;D1 20 ;D2 400 ;D3 8902` (four or six FEN fields; one position per line).
//! * Blocks (python-chess): `id NAME`, `epd FEN`, then `perft DEPTH COUNT` lines; blocks are separated by
//!   blank lines or start at the next `id`/`epd`.
//!
//! Chess960 is detected per position from the castling field (Shredder-FEN rook files, or `KQkq` that
//! only make sense in Chess960), as [`ChessState::from_fen`] does.

use super::chess::ChessState;
use super::fen::FenError;
use super::perft::chess_perft;

/// The two suite formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SuiteFormat {
    /// One `FEN ;D1 n ;D2 n …` line per position.
    Epd,
    /// python-chess blocks of `id` / `epd` / `perft N count` lines.
    Blocks,
}

/// One position of a suite.
#[derive(Debug, Clone)]
pub struct PerftCase {
    /// The `id` of a block, or `line N` for an EPD line.
    pub name: String,
    /// The 1-based line the FEN is on.
    pub line: usize,
    /// The FEN as written in the file.
    pub fen: String,
    /// The position.
    pub state: ChessState,
    /// Expected counts as (depth, leaf nodes), sorted by depth, depths unique.
    pub expected: Vec<(u32, u64)>,
}

/// A parsed suite.
#[derive(Debug, Clone)]
pub struct PerftSuite {
    /// Which format the text was in.
    pub format: SuiteFormat,
    /// The positions, in file order.
    pub cases: Vec<PerftCase>,
}

/// What is wrong on one line of a suite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// The FEN does not read.
    #[error("{0}")]
    Fen(FenError),
    /// An EPD operation or `perft` line that is not `D<depth> <count>` / `perft <depth> <count>`.
    #[error("`{text}` is not a perft count: {reason}")]
    BadCount {
        /// The text at fault.
        text: String,
        /// Why.
        reason: String,
    },
    /// The same depth appears twice for one position.
    #[error("depth {0} is given twice for this position")]
    DuplicateDepth(u32),
    /// A position without any expected counts.
    #[error("the position has no perft counts (expected {0})")]
    NoCounts(&'static str),
    /// A `perft` line before the block's `epd` line.
    #[error("`perft` line before the block's `epd` line")]
    PerftBeforeEpd,
    /// A block with two `epd` lines.
    #[error("a second `epd` line in one block; separate blocks with a blank line")]
    SecondEpd,
    /// A block with an `id` but no `epd`.
    #[error("block `{0}` has no `epd` line")]
    MissingEpd(String),
    /// A line that is none of `id`, `epd`, `perft` in a block suite.
    #[error("unknown line `{0}` in a block suite (expected `id NAME`, `epd FEN` or `perft DEPTH COUNT`)")]
    UnknownLine(String),
}

/// An error reading a suite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// A problem on one line.
    #[error("line {line}: {problem}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: LineProblem,
    },
    /// Nothing but comments and blank lines.
    #[error(
        "the suite holds no positions (expected EPD lines like `FEN ;D1 20 ;D2 400` or blocks of \
         `id NAME` / `epd FEN` / `perft DEPTH COUNT`)"
    )]
    Empty,
}

fn line_err(line: usize, problem: LineProblem) -> SuiteError {
    SuiteError::Line { line, problem }
}

/// The result of checking one depth of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthCheck {
    /// The depth.
    pub depth: u32,
    /// The count from the suite.
    pub expected: u64,
    /// The count computed.
    pub got: u64,
}

impl DepthCheck {
    /// Whether the counts agree.
    pub fn ok(&self) -> bool {
        self.expected == self.got
    }
}

impl PerftCase {
    /// Computes perft for each expected depth up to `max_depth` (all depths if `None`).
    pub fn check(&self, max_depth: Option<u32>) -> Vec<DepthCheck> {
        self.expected
            .iter()
            .filter(|(d, _)| max_depth.is_none_or(|m| *d <= m))
            .map(|&(depth, expected)| DepthCheck { depth, expected, got: chess_perft(&self.state, depth) })
            .collect()
    }
}

/// Reads a suite in either format (see the module documentation).
pub fn parse_suite(text: &str) -> Result<PerftSuite, SuiteError> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(first) = first else {
        return Err(SuiteError::Empty);
    };
    let keyword = first.split_whitespace().next().unwrap_or("");
    let (format, cases) = if matches!(keyword, "id" | "epd" | "perft") {
        (SuiteFormat::Blocks, parse_blocks(text)?)
    } else {
        (SuiteFormat::Epd, parse_epd(text)?)
    };
    if cases.is_empty() {
        return Err(SuiteError::Empty);
    }
    Ok(PerftSuite { format, cases })
}

fn read_fen(fen: &str, line: usize) -> Result<ChessState, SuiteError> {
    ChessState::from_fen(fen).map_err(|e| line_err(line, LineProblem::Fen(e)))
}

fn parse_count(depth: &str, count: &str, whole: &str, line: usize) -> Result<(u32, u64), SuiteError> {
    let bad = |reason: &str| {
        line_err(line, LineProblem::BadCount { text: whole.to_owned(), reason: reason.into() })
    };
    let depth: u32 = depth.parse().map_err(|_| bad("the depth is not a whole number"))?;
    if depth == 0 {
        return Err(bad("depth 0 always has 1 node; start at depth 1"));
    }
    let count: u64 = count.parse().map_err(|_| bad("the count is not a whole number"))?;
    Ok((depth, count))
}

fn add_count(expected: &mut Vec<(u32, u64)>, entry: (u32, u64), line: usize) -> Result<(), SuiteError> {
    if expected.iter().any(|(d, _)| *d == entry.0) {
        return Err(line_err(line, LineProblem::DuplicateDepth(entry.0)));
    }
    expected.push(entry);
    expected.sort_unstable();
    Ok(())
}

fn parse_epd(text: &str) -> Result<Vec<PerftCase>, SuiteError> {
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut parts = l.split(';');
        let fen = parts.next().unwrap_or("").trim();
        let state = read_fen(fen, line)?;
        let mut expected = Vec::new();
        for op in parts {
            let op = op.trim();
            if op.is_empty() {
                continue;
            }
            let mut words = op.split_whitespace();
            let (Some(name), Some(count), None) = (words.next(), words.next(), words.next()) else {
                return Err(line_err(
                    line,
                    LineProblem::BadCount {
                        text: op.to_owned(),
                        reason: "expected `D<depth> <count>`".into(),
                    },
                ));
            };
            let Some(depth) = name.strip_prefix('D') else {
                return Err(line_err(
                    line,
                    LineProblem::BadCount {
                        text: op.to_owned(),
                        reason: "expected `D<depth> <count>`, like `D3 8902`".into(),
                    },
                ));
            };
            add_count(&mut expected, parse_count(depth, count, op, line)?, line)?;
        }
        if expected.is_empty() {
            return Err(line_err(line, LineProblem::NoCounts("`;D1 <count> ;D2 <count> …` after the FEN")));
        }
        cases.push(PerftCase { name: format!("line {line}"), line, fen: fen.to_owned(), state, expected });
    }
    Ok(cases)
}

/// A block being read.
#[derive(Default)]
struct Block {
    id: Option<(String, usize)>,
    epd: Option<(String, usize, ChessState)>,
    expected: Vec<(u32, u64)>,
}

impl Block {
    fn is_empty(&self) -> bool {
        self.id.is_none() && self.epd.is_none()
    }

    fn finish(self, cases: &mut Vec<PerftCase>) -> Result<(), SuiteError> {
        let Some((fen, line, state)) = self.epd else {
            if let Some((id, id_line)) = self.id {
                return Err(line_err(id_line, LineProblem::MissingEpd(id)));
            }
            return Ok(());
        };
        if self.expected.is_empty() {
            return Err(line_err(line, LineProblem::NoCounts("`perft <depth> <count>` lines after `epd`")));
        }
        let name = self.id.map_or_else(|| format!("line {line}"), |(id, _)| id);
        cases.push(PerftCase { name, line, fen, state, expected: self.expected });
        Ok(())
    }
}

fn parse_blocks(text: &str) -> Result<Vec<PerftCase>, SuiteError> {
    let mut cases = Vec::new();
    let mut block = Block::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.starts_with('#') {
            continue;
        }
        if l.is_empty() {
            std::mem::take(&mut block).finish(&mut cases)?;
            continue;
        }
        let (keyword, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        let rest = rest.trim();
        match keyword {
            "id" => {
                if !block.is_empty() {
                    std::mem::take(&mut block).finish(&mut cases)?;
                }
                block.id = Some((rest.to_owned(), line));
            }
            "epd" => {
                if block.epd.is_some() {
                    if block.expected.is_empty() {
                        return Err(line_err(line, LineProblem::SecondEpd));
                    }
                    std::mem::take(&mut block).finish(&mut cases)?;
                }
                let state = read_fen(rest, line)?;
                block.epd = Some((rest.to_owned(), line, state));
            }
            "perft" => {
                if block.epd.is_none() {
                    return Err(line_err(line, LineProblem::PerftBeforeEpd));
                }
                let mut words = rest.split_whitespace();
                let (Some(depth), Some(count), None) = (words.next(), words.next(), words.next()) else {
                    return Err(line_err(
                        line,
                        LineProblem::BadCount {
                            text: l.to_owned(),
                            reason: "expected `perft <depth> <count>`".into(),
                        },
                    ));
                };
                let entry = parse_count(depth, count, l, line)?;
                add_count(&mut block.expected, entry, line)?;
            }
            _ => return Err(line_err(line, LineProblem::UnknownLine(l.to_owned()))),
        }
    }
    block.finish(&mut cases)?;
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameKind, GameState};

    #[test]
    fn reads_epd_lines_with_crlf_and_comments() {
        let text = "# comment\r\n\r\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400\r\n\
                    4k3/8/8/8/8/8/8/4K2R w K - ;D2 66; D1 15\r\n";
        let suite = parse_suite(text).expect("valid suite");
        assert_eq!(suite.format, SuiteFormat::Epd);
        assert_eq!(suite.cases.len(), 2);
        assert_eq!(suite.cases[0].expected, vec![(1, 20), (2, 400)]);
        assert_eq!(suite.cases[1].expected, vec![(1, 15), (2, 66)], "sorted by depth");
        assert_eq!(suite.cases[1].line, 4);
        assert_eq!(suite.cases[1].name, "line 4");
        let checks = suite.cases[1].check(Some(1));
        assert_eq!(checks, vec![DepthCheck { depth: 1, expected: 15, got: 15 }]);
        assert!(checks[0].ok());
    }

    #[test]
    fn detects_chess960_from_shredder_castling() {
        let text = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 ;D1 21 ;D2 528\n";
        let suite = parse_suite(text).expect("valid suite");
        let case = &suite.cases[0];
        assert_eq!(case.state.kind(), GameKind::Chess960);
        assert!(case.check(None).iter().all(DepthCheck::ok));
    }

    #[test]
    fn reads_blocks() {
        let text = "#\n# header\n\nid pos-3\nepd 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - -\nperft 1 14\nperft 2 191\n\n\n\
                    id xfen-03\nepd 2r5/8/8/8/8/8/6PP/k2KR3 w K -\nperft 1 17\n";
        let suite = parse_suite(text).expect("valid suite");
        assert_eq!(suite.format, SuiteFormat::Blocks);
        assert_eq!(suite.cases.len(), 2);
        assert_eq!(suite.cases[0].name, "pos-3");
        assert_eq!(suite.cases[0].line, 5);
        assert_eq!(suite.cases[0].expected, vec![(1, 14), (2, 191)]);
        assert_eq!(suite.cases[1].state.kind(), GameKind::Chess960, "king on d1 castling with e1 rook");
        assert!(suite.cases.iter().all(|c| c.check(None).iter().all(DepthCheck::ok)));
    }

    #[test]
    fn blocks_without_blank_lines_split_at_id() {
        let text = "id a\nepd 4k3/8/8/8/8/8/8/4K3 w - -\nperft 1 5\nid b\nepd 4k3/8/8/8/8/8/8/3K4 w - -\nperft 1 5\n";
        let suite = parse_suite(text).expect("valid suite");
        assert_eq!(suite.cases.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    }

    fn problem(text: &str) -> (usize, LineProblem) {
        match parse_suite(text) {
            Err(SuiteError::Line { line, problem }) => (line, problem),
            other => panic!("expected a line error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_line() {
        let (line, p) = problem("4k3/8/8/8/8/8/8/4K3 w - - ;D1 5\n4k3/8/8/8/8/8/8/4K3 x - - ;D1 5\n");
        assert_eq!(line, 2);
        assert!(matches!(p, LineProblem::Fen(_)));
        assert!(SuiteError::Line { line, problem: p }.to_string().starts_with("line 2: bad turn field"));

        let (line, p) = problem("\n4k3/8/8/8/8/8/8/4K3 w - - ;D1 five\n");
        assert_eq!(line, 2);
        assert!(matches!(p, LineProblem::BadCount { .. }), "{p}");
        assert!(matches!(problem("4k3/8/8/8/8/8/8/4K3 w - - ;X1 5\n").1, LineProblem::BadCount { .. }));
        assert!(matches!(problem("4k3/8/8/8/8/8/8/4K3 w - - ;D1 5 6\n").1, LineProblem::BadCount { .. }));
        assert!(matches!(problem("4k3/8/8/8/8/8/8/4K3 w - - ;D0 1\n").1, LineProblem::BadCount { .. }));
        assert_eq!(problem("4k3/8/8/8/8/8/8/4K3 w - - ;D1 5 ;D1 5\n").1, LineProblem::DuplicateDepth(1));
        assert!(matches!(problem("4k3/8/8/8/8/8/8/4K3 w - -\n").1, LineProblem::NoCounts(_)));

        assert_eq!(problem("id a\nperft 1 5\n"), (2, LineProblem::PerftBeforeEpd));
        assert_eq!(
            problem("id a\n\nid b\nepd 4k3/8/8/8/8/8/8/4K3 w - -\nperft 1 5\n"),
            (1, LineProblem::MissingEpd("a".into()))
        );
        assert_eq!(
            problem("epd 4k3/8/8/8/8/8/8/4K3 w - -\nepd 4k3/8/8/8/8/8/8/4K3 w - -\n"),
            (2, LineProblem::SecondEpd)
        );
        assert!(matches!(problem("id a\nepd 4k3/8/8/8/8/8/8/4K3 w - -\n\n").1, LineProblem::NoCounts(_)));
        assert!(matches!(problem("id a\nfen 4k3/8/8/8/8/8/8/4K3 w - -\n").1, LineProblem::UnknownLine(_)));
        assert!(matches!(
            problem("id a\nepd 4k3/8/8/8/8/8/8/4K3 w - -\nperft x 5\n").1,
            LineProblem::BadCount { .. }
        ));
        assert_eq!(parse_suite("# nothing\n\n").map(|s| s.cases.len()), Err(SuiteError::Empty));
    }
}
