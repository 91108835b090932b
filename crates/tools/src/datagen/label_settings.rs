//! What decides a label run: how long the labeller searches ([`Limit`]) and the run's settings
//! ([`LabelSettings`]), shared by the run, its manifest and the Connect Four / Hex runs.

use serde::{Deserialize, Serialize};

use super::DatagenError;
use super::game_label::GameLabelSettings;
use super::tree::{MAX_SEARCH_BREADTH, MAX_SEARCH_DEPTH};
use crate::uci::SearchLimits;

/// How long the labeller searches each position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// A fixed depth in plies.
    Depth(u32),
    /// A fixed node count.
    Nodes(u64),
    /// No engine: the game's own solver labels (Connect Four, Hex; see [`LabelSettings::game`]).
    Solver,
}

impl Limit {
    /// The UCI search limits (`None` for [`Limit::Solver`], which no engine searches).
    pub fn search_limits(self) -> Option<SearchLimits> {
        match self {
            Limit::Depth(d) => Some(SearchLimits::depth(d)),
            Limit::Nodes(n) => Some(SearchLimits::nodes(n)),
            Limit::Solver => None,
        }
    }
}

/// Everything that decides a run's records. Two runs with equal settings, sources and labeller write the
/// same records in the same order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSettings {
    /// Records to write in total (after deduplication).
    pub positions: usize,
    /// The search limit per position.
    pub limit: Limit,
    /// Plies to play on from each seed (0 = label the seeds only).
    pub continuations: u32,
    /// The softmax temperature for continuation moves (on win probabilities; ≤ 0 = always the best).
    pub temperature: f64,
    /// The random seed.
    pub seed: u64,
    /// The share of positions (by hash) put in the validation split.
    pub val_fraction: f64,
    /// The most chains (seed draws) labelled per shard.
    pub chains_per_shard: u64,
    /// The engine's hash size in MiB.
    pub hash_mb: u32,
    /// The share of chain positions (by hash and seed) that root a search tree (0 = none; see
    /// [`super::tree`]). Absent from manifests written before search trees existed, which read as 0.
    #[serde(default)]
    pub search_share: f64,
    /// Moves expanded per tree node.
    #[serde(default = "default_search_breadth")]
    pub search_breadth: u32,
    /// Plies a tree reaches below its root.
    #[serde(default = "default_search_depth")]
    pub search_depth: u32,
    /// For Connect Four and Hex labels, the game and how its positions are drawn and solved (then
    /// `limit` is [`Limit::Solver`]); absent for chess, so chess manifests read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameLabelSettings>,
}

/// The default of [`LabelSettings::search_breadth`] (also the CLI's).
pub const DEFAULT_SEARCH_BREADTH: u32 = 3;
/// The default of [`LabelSettings::search_depth`] (also the CLI's).
pub const DEFAULT_SEARCH_DEPTH: u32 = 2;

fn default_search_breadth() -> u32 {
    DEFAULT_SEARCH_BREADTH
}

fn default_search_depth() -> u32 {
    DEFAULT_SEARCH_DEPTH
}

impl LabelSettings {
    /// Checks the settings before a run: counts at least 1, shares in [0, 1], tree shapes in range, a
    /// solver limit for Connect Four and Hex and an engine limit for chess.
    pub(super) fn check(&self) -> Result<(), DatagenError> {
        let bad = |m: String| Err(DatagenError::Settings(m));
        if self.positions == 0 {
            return bad("--positions must be at least 1".into());
        }
        if self.chains_per_shard == 0 {
            return bad("chains per shard must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.val_fraction) {
            return bad(format!(
                "the validation fraction must be between 0 and 1, not {}",
                self.val_fraction
            ));
        }
        if !(0.0..=1.0).contains(&self.search_share) {
            return bad(format!("--search-share must be between 0 and 1, not {}", self.search_share));
        }
        if !(2..=MAX_SEARCH_BREADTH).contains(&self.search_breadth) {
            return bad(format!(
                "--search-breadth must be between 2 and {MAX_SEARCH_BREADTH}, not {}",
                self.search_breadth
            ));
        }
        if !(1..=MAX_SEARCH_DEPTH).contains(&self.search_depth) {
            return bad(format!(
                "--search-depth must be between 1 and {MAX_SEARCH_DEPTH}, not {}",
                self.search_depth
            ));
        }
        match (&self.game, self.limit) {
            (Some(g), Limit::Solver) => {
                if self.search_share > 0.0 {
                    return bad("search trees (--search-share) are labelled for chess only".into());
                }
                g.check()?;
            }
            (Some(_), _) => {
                return bad("Connect Four and Hex are labelled by their solvers, not an engine".into());
            }
            (None, Limit::Solver) => return bad("chess needs an engine limit (--depth or --nodes)".into()),
            (None, _) => {}
        }
        if !self.temperature.is_finite() {
            return bad(format!("the temperature must be a finite number, not {}", self.temperature));
        }
        match self.limit {
            Limit::Depth(0) => bad("--depth must be at least 1".into()),
            Limit::Nodes(0) => bad("--nodes must be at least 1".into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_written_before_search_trees_read_as_no_trees_with_the_cli_defaults() {
        let old = r#"{"positions":10,"limit":{"depth":6},"continuations":6,"temperature":0.25,"seed":1,
            "val_fraction":0.05,"chains_per_shard":64,"hash_mb":16}"#;
        let s: LabelSettings = serde_json::from_str(old).expect("old settings read");
        assert_eq!(s.search_share, 0.0);
        assert_eq!((s.search_breadth, s.search_depth), (DEFAULT_SEARCH_BREADTH, DEFAULT_SEARCH_DEPTH));
        assert!(s.check().is_ok());
        let bad = |f: &dyn Fn(&mut LabelSettings)| {
            let mut b = s.clone();
            f(&mut b);
            matches!(b.check(), Err(DatagenError::Settings(_)))
        };
        assert!(bad(&|b| b.search_share = 1.5));
        assert!(bad(&|b| b.search_breadth = 1));
        assert!(bad(&|b| b.search_breadth = MAX_SEARCH_BREADTH + 1));
        assert!(bad(&|b| b.search_depth = 0));
        assert!(bad(&|b| b.search_depth = MAX_SEARCH_DEPTH + 1));
    }
}
