//! Batched KV-cache decoding for the decoder-with-past layout (`input_ids`, `attention_mask`,
//! `position_ids`, `past_key_values.N.key/value` → `logits`, `present.N.key/value`).
//!
//! Prompts of different lengths are left-padded; the attention mask hides the padding and position ids
//! count only real tokens, so a padded row computes exactly what it would alone. Rows that finish are
//! dropped from the cache ([`KvCache::keep_rows`]) so the batch shrinks as requests complete.
//!
//! The cache stays in ONNX Runtime's own output values: each step's `present.*` outputs are fed back as the
//! next step's `past_key_values.*` inputs without a copy. Only dropping rows copies the cache.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use ndarray::{Array2, Array3, Array4, Axis, Ix3, s};
use ort::session::{Session, SessionInputValue};
use ort::value::{DynValue, Tensor};

/// Why a decoder call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecoderError {
    /// The call was malformed (no prompt, an empty prompt, a token count that does not match the rows).
    #[error("decoder call: {0}")]
    Call(String),
    /// ONNX Runtime failed or returned something of the wrong shape.
    #[error("ONNX Runtime: {0}")]
    Runtime(String),
}

fn rt<E: std::fmt::Display>(e: E) -> DecoderError {
    DecoderError::Runtime(e.to_string())
}

/// Keys and values of every layer, as ONNX Runtime values.
type Layers = Vec<(DynValue, DynValue)>;

/// The cache of one batch: past keys and values per layer (ONNX Runtime values of shape
/// `[rows, heads, past, head_dim]`), and per row its attention mask and next position.
#[derive(Debug)]
pub struct KvCache {
    layers: Layers,
    mask: Vec<Vec<i64>>,
    next_pos: Vec<i64>,
}

impl KvCache {
    /// Rows in the batch.
    pub fn rows(&self) -> usize {
        self.mask.len()
    }

    /// Cached sequence length (padding included).
    pub fn past_len(&self) -> usize {
        self.mask.first().map_or(0, Vec::len)
    }

    /// Keeps only `rows` (indices into the current batch, in the order given). Copies the cache.
    pub fn keep_rows(&mut self, rows: &[usize]) -> Result<(), DecoderError> {
        if let Some(&bad) = rows.iter().find(|&&r| r >= self.rows()) {
            return Err(DecoderError::Call(format!("row {bad} of a batch of {}", self.rows())));
        }
        let select = |v: &DynValue| -> Result<DynValue, DecoderError> {
            let a = v.try_extract_array::<f32>().map_err(rt)?;
            let picked = a.select(Axis(0), rows);
            Ok(Tensor::from_array(picked).map_err(rt)?.into_dyn())
        };
        for (k, v) in &mut self.layers {
            *k = select(k)?;
            *v = select(v)?;
        }
        self.mask = rows.iter().map(|&r| self.mask[r].clone()).collect();
        self.next_pos = rows.iter().map(|&r| self.next_pos[r]).collect();
        Ok(())
    }
}

/// A decoder-with-past graph and its shape facts.
#[derive(Debug)]
pub struct KvDecoder {
    session: Session,
    num_heads: usize,
    head_dim: usize,
    pad_id: u32,
    /// `past_key_values.N.key`, `past_key_values.N.value` per layer.
    past_names: Vec<(String, String)>,
    /// `present.N.key`, `present.N.value` per layer.
    present_names: Vec<(String, String)>,
    /// Time spent inside `Session::run`, summed.
    pub model_time: Duration,
    /// Number of `Session::run` calls.
    pub calls: u64,
}

/// Which logits a run returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Every position: `[rows, len, vocab]`.
    All,
    /// The last position only: `[rows, 1, vocab]`.
    Last,
}

impl KvDecoder {
    /// Wraps a session already checked against its mav.json (see `OnnxSession::open`).
    pub fn new(
        session: Session,
        num_layers: usize,
        num_heads: usize,
        head_dim: usize,
        pad_id: u32,
    ) -> KvDecoder {
        KvDecoder {
            session,
            num_heads,
            head_dim,
            pad_id,
            past_names: (0..num_layers)
                .map(|i| (format!("past_key_values.{i}.key"), format!("past_key_values.{i}.value")))
                .collect(),
            present_names: (0..num_layers)
                .map(|i| (format!("present.{i}.key"), format!("present.{i}.value")))
                .collect(),
            model_time: Duration::ZERO,
            calls: 0,
        }
    }

    /// The token fed to padding positions and to rows that finished but are still in the batch.
    pub fn pad_id(&self) -> u32 {
        self.pad_id
    }

    fn run(
        &mut self,
        ids: Array2<i64>,
        mask: Array2<i64>,
        pos: Array2<i64>,
        past: &[(DynValue, DynValue)],
        keep: Keep,
    ) -> Result<(Array3<f32>, Layers), DecoderError> {
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::with_capacity(3 + 2 * past.len());
        inputs.push(("input_ids".into(), Tensor::from_array(ids).map_err(rt)?.into()));
        inputs.push(("attention_mask".into(), Tensor::from_array(mask).map_err(rt)?.into()));
        inputs.push(("position_ids".into(), Tensor::from_array(pos).map_err(rt)?.into()));
        for ((kn, vn), (k, v)) in self.past_names.iter().zip(past) {
            inputs.push((Cow::Borrowed(kn.as_str()), SessionInputValue::from(k)));
            inputs.push((Cow::Borrowed(vn.as_str()), SessionInputValue::from(v)));
        }
        let start = Instant::now();
        let mut outputs = self.session.run(inputs).map_err(rt)?;
        self.model_time += start.elapsed();
        self.calls += 1;
        let logits = {
            let all = outputs["logits"].try_extract_array::<f32>().map_err(rt)?;
            let all = all.into_dimensionality::<Ix3>().map_err(rt)?;
            match keep {
                Keep::All => all.to_owned(),
                Keep::Last => {
                    let len = all.shape()[1];
                    if len == 0 {
                        return Err(DecoderError::Runtime("the logits have no position".into()));
                    }
                    all.slice(s![.., len - 1..len, ..]).to_owned()
                }
            }
        };
        let mut present = Vec::with_capacity(self.present_names.len());
        for (kn, vn) in &self.present_names {
            let missing = |n: &str| DecoderError::Runtime(format!("the graph returned no {n}"));
            let k = outputs.remove(kn).ok_or_else(|| missing(kn))?;
            let v = outputs.remove(vn).ok_or_else(|| missing(vn))?;
            present.push((k, v));
        }
        Ok((logits, present))
    }

    fn empty_past(&self, rows: usize) -> Result<Layers, DecoderError> {
        let shape = (rows, self.num_heads, 0, self.head_dim);
        let empty = || -> Result<DynValue, DecoderError> {
            Ok(Tensor::from_array(Array4::<f32>::zeros(shape)).map_err(rt)?.into_dyn())
        };
        self.past_names.iter().map(|_| Ok((empty()?, empty()?))).collect()
    }

    fn prefill_keep(
        &mut self,
        prompts: &[Vec<u32>],
        keep: Keep,
    ) -> Result<(KvCache, Array3<f32>), DecoderError> {
        let rows = prompts.len();
        let len = prompts.iter().map(Vec::len).max().unwrap_or(0);
        if rows == 0 || prompts.iter().any(Vec::is_empty) {
            return Err(DecoderError::Call("prefill needs at least one prompt and no empty prompt".into()));
        }
        let mut ids = Array2::<i64>::from_elem((rows, len), i64::from(self.pad_id));
        let mut mask = Array2::<i64>::zeros((rows, len));
        let mut pos = Array2::<i64>::zeros((rows, len));
        for (r, p) in prompts.iter().enumerate() {
            let off = len - p.len();
            for (j, &t) in p.iter().enumerate() {
                ids[[r, off + j]] = i64::from(t);
                mask[[r, off + j]] = 1;
                pos[[r, off + j]] = j as i64;
            }
        }
        let cache_mask: Vec<Vec<i64>> = mask.rows().into_iter().map(|r| r.to_vec()).collect();
        let past = self.empty_past(rows)?;
        let (logits, present) = self.run(ids, mask, pos, &past, keep)?;
        let next_pos = prompts.iter().map(|p| p.len() as i64).collect();
        Ok((KvCache { layers: present, mask: cache_mask, next_pos }, logits))
    }

    /// Runs the prompts (left-padded into one batch) and returns the cache and, per row, the logits at every
    /// position (`[rows, len, vocab]`, the padding positions at the left of shorter prompts included).
    pub fn prefill_all(&mut self, prompts: &[Vec<u32>]) -> Result<(KvCache, Array3<f32>), DecoderError> {
        self.prefill_keep(prompts, Keep::All)
    }

    /// Like [`prefill_all`](Self::prefill_all) but returns only each row's last logits (`[rows, vocab]`).
    pub fn prefill(&mut self, prompts: &[Vec<u32>]) -> Result<(KvCache, Array2<f32>), DecoderError> {
        let (cache, logits) = self.prefill_keep(prompts, Keep::Last)?;
        Ok((cache, logits.index_axis_move(Axis(1), 0)))
    }

    /// Feeds one token per row and returns the next logits (`[rows, vocab]`).
    pub fn step(&mut self, cache: &mut KvCache, tokens: &[u32]) -> Result<Array2<f32>, DecoderError> {
        let rows = cache.rows();
        if tokens.len() != rows {
            return Err(DecoderError::Call(format!("step got {} tokens for {rows} rows", tokens.len())));
        }
        let ids = Array2::from_shape_fn((rows, 1), |(r, _)| i64::from(tokens[r]));
        let past_len = cache.past_len() + 1;
        let mask =
            Array2::from_shape_fn((rows, past_len), |(r, j)| cache.mask[r].get(j).copied().unwrap_or(1));
        let pos = Array2::from_shape_fn((rows, 1), |(r, _)| cache.next_pos[r]);
        let (logits, present) = self.run(ids, mask, pos, &cache.layers, Keep::Last)?;
        cache.layers = present;
        for m in &mut cache.mask {
            m.push(1);
        }
        for p in &mut cache.next_pos {
            *p += 1;
        }
        Ok(logits.index_axis_move(Axis(1), 0))
    }
}
