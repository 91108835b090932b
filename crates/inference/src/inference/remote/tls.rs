//! TLS for remote packages: which endpoints may carry a token, the TLS configuration of an `https://`
//! endpoint (the system's roots, or mav.json `remote.tls`'s private CA and client certificate, each checked
//! before the first call), and a failed handshake told by its cause with the fix.
//!
//! rustls (on ring) does the work, through ureq; the system's roots come from the platform's verifier.
//! Every file is checked with the same rustls that will use it, so a key that does not fit its certificate
//! is a named error at load, never a failure inside the HTTP client.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{AlertDescription, CertificateError};
use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig, TlsProvider};

use super::{PemError, RemoteError, TlsFailure};
use crate::model::bounded_read::{ReadError, read_bytes};
use crate::model::manifest::RemoteSpec;

/// The most bytes read from one TLS file (a bundle of every public root is about 200 KB).
pub const MAX_PEM_BYTES: u64 = 4 << 20;

/// The host of an endpoint URL (`scheme://[user@]host[:port][/path]`), without brackets around an IPv6
/// address.
pub fn endpoint_host(endpoint: &str) -> &str {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("");
    }
    authority.split(':').next().unwrap_or("")
}

/// Whether `host` is this machine: `localhost` or a loopback address (`127.0.0.0/8`, `::1`). Names under
/// `localhost` are not taken: a resolver may send them out.
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The PEM contents of a package's TLS files.
#[derive(Debug, Clone, Copy, Default)]
pub struct TlsPem<'a> {
    /// `ca_file`: the private CA's certificate(s).
    pub ca: Option<&'a [u8]>,
    /// `client_cert`: the client's certificate chain, leaf first.
    pub client_cert: Option<&'a [u8]>,
    /// `client_key`: the client certificate's private key.
    pub client_key: Option<&'a [u8]>,
}

/// Which file of `remote.tls` an error is about.
fn file_err(field: &'static str, path: &Path, reason: PemError) -> RemoteError {
    RemoteError::TlsFile { field, path: path.display().to_string(), reason }
}

/// The items of a PEM file, the first malformed block an error.
fn pem_items(pem: &[u8]) -> Result<Vec<PemItem<'static>>, PemError> {
    let mut items = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        match item {
            Ok(item) => items.push(item),
            Err(e) => return Err(PemError::Syntax(e.to_string())),
        }
    }
    Ok(items)
}

/// The certificates of a PEM file: at least one.
fn certificates(pem: &[u8]) -> Result<Vec<Certificate<'static>>, PemError> {
    let certs: Vec<Certificate<'static>> = pem_items(pem)?
        .into_iter()
        .filter_map(|item| match item {
            PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(PemError::NoCertificate);
    }
    Ok(certs)
}

/// The one private key of a PEM file.
fn private_key(pem: &[u8]) -> Result<PrivateKey<'static>, PemError> {
    let mut keys: Vec<PrivateKey<'static>> = pem_items(pem)?
        .into_iter()
        .filter_map(|item| match item {
            PemItem::PrivateKey(k) => Some(k),
            _ => None,
        })
        .collect();
    match keys.len() {
        0 => Err(PemError::NoKey),
        1 => Ok(keys.remove(0)),
        n => Err(PemError::ManyKeys(n)),
    }
}

/// Which TLS file an in-memory check failed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPemError {
    /// `ca_file`, `client_cert` or `client_key`.
    pub field: &'static str,
    /// Why it cannot be used.
    pub reason: PemError,
}

/// The TLS configuration of an `https://` endpoint from its files' contents: the system's roots when no CA
/// is given, else that CA alone; a client certificate when both its chain and its key are given, checked to
/// fit each other.
pub fn tls_config(pem: TlsPem<'_>) -> Result<TlsConfig, TlsPemError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let err = |field: &'static str| move |reason: PemError| TlsPemError { field, reason };
    let roots = match pem.ca {
        None => RootCerts::PlatformVerifier,
        Some(ca) => {
            let certs = certificates(ca).map_err(err("ca_file"))?;
            let mut store = rustls::RootCertStore::empty();
            for (index, c) in certs.iter().enumerate() {
                store.add(CertificateDer::from(c.der().to_vec())).map_err(|e| TlsPemError {
                    field: "ca_file",
                    reason: PemError::BadCertificate { index: index + 1, reason: e.to_string() },
                })?;
            }
            RootCerts::new_with_certs(&certs)
        }
    };
    let client = match (pem.client_cert, pem.client_key) {
        (None, None) => None,
        (Some(_), None) => {
            return Err(TlsPemError {
                field: "client_cert",
                reason: PemError::Unpaired { missing: "client_key" },
            });
        }
        (None, Some(_)) => {
            return Err(TlsPemError {
                field: "client_key",
                reason: PemError::Unpaired { missing: "client_cert" },
            });
        }
        (Some(chain), Some(key)) => {
            let chain = certificates(chain).map_err(err("client_cert"))?;
            let parsed = private_key(key).map_err(err("client_key"))?;
            // The same key as rustls reads it (ureq does not name the key's kind).
            let der = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| TlsPemError { field: "client_key", reason: PemError::Syntax(e.to_string()) })?;
            let ders = chain.iter().map(|c| CertificateDer::from(c.der().to_vec())).collect();
            rustls::sign::CertifiedKey::from_der(ders, der, &provider).map_err(|e| {
                let why = match e {
                    rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                        "it is the key of another certificate".to_owned()
                    }
                    other => other.to_string(),
                };
                TlsPemError { field: "client_key", reason: PemError::Unusable(why) }
            })?;
            Some(ClientCert::new_with_certs(&chain, parsed))
        }
    };
    Ok(TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(provider)
        .root_certs(roots)
        .client_cert(client)
        .build())
}

/// A TLS file's path: relative to the package's folder, or absolute.
fn resolve(dir: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() { path.to_path_buf() } else { dir.join(path) }
}

/// Reads one TLS file, at most [`MAX_PEM_BYTES`].
fn read_pem(field: &'static str, path: &Path) -> Result<Vec<u8>, RemoteError> {
    read_bytes(path, MAX_PEM_BYTES).map_err(|e| match e {
        ReadError::Io(e) => file_err(field, path, PemError::Read(e.to_string())),
        ReadError::TooLarge => file_err(field, path, PemError::TooLarge),
    })
}

/// The TLS configuration of a package's `https://` endpoint (see [`tls_config`]), its files read from the
/// package's folder `dir`.
pub(super) fn package_tls(spec: &RemoteSpec, dir: &Path) -> Result<TlsConfig, RemoteError> {
    let files = spec.tls.clone().unwrap_or_default();
    let read =
        |field: &'static str, file: &Option<String>| -> Result<Option<(PathBuf, Vec<u8>)>, RemoteError> {
            match file {
                None => Ok(None),
                Some(f) => {
                    let path = resolve(dir, f);
                    let bytes = read_pem(field, &path)?;
                    Ok(Some((path, bytes)))
                }
            }
        };
    let ca = read("ca_file", &files.ca_file)?;
    let cert = read("client_cert", &files.client_cert)?;
    let key = read("client_key", &files.client_key)?;
    let pem = TlsPem {
        ca: ca.as_ref().map(|(_, b)| b.as_slice()),
        client_cert: cert.as_ref().map(|(_, b)| b.as_slice()),
        client_key: key.as_ref().map(|(_, b)| b.as_slice()),
    };
    tls_config(pem).map_err(|TlsPemError { field, reason }| {
        let path = match field {
            "ca_file" => ca.as_ref().map(|(p, _)| p.clone()),
            "client_cert" => cert.as_ref().map(|(p, _)| p.clone()),
            _ => key.as_ref().map(|(p, _)| p.clone()),
        };
        RemoteError::TlsFile {
            field,
            path: path.map_or_else(|| "not given".to_owned(), |p| p.display().to_string()),
            reason,
        }
    })
}

/// A name as rustls presents it (`DnsName("a.example")`, `IpAddress(…)`), bare.
fn bare_name(presented: &str) -> &str {
    presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .map_or(presented, |inner| inner.trim_matches('"'))
}

/// A failed handshake or TLS record, told by its cause: `host` is the name the server was called by,
/// `client_cert` whether one was offered.
pub(super) fn failure(e: &rustls::Error, host: &str, client_cert: bool) -> TlsFailure {
    use rustls::Error as E;
    match e {
        E::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => TlsFailure::UnknownIssuer,
            CertificateError::NotValidForName => {
                TlsFailure::NameMismatch { host: host.to_owned(), presented: String::new() }
            }
            CertificateError::NotValidForNameContext { presented, .. } => TlsFailure::NameMismatch {
                host: host.to_owned(),
                presented: presented.iter().map(|p| bare_name(p)).collect::<Vec<_>>().join(", "),
            },
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => TlsFailure::Expired,
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsFailure::NotYetValid
            }
            other => TlsFailure::BadCertificate(other.to_string()),
        },
        E::AlertReceived(AlertDescription::CertificateRequired) => TlsFailure::ClientCertRequired,
        // TLS 1.2 servers say this both for a missing or refused client certificate and for no common
        // version, cipher or group: both are said.
        E::AlertReceived(AlertDescription::HandshakeFailure) => TlsFailure::HandshakeFailure { client_cert },
        E::AlertReceived(
            alert @ (AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::DecryptError
            | AlertDescription::AccessDenied),
        ) if client_cert => TlsFailure::ClientCertRefused(format!("{alert:?}")),
        E::AlertReceived(alert) => TlsFailure::Refused(format!("{alert:?}")),
        E::InvalidMessage(_) => TlsFailure::NotTls,
        other => TlsFailure::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_endpoints() {
        assert_eq!(endpoint_host("http://127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(endpoint_host("https://user@models.example.com/v2"), "models.example.com");
        assert_eq!(endpoint_host("http://[::1]:9000/"), "::1");
        assert_eq!(endpoint_host("http://gpu-box"), "gpu-box");
    }

    #[test]
    fn presented_names_are_bare() {
        assert_eq!(bare_name(r#"DnsName("models.example.com")"#), "models.example.com");
        assert_eq!(bare_name("IpAddress(10.0.0.1)"), "10.0.0.1");
        assert_eq!(bare_name("plain"), "plain");
    }

    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "LOCALHOST", "127.0.0.1", "127.8.9.10", "::1"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["10.0.0.2", "localhost.example.com", "api.localhost", "0.0.0.0", "::2", "gpu-box", ""] {
            assert!(!is_loopback(h), "{h}");
        }
    }

    #[test]
    fn files_that_are_not_certificates_are_named() {
        let e =
            tls_config(TlsPem { ca: Some(b"not a certificate"), ..TlsPem::default() }).expect_err("no cert");
        assert_eq!(e, TlsPemError { field: "ca_file", reason: PemError::NoCertificate });
        let garbage = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let e = tls_config(TlsPem { ca: Some(garbage), ..TlsPem::default() }).expect_err("bad cert");
        assert!(matches!(e.reason, PemError::BadCertificate { index: 1, .. }), "{e:?}");
        let e = tls_config(TlsPem { client_cert: Some(garbage), ..TlsPem::default() }).expect_err("unpaired");
        assert_eq!(e.reason, PemError::Unpaired { missing: "client_key" });
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        let e = tls_config(TlsPem { ca: Some(broken), ..TlsPem::default() }).expect_err("syntax");
        assert!(matches!(e.reason, PemError::Syntax(_)), "{e:?}");
    }

    #[test]
    fn no_files_is_the_system_roots() {
        let config = tls_config(TlsPem::default()).expect("system roots");
        assert!(matches!(config.root_certs(), RootCerts::PlatformVerifier));
        assert!(config.client_cert().is_none());
    }

    #[test]
    fn handshake_errors_are_told_by_cause() {
        let f = |e: rustls::Error, cc| failure(&e, "models.example.com", cc).to_string();
        let unknown = f(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer), false);
        assert!(unknown.contains("unknown") && unknown.contains("remote.tls.ca_file"), "{unknown}");
        let name = f(rustls::Error::InvalidCertificate(CertificateError::NotValidForName), false);
        assert!(name.contains("not valid for models.example.com"), "{name}");
        let expired = f(rustls::Error::InvalidCertificate(CertificateError::Expired), false);
        assert!(expired.contains("expired"), "{expired}");
        let required = f(rustls::Error::AlertReceived(AlertDescription::CertificateRequired), false);
        assert!(required.contains("remote.tls.client_cert"), "{required}");
        let refused = f(rustls::Error::AlertReceived(AlertDescription::UnknownCA), true);
        assert!(refused.contains("refused the client certificate"), "{refused}");
        let either = f(rustls::Error::AlertReceived(AlertDescription::HandshakeFailure), false);
        assert!(either.contains("require a client certificate") && either.contains("cipher"), "{either}");
    }
}
