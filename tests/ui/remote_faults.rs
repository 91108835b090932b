//! Faults of a remote model that need no real inference server: nothing listening (connection refused),
//! a server that never answers (timeout), a server that is not ready (503), answers that are malformed or of
//! the wrong shape, a package asking for what this build does not support. Each is a named error at load
//! or a failed evaluation, within the package's timeout; none panics or hangs. The app shows a server that
//! hangs or is overloaded at once, and says why there are no values.

use crate::common;
use crate::ui_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::chess;
use mavboard::inference::evaluator::{EvalError, EvalRequest};
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::RemoteError;
use mavboard::inference::{LoadError, load_evaluator};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A remote copy of the shipped mav-enc-tiny (its mav.json and tokenizer.json, no model.onnx) whose
/// `remote` section is `remote`.
fn remote_package(tag: &str, remote: serde_json::Value) -> PathBuf {
    remote_copy("mav-enc-tiny", tag, remote)
}

/// A remote copy of a shipped package.
fn remote_copy(name: &str, tag: &str, remote: serde_json::Value) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models").join(name);
    let dir = std::env::temp_dir().join(format!("mavboard-remote-faults-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(src.join("tokenizer.json"), dir.join("tokenizer.json")).expect("tokenizer");
    let text = std::fs::read_to_string(src.join("mav.json")).expect("mav.json");
    let mut m: serde_json::Value = serde_json::from_str(&text).expect("json");
    m["remote"] = remote;
    std::fs::write(dir.join("mav.json"), serde_json::to_string_pretty(&m).expect("json")).expect("write");
    dir
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

fn remote_error(r: Result<impl Sized, LoadError>) -> RemoteError {
    match r {
        Err(LoadError::Remote { error, .. }) => *error,
        Err(e) => panic!("expected a remote error, got {e}"),
        Ok(_) => panic!("expected a remote error, the package opened"),
    }
}

/// A fake Open Inference Protocol server on a random port: `answer(method, path)` gives the status and
/// body (`None`: read the request and never answer). Serves until dropped; every loop is bounded by the
/// stop flag and a read timeout.
struct FakeServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// `(method, path, request head lowercased)` → the answer: `None` reads the request and never answers,
/// status 0 closes the connection without an answer (a server that restarts while a request is out).
type Answer = fn(&str, &str, &str) -> Option<(u16, String)>;

impl FakeServer {
    fn start(answer: Answer) -> FakeServer {
        FakeServer::start_on("127.0.0.1:0", answer)
    }

    /// The server on `addr` (`0.0.0.0:0` to be reached by the machine's network address too).
    fn start_on(addr: &str, answer: Answer) -> FakeServer {
        let listener = TcpListener::bind(addr).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let flag = flag.clone();
                        held.push(std::thread::spawn(move || serve_conn(stream, answer, &flag)));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            for h in held {
                h.join().ok();
            }
        });
        FakeServer { port, stop, thread: Some(thread) }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

fn serve_conn(stream: TcpStream, answer: Answer, stop: &AtomicBool) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_millis(50))).ok();
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut out = stream;
    while !stop.load(Ordering::Relaxed) {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(_) => continue,
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
        let mut length = 0usize;
        let mut head = String::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            head.push_str(&h.to_ascii_lowercase());
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        match answer(&method, &path, &head) {
            Some((0, _)) => return,
            Some((status, body)) => {
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if out.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            }
            None => {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return;
            }
        }
    }
}

const METADATA: &str = r#"{"name":"mav-enc-tiny","versions":[],"platform":"","inputs":[
    {"name":"input_ids","datatype":"INT64","shape":[-1,-1]},
    {"name":"attention_mask","datatype":"INT64","shape":[-1,-1]}],
  "outputs":[{"name":"value_logits","datatype":"FP32","shape":[-1,-1,64]},
    {"name":"best_logits","datatype":"FP32","shape":[-1,-1]}]}"#;

fn spec(endpoint: &str) -> serde_json::Value {
    serde_json::json!({"endpoint": endpoint, "model": "mav-enc-tiny", "timeout_ms": 500, "max_in_flight": 2})
}

#[test]
fn connection_refused_is_a_named_error_at_load() {
    let dir = remote_package("refused", spec(&format!("http://127.0.0.1:{}", free_port())));
    let start = Instant::now();
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::ConnectionRefused { .. }), "{err}");
    assert!(err.to_string().contains("connection refused"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5), "retries are bounded: {:?}", start.elapsed());
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = FakeServer::start(|_, _, _| None);
    let dir = remote_package("silent", spec(&server.endpoint()));
    let start = Instant::now();
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::Timeout { ms: 500, .. }), "{err}");
    // Three bounded attempts of 500 ms with 100 + 200 ms of backoff.
    assert!(start.elapsed() < Duration::from_secs(4), "bounded: {:?}", start.elapsed());
}

#[test]
fn a_model_that_is_not_ready_is_named() {
    let server = FakeServer::start(|_, path, _| match path {
        "/v2/health/ready" => Some((200, String::new())),
        _ => Some((503, r#"{"error":"loading"}"#.into())),
    });
    let dir = remote_package("unready", spec(&server.endpoint()));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::NotReady { status: 503, .. }), "{err}");
    assert!(err.to_string().contains("model mav-enc-tiny") && err.to_string().contains("503"), "{err}");
}

#[test]
fn a_served_signature_that_differs_names_the_field() {
    let server = FakeServer::start(|_, path, _| match path {
        "/v2/models/mav-enc-tiny" => Some((200, METADATA.replace("64]", "128]"))),
        _ => Some((200, String::new())),
    });
    let dir = remote_package("signature", spec(&server.endpoint()));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    let msg = err.to_string();
    assert!(matches!(err, RemoteError::Signature { .. }), "{msg}");
    assert!(msg.contains("value_logits axis 2 (buckets)") && msg.contains("expected 64, found 128"), "{msg}");
}

/// Opens a package against a fake server whose inference answer is `infer`, and evaluates the start
/// position: the evaluation must fail with a message containing `needle`.
fn failed_evaluation(tag: &str, answer: Answer, needle: &str) {
    let server = FakeServer::start(answer);
    let dir = remote_package(tag, spec(&server.endpoint()));
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&dir, &SessionOptions::default()).expect("loads against the fake server");
    let start = Instant::now();
    let results = e.evaluate(&[EvalRequest::values(chess(START)), EvalRequest::values(chess(START))]);
    assert!(start.elapsed() < Duration::from_secs(3), "bounded: {:?}", start.elapsed());
    assert_eq!(results.len(), 2);
    for r in results {
        match r {
            Err(EvalError::Server(msg)) => assert!(msg.contains(needle), "{tag}: {msg}"),
            Err(e) => panic!("{tag}: expected the server's failure, got {e}"),
            Ok(_) => panic!("{tag}: expected a failed evaluation"),
        }
    }
}

fn ready_and_metadata(path: &str) -> Option<(u16, String)> {
    match path {
        "/v2/models/mav-enc-tiny" => Some((200, METADATA.into())),
        _ => Some((200, String::new())),
    }
}

/// A server that is up but answers every inference request with 503.
fn overloaded(method: &str, path: &str, _body: &str) -> Option<(u16, String)> {
    if method == "POST" { Some((503, r#"{"error":"overloaded"}"#.into())) } else { ready_and_metadata(path) }
}

#[test]
fn malformed_answers_are_failed_evaluations() {
    failed_evaluation(
        "garbage",
        |m, p, _| if m == "POST" { Some((200, "not json".into())) } else { ready_and_metadata(p) },
        "malformed answer",
    );
    failed_evaluation(
        "wrong-shape",
        |m, p, _| {
            if m == "POST" {
                Some((
                    200,
                    r#"{"outputs":[{"name":"value_logits","datatype":"FP32","shape":[1,1,64],"data":[0]},
                        {"name":"best_logits","datatype":"FP32","shape":[1,1],"data":[0]}]}"#
                        .into(),
                ))
            } else {
                ready_and_metadata(p)
            }
        },
        "do not fill shape",
    );
    failed_evaluation(
        "wrong-rows",
        |m, p, _| {
            if m == "POST" {
                Some((
                    200,
                    r#"{"outputs":[{"name":"value_logits","datatype":"FP32","shape":[3,1,1],"data":[0,0,0]},
                        {"name":"best_logits","datatype":"FP32","shape":[3,1],"data":[0,0,0]}]}"#
                        .into(),
                ))
            } else {
                ready_and_metadata(p)
            }
        },
        "expected 1 rows",
    );
    failed_evaluation(
        "infinite",
        |m, p, _| {
            if m == "POST" {
                Some((
                    200,
                    r#"{"outputs":[{"name":"value_logits","datatype":"FP32","shape":[1,1,1],"data":[1e39]},
                        {"name":"best_logits","datatype":"FP32","shape":[1,1],"data":[0]}]}"#
                        .into(),
                ))
            } else {
                ready_and_metadata(p)
            }
        },
        "not a finite number",
    );
    failed_evaluation(
        "nan",
        |m, p, _| {
            if m == "POST" {
                // Python's json module writes NaN so; it is not JSON.
                Some((
                    200,
                    r#"{"outputs":[{"name":"value_logits","datatype":"FP32","shape":[1,1,1],"data":[NaN]},
                        {"name":"best_logits","datatype":"FP32","shape":[1,1],"data":[0]}]}"#
                        .into(),
                ))
            } else {
                ready_and_metadata(p)
            }
        },
        "malformed answer",
    );
    failed_evaluation("server-error", overloaded, "HTTP 503: overloaded");
    failed_evaluation(
        "closed",
        |m, p, _| if m == "POST" { Some((0, String::new())) } else { ready_and_metadata(p) },
        "the connection failed",
    );
    failed_evaluation(
        "slow",
        |m, p, _| if m == "POST" { None } else { ready_and_metadata(p) },
        "within 500 ms",
    );
}

#[test]
fn unsupported_remote_settings_are_refused_before_any_call() {
    let grpc = remote_package(
        "grpc",
        serde_json::json!({"endpoint": "http://127.0.0.1:1", "model": "m", "protocol": "v2-grpc"}),
    );
    let msg = remote_error(load_evaluator(&grpc, &SessionOptions::default())).to_string();
    assert!(msg.contains("v2-grpc") && msg.contains("not supported yet"), "{msg}");
    let token = remote_package(
        "token",
        serde_json::json!({"endpoint": "http://127.0.0.1:1", "model": "m",
                           "token_env": "MAVBOARD_TEST_TOKEN_THAT_IS_NOT_SET"}),
    );
    let msg = remote_error(load_evaluator(&token, &SessionOptions::default())).to_string();
    assert!(msg.contains("MAVBOARD_TEST_TOKEN_THAT_IS_NOT_SET"), "{msg}");
}

/// An OpenAI-compatible server of mav-tiny whose completions are `completion` (a model list, no
/// detokenize endpoint).
fn openai(path: &str, completion: fn() -> (u16, String)) -> Option<(u16, String)> {
    match path {
        "/v1/models" => Some((200, r#"{"object":"list","data":[{"id":"mav-tiny"}]}"#.into())),
        "/v1/completions" => Some(completion()),
        _ => Some((404, r#"{"error":{"code":404,"message":"File Not Found"}}"#.into())),
    }
}

/// A llama.cpp-shaped completion of `n` tokens (`<ctrl0>`), each with `top` log-probabilities.
fn completion(n: usize, top: usize, finish: &str) -> String {
    let alts: Vec<String> = (0..top).map(|i| format!(r#"{{"id":{},"logprob":-{i}.5}}"#, 100 + i)).collect();
    let step = format!(r#"{{"id":100,"logprob":-0.5,"top_logprobs":[{}]}}"#, alts.join(","));
    let steps = vec![step; n].join(",");
    format!(r#"{{"choices":[{{"text":"","logprobs":{{"content":[{steps}]}},"finish_reason":"{finish}"}}]}}"#)
}

fn lm_spec(endpoint: &str) -> serde_json::Value {
    serde_json::json!({"endpoint": endpoint, "model": "mav-tiny", "protocol": "openai-completions",
                       "timeout_ms": 500, "max_in_flight": 2})
}

#[test]
fn an_llm_server_without_enough_log_probabilities_is_refused_at_load() {
    let none = FakeServer::start(|_, path, _| {
        openai(path, || {
            (200, r#"{"choices":[{"text":"e2e4","logprobs":null,"finish_reason":"length"}]}"#.into())
        })
    });
    let dir = remote_copy("mav-tiny", "no-logprobs", lm_spec(&none.endpoint()));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::NoLogprobs { .. }), "{err}");
    assert!(err.to_string().contains("transformers serve"), "{err}");
    let few = FakeServer::start(|_, path, _| openai(path, || (200, completion(1, 5, "length"))));
    let dir = remote_copy("mav-tiny", "few-logprobs", lm_spec(&few.endpoint()));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::FewLogprobs { asked: 64, got: 5, .. }), "{err}");
    assert!(err.to_string().contains("--max-logprobs 64"), "{err}");
    // vLLM refuses more than its --max-logprobs outright: the message says how to raise it.
    let refused = FakeServer::start(|_, path, _| {
        openai(path, || {
            (400, r#"{"error":{"message":"Requested sample logprobs of 64, which is greater than max allowed: 20"}}"#.into())
        })
    });
    let dir = remote_copy("mav-tiny", "vllm-limit", lm_spec(&refused.endpoint()));
    let msg = remote_error(load_evaluator(&dir, &SessionOptions::default())).to_string();
    assert!(msg.contains("max allowed: 20") && msg.contains("--max-logprobs 64"), "{msg}");
}

#[test]
fn an_llm_server_with_another_model_or_vocabulary_is_refused_at_load() {
    let other = FakeServer::start(|_, path, _| match path {
        "/v1/models" => Some((200, r#"{"data":[{"id":"llama-3"},{"id":"qwen"}]}"#.into())),
        _ => Some((404, String::new())),
    });
    let dir = remote_copy("mav-tiny", "other-model", lm_spec(&other.endpoint()));
    let msg = remote_error(load_evaluator(&dir, &SessionOptions::default())).to_string();
    assert!(msg.contains("serves llama-3, qwen, not mav-tiny"), "{msg}");
    let vocabulary = FakeServer::start(|_, path, _| match path {
        "/detokenize" => Some((200, r#"{"content":"<s>\n"}"#.into())),
        p => openai(p, || (200, completion(1, 64, "length"))),
    });
    let dir = remote_copy("mav-tiny", "vocabulary", lm_spec(&vocabulary.endpoint()));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::Vocabulary { .. }), "{err}");
    assert!(err.to_string().contains("\"<s>\" there"), "{err}");
    // Without a detokenize endpoint the package opens, and says the vocabulary was not checked.
    let plain = FakeServer::start(|_, path, _| openai(path, || (200, completion(1, 64, "length"))));
    let dir = remote_copy("mav-tiny", "no-detokenize", lm_spec(&plain.endpoint()));
    let loaded = load_evaluator(&dir, &SessionOptions::default()).expect("opens");
    assert!(
        loaded.device.notice.as_deref().is_some_and(|n| n.contains("not checked")),
        "{:?}",
        loaded.device
    );
}

#[test]
fn an_llm_server_that_stops_early_fails_the_evaluation_by_name() {
    // One token per completion and "length": the server's context is shorter than it says.
    let server = FakeServer::start(|_, path, _| openai(path, || (200, completion(1, 64, "length"))));
    let dir = remote_copy("mav-tiny", "truncated", lm_spec(&server.endpoint()));
    let mut m = load_evaluator(&dir, &SessionOptions::default()).expect("opens");
    let start = chess(START);
    let mut req = EvalRequest::values(start.clone());
    req.mode = mavboard::inference::evaluator::DecodeMode::Free;
    match m.evaluator.evaluate(&[req]).remove(0) {
        Err(EvalError::Server(msg)) => assert!(msg.contains("stopped writing after 1 of"), "{msg}"),
        other => panic!("expected a named error, got {:?}", other.map(|r| r.raw_text)),
    }
}

/// Answers only requests that carry `Authorization: Bearer <$PATH>` (an environment variable every test
/// run has; the test cannot set one of its own without `unsafe`).
fn needs_token(_: &str, path: &str, head: &str) -> Option<(u16, String)> {
    let token = std::env::var("PATH").unwrap_or_default().trim().to_ascii_lowercase();
    if !head.contains(&format!("authorization: bearer {token}\r\n")) {
        return Some((401, r#"{"error":"missing or wrong token"}"#.into()));
    }
    ready_and_metadata(path)
}

#[test]
fn the_bearer_token_is_sent_and_never_shown() {
    let server = FakeServer::start(needs_token);
    let without = remote_package("no-token", spec(&server.endpoint()));
    let err = remote_error(load_evaluator(&without, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::NotReady { status: 401, .. }), "{err}");
    let mut with = spec(&server.endpoint());
    with["token_env"] = serde_json::json!("PATH");
    let dir = remote_package("token-sent", with);
    let mavboard::inference::LoadedModel { evaluator: mut e, .. } =
        load_evaluator(&dir, &SessionOptions::default()).expect("the token is sent on every call");
    let token = std::env::var("PATH").unwrap_or_default();
    let package = mavboard::model::ModelPackage::open(&dir).expect("package");
    let backend =
        mavboard::inference::remote::RemoteBackend::connect(&package, Default::default()).expect("connects");
    assert!(!format!("{backend:?}").contains(&token), "the token is not in the backend's Debug output");
    // The fake server's inference answer is empty: a failed evaluation whose message has no token either.
    match e.evaluate(&[EvalRequest::values(chess(START))]).remove(0) {
        Err(err) => {
            assert!(!err.to_string().contains(&token) && err.to_string().contains("malformed"), "{err}")
        }
        Ok(_) => panic!("an empty answer was accepted"),
    }
}

/// The app with a remote package whose server loads it but then `answer`s every inference request: the
/// status bar and the values panel must name the fault within a few timeouts, with `needle` in the error.
fn app_shows_a_failing_server(tag: &str, answer: Answer, needle: &str) {
    use egui_kittest::kittest::Queryable;
    use mavboard::app::server_health::ServerHealth;
    let server = FakeServer::start(answer);
    let dir = remote_package(tag, spec(&server.endpoint()));
    let settings = mavboard::app::settings::Settings { model_dir: Some(dir.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let start = Instant::now();
    let shown = ui_common::step_until(&mut h, Duration::from_secs(20), |app| {
        matches!(app.state.analysis.server, ServerHealth::Unreachable { .. })
    });
    assert!(shown, "{tag}: the server shows as failing: {:?}", h.state().state.analysis.server);
    eprintln!("{tag}: shown after {:?}", start.elapsed());
    let ServerHealth::Unreachable { error, last_good, .. } = &h.state().state.analysis.server else {
        unreachable!()
    };
    assert!(error.contains(needle), "{tag}: {error}");
    assert!(last_good.is_none(), "{tag}: no good answer came");
    assert!(
        h.get_all_by_label_contains("server unreachable").next().is_some(),
        "{tag}: the status bar says so"
    );
    assert!(
        h.get_all_by_label_contains("No values: the model server").next().is_some(),
        "{tag}: the values panel says why there are no values"
    );
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_app_names_a_server_that_hangs_or_is_overloaded() {
    app_shows_a_failing_server(
        "app-hang",
        |m, p, _| if m == "POST" { None } else { ready_and_metadata(p) },
        "within 500 ms",
    );
    app_shows_a_failing_server("app-503", overloaded, "HTTP 503: overloaded");
}

#[test]
fn the_status_bar_says_when_a_token_goes_in_clear() {
    use egui_kittest::kittest::Queryable;
    // 0.0.0.0 is not a loopback address, yet Linux connects to it locally: no network needed.
    let ip = "0.0.0.0";
    let server = FakeServer::start_on("0.0.0.0:0", |_, path, _| ready_and_metadata(path));
    let endpoint = format!("http://{ip}:{}", server.port);
    // Refused without the package's consent...
    let with_token = |insecure: bool| {
        let mut s = spec(&endpoint);
        s["token_env"] = serde_json::json!("PATH");
        s["insecure_http"] = serde_json::json!(insecure);
        s
    };
    let err = remote_error(load_evaluator(
        &remote_package("clear-refused", with_token(false)),
        &SessionOptions::default(),
    ));
    assert!(matches!(err, RemoteError::TokenInClear { .. }), "{err}");
    // ...and said in the status bar with it.
    let dir = remote_package("clear-allowed", with_token(true));
    let settings = mavboard::app::settings::Settings { model_dir: Some(dir.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let loaded =
        ui_common::step_until(&mut h, Duration::from_secs(20), |app| app.state.analysis.device.is_some());
    assert!(loaded, "the package loads against {endpoint}");
    assert!(
        h.get_all_by_label_contains(&format!("the token goes over plain HTTP to {ip}")).next().is_some(),
        "the status bar says the token goes in clear"
    );
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}
