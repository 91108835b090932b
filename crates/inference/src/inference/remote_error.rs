//! Why a remote model could not be opened or run ([`RemoteError`], with a TLS file's [`PemError`] and a
//! handshake's [`TlsFailure`]): a file of its own below the remote backend, so that the backend interface's
//! error can carry it without importing the backend.

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
    /// A file of mav.json's `remote.tls` cannot be used.
    #[error("mav.json remote.tls.{field} ({path}): {reason}")]
    TlsFile {
        /// `ca_file`, `client_cert` or `client_key`.
        field: &'static str,
        /// The file, as resolved against the package's folder.
        path: String,
        /// Why.
        reason: PemError,
    },
    /// The TLS handshake (or a TLS record after it) failed.
    #[error("TLS with {url} failed: {failure}")]
    Tls {
        /// The URL called.
        url: String,
        /// The cause, with its fix.
        failure: TlsFailure,
    },
    /// The package would send its token in clear across a network.
    #[error(
        "mav.json remote.token_env: the token would go over plain HTTP to {host}, which is not this machine, and anyone on the way could read it: use an https:// endpoint, or an SSH tunnel to a loopback port (ssh -L 8000:localhost:8000 {host}); on a network you trust, set remote.insecure_http to true"
    )]
    TokenInClear {
        /// The endpoint's host.
        host: String,
    },
    /// The served inputs/outputs do not match the package (the same check as a local model.onnx).
    #[error("the model served at {url} does not match the package: {mismatch}")]
    Signature {
        /// The metadata URL.
        url: String,
        /// The mismatch, naming the field (boxed: a `ModelError` holds paths, which are larger on Windows,
        /// and every remote call's `Result` would carry its size).
        mismatch: Box<ModelError>,
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

/// Why a TLS file of mav.json's `remote.tls` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PemError {
    /// The file cannot be read.
    #[error("cannot be read: {0}")]
    Read(String),
    /// The file is larger than any certificate file.
    #[error("is larger than 4 MiB, which no certificate or key file is")]
    TooLarge,
    /// A PEM block is malformed.
    #[error("is not valid PEM: {0}")]
    Syntax(String),
    /// No `CERTIFICATE` block.
    #[error("holds no certificate (a PEM file with -----BEGIN CERTIFICATE----- blocks is expected)")]
    NoCertificate,
    /// No private key block.
    #[error(
        "holds no private key (a PEM file with a -----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY block is expected; an encrypted key must be decrypted first: openssl pkey -in KEY -out KEY.pem)"
    )]
    NoKey,
    /// More than one private key.
    #[error("holds {0} private keys where one is expected")]
    ManyKeys(usize),
    /// A certificate that cannot be a root.
    #[error("certificate {index} of the file is not a usable X.509 certificate: {reason}")]
    BadCertificate {
        /// Its place in the file, from 1.
        index: usize,
        /// Why.
        reason: String,
    },
    /// Half of a client certificate.
    #[error("is given without remote.tls.{missing}: a client certificate needs its chain and its key")]
    Unpaired {
        /// The other field.
        missing: &'static str,
    },
    /// The key cannot be used, or does not belong to the client certificate.
    #[error("cannot be used with remote.tls.client_cert: {0}")]
    Unusable(String),
}

/// Why a TLS connection failed, each with its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsFailure {
    /// The server's certificate chain does not lead to a trusted root.
    #[error(
        "the server's certificate is signed by an unknown authority: if the server uses a private CA, set mav.json remote.tls.ca_file to that CA's certificate (PEM); else the system's roots lack it"
    )]
    UnknownIssuer,
    /// The certificate names other hosts.
    #[error(
        "the server's certificate is not valid for {host}{}: call the server by a name the certificate carries (mav.json remote.endpoint), or reissue the certificate for {host}",
        if presented.is_empty() { String::new() } else { format!(" (it names {presented})") }
    )]
    NameMismatch {
        /// The name called.
        host: String,
        /// The names the certificate carries, when known.
        presented: String,
    },
    /// The certificate's validity ended.
    #[error("the server's certificate has expired: renew it on the server (or correct this machine's clock)")]
    Expired,
    /// The certificate's validity has not begun.
    #[error(
        "the server's certificate is not valid yet: correct this machine's clock, or the server's certificate"
    )]
    NotYetValid,
    /// Another problem with the server's certificate.
    #[error("the server's certificate is not acceptable: {0}")]
    BadCertificate(String),
    /// The server asks for a client certificate and none was given.
    #[error(
        "the server requires a client certificate (mutual TLS): set mav.json remote.tls.client_cert and remote.tls.client_key to a certificate its CA signed and its key"
    )]
    ClientCertRequired,
    /// The server refused the client certificate given.
    #[error(
        "the server refused the client certificate ({0}): give one signed by the CA the server trusts for clients"
    )]
    ClientCertRefused(String),
    /// The server ended the handshake with a `handshake_failure` alert (TLS 1.2's answer to a missing or
    /// refused client certificate, and to no common version, cipher or key exchange).
    #[error(
        "the server refused the handshake (handshake_failure): {}, or it offers no TLS version, cipher or key exchange this client has (TLS 1.2 or 1.3 with ECDHE)",
        if *client_cert {
            "it may refuse the client certificate (remote.tls.client_cert)"
        } else {
            "it may require a client certificate (set remote.tls.client_cert and remote.tls.client_key)"
        }
    )]
    HandshakeFailure {
        /// Whether a client certificate was offered.
        client_cert: bool,
    },
    /// The server ended the handshake with an alert.
    #[error("the server refused the handshake ({0})")]
    Refused(String),
    /// What came back is not TLS.
    #[error("the server does not speak TLS on this port: if it serves plain HTTP, the endpoint is http://")]
    NotTls,
    /// Anything else rustls reports.
    #[error("{0}")]
    Other(String),
}
