//! Logs: the app's file gets `tracing` events and `log` records (wgpu's and eframe's route), a panic
//! leaves a report that the next start names; the command line writes ONNX Runtime's messages to stderr
//! when `RUST_LOG` asks for them.

use std::path::PathBuf;
use std::process::Command;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mavboard-log-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_app_log_file_gets_both_kinds_of_records_and_panics_leave_a_report() {
    let dir = temp("app");
    let path = mavboard::logging::init_file(&dir).expect("the log is set up");
    assert_eq!(path, dir.join(mavboard::logging::LOG_FILE));
    tracing::warn!("a warning through tracing");
    log::error!("an error through the log crate");
    let text = std::fs::read_to_string(&path).expect("the log file");
    assert!(text.contains("a warning through tracing"), "{text}");
    assert!(text.contains("an error through the log crate"), "{text}");
    // Only one logger per process.
    assert!(matches!(mavboard::logging::init_file(&dir), Err(mavboard::logging::LogError::AlreadySet(_))));
    // A panic on a thread other than the main one (the engine catches those) is logged and leaves a report,
    // but no "stopped unexpectedly" message for the next start: the app survived it.
    let joined = std::thread::spawn(|| panic!("test panic for the crash report")).join();
    assert!(joined.is_err());
    let reports: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the log folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("panic-")))
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let text = std::fs::read_to_string(&reports[0]).expect("the report");
    assert!(text.contains("test panic for the crash report"), "{text}");
    assert_eq!(mavboard::logging::take_crash_report(&dir), None);
    let log = std::fs::read_to_string(&path).expect("the log file");
    assert!(log.contains("mavboard panicked"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_command_line_writes_onnx_runtime_messages_to_stderr_when_asked() {
    let run = |filter: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mavboard"));
        command.args(["analyse", "--fen", "startpos"]).env_remove("RUST_LOG");
        if let Some(f) = filter {
            command.env("RUST_LOG", f);
        }
        let out = command.output().expect("mavboard runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let quiet = run(None);
    assert!(!quiet.contains("ort::"), "warnings and errors only by default: {quiet}");
    let chatty = run(Some("ort=info"));
    assert!(chatty.contains("ONNX Runtime"), "{chatty}");
}
