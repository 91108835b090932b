//! The `info` lines an engine prints while it searches, parsed into [`Info`].
//!
//! Every field of the UCI specification is read; fields this parser does not know are kept, with the
//! words that follow them up to the next known field, in [`Info::unknown`], so newer engines do not break
//! it. A known field with a bad value (`depth x`) is an error.

use serde::{Deserialize, Serialize};

use super::UciError;

/// Whether a score is exact or only a bound (from an aspiration-window fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The score is exact.
    #[default]
    Exact,
    /// The true score is at least this (`lowerbound`).
    Lower,
    /// The true score is at most this (`upperbound`).
    Upper,
}

/// A score's value, always from the point of view of the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreValue {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (not plies); negative when the side to move is getting mated.
    Mate(i32),
}

impl ScoreValue {
    /// The win probability for the side to move: the Lichess formula
    /// 0.5 + 0.5·(2/(1+exp(−0.00368208·cp)) − 1) for centipawns; 1 for a mate it gives, 0 for a mate it
    /// gets (`mate 0`, already mated, counts as getting mated).
    pub fn win_probability(self) -> f64 {
        self.engine_score().win_prob()
    }

    /// The same score as the MAV protocol's type (which owns the win-probability formula).
    pub fn engine_score(self) -> crate::mav::buckets::EngineScore {
        match self {
            ScoreValue::Cp(cp) => crate::mav::buckets::EngineScore::Cp(cp),
            ScoreValue::Mate(m) => crate::mav::buckets::EngineScore::Mate(m),
        }
    }
}

/// A score with its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Score {
    /// Centipawns or mate distance.
    pub value: ScoreValue,
    /// Exact or a bound.
    pub bound: Bound,
}

/// One parsed `info` line. Fields the line did not contain are `None` or empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Info {
    /// Search depth in plies.
    pub depth: Option<u32>,
    /// Selective search depth in plies.
    pub seldepth: Option<u32>,
    /// Which of the MultiPV lines this is (1 = best).
    pub multipv: Option<u32>,
    /// The score of this line.
    pub score: Option<Score>,
    /// Win/draw/loss per mille (`wdl w d l`, when `UCI_ShowWDL` is on).
    pub wdl: Option<[u32; 3]>,
    /// Nodes searched.
    pub nodes: Option<u64>,
    /// Nodes per second.
    pub nps: Option<u64>,
    /// Search time in milliseconds.
    pub time_ms: Option<u64>,
    /// How full the hash table is, per mille.
    pub hashfull: Option<u32>,
    /// Endgame tablebase hits.
    pub tbhits: Option<u64>,
    /// CPU usage per mille.
    pub cpuload: Option<u32>,
    /// The root move currently searched.
    pub currmove: Option<String>,
    /// Its number in the root move list (from 1).
    pub currmovenumber: Option<u32>,
    /// The principal variation, in UCI move notation.
    pub pv: Vec<String>,
    /// `refutation`: a move followed by the line refuting it.
    pub refutation: Vec<String>,
    /// `currline`: the CPU number (if given) and the line it searches.
    pub currline: Option<(Option<u32>, Vec<String>)>,
    /// Free text after `string` (the rest of the line).
    pub string: Option<String>,
    /// Fields this parser does not know: the keyword and the words after it up to the next known field.
    pub unknown: Vec<(String, Vec<String>)>,
}

const KEYWORDS: &[&str] = &[
    "depth",
    "seldepth",
    "multipv",
    "score",
    "wdl",
    "nodes",
    "nps",
    "time",
    "hashfull",
    "tbhits",
    "sbhits",
    "cpuload",
    "currmove",
    "currmovenumber",
    "pv",
    "refutation",
    "currline",
    "string",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

struct Words<'a> {
    line: &'a str,
    words: Vec<&'a str>,
    at: usize,
}

impl<'a> Words<'a> {
    fn malformed(&self, reason: String) -> UciError {
        UciError::Malformed { line: self.line.to_owned(), reason }
    }

    fn next(&mut self) -> Option<&'a str> {
        let w = self.words.get(self.at).copied();
        self.at += 1;
        w
    }

    fn peek(&self) -> Option<&'a str> {
        self.words.get(self.at).copied()
    }

    fn number<T: std::str::FromStr>(&mut self, field: &str) -> Result<T, UciError> {
        match self.next() {
            Some(w) => w.parse().map_err(|_| self.malformed(format!("`{field}` needs a number, got {w:?}"))),
            None => Err(self.malformed(format!("`{field}` has no value"))),
        }
    }

    fn word(&mut self, field: &str) -> Result<&'a str, UciError> {
        self.next().ok_or_else(|| self.malformed(format!("`{field}` has no value")))
    }

    /// Words up to the next known keyword.
    fn until_keyword(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(w) = self.peek() {
            if is_keyword(w) {
                break;
            }
            out.push(w.to_owned());
            self.at += 1;
        }
        out
    }
}

/// Parses one `info …` line (the leading `info` is required).
pub fn parse_info(line: &str) -> Result<Info, UciError> {
    let mut w = Words { line, words: line.split_whitespace().collect(), at: 0 };
    if w.next() != Some("info") {
        return Err(w.malformed("an info line must start with `info`".into()));
    }
    let mut info = Info::default();
    while let Some(key) = w.next() {
        match key {
            "depth" => info.depth = Some(w.number(key)?),
            "seldepth" => info.seldepth = Some(w.number(key)?),
            "multipv" => info.multipv = Some(w.number(key)?),
            "nodes" => info.nodes = Some(w.number(key)?),
            "nps" => info.nps = Some(w.number(key)?),
            "time" => info.time_ms = Some(w.number(key)?),
            "hashfull" => info.hashfull = Some(w.number(key)?),
            "tbhits" => info.tbhits = Some(w.number(key)?),
            "cpuload" => info.cpuload = Some(w.number(key)?),
            "currmovenumber" => info.currmovenumber = Some(w.number(key)?),
            "currmove" => info.currmove = Some(w.word(key)?.to_owned()),
            "wdl" => info.wdl = Some([w.number(key)?, w.number(key)?, w.number(key)?]),
            "score" => {
                let value = match w.word(key)? {
                    "cp" => ScoreValue::Cp(w.number("score cp")?),
                    "mate" => ScoreValue::Mate(w.number("score mate")?),
                    other => {
                        return Err(
                            w.malformed(format!("`score` must be followed by cp or mate, got {other:?}"))
                        );
                    }
                };
                let bound = match w.peek() {
                    Some("lowerbound") => Bound::Lower,
                    Some("upperbound") => Bound::Upper,
                    _ => Bound::Exact,
                };
                if bound != Bound::Exact {
                    w.at += 1;
                }
                info.score = Some(Score { value, bound });
            }
            "pv" => info.pv = w.until_keyword(),
            "refutation" => info.refutation = w.until_keyword(),
            "currline" => {
                let mut words = w.until_keyword();
                let cpu = match words.first().map(|s| s.parse::<u32>()) {
                    Some(Ok(n)) => {
                        words.remove(0);
                        Some(n)
                    }
                    _ => None,
                };
                info.currline = Some((cpu, words));
            }
            "string" => {
                let rest: Vec<&str> = w.words[w.at..].to_vec();
                info.string = Some(rest.join(" "));
                w.at = w.words.len();
            }
            other => {
                let words = w.until_keyword();
                info.unknown.push((other.to_owned(), words));
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stockfish_multipv_line() {
        let line = "info depth 12 seldepth 17 multipv 2 score cp -31 nodes 153220 nps 1030012 hashfull 56 \
                    tbhits 0 time 148 pv e7e5 g1f3 b8c6 f1b5";
        let i = parse_info(line).expect("valid");
        assert_eq!(i.depth, Some(12));
        assert_eq!(i.seldepth, Some(17));
        assert_eq!(i.multipv, Some(2));
        assert_eq!(i.score, Some(Score { value: ScoreValue::Cp(-31), bound: Bound::Exact }));
        assert_eq!(i.nodes, Some(153220));
        assert_eq!(i.nps, Some(1030012));
        assert_eq!(i.hashfull, Some(56));
        assert_eq!(i.tbhits, Some(0));
        assert_eq!(i.time_ms, Some(148));
        assert_eq!(i.pv, ["e7e5", "g1f3", "b8c6", "f1b5"]);
        assert!(i.unknown.is_empty());
    }

    #[test]
    fn bounds_mates_wdl_and_currmove() {
        let i = parse_info(
            "info depth 20 seldepth 28 multipv 1 score cp 35 lowerbound wdl 120 860 20 nodes 5 pv d2d4",
        )
        .expect("valid");
        assert_eq!(i.score, Some(Score { value: ScoreValue::Cp(35), bound: Bound::Lower }));
        assert_eq!(i.wdl, Some([120, 860, 20]));
        let i = parse_info("info depth 9 score mate -3 upperbound nodes 100 pv e1e2 h4e4").expect("valid");
        assert_eq!(i.score, Some(Score { value: ScoreValue::Mate(-3), bound: Bound::Upper }));
        let i = parse_info("info depth 0 score mate 0").expect("valid");
        assert_eq!(i.score.map(|s| s.value), Some(ScoreValue::Mate(0)));
        let i = parse_info("info depth 24 currmove g1f3 currmovenumber 3").expect("valid");
        assert_eq!((i.currmove.as_deref(), i.currmovenumber), (Some("g1f3"), Some(3)));
        assert!(i.pv.is_empty());
    }

    #[test]
    fn strings_unknown_fields_and_lines() {
        let i = parse_info("info string NNUE evaluation using nn-ad9b42354671.nnue enabled").expect("valid");
        assert_eq!(i.string.as_deref(), Some("NNUE evaluation using nn-ad9b42354671.nnue enabled"));
        let i = parse_info(
            "info depth 3 ebf 1.9 movesleft 40 nodes 10 refutation d1h5 g6h5 currline 1 e2e4 e7e5",
        )
        .expect("unknown fields are tolerated");
        assert_eq!(i.depth, Some(3));
        assert_eq!(i.nodes, Some(10));
        // An unknown keyword keeps every word up to the next known one (it cannot know its own arity).
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(i.unknown, vec![("ebf".to_owned(), words(&["1.9", "movesleft", "40"]))]);
        assert_eq!(i.refutation, ["d1h5", "g6h5"]);
        assert_eq!(i.currline, Some((Some(1), vec!["e2e4".to_owned(), "e7e5".to_owned()])));
    }

    #[test]
    fn malformed_values_are_errors() {
        for bad in [
            "info depth x",
            "info score cp",
            "info score wdl 1",
            "info nodes -5",
            "bestmove e2e4",
            "info time",
        ] {
            let e = parse_info(bad).expect_err(bad);
            assert!(matches!(e, UciError::Malformed { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn lichess_win_probability() {
        assert!((ScoreValue::Cp(0).win_probability() - 0.5).abs() < 1e-12);
        let p = ScoreValue::Cp(100).win_probability();
        assert!((p - 0.5910).abs() < 1e-3, "{p}");
        assert!((ScoreValue::Cp(-100).win_probability() - (1.0 - p)).abs() < 1e-12);
        assert_eq!(ScoreValue::Mate(2).win_probability(), 1.0);
        assert_eq!(ScoreValue::Mate(-1).win_probability(), 0.0);
    }
}
