//! Hugging Face model folders (`LlamaForCausalLM` and `GPTNeoXForCausalLM`, as transformers saves them) both
//! ways: importing one as a
//! `mav-lm` package (a MAV model trained elsewhere in transformers, or one exported here), and writing a
//! package whose graph is a standard architecture as one ([`export_hf`]; the same step as
//! `python -m mavtrain.export_hf` in the training tree).
//!
//! The weights become mavboard's decoder-with-past graph in a Python step
//! (`training/mavtrain/hf_llama.py`, built into this binary, run with the importer's Python environment:
//! numpy and onnx); this module checks the tokenizer (it must be mavboard's MAV vocabulary or a prefix of
//! it, as every `mav-lm` package's), takes the MAV facts no Hugging Face file holds (games, value buckets
//! and their tokens) from the folder's `mav.json` when it has one (an exported package's) or from the
//! vocabulary and the options, and writes the package in a scratch folder renamed into place only when
//! everything is written.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::import::{ImportError, step_report};
use super::manifest::{FORMAT_VERSION, Manifest, ModelFormat, ModelSource, TrainingInfo};
use super::staging::{StagingError, io};
use crate::game::GameKind;
use crate::mav::tokenizer::Tokenizer;
use crate::mav::vocab::value_token;

/// The conversion script, written to a temporary file and run by Python.
const SCRIPT: &str = include_str!("../../../../training/mavtrain/hf_llama.py");
/// The module the script imports to write mavtrain's GELU block as GPT-NeoX, written beside it.
const NEOX_MODULE: &str = include_str!("../../../../training/mavtrain/hf_neox.py");
/// The module's file name (what the script imports).
const NEOX_NAME: &str = "hf_neox.py";

/// Runs the conversion script in `dir` with its module beside it; neither is left there.
fn run_script(
    dir: &Path,
    args: &[std::ffi::OsString],
    python: Option<&Path>,
) -> Result<super::python_step::StepOutcome, (PathBuf, std::io::Error)> {
    let module = dir.join(NEOX_NAME);
    std::fs::write(&module, NEOX_MODULE).map_err(|e| (module.clone(), e))?;
    let outcome = super::python_step::run(dir, "hf_llama.py", SCRIPT, args, python);
    let removed = std::fs::remove_file(&module).map_err(|e| (module.clone(), e));
    let outcome = outcome?;
    removed?;
    Ok(outcome)
}

/// What to import.
#[derive(Debug, Clone)]
pub struct HfImportOptions {
    /// The Hugging Face model folder (config.json, model.safetensors, tokenizer.json).
    pub folder: PathBuf,
    /// The package folder to write.
    pub out: PathBuf,
    /// The package name (default: the folder's mav.json name, else the folder's name).
    pub name: Option<String>,
    /// The games the model plays (default: the folder's mav.json games, else every game whose header token
    /// the vocabulary has).
    pub games: Option<Vec<GameKind>>,
    /// Value buckets (default: the folder's mav.json, else 64 as in the MAV paper).
    pub buckets: Option<usize>,
    /// Whether the model was trained to write internal-search traces (default: the folder's mav.json,
    /// else no).
    pub internal_search: Option<bool>,
    /// The Python interpreter (default: [`super::python_step::find_python`]).
    pub python: Option<PathBuf>,
    /// The creation date written in mav.json (YYYY-MM-DD).
    pub created: String,
}

/// The architecture the script found (its report).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HfConfig {
    /// The architecture.
    #[serde(default)]
    pub family: HfFamily,
    /// Decoder layers.
    pub layers: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (fewer than `heads` for grouped-query attention, written as repeated heads).
    pub kv_heads: usize,
    /// Width of a head.
    pub head_dim: usize,
    /// Model width.
    pub width: usize,
    /// The MLP's hidden width.
    pub intermediate: usize,
    /// Rows of the embedding the graph keeps (the tokenizer's size).
    pub vocab: usize,
    /// `max_position_embeddings`.
    pub context: usize,
    /// Parameter count of the folder's weights.
    pub parameters: u64,
    /// Embedding rows past the tokenizer that were dropped (a padded vocabulary).
    pub dropped_rows: usize,
    /// Whether the output head is the embedding.
    pub tie_embeddings: bool,
}

/// The Hugging Face architectures a `mav-lm` graph computes (the script's `family`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HfFamily {
    /// `LlamaForCausalLM`: RMSNorm, bias-free projections, a gated SiLU MLP.
    #[default]
    Llama,
    /// `GPTNeoXForCausalLM`: LayerNorm, a fused query/key/value projection, biases, a GELU MLP.
    GptNeox,
}

impl HfConfig {
    /// The transformers class of the architecture.
    pub fn class_name(&self) -> &'static str {
        match self.family {
            HfFamily::Llama => "LlamaForCausalLM",
            HfFamily::GptNeox => "GPTNeoXForCausalLM",
        }
    }
}

fn refused(folder: &Path, reason: impl Into<String>) -> ImportError {
    ImportError::Checkpoint { checkpoint: folder.to_path_buf(), reason: reason.into() }
}

/// Converts the folder into a package at `options.out`; returns the architecture found and the manifest
/// written.
pub fn import_hf(options: &HfImportOptions) -> Result<(HfConfig, Manifest), ImportError> {
    let folder = &options.folder;
    if !folder.join("config.json").is_file() {
        return Err(refused(folder, "no config.json: is it a Hugging Face model folder?"));
    }
    let tok_path = folder.join("tokenizer.json");
    let text = std::fs::read_to_string(&tok_path).map_err(|e| {
        refused(
            folder,
            format!("no readable tokenizer.json ({e}); a mav-lm model uses mavboard's MAV vocabulary"),
        )
    })?;
    let parsed: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| refused(folder, format!("tokenizer.json: {e}")))?;
    let tokenizer = Tokenizer::matching(&parsed).map_err(|found| {
        refused(
            folder,
            format!(
                "its tokenizer.json has {found} tokens that are not mavboard's MAV vocabulary ({} tokens) or \
                 a prefix of it; train with the vocabulary `mavboard mav tokenizer` writes",
                Tokenizer::new().vocab_size()
            ),
        )
    })?;
    let theirs = read_their_manifest(folder)?;
    super::staging::write_staged(&options.out, |dir| {
        convert_into(options, dir, &tokenizer, theirs.as_ref(), &text)
    })
}

/// What [`export_hf`] wrote: the folder's config.json (the fields a summary names).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HfExport {
    /// `architectures`: the transformers class written (`LlamaForCausalLM` or `GPTNeoXForCausalLM`).
    #[serde(default)]
    pub architectures: Vec<String>,
    /// `num_hidden_layers`.
    pub num_hidden_layers: usize,
    /// `hidden_size`.
    pub hidden_size: usize,
    /// `num_attention_heads`.
    pub num_attention_heads: usize,
    /// `intermediate_size`.
    pub intermediate_size: usize,
    /// `vocab_size`.
    pub vocab_size: usize,
}

/// Writes the `mav-lm` package at `package` as a Hugging Face folder at `out` (which must not exist or be
/// empty): config.json, model.safetensors, the tokenizer (tokenizer.json + tokenizer_config.json, and as a
/// SentencePiece tokenizer.model for llama.cpp's converter), a greedy generation config and the package's
/// mav.json. A graph in a standard architecture (an imported folder's, or a model trained with mavtrain's
/// swiglu block) goes back to it (`LlamaForCausalLM`, `GPTNeoXForCausalLM`); one in mavtrain's own GELU
/// block (the shipped `mav-tiny`) becomes an exact `GPTNeoXForCausalLM` (`training/mavtrain/hf_neox.py`).
/// Any other graph is refused by name. `python`: the interpreter (default:
/// [`super::python_step::find_python`]).
pub fn export_hf(package: &Path, out: &Path, python: Option<&Path>) -> Result<HfExport, ImportError> {
    if out.exists() && std::fs::read_dir(out).map_err(io(out))?.next().is_some() {
        return Err(StagingError::OutputExists(out.to_path_buf()).into());
    }
    let scratch = std::env::temp_dir().join(format!("mavboard-export-hf-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(io(&scratch))?;
    let args: Vec<std::ffi::OsString> = vec!["export".into(), package.into(), out.into()];
    let outcome = run_script(&scratch, &args, python);
    let _ = std::fs::remove_dir_all(&scratch);
    step_report(outcome, package)
}

/// The folder's mav.json (what [`export_hf`] copies there), if it has one.
fn read_their_manifest(folder: &Path) -> Result<Option<Manifest>, ImportError> {
    let path = folder.join("mav.json");
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| refused(folder, format!("mav.json: {e}")))?;
    if m.format != ModelFormat::MavLm {
        return Err(refused(
            folder,
            format!("its mav.json is a {} package's, not mav-lm's", m.format.name()),
        ));
    }
    Ok(Some(m))
}

fn convert_into(
    options: &HfImportOptions,
    dir: &Path,
    tokenizer: &Tokenizer,
    theirs: Option<&Manifest>,
    tokenizer_text: &str,
) -> Result<(HfConfig, Manifest), ImportError> {
    let folder = &options.folder;
    let args: Vec<std::ffi::OsString> = vec![
        "import".into(),
        folder.clone().into(),
        dir.join("model.onnx").into(),
        "--vocab".into(),
        tokenizer.vocab_size().to_string().into(),
    ];
    let outcome = run_script(dir, &args, options.python.as_deref());
    let cfg: HfConfig = step_report(outcome, folder)?;
    let manifest = manifest_for(&cfg, options, tokenizer, theirs)?;
    let tok = dir.join("tokenizer.json");
    std::fs::write(&tok, tokenizer_text).map_err(io(&tok))?;
    let path = dir.join("mav.json");
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| ImportError::Files(StagingError::Io { path: path.clone(), reason: e.to_string() }))?;
    std::fs::write(&path, text + "\n").map_err(io(&path))?;
    let card = dir.join("MODEL_CARD.md");
    std::fs::write(&card, model_card(&manifest, &cfg, folder)).map_err(io(&card))?;
    Ok((cfg, manifest))
}

/// The mav.json of an imported folder: the architecture from its config, the MAV facts from its own
/// mav.json, the options, or the vocabulary.
fn manifest_for(
    cfg: &HfConfig,
    options: &HfImportOptions,
    tokenizer: &Tokenizer,
    theirs: Option<&Manifest>,
) -> Result<Manifest, ImportError> {
    let folder = &options.folder;
    let folder_name =
        folder.canonicalize().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let games = match (&options.games, theirs) {
        (Some(g), _) => g.clone(),
        (None, Some(m)) => m.games.clone(),
        (None, None) => [GameKind::Chess, GameKind::Chess960, GameKind::ConnectFour, GameKind::Hex]
            .into_iter()
            .filter(|g| tokenizer.id_of(&format!("game={}>", g.name())).is_some())
            .collect(),
    };
    if games.is_empty() {
        return Err(refused(
            folder,
            "its vocabulary has no game's header token; name the games with --games",
        ));
    }
    let buckets = options.buckets.or(theirs.map(|m| m.num_buckets)).unwrap_or(64);
    let value_token_ids = (0..buckets)
        .map(|i| {
            u32::try_from(i).ok().and_then(|i| tokenizer.id_of(&value_token(i))).ok_or_else(|| {
                refused(folder, format!("the vocabulary has no value token for bucket {i} of {buckets}"))
            })
        })
        .collect::<Result<Vec<u32>, _>>()?;
    let name = options
        .name
        .clone()
        .or_else(|| theirs.map(|m| m.name.clone()))
        .or(folder_name.clone())
        .unwrap_or_else(|| "hf-import".into());
    let source = ModelSource {
        origin: theirs
            .and_then(|m| m.source.as_ref().map(|s| s.origin.clone()))
            .unwrap_or_else(|| format!("a Hugging Face transformers model folder ({})", cfg.class_name())),
        url: theirs.and_then(|m| m.source.as_ref().map(|s| s.url.clone())).unwrap_or_default(),
        checkpoint: folder_name.unwrap_or_default(),
        step: theirs.and_then(|m| m.source.as_ref().and_then(|s| s.step)),
        params: "model.safetensors".into(),
        license: theirs
            .and_then(|m| m.source.as_ref().map(|s| s.license.clone()))
            .unwrap_or_else(|| "as the folder's authors state it".into()),
    };
    Ok(Manifest {
        format: ModelFormat::MavLm,
        format_version: FORMAT_VERSION,
        name,
        games,
        num_buckets: buckets,
        value_token_ids,
        pad_token_id: Some(tokenizer.pad_id()),
        eos_token_id: Some(tokenizer.eos_id()),
        vocab_size: cfg.vocab,
        context_length: cfg.context,
        num_layers: cfg.layers,
        num_heads: cfg.heads,
        head_dim: cfg.head_dim,
        d_model: cfg.width,
        internal_search: options.internal_search.or(theirs.map(|m| m.internal_search)).unwrap_or(false),
        av_state_length: None,
        av_action_vocab_size: None,
        av_action_order: Default::default(),
        remote: None,
        source: Some(source),
        parameters: cfg.parameters,
        training: theirs.map(|m| m.training.clone()).unwrap_or_else(|| TrainingInfo {
            data: "not recorded (trained outside mavboard)".into(),
            ..TrainingInfo::default()
        }),
        created: options.created.clone(),
        lc0: None,
    })
}

fn model_card(m: &Manifest, cfg: &HfConfig, folder: &Path) -> String {
    let games = m.games.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ");
    let gqa = if cfg.kv_heads != cfg.heads {
        format!(
            " Its {} key/value heads (grouped-query attention) are written as {} repeated heads: the same \
             arithmetic, a larger cache.",
            cfg.kv_heads, cfg.heads
        )
    } else {
        String::new()
    };
    let dropped = if cfg.dropped_rows > 0 {
        format!(
            " The {} embedding rows past the tokenizer's {} tokens (a padded vocabulary) were dropped.",
            cfg.dropped_rows, cfg.vocab
        )
    } else {
        String::new()
    };
    let (mlp, block) = if cfg.family == HfFamily::GptNeox {
        ("GELU", "LayerNorm, rotary positions, a fused query/key/value projection, biases")
    } else {
        ("gated SiLU", "RMSNorm, rotary positions, bias-free projections")
    };
    format!(
        "# {name}\n\nA `mav-lm` package imported by `mavboard import hf` from the Hugging Face folder `{folder}` \
         (`{class}`).\n\n## Model\n\n- Layers {layers}, heads {heads}, head_dim {hd}, width {width}, MLP \
         {ff} ({mlp}), context {ctx}, vocabulary {vocab}, {params} parameters, embeddings {tie}\n- Games: \
         {games}; value buckets {k}; internal search traces: {search}\n\nThe graph computes the folder's \
         weights as transformers' `{class}` does ({block}), \
         with mavboard's decoder-with-past inputs.{gqa}{dropped} `python -m mavtrain.export_hf --package DIR \
         -o OUT` writes it back as a folder.\n",
        class = cfg.class_name(),
        name = m.name,
        folder = folder.display(),
        layers = cfg.layers,
        heads = cfg.heads,
        hd = cfg.head_dim,
        width = cfg.width,
        ff = cfg.intermediate,
        ctx = cfg.context,
        vocab = cfg.vocab,
        params = cfg.parameters,
        tie = if cfg.tie_embeddings { "tied to the output head" } else { "apart from the output head" },
        k = m.num_buckets,
        search = if m.internal_search { "yes" } else { "no" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch folder for one test, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("mavboard-import-hf-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch folder");
            Scratch(dir)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn options(folder: &Path) -> HfImportOptions {
        HfImportOptions {
            folder: folder.to_path_buf(),
            out: folder.join("out"),
            name: None,
            games: None,
            buckets: None,
            internal_search: None,
            python: None,
            created: "2026-11-27".into(),
        }
    }

    fn cfg() -> HfConfig {
        HfConfig {
            family: HfFamily::Llama,
            layers: 2,
            heads: 4,
            kv_heads: 2,
            head_dim: 8,
            width: 32,
            intermediate: 64,
            vocab: Tokenizer::new().vocab_size(),
            context: 1024,
            parameters: 1000,
            dropped_rows: 0,
            tie_embeddings: true,
        }
    }

    #[test]
    fn without_a_mav_json_the_vocabulary_gives_the_games_and_value_tokens() {
        let dir = Scratch::new("vocab");
        let tok = Tokenizer::new();
        let m = manifest_for(&cfg(), &options(dir.path()), &tok, None).expect("manifest");
        assert_eq!(m.games, vec![GameKind::Chess, GameKind::Chess960, GameKind::ConnectFour, GameKind::Hex]);
        assert_eq!(m.num_buckets, 64);
        assert_eq!(m.value_token_ids[0], tok.id_of("<ctrl0>").expect("ctrl0"));
        assert_eq!(m.value_token_ids[63], tok.id_of("<ctrl63>").expect("ctrl63"));
        assert!(!m.internal_search);
        assert_eq!((m.num_layers, m.num_heads, m.head_dim, m.d_model), (2, 4, 8, 32));
    }

    #[test]
    fn more_buckets_than_value_tokens_is_refused_by_name() {
        let dir = Scratch::new("buckets");
        let mut o = options(dir.path());
        o.buckets = Some(1000);
        let e = manifest_for(&cfg(), &o, &Tokenizer::new(), None).expect_err("refused");
        assert!(e.to_string().contains("no value token for bucket"), "{e}");
    }

    #[test]
    fn a_folder_without_a_config_or_with_another_vocabulary_is_refused() {
        let dir = Scratch::new("refused");
        let e = import_hf(&options(dir.path())).expect_err("no config");
        assert!(e.to_string().contains("config.json"), "{e}");
        std::fs::write(dir.path().join("config.json"), "{}").expect("write");
        std::fs::write(dir.path().join("tokenizer.json"), r#"{"model": {"vocab": {"a": 0, "b": 1}}}"#)
            .expect("write");
        let e = import_hf(&options(dir.path())).expect_err("other vocabulary");
        assert!(e.to_string().contains("not mavboard's MAV vocabulary"), "{e}");
        assert!(!dir.path().join("out").exists());
    }
}
