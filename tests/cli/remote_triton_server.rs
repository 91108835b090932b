//! Remote evaluation against a real Triton Inference Server (2.51, the tritonserver binary that PyPI's
//! nvidia-pytriton wheel bundles) on 127.0.0.1, serving the model repository that `mavboard package triton`
//! writes (`packaging/triton/serve.py`): that build has no ONNX Runtime backend, so the config's backend
//! becomes Triton's Python backend running the same model.onnx on ONNX Runtime (packaging/triton/model.py);
//! the declared inputs, outputs, dims, max_batch_size and dynamic batching are served as mavboard wrote
//! them. Remote and local results agree within 1e-5 per bucket (mav-encoder and action-value), a
//! 400-simulation MAV-MCTS runs remotely, killing the server in the middle of a search gives failed
//! evaluations and a search that ends (and once restarted on the same ports the same evaluator works again),
//! an answer slower than `timeout_ms` is a timeout error, and a model Triton has unloaded is named as not
//! ready.
//!
//! The server comes from `.venv-triton/` (`./packaging/dev.sh test` installs it and sets
//! MAVBOARD_REQUIRE_TRITON=1, so in CI these tests run; outside dev.sh, without the venv, they skip with a
//! message). Each test starts its own server on free loopback ports and kills it (its process group, which
//! holds the Python-backend stub too) when done, removing its shared-memory regions; every wait is bounded.

use crate::common;

use crate::mlserver_common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::chess;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::{GameKind, GameState};
use mavboard::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::RemoteError;
use mavboard::inference::{LoadError, LoadedModel, load_evaluator, load_evaluator_for};
use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};
use mlserver_common::{asset, free_ports, line, remote_package, requests, root, search_through_a_kill, temp};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The Triton venv's Python, or `None` (with a message) when the test may skip: only outside dev.sh.
fn triton_python() -> Option<PathBuf> {
    let py = root().join(".venv-triton/bin/python");
    if py.is_file() {
        return Some(py);
    }
    assert!(
        std::env::var_os("MAVBOARD_REQUIRE_TRITON").is_none(),
        "MAVBOARD_REQUIRE_TRITON is set but {} is missing: ./packaging/dev.sh test installs it",
        py.display()
    );
    eprintln!("skipped: no Triton venv at {} (run ./packaging/dev.sh test, which installs it)", py.display());
    None
}

/// A plain HTTP client for the test's own calls (readiness, Triton's repository API).
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// Triton serving `package` as `name` through packaging/triton/serve.py, killed (with its process group)
/// on drop.
struct Triton {
    child: Child,
    port: u16,
    /// The REST, gRPC and metrics ports (a restart on the same ports keeps the endpoint).
    ports: (u16, u16, u16),
    log: PathBuf,
}

impl Triton {
    /// Starts the server and waits until the model is ready; a start that fails (e.g. a port taken between
    /// choosing and binding it) is tried again on new ports, three times at most.
    fn start(python: &Path, package: &Path, name: &str, delay_ms: u64) -> Triton {
        let mut last = String::new();
        for _ in 0..3 {
            let started = Instant::now();
            let mut server = Triton::spawn(python, package, name, free_ports(), delay_ms);
            match server.wait_ready(name) {
                Ok(()) => {
                    eprintln!("Triton serving {name} was ready in {:?}", started.elapsed());
                    return server;
                }
                Err(why) => last = why,
            }
        }
        panic!("Triton did not start in three tries: {last}");
    }

    /// Starts serve.py on `(rest, grpc, metrics)` without waiting; each answer is held `delay_ms`.
    fn spawn(python: &Path, package: &Path, name: &str, ports: (u16, u16, u16), delay_ms: u64) -> Triton {
        use std::os::unix::process::CommandExt;
        let (port, grpc, metrics) = ports;
        let dir = temp(&format!("triton-{name}-{port}"));
        let log = dir.join("server.log");
        let out = std::fs::File::create(&log).expect("log");
        let err = out.try_clone().expect("log");
        let child = Command::new(python)
            .arg(root().join("packaging/triton/serve.py"))
            .arg(package)
            .args(["--port", &port.to_string(), "--grpc-port", &grpc.to_string()])
            .args(["--metrics-port", &metrics.to_string(), "--name", name])
            .arg("--mavboard")
            .arg(env!("CARGO_BIN_EXE_mavboard"))
            .arg("--dir")
            .arg(dir.join("work"))
            .env("MAVBOARD_SERVE_THREADS", "1")
            .env("MAVBOARD_SERVE_DELAY_MS", delay_ms.to_string())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .expect("starts serve.py");
        Triton { child, port, ports, log }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most 120 s) until the model says it is ready; on failure returns why, with the log.
    fn wait_ready(&mut self, name: &str) -> Result<(), String> {
        let agent = agent();
        let url = format!("{}/v2/models/{name}/ready", self.endpoint());
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("Triton exited ({status}) before it was ready:\n{}", self.log()));
            }
            if agent.get(&url).call().is_ok_and(|r| r.status().as_u16() == 200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill();
        Err(format!("Triton was not ready within 120 s:\n{}", self.log()))
    }

    /// A call to Triton's model-repository API (`load` or `unload`): the status and the body.
    fn repository(&self, name: &str, action: &str) -> (u16, String) {
        let url = format!("{}/v2/repository/models/{name}/{action}", self.endpoint());
        let mut r = agent().post(&url).send_empty().unwrap_or_else(|e| panic!("{url}: {e}"));
        let body = r.body_mut().read_to_string().unwrap_or_default();
        (r.status().as_u16(), body)
    }

    /// Kills the server and its process group (once), reaps it and removes its shared-memory regions.
    fn kill(&mut self) {
        if self.child.try_wait().is_ok_and(|s| s.is_some()) {
            return;
        }
        let pid = self.child.id();
        Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).stderr(Stdio::null()).status().ok();
        self.child.kill().ok();
        self.child.wait().ok();
        // serve.py names them mavboard_triton_PORT_PID_… (tritonserver keeps serve.py's process id).
        let prefix = format!("mavboard_triton_{}_{pid}_", self.port);
        if let Ok(entries) = std::fs::read_dir("/dev/shm") {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    std::fs::remove_file(e.path()).ok();
                }
            }
        }
    }
}

impl Drop for Triton {
    fn drop(&mut self) {
        self.kill();
        // The repository, the backend copy and the log (a failed start's log is in its panic message).
        if let Some(dir) = self.log.parent() {
            std::fs::remove_dir_all(dir).ok();
        }
    }
}

/// The largest difference per bucket between two results (every move's distribution and, when both have
/// it, the best-action distribution); the moves must be the same, in the same order.
fn worst_difference<S: GameState>(local: &EvalResult<S>, remote: &EvalResult<S>, what: &str) -> f64 {
    assert_eq!(local.moves.len(), remote.moves.len(), "{what}: move count");
    let mut worst = 0.0f64;
    for (l, r) in local.moves.iter().zip(&remote.moves) {
        assert_eq!(l.text, r.text, "{what}: move order");
        let (l, r) = (l.dist.as_ref().expect("valued").probs(), r.dist.as_ref().expect("valued").probs());
        assert_eq!(l.len(), r.len(), "{what}: bucket count");
        for (a, b) in l.iter().zip(r) {
            worst = worst.max((a - b).abs());
        }
    }
    assert_eq!(local.best_action.is_some(), remote.best_action.is_some(), "{what}: best action");
    if let (Some(lb), Some(rb)) = (&local.best_action, &remote.best_action) {
        assert_eq!(lb.len(), rb.len(), "{what}: best-action length");
        for (a, b) in lb.iter().zip(rb) {
            worst = worst.max((a - b).abs());
        }
    }
    assert!(worst <= 1e-5, "{what}: remote and local differ by {worst:e} in a bucket");
    worst
}

/// Evaluates `reqs` locally and remotely and returns the largest difference per bucket.
fn compare<S: GameState>(
    local: &mut dyn Evaluator<S>,
    remote: &mut dyn Evaluator<S>,
    reqs: &[EvalRequest<S>],
    what: &str,
) -> f64 {
    let (l, r) = (local.evaluate(reqs), remote.evaluate(reqs));
    assert_eq!(l.len(), r.len());
    let mut worst = 0.0f64;
    for (i, (l, r)) in l.iter().zip(&r).enumerate() {
        let l = l.as_ref().expect("local evaluates");
        let r = r.as_ref().unwrap_or_else(|e| panic!("{what} {i}: remote evaluation failed: {e}"));
        worst = worst.max(worst_difference(l, r, &format!("{what} {i}")));
    }
    worst
}

#[test]
fn triton_results_match_local_and_mcts_runs_remotely() {
    let Some(python) = triton_python() else { return };
    let package = asset("mav-enc-tiny");
    let server = Triton::start(&python, &package, "mav-enc-tiny", 0);
    let remote = remote_package(&package, "triton-match", &server.endpoint(), "mav-enc-tiny", 4);
    let options = SessionOptions::default();

    let LoadedModel { evaluator: mut local, .. } = load_evaluator(&package, &options).expect("local opens");
    let LoadedModel { evaluator: mut far, package: pkg, device } = load_evaluator(&remote, &options)
        .unwrap_or_else(|e| panic!("the remote package opens: {e}\n{}", server.log()));
    assert!(pkg.manifest.remote.is_some());
    assert_eq!(device.provider, mavboard::inference::device::Provider::Remote);

    // Chess: one batch of 12 positions (4 concurrent requests, which Triton's dynamic batcher may put
    // together), then one position alone.
    let reqs = requests(&line(chess(START), 12));
    let mut worst = compare(local.as_mut(), far.as_mut(), &reqs, "chess position");
    worst = worst.max(compare(local.as_mut(), far.as_mut(), &reqs[5..6], "chess position 5 alone"));
    // A batch of 40 positions in one request (max_in_flight 1): rows of different positions, one padding.
    let one = remote_package(&package, "triton-one", &server.endpoint(), "mav-enc-tiny", 1);
    let LoadedModel { evaluator: mut single, .. } = load_evaluator(&one, &options).expect("opens");
    let many = requests(&line(chess(START), 40));
    worst = worst.max(compare(local.as_mut(), single.as_mut(), &many, "chess position (one request)"));

    // Connect Four through the same package and loader.
    let LoadedModel { evaluator: mut local4, .. } =
        load_evaluator_for::<ConnectFourState>(&package, &options, GameKind::ConnectFour).expect("local c4");
    let LoadedModel { evaluator: mut far4, .. } =
        load_evaluator_for::<ConnectFourState>(&remote, &options, GameKind::ConnectFour).expect("remote c4");
    let reqs4 = requests(&line(ConnectFourState::default(), 6));
    worst = worst.max(compare(local4.as_mut(), far4.as_mut(), &reqs4, "connect four position"));
    eprintln!("largest Triton/local difference per bucket (mav-enc-tiny): {worst:e}");

    // A 400-simulation MAV-MCTS with batches of 8 over the remote model.
    let mut mcts = Mcts::new(chess(START), 0, MctsParams::default()).expect("valid params");
    let start = Instant::now();
    mcts.run(far.as_mut(), RunLimits { simulations: 400, batch_size: 8 }).expect("remote search runs");
    mcts.check_consistency().expect("consistent tree");
    let stats = mcts.stats();
    eprintln!("400 simulations through Triton in {:?}: {stats:?}", start.elapsed());
    assert!(stats.simulations >= 400, "{stats:?}");
    assert_eq!(stats.failed, 0, "{stats:?}");
    assert!(!mcts.snapshot().moves.is_empty());
    for dir in [remote, one] {
        std::fs::remove_dir_all(dir).ok();
    }
}

#[test]
fn triton_action_value_matches_local() {
    let Some(python) = triton_python() else { return };
    let package = root().join("tests/fixtures/models/av-fixture");
    let server = Triton::start(&python, &package, "av-fixture", 0);
    let remote = remote_package(&package, "triton-av", &server.endpoint(), "av-fixture", 3);
    let options = SessionOptions::default();
    let LoadedModel { evaluator: mut local, .. } = load_evaluator(&package, &options).expect("local opens");
    let LoadedModel { evaluator: mut far, .. } = load_evaluator(&remote, &options)
        .unwrap_or_else(|e| panic!("the remote package opens: {e}\n{}", server.log()));
    let reqs: Vec<_> = line(chess(START), 5).into_iter().map(EvalRequest::values).collect();
    let worst = compare(local.as_mut(), far.as_mut(), &reqs, "position");
    eprintln!("largest Triton/local difference per bucket (av-fixture): {worst:e}");
    std::fs::remove_dir_all(remote).ok();
}

#[test]
fn killing_triton_mid_search_fails_evaluations_and_a_restart_recovers() {
    let Some(python) = triton_python() else { return };
    let package = asset("mav-enc-tiny");
    let mut server = Triton::start(&python, &package, "mav-enc-tiny", 0);
    let remote = remote_package(&package, "triton-kill", &server.endpoint(), "mav-enc-tiny", 4);
    let LoadedModel { evaluator: far, .. } =
        load_evaluator(&remote, &SessionOptions::default()).expect("remote opens");
    let mut e = search_through_a_kill(far, || server.kill());

    // Triton restarts on the same ports: the same evaluator works again (new connections).
    let mut restarted = Triton::spawn(&python, &package, "mav-enc-tiny", server.ports, 0);
    restarted.wait_ready("mav-enc-tiny").unwrap_or_else(|why| panic!("restart: {why}"));
    let again = e.evaluate(&[EvalRequest::values(chess(START))]).remove(0);
    assert_eq!(again.expect("evaluates after the restart").moves.len(), 20);
    std::fs::remove_dir_all(remote).ok();
}

#[test]
fn an_answer_slower_than_timeout_ms_is_a_timeout() {
    let Some(python) = triton_python() else { return };
    let package = asset("mav-enc-tiny");
    // Every answer is held 1.5 s by the model; the package waits 500 ms.
    let server = Triton::start(&python, &package, "mav-enc-tiny", 1500);
    let remote = remote_package(&package, "triton-slow", &server.endpoint(), "mav-enc-tiny", 1);
    let manifest = remote.join("mav.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("mav.json")).expect("json");
    m["remote"]["timeout_ms"] = 500.into();
    std::fs::write(&manifest, m.to_string()).expect("write");
    // Readiness and metadata are not held: the package opens.
    let LoadedModel { evaluator: mut far, .. } = load_evaluator(&remote, &SessionOptions::default())
        .unwrap_or_else(|e| panic!("the remote package opens: {e}\n{}", server.log()));
    let started = Instant::now();
    let answer = far.evaluate(&[EvalRequest::values(chess(START))]).remove(0);
    let took = started.elapsed();
    match answer {
        Err(EvalError::Server(msg)) => {
            assert!(msg.contains("did not answer within 500 ms") && msg.contains("/infer"), "{msg}")
        }
        other => panic!("expected a timeout, got {:?}", other.map(|r| r.moves.len())),
    }
    assert!(
        took < Duration::from_millis(1400),
        "the client gave up at its limit, not the server's: {took:?}"
    );

    // The same server with a package that waits long enough answers: the delay was the cause.
    m["remote"]["timeout_ms"] = 10_000.into();
    std::fs::write(&manifest, m.to_string()).expect("write");
    let LoadedModel { evaluator: mut patient, .. } =
        load_evaluator(&remote, &SessionOptions::default()).expect("opens");
    let answer = patient.evaluate(&[EvalRequest::values(chess(START))]).remove(0);
    assert_eq!(answer.expect("a patient client gets the answer").moves.len(), 20);
    std::fs::remove_dir_all(remote).ok();
}

#[test]
fn a_model_triton_has_unloaded_is_named_not_ready_and_loads_again() {
    let Some(python) = triton_python() else { return };
    let package = asset("mav-enc-tiny");
    let server = Triton::start(&python, &package, "mav-enc-tiny", 0);
    let remote = remote_package(&package, "triton-unready", &server.endpoint(), "mav-enc-tiny", 2);
    let LoadedModel { evaluator: mut open, .. } =
        load_evaluator(&remote, &SessionOptions::default()).expect("opens while loaded");

    // Triton's repository API unloads the model (the server itself stays up).
    let (status, body) = server.repository("mav-enc-tiny", "unload");
    assert_eq!(status, 200, "unload: {body}");
    let ready = format!("{}/v2/models/mav-enc-tiny/ready", server.endpoint());
    let deadline = Instant::now() + Duration::from_secs(30);
    while agent().get(&ready).call().is_ok_and(|r| r.status().as_u16() == 200) {
        assert!(Instant::now() < deadline, "the model was still ready 30 s after its unload");
        std::thread::sleep(Duration::from_millis(100));
    }
    match load_evaluator(&remote, &SessionOptions::default()) {
        Err(LoadError::Remote { error, .. }) => {
            let msg = error.to_string();
            eprintln!("opening the package while Triton has the model unloaded: {msg}");
            // Triton 2.51 (strict readiness) answers v2/health/ready with 400 while a model it was asked
            // to serve is unloaded; the client names the server and the status.
            assert!(matches!(*error, RemoteError::NotReady { status: 400, .. }), "{msg}");
            assert!(msg.contains("/v2/health/ready is not ready (HTTP 400)"), "{msg}");
        }
        Err(e) => panic!("expected a not-ready error, got {e}"),
        Ok(_) => panic!("a package whose model is unloaded opened"),
    }
    // An evaluator opened before the unload gets a failed evaluation with Triton's status and message.
    match open.evaluate(&[EvalRequest::values(chess(START))]).remove(0) {
        Err(EvalError::Server(msg)) => {
            eprintln!("evaluating while unloaded: {msg}");
            assert!(msg.contains("/infer answered HTTP 404") && msg.contains("mav-enc-tiny"), "{msg}");
        }
        other => panic!("expected a failed evaluation, got {:?}", other.map(|r| r.moves.len())),
    }

    // Loaded again, the package opens and the old evaluator works again.
    let (status, body) = server.repository("mav-enc-tiny", "load");
    assert_eq!(status, 200, "load: {body}");
    let LoadedModel { evaluator: mut again, .. } = load_evaluator(&remote, &SessionOptions::default())
        .unwrap_or_else(|e| panic!("opens after the load: {e}\n{}", server.log()));
    assert_eq!(
        again.evaluate(&[EvalRequest::values(chess(START))]).remove(0).expect("evaluates").moves.len(),
        20
    );
    assert_eq!(
        open.evaluate(&[EvalRequest::values(chess(START))]).remove(0).expect("evaluates").moves.len(),
        20
    );
    std::fs::remove_dir_all(remote).ok();
}
