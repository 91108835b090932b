//! The manifest: what a labels folder holds and how it was made (`manifest.json`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::DatagenError;
use super::label_settings::LabelSettings;
use super::shard::write_atomic;

/// The manifest's file name inside the output folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The version of the record and manifest format.
pub const FORMAT_VERSION: u32 = 1;

/// One position source as used by a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The tag written in records.
    pub tag: String,
    /// Where it was read from.
    pub origin: String,
    /// Its weight in the mix.
    pub weight: f64,
    /// How many positions it holds.
    pub positions: usize,
}

/// One written shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// The file name inside the folder.
    pub file: String,
    /// The first chain (seed draw) labelled for it (the run's chain number, in a shard too).
    pub first_chain: u64,
    /// How many chains were labelled for it (in a shard `K/N`: `first_chain`, `first_chain + N`, …).
    pub chains: u64,
    /// Records in it.
    pub records: usize,
    /// Of which in the validation split.
    pub val: usize,
    /// Its size in bytes.
    pub bytes: u64,
    /// Only in a sharded run ([`Manifest::shard`]): for each chain labelled for this file, in order, how
    /// many of its records are in the file (the file holds whole chains, one after the other). This is
    /// what lets `datagen merge` put the records of every shard back into the single run's chain order.
    /// Absent (empty) in ordinary runs, so their manifests read and write as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain_records: Vec<u32>,
}

/// One machine's part of a labels run split over several (`datagen labels --shard K/N`).
///
/// A run's positions come in chains (see [`super::run`]); shard `index` of `count` labels the chains
/// `c` with `c mod count == index`, in order, and keeps whole chains until it holds `target` records
/// (deduplicated within the shard). `datagen merge` ([`super::merge`]) puts the shards' chains back in
/// order and gives exactly the records of the single run with the same settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSpec {
    /// K: which shard, from 0.
    pub index: u64,
    /// N: the number of shards.
    pub count: u64,
    /// The records at which this shard stops (whole chains, so it may end a little above). Not part of
    /// what decides the records: a shard may be resumed with a larger target.
    pub target: usize,
}

impl ShardSpec {
    /// Shard `index` of `count` of a run of `positions` records, with the default target
    /// ([`ShardSpec::default_target`]).
    pub fn new(index: u64, count: u64, positions: usize) -> Result<ShardSpec, DatagenError> {
        let spec = ShardSpec { index, count, target: Self::default_target(positions, count) };
        spec.check()?;
        Ok(spec)
    }

    /// The default target of a shard of `count` in a run of `positions`: its even share plus a quarter,
    /// plus 16, i.e. `ceil(positions · 1.25 / count) + 16`. The margin covers the uneven spread of
    /// records over shards and the positions that are new to one shard but duplicates across shards (a
    /// shard keeps those; the merge drops them). `datagen merge` says when a shard fell short.
    pub fn default_target(positions: usize, count: u64) -> usize {
        let count = count.max(1) as u128;
        let share = (positions as u128 * 5).div_ceil(4 * count);
        usize::try_from(share).unwrap_or(usize::MAX).saturating_add(16)
    }

    /// Parses `K/N` (e.g. `0/4`) with the default target for `positions`.
    pub fn parse(text: &str, positions: usize) -> Result<ShardSpec, DatagenError> {
        let bad = || {
            DatagenError::Settings(format!("--shard must be K/N with 0 <= K < N (e.g. 0/4), not {text:?}"))
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u64 = k.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        ShardSpec::new(k, n, positions).map_err(|_| bad())
    }

    /// Checks `index < count` and a target of at least 1.
    pub fn check(&self) -> Result<(), DatagenError> {
        if self.count == 0 || self.index >= self.count {
            return Err(DatagenError::Settings(format!(
                "shard {}/{} does not exist: K must be below N",
                self.index, self.count
            )));
        }
        if self.target == 0 {
            return Err(DatagenError::Settings("a shard's target must be at least 1 record".into()));
        }
        Ok(())
    }

    /// The run's chain number of this shard's `local`-th chain: `index + local · count`.
    pub fn chain(&self, local: u64) -> u64 {
        self.index.saturating_add(local.saturating_mul(self.count))
    }

    /// `K/N`, as the command line writes it.
    pub fn name(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// The description of a labels folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`].
    pub format: u32,
    /// The settings that decide the records (the thread count is not one of them).
    pub settings: LabelSettings,
    /// The labelling engine's name (`id name`).
    pub engine: String,
    /// The position sources.
    pub sources: Vec<SourceInfo>,
    /// The shards written so far, in order.
    pub shards: Vec<ShardInfo>,
    /// Records in all shards.
    pub records: usize,
    /// Whether the run reached its target number of positions (a shard: its [`ShardSpec::target`]).
    pub complete: bool,
    /// For one shard of a run split over machines (`datagen labels --shard K/N`): which shard. Then
    /// `settings.positions` is the whole run's target, `records` this shard's, and every [`ShardInfo`]
    /// counts the chains `first_chain`, `first_chain + N`, … with their [`ShardInfo::chain_records`].
    /// Absent for ordinary runs, so their manifests read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardSpec>,
    /// For a label set joined by `datagen merge` from ordinary folders of different seeds: the folders it
    /// was joined from (it cannot be resumed; resume those and merge again). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined: Vec<JoinedInput>,
}

/// One ordinary label folder a joined label set was made from ([`Manifest::joined`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinedInput {
    /// The folder, as given to `datagen merge`.
    pub dir: String,
    /// Its run's seed.
    pub seed: u64,
    /// Its records.
    pub records: usize,
    /// Of which kept (the rest were already in an earlier folder).
    pub kept: usize,
}

impl Manifest {
    /// Reads `dir/manifest.json` if it exists.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, DatagenError> {
        let path = dir.join(MANIFEST_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| DatagenError::Corrupt { path, reason: format!("not a labels manifest: {e}") }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DatagenError::io(path, e)),
        }
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), DatagenError> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| DatagenError::Settings(format!("the manifest cannot be written as JSON: {e}")))?;
        text.push('\n');
        write_atomic(&dir.join(MANIFEST_FILE), text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_manifests_read_and_write_back_without_the_shard_fields() {
        let data = crate::checkout_dir().join("training/data");
        let mut checked = 0;
        for entry in std::fs::read_dir(&data).expect("training/data exists").flatten() {
            let path = entry.path().join(MANIFEST_FILE);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let m: Manifest = serde_json::from_str(&text).expect("an existing manifest reads");
            assert!(m.shard.is_none() && m.joined.is_empty());
            assert!(m.shards.iter().all(|s| s.chain_records.is_empty()));
            let back = serde_json::to_string_pretty(&m).expect("writes");
            for key in ["\"shard\"", "\"joined\"", "\"chain_records\""] {
                assert!(!back.contains(key), "{} is written back without {key}", path.display());
            }
            assert_eq!(serde_json::from_str::<Manifest>(&back).expect("reads back"), m);
            checked += 1;
        }
        assert!(checked > 0, "no label set under {}", data.display());
    }
}
