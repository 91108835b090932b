//! The latency proxy the remote benchmarks use (`mavboard bench … --latency-ms`), and that the latency it
//! adds is overlapped: requests in flight at once are delayed together, not one after another.
//!
//! The first tests need no inference server: a small upstream on 127.0.0.1 answers only once all of a set
//! of requests have reached it, so that they are certainly out at once, and the proxy's own count of
//! exchanges in flight is checked — counts, not timings (the timing bounds are lower bounds the proxy
//! guarantees, or generous). The others run against a real MLServer (`.venv-serve/`, as in
//! tests/ui/remote_mlserver.rs; they skip with a message without it, unless MAVBOARD_REQUIRE_SERVE=1): a
//! remote batch split into `max_in_flight` requests, the engine's asynchronous batches with several
//! inference workers, and `mavboard bench search` itself on a remote package.

use crate::mlserver_common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command as Process;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mavboard::engine::{Command, Engine, EngineConfig, EvaluatorBox, EvaluatorFactory, Event, GoLimits};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::EvalRequest;
use mavboard::inference::load::load_package_evaluator;
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::latency_proxy::LatencyProxy;
use mavboard::model::ModelPackage;
use mavboard::search::mcts::MctsParams;
use mlserver_common::{Server, asset, remote_package, serve_python};

/// Requests that must all be out at once before the upstream answers any.
struct Gate {
    arrived: Mutex<usize>,
    all: Condvar,
    want: usize,
}

impl Gate {
    /// Counts one arrival and waits (at most 30 s) until `want` have arrived.
    fn pass(&self) {
        let mut n = self.arrived.lock().expect("gate lock");
        *n += 1;
        self.all.notify_all();
        let deadline = Instant::now() + Duration::from_secs(30);
        while *n < self.want {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            n = self.all.wait_timeout(n, left).expect("gate lock").0;
        }
    }
}

/// A line server: answers each line `x` with `ok x`, each only after `gate` lets it through (a gate of 1
/// answers at once). Serves `connections` connections, then ends.
fn line_server(gate: Arc<Gate>, connections: usize) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let thread = std::thread::spawn(move || {
        let mut held = Vec::new();
        for _ in 0..connections {
            let Ok((stream, _)) = listener.accept() else { break };
            let gate = gate.clone();
            held.push(std::thread::spawn(move || {
                stream.set_read_timeout(Some(Duration::from_secs(60))).ok();
                let mut out = stream.try_clone().expect("clone");
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    gate.pass();
                    if writeln!(out, "ok {line}").is_err() {
                        break;
                    }
                }
            }));
        }
        for h in held {
            h.join().ok();
        }
    });
    (addr, thread)
}

/// Sends `line` and reads the answer line.
fn ask(stream: &mut TcpStream, reader: &mut BufReader<TcpStream>, line: &str) -> String {
    writeln!(stream, "{line}").expect("writes");
    let mut answer = String::new();
    reader.read_line(&mut answer).expect("reads the answer");
    answer.trim_end().to_owned()
}

fn connect(proxy: &LatencyProxy) -> (TcpStream, BufReader<TcpStream>) {
    let stream = TcpStream::connect(proxy.addr()).expect("connects to the proxy");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let reader = BufReader::new(stream.try_clone().expect("clone"));
    (stream, reader)
}

#[test]
fn the_proxy_delays_every_request_on_a_connection() {
    let delay = Duration::from_millis(100);
    let gate = Arc::new(Gate { arrived: Mutex::new(0), all: Condvar::new(), want: 1 });
    let (upstream, server) = line_server(gate, 1);
    let proxy = LatencyProxy::start(&format!("http://{upstream}"), delay).expect("proxy starts");
    assert_eq!(proxy.delay(), delay);
    let (mut stream, mut reader) = connect(&proxy);
    let start = Instant::now();
    for i in 0..3 {
        let asked = Instant::now();
        assert_eq!(ask(&mut stream, &mut reader, &format!("r{i}")), format!("ok r{i}"));
        // The request cannot reach the upstream before the delay has passed.
        assert!(asked.elapsed() >= delay, "request {i} answered after {:?}", asked.elapsed());
    }
    // Three requests one after another on one keep-alive connection: three delays.
    assert!(start.elapsed() >= 3 * delay, "{:?}", start.elapsed());
    let stats = proxy.stats();
    assert_eq!((stats.connections, stats.exchanges, stats.in_flight, stats.peak_in_flight), (1, 3, 0, 1));
    drop(stream);
    drop(reader);
    drop(proxy);
    server.join().expect("server");
}

#[test]
fn concurrent_requests_through_the_proxy_overlap() {
    const K: usize = 8;
    let delay = Duration::from_millis(200);
    // The upstream answers none until all K requests have reached it: they are out at once.
    let gate = Arc::new(Gate { arrived: Mutex::new(0), all: Condvar::new(), want: K });
    let (upstream, server) = line_server(gate, K);
    let proxy = LatencyProxy::start(&upstream, delay).expect("proxy starts");
    let start = Instant::now();
    let clients: Vec<_> = (0..K)
        .map(|i| {
            let (mut stream, mut reader) = connect(&proxy);
            std::thread::spawn(move || {
                let asked = Instant::now();
                let answer = ask(&mut stream, &mut reader, &format!("q{i}"));
                (answer, asked.elapsed())
            })
        })
        .collect();
    for (i, c) in clients.into_iter().enumerate() {
        let (answer, took) = c.join().expect("client");
        assert_eq!(answer, format!("ok q{i}"));
        assert!(took >= delay, "request {i} answered after {took:?}");
    }
    let wall = start.elapsed();
    let stats = proxy.stats();
    eprintln!("{K} requests with {delay:?} each through the proxy in {wall:?}: {stats:?}");
    assert_eq!((stats.connections, stats.exchanges, stats.in_flight), (K as u64, K as u64, 0));
    assert_eq!(stats.peak_in_flight, K, "the proxy saw all {K} requests out at once");
    // Overlapped: far less than K delays one after another (a generous bound; about 1 delay is typical).
    assert!(wall < (K as u32) * delay * 6 / 10, "{K} requests of {delay:?} took {wall:?}");
    proxy.reset_peak();
    assert_eq!(proxy.stats().peak_in_flight, 0);
    drop(proxy);
    server.join().expect("server");
}

#[test]
fn a_proxy_to_an_unusable_endpoint_is_a_named_error() {
    let msg = LatencyProxy::start("https://127.0.0.1:1", Duration::ZERO).expect_err("https").to_string();
    assert!(msg.contains("https") && msg.contains("latency proxy"), "{msg}");
    let msg = LatencyProxy::start("http://", Duration::ZERO).expect_err("no host").to_string();
    assert!(msg.contains("no host"), "{msg}");
    let msg = LatencyProxy::start("http://no-such-host.invalid:80", Duration::ZERO)
        .expect_err("unresolvable")
        .to_string();
    assert!(msg.contains("no-such-host.invalid"), "{msg}");
}

// ---- Against a real MLServer ----

/// `n` distinct positions along a fixed line from the start.
fn line(n: usize) -> Vec<ChessState> {
    let mut out = vec![ChessState::startpos()];
    while out.len() < n {
        let last = out.last().expect("not empty");
        let moves = last.legal_actions();
        out.push(last.play(moves[(7 * out.len()) % moves.len()]).expect("legal"));
    }
    out
}

/// Waits for the event `want` picks (an engine error fails the test; at most 300 s).
fn wait_event<T>(engine: &Engine, mut want: impl FnMut(Event) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match engine.events().recv_timeout(left) {
            Ok(Event::Error(e)) => panic!("engine error: {e}"),
            Ok(event) => {
                if let Some(t) = want(event) {
                    return t;
                }
            }
            Err(_) => panic!("no answer from the engine within 300 s"),
        }
    }
}

#[test]
fn remote_requests_overlap_through_the_latency_proxy() {
    let Some(python) = serve_python() else { return };
    let server = Server::start(&python, &asset("mav-enc-tiny"), "mav-enc-tiny");
    let delay = Duration::from_millis(500);
    let proxy = LatencyProxy::start(&server.endpoint(), delay).expect("proxy starts");
    let options = SessionOptions::default();

    // One batch of 8 positions split into 4 concurrent requests: all 4 out at once.
    let dir = remote_package(&asset("mav-enc-tiny"), "split", &proxy.endpoint(), "mav-enc-tiny", 4);
    let package = ModelPackage::open(&dir).expect("opens");
    let mavboard::inference::LoadedModel { evaluator: mut far, .. } =
        load_package_evaluator(&package, &options)
            .unwrap_or_else(|e| panic!("remote opens through the proxy: {e}\n{}", server.log()));
    let requests: Vec<_> = line(8).into_iter().map(EvalRequest::values).collect();
    let before = proxy.stats().exchanges;
    proxy.reset_peak();
    let asked = Instant::now();
    for r in far.evaluate(&requests) {
        assert!(r.expect("evaluates through the proxy").moves.len() > 1);
    }
    let took = asked.elapsed();
    let stats = proxy.stats();
    eprintln!("a batch of 8 as 4 requests with {delay:?} each: {took:?}, {stats:?}");
    assert_eq!(stats.exchanges - before, 4, "one request per quarter of the batch");
    assert_eq!(stats.peak_in_flight, 4, "the batch's 4 requests were out at once");
    assert!(took >= delay);

    // The engine with 4 inference workers (one request per batch) keeps several batches out at once.
    let one = remote_package(&asset("mav-enc-tiny"), "workers", &proxy.endpoint(), "mav-enc-tiny", 1);
    let package = ModelPackage::open(&one).expect("opens");
    let factory: EvaluatorFactory = Arc::new(move |_| {
        let model = load_package_evaluator(&package, &SessionOptions::default())?;
        let e: EvaluatorBox = model.evaluator;
        Ok(e)
    });
    let config = EngineConfig { batch_size: 2, cache_entries: 0, ..EngineConfig::default() };
    let engine = Engine::start(config, Arc::new(|| {})).expect("engine starts");
    engine.send(Command::LoadEvaluator { factory, workers: 4 }).expect("sends");
    let workers = wait_event(&engine, |e| match e {
        Event::EvaluatorReady { workers } => Some(workers),
        _ => None,
    });
    assert_eq!(workers, 4);
    let before = proxy.stats().exchanges;
    proxy.reset_peak();
    let limits = GoLimits { simulations: Some(48), ..GoLimits::default() };
    engine.send(Command::Go { limits, params: MctsParams::default() }).expect("sends");
    let report = wait_event(&engine, |e| match e {
        Event::Done { report, .. } => Some(report),
        _ => None,
    })
    .expect("the search ran");
    let stats = proxy.stats();
    let calls = stats.exchanges - before;
    eprintln!(
        "{} simulations, batches of 2 on 4 workers, {delay:?} per request, {calls} requests: {stats:?}",
        report.simulations
    );
    assert!(report.simulations >= 48, "{}", report.simulations);
    assert_eq!(report.snapshot.totals.stats.failed, 0);
    assert!(calls >= 48 / 2, "{calls} requests for 48 simulations in batches of 2");
    // Counted, not timed: with half a second per request, the engine's batches were out together.
    assert!(stats.peak_in_flight >= 3, "only {} requests were ever out at once", stats.peak_in_flight);
}

#[test]
fn bench_search_measures_a_remote_package_against_its_local_twin() {
    let Some(python) = serve_python() else { return };
    let server = Server::start(&python, &asset("mav-enc-tiny"), "mav-enc-tiny");
    let remote = remote_package(&asset("mav-enc-tiny"), "cli", &server.endpoint(), "mav-enc-tiny", 4);
    let out = Process::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["bench", "search", "--model"])
        .arg(&remote)
        .args(["--sims", "24", "--positions", "1", "--batch", "2", "--in-flight", "1,2"])
        .args(["--latency-ms", "0,30", "--json"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}\n{}", String::from_utf8_lossy(&out.stderr), server.log());
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["driver"], "engine");
    assert!(v["local"].as_str().is_some_and(|l| l.ends_with("mav-enc-tiny")), "{v}");
    let rows = v["rows"].as_array().expect("rows");
    // Per in-flight limit: the local twin, then the remote model direct and through a 30 ms proxy.
    let shape: Vec<(u64, &str, u64)> = rows
        .iter()
        .map(|r| {
            let n = r["in_flight"].as_u64().expect("in_flight");
            (n, r["source"].as_str().expect("source"), r["latency_ms"].as_u64().expect("latency"))
        })
        .collect();
    assert_eq!(
        shape,
        [
            (1, "local", 0),
            (1, "remote", 0),
            (1, "remote", 30),
            (2, "local", 0),
            (2, "remote", 0),
            (2, "remote", 30)
        ]
    );
    for r in rows {
        assert!(r["simulations"].as_u64().expect("sims") >= 24, "{r}");
        assert!(r["sims_per_s"].as_f64().expect("rate") > 0.0, "{r}");
        assert_eq!(r["failed"], 0, "{r}");
        let remote = r["source"] == "remote";
        assert_eq!(r["vs_local"].is_f64(), remote, "{r}");
        assert_eq!(r["proxy_peak"].is_u64(), remote && r["latency_ms"] == 30, "{r}");
        assert!(r["peak_batches"].as_u64().expect("peak") <= r["in_flight"].as_u64().expect("n"), "{r}");
    }
}
