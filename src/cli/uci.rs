//! `mavboard uci`: mavboard as a UCI chess engine on stdin/stdout, for GUIs and tournament managers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mavboard::engine::{EngineConfig, EvaluatorBox, EvaluatorFactory, FactoryError};
use mavboard::inference::device::SessionThreads;
use mavboard::inference::material::MaterialEvaluator;
use mavboard::inference::onnx::session::SessionOptions;
use mavboard::inference::thread_plan::ThreadPlan;
use mavboard::model::ModelPackage;
use mavboard::uci_server::{BuiltModel, FactoryBuilder, ModelChoice, NoModelSet, serve};

/// Arguments of `mavboard uci`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model package folder (the GUI can change it with the `ModelPath` option) [default: the shipped
    /// model, as for `analyse`, `annotate` and the app].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Search with a material-counting mock evaluator instead of a model (for testing GUIs and pipelines).
    #[arg(long, conflicts_with = "model")]
    mock: bool,
    /// The ONNX Runtime library to load (default: search the usual places).
    #[arg(long)]
    ort_lib: Option<PathBuf>,
}

/// One evaluator for the model package at `path`.
fn load_model(path: &Path, options: &SessionOptions) -> Result<EvaluatorBox, FactoryError> {
    mavboard::inference::load_evaluator(path, options).map(|m| m.evaluator).map_err(Into::into)
}

fn builder(mock: bool, ort_lib: Option<PathBuf>) -> FactoryBuilder {
    Box::new(move |choice: &ModelChoice| -> Result<BuiltModel, NoModelSet> {
        if mock {
            let factory: EvaluatorFactory =
                Arc::new(|w| Ok(Box::new(MaterialEvaluator::new(w as u64)) as EvaluatorBox));
            return Ok(BuiltModel { factory, workers: choice.threads.max(1) });
        }
        let Some(path) = choice.model.clone() else {
            return Err(NoModelSet);
        };
        // `Threads` as workers of one session thread each (one session with them all for a large model); a
        // remote package's workers each keep one batch out at the server.
        let remote = ModelPackage::open(&path).is_ok_and(|p| p.manifest.remote.is_some());
        let plan = if remote {
            ThreadPlan { workers: choice.threads.max(1), threads: SessionThreads { intra_op: 1 } }
        } else {
            ThreadPlan::for_package(choice.device, choice.threads.max(1), &path)
        };
        let options =
            SessionOptions { ort_lib: ort_lib.clone(), device: choice.device, threads: plan.threads };
        Ok(BuiltModel {
            factory: Arc::new(move |_worker| load_model(&path, &options)),
            workers: plan.workers,
        })
    })
}

/// Runs `mavboard uci` until the GUI sends `quit` or closes stdin.
pub fn run(args: Args) -> anyhow::Result<()> {
    let builder = builder(args.mock, args.ort_lib);
    // Like `analyse`, `annotate` and the app: without --model, the shipped model (when it is installed).
    let initial = match args.model {
        Some(m) => Some(m),
        None if !args.mock => mavboard::model::package::default_package_dir().ok(),
        None => None,
    };
    // The model given on the command line is the ModelPath option's starting value.
    let builder: FactoryBuilder = Box::new(move |choice: &ModelChoice| {
        let mut choice = choice.clone();
        if choice.model.is_none() {
            choice.model.clone_from(&initial);
        }
        builder(&choice)
    });
    serve(std::io::stdin(), std::io::stdout().lock(), builder, EngineConfig::default())?;
    Ok(())
}
