//! A package's small files (mav.json, tokenizer.json) read with a size limit: a damaged or hostile package
//! whose file claims gigabytes is refused by name before it is read, and memory stays bounded.

use std::io::Read;
use std::path::Path;

use super::ModelError;

/// The largest mav.json read (the shipped ones are under 2 KB).
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The largest tokenizer.json read (mavboard's vocabulary is about 56 KB).
pub const MAX_TOKENIZER_BYTES: u64 = 64 << 20;

/// Reads the text file `path`, at most `limit` bytes; `what` names it in the error (`mav.json`).
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String, ModelError> {
    let io = |reason: String| ModelError::Io { path: path.to_path_buf(), reason };
    let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(io(format!(
            "is larger than {} MiB, which no {what} is: the package is damaged (or not a model package)",
            limit >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| io(format!("{what} is not UTF-8 text: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused_unread() {
        let dir = std::env::temp_dir().join(format!("mavboard-bounded-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("mav.json");
        std::fs::write(&path, "{}").expect("write");
        assert_eq!(read_text(&path, 2, "mav.json").expect("at the limit"), "{}");
        // A sparse file of 4 GiB: refused after reading at most limit + 1 bytes.
        let f = std::fs::File::create(&path).expect("create");
        f.set_len(4 << 30).expect("sparse");
        let msg = read_text(&path, MAX_MANIFEST_BYTES, "mav.json").expect_err("too large").to_string();
        assert!(msg.contains("larger than 16 MiB") && msg.contains("mav.json"), "{msg}");
        std::fs::write(&path, [0xff, 0xfe]).expect("write");
        let msg = read_text(&path, 10, "mav.json").expect_err("not text").to_string();
        assert!(msg.contains("not UTF-8"), "{msg}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
