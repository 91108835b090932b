//! A remote package's TLS settings: the endpoint's first line (its host, whether a token may go there in
//! clear) and the PEM files of `remote.tls` (`ca_file`, `client_cert`, `client_key`, separated by NUL bytes;
//! an empty part is a file not given). Nothing panics; a file that cannot be used is a named error of the
//! right field; a configuration that builds has a client certificate exactly when both its files were given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::inference::remote::tls::{TlsPem, endpoint_host, is_loopback, tls_config};

fuzz_target!(|data: &[u8]| {
    let (first, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[..0]),
    };
    let endpoint = String::from_utf8_lossy(first);
    let host = endpoint_host(&endpoint);
    assert!(endpoint.contains(host), "the host is part of the endpoint");
    let _ = is_loopback(host);

    let mut parts = rest.splitn(3, |&b| b == 0);
    let mut next = || parts.next().filter(|p| !p.is_empty());
    let pem = TlsPem { ca: next(), client_cert: next(), client_key: next() };
    match tls_config(pem) {
        Ok(config) => {
            assert_eq!(config.client_cert().is_some(), pem.client_cert.is_some() && pem.client_key.is_some());
        }
        Err(e) => {
            assert!(["ca_file", "client_cert", "client_key"].contains(&e.field));
            assert!(!e.reason.to_string().is_empty());
        }
    }
});
