//! A `mav-lm` served by an LLM engine over the OpenAI-compatible completions API (`remote.protocol:
//! "openai-completions"`): llama.cpp's server, vLLM.
//!
//! At load [`OpenAiLm::connect`] checks, in order: mav.json's `remote` section; `GET v1/models` lists the
//! model (and, where the server states it, a context at least the package's); `POST detokenize` turns every
//! token of the package's vocabulary into the package's own text (servers without that endpoint are noted,
//! not refused); and one probe completion returns log-probabilities, as many as asked. Prompts are then
//! sent as token ids, so the server's own tokenizer never runs on MAV text. Each completion is greedy with
//! `logprobs` = `remote.top_logprobs` (default: the bucket count); the [`Continuer`] impl hands the
//! written tokens and their lists to the decoding [`Cursor`](crate::inference::lm::cursor::Cursor).

use super::http::{Http, message};
use super::openai_wire::{CompletionRequest, WireError, read_completion, read_detokenized, read_models};
use super::{RemoteError, check_spec};
use crate::inference::continuer::{Continuer, Step};
use crate::inference::device::{Device, DeviceStatus, Provider};
use crate::mav::tokenizer::Tokenizer;
use crate::model::ModelPackage;

/// A `mav-lm` on an OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAiLm {
    http: Http,
    endpoint: String,
    completions_url: String,
    model: String,
    top_logprobs: usize,
    vocab: usize,
    context: usize,
    max_in_flight: usize,
    tokenizer: Tokenizer,
    eos: u32,
    status: DeviceStatus,
}

impl OpenAiLm {
    /// Connects to the package's server and checks it serves this model with this vocabulary and returns
    /// log-probabilities (see the module's documentation).
    pub fn connect(
        package: &ModelPackage,
        requested: Device,
        tokenizer: &Tokenizer,
    ) -> Result<OpenAiLm, RemoteError> {
        let m = &package.manifest;
        let spec = m.remote.as_ref().ok_or_else(|| RemoteError::Spec {
            field: "endpoint",
            reason: "the package has no remote section".into(),
        })?;
        let endpoint = check_spec(spec, m.format)?;
        let http = Http::new(spec, &package.dir)?;
        let mut lm = OpenAiLm {
            status: DeviceStatus { requested, provider: Provider::Remote, notice: http.notice.clone() },
            http,
            completions_url: format!("{endpoint}/v1/completions"),
            endpoint,
            model: spec.model.clone(),
            top_logprobs: spec.top_logprobs.unwrap_or(m.num_buckets).max(1),
            vocab: m.vocab_size,
            context: m.context_length,
            max_in_flight: spec.max_in_flight,
            tokenizer: tokenizer.clone(),
            eos: m.eos_token_id.unwrap_or(tokenizer.eos_id()),
        };
        lm.check_model()?;
        let unchecked = lm.check_vocabulary()?;
        lm.probe()?;
        lm.status.notice = match (lm.status.notice.take(), unchecked) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        Ok(lm)
    }

    fn malformed(&self, url: &str, e: WireError) -> RemoteError {
        match e {
            WireError::NoLogprobs => RemoteError::NoLogprobs { url: url.to_owned() },
            WireError::Malformed(reason) => RemoteError::Malformed { url: url.to_owned(), reason },
        }
    }

    /// `GET v1/models` lists the model, with enough context where it says.
    fn check_model(&self) -> Result<(), RemoteError> {
        let url = format!("{}/v1/models", self.endpoint);
        let body = self.http.get_with_retry(&url, None)?;
        let (names, context) = read_models(&body, &self.model).map_err(|e| self.malformed(&url, e))?;
        if names.first() != Some(&self.model) {
            let served = if names.is_empty() { "no model".to_owned() } else { names.join(", ") };
            return Err(RemoteError::UnknownModel { url, model: self.model.clone(), served });
        }
        match context {
            Some(served) if served < self.context => {
                Err(RemoteError::ShortContext { url, served, needed: self.context })
            }
            _ => Ok(()),
        }
    }

    /// Every token of the vocabulary but the special ones, each followed by a newline, detokenized by the
    /// server equals the package's text. `Ok(Some(notice))` when the server has no detokenize endpoint.
    fn check_vocabulary(&self) -> Result<Option<String>, RemoteError> {
        let t = &self.tokenizer;
        let newline = t.id_of("\n");
        let special = [t.pad_id(), t.eos_id(), t.unk_id(), t.sep_id()];
        let checked: Vec<u32> = (0..t.vocab_size() as u32).filter(|id| !special.contains(id)).collect();
        let mut probe = Vec::with_capacity(2 * checked.len());
        for &id in &checked {
            probe.push(id);
            probe.extend(newline);
        }
        let url = format!("{}/detokenize", self.endpoint);
        let body = serde_json::json!({ "model": self.model, "tokens": probe });
        let (status, bytes) = self.http.call(&url, Some(body.to_string().into_bytes()))?;
        if status == 404 || status == 405 {
            return Ok(Some(format!(
                "{} has no detokenize endpoint: the served vocabulary was not checked against the package's",
                self.endpoint
            )));
        }
        if status != 200 {
            return Err(RemoteError::Status { url, status, message: message(&bytes) });
        }
        let theirs = read_detokenized(&bytes).map_err(|e| self.malformed(&url, e))?;
        let ours = t
            .decode(&probe)
            .map_err(|e| RemoteError::Malformed { url: url.clone(), reason: e.to_string() })?;
        if theirs == ours {
            return Ok(None);
        }
        // Name the first token that differs: the texts line up token by token between the newlines.
        let (mut a, mut b) = (ours.split('\n'), theirs.split('\n'));
        for &id in &checked {
            let (o, s) = (a.next().unwrap_or_default(), b.next().unwrap_or_default());
            if o != s {
                return Err(RemoteError::Vocabulary { url, id, ours: o.to_owned(), theirs: s.to_owned() });
            }
        }
        Err(RemoteError::Vocabulary {
            url,
            id: checked.last().copied().unwrap_or(0),
            ours: ours.chars().rev().take(40).collect::<String>().chars().rev().collect(),
            theirs: theirs.chars().rev().take(40).collect::<String>().chars().rev().collect(),
        })
    }

    /// One short completion returns log-probabilities, as many as asked.
    fn probe(&self) -> Result<(), RemoteError> {
        let prompt = self.tokenizer.encode("<mav");
        let prompt = if prompt.is_empty() { vec![self.tokenizer.space_id()] } else { prompt };
        self.continue_greedy(&prompt, 1).map(|_| ())
    }

    /// Where the model runs (`remote`) and any notice from the load checks.
    pub fn status(&self) -> &DeviceStatus {
        &self.status
    }

    /// The server's base URL.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// How many tokens to ask for per completion: a continuation is reused while decoding agrees with it
    /// and wasted from the first disagreement, and each of its tokens carries `top_logprobs` entries, so
    /// at most 32,768 entries per answer (128 tokens at 64 log-probabilities, 16 at 2,048).
    pub fn chunk(&self) -> usize {
        (32_768 / self.top_logprobs).clamp(4, 128)
    }

    /// How many completions one batch may have in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }
}

impl Continuer for OpenAiLm {
    fn continue_greedy(&self, ids: &[u32], max_tokens: usize) -> Result<Vec<Step>, RemoteError> {
        let url = &self.completions_url;
        let request = CompletionRequest {
            model: &self.model,
            prompt: ids,
            max_tokens,
            temperature: 0.0,
            logprobs: self.top_logprobs,
            return_tokens_as_token_ids: true,
            stream: false,
        };
        let body = serde_json::to_vec(&request)
            .map_err(|e| RemoteError::Malformed { url: url.clone(), reason: format!("request: {e}") })?;
        let (status, bytes) = self.http.call(url, Some(body))?;
        if status != 200 {
            let mut message = message(&bytes);
            if message.contains("logprobs") {
                message.push_str(&format!(
                    " (mavboard asks for {} log-probabilities per position, mav.json remote.top_logprobs; vLLM: \
                     start it with --max-logprobs {})",
                    self.top_logprobs, self.top_logprobs
                ));
            }
            return Err(RemoteError::Status { url: url.clone(), status, message });
        }
        let piece = |s: &str| self.tokenizer.id_of(s);
        let answer = read_completion(&bytes, &piece).map_err(|e| self.malformed(url, e))?;
        let written = answer.tokens.len();
        if written == 0 {
            return Err(RemoteError::Malformed {
                url: url.clone(),
                reason: "a completion with no token".into(),
            });
        }
        let wanted = self.top_logprobs.min(self.vocab);
        let mut steps = Vec::with_capacity(written);
        for t in answer.tokens {
            if let Some(&(id, _)) = t.top.iter().find(|(id, _)| *id as usize >= self.vocab) {
                return Err(RemoteError::Malformed {
                    url: url.clone(),
                    reason: format!("token {id} is outside the package's vocabulary of {}", self.vocab),
                });
            }
            if t.token as usize >= self.vocab {
                return Err(RemoteError::Malformed {
                    url: url.clone(),
                    reason: format!(
                        "token {} is outside the package's vocabulary of {}",
                        t.token, self.vocab
                    ),
                });
            }
            if t.top.len() < wanted {
                return Err(RemoteError::FewLogprobs { url: url.clone(), asked: wanted, got: t.top.len() });
            }
            steps.push(Step { token: t.token, top: t.top });
        }
        let ended = steps.last().is_some_and(|s| s.token == self.eos);
        let reason = answer.finish_reason.unwrap_or_default();
        if written < max_tokens && !ended && reason != "stop" {
            return Err(RemoteError::Truncated {
                url: url.clone(),
                written,
                asked: max_tokens,
                reason,
                context: self.context,
            });
        }
        Ok(steps)
    }
}
