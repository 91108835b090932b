//! The resume state of a batch run, and the small file operations around it.
//!
//! A batch writes its output to `OUT.partial` (and the report's games to `REPORT.partial`) game by game,
//! in input order, and records in `OUT.resume.json` how many input games are done and how many bytes of
//! each partial file they fill. Whatever happens (Ctrl+C, a crash, a full disk), the partial files up to
//! the recorded lengths are whole games; a second run with the same input and settings truncates them to
//! those lengths, skips the games done and goes on. A finished run renames `OUT.partial` to `OUT` (an
//! atomic replace) and removes the state.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::ReviewError;

/// `path` with `suffix` appended to its file name (`out.pgn` → `out.pgn.partial`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// Writes `bytes` to `path` atomically: to a temporary file beside it, then renamed over it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReviewError> {
    let tmp = with_suffix(path, ".tmp");
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| ReviewError::io(path, &e))
}

/// What a batch run has done so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeState {
    /// The input file as given.
    pub input: PathBuf,
    /// The input file's length in bytes when the run began.
    pub input_len: u64,
    /// The settings that change the output (model, scoring, search, thresholds, report on or off).
    pub settings: String,
    /// Input games (read or not) whose output is complete.
    pub games_done: usize,
    /// Bytes of the partial output that hold them.
    pub output_len: u64,
    /// Bytes of the partial report that hold them (when a report is written).
    pub report_len: Option<u64>,
}

impl ResumeState {
    /// Reads a state file; `None` when there is none.
    pub fn load(path: &Path) -> Result<Option<ResumeState>, ReviewError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ReviewError::io(path, &e)),
        };
        serde_json::from_str(&text).map(Some).map_err(|e| ReviewError::Io {
            path: path.to_path_buf(),
            reason: format!("not a resume state: {e}"),
        })
    }

    /// Writes the state file atomically.
    pub fn save(&self, path: &Path) -> Result<(), ReviewError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| ReviewError::Io { path: path.to_path_buf(), reason: e.to_string() })?;
        write_atomic(path, text.as_bytes())
    }

    /// Why this state cannot be resumed by a run over `input` (of `input_len` bytes) with `settings`;
    /// `None` when it can.
    pub fn mismatch(&self, input: &Path, input_len: u64, settings: &str) -> Option<String> {
        if self.input != input {
            return Some(format!("it was for {}, not {}", self.input.display(), input.display()));
        }
        if self.input_len != input_len {
            return Some(format!("the input was {} bytes then and is {input_len} now", self.input_len));
        }
        if self.settings != settings {
            return Some(format!("settings were `{}`, now `{settings}`", self.settings));
        }
        None
    }
}

/// Why a partial file cannot be reopened at its recorded length.
#[derive(Debug, thiserror::Error)]
pub enum ReopenError {
    /// Opening, truncating or seeking failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file is shorter than the resume state says it is.
    #[error("{} has {actual} bytes but the state records {recorded}", .path.display())]
    Shorter {
        /// The partial file.
        path: PathBuf,
        /// Its length.
        actual: u64,
        /// The length the resume state records.
        recorded: u64,
    },
}

/// Opens a partial file for appending after truncating it to `len` bytes; fails if it is shorter.
pub fn reopen_truncated(path: &Path, len: u64) -> Result<fs::File, ReopenError> {
    let mut file = fs::OpenOptions::new().read(true).write(true).open(path)?;
    let actual = file.metadata()?.len();
    if actual < len {
        return Err(ReopenError::Shorter { path: path.to_path_buf(), actual, recorded: len });
    }
    file.set_len(len)?;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mavboard-resume-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("tmp dir");
        dir
    }

    #[test]
    fn state_round_trips_and_names_mismatches() {
        let dir = tmp_dir("state");
        let path = dir.join("out.pgn.resume.json");
        assert_eq!(ResumeState::load(&path).expect("no file is fine"), None);
        let state = ResumeState {
            input: PathBuf::from("games.pgn"),
            input_len: 1234,
            settings: "mock|mean".into(),
            games_done: 7,
            output_len: 999,
            report_len: Some(55),
        };
        state.save(&path).expect("saves");
        assert_eq!(ResumeState::load(&path).expect("loads"), Some(state.clone()));
        assert_eq!(state.mismatch(Path::new("games.pgn"), 1234, "mock|mean"), None);
        assert!(
            state
                .mismatch(Path::new("other.pgn"), 1234, "mock|mean")
                .is_some_and(|w| w.contains("other.pgn"))
        );
        assert!(state.mismatch(Path::new("games.pgn"), 1, "mock|mean").is_some_and(|w| w.contains("1234")));
        assert!(
            state.mismatch(Path::new("games.pgn"), 1234, "mock|max").is_some_and(|w| w.contains("mock|max"))
        );
        fs::write(&path, "not json").expect("write");
        assert!(ResumeState::load(&path).is_err());
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn partial_files_are_cut_back_to_the_recorded_length() {
        let dir = tmp_dir("truncate");
        let path = dir.join("out.pgn.partial");
        fs::write(&path, "game one\ngame two, half wri").expect("write");
        let mut f = reopen_truncated(&path, 9).expect("reopens");
        f.write_all(b"game two\n").expect("append");
        drop(f);
        assert_eq!(fs::read_to_string(&path).expect("read"), "game one\ngame two\n");
        assert!(matches!(
            reopen_truncated(&path, 1000),
            Err(ReopenError::Shorter { actual: 18, recorded: 1000, .. })
        ));
        assert_eq!(with_suffix(Path::new("a/b.pgn"), ".partial"), PathBuf::from("a/b.pgn.partial"));
        write_atomic(&dir.join("x.json"), b"{}").expect("writes");
        assert_eq!(fs::read_to_string(dir.join("x.json")).expect("read"), "{}");
        assert!(!dir.join("x.json.tmp").exists());
        fs::remove_dir_all(&dir).ok();
    }
}
