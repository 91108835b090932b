//! The MultiPV lines of a running search, as a GUI shows them: [`EngineLines::apply`] folds each `info`
//! line the engine prints into the current picture (the latest score, depth and principal variation of
//! every line), which is what an analysis panel renders.

use serde::{Deserialize, Serialize};

use super::info::{Info, Score};

/// One MultiPV line: its latest score and principal variation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineLine {
    /// Its MultiPV number (1 is the best line).
    pub multipv: u32,
    /// The depth it was reported at.
    pub depth: Option<u32>,
    /// The selective depth it was reported at.
    pub seldepth: Option<u32>,
    /// The score, from the side to move's point of view.
    pub score: Score,
    /// The principal variation in UCI notation.
    pub pv: Vec<String>,
}

/// Everything an analysis panel shows about a running search.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EngineLines {
    /// The lines, ordered by MultiPV number (best first).
    pub lines: Vec<EngineLine>,
    /// The deepest depth reported so far.
    pub depth: Option<u32>,
    /// Nodes searched (latest report).
    pub nodes: Option<u64>,
    /// Nodes per second (latest report).
    pub nps: Option<u64>,
    /// Milliseconds searched (latest report).
    pub time_ms: Option<u64>,
}

impl EngineLines {
    /// Folds one `info` line in. A line with a score and a PV replaces the line of its MultiPV number
    /// (`multipv 1` when it has none); lines numbered above `max_lines` are ignored. Counters (nodes, nps,
    /// time, depth) are taken from any line. Returns whether anything shown changed.
    pub fn apply(&mut self, info: &Info, max_lines: u32) -> bool {
        let mut changed = false;
        for (slot, value) in
            [(&mut self.nodes, info.nodes), (&mut self.nps, info.nps), (&mut self.time_ms, info.time_ms)]
        {
            if value.is_some() && *slot != value {
                *slot = value;
                changed = true;
            }
        }
        if let Some(d) = info.depth
            && self.depth.is_none_or(|old| d > old)
        {
            self.depth = Some(d);
            changed = true;
        }
        let multipv = info.multipv.unwrap_or(1).max(1);
        let (Some(score), false) = (info.score, info.pv.is_empty()) else { return changed };
        if multipv > max_lines.max(1) {
            return changed;
        }
        let line =
            EngineLine { multipv, depth: info.depth, seldepth: info.seldepth, score, pv: info.pv.clone() };
        match self.lines.binary_search_by_key(&multipv, |l| l.multipv) {
            Ok(i) if self.lines[i] == line => return changed,
            Ok(i) => self.lines[i] = line,
            Err(i) => self.lines.insert(i, line),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uci::info::parse_info;
    use crate::uci::{Bound, ScoreValue};

    fn fold(lines: &[&str], max: u32) -> EngineLines {
        let mut s = EngineLines::default();
        for l in lines {
            s.apply(&parse_info(l).expect("valid info line"), max);
        }
        s
    }

    #[test]
    fn stockfish_multipv_output_becomes_lines() {
        // As Stockfish 15 prints them for the start position with MultiPV 2.
        let s = fold(
            &[
                "info string NNUE evaluation using nn-ad9b42354671.nnue enabled",
                "info depth 1 seldepth 1 multipv 1 score cp 18 nodes 20 nps 10000 tbhits 0 time 2 pv e2e4",
                "info depth 1 seldepth 1 multipv 2 score cp 12 nodes 20 nps 10000 tbhits 0 time 2 pv d2d4",
                "info depth 10 seldepth 13 multipv 1 score cp 35 upperbound nodes 9000 nps 450000 time 20 pv e2e4 e7e5",
                "info depth 10 currmove g1f3 currmovenumber 3",
                "info depth 11 seldepth 14 multipv 2 score mate -3 nodes 12000 nps 460000 time 26 pv d2d4 d7d5 c2c4",
            ],
            2,
        );
        assert_eq!(s.lines.len(), 2);
        assert_eq!(s.lines[0].multipv, 1);
        assert_eq!(s.lines[0].pv, ["e2e4", "e7e5"]);
        assert_eq!(s.lines[0].score.value, ScoreValue::Cp(35));
        assert_eq!(s.lines[0].score.bound, Bound::Upper);
        assert_eq!(s.lines[0].depth, Some(10));
        assert_eq!(s.lines[1].score.value, ScoreValue::Mate(-3));
        assert_eq!(s.lines[1].seldepth, Some(14));
        assert_eq!((s.depth, s.nodes, s.nps, s.time_ms), (Some(11), Some(12000), Some(460000), Some(26)));
    }

    #[test]
    fn lines_beyond_the_multipv_count_and_scoreless_infos_add_no_line() {
        let s = fold(
            &[
                "info depth 5 multipv 3 score cp 1 pv a2a3",
                "info depth 5 score cp 9 nodes 5",
                "info depth 5 multipv 1 pv e2e4",
                "info depth 6 score cp 20 pv g1f3",
            ],
            2,
        );
        // Only the last line has a score and a PV within MultiPV 2; no `multipv` means line 1.
        assert_eq!(s.lines.len(), 1);
        assert_eq!(s.lines[0].pv, ["g1f3"]);
        assert_eq!(s.depth, Some(6));
        assert_eq!(s.nodes, Some(5));
    }

    #[test]
    fn apply_reports_whether_anything_changed() {
        let mut s = EngineLines::default();
        let info = parse_info("info depth 3 multipv 1 score cp 10 nodes 40 pv e2e4").expect("valid");
        assert!(s.apply(&info, 1));
        assert!(!s.apply(&info, 1));
        let shallower = parse_info("info depth 2 currmove e2e4").expect("valid");
        assert!(!s.apply(&shallower, 1));
        assert_eq!(s.depth, Some(3));
    }
}
