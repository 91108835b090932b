//! `mavboard datagen render`: label shards in, the training data directory out (see training/README.md for
//! the contract): `lm_*.jsonl.zst`, `enc_*.jsonl.zst`, `av_*.jsonl.zst` for the train and validation splits,
//! `tokenizer.json` and `meta.json`. Every file is written to a temporary name and renamed when complete.
//!
//! With a search share F > 0, every label is first indexed by position ([`SearchIndex`]); then each label
//! whose search tree is labelled adds internal-search traces ([`search_examples`], `kind: "search"`) to
//! its split's text examples while they stay within F of that split's text examples (so F = 0.4 is the
//! paper's 60 % MAV / 40 % search mixture when the labels hold enough trees; the summary tells the share
//! reached). A root gives at most one trace per (breadth, depth) shape, shapes in random order.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::DatagenError;
use super::game_render::render_label;
use super::record::{LabelRecord, Split};
use super::render::{RenderOptions, Rendered, label_game, label_state, move_index, source_kind};
use super::sample::mix64;
use super::search_index::SearchIndex;
use super::search_render::{SearchRender, TraceLimits, TraceRoot, search_examples, search_shapes};
use super::shard::read_shard;
use super::tree::MAX_SEARCH_BREADTH;
use crate::game::GameState;
use crate::mav::searchless;
use crate::mav::tokenizer::Tokenizer;

/// Counts of a render.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RenderSummary {
    /// Labels read.
    pub labels: u64,
    /// Labels rendered with a known parent (state tracking possible).
    pub with_parent: u64,
    /// Text examples (train, validation).
    pub lm: [u64; 2],
    /// Terminal text examples.
    pub terminal: u64,
    /// Encoder examples (train, validation).
    pub enc: [u64; 2],
    /// Action-value examples (train, validation).
    pub av: [u64; 2],
    /// Labels of games without an action-value format (Connect Four, Hex): rendered without one.
    pub av_skipped: u64,
    /// Labels that could not be rendered (kept out, each reported on stderr).
    pub skipped: u64,
    /// Of the text examples, internal-search traces (train, validation).
    pub search: [u64; 2],
    /// Labels that rooted at least one trace.
    pub search_roots: u64,
    /// Traces left out for exceeding the token budget.
    pub search_too_long: u64,
    /// Tokens of all traces written (prompt + target + `<eos>`).
    pub search_tokens: u64,
    /// Tokens of the longest trace written.
    pub search_tokens_max: u64,
    /// Per shape (`b2d1`, …): traces written and left out, and their tokens.
    pub search_shapes: BTreeMap<String, ShapeStats>,
}

/// The traces of one (breadth, depth) shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShapeStats {
    /// Traces written.
    pub written: u64,
    /// Traces left out as longer than the budget.
    pub too_long: u64,
    /// Tokens of the written traces.
    pub tokens_written: u64,
    /// Tokens of all of them, written or not.
    pub tokens_all: u64,
    /// The fewest tokens of one of them.
    pub tokens_min: u64,
    /// The most tokens of one of them.
    pub tokens_max: u64,
}

impl ShapeStats {
    fn add(&mut self, tokens: usize, written: bool) {
        let t = tokens as u64;
        if self.written + self.too_long == 0 || t < self.tokens_min {
            self.tokens_min = t;
        }
        self.tokens_max = self.tokens_max.max(t);
        self.tokens_all += t;
        if written {
            self.written += 1;
            self.tokens_written += t;
        } else {
            self.too_long += 1;
        }
    }
}

fn shape_name((breadth, depth): (u32, u32)) -> String {
    format!("b{breadth}d{depth}")
}

impl RenderSummary {
    /// The share of search traces among the text examples (both splits).
    pub fn search_share(&self) -> f64 {
        let lm = self.lm[0] + self.lm[1];
        if lm == 0 { 0.0 } else { (self.search[0] + self.search[1]) as f64 / lm as f64 }
    }
}

/// How many more traces a split may take: its traces stay within `share` of its text examples.
fn search_allowance(share: f64, lm: u64, search: u64) -> u64 {
    if share >= 1.0 {
        return u64::MAX;
    }
    let mav = lm.saturating_sub(search) as f64;
    // The traces t allowed beside m MAV examples: t / (t + m) ≤ share.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let target = (share / (1.0 - share) * mav).floor() as u64;
    target.saturating_sub(search)
}

/// Writes one root's traces and counts them, and those left out, in `summary`.
fn write_traces(
    summary: &mut RenderSummary,
    sink: &mut Sink,
    split: usize,
    found: &SearchRender,
) -> Result<(), DatagenError> {
    summary.search_too_long += found.too_long.len() as u64;
    for (shape, tokens) in &found.too_long {
        summary.search_shapes.entry(shape_name(*shape)).or_default().add(*tokens, false);
    }
    if !found.examples.is_empty() {
        summary.search_roots += 1;
    }
    for t in &found.examples {
        sink.line(&t.example)?;
        summary.lm[split] += 1;
        summary.search[split] += 1;
        summary.search_tokens += t.tokens as u64;
        summary.search_tokens_max = summary.search_tokens_max.max(t.tokens as u64);
        summary.search_shapes.entry(shape_name(t.shape)).or_default().add(t.tokens, true);
    }
    Ok(())
}

/// Indexes every label of `label_dirs` by position (labels that cannot be read are left out here and
/// reported by the render pass).
fn index_labels(label_dirs: &[PathBuf]) -> Result<SearchIndex, DatagenError> {
    let mut index = SearchIndex::new();
    for dir in label_dirs {
        for shard in shard_files(dir)? {
            for rec in read_shard(&shard)? {
                let _ = index.add(&rec);
            }
        }
    }
    Ok(index)
}

/// Salts the run seed for the search traces' random streams, apart from the MAV examples' streams (so
/// turning traces on leaves every other example as it was).
const SEARCH_SALT: u64 = 0x5EA2_C47A_CE00_0003;

/// The shard files of a label folder, in order.
pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, DatagenError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| DatagenError::io(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".jsonl.zst"))
        })
        .collect();
    files.sort();
    Ok(files)
}

struct Sink {
    tmp: PathBuf,
    path: PathBuf,
    enc: zstd::Encoder<'static, std::io::BufWriter<std::fs::File>>,
}

impl Sink {
    fn create(dir: &Path, name: &str) -> Result<Sink, DatagenError> {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        let file = std::fs::File::create(&tmp).map_err(|e| DatagenError::io(&tmp, e))?;
        let enc =
            zstd::Encoder::new(std::io::BufWriter::new(file), 6).map_err(|e| DatagenError::io(&tmp, e))?;
        Ok(Sink { tmp, path, enc })
    }

    fn line<T: Serialize>(&mut self, value: &T) -> Result<(), DatagenError> {
        let mut bytes = serde_json::to_vec(value)
            .map_err(|e| DatagenError::io(&self.path, std::io::Error::other(e.to_string())))?;
        bytes.push(b'\n');
        self.enc.write_all(&bytes).map_err(|e| DatagenError::io(&self.tmp, e))
    }

    fn finish(self) -> Result<(), DatagenError> {
        let mut w = self.enc.finish().map_err(|e| DatagenError::io(&self.tmp, e))?;
        w.flush().map_err(|e| DatagenError::io(&self.tmp, e))?;
        drop(w);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| DatagenError::io(&self.path, e))
    }
}

/// Renders every label in `label_dirs` into `out`.
pub fn render_dirs(
    label_dirs: &[PathBuf],
    out: &Path,
    opts: &RenderOptions,
) -> Result<RenderSummary, DatagenError> {
    check_options(opts)?;
    let shapes = search_shapes(opts.search_max_breadth);
    std::fs::create_dir_all(out).map_err(|e| DatagenError::io(out, e))?;
    let search_index = if opts.search_share > 0.0 { Some(index_labels(label_dirs)?) } else { None };
    let names = ["lm_train", "lm_val", "enc_train", "enc_val", "av_train", "av_val"];
    let sinks =
        names.iter().map(|n| Sink::create(out, &format!("{n}.jsonl.zst"))).collect::<Result<Vec<_>, _>>()?;
    let mut r = Renderer {
        opts,
        tokenizer: Tokenizer::new(),
        index: move_index(),
        shapes,
        search_index,
        sinks,
        summary: RenderSummary::default(),
        games: BTreeSet::new(),
    };
    for dir in label_dirs {
        let mut previous: Option<LabelRecord> = None;
        for shard in shard_files(dir)? {
            for rec in read_shard(&shard)? {
                // In a continuation chain the parent is the record just before, one ply earlier.
                let parent = previous.as_ref().filter(|p| p.ply + 1 == rec.ply && p.source == rec.source);
                r.label(&rec, parent, &shard)?;
                previous = Some(rec);
            }
        }
    }
    let Renderer { tokenizer, index, sinks, summary, games, .. } = r;
    for s in sinks {
        s.finish()?;
    }
    let tok_path = out.join("tokenizer.json");
    super::shard::write_atomic(&tok_path, tokenizer.to_hf_json().as_bytes())?;
    write_meta(out, label_dirs, opts, &summary, games, index.len())?;
    Ok(summary)
}

/// Checks the search options of a render.
fn check_options(opts: &RenderOptions) -> Result<(), DatagenError> {
    if !(0.0..=1.0).contains(&opts.search_share) {
        return Err(DatagenError::Settings(format!(
            "--search-share must be between 0 and 1, not {}",
            opts.search_share
        )));
    }
    if !(2..=MAX_SEARCH_BREADTH).contains(&opts.search_max_breadth) {
        return Err(DatagenError::Settings(format!(
            "--search-max-breadth must be between 2 and {MAX_SEARCH_BREADTH}, not {}",
            opts.search_max_breadth
        )));
    }
    Ok(())
}

/// Writes `meta.json` into `out`: the data's vocabularies, games, and how it was rendered.
fn write_meta(
    out: &Path,
    label_dirs: &[PathBuf],
    opts: &RenderOptions,
    summary: &RenderSummary,
    games: BTreeSet<&'static str>,
    action_vocab_size: usize,
) -> Result<(), DatagenError> {
    let meta = serde_json::json!({
        "num_buckets": 64,
        "av_num_buckets": 128,
        "tokenizer": "tokenizer.json",
        "av_state_vocab_size": searchless::state_vocab_size(),
        "av_action_vocab_size": action_vocab_size,
        "games": games.into_iter().collect::<Vec<_>>(),
        "source": {
            "labels": label_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
            "seed": opts.seed,
            "lm_per_position": opts.lm_per_position,
            "state_tracking": opts.state_tracking,
            "top_all": opts.top_all,
            "search_share": opts.search_share,
            "search_max_tokens": opts.search_max_tokens,
            "search_max_breadth": opts.search_max_breadth,
            "summary": summary,
        }
    });
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| DatagenError::io(out, std::io::Error::other(e.to_string())))?;
    super::shard::write_atomic(&out.join("meta.json"), text.as_bytes())
}

/// A render in progress: what it renders with, the files it writes and its counts so far.
struct Renderer<'a> {
    /// The render's options.
    opts: &'a RenderOptions,
    /// The text models' tokenizer.
    tokenizer: Tokenizer,
    /// The action-value model's move index.
    index: std::collections::HashMap<String, u32>,
    /// The search traces' (breadth, depth) shapes.
    shapes: Vec<(u32, u32)>,
    /// Every label by position, when search traces are rendered.
    search_index: Option<SearchIndex>,
    /// The output files: `lm`, `enc`, `av`, each train then validation.
    sinks: Vec<Sink>,
    /// The counts so far.
    summary: RenderSummary,
    /// The names of the games rendered.
    games: BTreeSet<&'static str>,
}

impl Renderer<'_> {
    /// Renders label `rec` (read from `shard`, its chain parent `parent`); a label that cannot be rendered
    /// is counted and reported on stderr.
    fn label(
        &mut self,
        rec: &LabelRecord,
        parent: Option<&LabelRecord>,
        shard: &Path,
    ) -> Result<(), DatagenError> {
        self.summary.labels += 1;
        match render_label(rec, parent, &self.tokenizer, &self.index, self.opts) {
            Ok(r) => {
                self.games.insert(label_game(rec).name());
                let split = usize::from(rec.split == Split::Val);
                if parent.is_some() {
                    self.summary.with_parent += 1;
                }
                self.write(&r, split)?;
                self.traces(rec, split, shard)?;
            }
            Err(e) => {
                self.summary.skipped += 1;
                eprintln!("{}: {e}", shard.display());
            }
        }
        Ok(())
    }

    /// Writes a rendered label's examples to split `split`'s files and counts them.
    fn write(&mut self, r: &Rendered, split: usize) -> Result<(), DatagenError> {
        let (sinks, summary) = (&mut self.sinks, &mut self.summary);
        for ex in &r.lm {
            sinks[split].line(ex)?;
            summary.lm[split] += 1;
            if ex.source == "terminal" {
                summary.terminal += 1;
            }
        }
        if let Some(e) = &r.enc {
            sinks[2 + split].line(e)?;
            summary.enc[split] += 1;
        }
        if let Some(a) = &r.av {
            sinks[4 + split].line(a)?;
            summary.av[split] += 1;
        } else {
            summary.av_skipped += 1;
        }
        Ok(())
    }

    /// Writes the search traces rooted at rendered label `rec` that split `split` still has room for.
    fn traces(&mut self, rec: &LabelRecord, split: usize, shard: &Path) -> Result<(), DatagenError> {
        let summary = &mut self.summary;
        let allowed = search_allowance(self.opts.search_share, summary.lm[split], summary.search[split]);
        // The label rendered, so its position parses.
        let (Some(index), true, Ok(root)) =
            (self.search_index.as_ref().filter(|_| allowed > 0), rec.game.is_chess(), label_state(rec))
        else {
            return Ok(());
        };
        let mut rng = ChaCha8Rng::seed_from_u64(mix64(self.opts.seed ^ SEARCH_SALT) ^ root.hash64());
        let count = usize::try_from(allowed).unwrap_or(usize::MAX).min(self.shapes.len());
        let trace_root = TraceRoot { state: &root, split: rec.split, source: source_kind(rec) };
        let found = search_examples(
            index,
            trace_root,
            &self.tokenizer,
            TraceLimits { shapes: &self.shapes, max_tokens: self.opts.search_max_tokens, count },
            &mut rng,
        );
        match found {
            Ok(found) => write_traces(summary, &mut self.sinks[split], split, &found)?,
            Err(e) => eprintln!("{}: {e}", shard.display()),
        }
        Ok(())
    }
}
