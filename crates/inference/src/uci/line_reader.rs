//! A background thread that reads a byte stream line by line into a channel.
//!
//! Reading a child process's stdout blocks; a channel receiver can be waited on with a timeout and tells
//! when the stream has ended (the sender is dropped at end of file or on a read error).

use std::io::{BufRead, BufReader, Read};

use crossbeam_channel::{Receiver, unbounded};

/// Spawns a thread named `name` that sends every line of `input` (without its line ending) until end of
/// file. Invalid UTF-8 is replaced rather than ending the stream. The receiver disconnects when the stream
/// ends, fails, or when the thread cannot be started (then nothing is ever sent).
pub fn spawn_line_reader<R: Read + Send + 'static>(name: &str, input: R) -> Receiver<String> {
    let (tx, rx) = unbounded();
    let spawned = std::thread::Builder::new().name(name.to_owned()).spawn(move || {
        let mut reader = BufReader::new(input);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    while matches!(buf.last(), Some(b'\n' | b'\r')) {
                        buf.pop();
                    }
                    if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    // If the thread could not be spawned the closure (and its sender) is dropped, so the receiver reports
    // a disconnected stream, which callers already handle as "the other side went away".
    drop(spawned);
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_disconnects_at_end() {
        let rx = spawn_line_reader("test-reader", &b"uciok\r\nreadyok\nlast"[..]);
        let lines: Vec<String> = rx.iter().collect();
        assert_eq!(lines, ["uciok", "readyok", "last"]);
    }
}
