//! Standard output that may be closed early: `mavboard analyse … | head -3` ends quietly, with status 0,
//! when `head` has read what it wants, as ripgrep does (rather than panicking as `println!` does).
//!
//! Rust ignores `SIGPIPE`, so a write to a closed pipe fails with [`io::ErrorKind::BrokenPipe`]. Every
//! subcommand prints through [`outln!`], which ends the process at once with
//! [`BROKEN_PIPE_STATUS`] on that error (nothing is left to say to a reader that has gone; the process's
//! other threads go with it, as under a signal), and `main` treats an error whose cause is a broken pipe
//! (a subcommand that writes to stdout itself, such as `uci`, and returns the error) the same way. This
//! works alike on Unix and Windows, where there is no `SIGPIPE`. Any other failure to write is an error
//! on stderr with status 1.

use std::fmt;
use std::io::{self, Write};

/// The exit status when stdout is closed before the output is written: 0, as ripgrep exits (the reader
/// took what it wanted; `git` and `ls`, killed by `SIGPIPE`, report 141 through the shell instead).
pub const BROKEN_PIPE_STATUS: u8 = 0;

/// Prints a formatted line on stdout (as `println!`), ending the process quietly when stdout is closed.
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
    let mut stdout = io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.write_all(b"\n"));
    finish(written);
}

/// Ends the process when a write to stdout failed: quietly for a closed pipe, with a message otherwise.
fn finish(written: io::Result<()>) {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(i32::from(BROKEN_PIPE_STATUS)),
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
