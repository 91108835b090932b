//! The league's settings file (`league.json` in the output folder): what a rerun must agree with to
//! resume — the openings, the rules, Stockfish's limits, and what each agent label stands for.

use std::collections::BTreeMap;
use std::path::Path;

use super::LeagueError;
use super::results::write_atomic;
use super::rules::Rules;

/// Stockfish agents' per-move limits (the first reached ends the search).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct StockfishLimits {
    /// Depth.
    pub depth: Option<u32>,
    /// Milliseconds.
    pub movetime_ms: Option<u64>,
    /// Nodes.
    pub nodes: Option<u64>,
}

impl StockfishLimits {
    /// The limits as the UCI client takes them (an unlimited setting becomes depth 10).
    pub fn search_limits(&self) -> crate::uci::SearchLimits {
        let mut l = crate::uci::SearchLimits {
            depth: self.depth,
            nodes: self.nodes,
            movetime: self.movetime_ms.map(std::time::Duration::from_millis),
            infinite: false,
        };
        if l == crate::uci::SearchLimits::default() {
            l.depth = Some(10);
        }
        l
    }

    /// In words.
    pub fn describe(&self) -> String {
        let l = self.search_limits();
        let mut parts = Vec::new();
        if let Some(d) = l.depth {
            parts.push(format!("depth {d}"));
        }
        if let Some(t) = l.movetime {
            parts.push(format!("{} ms", t.as_millis()));
        }
        if let Some(n) = l.nodes {
            parts.push(format!("{n} nodes"));
        }
        parts.join(", ")
    }
}

/// What `league.json` holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// The book the openings come from (as given).
    pub book: String,
    /// The chosen openings: (index in the book, FEN).
    pub openings: Vec<(usize, String)>,
    /// The adjudication rules.
    pub rules: Rules,
    /// Stockfish agents' limits.
    pub stockfish_limits: StockfishLimits,
    /// MCTS batch size.
    pub batch: usize,
    /// Each agent label ever played in this folder and what it stands for (kind, model and its
    /// fingerprint).
    pub agents: BTreeMap<String, String>,
}

impl Settings {
    /// Reads the settings file, `None` if there is none.
    pub fn load(path: &Path) -> Result<Option<Settings>, LeagueError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| LeagueError::Io {
                path: path.to_path_buf(),
                why: format!("not a league settings file: {e}"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LeagueError::io(path, &e)),
        }
    }

    /// Writes it atomically.
    pub fn save(&self, path: &Path) -> Result<(), LeagueError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| LeagueError::Io { path: path.to_path_buf(), why: e.to_string() })?;
        write_atomic(path, text.as_bytes())
    }

    /// Checks that `self` (this run's) may resume `old`, and returns the merged settings (the agents of
    /// both). The book's path may differ; its chosen positions may not.
    pub fn resume(&self, old: &Settings, path: &Path) -> Result<Settings, LeagueError> {
        let mismatch = |why: String| Err(LeagueError::Mismatch { path: path.to_path_buf(), why });
        if self.openings != old.openings {
            return mismatch(format!(
                "other openings: {} chosen now, {} before (same book, --openings and --seed?)",
                self.openings.len(),
                old.openings.len()
            ));
        }
        if self.rules != old.rules {
            return mismatch(format!("other rules: now {:?}, before {:?}", self.rules, old.rules));
        }
        if self.stockfish_limits != old.stockfish_limits {
            return mismatch(format!(
                "other Stockfish limits: now {}, before {}",
                self.stockfish_limits.describe(),
                old.stockfish_limits.describe()
            ));
        }
        if self.batch != old.batch {
            return mismatch(format!("other MCTS batch size: now {}, before {}", self.batch, old.batch));
        }
        let mut merged = old.clone();
        for (label, what) in &self.agents {
            match old.agents.get(label) {
                Some(before) if before != what => {
                    return mismatch(format!("{label} is now {what} but was {before}"));
                }
                _ => {
                    merged.agents.insert(label.clone(), what.clone());
                }
            }
        }
        Ok(merged)
    }
}

/// A short fingerprint of a file's bytes (FNV-1a, 64 bits, hex), to notice a model replaced in place.
pub fn fingerprint(path: &Path) -> Result<String, LeagueError> {
    let bytes = std::fs::read(path).map_err(|e| LeagueError::io(path, &e))?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Ok(format!("{h:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            book: "b.epd".into(),
            openings: vec![(3, "fen a".into()), (9, "fen b".into())],
            rules: Rules::default(),
            stockfish_limits: StockfishLimits { depth: Some(5), movetime_ms: None, nodes: None },
            batch: 16,
            agents: [("mav-max".to_owned(), "mav max, model x".to_owned())].into_iter().collect(),
        }
    }

    #[test]
    fn resume_accepts_new_agents_and_refuses_other_rules() {
        let old = settings();
        let mut now = settings();
        now.agents.insert("sf-skill0".into(), "stockfish skill 0".into());
        let merged = now.resume(&old, Path::new("league.json")).expect("compatible");
        assert_eq!(merged.agents.len(), 2);
        let mut other = settings();
        other.rules.max_plies = 10;
        assert!(matches!(other.resume(&old, Path::new("l")), Err(LeagueError::Mismatch { .. })));
        let mut other = settings();
        other.openings.pop();
        assert!(other.resume(&old, Path::new("l")).is_err());
        let mut other = settings();
        other.agents.insert("mav-max".into(), "mav max, model y".into());
        let e = other.resume(&old, Path::new("l")).expect_err("changed model");
        assert!(e.to_string().contains("model y"), "{e}");
        assert_eq!(StockfishLimits::default().describe(), "depth 10");
    }
}
