//! The manifest: what a labels folder holds and how it was made (`manifest.json`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::DatagenError;
use super::run::LabelSettings;
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
    /// The first chain (seed draw) labelled for it.
    pub first_chain: u64,
    /// How many chains were labelled for it.
    pub chains: u64,
    /// Records in it.
    pub records: usize,
    /// Of which in the validation split.
    pub val: usize,
    /// Its size in bytes.
    pub bytes: u64,
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
    /// Whether the run reached its target number of positions.
    pub complete: bool,
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
