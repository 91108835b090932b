//! A package's small files (mav.json, tokenizer.json) read with a size limit: a damaged or hostile package
//! whose file claims gigabytes is refused by name before it is read, and memory stays bounded.

use std::io::Read;
use std::path::Path;

use super::ModelError;

/// The largest mav.json read (the shipped ones are under 2 KB).
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The largest tokenizer.json read (mavboard's vocabulary is about 56 KB).
pub const MAX_TOKENIZER_BYTES: u64 = 64 << 20;

/// Why [`read_bytes`] read nothing.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// It holds more than the limit (said by its size before reading, or found while reading a file without
    /// one, such as a pipe).
    TooLarge,
}

/// Reads the file `path` whole if it holds at most `limit` bytes: a larger one is refused unread (by its
/// size) or after `limit + 1` bytes, and the buffer never grows past what the file holds.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let size = file.metadata().map(|m| m.len()).ok();
    if size.is_some_and(|s| s > limit) {
        return Err(ReadError::TooLarge);
    }
    let capacity = usize::try_from(size.unwrap_or(0).min(limit) + 1).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Reads the text file `path`, at most `limit` bytes; `what` names it in the error (`mav.json`).
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String, ModelError> {
    let io = |reason: String| ModelError::Io { path: path.to_path_buf(), reason };
    let bytes = read_bytes(path, limit).map_err(|e| match e {
        ReadError::Io(e) => io(e.to_string()),
        ReadError::TooLarge => io(format!(
            "is larger than {} MiB, which no {what} is: the package is damaged (or not a model package)",
            limit >> 20
        )),
    })?;
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
