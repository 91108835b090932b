//! Threads that may outlive whoever started them — a retired worker pool finishing its batch, a model
//! still loading, an internal search nobody waits for any more — kept in one list, so
//! that the app can let them finish before the process exits ([`wait`]): ONNX Runtime tears itself down
//! when the process exits, and a thread still inside one of its sessions then crashes the process.

use std::sync::Mutex;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

static DETACHED: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Starts `f` on a thread named `name` that nobody joins, but that [`wait`] waits for.
pub fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let handle = thread::Builder::new().name(name.to_owned()).spawn(f)?;
    if let Ok(mut list) = DETACHED.lock() {
        list.retain(|h| !h.is_finished());
        list.push(handle);
    }
    Ok(())
}

/// Waits until every thread started by [`spawn`] has ended, or `timeout` has passed; says whether they all
/// ended.
pub fn wait(timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        let running = DETACHED.lock().map_or(0, |mut list| {
            list.retain(|h| !h.is_finished());
            list.len()
        });
        if running == 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::bounded;

    #[test]
    fn waits_for_a_detached_thread_and_gives_up_at_the_timeout() {
        let (go, gate) = bounded::<()>(0);
        spawn("mavboard-test-detached", move || {
            let _ = gate.recv();
        })
        .expect("thread");
        assert!(!wait(Duration::from_millis(30)), "the thread is still blocked");
        go.send(()).expect("the thread takes it");
        assert!(wait(Duration::from_secs(10)), "the thread has ended");
    }
}
