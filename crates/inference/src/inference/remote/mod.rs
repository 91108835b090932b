//! Remote evaluation over the Open Inference Protocol (KServe v2 REST), the API that Triton Inference
//! Server, KServe and MLServer share.
//!
//! A package whose mav.json has a `remote` section ([`RemoteSpec`]) is opened like a local one; its
//! tokenizer, buckets and format come from the package and [`RemoteBackend`] replaces the ONNX session:
//! at load it asks `GET v2/health/ready`, `GET v2/models/NAME[/versions/V]/ready` and the model metadata,
//! and checks the served inputs and outputs against the package with the same check as a local model.onnx;
//! each batch becomes up to `max_in_flight` concurrent `POST …/infer` requests with JSON tensors on
//! keep-alive connections. Every call is bounded by `timeout_ms`; only the idempotent GETs are retried,
//! with backoff. A failed call is a [`RemoteError`] that names what went wrong; the evaluators turn it into
//! the failed evaluation of each request of the batch.
//!
//! A `mav-lm` package is served by an LLM engine instead, over the OpenAI-compatible completions API
//! (`remote.protocol: "openai-completions"`, [`openai`]); both protocols share the HTTP client and the
//! checks of the `remote` section.

mod http;
pub mod latency_proxy;
pub mod openai;
pub mod openai_wire;
pub mod tls;
pub mod triton;
pub mod wire;

use std::fmt;

use ndarray::{Array2, ArrayD, Axis};

use super::backend::{BackendError, TensorBackend};
use super::device::{Device, DeviceStatus, Provider};
pub use super::remote_error::{PemError, RemoteError, TlsFailure};
use crate::model::manifest::{RemoteProtocol, RemoteSpec};
use crate::model::signature::check_graph;
use crate::model::{ModelFormat, ModelPackage};
use http::{Http, message};
use wire::{InferRequest, ModelMetadata, RequestInput, RequestOutput};

/// The most concurrent requests a package may ask for.
pub const MAX_IN_FLIGHT: usize = 64;

/// A model on an inference server, run over the Open Inference Protocol's REST API.
pub struct RemoteBackend {
    http: Http,
    /// `http://host:port/v2/models/NAME[/versions/V]`.
    model_url: String,
    endpoint: String,
    max_in_flight: usize,
    status: DeviceStatus,
    metadata: ModelMetadata,
}

impl fmt::Debug for RemoteBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteBackend")
            .field("model_url", &self.model_url)
            .field("http", &self.http)
            .field("max_in_flight", &self.max_in_flight)
            .finish()
    }
}

fn spec_err(field: &'static str, reason: impl Into<String>) -> RemoteError {
    RemoteError::Spec { field, reason: reason.into() }
}

/// A path segment of a model name or version: letters, digits and `._-` only.
fn check_segment(field: &'static str, s: &str) -> Result<(), RemoteError> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
        return Err(spec_err(field, format!("{s:?} must be letters, digits, '.', '_' or '-' and not empty")));
    }
    Ok(())
}

/// Checks a `remote` section and returns the endpoint without its trailing `/`.
pub(super) fn check_spec(spec: &RemoteSpec, format: ModelFormat) -> Result<String, RemoteError> {
    let lm = format.capabilities().generates_text;
    match spec.protocol {
        RemoteProtocol::V2Grpc => {
            return Err(RemoteError::NotSupported {
                what: "the v2-grpc protocol".into(),
                hint: "serve the model's REST API too and set remote.protocol to \"v2-rest\"".into(),
            });
        }
        RemoteProtocol::V2Rest if lm => {
            return Err(RemoteError::NotSupported {
                what: format!("a {} model over the Open Inference Protocol", format.name()),
                hint:
                    "a text model is served by an LLM engine (llama.cpp's server, vLLM): set remote.protocol \
                       to \"openai-completions\" (see docs/serving-lm.md)"
                        .into(),
            });
        }
        RemoteProtocol::OpenAiCompletions if !lm => {
            return Err(RemoteError::NotSupported {
                what: format!("a {} model over the OpenAI completions API", format.name()),
                hint: "that API serves text models (mav-lm): serve this package over the Open Inference \
                       Protocol and set remote.protocol to \"v2-rest\""
                    .into(),
            });
        }
        RemoteProtocol::OpenAiCompletions => {
            if spec.version.is_some() {
                return Err(spec_err(
                    "version",
                    "the OpenAI completions API has no model versions: remove it",
                ));
            }
            if spec.top_logprobs == Some(0) {
                return Err(spec_err("top_logprobs", "must be at least 1"));
            }
        }
        RemoteProtocol::V2Rest => {}
    }
    if !format.capabilities().remote {
        return Err(RemoteError::NotSupported {
            what: format!("a remote {} model", format.name()),
            hint: format!(
                "remote packages may be {}; run a {} package locally",
                ModelFormat::names_with(|c| c.remote),
                format.name()
            ),
        });
    }
    let endpoint = spec.endpoint.trim_end_matches('/');
    let (https, rest) = match (endpoint.strip_prefix("https://"), endpoint.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => {
            return Err(spec_err(
                "endpoint",
                format!("{:?} must start with http:// or https://", spec.endpoint),
            ));
        }
    };
    let host = tls::endpoint_host(endpoint);
    if rest.is_empty() || host.is_empty() || rest.contains(['?', '#', ' ']) {
        return Err(spec_err(
            "endpoint",
            format!("{:?} is not a server URL (http://host:port or https://host:port)", spec.endpoint),
        ));
    }
    if https && spec.insecure_http {
        return Err(spec_err("insecure_http", "applies to http:// endpoints only: remove it"));
    }
    if !https && spec.tls.is_some() {
        return Err(spec_err(
            "tls",
            "applies to https:// endpoints only: make remote.endpoint https://, or remove remote.tls",
        ));
    }
    if !https && spec.token_env.is_some() && !spec.insecure_http && !tls::is_loopback(host) {
        return Err(RemoteError::TokenInClear { host: host.to_owned() });
    }
    check_segment("model", &spec.model)?;
    if let Some(v) = &spec.version {
        check_segment("version", v)?;
    }
    if spec.timeout_ms == 0 {
        return Err(spec_err("timeout_ms", "must be at least 1"));
    }
    if !(1..=MAX_IN_FLIGHT).contains(&spec.max_in_flight) {
        return Err(spec_err(
            "max_in_flight",
            format!("must be 1 to {MAX_IN_FLIGHT}, not {}", spec.max_in_flight),
        ));
    }
    Ok(endpoint.to_owned())
}

impl RemoteBackend {
    /// Connects to the package's server: checks mav.json's `remote` section, that the server and the model
    /// are ready, and that the served inputs and outputs match the package.
    pub fn connect(package: &ModelPackage, requested: Device) -> Result<RemoteBackend, RemoteError> {
        let spec = package
            .manifest
            .remote
            .as_ref()
            .ok_or_else(|| spec_err("endpoint", "the package has no remote section"))?;
        let endpoint = check_spec(spec, package.manifest.format)?;
        let http = Http::new(spec, &package.dir)?;
        let mut model_url = format!("{endpoint}/v2/models/{}", spec.model);
        if let Some(v) = &spec.version {
            model_url.push_str(&format!("/versions/{v}"));
        }
        let mut backend = RemoteBackend {
            status: DeviceStatus { requested, provider: Provider::Remote, notice: http.notice.clone() },
            http,
            model_url,
            endpoint: endpoint.clone(),
            max_in_flight: spec.max_in_flight,
            metadata: ModelMetadata { name: spec.model.clone(), inputs: Vec::new(), outputs: Vec::new() },
        };
        let ready = format!("{endpoint}/v2/health/ready");
        backend.get_ready(&ready, "the server")?;
        let model_ready = format!("{}/ready", backend.model_url);
        backend.get_ready(&model_ready, &format!("model {}", spec.model))?;
        let url = backend.model_url.clone();
        let body = backend.get_ok(&url)?;
        let metadata: ModelMetadata = serde_json::from_slice(&body).map_err(|e| RemoteError::Malformed {
            url: url.clone(),
            reason: format!("model metadata: {e}"),
        })?;
        check_graph(&package.dir, &package.manifest, &metadata.signature())
            .map_err(|mismatch| RemoteError::Signature { url: url.clone(), mismatch: Box::new(mismatch) })?;
        backend.metadata = metadata;
        Ok(backend)
    }

    /// The server's base URL.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The model's URL (`…/v2/models/NAME[/versions/V]`).
    pub fn model_url(&self) -> &str {
        &self.model_url
    }

    /// The model metadata the server gave at load.
    pub fn metadata(&self) -> &ModelMetadata {
        &self.metadata
    }

    fn get_ready(&self, url: &str, what: &str) -> Result<(), RemoteError> {
        self.http.get_with_retry(url, Some(what)).map(|_| ())
    }

    fn get_ok(&self, url: &str) -> Result<Vec<u8>, RemoteError> {
        self.http.get_with_retry(url, None)
    }

    /// One inference request over rows `rows` of the inputs (not retried).
    fn infer(
        &self,
        inputs: &[(&str, Array2<i64>)],
        rows: std::ops::Range<usize>,
        outputs: &[&str],
    ) -> Result<Vec<ArrayD<f32>>, RemoteError> {
        let url = format!("{}/infer", self.model_url);
        let malformed = |reason: String| RemoteError::Malformed { url: url.clone(), reason };
        let n = rows.len();
        let mut request_inputs = Vec::with_capacity(inputs.len());
        for (name, a) in inputs {
            let cols = a.ncols();
            let all = a.as_slice().ok_or_else(|| malformed(format!("input {name} is not contiguous")))?;
            request_inputs.push(RequestInput {
                name,
                shape: vec![n, cols],
                datatype: "INT64",
                data: &all[rows.start * cols..rows.end * cols],
            });
        }
        let request = InferRequest {
            inputs: request_inputs,
            outputs: outputs.iter().map(|name| RequestOutput { name }).collect(),
        };
        let body = serde_json::to_vec(&request).map_err(|e| malformed(format!("request: {e}")))?;
        let (status, bytes) = self.http.call(&url, Some(body))?;
        if status != 200 {
            return Err(RemoteError::Status { url, status, message: message(&bytes) });
        }
        wire::read_outputs(&bytes, outputs, n).map_err(|e| malformed(e.to_string()))
    }
}

impl TensorBackend for RemoteBackend {
    /// Splits the rows into up to `max_in_flight` requests sent at once (on scoped threads sharing the
    /// connection pool) and puts the answers back together in row order.
    fn run(
        &mut self,
        inputs: Vec<(&str, Array2<i64>)>,
        outputs: &[&str],
    ) -> Result<Vec<ArrayD<f32>>, BackendError> {
        let rows = inputs.first().map_or(0, |(_, a)| a.nrows());
        if let Some((name, a)) = inputs.iter().find(|(_, a)| a.nrows() != rows) {
            return Err(BackendError::Shape {
                name: (*name).to_owned(),
                expected: format!("{rows} rows like the first input"),
                found: a.shape().to_vec(),
            });
        }
        let inputs: Vec<(&str, Array2<i64>)> =
            inputs.into_iter().map(|(n, a)| (n, a.as_standard_layout().into_owned())).collect();
        let parts = self.max_in_flight.min(rows).max(1);
        let per = rows.div_ceil(parts).max(1);
        let ranges: Vec<std::ops::Range<usize>> =
            (0..rows).step_by(per).map(|s| s..(s + per).min(rows)).collect();
        let this = &*self;
        let answers: Vec<Result<Vec<ArrayD<f32>>, RemoteError>> = if ranges.len() <= 1 {
            vec![this.infer(&inputs, 0..rows, outputs)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = ranges
                    .iter()
                    .map(|r| {
                        let inputs = &inputs;
                        let r = r.clone();
                        scope.spawn(move || this.infer(inputs, r, outputs))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(RemoteError::Transport {
                                url: this.model_url.clone(),
                                reason: "a request thread panicked".into(),
                            })
                        })
                    })
                    .collect()
            })
        };
        let mut parts_out = Vec::with_capacity(answers.len());
        for a in answers {
            parts_out.push(a?);
        }
        let mut out = Vec::with_capacity(outputs.len());
        for (k, name) in outputs.iter().enumerate() {
            let views: Vec<_> = parts_out.iter().map(|p| p[k].view()).collect();
            let joined = ndarray::concatenate(Axis(0), &views).map_err(|e| BackendError::Shape {
                name: (*name).to_owned(),
                expected: format!("the same shape in every request's answer ({e})"),
                found: parts_out.first().map(|p| p[k].shape().to_vec()).unwrap_or_default(),
            })?;
            out.push(joined);
        }
        Ok(out)
    }

    fn status(&self) -> &DeviceStatus {
        &self.status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RemoteSpec {
        RemoteSpec {
            endpoint: "http://127.0.0.1:8080/".into(),
            model: "mav-enc-tiny".into(),
            version: None,
            protocol: RemoteProtocol::V2Rest,
            token_env: None,
            timeout_ms: 1000,
            max_in_flight: 4,
            top_logprobs: None,
            tls: None,
            insecure_http: false,
        }
    }

    #[test]
    fn a_token_never_goes_in_clear_beyond_this_machine() {
        let token = |endpoint: &str, insecure_http| RemoteSpec {
            endpoint: endpoint.into(),
            token_env: Some("MAV_TOKEN".into()),
            insecure_http,
            ..spec()
        };
        for local in ["http://127.0.0.1:8080", "http://localhost:8000/", "http://[::1]:9"] {
            assert!(check_spec(&token(local, false), ModelFormat::MavEncoder).is_ok(), "{local}");
        }
        let err =
            check_spec(&token("http://gpu-box:8000", false), ModelFormat::MavEncoder).expect_err("clear");
        assert!(matches!(&err, RemoteError::TokenInClear { host } if host == "gpu-box"), "{err}");
        assert!(err.to_string().contains("https://") && err.to_string().contains("insecure_http"), "{err}");
        assert!(check_spec(&token("http://gpu-box:8000", true), ModelFormat::MavEncoder).is_ok());
        assert!(check_spec(&token("https://gpu-box:8000", false), ModelFormat::MavEncoder).is_ok());
        // Without a token, plain HTTP to another host is the user's choice.
        let plain = RemoteSpec { endpoint: "http://gpu-box:8000".into(), ..spec() };
        assert!(check_spec(&plain, ModelFormat::MavEncoder).is_ok());
        let msg = check_spec(&token("https://gpu-box:8000", true), ModelFormat::MavEncoder)
            .expect_err("insecure on https")
            .to_string();
        assert!(msg.contains("remote.insecure_http"), "{msg}");
        let with_tls = RemoteSpec { tls: Some(Default::default()), ..spec() };
        let msg = check_spec(&with_tls, ModelFormat::MavEncoder).expect_err("tls on http").to_string();
        assert!(msg.contains("remote.tls") && msg.contains("https://"), "{msg}");
    }

    #[test]
    fn checks_the_remote_section() {
        assert_eq!(check_spec(&spec(), ModelFormat::MavEncoder).expect("valid"), "http://127.0.0.1:8080");
        let grpc = RemoteSpec { protocol: RemoteProtocol::V2Grpc, ..spec() };
        let msg = check_spec(&grpc, ModelFormat::MavEncoder).expect_err("grpc").to_string();
        assert!(msg.contains("v2-grpc") && msg.contains("not supported yet"), "{msg}");
        let msg = check_spec(&spec(), ModelFormat::MavLm).expect_err("lm").to_string();
        assert!(msg.contains("mav-lm") && msg.contains("openai-completions"), "{msg}");
        let openai = RemoteSpec { protocol: RemoteProtocol::OpenAiCompletions, ..spec() };
        assert!(check_spec(&openai, ModelFormat::MavLm).is_ok());
        let msg = check_spec(&openai, ModelFormat::MavEncoder).expect_err("encoder").to_string();
        assert!(msg.contains("mav-encoder") && msg.contains("v2-rest"), "{msg}");
        let bad = RemoteSpec { version: Some("1".into()), ..openai.clone() };
        assert!(
            check_spec(&bad, ModelFormat::MavLm).expect_err("version").to_string().contains("remote.version")
        );
        let bad = RemoteSpec { top_logprobs: Some(0), ..openai };
        assert!(
            check_spec(&bad, ModelFormat::MavLm).expect_err("0").to_string().contains("remote.top_logprobs")
        );
        let bad = RemoteSpec { endpoint: "127.0.0.1:8080".into(), ..spec() };
        assert!(
            check_spec(&bad, ModelFormat::MavEncoder)
                .expect_err("scheme")
                .to_string()
                .contains("remote.endpoint")
        );
        let bad = RemoteSpec { model: "a/b".into(), ..spec() };
        assert!(
            check_spec(&bad, ModelFormat::MavEncoder).expect_err("name").to_string().contains("remote.model")
        );
        let bad = RemoteSpec { max_in_flight: 0, ..spec() };
        assert!(
            check_spec(&bad, ModelFormat::ActionValue).expect_err("0").to_string().contains("max_in_flight")
        );
        let bad = RemoteSpec { timeout_ms: 0, ..spec() };
        assert!(
            check_spec(&bad, ModelFormat::ActionValue).expect_err("0").to_string().contains("timeout_ms")
        );
    }

    #[test]
    fn remote_section_parses_with_defaults() {
        let s: RemoteSpec =
            serde_json::from_str(r#"{"endpoint":"http://h:1","model":"m","token_env":"MAV_TOKEN"}"#)
                .expect("valid");
        assert_eq!(s.protocol, RemoteProtocol::V2Rest);
        assert_eq!((s.timeout_ms, s.max_in_flight), (10_000, 4));
        assert!(
            serde_json::from_str::<RemoteSpec>(r#"{"endpoint":"http://h:1","model":"m","token":"x"}"#)
                .is_err()
        );
    }
}
