//! Model inspection off the UI thread: one worker thread keeps a package's inspection graph open
//! ([`Inspector`], reopened only when the package changes) and runs the newest request it has; requests
//! that a newer one replaced before they started are dropped unanswered. Inspection never shares the
//! search's sessions: the engine goes on with `model.onnx`.

use std::path::PathBuf;
use std::thread;

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::api::Repaint;
use crate::inference::inspect::{InspectError, Inspection, Inspector};
use crate::inference::onnx::SessionOptions;
use crate::model::ModelPackage;

/// What to run with the package's inspector (one or more passes over one position).
pub type InspectJob = Box<dyn FnOnce(&mut Inspector) -> Result<Vec<Inspection>, InspectError> + Send>;

/// A request to the worker.
pub struct InspectRequest {
    /// Tells the answer apart (the newest request's tag is the one the asker waits for).
    pub tag: u64,
    /// The package folder.
    pub dir: PathBuf,
    /// How to open its graph.
    pub options: SessionOptions,
    /// The passes to run.
    pub job: InspectJob,
}

/// The worker's answer to one request.
#[derive(Debug)]
pub struct InspectAnswer {
    /// The request's tag.
    pub tag: u64,
    /// The job's inspections, in its order, or why there are none.
    pub result: Result<Vec<Inspection>, InspectError>,
}

/// The worker thread has stopped (it panicked); a new [`InspectWorker`] is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the inspection thread has stopped")]
pub struct WorkerGone;

/// The inspection thread and its two channels. Dropping it ends the thread and waits for its current job
/// (one inspection, milliseconds to a few seconds), so that no inspection outlives its owner.
pub struct InspectWorker {
    requests: Option<Sender<InspectRequest>>,
    answers: Receiver<InspectAnswer>,
    thread: Option<thread::JoinHandle<()>>,
}

impl InspectWorker {
    /// Starts the thread; `repaint` is called after each answer.
    pub fn start(repaint: Repaint) -> std::io::Result<InspectWorker> {
        let (requests, request_rx) = unbounded::<InspectRequest>();
        let (answer_tx, answers) = unbounded();
        let thread = thread::Builder::new()
            .name("mavboard-inspect".into())
            .spawn(move || serve(&request_rx, &answer_tx, &repaint))?;
        Ok(InspectWorker { requests: Some(requests), answers, thread: Some(thread) })
    }

    /// Queues a request.
    pub fn send(&self, request: InspectRequest) -> Result<(), WorkerGone> {
        let requests = self.requests.as_ref().ok_or(WorkerGone)?;
        requests.send(request).map_err(|_| WorkerGone)
    }

    /// An answer that has arrived, if any.
    pub fn try_recv(&self) -> Option<InspectAnswer> {
        self.answers.try_recv().ok()
    }
}

impl Drop for InspectWorker {
    fn drop(&mut self) {
        // Closing the request channel ends the thread's loop after its current job.
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for InspectWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queued = self.requests.as_ref().map_or(0, Sender::len);
        f.debug_struct("InspectWorker").field("queued", &queued).finish()
    }
}

/// The thread: the newest request first, the inspector kept open across requests for one package.
fn serve(requests: &Receiver<InspectRequest>, answers: &Sender<InspectAnswer>, repaint: &Repaint) {
    let mut open: Option<(PathBuf, Inspector)> = None;
    while let Ok(mut request) = requests.recv() {
        while let Ok(newer) = requests.try_recv() {
            request = newer;
        }
        if open.as_ref().is_none_or(|(dir, _)| *dir != request.dir) {
            open = None;
            let opened = ModelPackage::open(&request.dir)
                .map_err(InspectError::from)
                .and_then(|p| Inspector::open(&p, &request.options));
            match opened {
                Ok(inspector) => open = Some((request.dir.clone(), inspector)),
                Err(e) => {
                    if answers.send(InspectAnswer { tag: request.tag, result: Err(e) }).is_err() {
                        return;
                    }
                    repaint();
                    continue;
                }
            }
        }
        let Some((_, inspector)) = open.as_mut() else { continue };
        let result = (request.job)(inspector);
        if answers.send(InspectAnswer { tag: request.tag, result }).is_err() {
            return;
        }
        repaint();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use crate::model::package::default_package_dir;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn answer(worker: &InspectWorker) -> InspectAnswer {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(a) = worker.try_recv() {
                return a;
            }
            assert!(Instant::now() < deadline, "no answer");
            thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn inspects_a_position_with_the_shipped_encoder_and_says_why_a_folder_cannot_be() {
        let worker = InspectWorker::start(Arc::new(|| {})).expect("thread");
        let dir = default_package_dir().expect("the shipped model");
        let job: InspectJob = Box::new(|inspector| {
            let ones = inspector.ones();
            Ok(vec![inspector.inspect(&ChessState::startpos(), &ones)?])
        });
        worker.send(InspectRequest { tag: 7, dir, options: SessionOptions::default(), job }).expect("sent");
        let a = answer(&worker);
        assert_eq!(a.tag, 7);
        let passes = a.result.expect("inspected");
        assert_eq!(passes.len(), 1);
        assert_eq!(passes[0].moves.len(), ChessState::startpos().legal_actions().len());

        let missing = std::env::temp_dir().join(format!("mavboard-no-package-{}", std::process::id()));
        let job: InspectJob = Box::new(|_| Ok(Vec::new()));
        let options = SessionOptions::default();
        worker.send(InspectRequest { tag: 8, dir: missing, options, job }).expect("sent");
        let a = answer(&worker);
        assert_eq!(a.tag, 8);
        assert!(a.result.is_err(), "a folder without a package is refused");
    }
}
