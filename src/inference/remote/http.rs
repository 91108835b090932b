//! The HTTP client both remote protocols share: one keep-alive connection pool bounded by the package's
//! `timeout_ms`, an optional bearer token (never shown), idempotent GETs retried with backoff, and transport
//! failures turned into [`RemoteError`]s that name the URL.

use std::fmt;
use std::time::Duration;

use super::RemoteError;
use crate::model::manifest::RemoteSpec;

/// Attempts of an idempotent GET (the first try and its retries).
const GET_ATTEMPTS: u32 = 3;

/// The first retry's wait; each later one doubles it.
const BACKOFF: Duration = Duration::from_millis(100);

/// The largest response body read (a batch's logits as JSON).
const MAX_BODY: u64 = 1 << 30;

/// A bearer token, redacted in every `Debug` output.
#[derive(Clone)]
pub(super) struct Token(pub(super) String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// A connection pool to one server, with the package's limits.
#[derive(Debug)]
pub(super) struct Http {
    agent: ureq::Agent,
    token: Option<Token>,
    /// The limit on each call, in milliseconds.
    pub(super) timeout_ms: u64,
}

impl Http {
    /// A client for `spec`: its timeout, room for `max_in_flight` concurrent calls, and the token read from
    /// the variable `token_env` names.
    pub(super) fn new(spec: &RemoteSpec) -> Result<Http, RemoteError> {
        let token = match &spec.token_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(t) if !t.trim().is_empty() => Some(Token(t.trim().to_owned())),
                _ => return Err(RemoteError::MissingToken { var: var.clone() }),
            },
        };
        let timeout = Duration::from_millis(spec.timeout_ms);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout))
            .http_status_as_error(false)
            .max_idle_connections_per_host(spec.max_in_flight + 1)
            .build()
            .into();
        Ok(Http { agent, token, timeout_ms: spec.timeout_ms })
    }

    fn map_err(&self, url: &str, e: ureq::Error) -> RemoteError {
        let url = url.to_owned();
        match e {
            ureq::Error::Timeout(_) => RemoteError::Timeout { url, ms: self.timeout_ms },
            ureq::Error::Io(io) => match io.kind() {
                std::io::ErrorKind::ConnectionRefused => RemoteError::ConnectionRefused { url },
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    RemoteError::Timeout { url, ms: self.timeout_ms }
                }
                _ => RemoteError::Transport { url, reason: io.to_string() },
            },
            ureq::Error::HostNotFound => RemoteError::Connect { url, reason: "host not found".into() },
            ureq::Error::ConnectionFailed => RemoteError::Connect { url, reason: "connection failed".into() },
            other => RemoteError::Transport { url, reason: other.to_string() },
        }
    }

    /// One call, a GET without a body or a JSON POST: the status and the body.
    pub(super) fn call(&self, url: &str, body: Option<Vec<u8>>) -> Result<(u16, Vec<u8>), RemoteError> {
        let mut response = match body {
            None => {
                let mut req = self.agent.get(url);
                if let Some(t) = &self.token {
                    req = req.header("Authorization", format!("Bearer {}", t.0));
                }
                req.call()
            }
            Some(body) => {
                let mut req = self.agent.post(url).header("Content-Type", "application/json");
                if let Some(t) = &self.token {
                    req = req.header("Authorization", format!("Bearer {}", t.0));
                }
                req.send(body)
            }
        }
        .map_err(|e| self.map_err(url, e))?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| self.map_err(url, e))?;
        Ok((status, bytes))
    }

    /// An idempotent GET that must answer 200, retried with backoff on connection errors, timeouts and 503.
    /// A non-200 answer is [`RemoteError::NotReady`] naming `ready_what` when given, else
    /// [`RemoteError::Status`] with the server's message.
    pub(super) fn get_with_retry(&self, url: &str, ready_what: Option<&str>) -> Result<Vec<u8>, RemoteError> {
        let mut wait = BACKOFF;
        let mut attempt = 1;
        loop {
            let result = self.call(url, None).and_then(|(status, body)| match (status, ready_what) {
                (200, _) => Ok(body),
                (status, Some(what)) => {
                    Err(RemoteError::NotReady { what: what.to_owned(), url: url.to_owned(), status })
                }
                (status, None) => {
                    Err(RemoteError::Status { url: url.to_owned(), status, message: message(&body) })
                }
            });
            match result {
                Err(e) if e.retryable() && attempt < GET_ATTEMPTS => {
                    std::thread::sleep(wait);
                    wait *= 2;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

/// The error message of an error body: the Open Inference Protocol's `{"error": "…"}`, the OpenAI API's
/// `{"error": {"message": "…"}}`, else the body's start.
pub(super) fn message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Error {
        Text(String),
        Object { message: String },
    }
    #[derive(serde::Deserialize)]
    struct Body {
        error: Error,
    }
    match serde_json::from_slice::<Body>(body) {
        Ok(Body { error: Error::Text(m) | Error::Object { message: m } }) => m,
        Err(_) => String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_never_in_debug_output() {
        let t = Token("secret-value".into());
        assert!(!format!("{t:?}").contains("secret"));
    }

    #[test]
    fn reads_both_error_bodies() {
        assert_eq!(message(br#"{"error":"model not found"}"#), "model not found");
        assert_eq!(
            message(
                br#"{"error":{"code":400,"message":"logprobs too large","type":"invalid_request_error"}}"#
            ),
            "logprobs too large"
        );
        assert_eq!(message(b"<html>502</html>"), "<html>502</html>");
    }
}
