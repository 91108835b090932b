//! Internal search off the caller's thread: one background thread per run opens the model, runs the
//! explicit minimax (and the model's own trace when the package writes one) and sends the report back.
//!
//! A run owns its evaluator (opened for the run, dropped after), so it never competes with the analysis
//! engine's inference workers for their sessions; the minimax itself makes 1 + b + … + b^d model calls.

use std::path::PathBuf;

use crossbeam_channel::{Receiver, bounded};

use super::api::{EvaluatorFactory, Repaint};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::complete::{TraceModel, open_trace_model_for};
use crate::inference::onnx::SessionOptions;
use crate::mav::state::MavState;
use crate::search::internal::{InternalConfig, InternalError, InternalReport, run_internal};

/// Why an internal-search run gave no report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InternalRunError {
    /// The run's model could not be opened.
    #[error("could not open the model: {0}")]
    Model(String),
    /// The search itself failed.
    #[error(transparent)]
    Search(#[from] InternalError),
    /// The search panicked (the message of the panic).
    #[error("the internal search crashed: {0}")]
    Panicked(String),
    /// The run's thread could not be started.
    #[error("could not start the internal-search thread: {0}")]
    Thread(String),
    /// The run's thread ended without sending its result.
    #[error("the internal-search thread ended without a result")]
    Vanished,
}

/// Where a run over `S` positions (chess unless said otherwise) gets its model.
pub enum InternalSource<S: GameState = ChessState> {
    /// A package folder: a trace writer when its mav.json says it was trained for internal search.
    Package {
        /// The folder.
        dir: PathBuf,
        /// How to open its session.
        options: SessionOptions,
    },
    /// Evaluators from a factory (the engine's own, e.g. a mock in tests): values only.
    Factory {
        /// Builds the evaluator (called with worker number 0).
        factory: EvaluatorFactory<S>,
        /// Why this model writes no trace.
        why: String,
    },
}

impl<S: GameState> Clone for InternalSource<S> {
    fn clone(&self) -> Self {
        match self {
            InternalSource::Package { dir, options } => {
                InternalSource::Package { dir: dir.clone(), options: options.clone() }
            }
            InternalSource::Factory { factory, why } => {
                InternalSource::Factory { factory: factory.clone(), why: why.clone() }
            }
        }
    }
}

impl<S: GameState> std::fmt::Debug for InternalSource<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InternalSource::Package { dir, .. } => f.debug_struct("Package").field("dir", dir).finish(),
            InternalSource::Factory { why, .. } => f.debug_struct("Factory").field("why", why).finish(),
        }
    }
}

/// A run in progress; its report (or why it failed) arrives once.
#[derive(Debug)]
pub struct InternalRun {
    rx: Receiver<Result<InternalReport, InternalRunError>>,
}

impl InternalRun {
    /// Starts a run from `root` on a new thread; `repaint` is called when its result is ready.
    pub fn start<S: MavState>(
        source: InternalSource<S>,
        root: S,
        config: InternalConfig,
        repaint: Repaint,
    ) -> Result<InternalRun, InternalRunError> {
        let (tx, rx) = bounded(1);
        super::detached::spawn("mavboard-internal-search", move || {
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_once(&source, root, &config)))
                    .unwrap_or_else(|p| {
                        let why = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_else(|| "unknown panic".to_owned());
                        Err(InternalRunError::Panicked(why))
                    });
            let _ = tx.send(outcome);
            repaint();
        })
        .map_err(|e| InternalRunError::Thread(e.to_string()))?;
        Ok(InternalRun { rx })
    }

    /// The result, once it has arrived (`None` while the run goes on). A run whose thread vanished
    /// reports an error.
    pub fn try_result(&self) -> Option<Result<InternalReport, InternalRunError>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(crossbeam_channel::TryRecvError::Empty) => None,
            Err(crossbeam_channel::TryRecvError::Disconnected) => Some(Err(InternalRunError::Vanished)),
        }
    }
}

fn run_once<S: MavState>(
    source: &InternalSource<S>,
    root: S,
    config: &InternalConfig,
) -> Result<InternalReport, InternalRunError> {
    let mut model = match source {
        InternalSource::Package { dir, options } => {
            open_trace_model_for::<S>(dir, options, root.kind())
                .map_err(|e| InternalRunError::Model(e.to_string()))?
                .0
        }
        InternalSource::Factory { factory, why } => TraceModel::ValuesOnly(
            factory(0).map_err(|e| InternalRunError::Model(e.to_string()))?,
            why.clone(),
        ),
    };
    Ok(run_internal(&mut model, root, config)?)
}
