//! A pool of worker threads, each owning one resource built by a factory.
//!
//! Typical resources are expensive and not shareable: a Stockfish process, an ONNX session. Each worker
//! builds its own in its own thread (so the resource need not be `Send`), then takes jobs from a shared
//! queue and sends back results tagged with the index the job was given when submitted. A job that panics
//! is reported as [`JobError::Panicked`]; the worker then rebuilds its resource (it may have been left
//! half-updated) and carries on, so one bad job never takes the pool down.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};

/// Why a pool could not be started.
#[derive(Debug, thiserror::Error)]
pub enum PoolError<E> {
    /// A worker's factory failed to build its resource.
    #[error("worker {worker} could not start: {source}")]
    Factory {
        /// The worker's number, from 0.
        worker: usize,
        /// The factory's error.
        source: E,
    },
    /// A worker's factory panicked.
    #[error("worker {worker} panicked while starting: {message}")]
    FactoryPanicked {
        /// The worker's number, from 0.
        worker: usize,
        /// The panic message.
        message: String,
    },
    /// The operating system refused to start a thread.
    #[error("could not start worker thread {worker}: {source}")]
    Spawn {
        /// The worker's number, from 0.
        worker: usize,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A pool needs at least one worker.
    #[error("a worker pool needs at least one worker (0 were asked for)")]
    NoWorkers,
}

/// Why one job produced no result.
#[derive(Debug, thiserror::Error)]
pub enum JobError<E> {
    /// The job function returned an error.
    #[error("{0}")]
    Failed(E),
    /// The job function panicked; the message is the panic payload if it was a string.
    #[error("job panicked: {0}")]
    Panicked(String),
}

/// The outcome of one job, tagged with the index [`Pool::submit`] returned for it.
#[derive(Debug)]
pub struct Done<R, E> {
    /// The job's index (0 for the first job submitted to this pool, then 1, 2, …).
    pub index: usize,
    /// The job's result.
    pub result: Result<R, JobError<E>>,
}

/// N worker threads, each owning a resource of type `S`, running jobs `J` into results `R`.
pub struct Pool<J, R, E> {
    jobs: Option<Sender<(usize, J)>>,
    /// Kept to discard queued jobs on drop, so dropping a busy pool does not wait for all of them.
    queue: Receiver<(usize, J)>,
    results: Receiver<Done<R, E>>,
    handles: Vec<JoinHandle<()>>,
    next_index: usize,
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

impl<J: Send + 'static, R: Send + 'static, E: Send + 'static> Pool<J, R, E> {
    /// Starts `workers` threads named `name-0`, `name-1`, …. Each calls `factory(worker_number)` in its own
    /// thread to build its resource; this waits until all have done so and fails with the first error
    /// (then the workers already started are shut down). Afterwards each worker runs `work(&mut resource,
    /// job)` for every job it takes.
    pub fn new<S, F, W>(name: &str, workers: usize, factory: F, work: W) -> Result<Self, PoolError<E>>
    where
        S: 'static,
        F: Fn(usize) -> Result<S, E> + Send + Sync + 'static,
        W: Fn(&mut S, J) -> Result<R, E> + Send + Sync + 'static,
    {
        if workers == 0 {
            return Err(PoolError::NoWorkers);
        }
        let (job_tx, job_rx) = unbounded::<(usize, J)>();
        let (result_tx, result_rx) = unbounded::<Done<R, E>>();
        let (ready_tx, ready_rx) = unbounded::<(usize, Result<(), PoolError<E>>)>();
        let factory = Arc::new(factory);
        let work = Arc::new(work);
        let mut pool = Pool {
            jobs: Some(job_tx),
            queue: job_rx.clone(),
            results: result_rx,
            handles: Vec::new(),
            next_index: 0,
        };
        for worker in 0..workers {
            let (job_rx, result_tx, ready_tx) = (job_rx.clone(), result_tx.clone(), ready_tx.clone());
            let (factory, work) = (Arc::clone(&factory), Arc::clone(&work));
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{worker}"))
                .spawn(move || worker_loop(worker, &*factory, &*work, &job_rx, &result_tx, &ready_tx));
            match spawned {
                Ok(handle) => pool.handles.push(handle),
                Err(source) => {
                    pool.shutdown();
                    return Err(PoolError::Spawn { worker, source });
                }
            }
        }
        drop(ready_tx);
        let mut first_error = None;
        for _ in 0..workers {
            match ready_rx.recv() {
                Ok((_, Ok(()))) => {}
                Ok((_, Err(e))) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => break,
            }
        }
        if let Some(e) = first_error {
            pool.shutdown();
            return Err(e);
        }
        Ok(pool)
    }

    /// Queues a job and returns its index (0, 1, 2, … in submission order).
    pub fn submit(&mut self, job: J) -> usize {
        let index = self.next_index;
        self.next_index += 1;
        if let Some(jobs) = &self.jobs {
            // Sending only fails when every worker has exited; `recv` then reports the pool as drained.
            let _ = jobs.send((index, job));
        }
        index
    }

    /// Waits for the next finished job (in completion order, not submission order). `None` once every
    /// worker has exited and all results have been taken — which only happens if every worker lost its
    /// resource, as workers otherwise live until the pool is dropped.
    pub fn recv(&self) -> Option<Done<R, E>> {
        self.results.recv().ok()
    }

    /// The channel of finished jobs, for waiting on it together with other channels (`select!`). Taking a
    /// result from it is the same as [`Pool::recv`].
    pub fn results(&self) -> &Receiver<Done<R, E>> {
        &self.results
    }

    /// Runs all `jobs` and returns their results in submission order, whatever order they finished in.
    /// Jobs whose worker vanished (every worker lost its resource) are reported as panicked.
    pub fn run_all(&mut self, jobs: impl IntoIterator<Item = J>) -> Vec<Result<R, JobError<E>>> {
        let first = self.next_index;
        let count = jobs.into_iter().map(|job| self.submit(job)).count();
        let mut slots: Vec<Option<Result<R, JobError<E>>>> = (0..count).map(|_| None).collect();
        let mut remaining = count;
        while remaining > 0 {
            let Some(done) = self.recv() else { break };
            if let Some(slot) = done.index.checked_sub(first).and_then(|i| slots.get_mut(i)) {
                *slot = Some(done.result);
                remaining -= 1;
            }
        }
        slots
            .into_iter()
            .map(|slot| {
                slot.unwrap_or_else(|| Err(JobError::Panicked("every worker of the pool exited".into())))
            })
            .collect()
    }

    /// The number of worker threads still running.
    pub fn live_workers(&self) -> usize {
        self.handles.iter().filter(|h| !h.is_finished()).count()
    }

    fn shutdown(&mut self) {
        self.jobs = None;
        while self.queue.try_recv().is_ok() {}
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

impl<J, R, E> Drop for Pool<J, R, E> {
    fn drop(&mut self) {
        // Queued jobs are discarded; each worker finishes the job it is running, then exits.
        self.jobs = None;
        while self.queue.try_recv().is_ok() {}
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

fn build<S, E>(worker: usize, factory: &dyn Fn(usize) -> Result<S, E>) -> Result<S, PoolError<E>> {
    match catch_unwind(AssertUnwindSafe(|| factory(worker))) {
        Ok(Ok(resource)) => Ok(resource),
        Ok(Err(source)) => Err(PoolError::Factory { worker, source }),
        Err(payload) => Err(PoolError::FactoryPanicked { worker, message: panic_message(&*payload) }),
    }
}

fn worker_loop<S, J, R, E>(
    worker: usize,
    factory: &dyn Fn(usize) -> Result<S, E>,
    work: &dyn Fn(&mut S, J) -> Result<R, E>,
    jobs: &Receiver<(usize, J)>,
    results: &Sender<Done<R, E>>,
    ready: &Sender<(usize, Result<(), PoolError<E>>)>,
) {
    let mut resource = match build(worker, factory) {
        Ok(resource) => {
            let _ = ready.send((worker, Ok(())));
            resource
        }
        Err(e) => {
            let _ = ready.send((worker, Err(e)));
            return;
        }
    };
    while let Ok((index, job)) = jobs.recv() {
        let outcome = catch_unwind(AssertUnwindSafe(|| work(&mut resource, job)));
        let (result, rebuild) = match outcome {
            Ok(Ok(r)) => (Ok(r), false),
            Ok(Err(e)) => (Err(JobError::Failed(e)), false),
            Err(payload) => (Err(JobError::Panicked(panic_message(&*payload))), true),
        };
        if results.send(Done { index, result }).is_err() {
            return;
        }
        if rebuild {
            match build(worker, factory) {
                Ok(fresh) => resource = fresh,
                // Without a resource this worker cannot run jobs; the others go on.
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_tagged_and_in_order_with_run_all() {
        let mut pool: Pool<u64, u64, String> =
            Pool::new("sq", 3, Ok::<usize, String>, |_w, x: u64| Ok(x * x)).expect("pool starts");
        let results = pool.run_all(0..50u64);
        let values: Vec<u64> = results.into_iter().map(|r| r.expect("no job fails")).collect();
        assert_eq!(values, (0..50u64).map(|x| x * x).collect::<Vec<_>>());
        // Indices continue across calls.
        assert_eq!(pool.submit(7), 50);
        let done = pool.recv().expect("a result");
        assert_eq!((done.index, done.result.expect("ok")), (50, 49));
    }

    #[test]
    fn a_panicking_job_is_reported_and_the_pool_keeps_working() {
        let mut pool: Pool<i32, i32, String> = Pool::new(
            "panicky",
            2,
            |_| Ok::<Vec<i32>, String>(Vec::new()),
            |seen: &mut Vec<i32>, x: i32| {
                seen.push(x);
                if x == 3 {
                    panic!("job three exploded");
                }
                if x == 4 {
                    return Err(format!("job {x} failed"));
                }
                Ok(x + 100)
            },
        )
        .expect("pool starts");
        let results = pool.run_all(0..8);
        for (i, r) in results.iter().enumerate() {
            match (i, r) {
                (3, Err(JobError::Panicked(m))) => assert!(m.contains("job three exploded"), "{m}"),
                (4, Err(JobError::Failed(m))) => assert_eq!(m, "job 4 failed"),
                (i, Ok(v)) => assert_eq!(*v, i as i32 + 100),
                (i, other) => panic!("unexpected result for job {i}: {other:?}"),
            }
        }
        assert_eq!(pool.live_workers(), 2);
    }

    #[test]
    fn a_failing_factory_is_reported_with_its_worker() {
        let err = Pool::<u8, u8, String>::new(
            "fails",
            3,
            |w| if w == 1 { Err(format!("no engine for worker {w}")) } else { Ok(()) },
            |_: &mut (), x| Ok(x),
        )
        .err()
        .expect("must fail");
        assert!(
            matches!(&err, PoolError::Factory { worker: 1, source } if source == "no engine for worker 1")
        );
        assert!(Pool::<u8, u8, String>::new("none", 0, |_| Ok(()), |_: &mut (), x| Ok(x)).is_err());
    }
}
