//! Remote packages over TLS, against a local HTTPS server whose certificate authorities are made in the test
//! (rcgen): a certificate of the package's private CA is trusted and the token travels inside TLS; a
//! certificate of another CA, for another name, or expired is refused by name with its fix; a server that
//! requires mutual TLS refuses a package without a client certificate, and one with a certificate of the
//! wrong CA, and accepts the right one; a plain-HTTP server behind an `https://` endpoint is named; broken
//! TLS files are named errors at load. The TLS front forwards what it deciphers to a real MLServer when
//! `.venv-serve/` is there (then the remote package analyses as the local one does, every value within
//! 1e-5); without a back end it answers 503, which is enough to show the handshake and the request
//! went through.

use crate::common;
use crate::mlserver_common;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::chess;
use mavboard::inference::evaluator::EvalRequest;
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::{PemError, RemoteError, TlsFailure};
use mavboard::inference::{LoadError, load_evaluator};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The environment variable the packages' `token_env` names (set by the test process itself: the variable
/// every process has, so no unsafe `set_var` is needed).
const TOKEN_VAR: &str = "PATH";

/// A certificate authority made in the test.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("key");
        Ca { issuer: CertifiedIssuer::self_signed(params, key).expect("CA") }
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }

    fn der(&self) -> CertificateDer<'static> {
        self.issuer.der().clone()
    }

    /// A leaf certificate for `names`, valid from `from` to `to` (years), for a server or a client.
    fn leaf(&self, names: &[&str], from: i32, to: i32, client: bool) -> Leaf {
        let mut params =
            CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("params");
        params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("client"));
        params.not_before = rcgen::date_time_ymd(from, 1, 1);
        params.not_after = rcgen::date_time_ymd(to, 1, 1);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        Leaf {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            key_pem: key.serialize_pem(),
            key_der: key.serialize_der(),
        }
    }
}

/// A certificate and its key.
struct Leaf {
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    key_pem: String,
    key_der: Vec<u8>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration presenting `leaf`; with `clients`, client certificates of that CA are required.
fn server_config(leaf: &Leaf, clients: Option<&Ca>) -> Arc<rustls::ServerConfig> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions");
    let builder = match clients {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca.der()).expect("client CA");
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                    .build()
                    .expect("verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf.key_der.clone()));
    Arc::new(builder.with_single_cert(vec![leaf.cert_der.clone()], key).expect("server cert"))
}

/// An HTTPS front on a random loopback port: it deciphers each connection and forwards the bytes to
/// `backend` (a plain HTTP server), or answers every request 503 when there is none. What it deciphered is
/// kept, to see what travelled inside TLS. Serves until dropped; every loop is bounded by the stop flag.
struct TlsFront {
    port: u16,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl TlsFront {
    fn start(config: Arc<rustls::ServerConfig>, backend: Option<u16>) -> TlsFront {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (flag, log) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (flag, log, config) = (flag.clone(), log.clone(), config.clone());
                        held.push(std::thread::spawn(move || relay(stream, config, backend, &log, &flag)));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            for h in held {
                h.join().ok();
            }
        });
        TlsFront { port, stop, seen, thread: Some(thread) }
    }

    fn endpoint(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .into_owned()
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

fn quiet(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// One connection: TLS on `stream`, its plaintext to and from `backend` (or 503 to each request).
fn relay(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    backend: Option<u16>,
    seen: &Mutex<Vec<u8>>,
    stop: &AtomicBool,
) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_millis(5))).ok();
    let Ok(conn) = rustls::ServerConnection::new(config) else { return };
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut back = match backend {
        Some(port) => match TcpStream::connect(("127.0.0.1", port)) {
            Ok(b) => {
                b.set_read_timeout(Some(Duration::from_millis(5))).ok();
                Some(b)
            }
            Err(_) => return,
        },
        None => None,
    };
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while !stop.load(Ordering::Relaxed) {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(&buf[..n]);
                match &mut back {
                    Some(b) => {
                        if b.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                    None => {
                        pending.extend_from_slice(&buf[..n]);
                        // GETs only reach this far (the load stops at 503): one answer per request head.
                        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            pending.drain(..end + 4);
                            let reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
                            if tls.write_all(reply.as_bytes()).and_then(|()| tls.flush()).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
            Err(e) if quiet(&e) => {}
            Err(_) => return,
        }
        if let Some(b) = &mut back {
            match b.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                        return;
                    }
                }
                Err(e) if quiet(&e) => {}
                Err(_) => return,
            }
        }
    }
}

/// A remote copy of the shipped mav-enc-tiny at `endpoint`, with `tls` files written into its folder
/// (`(field, contents)`) and `extra` fields in its `remote` section.
fn package(tag: &str, endpoint: &str, files: &[(&str, &str)], extra: serde_json::Value) -> PathBuf {
    let src = mlserver_common::asset("mav-enc-tiny");
    let dir = mlserver_common::remote_package(&src, &format!("tls-{tag}"), endpoint, "mav-enc-tiny", 2);
    let path = dir.join("mav.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("mav.json")).expect("json");
    let remote = &mut m["remote"];
    remote["timeout_ms"] = serde_json::json!(5000);
    let mut tls = serde_json::Map::new();
    for (field, contents) in files {
        let name = format!("{field}.pem");
        std::fs::write(dir.join(&name), contents).expect("pem");
        tls.insert((*field).to_owned(), serde_json::Value::String(name));
    }
    if !tls.is_empty() {
        remote["tls"] = serde_json::Value::Object(tls);
    }
    if let serde_json::Value::Object(extra) = extra {
        for (k, v) in extra {
            remote[k] = v;
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&m).expect("json")).expect("write");
    dir
}

fn remote_error(dir: &Path) -> RemoteError {
    match load_evaluator(dir, &SessionOptions::default()) {
        Err(LoadError::Remote { error, .. }) => *error,
        Err(e) => panic!("expected a remote error, got {e}"),
        Ok(_) => panic!("expected a remote error, the package opened"),
    }
}

fn tls_failure(dir: &Path) -> (TlsFailure, String) {
    let err = remote_error(dir);
    let msg = err.to_string();
    match err {
        RemoteError::Tls { failure, .. } => (failure, msg),
        other => panic!("expected a TLS failure, got {other}"),
    }
}

/// The handshake succeeded and a request went through: the front (no back end) answered 503.
fn went_through(dir: &Path) {
    let err = remote_error(dir);
    assert!(matches!(err, RemoteError::NotReady { status: 503, .. }), "the handshake should succeed: {err}");
}

#[test]
fn a_private_ca_is_trusted_and_others_are_refused_by_name() {
    let ca = Ca::new("mavboard test CA");
    let other = Ca::new("another CA");
    let good =
        TlsFront::start(server_config(&ca.leaf(&["127.0.0.1", "localhost"], 2024, 2099, false), None), None);
    let ca_file = [("ca_file", ca.pem())];
    let ca_file: Vec<(&str, &str)> = ca_file.iter().map(|(f, c)| (*f, c.as_str())).collect();

    // Valid: the request goes through, with the token inside TLS.
    went_through(&package("valid", &good.endpoint(), &ca_file, serde_json::json!({"token_env": TOKEN_VAR})));
    assert!(good.seen().to_ascii_lowercase().contains("authorization: bearer "), "the token went with it");
    // Without the CA, the system's roots do not know it.
    let (failure, msg) = tls_failure(&package("system-roots", &good.endpoint(), &[], serde_json::json!({})));
    assert_eq!(failure, TlsFailure::UnknownIssuer, "{msg}");
    assert!(msg.contains("remote.tls.ca_file"), "{msg}");
    // Another CA's certificate.
    let other_ca = other.pem();
    let (failure, msg) =
        tls_failure(&package("wrong-ca", &good.endpoint(), &[("ca_file", &other_ca)], serde_json::json!({})));
    assert_eq!(failure, TlsFailure::UnknownIssuer, "{msg}");
    eprintln!("wrong CA: {msg}");

    // A certificate for another name.
    let elsewhere =
        TlsFront::start(server_config(&ca.leaf(&["models.example.com"], 2024, 2099, false), None), None);
    let (failure, msg) =
        tls_failure(&package("name", &elsewhere.endpoint(), &ca_file, serde_json::json!({})));
    assert!(matches!(&failure, TlsFailure::NameMismatch { host, .. } if host == "127.0.0.1"), "{msg}");
    assert!(msg.contains("models.example.com"), "the names it carries are said: {msg}");
    eprintln!("wrong name: {msg}");

    // An expired certificate.
    let expired = TlsFront::start(server_config(&ca.leaf(&["127.0.0.1"], 2020, 2021, false), None), None);
    let (failure, msg) =
        tls_failure(&package("expired", &expired.endpoint(), &ca_file, serde_json::json!({})));
    assert_eq!(failure, TlsFailure::Expired, "{msg}");
    eprintln!("expired: {msg}");

    // A plain-HTTP server behind an https:// endpoint.
    let plain = TcpListener::bind("127.0.0.1:0").expect("bind");
    let plain_port = plain.local_addr().expect("addr").port();
    let answering = std::thread::spawn(move || {
        if let Ok((mut s, _)) = plain.accept() {
            s.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ =
                s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let endpoint = format!("https://127.0.0.1:{plain_port}");
    let (failure, msg) = tls_failure(&package("plain", &endpoint, &ca_file, serde_json::json!({})));
    assert_eq!(failure, TlsFailure::NotTls, "{msg}");
    answering.join().ok();
}

#[test]
fn mutual_tls_is_required_given_and_refused_by_name() {
    let ca = Ca::new("mavboard server CA");
    let clients = Ca::new("mavboard client CA");
    let stranger = Ca::new("a stranger's CA");
    let front =
        TlsFront::start(server_config(&ca.leaf(&["127.0.0.1"], 2024, 2099, false), Some(&clients)), None);
    let ca_pem = ca.pem();

    let (failure, msg) =
        tls_failure(&package("mtls-none", &front.endpoint(), &[("ca_file", &ca_pem)], serde_json::json!({})));
    assert_eq!(failure, TlsFailure::ClientCertRequired, "{msg}");
    assert!(msg.contains("remote.tls.client_cert"), "{msg}");
    eprintln!("no client certificate: {msg}");

    let wrong = stranger.leaf(&["client"], 2024, 2099, true);
    let files =
        [("ca_file", ca_pem.as_str()), ("client_cert", &wrong.cert_pem), ("client_key", &wrong.key_pem)];
    let (failure, msg) =
        tls_failure(&package("mtls-wrong", &front.endpoint(), &files, serde_json::json!({})));
    assert!(matches!(failure, TlsFailure::ClientCertRefused(_)), "{msg}");
    eprintln!("a stranger's client certificate: {msg}");

    let right = clients.leaf(&["client"], 2024, 2099, true);
    let files =
        [("ca_file", ca_pem.as_str()), ("client_cert", &right.cert_pem), ("client_key", &right.key_pem)];
    went_through(&package("mtls-right", &front.endpoint(), &files, serde_json::json!({})));

    // A key that is not the certificate's is named at load, before any call.
    let files =
        [("ca_file", ca_pem.as_str()), ("client_cert", &right.cert_pem), ("client_key", &wrong.key_pem)];
    let err = remote_error(&package("mtls-mismatch", &front.endpoint(), &files, serde_json::json!({})));
    assert!(
        matches!(&err, RemoteError::TlsFile { field: "client_key", reason: PemError::Unusable(_), .. }),
        "{err}"
    );
    assert!(err.to_string().contains("the key of another certificate"), "{err}");
    eprintln!("a key of another certificate: {err}");
}

#[test]
fn broken_tls_files_are_named_at_load() {
    let endpoint = "https://127.0.0.1:9";
    let err = remote_error(&package("no-ca", endpoint, &[("ca_file", "just text\n")], serde_json::json!({})));
    assert!(
        matches!(&err, RemoteError::TlsFile { field: "ca_file", reason: PemError::NoCertificate, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("ca_file.pem"), "the file is named: {err}");
    let dir = package("missing", endpoint, &[], serde_json::json!({"tls": {"ca_file": "nowhere.pem"}}));
    let err = remote_error(&dir);
    assert!(
        matches!(&err, RemoteError::TlsFile { field: "ca_file", reason: PemError::Read(_), .. }),
        "{err}"
    );
    let ca = Ca::new("some CA");
    let leaf = ca.leaf(&["client"], 2024, 2099, true);
    let err =
        remote_error(&package("half", endpoint, &[("client_cert", &leaf.cert_pem)], serde_json::json!({})));
    assert!(
        matches!(&err, RemoteError::TlsFile { reason: PemError::Unpaired { missing: "client_key" }, .. }),
        "{err}"
    );
    let big = "A".repeat(5 << 20);
    let err = remote_error(&package("big", endpoint, &[("ca_file", &big)], serde_json::json!({})));
    assert!(matches!(&err, RemoteError::TlsFile { reason: PemError::TooLarge, .. }), "{err}");
}

#[test]
fn a_token_is_not_sent_in_clear_to_another_host() {
    let dir = package("clear", "http://192.0.2.1:8000", &[], serde_json::json!({"token_env": TOKEN_VAR}));
    let start = Instant::now();
    let err = remote_error(&dir);
    assert!(matches!(&err, RemoteError::TokenInClear { host } if host == "192.0.2.1"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(1), "refused before any connection: {:?}", start.elapsed());
    eprintln!("{err}");
}

#[test]
fn over_tls_a_remote_package_analyses_as_the_local_one() {
    let Some(python) = mlserver_common::serve_python() else { return };
    let local_dir = mlserver_common::asset("mav-enc-tiny");
    let server = mlserver_common::Server::start(&python, &local_dir, "mav-enc-tiny");
    let ca = Ca::new("mavboard test CA");
    let clients = Ca::new("mavboard client CA");
    let client = clients.leaf(&["client"], 2024, 2099, true);
    let front = TlsFront::start(
        server_config(&ca.leaf(&["127.0.0.1"], 2024, 2099, false), Some(&clients)),
        Some(server.port),
    );
    let ca_pem = ca.pem();
    let files =
        [("ca_file", ca_pem.as_str()), ("client_cert", &client.cert_pem), ("client_key", &client.key_pem)];
    let dir = package("analyse", &front.endpoint(), &files, serde_json::json!({"token_env": TOKEN_VAR}));
    let options = SessionOptions::default();
    let mut far =
        load_evaluator(&dir, &options).unwrap_or_else(|e| panic!("opens over TLS: {e}\n{}", server.log()));
    let mut near = load_evaluator(&local_dir, &options).expect("local opens");
    let requests: Vec<_> = [START, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]
        .iter()
        .map(|f| EvalRequest { want_best_action: true, ..EvalRequest::values(chess(f)) })
        .collect();
    let (l, r) = (near.evaluator.evaluate(&requests), far.evaluator.evaluate(&requests));
    let mut worst = 0.0f64;
    for (l, r) in l.iter().zip(&r) {
        let (l, r) = (l.as_ref().expect("local"), r.as_ref().expect("remote over TLS"));
        assert_eq!(l.moves.len(), r.moves.len());
        for (a, b) in l.moves.iter().zip(&r.moves) {
            assert_eq!(a.text, b.text);
            let (pa, pb) =
                (a.dist.as_ref().expect("valued").probs(), b.dist.as_ref().expect("valued").probs());
            for (x, y) in pa.iter().zip(pb) {
                worst = worst.max((x - y).abs());
            }
        }
    }
    eprintln!("over TLS with a client certificate: largest difference per bucket {worst:e}");
    assert!(worst <= 1e-5, "remote over TLS and local differ by {worst:e}");
    assert!(front.seen().contains("POST /v2/models/mav-enc-tiny/infer"), "the inference went through TLS");
}
