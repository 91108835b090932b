//! A model package's `mav.json`, as a user or another tool may write it: reading and checking it never
//! panics, and a manifest that passes the check is written and read back unchanged and passes again.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mavboard::model::manifest::Manifest;
use mavboard::model::signature::check_manifest;

fuzz_target!(|text: &str| {
    let Ok(manifest) = serde_json::from_str::<Manifest>(text) else { return };
    let dir = Path::new("fuzz-package");
    if check_manifest(dir, &manifest).is_err() {
        return;
    }
    let written = serde_json::to_string(&manifest).expect("a manifest writes as JSON");
    let again: Manifest = serde_json::from_str(&written).expect("a written manifest reads");
    assert_eq!(serde_json::to_string(&again).ok(), Some(written));
    check_manifest(dir, &again).expect("a written manifest passes the check again");
});
