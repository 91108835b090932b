//! `mavboard datagen render`: label shards in, the training data directory out (see training/README.md for
//! the contract): `lm_*.jsonl.zst`, `enc_*.jsonl.zst`, `av_*.jsonl.zst` for the train and validation splits,
//! `tokenizer.json` and `meta.json`. Every file is written to a temporary name and renamed when complete.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::DatagenError;
use super::record::{LabelRecord, Split};
use super::render::{RenderOptions, label_game, move_index, render_label};
use super::shard::read_shard;
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
    /// Labels that could not be rendered (kept out, each reported on stderr).
    pub skipped: u64,
}

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
    std::fs::create_dir_all(out).map_err(|e| DatagenError::io(out, e))?;
    let tokenizer = Tokenizer::new();
    let index = move_index();
    let names = ["lm_train", "lm_val", "enc_train", "enc_val", "av_train", "av_val"];
    let mut sinks =
        names.iter().map(|n| Sink::create(out, &format!("{n}.jsonl.zst"))).collect::<Result<Vec<_>, _>>()?;
    let mut summary = RenderSummary::default();
    let mut games = std::collections::BTreeSet::new();
    for dir in label_dirs {
        let mut previous: Option<LabelRecord> = None;
        for shard in shard_files(dir)? {
            for rec in read_shard(&shard)? {
                summary.labels += 1;
                // In a continuation chain the parent is the record just before, one ply earlier.
                let parent = previous.as_ref().filter(|p| p.ply + 1 == rec.ply && p.source == rec.source);
                match render_label(&rec, parent, &tokenizer, &index, opts) {
                    Ok(r) => {
                        games.insert(label_game(&rec).name());
                        let split = usize::from(rec.split == Split::Val);
                        if parent.is_some() {
                            summary.with_parent += 1;
                        }
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
                        }
                    }
                    Err(e) => {
                        summary.skipped += 1;
                        eprintln!("{}: {e}", shard.display());
                    }
                }
                previous = Some(rec);
            }
        }
    }
    for s in sinks {
        s.finish()?;
    }
    let tok_path = out.join("tokenizer.json");
    super::shard::write_atomic(&tok_path, tokenizer.to_hf_json().as_bytes())?;
    let meta = serde_json::json!({
        "num_buckets": 64,
        "av_num_buckets": 128,
        "tokenizer": "tokenizer.json",
        "av_state_vocab_size": searchless::state_vocab_size(),
        "av_action_vocab_size": index.len(),
        "games": games.into_iter().collect::<Vec<_>>(),
        "source": {
            "labels": label_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
            "seed": opts.seed,
            "lm_per_position": opts.lm_per_position,
            "state_tracking": opts.state_tracking,
            "top_all": opts.top_all,
            "summary": &summary,
        }
    });
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| DatagenError::io(out, std::io::Error::other(e.to_string())))?;
    super::shard::write_atomic(&out.join("meta.json"), text.as_bytes())?;
    Ok(summary)
}
