//! Shared by the tests that need a real MLServer (tests/ui/remote_mlserver.rs, tests/cli/remote_bench.rs): the
//! serving venv, a server on free loopback ports killed with its process group on drop, and remote packages
//! pointing at it.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn asset(name: &str) -> PathBuf {
    root().join("assets/models").join(name)
}

/// The serving venv's Python, or `None` (with a message) when the test may skip: only outside dev.sh.
pub fn serve_python() -> Option<PathBuf> {
    let py = root().join(".venv-serve/bin/python");
    if py.is_file() {
        return Some(py);
    }
    assert!(
        std::env::var_os("MAVBOARD_REQUIRE_SERVE").is_none(),
        "MAVBOARD_REQUIRE_SERVE is set but {} is missing: ./packaging/dev.sh test installs it",
        py.display()
    );
    eprintln!(
        "skipped: no MLServer venv at {} (run ./packaging/dev.sh test, which installs it)",
        py.display()
    );
    None
}

/// Three free loopback ports that no other server of this test process was given: a test that kills its
/// server and restarts it on the same ports must not find another test's server there (the tests of a
/// binary run in parallel, and the system may hand a port just freed to the next bind).
pub fn free_ports() -> (u16, u16, u16) {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut held = Vec::new();
    let mut ports = Vec::new();
    while ports.len() < 3 {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        if !given.contains(&port) {
            given.push(port);
            ports.push(port);
        }
        // Kept bound until all three are chosen, so the system does not give the same port twice.
        held.push(l);
    }
    (ports[0], ports[1], ports[2])
}

pub fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-remote-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// MLServer serving `package`'s model.onnx as `name`, killed (with its process group) on drop.
pub struct Server {
    child: Child,
    /// The REST port.
    pub port: u16,
    /// The REST, gRPC and metrics ports (a restart on the same ports keeps the endpoint).
    pub ports: (u16, u16, u16),
    log: PathBuf,
}

impl Server {
    /// Starts the server; a start that fails (e.g. a port taken between choosing and binding it) is tried
    /// again on new ports, three times at most.
    pub fn start(python: &Path, package: &Path, name: &str) -> Server {
        let mut last = String::new();
        for _ in 0..3 {
            let mut server = Server::spawn(python, package, name, free_ports());
            match server.wait_ready(name) {
                Ok(()) => return server,
                Err(why) => last = why,
            }
        }
        panic!("MLServer did not start in three tries: {last}");
    }

    /// Starts serve.py on `(rest, grpc, metrics)` ports without waiting.
    pub fn spawn(python: &Path, package: &Path, name: &str, ports: (u16, u16, u16)) -> Server {
        use std::os::unix::process::CommandExt;
        let (port, grpc, metrics) = ports;
        let dir = temp(&format!("repo-{name}-{port}"));
        let log = dir.join("server.log");
        let out = std::fs::File::create(&log).expect("log");
        let err = out.try_clone().expect("log");
        let child = Command::new(python)
            .arg(root().join("packaging/mlserver/serve.py"))
            .arg(package)
            .args(["--port", &port.to_string(), "--grpc-port", &grpc.to_string()])
            .args(["--metrics-port", &metrics.to_string(), "--name", name])
            .arg("--dir")
            .arg(dir.join("repo"))
            .env("MAVBOARD_SERVE_THREADS", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .expect("starts serve.py");
        Server { child, port, ports, log }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most 120 s) until the model says it is ready; on failure returns why, with the log.
    pub fn wait_ready(&mut self, name: &str) -> Result<(), String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/v2/models/{name}/ready", self.endpoint());
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("MLServer exited ({status}) before it was ready:\n{}", self.log()));
            }
            if agent.get(&url).call().is_ok_and(|r| r.status().as_u16() == 200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        self.kill();
        Err(format!("MLServer was not ready within 120 s:\n{}", self.log()))
    }

    /// Kills the server and its process group (once), and reaps it.
    pub fn kill(&mut self) {
        if self.child.try_wait().is_ok_and(|s| s.is_some()) {
            return;
        }
        let group = format!("-{}", self.child.id());
        Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status().ok();
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A remote package: `src`'s mav.json and tokenizer.json (if any; no model.onnx) with a `remote` section.
pub fn remote_package(src: &Path, tag: &str, endpoint: &str, model: &str, in_flight: usize) -> PathBuf {
    let dir = temp(&format!("pkg-{tag}"));
    if src.join("tokenizer.json").is_file() {
        std::fs::copy(src.join("tokenizer.json"), dir.join("tokenizer.json")).expect("tokenizer");
    }
    let text = std::fs::read_to_string(src.join("mav.json")).expect("mav.json");
    let mut m: serde_json::Value = serde_json::from_str(&text).expect("json");
    m["remote"] = serde_json::json!({
        "endpoint": endpoint, "model": model, "protocol": "v2-rest",
        "timeout_ms": 60000, "max_in_flight": in_flight,
    });
    std::fs::write(dir.join("mav.json"), serde_json::to_string_pretty(&m).expect("json")).expect("write");
    dir
}

/// `n` positions along a fixed line from `start` (each the previous one after its (7·ply)-th legal move).
pub fn line<S: mavboard::game::GameState>(start: S, n: usize) -> Vec<S> {
    let mut out = vec![start];
    while out.len() < n {
        let last = out.last().expect("not empty");
        let moves = last.legal_actions();
        if moves.is_empty() {
            break;
        }
        let next = last.play(moves[(7 * out.len()) % moves.len()]).expect("legal");
        out.push(next);
    }
    out
}

/// Value requests that also ask for the best-action distribution.
pub fn requests<S: mavboard::game::GameState>(
    states: &[S],
) -> Vec<mavboard::inference::evaluator::EvalRequest<S>> {
    use mavboard::inference::evaluator::EvalRequest;
    states.iter().map(|s| EvalRequest { want_best_action: true, ..EvalRequest::values(s.clone()) }).collect()
}

/// A chess evaluator over a remote model.
pub type Remote =
    Box<dyn mavboard::inference::evaluator::Evaluator<mavboard::game::chess::ChessState> + Send>;

/// Counts evaluate calls and signals after the `at`-th one.
pub struct Counting {
    inner: Remote,
    calls: std::sync::Arc<std::sync::atomic::AtomicU64>,
    at: u64,
    signal: Option<std::sync::mpsc::Sender<()>>,
}

impl mavboard::inference::evaluator::Evaluator<mavboard::game::chess::ChessState> for Counting {
    fn evaluate(
        &mut self,
        requests: &[mavboard::inference::evaluator::EvalRequest<mavboard::game::chess::ChessState>],
    ) -> Vec<
        Result<
            mavboard::inference::evaluator::EvalResult<mavboard::game::chess::ChessState>,
            mavboard::inference::evaluator::EvalError,
        >,
    > {
        let out = self.inner.evaluate(requests);
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == self.at
            && let Some(s) = self.signal.take()
        {
            s.send(()).ok();
            // Give the test time to kill the server before the next batch goes out.
            std::thread::sleep(Duration::from_millis(300));
        }
        out
    }
}

/// A long MAV-MCTS from the start position over `far`, with `kill` called (the server killed) after its
/// fifth batch: the search must end (no hang) having evaluated its root, with failed evaluations, and the
/// next evaluation must fail naming the lost connection. Returns the evaluator, to try again after a restart.
pub fn search_through_a_kill(far: Remote, kill: impl FnOnce()) -> Counting {
    use mavboard::game::chess::ChessState;
    use mavboard::inference::evaluator::{EvalError, EvalRequest, Evaluator};
    use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = calls.clone();
    let search = std::thread::spawn(move || {
        let mut e = Counting { inner: far, calls: counter, at: 5, signal: Some(tx) };
        let mut mcts = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("valid params");
        let result = mcts.run(&mut e, RunLimits { simulations: 1_000_000, batch_size: 8 });
        let after = e.evaluate(&[EvalRequest::values(ChessState::startpos())]).remove(0);
        done_tx.send((result, mcts.stats(), after, e)).ok();
    });
    rx.recv_timeout(Duration::from_secs(120)).expect("the search made 5 batches of evaluations");
    kill();
    let (result, stats, after, e) = done_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the search ends after the server is gone (no hang)");
    search.join().expect("search thread");
    result.expect("the root was evaluated before the kill: the search itself succeeds");
    eprintln!(
        "after the kill: {stats:?} ({} evaluate calls)",
        calls.load(std::sync::atomic::Ordering::SeqCst)
    );
    assert!(stats.failed > 0, "evaluations after the kill are failed evaluations: {stats:?}");
    assert!(stats.simulations < 1_000_000, "the search stopped when every move had failed: {stats:?}");
    match after {
        Err(EvalError::Server(msg)) => assert!(
            msg.contains("connection refused") || msg.contains("connection failed"),
            "a named connection error: {msg}"
        ),
        other => {
            panic!("expected a failed evaluation after the kill, got {:?}", other.map(|r| r.moves.len()))
        }
    }
    e
}
