//! The `mav-lm` evaluator: the paper's decoder-only text model, run with a batched KV cache.
//!
//! Each request becomes a prompt written by the protocol module ([`prompt`]); the batch is prefilled in one
//! call and then decoded one token per row per call, rows leaving the batch as they finish. Constrained
//! decoding ([`constrained`]) lets the rules choose what may be written; free decoding ([`free`]) lets the
//! model write anything, then the protocol's parser classifies its hallucinations.

pub mod constrained;
pub mod free;
pub mod prompt;
pub mod tokens;

use std::time::{Duration, Instant};

use constrained::{ConstrainedRow, softmax_over};
use free::FreeRow;
use prompt::{PromptOptions, layout_for, prompt_text, tracked_lines};
use tokens::FormatTokens;

use super::evaluator::{
    DecodeMode, EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, Hallucination, MoveValue,
    PredictedState,
};
use super::onnx::decoder::KvDecoder;
use super::onnx::session::{OnnxSession, SessionError, SessionOptions};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::mav::command::{Layout, Role};
use crate::mav::response::{HallucinationKind, parse_response};
use crate::mav::state::MavState;
use crate::model::{ModelError, ModelPackage};

/// A decoding row of either kind.
trait Row {
    fn next(&mut self, logits: &[f32]) -> Option<u32>;
    fn finished(&self) -> bool;
}

impl Row for ConstrainedRow {
    fn next(&mut self, logits: &[f32]) -> Option<u32> {
        ConstrainedRow::next(self, logits)
    }
    fn finished(&self) -> bool {
        ConstrainedRow::finished(self)
    }
}

impl Row for FreeRow {
    fn next(&mut self, logits: &[f32]) -> Option<u32> {
        FreeRow::next(self, logits)
    }
    fn finished(&self) -> bool {
        FreeRow::finished(self)
    }
}

enum AnyRow {
    Constrained(ConstrainedRow),
    Free(FreeRow),
}

impl AnyRow {
    fn row(&mut self) -> &mut dyn Row {
        match self {
            AnyRow::Constrained(r) => r,
            AnyRow::Free(r) => r,
        }
    }
}

/// A request ready for the model.
struct Job {
    index: usize,
    layout: Layout,
    prompt: Vec<u32>,
    row: AnyRow,
    /// Hit the context before finishing.
    truncated: bool,
}

/// A `mav-lm` package on one ONNX Runtime session.
#[derive(Debug)]
pub struct MavLmEvaluator {
    decoder: KvDecoder,
    tokens: FormatTokens,
    buckets: Buckets,
    context: usize,
    options: PromptOptions,
    status: super::device::DeviceStatus,
}

impl MavLmEvaluator {
    /// Opens the package (graph checked against mav.json, vocabulary against mavboard's).
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<MavLmEvaluator, SessionError> {
        let session = OnnxSession::open(package, options)?;
        let tokenizer = super::load::check_tokenizer(package)?;
        let m = &package.manifest;
        let mismatch = |field: &str, expected: String, found: String| {
            SessionError::Model(ModelError::Mismatch { dir: package.dir.clone(), field: field.into(), expected, found })
        };
        let buckets = Buckets::new(m.num_buckets as u32)
            .map_err(|e| mismatch("mav.json num_buckets", "a valid bucket count".into(), e.to_string()))?;
        let eos = m.eos_token_id.unwrap_or(tokenizer.eos_id());
        let tokens = FormatTokens::new(tokenizer.clone(), &m.value_token_ids, eos)
            .map_err(|e| mismatch("mav.json value_token_ids", "<ctrl0>.. in bucket order".into(), e.to_string()))?;
        let decoder = KvDecoder::new(
            session.session,
            m.num_layers,
            m.num_heads,
            m.head_dim,
            m.pad_token_id.unwrap_or(tokenizer.pad_id()),
        );
        Ok(MavLmEvaluator {
            decoder,
            tokens,
            buckets,
            context: m.context_length,
            options: PromptOptions::default(),
            status: session.status,
        })
    }

    /// The device status of the session.
    pub fn status(&self) -> &super::device::DeviceStatus {
        &self.status
    }

    /// Changes how requests are written as prompts.
    pub fn set_prompt_options(&mut self, options: PromptOptions) {
        self.options = options;
    }

    /// Summed time inside `Session::run` and the number of calls.
    pub fn model_time(&self) -> (Duration, u64) {
        (self.decoder.model_time, self.decoder.calls)
    }

    fn job(&self, index: usize, req: &EvalRequest<ChessState>) -> Result<Option<Job>, EvalError> {
        let backend = |e: &dyn std::fmt::Display| EvalError::Backend(e.to_string());
        let legal = req.state.legal_actions();
        if req.mode == DecodeMode::Constrained && legal.is_empty() {
            return Ok(None);
        }
        let layout = layout_for(req, &self.options).map_err(|e| backend(&e))?;
        let text = prompt_text(&layout, req).map_err(|e| backend(&e))?;
        let prompt = self.tokens.tokenizer.encode(&text);
        if prompt.len() >= self.context {
            return Err(EvalError::ContextTooLong { needed: prompt.len() + 1, context: self.context });
        }
        let row = match req.mode {
            DecodeMode::Free => AnyRow::Free(FreeRow::new(&self.tokens, self.context - prompt.len())),
            DecodeMode::Constrained => {
                let mut prefix = Vec::new();
                for l in tracked_lines(&layout, &req.state).map_err(|e| backend(&e))? {
                    prefix.extend(self.tokens.text(&l).map_err(|e| backend(&e))?);
                    prefix.extend(self.tokens.newline.iter().copied());
                }
                let mut candidates = Vec::with_capacity(legal.len());
                for a in &legal {
                    let t = req.state.action_to_text(*a);
                    candidates.push(self.tokens.move_id(&t).ok_or_else(|| EvalError::Unsupported {
                        what: format!("write the move {t}"),
                        why: "the model's vocabulary has no token for it".into(),
                    })?);
                }
                let after = req.want_next_state.then_some(self.options.after_format);
                let row = ConstrainedRow::new(
                    &self.tokens,
                    prefix,
                    req.top_k,
                    candidates,
                    req.want_best_action || req.want_next_state,
                    after,
                )
                .map_err(|e| backend(&e))?;
                AnyRow::Constrained(row)
            }
        };
        Ok(Some(Job { index, layout, prompt, row, truncated: false }))
    }

    /// Runs the jobs to the end: one prefill, then one token per unfinished row per call.
    fn decode(&mut self, jobs: &mut [Job]) -> Result<(), String> {
        let prompts: Vec<Vec<u32>> = jobs.iter().map(|j| j.prompt.clone()).collect();
        let (mut cache, mut logits) = self.decoder.prefill(&prompts)?;
        let mut active: Vec<usize> = (0..jobs.len()).collect();
        let mut lengths: Vec<usize> = jobs.iter().map(|j| j.prompt.len()).collect();
        loop {
            let mut keep = Vec::with_capacity(active.len());
            let mut feed = Vec::with_capacity(active.len());
            for (r, &j) in active.iter().enumerate() {
                let row_logits = logits.row(r);
                let owned;
                let slice = match row_logits.as_slice() {
                    Some(s) => s,
                    None => {
                        owned = row_logits.to_vec();
                        &owned
                    }
                };
                let job = &mut jobs[j];
                let Some(t) = job.row.row().next(slice) else { continue };
                if job.row.row().finished() {
                    continue;
                }
                if lengths[j] + 1 >= self.context {
                    job.truncated = true;
                    continue;
                }
                lengths[j] += 1;
                keep.push(r);
                feed.push(t);
            }
            if keep.is_empty() {
                return Ok(());
            }
            if keep.len() != active.len() {
                cache.keep_rows(&keep);
                active = keep.iter().map(|&r| active[r]).collect();
            }
            logits = self.decoder.step(&mut cache, &feed)?;
        }
    }

    fn finish(&self, req: &EvalRequest<ChessState>, job: Job, timing: EvalTiming) -> Result<EvalResult<ChessState>, EvalError> {
        let legal = req.state.legal_actions();
        let mut result = EvalResult {
            moves: Vec::new(),
            best_action: None,
            next_state: None,
            tracked_state: None,
            terminal: req.state.outcome(),
            raw_text: String::new(),
            hallucinations: Vec::new(),
            timing,
        };
        let dist = |probs: Vec<f64>| {
            ValueDistribution::from_probs(self.buckets, probs).map_err(|e| EvalError::Backend(e.to_string()))
        };
        match job.row {
            AnyRow::Constrained(row) => {
                if job.truncated {
                    return Err(EvalError::ContextTooLong { needed: self.context + 1, context: self.context });
                }
                result.raw_text = self.tokens.tokenizer.decode(&row.generated).unwrap_or_default();
                for (i, probs) in row.written {
                    let a = legal[i];
                    result.moves.push(MoveValue { action: a, text: req.state.action_to_text(a), dist: dist(probs)? });
                }
                result.best_action = row.best.map(|(p, _)| p);
                if req.want_next_state {
                    let text = self.tokens.tokenizer.decode(&row.state_tokens).unwrap_or_default();
                    let state = ChessState::from_mav_text(req.state.kind(), self.options.after_format, &text).ok();
                    if let (Some(best), Some(predicted)) = (result.best_action.as_ref(), state.as_ref()) {
                        // The rules' state after the chosen move, to count a wrong prediction.
                        let j = best.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(j, _)| j);
                        if let Some(mv) = j.and_then(|j| result.moves.get(j))
                            && let Ok(truth) = req.state.play(mv.action)
                            && truth.hash64() != predicted.hash64()
                        {
                            result.hallucinations.push(Hallucination {
                                kind: "wrong next state".into(),
                                detail: format!("after {} the model wrote {text}", mv.text),
                            });
                        }
                    }
                    result.next_state = Some(PredictedState { text, state });
                }
            }
            AnyRow::Free(row) => {
                let text = self.tokens.tokenizer.decode(&row.generated).unwrap_or_default();
                let first_line = 2 + job.layout.input_count();
                let parsed = parse_response(&job.layout, &req.state, self.buckets, &text, first_line);
                for (a, bucket) in &parsed.top {
                    let t = req.state.action_to_text(*a);
                    let recorded = row
                        .valued
                        .iter()
                        .find(|(id, _)| self.tokens.tokenizer.token_of(*id) == Some(t.as_str()))
                        .map(|(_, p)| p.clone());
                    let d = match recorded {
                        Some(p) => dist(p)?,
                        None => ValueDistribution::one_hot(self.buckets, *bucket)
                            .map_err(|e| EvalError::Backend(e.to_string()))?,
                    };
                    result.moves.push(MoveValue { action: *a, text: t, dist: d });
                }
                if (req.want_best_action || req.want_next_state)
                    && let Some(l) = &row.best_logits
                    && !result.moves.is_empty()
                {
                    let ids: Vec<u32> =
                        result.moves.iter().filter_map(|m| self.tokens.move_id(&m.text)).collect();
                    if ids.len() == result.moves.len() {
                        result.best_action = Some(softmax_over(&ids, l));
                    }
                }
                for (role, written) in &parsed.states {
                    let predicted = |f| PredictedState {
                        text: written.clone(),
                        state: ChessState::from_mav_text(req.state.kind(), f, written).ok(),
                    };
                    match role {
                        Role::After(f) if result.next_state.is_none() => result.next_state = Some(predicted(*f)),
                        Role::Current(f) if req.previous.is_some() && result.tracked_state.is_none() => {
                            result.tracked_state = Some(predicted(*f));
                        }
                        _ => {}
                    }
                }
                result.hallucinations = parsed
                    .hallucinations
                    .iter()
                    .map(|h| Hallucination { kind: kind_name(&h.kind).into(), detail: h.to_string() })
                    .collect();
                if job.truncated {
                    result.hallucinations.push(Hallucination {
                        kind: "too long".into(),
                        detail: format!("the output reached the model's context of {} tokens", self.context),
                    });
                }
                result.raw_text = text;
            }
        }
        Ok(result)
    }
}

/// A short class name for a hallucination (what the UI counts and filters by).
pub fn kind_name(kind: &HallucinationKind) -> &'static str {
    match kind {
        HallucinationKind::MalformedLine { .. } => "malformed line",
        HallucinationKind::UnknownToken { .. } => "unknown token",
        HallucinationKind::IllegalMove { .. } => "illegal move",
        HallucinationKind::DuplicateMove { .. } => "duplicate move",
        HallucinationKind::MissingLegalMoves { .. } => "missing legal moves",
        HallucinationKind::WrongMoveCount { .. } => "wrong move count",
        HallucinationKind::WrongState { .. } => "wrong state",
        HallucinationKind::WrongOutcome { .. } => "wrong outcome",
        HallucinationKind::MissingLine => "missing line",
        HallucinationKind::UnexpectedLine => "unexpected line",
    }
}

impl Evaluator<ChessState> for MavLmEvaluator {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        let queued = Instant::now();
        let mut out: Vec<Option<Result<EvalResult<ChessState>, EvalError>>> = vec![None; requests.len()];
        let mut jobs = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            match self.job(i, r) {
                Ok(Some(job)) => jobs.push(job),
                Ok(None) => {
                    out[i] = Some(Ok(EvalResult {
                        moves: Vec::new(),
                        best_action: None,
                        next_state: None,
                        tracked_state: None,
                        terminal: r.state.outcome(),
                        raw_text: String::new(),
                        hallucinations: Vec::new(),
                        timing: EvalTiming::default(),
                    }))
                }
                Err(e) => out[i] = Some(Err(e)),
            }
        }
        if !jobs.is_empty() {
            let queue = queued.elapsed();
            let before = self.decoder.model_time;
            let decoded = self.decode(&mut jobs);
            let model = (self.decoder.model_time - before) / jobs.len() as u32;
            match decoded {
                Ok(()) => {
                    for job in jobs {
                        let i = job.index;
                        let generated = match &job.row {
                            AnyRow::Constrained(r) => r.generated.len(),
                            AnyRow::Free(r) => r.generated.len(),
                        };
                        let timing = EvalTiming { queue, model, tokens: job.prompt.len() + generated };
                        out[i] = Some(self.finish(&requests[i], job, timing));
                    }
                }
                Err(e) => {
                    for job in jobs {
                        out[job.index] = Some(Err(EvalError::Backend(e.clone())));
                    }
                }
            }
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err(EvalError::Backend("request was not answered".into()))))
            .collect()
    }
}
