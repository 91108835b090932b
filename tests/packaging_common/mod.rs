//! Shared by the packaging tests: scratch folders that clean up after themselves.

#![allow(dead_code)]

use std::path::PathBuf;

/// A folder of this test process under the system's temporary folder, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new, empty folder named after `tag` and this process.
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mavboard-package-{tag}-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("remove an old scratch folder");
        }
        std::fs::create_dir_all(&dir).expect("create a scratch folder");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}
