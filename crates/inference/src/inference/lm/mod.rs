//! The `mav-lm` evaluator: the paper's decoder-only text model, run with a batched KV cache.
//!
//! Each request becomes a prompt written by the protocol module ([`prompt`]); the batch is prefilled in one
//! call and then decoded one token per row per call, rows leaving the batch as they finish. Constrained
//! decoding ([`constrained`]) lets the rules choose what may be written; free decoding ([`free`]) lets the
//! model write anything, then the protocol's parser classifies its hallucinations.

pub mod constrained;
pub mod cursor;
pub mod free;
pub mod prompt;
pub mod result;
pub mod tokens;
pub mod trace_rules;

use std::time::Duration;

use constrained::ConstrainedRow;
use free::FreeRow;
use prompt::{PromptOptions, after_format, layout_for, prompt_text, tracked_lines};
use result::{ResultContext, constrained_result, empty_result, free_result};
use tokens::FormatTokens;

use super::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator};
use super::onnx::decoder::{DecoderError, KvDecoder};
use super::onnx::session::{OnnxSession, SessionError, SessionOptions};
use super::remote::RemoteError;
use super::remote::openai::OpenAiLm;
use crate::mav::buckets::Buckets;
use crate::mav::command::Layout;
use crate::mav::state::MavState;
use crate::model::ModelPackage;
use cursor::Cursor;

/// A decoding row of either mode.
#[derive(Debug)]
enum AnyRow {
    Constrained(Box<ConstrainedRow>),
    Free(FreeRow),
}

impl AnyRow {
    fn next(&mut self, logits: &[f32]) -> Option<u32> {
        match self {
            AnyRow::Constrained(r) => r.next(logits),
            AnyRow::Free(r) => r.next(logits),
        }
    }

    fn finished(&self) -> bool {
        match self {
            AnyRow::Constrained(r) => r.finished(),
            AnyRow::Free(r) => r.finished(),
        }
    }

    /// Whether the next token needs no logits (a fixed token of a constrained row, or nothing left).
    fn forced(&self) -> bool {
        match self {
            AnyRow::Constrained(r) => r.forced() || r.finished(),
            AnyRow::Free(r) => r.finished(),
        }
    }

    fn generated(&self) -> usize {
        match self {
            AnyRow::Constrained(r) => r.generated.len(),
            AnyRow::Free(r) => r.generated.len(),
        }
    }
}

/// A request ready for the model.
#[derive(Debug)]
struct Job<A> {
    index: usize,
    layout: Layout,
    /// The request's legal moves (the candidates of a constrained row, in order).
    legal: Vec<A>,
    prompt: Vec<u32>,
    row: AnyRow,
    /// Hit the context before finishing.
    truncated: bool,
}

/// Where a `mav-lm` runs: an ONNX Runtime session with a KV cache, or an LLM engine's completions API.
#[derive(Debug)]
enum Engine {
    Local(KvDecoder),
    Remote { server: Box<OpenAiLm>, waited: Duration, requests: u64 },
}

/// A `mav-lm` package on one ONNX Runtime session or on an LLM engine (mav.json `remote` with
/// `"protocol": "openai-completions"`).
#[derive(Debug)]
pub struct MavLmEvaluator {
    engine: Engine,
    tokens: FormatTokens,
    buckets: Buckets,
    context: usize,
    /// The logits' width (mav.json `vocab_size`).
    vocab: usize,
    /// The games the model was trained on (the headers it knows).
    games: Vec<crate::game::GameKind>,
    options: PromptOptions,
    status: super::device::DeviceStatus,
    /// Whether [`Completer::complete`](super::completer::Completer::complete) (trace writing) keeps a move
    /// from being listed twice on one line; on by default.
    repeat_guard: bool,
}

impl MavLmEvaluator {
    /// Turns the repeat guard of trace writing on or off (see [`FreeRow::without_repeated_moves`]): off,
    /// traces are plain greedy decoding, as in the paper.
    pub fn set_repeat_guard(&mut self, on: bool) {
        self.repeat_guard = on;
    }

    /// Opens the package: its model.onnx in a session, or its server when mav.json has a `remote` section.
    pub fn load(
        package: &ModelPackage,
        options: &SessionOptions,
    ) -> Result<MavLmEvaluator, super::LoadError> {
        if package.manifest.remote.is_none() {
            return Ok(MavLmEvaluator::open(package, options)?);
        }
        let tokenizer = super::screen::check_tokenizer(package).map_err(SessionError::Model)?;
        let server = OpenAiLm::connect(package, options.device, &tokenizer)
            .map_err(|e| super::LoadError::Remote { dir: package.dir.clone(), error: Box::new(e) })?;
        let status = server.status().clone();
        let engine = Engine::Remote { server: Box::new(server), waited: Duration::ZERO, requests: 0 };
        Ok(MavLmEvaluator::with_engine(package, tokenizer, engine, status)?)
    }

    /// Opens the package's model.onnx (graph checked against mav.json, vocabulary against mavboard's).
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<MavLmEvaluator, SessionError> {
        let session = OnnxSession::open(package, options)?;
        let tokenizer = super::screen::check_tokenizer(package)?;
        let m = &package.manifest;
        let decoder = KvDecoder::new(
            session.session,
            m.num_layers,
            m.num_heads,
            m.head_dim,
            m.pad_token_id.unwrap_or(tokenizer.pad_id()),
        );
        MavLmEvaluator::with_engine(package, tokenizer, Engine::Local(decoder), session.status)
    }

    fn with_engine(
        package: &ModelPackage,
        tokenizer: crate::mav::tokenizer::Tokenizer,
        engine: Engine,
        status: super::device::DeviceStatus,
    ) -> Result<MavLmEvaluator, SessionError> {
        let m = &package.manifest;
        let buckets = package.buckets()?;
        let eos = m.eos_token_id.unwrap_or(tokenizer.eos_id());
        let tokens = FormatTokens::new(tokenizer, &m.value_token_ids, eos).map_err(|e| {
            package.mismatch("mav.json value_token_ids", "<ctrl0>.. in bucket order", e.to_string())
        })?;
        Ok(MavLmEvaluator {
            engine,
            tokens,
            buckets,
            context: m.context_length,
            vocab: m.vocab_size,
            games: m.games.clone(),
            options: PromptOptions::default(),
            status,
            repeat_guard: true,
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

    /// Summed time inside `Session::run` (remote: waiting for the server) and the number of calls.
    pub fn model_time(&self) -> (Duration, u64) {
        match &self.engine {
            Engine::Local(d) => (d.model_time, d.calls),
            Engine::Remote { waited, requests, .. } => (*waited, *requests),
        }
    }

    /// The games the model was trained on (mav.json `games`).
    pub fn games(&self) -> &[crate::game::GameKind] {
        &self.games
    }

    fn job<S: MavState>(
        &self,
        index: usize,
        req: &EvalRequest<S>,
    ) -> Result<Option<Job<S::Action>>, EvalError> {
        let backend =
            |e: &dyn std::fmt::Display| EvalError::Backend(format!("the request cannot be written: {e}"));
        super::screen::check_game(&self.games, req.state.kind())?;
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
                    candidates.push(self.tokens.move_tokens(&t).ok_or_else(|| EvalError::Unsupported {
                        what: format!("write the move {t}"),
                        why: "the model's vocabulary cannot write it".into(),
                    })?);
                }
                let after = req.want_next_state.then(|| after_format(&req.state, &self.options));
                let row = ConstrainedRow::new(
                    &self.tokens,
                    prefix,
                    req.top_k,
                    candidates,
                    req.want_best_action || req.want_next_state,
                    after,
                )
                .map_err(|e| backend(&e))?;
                AnyRow::Constrained(Box::new(row))
            }
        };
        Ok(Some(Job { index, layout, legal, prompt, row, truncated: false }))
    }

    /// Runs the jobs to the end: one prefill, then one token per unfinished row per call.
    ///
    /// A row that finishes stays in the batch, fed padding whose output is ignored, until a quarter of the
    /// batch has finished (or it would run past the context): dropping rows copies the whole cache, so it is
    /// done a few times per batch rather than once per finished row.
    fn decode<A>(decoder: &mut KvDecoder, context: usize, jobs: &mut [Job<A>]) -> Result<(), DecoderError> {
        let prompts: Vec<Vec<u32>> = jobs.iter().map(|j| j.prompt.clone()).collect();
        let (mut cache, mut logits) = decoder.prefill(&prompts)?;
        // Per cache row: the job it decodes (None once finished) and the tokens it holds.
        let mut rows: Vec<(Option<usize>, usize)> =
            jobs.iter().enumerate().map(|(j, job)| (Some(j), job.prompt.len())).collect();
        let pad = decoder.pad_id();
        let mut scratch = Vec::new();
        loop {
            let mut feed = Vec::with_capacity(rows.len());
            for (r, (slot, len)) in rows.iter_mut().enumerate() {
                let Some(j) = *slot else {
                    feed.push(pad);
                    continue;
                };
                let row_logits = logits.row(r);
                let slice = match row_logits.as_slice() {
                    Some(s) => s,
                    None => {
                        scratch.clear();
                        scratch.extend(row_logits.iter().copied());
                        &scratch[..]
                    }
                };
                let job = &mut jobs[j];
                let next = job.row.next(slice);
                // Feeding a token puts it at position `len`; the model has positions 0..context.
                let truncated = next.is_some() && !job.row.finished() && *len >= context;
                job.truncated |= truncated;
                match next {
                    Some(t) if !job.row.finished() && !truncated => feed.push(t),
                    _ => {
                        *slot = None;
                        feed.push(pad);
                    }
                }
            }
            let done = rows.iter().filter(|(slot, _)| slot.is_none()).count();
            if done == rows.len() {
                return Ok(());
            }
            let at_edge = rows.iter().any(|(slot, len)| slot.is_none() && *len >= context);
            if done > 0 && (4 * done >= rows.len() || at_edge) {
                let keep: Vec<usize> = (0..rows.len()).filter(|&r| rows[r].0.is_some()).collect();
                cache.keep_rows(&keep)?;
                rows = keep.iter().map(|&r| rows[r]).collect();
                feed = keep.iter().map(|&r| feed[r]).collect();
            }
            for (_, len) in &mut rows {
                *len += 1;
            }
            logits = decoder.step(&mut cache, &feed)?;
        }
    }

    /// Runs the jobs against a server, up to its `max_in_flight` at once, each on its own [`Cursor`];
    /// returns the time waited and the requests made, summed over the jobs.
    fn decode_remote<A>(
        server: &OpenAiLm,
        vocab: usize,
        context: usize,
        jobs: &mut [Job<A>],
    ) -> (Vec<Option<Result<(), RemoteError>>>, Duration, u64) {
        let lanes = server.max_in_flight().clamp(1, jobs.len().max(1));
        let mut work: Vec<(usize, &mut AnyRow, &[u32], &mut bool)> = jobs
            .iter_mut()
            .enumerate()
            .map(|(i, j)| (i, &mut j.row, j.prompt.as_slice(), &mut j.truncated))
            .collect();
        let per = work.len().div_ceil(lanes).max(1);
        let mut results: Vec<Option<Result<(), RemoteError>>> = vec![None; work.len()];
        let (mut waited, mut requests) = (Duration::ZERO, 0u64);
        std::thread::scope(|scope| {
            let handles: Vec<_> = work
                .chunks_mut(per)
                .map(|lane| {
                    scope.spawn(move || {
                        let mut out = Vec::with_capacity(lane.len());
                        for (i, row, prompt, truncated) in lane.iter_mut() {
                            let mut cursor =
                                Cursor::new(server, prompt.to_vec(), vocab, context, server.chunk());
                            let r = drive(row, &mut cursor, context).map(|t| **truncated = t);
                            out.push((*i, r, cursor.waited, u64::from(cursor.requests)));
                        }
                        out
                    })
                })
                .collect();
            // A lane that panicked leaves its jobs unanswered (None).
            for lane in handles.into_iter().filter_map(|h| h.join().ok()) {
                for (i, r, w, n) in lane {
                    results[i] = Some(r);
                    waited += w;
                    requests += n;
                }
            }
        });
        (results, waited, requests)
    }

    fn finish<S: MavState>(
        &self,
        req: &EvalRequest<S>,
        job: Job<S::Action>,
        timing: EvalTiming,
    ) -> Result<EvalResult<S>, EvalError> {
        let cx = ResultContext { tokens: &self.tokens, buckets: self.buckets, context: self.context };
        match job.row {
            AnyRow::Constrained(_) if job.truncated => {
                Err(EvalError::ContextTooLong { needed: self.context + 1, context: self.context })
            }
            AnyRow::Constrained(row) => {
                constrained_result(cx, req, &job.legal, *row, after_format(&req.state, &self.options), timing)
            }
            AnyRow::Free(row) => free_result(cx, req, &job.layout, row, job.truncated, timing),
        }
    }
}

/// Decodes one row against a server to its end: fixed tokens are fed without asking, every decision reads
/// the cursor's log-probabilities. Returns whether the row hit the context before finishing (the same
/// rule as the local decoder's).
fn drive(row: &mut AnyRow, cursor: &mut Cursor<'_>, context: usize) -> Result<bool, RemoteError> {
    let mut logits = Vec::new();
    loop {
        let next = if row.forced() {
            row.next(&[])
        } else {
            cursor.logits(&mut logits)?;
            row.next(&logits)
        };
        let truncated = next.is_some() && !row.finished() && cursor.len() >= context;
        match next {
            Some(t) if !row.finished() && !truncated => cursor.feed(t),
            _ => return Ok(truncated),
        }
    }
}

impl<S: MavState> Evaluator<S> for MavLmEvaluator {
    /// Evaluates positions of any game the package was trained on; a position of another game is answered
    /// with [`EvalError::Unsupported`] naming its game and the package's games.
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = super::answers::BatchAnswers::new(requests.len());
        let mut jobs = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            match self.job(i, r) {
                Ok(Some(job)) => jobs.push(job),
                Ok(None) => out[i] = Some(Ok(empty_result(r, EvalTiming::default()))),
                Err(e) => out[i] = Some(Err(e)),
            }
        }
        if !jobs.is_empty() {
            let queue = out.queue_time();
            let (decoded, model) = match &mut self.engine {
                Engine::Local(decoder) => {
                    let before = decoder.model_time;
                    let decoded = MavLmEvaluator::decode(decoder, self.context, &mut jobs);
                    (decoded, (decoder.model_time - before) / jobs.len() as u32)
                }
                Engine::Remote { server, waited, requests } => {
                    let (results, w, n) =
                        MavLmEvaluator::decode_remote(server, self.vocab, self.context, &mut jobs);
                    *waited += w;
                    *requests += n;
                    let model = w / jobs.len() as u32;
                    let mut failed = Vec::new();
                    for (job, r) in jobs.iter().zip(results) {
                        match r {
                            Some(Ok(())) => {}
                            Some(Err(e)) => failed.push((job.index, EvalError::Server(e.to_string()))),
                            None => failed
                                .push((job.index, EvalError::Backend("a request thread panicked".into()))),
                        }
                    }
                    for (i, e) in failed {
                        out[i] = Some(Err(e));
                    }
                    jobs.retain(|j| out[j.index].is_none());
                    (Ok(()), model)
                }
            };
            match decoded {
                Ok(()) => {
                    for job in jobs {
                        let i = job.index;
                        let tokens = job.prompt.len() + job.row.generated();
                        out[i] = Some(self.finish(&requests[i], job, EvalTiming { queue, model, tokens }));
                    }
                }
                Err(e) => {
                    for job in jobs {
                        out[job.index] = Some(Err(EvalError::Backend(e.to_string())));
                    }
                }
            }
        }
        out.finish()
    }
}

impl super::completer::Completer for MavLmEvaluator {
    /// Free decoding of a raw prompt (no MAV header written for it): greedy until `<eos>` or the context,
    /// with the repeat guard unless [`MavLmEvaluator::set_repeat_guard`] turned it off.
    fn complete(&mut self, prompt: &str) -> Result<super::completer::Completion, EvalError> {
        let ids = self.tokens.tokenizer.encode(prompt);
        if ids.len() >= self.context {
            return Err(EvalError::ContextTooLong { needed: ids.len() + 1, context: self.context });
        }
        let max_new = self.context - ids.len();
        let backend = |e: DecoderError| EvalError::Backend(e.to_string());
        let mut row = FreeRow::new(&self.tokens, max_new);
        if self.repeat_guard {
            row = row.without_repeated_moves();
        }
        match &mut self.engine {
            Engine::Local(decoder) => {
                let (mut cache, mut logits) = decoder.prefill(std::slice::from_ref(&ids)).map_err(backend)?;
                let mut scratch: Vec<f32> = Vec::new();
                loop {
                    scratch.clear();
                    scratch.extend(logits.row(0).iter().copied());
                    match row.next(&scratch) {
                        Some(t) if !row.finished() => {
                            logits = decoder.step(&mut cache, &[t]).map_err(backend)?
                        }
                        _ => break,
                    }
                }
            }
            Engine::Remote { server, waited, requests } => {
                let mut cursor = Cursor::new(server.as_ref(), ids, self.vocab, self.context, server.chunk());
                let mut any = AnyRow::Free(row);
                let driven = drive(&mut any, &mut cursor, self.context);
                *waited += cursor.waited;
                *requests += u64::from(cursor.requests);
                driven.map_err(|e| EvalError::Server(e.to_string()))?;
                row = match any {
                    AnyRow::Free(r) => r,
                    AnyRow::Constrained(_) => unreachable!("the row was built free"),
                };
            }
        }
        let text =
            self.tokens.tokenizer.decode(&row.generated).map_err(|e| {
                EvalError::Backend(format!("the model wrote tokens that cannot be decoded: {e}"))
            })?;
        Ok(super::completer::Completion {
            text,
            tokens: row.generated.len(),
            truncated: row.generated.len() >= max_new,
            repeats_avoided: row.repeats_avoided,
            decoding: super::completer::TraceDecoding::Free,
        })
    }
}

impl MavLmEvaluator {
    /// Writes an internal-search trace after `prompt` (the explicit trace's prompt from `root`, laid out by
    /// `cfg`) with rules-constrained decoding ([`trace_rules`]): legal moves and the rules' states, the
    /// model's values and choices.
    pub fn complete_by_rules<S: MavState>(
        &mut self,
        prompt: &str,
        root: &S,
        cfg: &crate::mav::trace::TraceConfig,
    ) -> Result<super::completer::Completion, EvalError> {
        let ids = self.tokens.tokenizer.encode(prompt);
        if ids.len() >= self.context {
            return Err(EvalError::ContextTooLong { needed: ids.len() + 1, context: self.context });
        }
        let t = match &mut self.engine {
            Engine::Local(decoder) => {
                let backend = |e: DecoderError| EvalError::Backend(e.to_string());
                let (mut cache, logits) = decoder.prefill(std::slice::from_ref(&ids)).map_err(backend)?;
                let first: Vec<f32> = logits.row(0).iter().copied().collect();
                let step = |t: u32| -> Result<Vec<f32>, String> {
                    let l = decoder.step(&mut cache, &[t]).map_err(|e| e.to_string())?;
                    Ok(l.row(0).iter().copied().collect())
                };
                trace_rules::write_rules_trace(&self.tokens, root, cfg, ids.len(), self.context, first, step)?
            }
            Engine::Remote { server, waited, requests } => {
                let mut cursor =
                    Cursor::new(server.as_ref(), ids.clone(), self.vocab, self.context, server.chunk());
                let mut first = Vec::new();
                let written: Result<_, EvalError> = match cursor.logits(&mut first) {
                    Err(e) => Err(EvalError::Server(e.to_string())),
                    Ok(()) => {
                        let step = |t: u32| -> Result<Vec<f32>, String> {
                            cursor.feed(t);
                            let mut l = Vec::new();
                            cursor.logits(&mut l).map_err(|e| e.to_string())?;
                            Ok(l)
                        };
                        trace_rules::write_rules_trace(
                            &self.tokens,
                            root,
                            cfg,
                            ids.len(),
                            self.context,
                            first,
                            step,
                        )
                        .map_err(EvalError::from)
                    }
                };
                *waited += cursor.waited;
                *requests += u64::from(cursor.requests);
                written?
            }
        };
        Ok(super::completer::Completion {
            text: t.text,
            tokens: t.tokens,
            truncated: t.truncated,
            repeats_avoided: 0,
            decoding: super::completer::TraceDecoding::Rules,
        })
    }
}
