//! `mavboard package triton PACKAGE -o REPO`: a Triton Inference Server model repository for a package;
//! `mavboard package quantize PACKAGE -o OUT`: an int8 copy of a package;
//! `mavboard package export-hf PACKAGE -o OUT`: a mav-lm package as a Hugging Face folder.

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
    /// An int8 copy of a package, by ONNX Runtime's own quantization tooling (dynamic: weights int8 with one
    /// scale per output channel, activations quantized at run time): OUT gets model.onnx, mav.json (the
    /// name with `-int8`, no inspection graph), the tokenizer and the model card. Needs the importer's
    /// Python packages: ./packaging/dev.sh import-deps.
    Quantize(QuantizeArgs),
    /// A Hugging Face model folder (config.json, model.safetensors, tokenizer.json +
    /// tokenizer_config.json, the vocabulary as a SentencePiece tokenizer.model for llama.cpp's converter,
    /// a greedy generation config, the package's mav.json) that transformers loads; `mavboard import hf`
    /// reads it back. A model trained with mavtrain's `"mlp": "swiglu"` (or imported from a Llama folder)
    /// is written as `LlamaForCausalLM`; one in mavtrain's GELU block (the shipped mav-tiny) as an exact
    /// `GPTNeoXForCausalLM`. Needs the importer's Python packages: ./packaging/dev.sh import-deps.
    ExportHf(ExportHfArgs),
}

/// Arguments of `mavboard package export-hf`.
#[derive(Debug, clap::Args)]
struct ExportHfArgs {
    /// The mav-lm package folder.
    package: PathBuf,
    /// The folder to write (must not exist or be empty).
    #[arg(short, long)]
    out: PathBuf,
    /// The Python interpreter with numpy and onnx (default: $MAVBOARD_PYTHON, .venv-import, python3).
    #[arg(long)]
    python: Option<PathBuf>,
}

/// Arguments of `mavboard package quantize`.
#[derive(Debug, clap::Args)]
struct QuantizeArgs {
    /// The model package folder (model.onnx, mav.json).
    package: PathBuf,
    /// The package folder to write (must not exist or be empty).
    #[arg(short, long)]
    out: PathBuf,
    /// The Python interpreter with onnx and onnxruntime (default: $MAVBOARD_PYTHON, .venv-import, python3).
    #[arg(long)]
    python: Option<PathBuf>,
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
    let a = match args.what {
        What::Triton(a) => a,
        What::Quantize(q) => return quantize(q),
        What::ExportHf(e) => {
            let c = mavboard::model::hf::export_hf(&e.package, &e.out, e.python.as_deref())?;
            outln!(
                "wrote {}: {}, {} layers, width {}, {} heads, MLP {}, vocabulary {}",
                e.out.display(),
                c.architectures.join(", "),
                c.num_hidden_layers,
                c.hidden_size,
                c.num_attention_heads,
                c.intermediate_size,
                c.vocab_size
            );
            return Ok(());
        }
    };
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
    outln!("wrote {} (config.pbtxt, 1/model.onnx)", dir.display());
    outln!("serve it: tritonserver --model-repository {}", a.out.display());
    Ok(())
}

/// Runs `mavboard package quantize`, then opens the copy like any package and values a position with it.
fn quantize(a: QuantizeArgs) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let report = mavboard::model::quantize::quantize_package(&a.package, &a.out, a.python.as_deref())?;
    let ops: Vec<String> = report.int8_ops.iter().map(|(k, v)| format!("{v} {k}")).collect();
    outln!(
        "quantized {} → {} ({}): model.onnx {:.1} MB → {:.1} MB ({:.2}×), {} in {:.1} s",
        a.package.display(),
        a.out.display(),
        report.name,
        report.bytes_in as f64 / 1e6,
        report.bytes_out as f64 / 1e6,
        report.bytes_in as f64 / report.bytes_out.max(1) as f64,
        ops.join(", "),
        start.elapsed().as_secs_f64()
    );
    let package = ModelPackage::open(&a.out)?;
    let game = package.manifest.games.first().copied().unwrap_or(mavboard::game::GameKind::Chess);
    if !matches!(game, mavboard::game::GameKind::Chess | mavboard::game::GameKind::Chess960) {
        outln!(
            "wrote the package {}; a {} model: check it with `mavboard analyse --game {} --model {}`",
            a.out.display(),
            game.name(),
            game.name(),
            a.out.display()
        );
        return Ok(());
    }
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        mavboard::inference::load_evaluator(&a.out, &Default::default())
            .with_context(|| format!("the int8 package {} does not open", a.out.display()))?;
    let result = eval
        .evaluate(&[mavboard::inference::evaluator::EvalRequest::values(
            mavboard::game::chess::ChessState::startpos(),
        )])
        .pop()
        .context("no result for the start position")?
        .context("the int8 package could not value the start position")?;
    outln!("start position: {} moves valued; wrote the package {}", result.moves.len(), a.out.display());
    Ok(())
}
