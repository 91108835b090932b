//! `mavboard import`: turn published checkpoints into model packages.

use std::path::PathBuf;

use anyhow::Context;
use mavboard::game::GameKind;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{EvalRequest, Scoring};
use mavboard::inference::load_evaluator;
use mavboard::lc0::InputFormat;
use mavboard::model::hf::{HfImportOptions, import_hf};
use mavboard::model::import::{ImportOptions, SearchlessKind, import_searchless};
use mavboard::model::lc0_import::{Lc0ImportOptions, import_lc0};

/// Arguments of `mavboard import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ImportCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ImportCommand {
    /// A searchless-chess checkpoint (Ruoss et al. 2024, as unpacked by the authors'
    /// checkpoints/download.sh): action-value (9M, 136M, 270M) → an `action-value` package, state-value
    /// (9M_state_value) → a `state-value` package, behavioural cloning (9M_behavioral_cloning) → a
    /// `behavioral-cloning` package (a policy, no values). Needs the importer's Python packages:
    /// ./packaging/dev.sh import-deps.
    Searchless {
        /// The checkpoint folder (e.g. checkpoints/9M), one of its step folders, or a `params` folder.
        checkpoint: PathBuf,
        /// The package folder to write (must not exist or be empty).
        #[arg(short, long)]
        out: PathBuf,
        /// The training step to read (default: the newest in the folder).
        #[arg(long)]
        step: Option<u64>,
        /// Read the exponential moving average of the parameters (`params_ema`) instead of `params`.
        #[arg(long)]
        ema: bool,
        /// Attention heads, for shapes that are not the published ones (the weights do not record it).
        #[arg(long)]
        heads: Option<usize>,
        /// The kind of predictor, where the checkpoint does not say it: a head of 1968 actions is behavioural
        /// cloning; of the two value predictors (same shapes), a folder named like 9M_state_value is
        /// state-value, any other action-value.
        #[arg(long, value_enum)]
        kind: Option<SearchlessKind>,
        /// The package name (default: searchless-9M, -136M, -270M, or the folder name).
        #[arg(long)]
        name: Option<String>,
        /// The Python interpreter with orbax, jax and onnx (default: $MAVBOARD_PYTHON, .venv-import, python3).
        #[arg(long)]
        python: Option<PathBuf>,
    },
    /// A Hugging Face model folder (`LlamaForCausalLM` or `GPTNeoXForCausalLM` as transformers saves it: config.json,
    /// model.safetensors, tokenizer.json with mavboard's MAV vocabulary) → a `mav-lm` package; the way back
    /// is `mavboard package export-hf`. Needs numpy and onnx (./packaging/dev.sh import-deps).
    Hf {
        /// The model folder.
        folder: PathBuf,
        /// The package folder to write (must not exist or be empty).
        #[arg(short, long)]
        out: PathBuf,
        /// The package name (default: the folder's mav.json name, else the folder's name).
        #[arg(long)]
        name: Option<String>,
        /// The games it plays, comma-separated (default: the folder's mav.json, else every game the
        /// vocabulary has a header token for).
        #[arg(long, value_delimiter = ',', value_parser = parse_game)]
        games: Option<Vec<GameKind>>,
        /// Value buckets (default: the folder's mav.json, else 64).
        #[arg(long)]
        buckets: Option<usize>,
        /// The model was trained to write internal-search traces (default: the folder's mav.json, else no).
        #[arg(long)]
        internal_search: Option<bool>,
        /// The Python interpreter with numpy and onnx (default: $MAVBOARD_PYTHON, .venv-import, python3).
        #[arg(long)]
        python: Option<PathBuf>,
    },
    /// A Leela Chess Zero network (`.pb.gz`: Leela's and Maia's residual networks, with or without
    /// squeeze-excitation, classical or convolution policy, scalar or WDL value, moves-left head; Leela's
    /// attention-body transformers with a dense position encoding; or an ONNX file in lc0's interface, as
    /// `lc0 leela2onnx` writes it) → an `lc0` package: an ONNX graph and mav.json written here, no Python.
    Lc0 {
        /// The weights file.
        net: PathBuf,
        /// The package folder to write (must not exist or be empty).
        #[arg(short, long)]
        out: PathBuf,
        /// The package name (default: the file's name without .pb.gz).
        #[arg(long)]
        name: Option<String>,
        /// Who made the network, for the model card (e.g. "CSSLab, Maia 1900 (McIlroy-Young et al. 2020)").
        #[arg(long)]
        origin: Option<String>,
        /// The network's licence (default: what the file says, if anything).
        #[arg(long)]
        license: Option<String>,
        /// How the network's 112 input planes are filled, for an ONNX file, which does not record it (a
        /// .pb.gz says it itself): classical, castling-plane, canonical, canonical-hectoplies,
        /// canonical-hectoplies-armageddon, canonical-v2 or canonical-v2-armageddon.
        #[arg(long, value_parser = parse_input_format)]
        input_format: Option<InputFormat>,
        /// The policy head of a multi-head network (lc0's names: vanilla, optimistic, soft, opponent).
        #[arg(long, default_value = mavboard::lc0::weights::DEFAULT_POLICY_HEAD)]
        policy_head: String,
        /// The value head of a multi-head network (lc0's names: winner, q, st).
        #[arg(long, default_value = mavboard::lc0::weights::DEFAULT_VALUE_HEAD)]
        value_head: String,
    },
}

fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    InputFormat::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = InputFormat::ALL.iter().map(|f| f.name()).collect();
        format!("'{s}' is not an lc0 input format: {}", names.join(", "))
    })
}

fn parse_game(s: &str) -> Result<GameKind, String> {
    [GameKind::Chess, GameKind::Chess960, GameKind::ConnectFour, GameKind::Hex]
        .into_iter()
        .find(|g| g.name() == s)
        .ok_or_else(|| format!("'{s}' is not a game: chess, chess960, connect_four or hex"))
}

/// Runs `mavboard import`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        ImportCommand::Lc0 { net, out, name, origin, license, input_format, policy_head, value_head } => {
            let defaults = policy_head == mavboard::lc0::weights::DEFAULT_POLICY_HEAD
                && value_head == mavboard::lc0::weights::DEFAULT_VALUE_HEAD;
            let options = Lc0ImportOptions {
                net,
                out,
                name,
                origin,
                license,
                created: mavboard::league::record::utc_date().replace('.', "-"),
                input_format,
                heads: (!defaults).then_some((policy_head, value_head)),
            };
            run_lc0(&options)
        }
        ImportCommand::Searchless { checkpoint, out, step, ema, heads, kind, name, python } => {
            let options = ImportOptions {
                checkpoint,
                out,
                step,
                ema,
                heads,
                kind,
                name,
                python,
                // mav.json dates are YYYY-MM-DD; the league's helper writes PGN's YYYY.MM.DD.
                created: mavboard::league::record::utc_date().replace('.', "-"),
            };
            run_searchless(&options)
        }
        ImportCommand::Hf { folder, out, name, games, buckets, internal_search, python } => {
            let options = HfImportOptions {
                folder,
                out,
                name,
                games,
                buckets,
                internal_search,
                python,
                created: mavboard::league::record::utc_date().replace('.', "-"),
            };
            run_hf(&options)
        }
    }
}

/// `import lc0`: converts the network, says what it is, and checks the package (a caveat, such as a
/// provider that cannot run it, is said, not an error).
fn run_lc0(options: &Lc0ImportOptions) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let imported = import_lc0(options)?;
    outln!(
        "converted {}: {}, {} parameters in {:.1} s",
        options.net.display(),
        imported.description,
        imported.parameters,
        start.elapsed().as_secs_f64()
    );
    match &imported.caveat {
        // The package is written; that it does not run on this build's provider is said, not an error.
        Some(caveat) => {
            eprintln!("note: {caveat}");
            if let Err(e) = check_package(&options.out) {
                eprintln!("note: not run here: {e:#}");
            }
        }
        None => check_package(&options.out)?,
    }
    outln!("wrote the package {}", options.out.display());
    Ok(())
}

/// `import searchless`: converts the checkpoint, says what it holds, and checks the package.
fn run_searchless(options: &ImportOptions) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let cfg = import_searchless(options)?;
    let head = if cfg.kind.format().capabilities().values {
        format!("{} buckets", cfg.buckets)
    } else {
        format!("a policy over {} actions", cfg.buckets)
    };
    outln!(
        "converted {} (step {}, {}): {} model, {} layers, width {}, {} heads, {head}, {} parameters{} in {:.1} s",
        cfg.checkpoint,
        cfg.step.map(|s| s.to_string()).unwrap_or_else(|| "?".into()),
        cfg.params,
        cfg.kind.format().name(),
        cfg.layers,
        cfg.width,
        cfg.heads,
        cfg.parameters,
        cfg.published.map(|p| format!(" (the published {p} shape)")).unwrap_or_default(),
        start.elapsed().as_secs_f64(),
    );
    check_package(&options.out)?;
    outln!("wrote the package {}", options.out.display());
    Ok(())
}

/// `import hf`: converts the Hugging Face folder, says what it holds, and checks the package (chess
/// packages only: the check values the chess start position).
fn run_hf(options: &HfImportOptions) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let (cfg, manifest) = import_hf(options)?;
    let gqa = if cfg.kv_heads != cfg.heads {
        format!(" ({} key/value heads, repeated)", cfg.kv_heads)
    } else {
        String::new()
    };
    outln!(
        "converted {} ({}): {} layers, width {}, {} heads{gqa}, vocabulary {}, {} parameters, \
         games {}, {} buckets in {:.1} s",
        options.folder.display(),
        cfg.class_name(),
        cfg.layers,
        cfg.width,
        cfg.heads,
        cfg.vocab,
        cfg.parameters,
        manifest.games.iter().map(|g| g.name()).collect::<Vec<_>>().join(", "),
        manifest.num_buckets,
        start.elapsed().as_secs_f64(),
    );
    if manifest.games.contains(&GameKind::Chess) {
        check_package(&options.out)?;
    }
    outln!("wrote the package {}", options.out.display());
    Ok(())
}

/// Opens the new package like any other and values the start position, so a broken conversion shows now.
fn check_package(dir: &std::path::Path) -> anyhow::Result<()> {
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        load_evaluator(dir, &Default::default())
            .with_context(|| format!("the converted package {} does not open", dir.display()))?;
    let state = ChessState::startpos();
    let result = eval
        .evaluate(&[EvalRequest::values(state)])
        .pop()
        .context("no result for the start position")?
        .context("the converted package could not value the start position")?;
    let scores = result.ranking_scores(Scoring::Mean);
    let mut order: Vec<usize> = (0..result.moves.len()).collect();
    order.sort_by(|&a, &b| scores[b].unwrap_or(0.0).total_cmp(&scores[a].unwrap_or(0.0)));
    let best: Vec<String> = order
        .iter()
        .take(3)
        .map(|&i| format!("{} {:.3}", result.moves[i].text, scores[i].unwrap_or(f64::NAN)))
        .collect();
    let by = if result.has_values() { "best by mean value" } else { "most likely by the policy" };
    outln!("start position, {by}: {}", best.join(", "));
    Ok(())
}
