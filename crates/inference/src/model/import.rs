//! Importing the published searchless-chess checkpoints (Ruoss et al. 2024) as `action-value`, `state-value`
//! and `behavioral-cloning` packages.
//!
//! The checkpoints are orbax folders, which only orbax reads reliably, so the conversion to ONNX is a
//! Python step (`training/searchless/import_searchless.py`, built into this binary and run with the
//! importer's Python environment, see [`find_python`]). It recognises the configuration from the
//! parameter shapes (the kind of predictor from the head and the folder's name, see [`SearchlessKind`]) and
//! writes `model.onnx` and, for action-value, `inspect.onnx` (the inspection graph, which reads its weights
//! from model.onnx: `inference::inspect`); this module writes `mav.json` and the model card
//! around it, in a temporary folder renamed into place only when everything is written.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::manifest::{FORMAT_VERSION, Manifest, ModelFormat, ModelSource, TrainingInfo};
use super::python_step::StepOutcome;
use super::staging::{StagingError, io};
use crate::game::GameKind;
use crate::mav::searchless::{ActionOrder, STATE_LEN};

/// The conversion script, written to a temporary file and run by Python.
const SCRIPT: &str = include_str!("../../../../training/searchless/import_searchless.py");

/// Where the published checkpoints come from.
pub const SEARCHLESS_URL: &str = "https://github.com/google-deepmind/searchless_chess";

/// The weights' licence as the authors state it (their README).
pub const SEARCHLESS_WEIGHTS_LICENSE: &str = "CC-BY-4.0 (the authors: \"The model weights are licensed under \
     Creative Commons Attribution 4.0 (CC-BY)\"); their code is Apache-2.0";

/// The command that installs the importer's Python packages.
pub const INSTALL_HINT: &str = "./packaging/dev.sh import-deps (or: python3 -m venv .venv-import && \
     .venv-import/bin/pip install -r training/searchless/requirements.txt)";

/// Why a checkpoint could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No Python interpreter could be started.
    #[error("no Python to run the importer ({tried}); install its packages with {INSTALL_HINT}")]
    NoPython {
        /// The interpreters tried.
        tried: String,
    },
    /// The checkpoint is not a searchless action-value checkpoint (the script's explanation).
    #[error("{checkpoint}: {reason}", checkpoint = .checkpoint.display())]
    Checkpoint {
        /// The checkpoint folder.
        checkpoint: PathBuf,
        /// What was found and what was expected.
        reason: String,
    },
    /// The Python step failed in another way (its last lines of output).
    #[error("the conversion script failed ({status}): {stderr}")]
    Script {
        /// The exit status.
        status: String,
        /// The end of its standard error.
        stderr: String,
    },
    /// The output folder is taken, or a file could not be read or written.
    #[error(transparent)]
    Files(#[from] StagingError),
}

/// Which of the authors' predictors a checkpoint holds (their `policy`: the same transformer, other inputs
/// and targets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
pub enum SearchlessKind {
    /// Action-value, P(return bucket | state, action): the 9M, 136M and 270M checkpoints.
    #[default]
    #[serde(rename = "av")]
    #[value(name = "av")]
    ActionValue,
    /// State-value, P(return bucket | state): the 9M_state_value checkpoint.
    #[serde(rename = "sv")]
    #[value(name = "sv")]
    StateValue,
    /// Behavioural cloning, P(action | state): the 9M_behavioral_cloning checkpoint (a head of 1968
    /// actions, which the importer recognises by itself).
    #[serde(rename = "bc")]
    #[value(name = "bc")]
    BehavioralCloning,
}

impl SearchlessKind {
    /// The importer script's name for it (`--kind`).
    pub fn arg(self) -> &'static str {
        match self {
            SearchlessKind::ActionValue => "av",
            SearchlessKind::StateValue => "sv",
            SearchlessKind::BehavioralCloning => "bc",
        }
    }

    /// The package format it becomes.
    pub fn format(self) -> ModelFormat {
        match self {
            SearchlessKind::ActionValue => ModelFormat::ActionValue,
            SearchlessKind::StateValue => ModelFormat::StateValue,
            SearchlessKind::BehavioralCloning => ModelFormat::BehavioralCloning,
        }
    }
}

/// What to import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The checkpoint folder (`checkpoints/9M`), a step folder, or a `params` folder.
    pub checkpoint: PathBuf,
    /// The package folder to write.
    pub out: PathBuf,
    /// The step to read (default: the newest).
    pub step: Option<u64>,
    /// Read `params_ema` instead of `params`.
    pub ema: bool,
    /// The head count, for configurations that are not the published ones.
    pub heads: Option<usize>,
    /// The kind of predictor, where the folder's name does not say it (default: read from the name, else
    /// action-value).
    pub kind: Option<SearchlessKind>,
    /// The package name (default: `searchless-` and the configuration or the folder name).
    pub name: Option<String>,
    /// The Python interpreter (default: [`find_python`]).
    pub python: Option<PathBuf>,
    /// The creation date written in mav.json (YYYY-MM-DD).
    pub created: String,
}

/// The configuration the script found.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CheckpointConfig {
    /// Transformer layers.
    pub layers: usize,
    /// Model width.
    pub width: usize,
    /// Attention heads.
    pub heads: usize,
    /// The head's outputs: return buckets (128), or for behavioural cloning the 1968 actions.
    pub buckets: usize,
    /// Token vocabulary (the 1968 actions).
    pub vocab: usize,
    /// Positions the graph reads: the zero start token and the inputs (79 for action-value, 78 for
    /// state-value and behavioural cloning).
    pub positions: usize,
    /// The published model this shape is (`9M`, `136M`, `270M`), if any.
    pub published: Option<String>,
    /// Parameter count.
    pub parameters: u64,
    /// The step read.
    pub step: Option<u64>,
    /// `params` or `params_ema`.
    pub params: String,
    /// The checkpoint folder, absolute.
    pub checkpoint: String,
    /// The kind of predictor found.
    #[serde(default)]
    pub kind: SearchlessKind,
}

impl CheckpointConfig {
    /// The graph's input tokens: the 77 state tokens, and the action for action-value.
    pub fn inputs(&self) -> usize {
        match self.kind {
            SearchlessKind::ActionValue => STATE_LEN + 1,
            SearchlessKind::StateValue | SearchlessKind::BehavioralCloning => STATE_LEN,
        }
    }
}

pub use super::python_step::find_python;

/// What a converter's Python step reported (its JSON line, read as `T`), or the error it ends in: input
/// it refused is named against `input` (the checkpoint, folder or package given).
pub(super) fn step_report<T: serde::de::DeserializeOwned>(
    outcome: Result<StepOutcome, (PathBuf, std::io::Error)>,
    input: &Path,
) -> Result<T, ImportError> {
    let line = match outcome
        .map_err(|(path, e)| ImportError::Files(StagingError::Io { path, reason: e.to_string() }))?
    {
        StepOutcome::Done(line) => line,
        StepOutcome::Refused(reason) => {
            return Err(ImportError::Checkpoint { checkpoint: input.to_path_buf(), reason });
        }
        StepOutcome::Failed { status, stderr } => return Err(ImportError::Script { status, stderr }),
        StepOutcome::NoPython { tried } => return Err(ImportError::NoPython { tried }),
    };
    serde_json::from_str(&line).map_err(|e| ImportError::Script {
        status: "0".into(),
        stderr: format!("its report could not be read ({e}): {line}"),
    })
}

/// Converts the checkpoint into a package at `options.out`; returns the configuration found.
pub fn import_searchless(options: &ImportOptions) -> Result<CheckpointConfig, ImportError> {
    let out = &options.out;
    super::staging::write_staged(out, |tmp| convert_into(options, tmp))
}

fn convert_into(options: &ImportOptions, dir: &Path) -> Result<CheckpointConfig, ImportError> {
    let onnx = dir.join("model.onnx");
    let mut args: Vec<std::ffi::OsString> = vec![options.checkpoint.clone().into(), onnx.into()];
    if let Some(s) = options.step {
        args.extend(["--step".into(), s.to_string().into()]);
    }
    if options.ema {
        args.push("--ema".into());
    }
    if let Some(h) = options.heads {
        args.extend(["--heads".into(), h.to_string().into()]);
    }
    if let Some(k) = options.kind {
        args.extend(["--kind".into(), k.arg().into()]);
    }
    args.extend(["--inspect".into(), dir.join(INSPECT_FILE).into()]);
    let outcome =
        super::python_step::run(dir, "import_searchless.py", SCRIPT, &args, options.python.as_deref());
    let cfg: CheckpointConfig = step_report(outcome, &options.checkpoint)?;
    let manifest = manifest_for(&cfg, options);
    let path = dir.join("mav.json");
    let json_err = |e: serde_json::Error| {
        ImportError::Files(StagingError::Io { path: path.clone(), reason: e.to_string() })
    };
    let mut value = serde_json::to_value(&manifest).map_err(json_err)?;
    if let Some(spec) = inspection_spec(dir)? {
        value["inspection"] = serde_json::to_value(spec).map_err(json_err)?;
    }
    let text = serde_json::to_string_pretty(&value).map_err(json_err)?;
    std::fs::write(&path, text + "\n").map_err(io(&path))?;
    let card = dir.join("MODEL_CARD.md");
    std::fs::write(&card, model_card(&manifest, &cfg)).map_err(io(&card))?;
    Ok(cfg)
}

/// The inspection graph's file name in an imported package.
const INSPECT_FILE: &str = "inspect.onnx";

/// The mav.json `inspection` entry for the inspection graph the script wrote into `dir` (`None` when it
/// wrote none): the graph reads its weights from model.onnx, or from model.onnx.data for a model saved
/// with external data, whose size and checksum are recorded.
fn inspection_spec(dir: &Path) -> Result<Option<super::manifest::InspectionSpec>, ImportError> {
    if !dir.join(INSPECT_FILE).is_file() {
        return Ok(None);
    }
    let data = dir.join("model.onnx.data");
    let weights = if data.is_file() { data } else { dir.join("model.onnx") };
    let bytes = std::fs::metadata(&weights).map_err(io(&weights))?.len();
    let checksum = super::checksum::weights_checksum(&weights).map_err(io(&weights))?;
    let file = weights.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Some(super::manifest::InspectionSpec {
        file: INSPECT_FILE.into(),
        head_scale: "head_scale".into(),
        attention: "attention".into(),
        residual: "residual".into(),
        lens_logits: "lens_logits".into(),
        weights: Some(super::manifest::SharedWeights { file, bytes, checksum }),
    }))
}

/// The mav.json of an imported checkpoint.
pub fn manifest_for(cfg: &CheckpointConfig, options: &ImportOptions) -> Manifest {
    let folder =
        Path::new(&cfg.checkpoint).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = options
        .name
        .clone()
        .unwrap_or_else(|| format!("searchless-{}", cfg.published.clone().unwrap_or_else(|| folder.clone())));
    let format = cfg.kind.format();
    Manifest {
        format,
        format_version: FORMAT_VERSION,
        name,
        games: vec![GameKind::Chess],
        // A policy has no value buckets: its head's outputs are the actions.
        num_buckets: if format.capabilities().values { cfg.buckets } else { 0 },
        value_token_ids: Vec::new(),
        pad_token_id: None,
        eos_token_id: None,
        vocab_size: cfg.vocab,
        context_length: cfg.inputs(),
        num_layers: cfg.layers,
        num_heads: cfg.heads,
        head_dim: cfg.width / cfg.heads.max(1),
        d_model: cfg.width,
        internal_search: false,
        av_state_length: Some(STATE_LEN),
        // The action vocabulary is the action-value input's and the behavioural-cloning output's; a
        // state-value model has no action.
        av_action_vocab_size: (format != ModelFormat::StateValue).then_some(cfg.vocab),
        av_action_order: ActionOrder::Searchless,
        remote: None,
        source: Some(ModelSource {
            origin: "Ruoss et al. 2024, Grandmaster-Level Chess Without Search (Google DeepMind)".into(),
            url: SEARCHLESS_URL.into(),
            checkpoint: folder,
            step: cfg.step,
            params: cfg.params.clone(),
            license: SEARCHLESS_WEIGHTS_LICENSE.into(),
        }),
        parameters: cfg.parameters,
        training: TrainingInfo {
            data: "ChessBench (Stockfish 16 action-values of Lichess positions), by the authors".into(),
            ..TrainingInfo::default()
        },
        created: options.created.clone(),
        lc0: None,
    }
}

fn model_card(m: &Manifest, cfg: &CheckpointConfig) -> String {
    let shape = cfg.published.as_deref().map(|p| format!(" (the published {p} shape)")).unwrap_or_default();
    let (what, tokens, input, output, figures) = match cfg.kind {
        SearchlessKind::ActionValue => (
            "an action-value model, P(return bucket | state, action)",
            "a zero start token, the 77 FEN tokens, the action",
            "the authors' tokenization (77 characters per FEN, their alphabet) and their action ids \
             (`av_action_order: searchless`, 1968 moves)",
            "for the side that plays the move",
            "The published models solve 85.5 % (9M), 92.1 % (136M) and 93.5 % (270M) of the authors' puzzle \
             set (their Table 1).",
        ),
        SearchlessKind::BehavioralCloning => (
            "a behavioural-cloning model, P(action | state): a policy without values — the \
             `behavioral-cloning` format gives each legal move its probability (the log-probabilities of \
             the legal actions renormalised, as the authors' BCEngine does), and no win probability, so \
             max and mean scoring, search values and review do not apply to it",
            "a zero start token, the 77 FEN tokens",
            "the authors' tokenization (77 characters per FEN, their alphabet)",
            "",
            "In the authors' ablation at 9M (their Table 2) the behavioural-cloning policy solves 65.7 % of \
             the puzzles, against 83.3 % for action-value and 77.5 % for state-value.",
        ),
        SearchlessKind::StateValue => (
            "a state-value model, P(return bucket | state): the `state-value` format values each legal move \
             by the position after it (one model call for all of them, the distribution flipped to the \
             mover's side, as the authors' StateValueEngine does; positions the rules end are valued from \
             their result)",
            "a zero start token, the 77 FEN tokens",
            "the authors' tokenization (77 characters per FEN, their alphabet)",
            "for the side to move in the position valued",
            "In the authors' ablation at 9M (their Table 2) the state-value policy solves 77.5 % of the \
             puzzles, against 83.3 % for action-value and 65.7 % for behavioural cloning.",
        ),
    };
    format!(
        "# {name}\n\n\
         Imported by `mavboard import searchless` from the checkpoint `{ckpt}` (step {step}, `{params}`): \
         {what}.\n\n\
         - Origin: {origin}, {url}.\n\
         - Licence of the weights: {license}.\n\
         - Architecture: {layers} layers, width {width}, {heads} heads{shape}, SwiGLU MLP of width {ffn}, \
         pre-LayerNorm with a final LayerNorm, bidirectional attention over {positions} tokens ({tokens}), \
         learned positions; {params_n} parameters.\n\
         - Input: {input}.\n\
         - Output: {output}.\n\
         - Chess only (no Chess960: the authors' tokenizer has no Shredder castling letters).\n\n\
         {figures} Check this package on their `puzzles.csv` (their `data/download.sh`): \
         `mavboard eval --puzzles puzzles.csv --limit 10000 --model DIR`.\n",
        name = m.name,
        ckpt = cfg.checkpoint,
        step = cfg.step.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into()),
        params = cfg.params,
        origin = m.source.as_ref().map(|s| s.origin.as_str()).unwrap_or(""),
        url = SEARCHLESS_URL,
        license = SEARCHLESS_WEIGHTS_LICENSE,
        layers = cfg.layers,
        width = cfg.width,
        heads = cfg.heads,
        ffn = 4 * cfg.width,
        positions = cfg.inputs() + 1,
        params_n = cfg.parameters,
        output = if output.is_empty() {
            format!("log-probabilities over the {} actions (their action ids)", cfg.buckets)
        } else {
            format!(
                "log-probabilities over {k} uniform win-probability buckets (centres (i + 0.5)/{k}) {output}",
                k = cfg.buckets
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> CheckpointConfig {
        CheckpointConfig {
            layers: 8,
            width: 256,
            heads: 8,
            buckets: 128,
            vocab: 1968,
            positions: 79,
            published: Some("9M".into()),
            parameters: 9_000_000,
            step: Some(6_400_000),
            params: "params".into(),
            checkpoint: "/data/checkpoints/9M".into(),
            kind: SearchlessKind::ActionValue,
        }
    }

    fn options() -> ImportOptions {
        ImportOptions {
            checkpoint: "checkpoints/9M".into(),
            out: "out".into(),
            step: None,
            ema: false,
            heads: None,
            name: None,
            python: None,
            created: "2026-11-25".into(),
            kind: None,
        }
    }

    #[test]
    fn manifest_describes_the_published_layout() {
        let m = manifest_for(&cfg(), &options());
        assert_eq!(m.name, "searchless-9M");
        assert_eq!(m.format, ModelFormat::ActionValue);
        assert_eq!(m.av_action_order, ActionOrder::Searchless);
        assert_eq!((m.num_buckets, m.head_dim, m.av_state_length), (128, 32, Some(77)));
        let json = serde_json::to_string(&m).expect("serialises");
        let back: Manifest = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, m);
        assert!(json.contains("\"av_action_order\":\"searchless\""));
        assert!(json.contains("CC-BY-4.0"));
        assert!(model_card(&m, &cfg()).contains("the published 9M shape"));
    }

    #[test]
    fn a_state_value_checkpoint_becomes_a_state_value_package() {
        let sv = CheckpointConfig { kind: SearchlessKind::StateValue, positions: 78, ..cfg() };
        let m = manifest_for(&sv, &options());
        assert_eq!(m.format, ModelFormat::StateValue);
        assert_eq!((m.context_length, m.av_state_length, m.av_action_vocab_size), (77, Some(77), None));
        let card = model_card(&m, &sv);
        assert!(card.contains("state-value") && card.contains("over 78 tokens"), "{card}");
        assert!(!card.contains("the action"), "{card}");
    }

    #[test]
    fn a_behavioural_cloning_checkpoint_becomes_a_policy_package() {
        let bc = CheckpointConfig {
            kind: SearchlessKind::BehavioralCloning,
            positions: 78,
            buckets: 1968,
            ..cfg()
        };
        let m = manifest_for(&bc, &options());
        assert_eq!(m.format, ModelFormat::BehavioralCloning);
        assert_eq!((m.num_buckets, m.av_state_length, m.av_action_vocab_size), (0, Some(77), Some(1968)));
        let card = model_card(&m, &bc);
        assert!(card.contains("no win probability") && card.contains("over the 1968 actions"), "{card}");
        assert!(!card.contains("buckets"), "{card}");
    }

    #[test]
    fn refuses_a_full_output_folder_and_a_missing_python() {
        let dir = std::env::temp_dir().join(format!("mavboard-import-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("full")).expect("mkdir");
        std::fs::write(dir.join("full").join("x"), "x").expect("write");
        let mut o = options();
        o.out = dir.join("full");
        assert!(matches!(import_searchless(&o), Err(ImportError::Files(StagingError::OutputExists(_)))));
        o.out = dir.join("new");
        o.python = Some(dir.join("no-such-python"));
        let err = import_searchless(&o).expect_err("no python");
        assert!(err.to_string().contains("import-deps"), "{err}");
        assert!(!o.out.exists(), "a failed import leaves nothing behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
