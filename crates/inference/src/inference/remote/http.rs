//! The HTTP client both remote protocols share: one keep-alive connection pool bounded by the package's
//! `timeout_ms`, TLS for an `https://` endpoint ([`super::tls`]), an optional bearer token (never shown,
//! never sent in clear beyond this machine unless the package says so), idempotent GETs retried with
//! backoff, and transport failures turned into [`RemoteError`]s that name the URL and, for TLS, the cause.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use super::{RemoteError, tls};
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
    /// The endpoint's host (for TLS errors).
    host: String,
    /// Whether a client certificate is offered.
    client_cert: bool,
    /// Said in the status bar: the token goes in clear (`remote.insecure_http`).
    pub(super) notice: Option<String>,
}

impl Http {
    /// A client for `spec` (already checked by `check_spec`): its timeout, room for `max_in_flight`
    /// concurrent calls, the token read from the variable `token_env` names, and for an `https://` endpoint
    /// its TLS files read from the package's folder `dir`.
    pub(super) fn new(spec: &RemoteSpec, dir: &Path) -> Result<Http, RemoteError> {
        let token = match &spec.token_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(t) if !t.trim().is_empty() => Some(Token(t.trim().to_owned())),
                _ => return Err(RemoteError::MissingToken { var: var.clone() }),
            },
        };
        let host = tls::endpoint_host(&spec.endpoint).to_owned();
        let https = spec.endpoint.starts_with("https://");
        let timeout = Duration::from_millis(spec.timeout_ms);
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout))
            .http_status_as_error(false)
            // A model server's API does not redirect: a redirect (to another host, or from https to http)
            // is answered as its status, never followed.
            .max_redirects(0)
            .https_only(https)
            .max_idle_connections_per_host(spec.max_in_flight + 1);
        if !https {
            // A proxy from the environment (HTTP_PROXY, ALL_PROXY) would carry a plain-HTTP call, token and
            // all, off this machine: plain HTTP goes straight to the endpoint. HTTPS keeps the environment's
            // proxy (a CONNECT tunnel, the token inside TLS).
            config = config.proxy(None);
        }
        let mut client_cert = false;
        if https {
            let tls = tls::package_tls(spec, dir)?;
            client_cert = tls.client_cert().is_some();
            config = config.tls_config(tls);
        }
        let notice = (!https && token.is_some() && !tls::is_loopback(&host))
            .then(|| format!("the token goes over plain HTTP to {host} (mav.json remote.insecure_http)"));
        let agent: ureq::Agent = config.build().into();
        Ok(Http { agent, token, timeout_ms: spec.timeout_ms, host, client_cert, notice })
    }

    fn map_err(&self, url: &str, e: ureq::Error) -> RemoteError {
        let url = url.to_owned();
        let tls_failure = match &e {
            ureq::Error::Rustls(r) => Some(r),
            ureq::Error::Io(io) => io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()),
            _ => None,
        };
        if let Some(r) = tls_failure {
            return RemoteError::Tls { url, failure: tls::failure(r, &self.host, self.client_cert) };
        }
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

    fn spec(endpoint: &str, insecure_http: bool) -> RemoteSpec {
        RemoteSpec {
            endpoint: endpoint.into(),
            model: "m".into(),
            version: None,
            protocol: Default::default(),
            // A variable every process has: the token's value does not matter here.
            token_env: Some("PATH".into()),
            timeout_ms: 1000,
            max_in_flight: 1,
            top_logprobs: None,
            tls: None,
            insecure_http,
        }
    }

    #[test]
    fn the_status_says_when_a_token_goes_in_clear() {
        let dir = Path::new(".");
        let far = Http::new(&spec("http://gpu-box:8000", true), dir).expect("client");
        let notice = far.notice.expect("a notice");
        assert!(notice.contains("plain HTTP to gpu-box") && notice.contains("insecure_http"), "{notice}");
        assert!(Http::new(&spec("http://127.0.0.1:8000", false), dir).expect("client").notice.is_none());
        assert!(Http::new(&spec("https://gpu-box:8000", false), dir).expect("client").notice.is_none());
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
