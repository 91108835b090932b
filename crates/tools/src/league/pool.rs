//! Playing a league's games several at a time (cutechess-cli's `-concurrency`). Each worker thread builds
//! its own seat — agents and adjudicator, which hold models and engine processes that are not shared
//! between threads — then takes the next game of the schedule, plays it and hands its record back. The
//! caller's thread hears every start and end and writes every file, so what a league writes does not
//! depend on how many workers played it.
//!
//! A raised stop flag reaches the workers within [`POLL`]; the games in progress are dropped. The first
//! error stops the other workers the same way and is returned once they are done.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::LeagueError;
use crate::solve::stop::StopFlag;

/// How often the caller's thread passes a raised stop flag on to the workers.
pub const POLL: Duration = Duration::from_millis(100);

/// What the caller hears from the pool.
#[derive(Debug)]
pub enum PoolEvent<'a, J, R> {
    /// A worker began this job.
    Started(&'a J),
    /// A job finished with this result.
    Finished(R),
}

/// How a pool ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolEnd {
    /// Whether the stop flag ended it before every job was done.
    pub stopped: bool,
    /// The workers' tallies added up (see [`run_pool`]'s `tally`).
    pub tally: u64,
}

/// What a worker tells the caller's thread.
enum Message<R> {
    Started(usize),
    Finished(R),
    Stopped,
    Failed(LeagueError),
    Tally(u64),
}

/// Runs `jobs` on up to `workers` threads (at least one; never more than there are jobs). Each worker makes
/// its seat with `seat` once, plays jobs with `work` (which returns `None` when the flag it is given stopped
/// the job) and, when no job is left, gives its seat to `tally`. `on` runs on the caller's thread for
/// every event, in the order they happen; an error from it stops the pool like a worker's error.
pub fn run_pool<'a, J, S, R>(
    workers: usize,
    jobs: &'a [J],
    stop: &StopFlag,
    seat: impl Fn(&StopFlag) -> Result<S, LeagueError> + Sync,
    work: impl Fn(&mut S, &J, &StopFlag) -> Result<Option<R>, LeagueError> + Sync,
    tally: impl Fn(S) -> u64 + Sync,
    on: &mut dyn FnMut(PoolEvent<'a, J, R>) -> Result<(), LeagueError>,
) -> Result<PoolEnd, LeagueError>
where
    J: Sync,
    R: Send,
{
    let workers = workers.max(1).min(jobs.len());
    if workers == 0 {
        return Ok(PoolEnd { stopped: false, tally: 0 });
    }
    // The workers watch their own flag: the caller's, passed on, or raised here after an error.
    let halt = StopFlag::new();
    if stop.is_set() {
        halt.set();
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = crossbeam_channel::unbounded::<Message<R>>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (halt, next, seat, work, tally) = (&halt, &next, &seat, &work, &tally);
            scope.spawn(move || worker(jobs, halt, next, seat, work, tally, &tx));
        }
        drop(tx);
        listen(jobs, stop, &halt, &rx, on)
    })
}

/// One worker's life: its seat, then jobs until none is left, the flag is raised or a job fails.
fn worker<J, S, R>(
    jobs: &[J],
    halt: &StopFlag,
    next: &AtomicUsize,
    seat: &impl Fn(&StopFlag) -> Result<S, LeagueError>,
    work: &impl Fn(&mut S, &J, &StopFlag) -> Result<Option<R>, LeagueError>,
    tally: &impl Fn(S) -> u64,
    tx: &Sender<Message<R>>,
) {
    // A send fails only when the caller's thread is gone, which the scope rules out; nothing to do then.
    let mut mine = match seat(halt) {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send(Message::Failed(e));
            return;
        }
    };
    while !halt.is_set() {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else { break };
        let _ = tx.send(Message::Started(i));
        match work(&mut mine, job, halt) {
            Ok(Some(r)) => {
                let _ = tx.send(Message::Finished(r));
            }
            Ok(None) => {
                let _ = tx.send(Message::Stopped);
                break;
            }
            Err(e) => {
                let _ = tx.send(Message::Failed(e));
                break;
            }
        }
    }
    let _ = tx.send(Message::Tally(tally(mine)));
}

/// The caller's side: hands events to `on` until every worker is done, passing the stop flag on.
fn listen<'a, J, R>(
    jobs: &'a [J],
    stop: &StopFlag,
    halt: &StopFlag,
    rx: &Receiver<Message<R>>,
    on: &mut dyn FnMut(PoolEvent<'a, J, R>) -> Result<(), LeagueError>,
) -> Result<PoolEnd, LeagueError> {
    let mut error = None;
    let mut stopped = false;
    let mut finished = 0;
    let mut tally = 0;
    loop {
        if stop.is_set() {
            halt.set();
        }
        let message = match rx.recv_timeout(POLL) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let heard = match message {
            Message::Started(i) => match jobs.get(i) {
                Some(job) if error.is_none() => on(PoolEvent::Started(job)),
                _ => Ok(()),
            },
            Message::Finished(r) => {
                finished += 1;
                if error.is_none() { on(PoolEvent::Finished(r)) } else { Ok(()) }
            }
            Message::Stopped => {
                stopped = true;
                Ok(())
            }
            Message::Failed(e) => Err(e),
            Message::Tally(n) => {
                tally += n;
                Ok(())
            }
        };
        if let Err(e) = heard {
            halt.set();
            error.get_or_insert(e);
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(PoolEnd { stopped: stopped || finished < jobs.len(), tally }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;

    use super::*;

    fn collect(
        workers: usize,
        jobs: &[u32],
        stop: &StopFlag,
        work: impl Fn(&mut u64, &u32, &StopFlag) -> Result<Option<u32>, LeagueError> + Sync,
    ) -> (Result<PoolEnd, LeagueError>, Vec<u32>, usize) {
        let mut done = Vec::new();
        let mut started = 0;
        let end = run_pool(workers, jobs, stop, |_| Ok(0u64), work, |n| n, &mut |e| {
            match e {
                PoolEvent::Started(_) => started += 1,
                PoolEvent::Finished(r) => done.push(r),
            }
            Ok(())
        });
        (end, done, started)
    }

    #[test]
    fn every_job_once_whatever_the_number_of_workers() {
        let jobs: Vec<u32> = (0..25).collect();
        for workers in [1, 2, 4, 40] {
            let threads = Mutex::new(HashSet::new());
            let (end, mut done, started) = collect(workers, &jobs, &StopFlag::new(), |seat, j, _| {
                *seat += 1;
                threads
                    .lock()
                    .map_err(|_| LeagueError::Settings("poisoned".into()))?
                    .insert(std::thread::current().id());
                Ok(Some(j * 10))
            });
            assert_eq!(end.expect("no error"), PoolEnd { stopped: false, tally: 25 }, "{workers} workers");
            done.sort_unstable();
            assert_eq!(done, jobs.iter().map(|j| j * 10).collect::<Vec<_>>());
            assert_eq!(started, 25);
            let used = threads.lock().map(|t| t.len()).unwrap_or(0);
            assert!(used >= 1 && used <= workers.min(25), "{used} threads for {workers} workers");
        }
    }

    #[test]
    fn no_jobs_no_workers() {
        let end = run_pool(
            3,
            &[] as &[u32],
            &StopFlag::new(),
            |_| Ok(()),
            |_, _, _| Ok(Some(())),
            |_| 7,
            &mut |_| Ok(()),
        );
        assert_eq!(end.expect("empty"), PoolEnd { stopped: false, tally: 0 });
    }

    #[test]
    fn a_raised_flag_stops_the_jobs_in_progress_and_keeps_the_finished() {
        let stop = StopFlag::new();
        let jobs: Vec<u32> = (0..10).collect();
        let (end, done, _) = collect(2, &jobs, &stop, |_, j, halt| {
            if *j == 3 {
                stop.set();
            }
            if *j >= 3 {
                // A long job that watches its flag, as a game does between moves.
                while !halt.is_set() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return Ok(None);
            }
            Ok(Some(*j))
        });
        let end = end.expect("a stop is not an error");
        assert!(end.stopped);
        assert!(done.len() < 10 && done.iter().all(|j| *j < 3), "{done:?}");
    }

    #[test]
    fn the_first_error_stops_the_others_and_is_returned() {
        let jobs: Vec<u32> = (0..50).collect();
        let (end, done, _) = collect(2, &jobs, &StopFlag::new(), |_, j, halt| {
            if *j == 4 {
                return Err(LeagueError::Settings("job 4 failed".into()));
            }
            if *j > 4 {
                while !halt.is_set() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return Ok(None);
            }
            Ok(Some(*j))
        });
        let e = end.expect_err("the error comes back");
        assert!(e.to_string().contains("job 4 failed"), "{e}");
        assert!(done.len() <= 5, "{done:?}");
    }

    #[test]
    fn a_seat_that_cannot_be_made_is_an_error() {
        let end = run_pool(
            2,
            &[1u32, 2, 3],
            &StopFlag::new(),
            |_| Err::<(), _>(LeagueError::Settings("no model".into())),
            |_, j, _| Ok(Some(*j)),
            |_| 0,
            &mut |_| Ok(()),
        );
        assert!(end.expect_err("seat fails").to_string().contains("no model"));
    }

    #[test]
    fn an_error_from_the_listener_stops_the_pool() {
        let jobs: Vec<u32> = (0..20).collect();
        let mut heard = 0;
        let end = run_pool(2, &jobs, &StopFlag::new(), |_| Ok(()), |_, j, _| Ok(Some(*j)), |_| 0, &mut |e| {
            if let PoolEvent::Finished(_) = e {
                heard += 1;
                if heard == 2 {
                    return Err(LeagueError::Settings("disk full".into()));
                }
            }
            Ok(())
        });
        assert!(end.expect_err("listener's error").to_string().contains("disk full"));
        assert_eq!(heard, 2, "nothing is handed on after the error");
    }
}
