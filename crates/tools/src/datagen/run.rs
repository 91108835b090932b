//! The labels run: seeds → chains of labelled positions → dedupe → shards, resumable and deterministic.
//!
//! Work is cut into *chains*: chain `c` draws its seed and its continuation moves from its own random
//! stream ([`chain_rng`]`(seed, c)`), labels the seed, samples a move from the labels, plays it, labels
//! again, up to `continuations` plies. Chains run on the worker pool in any order; each shard collects
//! the results of a consecutive range of chains *in chain order*, drops positions already seen (Zobrist
//! hash), and is written atomically before the manifest records it. So the output depends only on the
//! settings and the labeller, and a killed run resumes after its last recorded shard.
//!
//! The records of a run are therefore *the first `positions` distinct positions in chain order* (chain
//! index, then each chain's own order), whatever `chains_per_shard`, the thread count or interruptions.
//!
//! # Many machines: `--shard K/N` splits by chain, not by position hash
//!
//! A chain cannot be cut by position: its third position is the move sampled from the labels of its
//! second, so to know which positions a chain reaches one must label all of it, whatever their hashes.
//! Splitting the positions by hash would make every machine label every chain. So shard `K` of `N`
//! ([`ShardSpec`]) labels the chains `c` with `c mod N == K`, in order, deduplicates within itself and
//! keeps *whole* chains until it holds its [`ShardSpec::target`] (by default a quarter above its even
//! share); each file's manifest entry counts the records of each of its chains
//! ([`ShardInfo::chain_records`]). The globally first occurrence of a position is also the first in its
//! own shard, so nothing the single run keeps is dropped by a shard. `datagen merge`
//! ([`super::merge`]) takes the chains back in order from the shards, deduplicates across them, stops at
//! `positions` and writes the files exactly as the single run lays them out: the merged folder is
//! byte-for-byte the single run's. If a shard stopped before a chain the merge needs, the merge says which
//! shard and how far to resume it (`--shard-target`).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::game_label::game_state_hash;
use super::label::Labeler;
pub use super::label_settings::{LabelSettings, Limit};
use super::manifest::{FORMAT_VERSION, Manifest, ShardInfo, ShardSpec, SourceInfo};
use super::record::{LabelGame, LabelRecord, Split};
use super::sample::{chain_rng, sample_move, split_of};
use super::shard::{read_shard, shard_file_name, write_shard};
use super::source::{SourceMix, parse_epd_line};
use super::tree::{cached_label, is_search_root, label_tree};
use super::{DatagenError, PositionSource};
use crate::engine::pool::{JobError, Pool, PoolError};
use crate::game::{GameKind, GameState};

/// Progress of a run, reported after every finished chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Records written to shards (including those of earlier, resumed runs).
    pub written: usize,
    /// Positions labelled for the shard in progress (before deduplication).
    pub pending: usize,
    /// The target.
    pub target: usize,
    /// Shards written.
    pub shards: usize,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The manifest as written at the end.
    pub manifest: Manifest,
    /// Records written by this run (not counting resumed shards).
    pub written_now: usize,
    /// Positions labelled by this run, duplicates included.
    pub labelled_now: usize,
}

/// A labelled position with its hash, as a chain produces it.
pub(crate) type Labelled = (u64, LabelRecord);

/// Labels chain `chain`: its seed and up to `continuations` plies after it, then the search trees of
/// those of its positions that root one, each tree depth first after the chain.
fn label_chain<L: Labeler>(
    labeler: &mut L,
    mix: &SourceMix,
    settings: &LabelSettings,
    chain: u64,
) -> Result<Vec<Labelled>, DatagenError> {
    let mut rng = chain_rng(settings.seed, chain);
    let (source, index) = mix.pick(&mut rng)?;
    let tag = source.tag().to_owned();
    let mut state = source.position(index)?;
    let mut out = Vec::new();
    let mut cache = HashMap::new();
    let mut roots = Vec::new();
    for ply in 0..=settings.continuations {
        if state.outcome().is_some() || state.legal_actions().is_empty() {
            break;
        }
        let label = cached_label(labeler, &state, &mut cache)?;
        let hash = state.hash64();
        let record = LabelRecord {
            game: LabelGame::Chess,
            fen: state.fen(),
            chess960: state.kind() == GameKind::Chess960,
            moves: label.moves,
            best: label.best,
            depth: label.depth,
            nodes: label.nodes,
            source: tag.clone(),
            ply,
            split: split_of(hash, settings.val_fraction),
            search_path: Vec::new(),
        };
        if is_search_root(hash, settings.seed, settings.search_share) {
            roots.push((state.clone(), out.len()));
        }
        let next = if ply < settings.continuations {
            sample_move(&record.moves, settings.temperature, &mut rng).map(|m| m.uci.clone())
        } else {
            None
        };
        out.push((hash, record));
        let Some(uci) = next else { break };
        let action = state.parse_action(&uci).map_err(|e| DatagenError::BadLabel {
            fen: state.fen(),
            reason: format!("its labelled move cannot be played: {e}"),
        })?;
        state = state.play(action).map_err(|e| DatagenError::BadLabel {
            fen: state.fen(),
            reason: format!("its labelled move cannot be played: {e}"),
        })?;
    }
    for (root, i) in roots {
        let record = out[i].1.clone();
        let tree =
            label_tree(labeler, &root, &record, settings.search_breadth, settings.search_depth, &mut cache)?;
        out.extend(tree);
    }
    Ok(out)
}

/// The position hash of a stored record (the hash the run deduplicated it by).
pub(crate) fn record_hash(r: &LabelRecord, path: &Path) -> Result<u64, DatagenError> {
    let corrupt = |reason: String| DatagenError::Corrupt { path: path.to_path_buf(), reason };
    match r.game {
        LabelGame::Chess => {
            Ok(parse_epd_line(&r.fen, r.chess960).map_err(|e| corrupt(e.to_string()))?.hash64())
        }
        game => game_state_hash(game, &r.fen).map_err(|e| corrupt(e.to_string())),
    }
}

fn source_infos(mix: &SourceMix) -> Vec<SourceInfo> {
    mix.entries()
        .iter()
        .map(|(s, w)| SourceInfo {
            tag: s.tag().to_owned(),
            origin: s.origin(),
            weight: *w,
            positions: s.len(),
        })
        .collect()
}

/// Compares an existing manifest with this run's settings; the first difference is an error.
fn check_resumable(dir: &Path, old: &Manifest, new: &Manifest) -> Result<(), DatagenError> {
    let mismatch =
        |difference: String| Err(DatagenError::SettingsMismatch { dir: dir.to_path_buf(), difference });
    if old.format != new.format {
        return mismatch(format!("format {} there, {} now", old.format, new.format));
    }
    if old.settings != new.settings {
        return mismatch(format!("settings there: {:?}; now: {:?}", old.settings, new.settings));
    }
    if old.engine != new.engine {
        return mismatch(format!("engine {:?} there, {:?} now", old.engine, new.engine));
    }
    if source_key(&old.sources) != source_key(&new.sources) {
        return mismatch(format!(
            "sources there: {:?}; now: {:?}",
            source_key(&old.sources),
            source_key(&new.sources)
        ));
    }
    let which = |s: &Option<ShardSpec>| {
        s.map_or_else(|| "no --shard".to_owned(), |s| format!("--shard {}", s.name()))
    };
    if which(&old.shard) != which(&new.shard) {
        return mismatch(format!("{} there, {} now", which(&old.shard), which(&new.shard)));
    }
    if !old.joined.is_empty() {
        return mismatch(
            "it was joined by datagen merge from folders of different seeds; resume those and merge again"
                .into(),
        );
    }
    Ok(())
}

/// What identifies a run's sources: tag, weight and size (not where they were read from, which may differ
/// between machines).
pub(crate) fn source_key(s: &[SourceInfo]) -> Vec<(String, f64, usize)> {
    s.iter().map(|i| (i.tag.clone(), i.weight, i.positions)).collect()
}

/// After this many shards in a row that add nothing new, the sources are taken to be exhausted.
const MAX_FRUITLESS_SHARDS: usize = 20;

/// Runs (or resumes) a labels run into `out`.
///
/// `factory(worker)` builds one labeller per worker thread (e.g. a [`super::StockfishLabeler`]).
/// `stop_after_shards` ends the run early after writing that many shards (for tests and for splitting
/// work into sessions); running again resumes it. `progress` is called after every finished chain.
pub fn run_labels<L, F>(
    out: &Path,
    settings: &LabelSettings,
    mix: &SourceMix,
    threads: usize,
    factory: F,
    stop_after_shards: Option<usize>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunSummary, DatagenError>
where
    L: Labeler + 'static,
    F: Fn(usize) -> Result<L, DatagenError> + Send + Sync + 'static,
{
    let plan = RunPlan { out, settings, shard: None, threads, stop_after_shards };
    run_labels_shard(plan, mix, factory, progress)
}

/// Where and how a labels run goes: its folder, settings, shard, worker threads and early stop.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan<'a> {
    /// The run's folder (manifest and shard files).
    pub out: &'a Path,
    /// What to label and how.
    pub settings: &'a LabelSettings,
    /// One shard of a run split over machines; `None`: the whole run.
    pub shard: Option<ShardSpec>,
    /// Labelling worker threads.
    pub threads: usize,
    /// End the run after writing this many shard files (tests, sessions); running again resumes it.
    pub stop_after_shards: Option<usize>,
}

/// [`run_labels`] for one shard of a run split over machines (`plan.shard`; `None` = the whole run): see
/// the module documentation. `datagen merge` joins the shards.
pub fn run_labels_shard<L, F>(
    plan: RunPlan<'_>,
    mix: &SourceMix,
    factory: F,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunSummary, DatagenError>
where
    L: Labeler + 'static,
    F: Fn(usize) -> Result<L, DatagenError> + Send + Sync + 'static,
{
    let settings = plan.settings;
    if settings.game.is_some() {
        return Err(DatagenError::Settings("Connect Four and Hex labels are run by run_game_labels".into()));
    }
    if mix.entries().is_empty() {
        return Err(DatagenError::Settings("no position sources were given".into()));
    }
    let job_mix = mix.clone();
    let job_settings = settings.clone();
    drive(
        plan,
        source_infos(mix),
        move |worker| {
            let labeler = factory(worker)?;
            let name = labeler.name();
            Ok((labeler, name))
        },
        move |labeler: &mut L, chain: u64| label_chain(labeler, &job_mix, &job_settings, chain),
        progress,
    )
}

/// The run driver shared by every game: the worker pool (`factory(worker)` builds a worker's labeller
/// and names it for the manifest, `job(labeller, chain)` labels one chain), the manifest, resume,
/// deduplication and shards (see the module documentation); `shard` makes it one shard of a run split
/// over machines.
pub(crate) fn drive<S, F, J>(
    plan: RunPlan<'_>,
    sources: Vec<SourceInfo>,
    factory: F,
    job: J,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunSummary, DatagenError>
where
    S: 'static,
    F: Fn(usize) -> Result<(S, String), DatagenError> + Send + Sync + 'static,
    J: Fn(&mut S, u64) -> Result<Vec<Labelled>, DatagenError> + Send + Sync + 'static,
{
    let RunPlan { out, settings, shard, threads, stop_after_shards } = plan;
    settings.check()?;
    if let Some(s) = &shard {
        s.check()?;
    }
    std::fs::create_dir_all(out).map_err(|e| DatagenError::io(out, e))?;

    let (mut pool, engine) = start_pool(threads, factory, job)?;
    let mut manifest = open_manifest(plan, sources, engine)?;
    let spec = shard;
    let mut seen = written_positions(out, &manifest, spec)?;

    let target = spec.map_or(settings.positions, |s| s.target);
    let mut written_now = 0;
    let mut labelled_now = 0;
    let mut shards_now = 0;
    let mut fruitless = 0;
    let mut next_chain = resume_chain(&manifest, spec);
    while manifest.records < target {
        if stop_after_shards.is_some_and(|k| shards_now >= k) {
            return Ok(RunSummary { manifest, written_now, labelled_now });
        }
        // Every chain yields at most one new record per ply: never label far more than still needed.
        let remaining = (target - manifest.records) as u64;
        let chains = settings.chains_per_shard.min(remaining).max(1);
        let first_chain = next_chain;
        let batch = ChainBatch { spec, first_chain, chains };
        let (slots, labelled) = batch.label(&mut pool, &manifest, target, progress)?;
        labelled_now += labelled;
        let room = target - manifest.records;
        let (records, chain_records) = new_records(slots, spec.is_some(), &mut seen, room)?;
        next_chain = first_chain + chains;
        if records.is_empty() {
            fruitless += 1;
            if fruitless >= MAX_FRUITLESS_SHARDS {
                return Err(exhausted(chains, manifest.records));
            }
            continue;
        }
        fruitless = 0;
        let index = manifest.shards.len();
        let bytes = write_shard(out, index, &records)?;
        manifest.shards.push(ShardInfo {
            file: shard_file_name(index),
            first_chain: batch.run_chain(first_chain),
            chains,
            records: records.len(),
            val: records.iter().filter(|r| r.split == Split::Val).count(),
            bytes,
            chain_records,
        });
        manifest.records += records.len();
        written_now += records.len();
        shards_now += 1;
        manifest.complete = manifest.records >= target;
        manifest.save(out)?;
        progress(Progress { written: manifest.records, pending: 0, target, shards: manifest.shards.len() });
    }
    if !manifest.complete {
        manifest.complete = true;
        manifest.save(out)?;
    }
    Ok(RunSummary { manifest, written_now, labelled_now })
}

/// The labelling worker pool: jobs are chain numbers, results the chains' labelled positions.
type LabelPool = Pool<u64, Vec<Labelled>, DatagenError>;

/// Starts `threads` labelling workers (at least one) built by `factory`, running `job`; returns the pool
/// and the labeller's name for the manifest.
fn start_pool<S, F, J>(threads: usize, factory: F, job: J) -> Result<(LabelPool, String), DatagenError>
where
    S: 'static,
    F: Fn(usize) -> Result<(S, String), DatagenError> + Send + Sync + 'static,
    J: Fn(&mut S, u64) -> Result<Vec<Labelled>, DatagenError> + Send + Sync + 'static,
{
    let engine_name = Arc::new(OnceLock::new());
    let name_slot = Arc::clone(&engine_name);
    let pool = Pool::new(
        "datagen",
        threads.max(1),
        move |worker| {
            let (labeler, name) = factory(worker)?;
            let _ = name_slot.set(name);
            Ok(labeler)
        },
        job,
    )
    .map_err(|e| match e {
        PoolError::Factory { source, .. } => source,
        other => DatagenError::Worker(other.to_string()),
    })?;
    let engine = engine_name.get().cloned().unwrap_or_default();
    Ok((pool, engine))
}

/// The next chain to label after the shards `manifest` records: the shard's own number (0, 1, …; the
/// run's `spec.chain(n)`) when sharded.
fn resume_chain(manifest: &Manifest, spec: Option<ShardSpec>) -> u64 {
    manifest.shards.last().map_or(0, |s| match spec {
        Some(spec) => (s.first_chain - spec.index) / spec.count + s.chains,
        None => s.first_chain + s.chains,
    })
}

/// The error for a run whose last [`MAX_FRUITLESS_SHARDS`] shards of `chains` chains found nothing new.
fn exhausted(chains: u64, records: usize) -> DatagenError {
    DatagenError::Settings(format!(
        "{} chains in a row produced no new position; the sources are exhausted at {} records \
         (ask for fewer --positions or add sources)",
        MAX_FRUITLESS_SHARDS as u64 * chains,
        records
    ))
}

/// Each chain's labelled positions, in chain order (`None` until its result is back).
type ChainSlots = Vec<Option<Vec<Labelled>>>;

/// The chains of one shard file: `chains` chains from `first_chain` (the shard's own numbers when sharded).
#[derive(Debug, Clone, Copy)]
struct ChainBatch {
    /// The run's shard, if it is split over machines.
    spec: Option<ShardSpec>,
    /// The first chain.
    first_chain: u64,
    /// How many chains.
    chains: u64,
}

impl ChainBatch {
    /// The run's number of chain `c`.
    fn run_chain(&self, c: u64) -> u64 {
        self.spec.map_or(c, |s| s.chain(c))
    }

    /// Labels the chains on `pool`, reporting `progress` after each; returns their results in chain order
    /// and how many positions they labelled.
    fn label(
        &self,
        pool: &mut LabelPool,
        manifest: &Manifest,
        target: usize,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(ChainSlots, usize), DatagenError> {
        let (first_chain, chains) = (self.first_chain, self.chains);
        let mut slots: ChainSlots = (0..chains).map(|_| None).collect();
        // Job indices are consecutive, so chain `first_chain + i` comes back as index `base + i`.
        let base = pool.submit(self.run_chain(first_chain));
        for c in first_chain + 1..first_chain + chains {
            pool.submit(self.run_chain(c));
        }
        let mut pending = 0;
        for _ in 0..chains {
            let Some(done) = pool.recv() else {
                return Err(DatagenError::Worker("every labelling worker exited".into()));
            };
            let chain_result = match done.result {
                Ok(r) => r,
                Err(JobError::Failed(e)) => return Err(e),
                Err(JobError::Panicked(m)) => return Err(DatagenError::Worker(m)),
            };
            pending += chain_result.len();
            if let Some(slot) = done.index.checked_sub(base).and_then(|i| slots.get_mut(i)) {
                *slot = Some(chain_result);
            }
            progress(Progress {
                written: manifest.records,
                pending: pending.min(target - manifest.records),
                target,
                shards: manifest.shards.len(),
            });
        }
        Ok((slots, pending))
    }
}

/// The run's manifest: the one in `plan.out` when the run resumes (checked against this run's settings
/// and sources; a new shard target is taken over), else a new one, written at once.
fn open_manifest(
    plan: RunPlan<'_>,
    sources: Vec<SourceInfo>,
    engine: String,
) -> Result<Manifest, DatagenError> {
    let (out, shard) = (plan.out, plan.shard);
    let fresh = Manifest {
        format: FORMAT_VERSION,
        settings: plan.settings.clone(),
        engine,
        sources,
        shards: Vec::new(),
        records: 0,
        complete: false,
        shard,
        joined: Vec::new(),
    };
    match Manifest::load(out)? {
        Some(mut old) => {
            check_resumable(out, &old, &fresh)?;
            if old.shard != shard {
                // Only the shard's target differs (check_resumable compares the rest).
                old.shard = shard;
                old.complete = shard.is_some_and(|s| old.records >= s.target);
                old.save(out)?;
            }
            Ok(old)
        }
        None => {
            fresh.save(out)?;
            Ok(fresh)
        }
    }
}

/// The positions the run's shard files already hold (their hashes), after checking each file against the
/// manifest (its record count; a sharded run's chain numbers).
fn written_positions(
    out: &Path,
    manifest: &Manifest,
    spec: Option<ShardSpec>,
) -> Result<HashSet<u64>, DatagenError> {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut counted = 0;
    for info in &manifest.shards {
        let path = out.join(&info.file);
        let records = read_shard(&path)?;
        if records.len() != info.records {
            return Err(DatagenError::Corrupt {
                path,
                reason: format!("holds {} records, the manifest says {}", records.len(), info.records),
            });
        }
        for r in &records {
            seen.insert(record_hash(r, &path)?);
        }
        if let Some(spec) = &spec {
            check_sharded_file(&path, info, spec)?;
        }
        counted += records.len();
    }
    if counted != manifest.records {
        return Err(DatagenError::Corrupt {
            path: out.join(super::manifest::MANIFEST_FILE),
            reason: format!("its shards hold {counted} records, it says {}", manifest.records),
        });
    }
    Ok(seen)
}

/// The records of a shard's finished chains (in chain order) that are not in `seen` (which takes them in),
/// and, for a sharded run, how many each chain gave (for `datagen merge`); a sharded run keeps whole chains,
/// a whole run stops at `room` records.
fn new_records(
    slots: Vec<Option<Vec<Labelled>>>,
    sharded: bool,
    seen: &mut HashSet<u64>,
    room: usize,
) -> Result<(Vec<LabelRecord>, Vec<u32>), DatagenError> {
    let mut records = Vec::new();
    let mut chain_records = Vec::new();
    if sharded {
        for chain in slots {
            let chain = chain.ok_or_else(|| DatagenError::Worker("a chain's result went missing".into()))?;
            let before = records.len();
            for (hash, record) in chain {
                if seen.insert(hash) {
                    records.push(record);
                }
            }
            chain_records.push(u32::try_from(records.len() - before).unwrap_or(u32::MAX));
        }
    } else {
        'chains: for chain in slots.into_iter().flatten() {
            for (hash, record) in chain {
                if records.len() >= room {
                    break 'chains;
                }
                if seen.insert(hash) {
                    records.push(record);
                }
            }
        }
    }
    Ok((records, chain_records))
}

/// Checks a sharded run's file entry: its first chain is one of the shard's, and its chain counts add up.
pub(crate) fn check_sharded_file(
    path: &Path,
    info: &ShardInfo,
    spec: &ShardSpec,
) -> Result<(), DatagenError> {
    let corrupt = |reason: String| Err(DatagenError::Corrupt { path: path.to_path_buf(), reason });
    if info.first_chain % spec.count != spec.index {
        return corrupt(format!(
            "the manifest says it starts at chain {}, which is not one of shard {}'s",
            info.first_chain,
            spec.name()
        ));
    }
    let sum: u64 = info.chain_records.iter().map(|&n| u64::from(n)).sum();
    if info.chain_records.len() as u64 != info.chains || sum != info.records as u64 {
        return corrupt(format!(
            "the manifest counts {} chains with {sum} records for it, not {} chains with {}",
            info.chain_records.len(),
            info.chains,
            info.records
        ));
    }
    Ok(())
}

/// The sources of a mix as `tag (count)` text, for messages.
pub fn describe_sources(mix: &SourceMix) -> String {
    mix.entries()
        .iter()
        .map(|(s, w)| format!("{} ({} positions, weight {w})", s.tag(), PositionSource::len(s.as_ref())))
        .collect::<Vec<_>>()
        .join(", ")
}
