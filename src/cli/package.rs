//! `mavboard package triton PACKAGE -o REPO`: a Triton Inference Server model repository for a package.

use std::path::PathBuf;

use anyhow::Context;
use mavboard::inference::onnx::session::graph_signature;
use mavboard::inference::onnx::{OnnxSession, SessionOptions};
use mavboard::inference::remote::triton::write_repository;
use mavboard::model::ModelPackage;

/// Arguments of `mavboard package`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to write.
    #[command(subcommand)]
    what: What,
}

/// The kinds of package output.
#[derive(Debug, clap::Subcommand)]
enum What {
    /// A Triton model repository: REPO/NAME/config.pbtxt (ONNX Runtime backend, the graph's exact inputs and
    /// outputs, dynamic batching) and REPO/NAME/1/model.onnx. Serve it with
    /// `tritonserver --model-repository REPO` and point a remote package (mav.json `remote`) at it.
    Triton(TritonArgs),
}

/// Arguments of `mavboard package triton`.
#[derive(Debug, clap::Args)]
struct TritonArgs {
    /// The model package folder (model.onnx, mav.json).
    package: PathBuf,
    /// The repository folder to write into.
    #[arg(short, long)]
    out: PathBuf,
    /// Triton's max_batch_size (rows per batch).
    #[arg(long, default_value_t = 64)]
    max_batch: usize,
    /// ONNX Runtime library to use (the graph is opened to read its inputs and outputs).
    #[arg(long)]
    ort_lib: Option<PathBuf>,
}

/// Runs `mavboard package`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let What::Triton(a) = args.what;
    anyhow::ensure!(a.max_batch >= 1, "--max-batch must be at least 1");
    let package = ModelPackage::open(&a.package)?;
    anyhow::ensure!(
        package.manifest.remote.is_none(),
        "{} is a remote package: it has no model.onnx to put into a repository",
        a.package.display()
    );
    let options = SessionOptions { ort_lib: a.ort_lib.clone(), ..SessionOptions::default() };
    let session = OnnxSession::open(&package, &options)
        .with_context(|| format!("opening {}", package.onnx_path().display()))?;
    let sig = graph_signature(&session.session);
    let dir = write_repository(&package, &sig, &a.out, a.max_batch)?;
    println!("wrote {} (config.pbtxt, 1/model.onnx)", dir.display());
    println!("serve it: tritonserver --model-repository {}", a.out.display());
    Ok(())
}
