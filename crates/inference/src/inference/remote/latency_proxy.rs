//! [`LatencyProxy`]: a TCP forwarder on 127.0.0.1 that adds a fixed delay to every request on its way to
//! an inference server, as a slow network would, so that the benchmarks (`mavboard bench … --latency-ms`)
//! and the tests can measure how much of that latency the search's asynchronous batches hide.
//!
//! Every connection accepted is forwarded to the upstream server on a connection of its own. The bytes the
//! client sends go through a delay line: each chunk is written upstream `delay` after it arrived, in order
//! (a time shift, not a pause per chunk, so a request in several chunks is late by `delay` once). The
//! answer comes back undelayed. Concurrent connections are delayed independently: requests in flight at
//! once overlap.
//!
//! The proxy knows nothing of HTTP beyond its request–answer rhythm: an *exchange* starts when a client
//! sends bytes on an idle connection and ends when the first byte of the answer comes back. It counts them,
//! and the most that were ever out at once ([`ProxyStats::peak_in_flight`]), which shows whether a client
//! really keeps several requests in flight.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The limit on connecting to the upstream server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes read at once.
const CHUNK: usize = 64 * 1024;

/// Why a proxy could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProxyError {
    /// The upstream address is not a `host:port` (or `http://host:port` endpoint) that resolves.
    #[error("the latency proxy cannot forward to {upstream:?}: {reason}")]
    Upstream {
        /// The address or endpoint given.
        upstream: String,
        /// Why.
        reason: String,
    },
    /// No port could be opened on 127.0.0.1.
    #[error("the latency proxy cannot listen on 127.0.0.1: {0}")]
    Bind(String),
    /// Its accepting thread could not be started.
    #[error("could not start the latency proxy's thread: {0}")]
    Thread(String),
}

/// What a proxy has seen since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProxyStats {
    /// Client connections accepted.
    pub connections: u64,
    /// Exchanges (requests): bytes from the client on an idle connection, up to the answer's first byte.
    pub exchanges: u64,
    /// Exchanges out now.
    pub in_flight: usize,
    /// The most exchanges that were out at once (since the start or the last [`LatencyProxy::reset_peak`]).
    pub peak_in_flight: usize,
}

/// State shared by the proxy's threads.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    connections: AtomicU64,
    exchanges: AtomicU64,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    /// Both sockets of every open connection (to shut them down when the proxy stops).
    open: Mutex<HashMap<u64, (TcpStream, TcpStream)>>,
}

impl Shared {
    fn begin_exchange(&self) {
        self.exchanges.fetch_add(1, Ordering::SeqCst);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    fn end_exchange(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running latency proxy: listens on 127.0.0.1 (a free port) and forwards to one upstream server,
/// adding `delay` to every request. Stops (closing every connection) when dropped.
pub struct LatencyProxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    delay: Duration,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LatencyProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.upstream)
            .field("delay", &self.delay)
            .finish()
    }
}

/// The `host:port` of an `http://host[:port][/…]` endpoint (port 80 when none is given); a bare `host:port`
/// is returned as it is.
pub fn endpoint_authority(endpoint: &str) -> Result<String, ProxyError> {
    let bad =
        |reason: &str| ProxyError::Upstream { upstream: endpoint.to_owned(), reason: reason.to_owned() };
    if endpoint.starts_with("https://") {
        return Err(bad("https endpoints cannot be proxied (the proxy speaks plain HTTP only)"));
    }
    let rest = endpoint.strip_prefix("http://").unwrap_or(endpoint);
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return Err(bad("no host"));
    }
    // An IPv6 literal is bracketed; its port follows the bracket.
    let has_port = match authority.rfind(']') {
        Some(close) => authority[close..].contains(':'),
        None => authority.contains(':'),
    };
    Ok(if has_port { authority.to_owned() } else { format!("{authority}:80") })
}

impl LatencyProxy {
    /// Starts a proxy to `upstream` (`host:port`, or a server endpoint `http://host:port`) that adds
    /// `delay` to every request.
    pub fn start(upstream: &str, delay: Duration) -> Result<LatencyProxy, ProxyError> {
        let authority = endpoint_authority(upstream)?;
        let target = authority
            .to_socket_addrs()
            .map_err(|e| ProxyError::Upstream { upstream: upstream.to_owned(), reason: e.to_string() })?
            .next()
            .ok_or_else(|| ProxyError::Upstream {
                upstream: upstream.to_owned(),
                reason: "the name resolves to no address".into(),
            })?;
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| ProxyError::Bind(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| ProxyError::Bind(e.to_string()))?;
        let shared = Arc::new(Shared::default());
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("mavboard-latency-proxy".into())
            .spawn(move || accept_loop(&listener, target, delay, &accept_shared))
            .map_err(|e| ProxyError::Thread(e.to_string()))?;
        Ok(LatencyProxy { addr, upstream: target, delay, shared, accept: Some(accept) })
    }

    /// The address the proxy listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy as a server endpoint (`http://127.0.0.1:PORT`), for a remote package's `endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The upstream server's address.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// The delay added to every request.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The counters so far.
    pub fn stats(&self) -> ProxyStats {
        let s = &self.shared;
        ProxyStats {
            connections: s.connections.load(Ordering::SeqCst),
            exchanges: s.exchanges.load(Ordering::SeqCst),
            in_flight: s.in_flight.load(Ordering::SeqCst),
            peak_in_flight: s.peak.load(Ordering::SeqCst),
        }
    }

    /// Starts counting [`ProxyStats::peak_in_flight`] afresh (from the exchanges out now).
    pub fn reset_peak(&self) {
        let now = self.shared.in_flight.load(Ordering::SeqCst);
        self.shared.peak.store(now, Ordering::SeqCst);
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread, blocked in accept().
        drop(TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)));
        let open: Vec<(TcpStream, TcpStream)> = self
            .shared
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, pair)| pair)
            .collect();
        for (client, server) in open {
            client.shutdown(Shutdown::Both).ok();
            server.shutdown(Shutdown::Both).ok();
        }
        if let Some(t) = self.accept.take() {
            t.join().ok();
        }
    }
}

fn accept_loop(listener: &TcpListener, target: SocketAddr, delay: Duration, shared: &Arc<Shared>) {
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    for client in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(client) = client else { continue };
        threads.retain(|t| !t.is_finished());
        let id = next_id;
        next_id += 1;
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let conn_shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("mavboard-latency-conn".into())
            .spawn(move || connection(id, client, target, delay, &conn_shared));
        // A connection whose thread cannot start is dropped (closed): the client sees a failed call.
        if let Ok(t) = spawned {
            threads.push(t);
        }
    }
    for t in threads {
        t.join().ok();
    }
}

/// Forwards one client connection until either side closes it.
fn connection(id: u64, client: TcpStream, target: SocketAddr, delay: Duration, shared: &Shared) {
    let Ok(server) = TcpStream::connect_timeout(&target, CONNECT_TIMEOUT) else {
        // The client sees its connection closed: the same as a server that went away.
        return;
    };
    client.set_nodelay(true).ok();
    server.set_nodelay(true).ok();
    let clones = (client.try_clone(), server.try_clone());
    let (Ok(client_out), Ok(server_in)) = (client.try_clone(), server.try_clone()) else { return };
    {
        let mut open = shared.open.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        if let (Ok(c), Ok(s)) = clones {
            open.insert(id, (c, s));
        }
    }
    let busy = AtomicBool::new(false);
    let (line_tx, line_rx) = crossbeam_channel::unbounded::<(Instant, Vec<u8>)>();
    std::thread::scope(|scope| {
        // The delay line: each chunk goes upstream `delay` after it arrived.
        let mut server_out = server;
        scope.spawn(move || {
            for (due, chunk) in line_rx {
                let wait = due.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
                if server_out.write_all(&chunk).is_err() {
                    break;
                }
            }
            server_out.shutdown(Shutdown::Write).ok();
        });
        // The answers, undelayed; the first byte of each ends its exchange.
        let busy_ref = &busy;
        scope.spawn(move || {
            let (mut from, mut to) = (server_in, client_out);
            let mut buf = vec![0u8; CHUNK];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if busy_ref.swap(false, Ordering::SeqCst) {
                            shared.end_exchange();
                        }
                        if to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
            to.shutdown(Shutdown::Both).ok();
            from.shutdown(Shutdown::Both).ok();
        });
        // The requests, into the delay line.
        let mut from = client;
        let mut buf = vec![0u8; CHUNK];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if !busy.swap(true, Ordering::SeqCst) {
                        shared.begin_exchange();
                    }
                    if line_tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
        drop(line_tx);
    });
    if busy.swap(false, Ordering::SeqCst) {
        shared.end_exchange();
    }
    shared.open.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_authority_takes_host_and_port() {
        assert_eq!(endpoint_authority("http://127.0.0.1:8080").expect("valid"), "127.0.0.1:8080");
        assert_eq!(endpoint_authority("http://gpu-box:8080/").expect("valid"), "gpu-box:8080");
        assert_eq!(endpoint_authority("http://gpu-box").expect("valid"), "gpu-box:80");
        assert_eq!(endpoint_authority("localhost:9").expect("valid"), "localhost:9");
        assert_eq!(endpoint_authority("http://[::1]:7").expect("valid"), "[::1]:7");
        assert_eq!(endpoint_authority("http://[::1]").expect("valid"), "[::1]:80");
        assert!(endpoint_authority("https://h:1").is_err());
        assert!(endpoint_authority("http://").is_err());
    }

    #[test]
    fn forwards_both_ways_and_counts_exchanges() {
        // An echo server: answers every chunk with the same bytes.
        let echo = TcpListener::bind("127.0.0.1:0").expect("bind");
        let upstream = echo.local_addr().expect("addr").to_string();
        let server = std::thread::spawn(move || {
            let (mut s, _) = echo.accept().expect("accept");
            let mut buf = [0u8; 64];
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if s.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let proxy = LatencyProxy::start(&upstream, Duration::from_millis(30)).expect("starts");
        let mut c = TcpStream::connect(proxy.addr()).expect("connects");
        c.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        for word in [&b"ping"[..], b"pong"] {
            let start = Instant::now();
            c.write_all(word).expect("writes");
            let mut got = [0u8; 4];
            c.read_exact(&mut got).expect("reads the echo");
            assert_eq!(&got, word);
            assert!(start.elapsed() >= Duration::from_millis(30), "{:?}", start.elapsed());
        }
        let stats = proxy.stats();
        assert_eq!((stats.connections, stats.exchanges, stats.in_flight, stats.peak_in_flight), (1, 2, 0, 1));
        drop(c);
        drop(proxy);
        server.join().expect("echo server");
    }
}
