//! `mavboard datagen merge`: label folders in, one deduplicated label folder out.
//!
//! **Shards of one run** (`datagen labels --shard K/N`, see [`super::run`] for why a run is split by
//! chain): every shard `0/N` … `N-1/N` must be there, made with the same format, settings, engine and
//! sources (the first field that differs is named). The merge replays the single run's driver: chains in
//! order, each from its shard (`chain mod N`), blocks of `chains_per_shard` chains (fewer near the end),
//! positions deduplicated by hash across shards, stopping at `positions` records. The files and manifest
//! it writes are those the single run with the same settings writes, byte for byte, so the result reads,
//! renders and resumes as an ordinary label folder. A shard that stopped before a chain the merge needs is
//! an error naming it and a `--shard-target` to resume it with.
//!
//! **Ordinary label folders** (no `--shard`): joined in the order given, each position kept where it
//! first occurs (so `render` of the result sees no duplicate, unlike `render` of several folders). They
//! must agree in everything but `--seed`, `--positions` and `--shard-chains` (which decide which
//! positions are drawn, not what a label means or which split a position is in). Each input file becomes
//! one output file without the positions already written (none when nothing is left); the manifest
//! lists the inputs ([`super::manifest::Manifest::joined`]) and such a folder cannot be resumed.
//!
//! Merging writes into a new or empty folder; on an error the files it wrote are removed again.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::DatagenError;
use super::manifest::{JoinedInput, MANIFEST_FILE, Manifest, ShardInfo, ShardSpec};
use super::record::{LabelRecord, Split};
use super::run::{check_sharded_file, record_hash, source_key};
use super::shard::{read_shard, shard_file_name, write_shard};

/// What a merge did.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeSummary {
    /// The manifest written.
    pub manifest: Manifest,
    /// Whether the inputs were the shards of one run (else ordinary folders joined).
    pub sharded: bool,
    /// Records read from the inputs (for shards: from the chains the merge took).
    pub read: usize,
    /// Records left out as duplicates of earlier ones (in another shard or folder).
    pub duplicates: usize,
}

/// Merges the label folders `inputs` into the new folder `out` (see the module documentation).
pub fn merge_label_sets(inputs: &[PathBuf], out: &Path) -> Result<MergeSummary, DatagenError> {
    let Some(first_dir) = inputs.first() else {
        return Err(DatagenError::Settings("datagen merge needs at least one label folder".into()));
    };
    let mut manifests = Vec::with_capacity(inputs.len());
    for dir in inputs {
        let m = Manifest::load(dir)?.ok_or_else(|| DatagenError::NoManifest { dir: dir.clone() })?;
        manifests.push(m);
    }
    let sharded = manifests[0].shard.is_some();
    for (dir, m) in inputs.iter().zip(&manifests) {
        if m.shard.is_some() != sharded {
            return Err(DatagenError::Settings(format!(
                "{} is {} and {} is {}: merge the shards of one run, or ordinary label folders",
                first_dir.display(),
                if sharded { "a shard" } else { "not a shard" },
                dir.display(),
                if sharded { "not" } else { "one" }
            )));
        }
        let (a, b) = (identity(&manifests[0], sharded), identity(m, sharded));
        if let Some(difference) = first_difference(&a, &b, "") {
            return Err(DatagenError::MergeMismatch {
                first: first_dir.clone(),
                other: dir.clone(),
                difference,
            });
        }
    }
    prepare_out(out)?;
    let mut written = Vec::new();
    let result = if sharded {
        merge_shards(inputs, &manifests, out, &mut written)
    } else {
        join_folders(inputs, &manifests, out, &mut written)
    };
    match result {
        Ok(summary) => Ok(summary),
        Err(e) => {
            // Leave no half-merged folder behind: remove what this merge wrote.
            for file in written {
                let _ = std::fs::remove_file(out.join(file));
            }
            Err(e)
        }
    }
}

/// What must agree between the inputs of a merge, as JSON (for naming the first difference).
fn identity(m: &Manifest, sharded: bool) -> Value {
    let mut settings = serde_json::to_value(&m.settings).unwrap_or(Value::Null);
    if !sharded && let Value::Object(map) = &mut settings {
        for free in ["seed", "positions", "chains_per_shard"] {
            map.remove(free);
        }
    }
    serde_json::json!({
        "format": m.format,
        "settings": settings,
        "engine": m.engine,
        "sources": source_key(&m.sources),
        "shards": m.shard.map(|s| s.count),
    })
}

/// The first field where `a` and `b` differ, as `path: A vs B`.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                first_difference(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), &sub)
            })
        }
        _ if a == b => None,
        _ => Some(format!("{path}: {a} vs {b}")),
    }
}

/// Creates `out`, refusing one that holds anything.
fn prepare_out(out: &Path) -> Result<(), DatagenError> {
    std::fs::create_dir_all(out).map_err(|e| DatagenError::io(out, e))?;
    let mut entries = std::fs::read_dir(out).map_err(|e| DatagenError::io(out, e))?;
    if entries.next().is_some() {
        return Err(DatagenError::OutNotEmpty { dir: out.to_path_buf() });
    }
    Ok(())
}

/// Writes one output file and its manifest entry.
fn write_file(
    out: &Path,
    manifest: &mut Manifest,
    written: &mut Vec<String>,
    first_chain: u64,
    chains: u64,
    records: &[LabelRecord],
) -> Result<(), DatagenError> {
    let index = manifest.shards.len();
    let file = shard_file_name(index);
    written.push(file.clone());
    let bytes = write_shard(out, index, records)?;
    manifest.shards.push(ShardInfo {
        file,
        first_chain,
        chains,
        records: records.len(),
        val: records.iter().filter(|r| r.split == Split::Val).count(),
        bytes,
        chain_records: Vec::new(),
    });
    manifest.records += records.len();
    Ok(())
}

/// Reads and checks one file of a label folder.
fn read_file(dir: &Path, info: &ShardInfo) -> Result<(PathBuf, Vec<LabelRecord>), DatagenError> {
    let path = dir.join(&info.file);
    let records = read_shard(&path)?;
    if records.len() != info.records {
        return Err(DatagenError::Corrupt {
            path,
            reason: format!("holds {} records, the manifest says {}", records.len(), info.records),
        });
    }
    Ok((path, records))
}

/// One shard's chains, read a file at a time, handed out in chain order.
struct ShardReader<'a> {
    dir: &'a Path,
    spec: ShardSpec,
    files: std::slice::Iter<'a, ShardInfo>,
    /// Chains of the files read and not yet taken: (chain, its file, its records).
    pending: VecDeque<(u64, PathBuf, Vec<LabelRecord>)>,
    /// The first of its chains it did not label.
    reached: u64,
    /// Its records.
    records: usize,
}

impl<'a> ShardReader<'a> {
    fn new(dir: &'a Path, m: &'a Manifest, spec: ShardSpec) -> Result<Self, DatagenError> {
        for info in &m.shards {
            check_sharded_file(&dir.join(&info.file), info, &spec)?;
        }
        let reached = m
            .shards
            .last()
            .map_or(spec.index, |s| s.first_chain.saturating_add(s.chains.saturating_mul(spec.count)));
        Ok(ShardReader {
            dir,
            spec,
            files: m.shards.iter(),
            pending: VecDeque::new(),
            reached,
            records: m.records,
        })
    }

    /// The records chain `chain` (one of this shard's, asked for in increasing order) left in the shard,
    /// with the file they are in; `None` when the shard stopped before it.
    fn take(&mut self, chain: u64) -> Result<Option<(PathBuf, Vec<LabelRecord>)>, DatagenError> {
        if chain >= self.reached {
            return Ok(None);
        }
        loop {
            match self.pending.front() {
                Some((c, _, _)) if *c < chain => {
                    self.pending.pop_front();
                }
                Some((c, _, _)) if *c == chain => {
                    return Ok(self.pending.pop_front().map(|(_, path, records)| (path, records)));
                }
                // Labelled, but nothing in it was new to the shard.
                Some(_) => return Ok(Some((PathBuf::new(), Vec::new()))),
                None => {
                    let Some(info) = self.files.next() else {
                        return Ok(Some((PathBuf::new(), Vec::new())));
                    };
                    let (path, records) = read_file(self.dir, info)?;
                    let mut records = records.into_iter();
                    for (i, &n) in info.chain_records.iter().enumerate() {
                        let c = info.first_chain + i as u64 * self.spec.count;
                        self.pending.push_back((
                            c,
                            path.clone(),
                            records.by_ref().take(n as usize).collect(),
                        ));
                    }
                }
            }
        }
    }
}

/// After this many blocks of chains in a row without a new position, the single run gives up (the same
/// rule as the driver's).
const MAX_FRUITLESS_SHARDS: usize = 20;

fn merge_shards(
    inputs: &[PathBuf],
    manifests: &[Manifest],
    out: &Path,
    written: &mut Vec<String>,
) -> Result<MergeSummary, DatagenError> {
    let first = &manifests[0];
    let count = first.shard.map_or(1, |s| s.count);
    let mut slots: Vec<Option<ShardReader>> = (0..count).map(|_| None).collect();
    for (dir, m) in inputs.iter().zip(manifests) {
        let Some(spec) = m.shard else { continue };
        let slot = usize::try_from(spec.index).ok().and_then(|i| slots.get_mut(i));
        let Some(slot) = slot else {
            return Err(DatagenError::Settings(format!(
                "{}: shard {} does not exist",
                dir.display(),
                spec.name()
            )));
        };
        if let Some(other) = slot {
            return Err(DatagenError::Settings(format!(
                "{} and {} are both shard {}: give each shard once",
                other.dir.display(),
                dir.display(),
                spec.name()
            )));
        }
        *slot = Some(ShardReader::new(dir, m, spec)?);
    }
    let missing: Vec<String> =
        (0..count).filter(|&k| slots[k as usize].is_none()).map(|k| format!("{k}/{count}")).collect();
    if !missing.is_empty() {
        return Err(DatagenError::ShardMissing {
            missing: missing.join(", "),
            count,
            first: inputs[0].clone(),
        });
    }
    let mut readers: Vec<ShardReader> = slots.into_iter().flatten().collect();

    let settings = &first.settings;
    let mut manifest = Manifest {
        format: first.format,
        settings: settings.clone(),
        engine: first.engine.clone(),
        sources: first.sources.clone(),
        shards: Vec::new(),
        records: 0,
        complete: false,
        shard: None,
        joined: Vec::new(),
    };
    let target = settings.positions;
    let mut seen: HashSet<u64> = HashSet::new();
    let (mut read, mut duplicates, mut fruitless, mut next_chain) = (0, 0, 0, 0u64);
    // The driver's loop (super::run::drive), with the chains read from the shards instead of labelled.
    while manifest.records < target {
        let remaining = (target - manifest.records) as u64;
        let chains = settings.chains_per_shard.min(remaining).max(1);
        let first_chain = next_chain;
        let mut records = Vec::new();
        'chains: for chain in first_chain..first_chain + chains {
            let reader = &mut readers[(chain % count) as usize];
            let Some((path, labelled)) = reader.take(chain)? else {
                return Err(short(reader, chain, manifest.records + records.len(), target));
            };
            read += labelled.len();
            for record in labelled {
                if manifest.records + records.len() >= target {
                    break 'chains;
                }
                if seen.insert(record_hash(&record, &path)?) {
                    records.push(record);
                } else {
                    duplicates += 1;
                }
            }
        }
        next_chain = first_chain + chains;
        if records.is_empty() {
            fruitless += 1;
            if fruitless >= MAX_FRUITLESS_SHARDS {
                return Err(DatagenError::Settings(format!(
                    "{} chains in a row produced no new position: the single run would stop here too, its sources \
                     exhausted at {} records (label the shards with fewer --positions or more sources)",
                    MAX_FRUITLESS_SHARDS as u64 * chains,
                    manifest.records
                )));
            }
            continue;
        }
        fruitless = 0;
        write_file(out, &mut manifest, written, first_chain, chains, &records)?;
    }
    manifest.complete = true;
    written.push(MANIFEST_FILE.into());
    manifest.save(out)?;
    Ok(MergeSummary { manifest, sharded: true, read, duplicates })
}

/// The error for a shard that stopped before `chain`, when the merge holds `merged` of `target` records.
fn short(reader: &ShardReader, chain: u64, merged: usize, target: usize) -> DatagenError {
    let spec = reader.spec;
    // The merge will need about chain · target / merged chains; this shard about 1/N of them, at the
    // records per chain it had so far, with a tenth more.
    let needed_chains = (chain as f64 + 1.0) * target as f64 / merged.max(1) as f64;
    let had_chains = ((reader.reached.saturating_sub(spec.index)) / spec.count).max(1) as f64;
    let per_chain = reader.records as f64 / had_chains;
    let estimate = (needed_chains / spec.count as f64 * per_chain * 1.1).ceil() as usize + 16;
    DatagenError::ShardShort {
        dir: reader.dir.to_path_buf(),
        shard: spec.name(),
        chain,
        reached: reader.reached,
        records: reader.records,
        suggested: estimate.max(spec.target + 1).max(reader.records + 1),
    }
}

fn join_folders(
    inputs: &[PathBuf],
    manifests: &[Manifest],
    out: &Path,
    written: &mut Vec<String>,
) -> Result<MergeSummary, DatagenError> {
    let first = &manifests[0];
    let mut manifest = Manifest {
        format: first.format,
        settings: first.settings.clone(),
        engine: first.engine.clone(),
        sources: first.sources.clone(),
        shards: Vec::new(),
        records: 0,
        complete: false,
        shard: None,
        joined: Vec::new(),
    };
    let mut seen: HashSet<u64> = HashSet::new();
    let mut read = 0;
    for (dir, m) in inputs.iter().zip(manifests) {
        let before = manifest.records;
        let mut input_records = 0;
        for info in &m.shards {
            let (path, records) = read_file(dir, info)?;
            input_records += records.len();
            let mut kept = Vec::new();
            for record in records {
                if seen.insert(record_hash(&record, &path)?) {
                    kept.push(record);
                }
            }
            if !kept.is_empty() {
                write_file(out, &mut manifest, written, info.first_chain, info.chains, &kept)?;
            }
        }
        read += input_records;
        manifest.joined.push(JoinedInput {
            dir: dir.display().to_string(),
            seed: m.settings.seed,
            records: input_records,
            kept: manifest.records - before,
        });
    }
    manifest.settings.positions = manifest.records;
    manifest.complete = true;
    written.push(MANIFEST_FILE.into());
    manifest.save(out)?;
    let duplicates = read - manifest.records;
    Ok(MergeSummary { manifest, sharded: false, read, duplicates })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_is_named_with_its_path() {
        let a = serde_json::json!({"settings": {"seed": 1, "limit": {"depth": 6}}, "engine": "sf"});
        let b = serde_json::json!({"settings": {"seed": 1, "limit": {"depth": 8}}, "engine": "sf"});
        assert_eq!(first_difference(&a, &b, "").as_deref(), Some("settings.limit.depth: 6 vs 8"));
        assert_eq!(first_difference(&a, &a, ""), None);
        let c = serde_json::json!({"settings": {"seed": 1, "limit": {"depth": 6}}});
        assert_eq!(first_difference(&a, &c, "").as_deref(), Some("engine: \"sf\" vs null"));
    }

    #[test]
    fn shard_specs_parse_and_default_targets_cover_a_share_and_a_margin() {
        let s = ShardSpec::parse("1/4", 1000).expect("parses");
        assert_eq!((s.index, s.count, s.target), (1, 4, 313 + 16));
        assert_eq!(s.chain(0), 1);
        assert_eq!(s.chain(3), 13);
        assert_eq!(s.name(), "1/4");
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2"] {
            assert!(ShardSpec::parse(bad, 10).is_err(), "{bad}");
        }
        assert_eq!(ShardSpec::default_target(1, 1), 2 + 16);
    }
}
