//! A Python step of a package tool (`import searchless`, `package quantize`): a script built into this
//! binary, written to the tool's scratch folder and run with the first interpreter of the importer's
//! Python environment that exists. Every script keeps one contract: one JSON object as the last `{` line of
//! its standard output on success; `error: REASON` on standard error and exit status 2 when the input is
//! refused (a reason for the user); anything else is a failure of the script itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Python interpreters to try, in order: `$MAVBOARD_PYTHON`, the importer's virtual environment
/// `.venv-import` in the working directory and in the source tree this binary was built from, then
/// `python3`.
pub fn find_python() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("MAVBOARD_PYTHON") {
        out.push(PathBuf::from(p));
    }
    let venv = Path::new(".venv-import").join("bin").join("python");
    out.push(venv.clone());
    out.push(crate::checkout_dir().join(&venv));
    out.push(PathBuf::from("python3"));
    out
}

/// How a Python step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// It succeeded: its report (the JSON line).
    Done(String),
    /// It refused the input, for this reason.
    Refused(String),
    /// It failed otherwise: its exit status and the last lines of its standard error.
    Failed {
        /// The exit status, as the OS gives it.
        status: String,
        /// The last lines it wrote to standard error.
        stderr: String,
    },
    /// No interpreter could be started; the ones tried.
    NoPython {
        /// The interpreters tried, comma-separated.
        tried: String,
    },
}

/// Writes `script` (its text) as `dir/name`, runs it with `args` under `python` or, when `None`, the first
/// of [`find_python`] that starts, removes it, and says how it ended. An I/O error writing
/// or starting it is `Err` with the path concerned.
pub fn run(
    dir: &Path,
    name: &str,
    script: &str,
    args: &[OsString],
    python: Option<&Path>,
) -> Result<StepOutcome, (PathBuf, std::io::Error)> {
    let path = dir.join(name);
    std::fs::write(&path, script).map_err(|e| (path.clone(), e))?;
    let pythons = python.map(|p| vec![p.to_path_buf()]).unwrap_or_else(find_python);
    let mut output = None;
    for py in &pythons {
        match Command::new(py).arg(&path).args(args).output() {
            Ok(o) => {
                output = Some(o);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err((py.clone(), e));
            }
        }
    }
    std::fs::remove_file(&path).map_err(|e| (path.clone(), e))?;
    let Some(output) = output else {
        let tried = pythons.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        return Ok(StepOutcome::NoPython { tried });
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(2)
        && let Some(reason) = stderr.lines().rev().find_map(|l| l.strip_prefix("error: "))
    {
        return Ok(StepOutcome::Refused(reason.to_owned()));
    }
    if !output.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Ok(StepOutcome::Failed { status: output.status.to_string(), stderr: tail.join("\n") });
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    Ok(StepOutcome::Done(line.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_interpreter_is_reported_with_what_was_tried() {
        let dir = std::env::temp_dir().join(format!("mavboard-python-step-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let missing = dir.join("no-such-python");
        let outcome = run(&dir, "s.py", "print('{}')", &[], Some(&missing)).expect("no I/O error");
        assert_eq!(outcome, StepOutcome::NoPython { tried: missing.display().to_string() });
        assert!(!dir.join("s.py").exists(), "the script is removed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
