//! Standard output that may be closed early: `mavboard analyse … | head -3` ends quietly, with status 0,
//! when `head` has read what it wants, as ripgrep does (rather than panicking as `println!` does).
//!
//! Rust ignores `SIGPIPE`, so a write to a closed pipe fails with [`io::ErrorKind::BrokenPipe`]. Every
//! subcommand prints through [`outln!`], which on that error stops writing to stdout — later lines are
//! dropped — and lets the command finish what else it was asked (the files of `--json`, `--plot`, `-o`
//! are still written), ending with its own status (0 when all went well, as ripgrep's). `main` treats an
//! error whose cause is a broken pipe (a subcommand that writes to stdout itself, such as `uci`, and
//! returns the error) as the end of the conversation: status [`BROKEN_PIPE_STATUS`]. This works alike on
//! Unix and Windows, where there is no `SIGPIPE`. Any other failure to write is an error on stderr with
//! status 1.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write found stdout closed: later lines are dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The exit status when stdout is closed before the output is written: 0, as ripgrep exits (the reader
/// took what it wanted; `git` and `ls`, killed by `SIGPIPE`, report 141 through the shell instead).
pub const BROKEN_PIPE_STATUS: u8 = 0;

/// Prints a formatted line on stdout (as `println!`); once stdout is closed, prints nothing more.
macro_rules! outln {
    () => {
        $crate::cli::out::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write_line(format_args!($($arg)*))
    };
}

/// Writes `args` and a newline to stdout (see [`outln!`]).
pub fn write_line(args: fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.write_all(b"\n"));
    finish(written);
}

/// After a write to stdout: a closed pipe stops later writes; another failure ends the process with a
/// message.
fn finish(written: io::Result<()>) {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => CLOSED.store(true, Ordering::Relaxed),
        Err(e) => {
            eprintln!("error: writing to stdout failed: {e}");
            std::process::exit(1);
        }
    }
}

/// Whether `error` comes from writing to a closed pipe (anywhere in its chain of causes).
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_found_among_the_causes() {
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing moves");
        assert!(is_broken_pipe(&pipe));
        let other = anyhow::Error::new(io::Error::from(io::ErrorKind::NotFound)).context("reading");
        assert!(!is_broken_pipe(&other));
        assert!(!is_broken_pipe(&anyhow::anyhow!("no model")));
    }
}
