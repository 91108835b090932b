//! Logs: mavboard's own messages, ONNX Runtime's (through ort's `tracing` events) and wgpu's and eframe's
//! (through the `log` bridge). The command line writes them to stderr; the app to `mavboard.log` in the
//! platform's log folder ([`log_dir`]), rotated at [`MAX_LOG_BYTES`] with [`KEPT_LOGS`] old files kept. A
//! panic in the app writes its report (message, place, backtrace) to a `panic-<unix time>.txt` there and
//! names it on stderr. A panic of the main (UI) thread ends the app, so the next start says where its
//! report is ([`take_crash_report`]); a panic on another thread is one the engine catches and reports
//! itself (a crashed evaluator is rebuilt), so it leaves its report without that message.
//!
//! `RUST_LOG` chooses what is written, as everywhere in Rust (`RUST_LOG=debug`, `RUST_LOG=ort=info,warn`);
//! without it, warnings and errors.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The log file is rotated when it grows past this many bytes.
pub const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;
/// Rotated log files kept (`mavboard.log.1` … `mavboard.log.N`).
pub const KEPT_LOGS: usize = 3;
/// The app's log file name inside [`log_dir`].
pub const LOG_FILE: &str = "mavboard.log";
/// The file that names the report of the last panic until the app has shown it.
const CRASH_MARKER: &str = "last-crash.txt";

/// Why logging could not be set up (the program goes on without a log).
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The log folder or file could not be created or rotated.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A logger was already installed in this process.
    #[error("a logger is already installed: {0}")]
    AlreadySet(String),
}

/// The platform's folder for the app's logs and crash reports: `$XDG_STATE_HOME/mavboard/logs` (default
/// `~/.local/state/mavboard/logs`) on Linux and other Unix systems, `~/Library/Logs/mavboard` on macOS,
/// `%LOCALAPPDATA%\mavboard\logs` on Windows; `None` when the home folder is unknown.
pub fn log_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(target_os = "windows") {
        return var("LOCALAPPDATA").map(|d| d.join("mavboard").join("logs"));
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| h.join("Library/Logs/mavboard"));
    }
    var("XDG_STATE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .map(|d| d.join("mavboard").join("logs"))
}

/// The platform's folder for what mavboard keeps about a running session (its logs' folder is inside it
/// on Linux and Windows): `$XDG_STATE_HOME/mavboard` (default `~/.local/state/mavboard`) on Linux and other
/// Unix systems, `~/Library/Application Support/mavboard` on macOS, `%LOCALAPPDATA%\mavboard` on Windows;
/// `None` when the home folder is unknown. The crash journal of unsaved games lives in its `journal` folder.
pub fn state_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(target_os = "windows") {
        return var("LOCALAPPDATA").map(|d| d.join("mavboard"));
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| h.join("Library/Application Support/mavboard"));
    }
    var("XDG_STATE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .map(|d| d.join("mavboard"))
}

/// What `RUST_LOG` asks for, or warnings and errors.
fn filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"))
}

/// Sends every log message to stderr (the command line). The `log` bridge is installed too.
pub fn init_stderr() -> Result<(), LogError> {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_target(true)
        .try_init()
        .map_err(|e| LogError::AlreadySet(e.to_string()))
}

/// Renames `dir/name` to `name.1` (and `name.1` to `name.2`, …, dropping the oldest beyond `keep`) when
/// it holds more than `max_bytes`.
pub fn rotate(dir: &Path, name: &str, max_bytes: u64, keep: usize) -> Result<(), LogError> {
    let path = dir.join(name);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LogError::Io { path, source }
    };
    match fs::metadata(&path) {
        Ok(m) if m.len() > max_bytes => {}
        _ => return Ok(()),
    }
    let numbered = |n: usize| dir.join(format!("{name}.{n}"));
    if keep == 0 {
        return fs::remove_file(&path).map_err(io(&path));
    }
    let oldest = numbered(keep);
    if oldest.exists() {
        fs::remove_file(&oldest).map_err(io(&oldest))?;
    }
    for n in (1..keep).rev() {
        let from = numbered(n);
        if from.exists() {
            fs::rename(&from, numbered(n + 1)).map_err(io(&from))?;
        }
    }
    fs::rename(&path, numbered(1)).map_err(io(&path))
}

/// Sends every log message to `dir/mavboard.log` (the app; `dir` is created, the file rotated first) and
/// installs the panic hook that writes reports to `dir`. Returns the log file's path.
pub fn init_file(dir: &Path) -> Result<PathBuf, LogError> {
    fs::create_dir_all(dir).map_err(|source| LogError::Io { path: dir.to_path_buf(), source })?;
    rotate(dir, LOG_FILE, MAX_LOG_BYTES, KEPT_LOGS)?;
    let path = dir.join(LOG_FILE);
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|source| LogError::Io { path: path.clone(), source })?;
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_target(true)
        .try_init()
        .map_err(|e| LogError::AlreadySet(e.to_string()))?;
    install_panic_hook(dir.to_path_buf());
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "mavboard started");
    Ok(path)
}

/// Writes a report for `info` into `dir` and, when `fatal`, names it in the crash marker that the next start
/// reads; returns the report's path.
pub fn write_crash_report(dir: &Path, info: &str, fatal: bool) -> Result<PathBuf, LogError> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let path = dir.join(format!("panic-{}-{:09}.txt", now.as_secs(), now.subsec_nanos()));
    let report = format!(
        "mavboard {} stopped on a panic.\n\n{info}\n\nBacktrace:\n{}\n",
        env!("CARGO_PKG_VERSION"),
        std::backtrace::Backtrace::force_capture()
    );
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LogError::Io { path, source }
    };
    File::create(&path).and_then(|mut f| f.write_all(report.as_bytes())).map_err(io(&path))?;
    if fatal {
        let marker = dir.join(CRASH_MARKER);
        fs::write(&marker, path.to_string_lossy().as_bytes()).map_err(io(&marker))?;
    }
    Ok(path)
}

/// The report of a panic the app has not told about yet (and forgets it, so it is told once).
pub fn take_crash_report(dir: &Path) -> Option<PathBuf> {
    let marker = dir.join(CRASH_MARKER);
    let text = fs::read_to_string(&marker).ok()?;
    let _ = fs::remove_file(&marker);
    let path = PathBuf::from(text.trim());
    path.is_file().then_some(path)
}

fn install_panic_hook(dir: PathBuf) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        let what = info.to_string();
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        tracing::error!(panic = %what, thread = name, "mavboard panicked");
        match write_crash_report(&dir, &what, name == "main") {
            Ok(path) => eprintln!("mavboard: the crash report is in {}", path.display()),
            Err(e) => eprintln!("mavboard: could not write the crash report: {e}"),
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mavboard-logging-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn rotation_keeps_the_newest_files() {
        let dir = temp("rotate");
        for round in 0..5 {
            fs::write(dir.join("x.log"), format!("round {round} ").repeat(10)).expect("write");
            rotate(&dir, "x.log", 20, 3).expect("rotates");
            assert!(!dir.join("x.log").exists());
        }
        let read = |n: usize| fs::read_to_string(dir.join(format!("x.log.{n}"))).expect("kept");
        assert!(read(1).starts_with("round 4"));
        assert!(read(2).starts_with("round 3"));
        assert!(read(3).starts_with("round 2"));
        assert!(!dir.join("x.log.4").exists());
        // A small file stays where it is.
        fs::write(dir.join("x.log"), "small").expect("write");
        rotate(&dir, "x.log", 20, 3).expect("no-op");
        assert_eq!(fs::read_to_string(dir.join("x.log")).expect("kept"), "small");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_crash_report_is_told_once() {
        let dir = temp("crash");
        assert_eq!(take_crash_report(&dir), None);
        // A panic the app survives leaves its report but no message for the next start.
        let caught = write_crash_report(&dir, "panicked at src/y.rs:2:2: caught", false).expect("written");
        assert!(caught.is_file());
        assert_eq!(take_crash_report(&dir), None);
        let path = write_crash_report(&dir, "panicked at src/x.rs:1:1: boom", true).expect("written");
        let text = fs::read_to_string(&path).expect("report");
        assert!(text.contains("boom") && text.contains("Backtrace"), "{text}");
        assert_eq!(take_crash_report(&dir), Some(path));
        assert_eq!(take_crash_report(&dir), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_log_folder_follows_the_platform() {
        let dir = log_dir();
        if cfg!(target_os = "linux") && std::env::var_os("HOME").is_some() {
            let dir = dir.expect("a folder");
            assert!(dir.ends_with("mavboard/logs"), "{}", dir.display());
            assert_eq!(state_dir().map(|s| s.join("logs")), Some(dir), "the logs are in the state folder");
        }
    }
}
