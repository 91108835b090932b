//! Batched KV-cache decoding for the decoder-with-past layout (`input_ids`, `attention_mask`,
//! `position_ids`, `past_key_values.N.key/value` → `logits`, `present.N.key/value`).
//!
//! Prompts of different lengths are left-padded; the attention mask hides the padding and position ids
//! count only real tokens, so a padded row computes exactly what it would alone. Rows that finish are
//! dropped from the cache ([`KvCache::keep_rows`]) so the batch shrinks as requests complete.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use ndarray::{Array2, Array4, ArrayD, Axis, Ix3, Ix4};
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;

/// Keys and values of every layer.
type LayerCache = Vec<(Array4<f32>, Array4<f32>)>;

/// The cache of one batch: past keys and values per layer, and per row its attention mask and next position.
#[derive(Debug, Clone)]
pub struct KvCache {
    layers: LayerCache,
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

    /// Keeps only `rows` (indices into the current batch, in the order given).
    pub fn keep_rows(&mut self, rows: &[usize]) {
        for (k, v) in &mut self.layers {
            *k = k.select(Axis(0), rows);
            *v = v.select(Axis(0), rows);
        }
        self.mask = rows.iter().map(|&r| self.mask[r].clone()).collect();
        self.next_pos = rows.iter().map(|&r| self.next_pos[r]).collect();
    }
}

/// A decoder-with-past graph and its shape facts.
#[derive(Debug)]
pub struct KvDecoder {
    session: Session,
    num_layers: usize,
    num_heads: usize,
    head_dim: usize,
    pad_id: u32,
    /// Time spent inside `Session::run`, summed.
    pub model_time: Duration,
    /// Number of `Session::run` calls.
    pub calls: u64,
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
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
        KvDecoder { session, num_layers, num_heads, head_dim, pad_id, model_time: Duration::ZERO, calls: 0 }
    }

    fn run(
        &mut self,
        ids: Array2<i64>,
        mask: Array2<i64>,
        pos: Array2<i64>,
        past: &[(Array4<f32>, Array4<f32>)],
    ) -> Result<(ArrayD<f32>, LayerCache), String> {
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> =
            Vec::with_capacity(3 + 2 * self.num_layers);
        inputs.push(("input_ids".into(), Tensor::from_array(ids).map_err(err)?.into()));
        inputs.push(("attention_mask".into(), Tensor::from_array(mask).map_err(err)?.into()));
        inputs.push(("position_ids".into(), Tensor::from_array(pos).map_err(err)?.into()));
        for (i, (k, v)) in past.iter().enumerate() {
            inputs.push((
                format!("past_key_values.{i}.key").into(),
                Tensor::from_array(k.clone()).map_err(err)?.into(),
            ));
            inputs.push((
                format!("past_key_values.{i}.value").into(),
                Tensor::from_array(v.clone()).map_err(err)?.into(),
            ));
        }
        let start = Instant::now();
        let outputs = self.session.run(inputs).map_err(err)?;
        self.model_time += start.elapsed();
        self.calls += 1;
        let logits = outputs["logits"].try_extract_array::<f32>().map_err(err)?.to_owned();
        let mut present = Vec::with_capacity(self.num_layers);
        for i in 0..self.num_layers {
            let k = outputs[format!("present.{i}.key").as_str()].try_extract_array::<f32>().map_err(err)?;
            let v = outputs[format!("present.{i}.value").as_str()].try_extract_array::<f32>().map_err(err)?;
            present.push((
                k.to_owned().into_dimensionality::<Ix4>().map_err(err)?,
                v.to_owned().into_dimensionality::<Ix4>().map_err(err)?,
            ));
        }
        Ok((logits, present))
    }

    fn empty_past(&self, rows: usize) -> LayerCache {
        let shape = (rows, self.num_heads, 0, self.head_dim);
        (0..self.num_layers).map(|_| (Array4::zeros(shape), Array4::zeros(shape))).collect()
    }

    /// Runs the prompts (left-padded into one batch) and returns the cache and, per row, the logits at every
    /// prompt position (`[rows, len, vocab]`, padding positions included at the left).
    pub fn prefill_all(&mut self, prompts: &[Vec<u32>]) -> Result<(KvCache, ndarray::Array3<f32>), String> {
        let rows = prompts.len();
        let len = prompts.iter().map(Vec::len).max().unwrap_or(0);
        if rows == 0 || len == 0 {
            return Err("prefill needs at least one non-empty prompt".into());
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
        let past = self.empty_past(rows);
        let (logits, present) = self.run(ids, mask, pos, &past)?;
        let logits = logits.into_dimensionality::<Ix3>().map_err(err)?;
        let next_pos = prompts.iter().map(|p| p.len() as i64).collect();
        Ok((KvCache { layers: present, mask: cache_mask, next_pos }, logits))
    }

    /// Like [`prefill_all`](Self::prefill_all) but returns only each row's last logits (`[rows, vocab]`).
    pub fn prefill(&mut self, prompts: &[Vec<u32>]) -> Result<(KvCache, Array2<f32>), String> {
        let (cache, logits) = self.prefill_all(prompts)?;
        let last = logits.shape()[1] - 1;
        Ok((cache, logits.index_axis(Axis(1), last).to_owned()))
    }

    /// Feeds one token per row and returns the next logits (`[rows, vocab]`).
    pub fn step(&mut self, cache: &mut KvCache, tokens: &[u32]) -> Result<Array2<f32>, String> {
        let rows = cache.rows();
        if tokens.len() != rows {
            return Err(format!("step got {} tokens for {rows} rows", tokens.len()));
        }
        let ids = Array2::from_shape_fn((rows, 1), |(r, _)| i64::from(tokens[r]));
        for m in &mut cache.mask {
            m.push(1);
        }
        let past_len = cache.past_len();
        let mask = Array2::from_shape_fn((rows, past_len), |(r, j)| cache.mask[r][j]);
        let pos = Array2::from_shape_fn((rows, 1), |(r, _)| cache.next_pos[r]);
        let (logits, present) = self.run(ids, mask, pos, &cache.layers)?;
        cache.layers = present;
        for p in &mut cache.next_pos {
            *p += 1;
        }
        let logits = logits.into_dimensionality::<Ix3>().map_err(err)?;
        Ok(logits.index_axis(Axis(1), 0).to_owned())
    }
}
