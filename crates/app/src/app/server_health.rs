//! The state of a remote package's inference server as the app last heard from it: answering, or failing
//! since a call that went wrong (with the error and the time of the last good answer), so that the status
//! bar and the panels can say why there are no values and *Reconnect* can clear it.
//!
//! Runtime state: the engine glue ([`super::engine_link`]) sets it from the engine's events, the UI reads it.

use std::time::{Duration, SystemTime};

/// How the model server is doing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ServerHealth {
    /// The model is local, or none is loaded: there is no server.
    #[default]
    NoServer,
    /// The server answers.
    Answering {
        /// When it last gave values (`None`: the package loaded, no evaluation came back yet).
        last_good: Option<SystemTime>,
    },
    /// A call failed and none succeeded since.
    Unreachable {
        /// The failure, as the remote backend named it (connection refused, timeout, HTTP status, …).
        error: String,
        /// When the first failure of this run of failures came.
        since: SystemTime,
        /// When the server last gave values, if it ever did.
        last_good: Option<SystemTime>,
    },
}

impl ServerHealth {
    /// The state right after a package loaded: answering (the load talked to it) when it is remote.
    pub fn loaded(remote: bool) -> ServerHealth {
        if remote { ServerHealth::Answering { last_good: None } } else { ServerHealth::NoServer }
    }

    /// Values came back at `now`: the server answers (nothing changes for a local model).
    pub fn answered(&mut self, now: SystemTime) {
        if *self != ServerHealth::NoServer {
            *self = ServerHealth::Answering { last_good: Some(now) };
        }
    }

    /// A call to the server failed at `now` with `error`. The first failure's time is kept while the
    /// failures go on; the error shown is the newest.
    pub fn failed(&mut self, error: impl Into<String>, now: SystemTime) {
        let error = error.into();
        *self = match self {
            ServerHealth::NoServer => return,
            ServerHealth::Answering { last_good } => {
                ServerHealth::Unreachable { error, since: now, last_good: *last_good }
            }
            ServerHealth::Unreachable { since, last_good, .. } => {
                ServerHealth::Unreachable { error, since: *since, last_good: *last_good }
            }
        };
    }

    /// Whether the last call failed.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, ServerHealth::Unreachable { .. })
    }

    /// The last good answer in words, relative to `now`: `last good answer 12 s ago`, or that there was
    /// none.
    pub fn last_good_text(&self, now: SystemTime) -> String {
        let last = match self {
            ServerHealth::NoServer => None,
            ServerHealth::Answering { last_good } | ServerHealth::Unreachable { last_good, .. } => *last_good,
        };
        match last {
            Some(t) => format!("last good answer {} ago", ago(now.duration_since(t).unwrap_or_default())),
            None => "no good answer yet".to_owned(),
        }
    }
}

/// A duration in the coarsest unit that keeps it readable: `850 ms`, `12 s`, `3 min`, `2 h`.
fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        1..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        _ => format!("{} h", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_model_has_no_server_state() {
        let mut h = ServerHealth::loaded(false);
        h.failed("connection refused", SystemTime::now());
        h.answered(SystemTime::now());
        assert_eq!(h, ServerHealth::NoServer);
        assert_eq!(h.last_good_text(SystemTime::now()), "no good answer yet");
    }

    #[test]
    fn failures_keep_the_first_time_and_the_last_good_answer_until_values_come_back() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut h = ServerHealth::loaded(true);
        assert!(!h.is_unreachable());
        h.answered(t0);
        h.failed("connection refused by http://x", t0 + Duration::from_secs(5));
        h.failed("did not answer within 500 ms", t0 + Duration::from_secs(9));
        assert_eq!(
            h,
            ServerHealth::Unreachable {
                error: "did not answer within 500 ms".into(),
                since: t0 + Duration::from_secs(5),
                last_good: Some(t0),
            }
        );
        assert_eq!(h.last_good_text(t0 + Duration::from_secs(12)), "last good answer 12 s ago");
        h.answered(t0 + Duration::from_secs(300));
        assert_eq!(h, ServerHealth::Answering { last_good: Some(t0 + Duration::from_secs(300)) });
        assert_eq!(h.last_good_text(t0 + Duration::from_secs(600)), "last good answer 5 min ago");
    }
}
