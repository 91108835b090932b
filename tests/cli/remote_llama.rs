//! A mav-lm served by an LLM engine: llama.cpp's server (built by `./packaging/dev.sh` from the llama.cpp source
//! that the llama-cpp-python package on PyPI carries) on `tests/fixtures/hf/tiny_llama.gguf`, the GGUF that
//! llama.cpp's own converter made of the Hugging Face fixture (`training/hf/check_llama_cpp.py --gguf-out`).
//!
//! The server continues the fixture prompts as the imported package does; a package pointed at it with
//! `remote.protocol: "openai-completions"` analyses, writes traces and runs MCTS as the local package does
//! (the same moves, texts and choices; bucket probabilities within 1e-4 when the server lists every token's
//! log-probability); a wrong model name or a short context is refused at load by name; a killed server gives
//! named errors and the next answer after a restart is good again.
//!
//! Needs llama.cpp's server (MAVBOARD_LLAMA_SERVER or .llama/bin/llama-server) and the importer's Python
//! packages; the tests skip without them except under MAVBOARD_REQUIRE_LLAMA=1 (set by dev.sh test and so by
//! CI), where they fail.

use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{chess, mavboard_command, mavboard_output};
use mavboard::game::GameKind;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult};
use mavboard::inference::onnx::OnnxSession;
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::onnx::decoder::KvDecoder;
use mavboard::inference::remote::RemoteError;
use mavboard::inference::{LoadError, load_evaluator, load_evaluator_for};
use mavboard::mav::state::MavState;
use mavboard::model::ModelPackage;

const TOLERANCE: f64 = 1e-4;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn required() -> bool {
    std::env::var("MAVBOARD_REQUIRE_LLAMA").is_ok_and(|v| v == "1")
}

/// llama.cpp's server, or None (skip) outside dev.sh/CI.
fn llama_server() -> Option<PathBuf> {
    let bin = std::env::var_os("MAVBOARD_LLAMA_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".llama/bin/llama-server"));
    if bin.is_file() {
        return Some(bin);
    }
    if required() {
        panic!("llama.cpp's server is missing at {}: run ./packaging/dev.sh test", bin.display());
    }
    println!("skipped: llama.cpp's server is missing ({}; ./packaging/dev.sh test builds it)", bin.display());
    None
}

/// The fixture imported once (`mavboard import hf`), marked as trained on traces so that it writes them.
fn local_package() -> Option<&'static Path> {
    static PACKAGE: OnceLock<Option<PathBuf>> = OnceLock::new();
    PACKAGE
        .get_or_init(|| {
            let out = std::env::temp_dir().join(format!("mavboard-llama-local-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&out);
            let folder = root().join("tests/fixtures/hf/tiny_llama");
            let o = mavboard_command()
                .args(["import", "hf", folder.to_str()?, "-o", out.to_str()?, "--internal-search", "true"])
                .current_dir(root())
                .output()
                .expect("mavboard runs");
            if !o.status.success() {
                let err = String::from_utf8_lossy(&o.stderr).into_owned();
                if required() || std::env::var("MAVBOARD_REQUIRE_IMPORT").is_ok_and(|v| v == "1") {
                    panic!("import hf failed: {err}");
                }
                println!("skipped: import hf failed (./packaging/dev.sh import-deps): {err}");
                return None;
            }
            Some(out)
        })
        .as_deref()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// A llama.cpp server on the fixture GGUF, killed when dropped: 4 slots of `context` tokens each (a KV cache
/// of 4 × `context`, so that 4 requests in flight never exhaust it).
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(bin: &Path, port: u16, context: usize) -> Server {
        let gguf = root().join("tests/fixtures/hf/tiny_llama.gguf");
        let child = Command::new(bin)
            .args(["-m", gguf.to_str().expect("utf-8"), "--alias", "tiny", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "-np", "4", "-c", &(4 * context).to_string(), "-t", "1"])
            .args(["-fa", "off", "--cache-type-k", "f32", "--cache-type-v", "f32"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("llama-server starts");
        let server = Server { child, port };
        let health = format!("http://127.0.0.1:{port}/health");
        let start = Instant::now();
        while ureq::get(&health).call().is_err() {
            assert!(start.elapsed() < Duration::from_secs(60), "llama-server did not become ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A remote copy of `local` (mav.json and tokenizer.json, no model.onnx) pointed at `endpoint`.
fn remote_copy(local: &Path, tag: &str, endpoint: &str, extra: serde_json::Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-llama-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(local.join("tokenizer.json"), dir.join("tokenizer.json")).expect("tokenizer");
    let text = std::fs::read_to_string(local.join("mav.json")).expect("mav.json");
    let mut m: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut remote = serde_json::json!({
        "endpoint": endpoint, "model": "tiny", "protocol": "openai-completions", "timeout_ms": 60000,
    });
    if let (Some(r), Some(e)) = (remote.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    m["remote"] = remote;
    std::fs::write(dir.join("mav.json"), serde_json::to_string_pretty(&m).expect("json")).expect("write");
    dir
}

fn everything(vocab: usize) -> serde_json::Value {
    serde_json::json!({ "top_logprobs": vocab })
}

/// The log-softmax of the package's logits after `ids`, recomputed in full.
fn local_logprobs(dec: &mut KvDecoder, ids: &[u32]) -> Vec<f64> {
    let (_, logits) = dec.prefill(&[ids.to_vec()]).expect("prefill");
    let row: Vec<f64> = logits.row(0).iter().map(|&l| f64::from(l)).collect();
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lse = max + row.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
    row.iter().map(|l| l - lse).collect()
}

#[test]
fn the_converted_gguf_continues_the_fixture_prompts_as_the_package_does() {
    let (Some(bin), Some(local)) = (llama_server(), local_package()) else { return };
    let server = Server::start(bin.as_path(), free_port(), 1024);
    let pkg = ModelPackage::open(local).expect("package");
    let m = &pkg.manifest;
    let session = OnnxSession::open(&pkg, &SessionOptions::default()).expect("session");
    let mut dec = KvDecoder::new(session.session, m.num_layers, m.num_heads, m.head_dim, 0);
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/hf/tiny_llama-reference.json"))
            .expect("reference"),
    )
    .expect("json");
    let prompts: Vec<Vec<u32>> = serde_json::from_value(reference["ids"].clone()).expect("ids");
    let (mut worst, mut compared) = (0.0f64, 0);
    for ids in &prompts {
        let prompt = &ids[..ids.len() / 2];
        let body = serde_json::json!({
            "model": "tiny", "prompt": prompt, "max_tokens": 16, "temperature": 0, "logprobs": 10,
        });
        let text = ureq::post(format!("{}/v1/completions", server.endpoint()))
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .expect("completion")
            .body_mut()
            .read_to_string()
            .expect("body");
        let answer: serde_json::Value = serde_json::from_str(&text).expect("json");
        let content = answer["choices"][0]["logprobs"]["content"].as_array().expect("log-probabilities");
        let mut fed = prompt.to_vec();
        for step in content {
            let lp = local_logprobs(&mut dec, &fed);
            let ours = lp.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i as u64);
            assert_eq!(step["id"].as_u64(), ours, "the same greedy token after {} tokens", fed.len());
            for alt in step["top_logprobs"].as_array().expect("top") {
                let id = alt["id"].as_u64().expect("id") as usize;
                worst = worst.max((alt["logprob"].as_f64().expect("logprob") - lp[id]).abs());
                compared += 1;
            }
            fed.push(step["id"].as_u64().expect("id") as u32);
        }
        assert_eq!(content.len(), 16, "16 tokens written");
    }
    println!(
        "GGUF on llama.cpp: same greedy continuation in {} prompts; max |Δ log p| {worst:.2e} over {compared}",
        prompts.len()
    );
    assert!(worst <= TOLERANCE, "log-probabilities differ by {worst}");
}

/// Requests of both decodings, with the best action and the next state.
fn requests<S: MavState>(states: &[S]) -> Vec<EvalRequest<S>> {
    let mut out = Vec::new();
    for s in states {
        for mode in [DecodeMode::Constrained, DecodeMode::Free] {
            let mut r = EvalRequest::values(s.clone());
            r.mode = mode;
            r.want_best_action = true;
            r.want_next_state = true;
            out.push(r);
        }
    }
    out
}

type Answers<S> = Vec<Result<EvalResult<S>, EvalError>>;

/// The largest difference of a bucket or best-action probability; every move, text and state the same.
fn compare<S: MavState>(local: &Answers<S>, remote: &Answers<S>) -> f64 {
    let mut worst = 0.0f64;
    for (a, b) in local.iter().zip(remote) {
        let (a, b) = (a.as_ref().expect("local"), b.as_ref().expect("remote"));
        let texts = |r: &EvalResult<S>| r.moves.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(a), texts(b), "the same moves in the same order");
        assert_eq!(a.raw_text, b.raw_text, "the same text");
        assert_eq!(a.next_state.as_ref().map(|s| &s.text), b.next_state.as_ref().map(|s| &s.text));
        for (x, y) in a.moves.iter().zip(&b.moves) {
            let (p, q) = (x.dist.as_ref().expect("values"), y.dist.as_ref().expect("values"));
            for (u, v) in p.probs().iter().zip(q.probs()) {
                worst = worst.max((u - v).abs());
            }
        }
        for (u, v) in a.best_action.iter().flatten().zip(b.best_action.iter().flatten()) {
            worst = worst.max((u - v).abs());
        }
    }
    worst
}

fn both<S: MavState>(local: &Path, remote: &Path, game: GameKind, states: &[S]) -> f64 {
    let options = SessionOptions::default();
    let mut l = load_evaluator_for::<S>(local, &options, game).expect("local").evaluator;
    let mut r = load_evaluator_for::<S>(remote, &options, game).expect("remote").evaluator;
    let reqs = requests(states);
    compare(&l.evaluate(&reqs), &r.evaluate(&reqs))
}

#[test]
fn remote_analysis_equals_local_in_every_game() {
    let (Some(bin), Some(local)) = (llama_server(), local_package()) else { return };
    let server = Server::start(bin.as_path(), free_port(), 1024);
    let vocab = ModelPackage::open(local).expect("package").manifest.vocab_size;
    let remote = remote_copy(local, "analysis", &server.endpoint(), everything(vocab));
    let chess_states = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    ]
    .map(chess);
    let mut worst = both(local, &remote, GameKind::Chess, &chess_states);
    let c4 = [ConnectFourState::from_moves("4453").expect("moves")];
    worst = worst.max(both(local, &remote, GameKind::ConnectFour, &c4));
    let hex = [HexState::new(5).expect("5×5")];
    worst = worst.max(both(local, &remote, GameKind::Hex, &hex));
    println!("remote vs local, every log-probability listed: max |Δ p| {worst:.2e}");
    assert!(worst <= TOLERANCE, "probabilities differ by {worst}");
    // As many log-probabilities as buckets (the default): the same analysis runs, and says so.
    let top = remote_copy(local, "analysis-top", &server.endpoint(), serde_json::json!({}));
    let mut r = load_evaluator(&top, &SessionOptions::default()).expect("remote").evaluator;
    let constrained: Vec<_> =
        requests(&chess_states).into_iter().filter(|q| q.mode == DecodeMode::Constrained).collect();
    for (q, answer) in constrained.iter().zip(r.evaluate(&constrained)) {
        let legal = mavboard::game::GameState::legal_actions(&q.state).len();
        assert_eq!(answer.expect("answered").moves.len(), legal, "every legal move valued");
    }
}

/// `mavboard analyse … --json` of a package.
fn analyse(package: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["analyse", "--model", package.to_str().expect("utf-8"), "--json"];
    args.extend_from_slice(extra);
    let o = mavboard_output(&args);
    assert!(o.status.success(), "analyse {extra:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

#[test]
fn remote_traces_and_mcts_match_local() {
    let (Some(bin), Some(local)) = (llama_server(), local_package()) else { return };
    let server = Server::start(bin.as_path(), free_port(), 1024);
    let vocab = ModelPackage::open(local).expect("package").manifest.vocab_size;
    let remote = remote_copy(local, "trace", &server.endpoint(), everything(vocab));
    for decoding in ["free", "rules"] {
        let args = ["--internal", "2,1", "--trace-decoding", decoding];
        let (a, b) = (analyse(local, &args), analyse(&remote, &args));
        let trace = |v: &serde_json::Value| v["model"]["written"].as_str().map(str::to_owned);
        assert!(trace(&a).is_some_and(|t| !t.is_empty()), "a trace is written: {}", a["model"]["status"]);
        assert_eq!(trace(&a), trace(&b), "the same {decoding} trace");
        assert_eq!(a["model"]["comparison"], b["model"]["comparison"]);
    }
    let args = ["--sims", "24", "--batch", "4"];
    let (a, b) = (analyse(local, &args), analyse(&remote, &args));
    assert_eq!(a["search"]["best"], b["search"]["best"], "the same MCTS choice");
    let visits = |v: &serde_json::Value| {
        v["search"]["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| m["visits"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(visits(&a), visits(&b), "the same visit counts");
}

#[test]
fn a_killed_server_gives_named_errors_and_a_restart_recovers() {
    let (Some(bin), Some(local)) = (llama_server(), local_package()) else { return };
    let port = free_port();
    let server = Server::start(bin.as_path(), port, 1024);
    let remote = remote_copy(local, "kill", &server.endpoint(), serde_json::json!({ "timeout_ms": 5000 }));
    let mut r = load_evaluator(&remote, &SessionOptions::default()).expect("remote").evaluator;
    let reqs = requests(&[chess("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")]);
    let before: Vec<_> = r.evaluate(&reqs).into_iter().map(|a| a.expect("answered")).collect();
    drop(server);
    let start = Instant::now();
    for answer in r.evaluate(&reqs) {
        match answer {
            Err(EvalError::Server(msg)) => assert!(msg.contains("connection refused"), "{msg}"),
            other => panic!("expected a named server error, got {:?}", other.map(|r| r.raw_text)),
        }
    }
    assert!(start.elapsed() < Duration::from_secs(10), "bounded: {:?}", start.elapsed());
    let _server = Server::start(bin.as_path(), port, 1024);
    let after: Vec<_> = r.evaluate(&reqs).into_iter().map(|a| a.expect("answered again")).collect();
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(a.raw_text, b.raw_text, "the same answer after the restart");
    }
}

fn remote_error(r: Result<impl Sized, LoadError>) -> RemoteError {
    match r {
        Err(LoadError::Remote { error, .. }) => *error,
        Err(e) => panic!("expected a remote error, got {e}"),
        Ok(_) => panic!("expected a remote error, the package opened"),
    }
}

#[test]
fn a_wrong_model_name_or_a_short_context_is_refused_at_load() {
    let (Some(bin), Some(local)) = (llama_server(), local_package()) else { return };
    let server = Server::start(bin.as_path(), free_port(), 1024);
    let wrong = remote_copy(local, "name", &server.endpoint(), serde_json::json!({ "model": "tiny-other" }));
    let err = remote_error(load_evaluator(&wrong, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::UnknownModel { .. }), "{err}");
    assert!(err.to_string().contains("serves tiny, not tiny-other"), "{err}");
    let short = Server::start(bin.as_path(), free_port(), 256);
    let dir = remote_copy(local, "short", &short.endpoint(), serde_json::json!({}));
    let err = remote_error(load_evaluator(&dir, &SessionOptions::default()));
    assert!(matches!(err, RemoteError::ShortContext { served: 256, needed: 1024, .. }), "{err}");
    assert!(err.to_string().contains("-c 1024"), "{err}");
}
