//! `mav.json`: the self-description of a model package, written by the training pipeline's export.

use serde::{Deserialize, Serialize};

use crate::game::GameKind;

/// The model formats mavboard runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ModelFormat {
    /// The paper's decoder-only text model (decoder-with-past ONNX layout, KV cache).
    #[serde(rename = "mav-lm")]
    MavLm,
    /// mavboard's one-pass bidirectional model: `%state` tokens + candidate moves → value-bucket logits and a
    /// best-action logit per move.
    #[serde(rename = "mav-encoder")]
    MavEncoder,
    /// The action-value model of Ruoss et al.: 77 FEN tokens + one action token → 128 bucket logits.
    #[serde(rename = "action-value")]
    ActionValue,
    /// The state-value model of Ruoss et al.: 77 FEN tokens → 128 bucket logits for the player to move; a
    /// move is valued by its successor.
    #[serde(rename = "state-value")]
    StateValue,
    /// The behavioural-cloning model of Ruoss et al.: 77 FEN tokens → log-probabilities over the 1968
    /// actions (mav.json `av_action_vocab_size`), renormalised over the legal moves; a policy, no values
    /// (`num_buckets` 0).
    #[serde(rename = "behavioral-cloning")]
    BehavioralCloning,
    /// A Leela Chess Zero network (Leela's, Maia's), imported by `mavboard import lc0`: lc0's 112 input
    /// planes from the position and its history → 1858 policy logits, win/draw/loss and moves left; a move
    /// is valued by the win/draw/loss of the position after it (mav.json `lc0`).
    #[serde(rename = "lc0")]
    Lc0,
}

impl ModelFormat {
    /// The name written in mav.json.
    pub fn name(self) -> &'static str {
        match self {
            ModelFormat::MavLm => "mav-lm",
            ModelFormat::MavEncoder => "mav-encoder",
            ModelFormat::ActionValue => "action-value",
            ModelFormat::StateValue => "state-value",
            ModelFormat::BehavioralCloning => "behavioral-cloning",
            ModelFormat::Lc0 => "lc0",
        }
    }
}

/// How a model was trained (for the model info panel and the model card).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// The data set.
    #[serde(default)]
    pub data: String,
    /// Training examples.
    #[serde(default)]
    pub examples: u64,
    /// Training tokens.
    #[serde(default)]
    pub tokens: u64,
    /// Optimiser steps.
    #[serde(default)]
    pub steps: u64,
    /// Wall time in seconds.
    #[serde(default)]
    pub wall_time_s: f64,
    /// Device trained on (cpu, cuda).
    #[serde(default)]
    pub device: String,
    /// Machine description.
    #[serde(default)]
    pub machine: String,
}

/// The origin of imported weights: what was converted, from where, and under which licence.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelSource {
    /// Who published the weights and in which work (e.g. the paper).
    pub origin: String,
    /// Where the published files come from.
    #[serde(default)]
    pub url: String,
    /// The checkpoint folder that was converted.
    #[serde(default)]
    pub checkpoint: String,
    /// The checkpoint's training step, when it has one.
    #[serde(default)]
    pub step: Option<u64>,
    /// Which parameter set was read (`params` or `params_ema`).
    #[serde(default)]
    pub params: String,
    /// The weights' licence as their authors state it.
    #[serde(default)]
    pub license: String,
}

/// The wire protocol of a remote model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum RemoteProtocol {
    /// Open Inference Protocol (KServe v2) over HTTP/REST with JSON tensors.
    #[default]
    #[serde(rename = "v2-rest")]
    V2Rest,
    /// Open Inference Protocol over gRPC (not supported by this build: refused at load).
    #[serde(rename = "v2-grpc")]
    V2Grpc,
    /// The OpenAI-compatible completions API (`POST v1/completions`) of an LLM engine (llama.cpp's server,
    /// vLLM): a `mav-lm` package's prompts are sent as token ids and its values read from the log-probabilities
    /// of the continuation.
    #[serde(rename = "openai-completions")]
    OpenAiCompletions,
}

impl RemoteProtocol {
    /// The protocol's name in mav.json.
    pub fn name(self) -> &'static str {
        match self {
            RemoteProtocol::V2Rest => "v2-rest",
            RemoteProtocol::V2Grpc => "v2-grpc",
            RemoteProtocol::OpenAiCompletions => "openai-completions",
        }
    }
}

/// mav.json `remote`: where a package's model is served (Triton, KServe, MLServer…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSpec {
    /// The server's base URL (`http://host:port` or `https://host:port`); the protocol's paths (`v2/...`)
    /// are appended.
    pub endpoint: String,
    /// The model's name on the server.
    pub model: String,
    /// The model's version on the server; `None` lets the server choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The wire protocol.
    #[serde(default)]
    pub protocol: RemoteProtocol,
    /// The name of an environment variable holding a bearer token (sent as `Authorization: Bearer …`).
    /// The token itself is never written in mav.json nor logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The limit on each HTTP call (connection, request and answer), in milliseconds.
    #[serde(default = "default_remote_timeout_ms")]
    pub timeout_ms: u64,
    /// How many inference requests one batch may have in flight at once.
    #[serde(default = "default_remote_in_flight")]
    pub max_in_flight: usize,
    /// `openai-completions` only: how many log-probabilities the server is asked for at each position
    /// (`logprobs`); `None` asks for as many as the package has value buckets. A value the server's limit
    /// allows but below the bucket count leaves the buckets it does not list at probability 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<usize>,
    /// An `https://` endpoint's certificates: a private CA to trust instead of the system's roots, a client
    /// certificate for mutual TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<RemoteTls>,
    /// Lets `token_env`'s token go over plain `http://` to a host that is not this machine (refused
    /// otherwise: a token sent in clear across a network can be read by anyone on the way).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_http: bool,
}

/// mav.json `remote.tls`: PEM files for an `https://` endpoint, each a path relative to the package's folder
/// or absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteTls {
    /// The certificate(s) of a private certificate authority, trusted instead of the system's roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// The client's certificate chain, for a server that requires mutual TLS (with `client_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<String>,
    /// The client certificate's private key (PKCS#8, PKCS#1 or SEC1 PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<String>,
}

fn default_remote_timeout_ms() -> u64 {
    10_000
}

fn default_remote_in_flight() -> usize {
    4
}

/// The parsed `mav.json` of a model package.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The model format.
    pub format: ModelFormat,
    /// Version of the format's layout; this build reads version 1.
    pub format_version: u32,
    /// The model's name (e.g. `mav-enc-tiny`).
    pub name: String,
    /// Games the model was trained on.
    pub games: Vec<GameKind>,
    /// Number of value buckets K.
    pub num_buckets: usize,
    /// Token ids of `<ctrl0>`..`<ctrl{K-1}>` (MAV formats).
    #[serde(default)]
    pub value_token_ids: Vec<u32>,
    /// Padding token id.
    #[serde(default)]
    pub pad_token_id: Option<u32>,
    /// End-of-sequence token id (mav-lm).
    #[serde(default)]
    pub eos_token_id: Option<u32>,
    /// Vocabulary size (the logits width of a mav-lm).
    pub vocab_size: usize,
    /// Longest sequence the model handles, in tokens.
    pub context_length: usize,
    /// Transformer layers (the number of KV pairs of a mav-lm).
    pub num_layers: usize,
    /// Attention heads.
    pub num_heads: usize,
    /// Size of one head.
    pub head_dim: usize,
    /// Model width.
    pub d_model: usize,
    /// Whether internal-search traces were part of training.
    #[serde(default)]
    pub internal_search: bool,
    /// Action-value format: length of the state token sequence (77).
    #[serde(default)]
    pub av_state_length: Option<usize>,
    /// Action-value format: number of action tokens (1968).
    #[serde(default)]
    pub av_action_vocab_size: Option<usize>,
    /// Action-value format: how the 1968 moves are numbered (`sorted`, mavboard's own packages, the
    /// default; `searchless`, the published models of Ruoss et al.).
    #[serde(default)]
    pub av_action_order: crate::mav::searchless::ActionOrder,
    /// A model served by an inference server (Open Inference Protocol): the weights live there and the
    /// package holds no model.onnx. `None` for a local package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSpec>,
    /// Where the weights come from when they were not trained by mavboard's pipeline (an imported
    /// checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ModelSource>,
    /// Parameter count.
    #[serde(default)]
    pub parameters: u64,
    /// Provenance.
    #[serde(default)]
    pub training: TrainingInfo,
    /// Creation date (YYYY-MM-DD).
    #[serde(default)]
    pub created: String,
    /// The `lc0` format's network facts (its input format, heads); absent for every other format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lc0: Option<Lc0Spec>,
}

/// mav.json `lc0`: what an imported lc0 network needs of its evaluator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lc0Spec {
    /// How its 112 input planes are filled.
    pub input_format: crate::lc0::InputFormat,
    /// Whether the network has a win/draw/loss head (else a scalar value, shown as wins and losses).
    pub wdl: bool,
    /// Whether it has a moves-left head (the graph's `mlh` output).
    pub moves_left: bool,
}

/// The `format_version` this build reads.
pub const FORMAT_VERSION: u32 = 1;

/// mav.json `inspection`: the package's inspection graph (the same weights as `model.onnx`, with its
/// attention, residual stream and logit lens as outputs and a per-head scale as an input), written by
/// `python -m mavtrain.inspect_export` for a `mav-encoder`, and by `mavboard import searchless` for an
/// action-value package, whose graph has no `value_logits`/`best_logits` but `logits` [batch, K], a sequence
/// of 79 positions (the zero BOS token, then the 78 inputs) and `lens_logits` [batch, layers, K] read at
/// the action. Optional: packages without it load and run as before; only `inference::inspect`
/// reads it, on demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectionSpec {
    /// The graph's file name in the package folder (`inspect.onnx`).
    pub file: String,
    /// The float input [layers, heads] that scales each head's output (1 unchanged, 0 removed).
    #[serde(default = "default_head_scale")]
    pub head_scale: String,
    /// The output [batch, layers, heads, seq, seq] of attention probabilities.
    #[serde(default = "default_attention")]
    pub attention: String,
    /// The output [batch, layers + 1, seq, d_model]: the residual stream after the embedding and each layer.
    #[serde(default = "default_residual")]
    pub residual: String,
    /// The output [batch, layers, seq, K]: the final norm and value head applied after each layer.
    #[serde(default = "default_lens_logits")]
    pub lens_logits: String,
    /// Where the graph reads its weights when it stores none of its own (ONNX external data pointing into
    /// `model.onnx`); `None` for a graph with its own copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<SharedWeights>,
}

/// mav.json `inspection.weights`: the file an inspection graph reads its weights from, as it was when the
/// graph was written (a changed file would give the graph other weights, so it is refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedWeights {
    /// The file's name in the package folder (`model.onnx`).
    pub file: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its checksum (`super::checksum::weights_checksum`), 16 hex digits.
    pub checksum: String,
}

fn default_head_scale() -> String {
    "head_scale".into()
}

fn default_attention() -> String {
    "attention".into()
}

fn default_residual() -> String {
    "residual".into()
}

fn default_lens_logits() -> String {
    "lens_logits".into()
}

/// The `inspection` entry of the mav.json in `dir`, `None` when the package declares none.
///
/// Read apart from [`Manifest`] (which ignores the entry), so that the inspection graph never changes how
/// a package loads for analysis or search.
pub fn read_inspection(dir: &std::path::Path) -> Result<Option<InspectionSpec>, super::ModelError> {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(default)]
        inspection: Option<InspectionSpec>,
    }
    let path = dir.join("mav.json");
    let text = super::bounded_read::read_text(&path, super::bounded_read::MAX_MANIFEST_BYTES, "mav.json")?;
    let entry: Entry = serde_json::from_str(&text)
        .map_err(|e| super::ModelError::Manifest { path: path.clone(), reason: e.to_string() })?;
    Ok(entry.inspection)
}
