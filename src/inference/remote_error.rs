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
