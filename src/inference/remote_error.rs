//! Why a remote model could not be opened or run ([`RemoteError`]): a file of its own below the remote
//! backend, so that the backend interface's error can carry it without importing the backend.

use crate::model::ModelError;

/// Why a remote model could not be opened or run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// mav.json's `remote` section is unusable.
    #[error("mav.json remote.{field}: {reason}")]
    Spec {
        /// The field (`endpoint`, `model`, `timeout_ms`, …).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// This build cannot do what the package asks.
    #[error("{what} is not supported yet: {hint}")]
    NotSupported {
        /// What was asked.
        what: String,
        /// What works instead.
        hint: String,
    },
    /// `token_env` names a variable that is not set (its value is never shown).
    #[error("mav.json remote.token_env names the environment variable {var}, which is not set or empty")]
    MissingToken {
        /// The variable's name.
        var: String,
    },
    /// Nothing listens at the endpoint.
    #[error("connection refused by {url} (is the server running?)")]
    ConnectionRefused {
        /// The URL called.
        url: String,
    },
    /// The connection could not be made for another reason (host not found, unreachable).
    #[error("cannot connect to {url}: {reason}")]
    Connect {
        /// The URL called.
        url: String,
        /// Why.
        reason: String,
    },
    /// The call took longer than the package's `timeout_ms`.
    #[error("{url} did not answer within {ms} ms")]
    Timeout {
        /// The URL called.
        url: String,
        /// The limit.
        ms: u64,
    },
    /// The connection broke (the server went away mid-call, a protocol error).
    #[error("{url}: the connection failed: {reason}")]
    Transport {
        /// The URL called.
        url: String,
        /// Why.
        reason: String,
    },
    /// The server or the model says it is not ready (HTTP 503 or another non-200 readiness answer).
    #[error("{what} at {url} is not ready (HTTP {status})")]
    NotReady {
        /// `the server` or `model NAME`.
        what: String,
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's error message, when it gave one.
        message: String,
    },
    /// The answer is not what the protocol or the request says (bad JSON, a missing output, a wrong
    /// datatype or shape).
    #[error("malformed answer from {url}: {reason}")]
    Malformed {
        /// The URL called.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// An OpenAI-compatible server does not serve the package's `remote.model`.
    #[error(
        "{url} serves {served}, not {model}: set mav.json remote.model to the served name (llama.cpp's server: start it with --alias {model})"
    )]
    UnknownModel {
        /// The model list's URL.
        url: String,
        /// The name asked for.
        model: String,
        /// The names served.
        served: String,
    },
    /// An OpenAI-compatible server answered a completion without log-probabilities.
    #[error(
        "{url} returned no log-probabilities: a mav-lm's values are read from them, so the server must return them for completions (llama.cpp's server and vLLM do; `transformers serve` does not)"
    )]
    NoLogprobs {
        /// The completions URL.
        url: String,
    },
    /// An OpenAI-compatible server listed fewer log-probabilities per position than asked.
    #[error(
        "{url} returned {got} log-probabilities per position where {asked} were asked: raise the server's limit (vLLM: --max-logprobs {asked}) or lower mav.json remote.top_logprobs"
    )]
    FewLogprobs {
        /// The completions URL.
        url: String,
        /// How many were asked.
        asked: usize,
        /// How many came.
        got: usize,
    },
    /// The server's context is shorter than the package's.
    #[error(
        "the model at {url} takes {served} tokens of context and the package {needed}: start the server with a context of {needed} (llama.cpp's server: -c {needed}; vLLM: --max-model-len {needed})"
    )]
    ShortContext {
        /// The URL that said so.
        url: String,
        /// The server's context.
        served: usize,
        /// The package's `context_length`.
        needed: usize,
    },
    /// A completion ended early for a reason other than the end of the text.
    #[error(
        "{url} stopped writing after {written} of {asked} tokens ({reason}): the server's context or output limit is shorter than the package's context of {context} tokens"
    )]
    Truncated {
        /// The completions URL.
        url: String,
        /// Tokens written.
        written: usize,
        /// Tokens asked for.
        asked: usize,
        /// The server's `finish_reason`.
        reason: String,
        /// The package's context.
        context: usize,
    },
    /// The served model's vocabulary differs from the package's tokenizer.
    #[error(
        "the model served at {url} has another vocabulary: token {id} is {theirs:?} there and {ours:?} in the package (serve the package's own export: `mavboard package export-hf`)"
    )]
    Vocabulary {
        /// The detokenize URL.
        url: String,
        /// The first token that differs.
        id: u32,
        /// The package's text for it.
        ours: String,
        /// The server's.
        theirs: String,
    },
    /// The served inputs/outputs do not match the package (the same check as a local model.onnx).
    #[error("the model served at {url} does not match the package: {mismatch}")]
    Signature {
        /// The metadata URL.
        url: String,
        /// The mismatch, naming the field.
        mismatch: ModelError,
    },
}

impl RemoteError {
    /// Whether an idempotent call may be tried again after this error.
    pub(super) fn retryable(&self) -> bool {
        match self {
            RemoteError::ConnectionRefused { .. }
            | RemoteError::Connect { .. }
            | RemoteError::Timeout { .. }
            | RemoteError::Transport { .. } => true,
            RemoteError::NotReady { status, .. } | RemoteError::Status { status, .. } => *status == 503,
            _ => false,
        }
    }
}
