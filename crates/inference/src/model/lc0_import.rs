//! `mavboard import lc0`: an lc0 weights file (Leela's or Maia's residual networks, Leela's attention-body
//! transformers) to a model package of format `lc0` — an ONNX graph written here from the net's layers, and
//! mav.json — in Rust, no Python.
//!
//! The graph takes `planes`, int64 `[batch, 113]`: the 112 plane masks of [`crate::lc0::planes`] (bit i =
//! square i) and the fifty-move count; it unpacks them into lc0's 112 × 8 × 8 input (the fifty-move plane
//! holds the count, or the count / 100 in the hectoplies formats), runs the residual tower or the attention
//! body and the heads as lc0's CPU backend computes them, and returns `policy` `[batch, 1858]` (raw logits, lc0's move order), `wdl`
//! `[batch, 3]` (win, draw, loss for the side to move; a scalar value net's `q` as `(1+q)/2, 0, (1−q)/2`) and,
//! when the net has the head, `mlh` `[batch, 1]` (moves left).
//!
//! An ONNX file in lc0's interface (lc0's `leela2onnx` output, or a weights file that wraps one) is imported
//! too: [`super::lc0_onnx`] puts the same unpacking in front of the network's own graph.

use std::path::{Path, PathBuf};

use super::lc0_interface::{q_to_wdl, unpack_planes};
use super::lc0_onnx::{Lc0OnnxError, LeelaOnnx};
use super::manifest::{FORMAT_VERSION, Lc0Spec, Manifest, ModelFormat, ModelSource, TrainingInfo};
use super::onnx_write::{Attr, Dim, ElemType, GraphBuilder};
use super::staging::{StagingError, io, write_staged};
use crate::game::GameKind;
use crate::lc0::embedded_onnx::{OnnxNames, embedded_onnx};
use crate::lc0::format::{Activation, ValueFormat};
use crate::lc0::planes::PLANES;
use crate::lc0::policy_index::{POLICY_SIZE, Promotion, conv_gather, index};
use crate::lc0::position_map;
use crate::lc0::weights::{
    AttentionBody, AttentionPolicy, Body, ConvBlock, Dense, DenseHead, EncoderLayer, Ffn, LayerNorm,
    MAX_UNPACKED, Net, PolicyHead,
};
use crate::lc0::{InputFormat, Lc0Error};

pub use super::lc0_interface::{INPUT, INPUT_WIDTH, MLH, POLICY, WDL};

/// Why an lc0 network could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum Lc0ImportError {
    /// The weights file.
    #[error("{path}: {error}", path = .path.display())]
    Net {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: Lc0Error,
    },
    /// The ONNX model (a `leela2onnx` file, or the one a weights file wraps).
    #[error("{path}: {error}", path = .path.display())]
    Onnx {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: Lc0OnnxError,
    },
    /// Heads were asked of an ONNX model, whose heads were chosen when it was exported.
    #[error(
        "{path}: an ONNX model has the heads it was exported with; choose them when exporting \
         (`lc0 leela2onnx --policy-head=… --value-head=…`), not here",
        path = .path.display()
    )]
    HeadsOfOnnx {
        /// The file.
        path: PathBuf,
    },
    /// An ONNX file does not say how its planes are filled, and the import was not told.
    #[error(
        "{path}: an ONNX file does not record its network's input format; say it with --input-format \
         (classical for Maia and the older Leela nets; `lc0 describenet` on the original .pb.gz prints it)",
        path = .path.display()
    )]
    InputFormatNeeded {
        /// The file.
        path: PathBuf,
    },
    /// The input format asked differs from the one the weights file states.
    #[error(
        "{path}: the file says its input format is {file}, not {asked}; drop --input-format",
        path = .path.display(),
        file = .file.name(),
        asked = .asked.name()
    )]
    InputFormatConflict {
        /// The file.
        path: PathBuf,
        /// What the file says.
        file: InputFormat,
        /// What was asked.
        asked: InputFormat,
    },
    /// The output folder is taken, or a file could not be read or written.
    #[error(transparent)]
    Files(#[from] StagingError),
    /// The network is too large for one ONNX file (protobuf's 2 GiB limit).
    #[error("{path}: the network's ONNX graph would be {bytes} bytes, over the 2 GiB an ONNX file can hold", path = .path.display())]
    TooLarge {
        /// The weights file.
        path: PathBuf,
        /// The graph's size.
        bytes: usize,
    },
}

/// What `import lc0` is asked.
#[derive(Debug, Clone)]
pub struct Lc0ImportOptions {
    /// The weights file (`.pb.gz`).
    pub net: PathBuf,
    /// The package folder to write (must not exist or be empty).
    pub out: PathBuf,
    /// The package's name (default: the file's name without `.pb.gz`).
    pub name: Option<String>,
    /// Who made the network, for the model card and mav.json `source` (default: "Leela Chess Zero format").
    pub origin: Option<String>,
    /// The network's licence, as its authors state it.
    pub license: Option<String>,
    /// When the package was made (RFC 3339), for mav.json.
    pub created: String,
    /// How an ONNX file's planes are filled (an ONNX file does not say; a weights file does, and this must
    /// then agree or be `None`).
    pub input_format: Option<InputFormat>,
    /// The policy and value heads to take from a multi-head network (lc0's names: "vanilla", "optimistic",
    /// "soft", "opponent"; "winner", "q", "st"); `None`: lc0's defaults, `vanilla` and `winner`.
    pub heads: Option<(String, String)>,
}

/// What was imported.
#[derive(Debug, Clone)]
pub struct Lc0Imported {
    /// The network's description.
    pub description: String,
    /// Its parameter count.
    pub parameters: u64,
    /// The package's manifest.
    pub manifest: Manifest,
    /// What the user should know about running it (e.g. a precision the CPU provider cannot run).
    pub caveat: Option<String>,
}

/// Reads a network file whole, refusing one larger than any network ([`MAX_UNPACKED`]) before reading it.
fn read_file(path: &Path) -> Result<Vec<u8>, Lc0ImportError> {
    use super::bounded_read::{ReadError, read_bytes};
    read_bytes(path, MAX_UNPACKED).map_err(|e| {
        Lc0ImportError::Files(StagingError::Io {
            path: path.into(),
            reason: match e {
                ReadError::Io(e) => e.to_string(),
                ReadError::TooLarge => format!(
                    "is larger than {} MiB, which no lc0 network or ONNX export is: not a network file",
                    MAX_UNPACKED >> 20
                ),
            },
        })
    })
}

/// Reads a weights file.
pub fn read_net(path: &Path) -> Result<Net, Lc0ImportError> {
    let bytes = read_file(path)?;
    Net::from_gz(&bytes).map_err(|error| Lc0ImportError::Net { path: path.into(), error })
}

/// What a network brings to its package, whichever file it came from.
struct Imported {
    onnx: Vec<u8>,
    caveat: Option<String>,
    description: String,
    parameters: u64,
    input_format: InputFormat,
    wdl: bool,
    moves_left: bool,
    layers: usize,
    heads: usize,
    filters: usize,
    license: String,
}

/// The first bytes of a gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The first bytes of an lc0 `Net` message as lc0 writes it: field 1 (fixed32) holding the magic 0x1c0.
const LC0_MAGIC_FIELD: [u8; 5] = [0x0d, 0xc0, 0x01, 0x00, 0x00];

/// Reads the file of `options.net` — lc0 weights, lc0 weights wrapping an ONNX model, or an ONNX model — and
/// builds the package's graph.
fn convert(options: &Lc0ImportOptions) -> Result<Imported, Lc0ImportError> {
    let path = &options.net;
    let net_error = |error| Lc0ImportError::Net { path: path.clone(), error };
    let onnx_error = |error| Lc0ImportError::Onnx { path: path.clone(), error };
    let bytes = read_file(path)?;
    let onnx_heads = || match options.heads {
        Some(_) => Err(Lc0ImportError::HeadsOfOnnx { path: path.clone() }),
        None => Ok(()),
    };
    let gzipped = bytes.starts_with(&GZIP_MAGIC);
    let unpacked = if gzipped { crate::lc0::weights::gunzip(&bytes).map_err(net_error)? } else { bytes };
    // lc0 writes its fields in order, the magic number first; anything else is tried as an ONNX model (a
    // gzipped one too). A gzipped file that is not ONNX goes on as lc0 weights, whose reader names what is
    // wrong with it.
    if !unpacked.starts_with(&LC0_MAGIC_FIELD) {
        match LeelaOnnx::read(&unpacked, &OnnxNames::default()) {
            Ok(model) => {
                onnx_heads()?;
                let format = options
                    .input_format
                    .ok_or_else(|| Lc0ImportError::InputFormatNeeded { path: path.clone() })?;
                return Ok(from_model(&model, format, String::new()));
            }
            Err(error) if !gzipped => return Err(onnx_error(error)),
            Err(_) => {}
        }
    }
    if let Some(e) = embedded_onnx(&unpacked).map_err(net_error)? {
        onnx_heads()?;
        if let Some(asked) = options.input_format.filter(|f| *f != e.input_format) {
            return Err(Lc0ImportError::InputFormatConflict {
                path: path.clone(),
                file: e.input_format,
                asked,
            });
        }
        return from_onnx(&e.model, &e.names, e.input_format, e.license).map_err(onnx_error);
    }
    let net = match &options.heads {
        Some((policy, value)) => Net::from_proto_heads(&unpacked, policy, value),
        None => Net::from_proto(&unpacked),
    }
    .map_err(net_error)?;
    if let Some(asked) = options.input_format.filter(|f| *f != net.format.input) {
        return Err(Lc0ImportError::InputFormatConflict {
            path: path.clone(),
            file: net.format.input,
            asked,
        });
    }
    let onnx = graph(&net).map_err(net_error)?;
    Ok(Imported {
        onnx,
        caveat: None,
        description: net.describe(),
        parameters: parameter_count(&net),
        input_format: net.format.input,
        wdl: net.format.value == ValueFormat::Wdl,
        moves_left: net.moves_left.is_some(),
        layers: net.layers(),
        heads: match &net.body {
            Body::Residual { .. } => 0,
            Body::Attention(a) => a.heads,
        },
        filters: net.filters(),
        license: net.license.clone(),
    })
}

fn from_onnx(
    bytes: &[u8],
    names: &OnnxNames,
    input_format: InputFormat,
    license: String,
) -> Result<Imported, Lc0OnnxError> {
    Ok(from_model(&LeelaOnnx::read(bytes, names)?, input_format, license))
}

fn from_model(model: &LeelaOnnx<'_>, input_format: InputFormat, license: String) -> Imported {
    Imported {
        onnx: model.wrap(input_format),
        caveat: model.caveat(),
        description: model.describe(),
        parameters: model.parameters,
        input_format,
        wdl: model.has_wdl(),
        moves_left: model.has_moves_left(),
        layers: 0,
        heads: 0,
        filters: 0,
        license,
    }
}

/// Imports the network of `options.net` into the package folder `options.out`.
pub fn import_lc0(options: &Lc0ImportOptions) -> Result<Lc0Imported, Lc0ImportError> {
    let imported = convert(options)?;
    if imported.onnx.len() > i32::MAX as usize {
        return Err(Lc0ImportError::TooLarge { path: options.net.clone(), bytes: imported.onnx.len() });
    }
    let file = options.net.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = options.name.clone().unwrap_or_else(|| {
        file.trim_end_matches(".gz").trim_end_matches(".pb").trim_end_matches(".onnx").to_owned()
    });
    let manifest = manifest(&imported, &name, &file, options);
    let card = model_card(&imported.description, &manifest);
    write_staged(&options.out, |dir| -> Result<(), Lc0ImportError> {
        let write = |leaf: &str, data: &[u8]| {
            let path = dir.join(leaf);
            std::fs::write(&path, data).map_err(io(&path))
        };
        write("model.onnx", &imported.onnx)?;
        let json = serde_json::to_string_pretty(&manifest).unwrap_or_default();
        write("mav.json", json.as_bytes())?;
        write("MODEL_CARD.md", card.as_bytes())?;
        Ok(())
    })?;
    Ok(Lc0Imported {
        description: imported.description,
        parameters: imported.parameters,
        manifest,
        caveat: imported.caveat,
    })
}

fn parameter_count(net: &Net) -> u64 {
    let conv = |c: &ConvBlock| (c.weights.len() + c.biases.len()) as u64;
    let dense = |d: &Dense| (d.weights.len() + d.biases.len()) as u64;
    let head = |h: &DenseHead| conv(&h.conv) + dense(&h.fc1) + dense(&h.fc2);
    let ln = |l: &LayerNorm| (l.gammas.len() + l.betas.len()) as u64;
    let ffn = |f: &Ffn| dense(&f.dense1) + dense(&f.dense2);
    let encoder = |l: &EncoderLayer| {
        let smolgen = l.smolgen.as_ref().map_or(0, |s| {
            s.compress.len() as u64 + dense(&s.dense1) + ln(&s.ln1) + dense(&s.dense2) + ln(&s.ln2)
        });
        dense(&l.q)
            + dense(&l.k)
            + dense(&l.v)
            + dense(&l.out)
            + smolgen
            + ln(&l.ln1)
            + ffn(&l.ffn)
            + ln(&l.ln2)
    };
    let mut n = match &net.body {
        Body::Residual { input, blocks } => {
            let mut n = conv(input);
            for r in blocks {
                n += conv(&r.conv1)
                    + conv(&r.conv2)
                    + r.se.as_ref().map_or(0, |s| dense(&s.fc1) + dense(&s.fc2));
            }
            n
        }
        Body::Attention(a) => {
            let gates = a.gates.as_ref().map_or(0, |g| (g.mult.len() + g.add.len()) as u64);
            let embedding = a.dense.as_ref().map_or(0, |d| {
                dense(&d.position) + ln(&d.embedding_ln) + ffn(&d.embedding_ffn) + ln(&d.embedding_ffn_ln)
            });
            embedding
                + dense(&a.embedding)
                + gates
                + a.encoders.iter().map(encoder).sum::<u64>()
                + a.smolgen_w.len() as u64
        }
    };
    n += match &net.policy {
        PolicyHead::Classical { conv: c, dense: d } => conv(c) + dense(d),
        PolicyHead::Convolution { conv1, conv2 } => conv(conv1) + conv(conv2),
        PolicyHead::Attention(p) => {
            dense(&p.embedding)
                + p.encoders.iter().map(encoder).sum::<u64>()
                + dense(&p.query)
                + dense(&p.key)
                + p.promotion.len() as u64
        }
    };
    n + head(&net.value) + net.moves_left.as_ref().map_or(0, head)
}

fn manifest(net: &Imported, name: &str, file: &str, o: &Lc0ImportOptions) -> Manifest {
    Manifest {
        format: ModelFormat::Lc0,
        format_version: FORMAT_VERSION,
        name: name.to_owned(),
        games: vec![GameKind::Chess, GameKind::Chess960],
        num_buckets: crate::lc0::WDL_BUCKETS as usize,
        value_token_ids: Vec::new(),
        pad_token_id: None,
        eos_token_id: None,
        vocab_size: 0,
        context_length: INPUT_WIDTH,
        num_layers: net.layers,
        num_heads: net.heads,
        head_dim: 0,
        d_model: net.filters,
        internal_search: false,
        av_state_length: None,
        av_action_vocab_size: None,
        av_action_order: crate::mav::searchless::ActionOrder::default(),
        remote: None,
        source: Some(ModelSource {
            origin: o.origin.clone().unwrap_or_else(|| "a network in Leela Chess Zero's format".into()),
            url: String::new(),
            checkpoint: file.to_owned(),
            step: None,
            params: String::new(),
            license: o.license.clone().unwrap_or_else(|| net.license.clone()),
        }),
        parameters: net.parameters,
        training: TrainingInfo::default(),
        created: o.created.clone(),
        lc0: Some(Lc0Spec { input_format: net.input_format, wdl: net.wdl, moves_left: net.moves_left }),
    }
}

fn model_card(description: &str, m: &Manifest) -> String {
    let source = m.source.clone().unwrap_or_default();
    format!(
        "# {name}\n\nImported by `mavboard import lc0` from `{file}`: {description}; {params} parameters.\n\n\
         - Made by: {origin}\n- Licence: {license}\n- Format: lc0 (the network's own 112-plane input and 1858 \
         policy outputs; its win/draw/loss head values each move by the position after it)\n",
        name = m.name,
        file = source.checkpoint,
        params = m.parameters,
        origin = source.origin,
        license = if source.license.is_empty() { "not stated in the file" } else { &source.license },
    )
}

/// Builds the ONNX graph of a network (see the module documentation for its inputs and outputs); a [`Net`]
/// no reader makes (an attention body with a residual policy head, or the other way round) is refused.
pub fn graph(net: &Net) -> Result<Vec<u8>, Lc0Error> {
    // The reader pairs a residual body with a residual policy head and an attention body with the attention
    // policy; a `Net` built otherwise is refused here, so the builders below never meet the other pairs.
    let attention_body = matches!(net.body, Body::Attention(_));
    if attention_body != matches!(net.policy, PolicyHead::Attention(_)) {
        return Err(Lc0Error::Unsupported {
            field: "weights.policy",
            value: if attention_body { "a convolution or classical head" } else { "an attention head" }
                .into(),
            what: "an attention body with another policy head, or an attention policy on a residual body"
                .into(),
        });
    }
    let mut g = GraphBuilder::new();
    let batch = || Dim::Named("batch");
    let input = g.input(INPUT, ElemType::I64, vec![batch(), Dim::Fixed(INPUT_WIDTH as i64)]);
    let x = unpack_planes(&mut g, &input, net.format.input);
    let (policy, value, moves_left) = match (&net.body, &net.policy) {
        (Body::Residual { input, blocks }, _) => residual_net(&mut g, &x, net, input, blocks),
        (Body::Attention(body), PolicyHead::Attention(policy)) => {
            attention_net(&mut g, &x, net, body, policy)
        }
        // Net::from_gz gives an attention body the attention policy only.
        (Body::Attention(_), _) => unreachable!("checked above: an attention body has the attention policy"),
    };
    g.output(&policy, POLICY, ElemType::F32, vec![batch(), Dim::Fixed(POLICY_SIZE as i64)]);
    let wdl = match net.format.value {
        ValueFormat::Wdl => g.op("Softmax", &[&value], vec![Attr::Int("axis", 1)]),
        ValueFormat::Scalar => {
            // q = tanh(v); (W, D, L) = ((1+q)/2, 0, (1−q)/2).
            let q = g.op("Tanh", &[&value], vec![]);
            q_to_wdl(&mut g, &q)
        }
    };
    g.output(&wdl, WDL, ElemType::F32, vec![batch(), Dim::Fixed(3)]);
    if let Some(m) = moves_left {
        let m = g.op("Relu", &[&m], vec![]);
        g.output(&m, MLH, ElemType::F32, vec![batch(), Dim::Fixed(1)]);
    }
    Ok(g.finish(18, "mavboard import lc0", &net.describe()))
}

/// The residual tower and its heads from the input `[batch, 112, 8, 8]`: the policy logits, the value head's
/// last layer (before softmax or tanh) and the moves-left head's (before its ReLU).
fn residual_net(
    g: &mut GraphBuilder,
    x: &str,
    net: &Net,
    input: &ConvBlock,
    blocks: &[crate::lc0::weights::Residual],
) -> (String, String, Option<String>) {
    let mish = net.format.mish;
    let conv = |g: &mut GraphBuilder, x: &str, c: &ConvBlock, k: i64| -> String {
        let outs = c.outputs() as i64;
        let ins = c.fan_in() as i64 / (k * k);
        let w = g.f32s("w", &[outs, ins, k, k], &c.weights);
        let b = g.f32s("b", &[outs], &c.biases);
        let p = (k - 1) / 2;
        g.op(
            "Conv",
            &[x, &w, &b],
            vec![Attr::Ints("kernel_shape", vec![k, k]), Attr::Ints("pads", vec![p, p, p, p])],
        )
    };
    let act = |g: &mut GraphBuilder, x: &str| -> String {
        if mish {
            let sp = g.op("Softplus", &[x], vec![]);
            let t = g.op("Tanh", &[&sp], vec![]);
            g.op("Mul", &[x, &t], vec![])
        } else {
            g.op("Relu", &[x], vec![])
        }
    };
    let c0 = conv(g, x, input, 3);
    let mut flow = act(g, &c0);
    let filters = net.filters() as i64;
    for r in blocks {
        let y = conv(g, &flow, &r.conv1, 3);
        let y = act(g, &y);
        let z = conv(g, &y, &r.conv2, 3);
        let sum = if let Some(se) = &r.se {
            let pool = g.op("GlobalAveragePool", &[&z], vec![]);
            let flat = g.op("Flatten", &[&pool], vec![Attr::Int("axis", 1)]);
            let h = gemm(g, &flat, &se.fc1);
            let h = act(g, &h);
            let s = gemm(g, &h, &se.fc2);
            let shape = g.i64s("se_shape", &[4], &[-1, 2 * filters, 1, 1]);
            let s4 = g.op("Reshape", &[&s, &shape], vec![]);
            let (start, mid, end, axis) = (
                g.i64s("s0", &[1], &[0]),
                g.i64s("s1", &[1], &[filters]),
                g.i64s("s2", &[1], &[2 * filters]),
                g.i64s("ax", &[1], &[1]),
            );
            let gamma = g.op("Slice", &[&s4, &start, &mid, &axis], vec![]);
            let beta = g.op("Slice", &[&s4, &mid, &end, &axis], vec![]);
            let gamma = g.op("Sigmoid", &[&gamma], vec![]);
            let scaled = g.op("Mul", &[&z, &gamma], vec![]);
            let shifted = g.op("Add", &[&scaled, &beta], vec![]);
            g.op("Add", &[&shifted, &flow], vec![])
        } else {
            g.op("Add", &[&z, &flow], vec![])
        };
        flow = act(g, &sum);
    }
    // Policy.
    let policy = match &net.policy {
        PolicyHead::Classical { conv: c, dense } => {
            let p = conv(g, &flow, c, 1);
            let p = act(g, &p);
            let flat = g.op("Flatten", &[&p], vec![Attr::Int("axis", 1)]);
            gemm(g, &flat, dense)
        }
        PolicyHead::Convolution { conv1, conv2 } => {
            let p = conv(g, &flow, conv1, 3);
            let p = act(g, &p);
            let p = conv(g, &p, conv2, 3);
            let flat = g.op("Flatten", &[&p], vec![Attr::Int("axis", 1)]);
            let idx = g.i64s("policy_map", &[POLICY_SIZE as i64], conv_gather());
            g.op("Gather", &[&flat, &idx], vec![Attr::Int("axis", 1)])
        }
        // Net::from_gz refuses an attention policy on a residual body.
        PolicyHead::Attention(_) => unreachable!("checked in graph(): a residual body has a residual policy"),
    };
    let head = |g: &mut GraphBuilder, h: &DenseHead| -> String {
        let v = conv(g, &flow, &h.conv, 1);
        let v = act(g, &v);
        let flat = g.op("Flatten", &[&v], vec![Attr::Int("axis", 1)]);
        let v = gemm(g, &flat, &h.fc1);
        let v = act(g, &v);
        gemm(g, &v, &h.fc2)
    };
    let value = head(g, &net.value);
    let moves_left = net.moves_left.as_ref().map(|ml| head(g, ml));
    (policy, value, moves_left)
}

/// `x W^T + b` on `[batch, in]`.
fn gemm(g: &mut GraphBuilder, x: &str, d: &Dense) -> String {
    let w = g.f32s("fc_w", &[d.outputs() as i64, d.inputs() as i64], &d.weights);
    let b = g.f32s("fc_b", &[d.outputs() as i64], &d.biases);
    g.op("Gemm", &[x, &w, &b], vec![Attr::Int("transB", 1)])
}

/// `[out][in]` weights as `[in][out]`.
fn transposed(w: &[f32], outputs: usize, inputs: usize) -> Vec<f32> {
    let mut t = vec![0.0; w.len()];
    for o in 0..outputs {
        for i in 0..inputs {
            t[i * outputs + o] = w[o * inputs + i];
        }
    }
    t
}

/// `x W^T` on the last axis of `x` (`[…, in]` → `[…, out]`), no bias.
fn matmul(g: &mut GraphBuilder, x: &str, w: &[f32], outputs: usize) -> String {
    let inputs = w.len() / outputs.max(1);
    let wt = g.f32s("mm_w", &[inputs as i64, outputs as i64], &transposed(w, outputs, inputs));
    g.op("MatMul", &[x, &wt], vec![])
}

/// `x W^T + b` on the last axis of `x` (a dense layer applied to each square).
fn linear(g: &mut GraphBuilder, x: &str, d: &Dense) -> String {
    let y = matmul(g, x, &d.weights, d.outputs());
    let b = g.f32s("mm_b", &[d.outputs() as i64], &d.biases);
    g.op("Add", &[&y, &b], vec![])
}

/// An activation as lc0's CPU backend computes it (Mish as `x · tanh(softplus(x))`).
fn activate(g: &mut GraphBuilder, x: &str, a: Activation) -> String {
    match a {
        Activation::None => x.to_owned(),
        Activation::Relu => g.op("Relu", &[x], vec![]),
        Activation::Mish => {
            let sp = g.op("Softplus", &[x], vec![]);
            let t = g.op("Tanh", &[&sp], vec![]);
            g.op("Mul", &[x, &t], vec![])
        }
        Activation::Tanh => g.op("Tanh", &[x], vec![]),
        Activation::Sigmoid => g.op("Sigmoid", &[x], vec![]),
        Activation::Selu => {
            g.op("Selu", &[x], vec![Attr::Float("alpha", 1.673_263_2), Attr::Float("gamma", 1.050_701)])
        }
        Activation::Swish => {
            let s = g.op("Sigmoid", &[x], vec![]);
            g.op("Mul", &[x, &s], vec![])
        }
        Activation::Relu2 => {
            let r = g.op("Relu", &[x], vec![]);
            g.op("Mul", &[&r, &r], vec![])
        }
    }
}

/// A layer norm over the last axis.
fn layer_norm(g: &mut GraphBuilder, x: &str, n: &LayerNorm, epsilon: f32) -> String {
    let width = n.gammas.len() as i64;
    let gammas = g.f32s("ln_g", &[width], &n.gammas);
    let betas = g.f32s("ln_b", &[width], &n.betas);
    g.op(
        "LayerNormalization",
        &[x, &gammas, &betas],
        vec![Attr::Int("axis", -1), Attr::Float("epsilon", epsilon)],
    )
}

/// `LN(alpha · y + skip)`.
fn skip_norm(g: &mut GraphBuilder, y: &str, skip: &str, alpha: f32, n: &LayerNorm, epsilon: f32) -> String {
    let scaled = if alpha == 1.0 {
        y.to_owned()
    } else {
        let a = g.f32s("alpha", &[1], &[alpha]);
        g.op("Mul", &[y, &a], vec![])
    };
    let sum = g.op("Add", &[&scaled, skip], vec![]);
    layer_norm(g, &sum, n, epsilon)
}

/// A feed-forward block on `[batch, 64, width]`.
fn ffn(g: &mut GraphBuilder, x: &str, f: &Ffn, a: Activation) -> String {
    let h = linear(g, x, &f.dense1);
    let h = activate(g, &h, a);
    linear(g, &h, &f.dense2)
}

/// How an encoder layer is run: lc0's settings for the body's layers or the policy's.
struct EncoderSettings<'a> {
    heads: usize,
    smolgen_w: &'a [f32],
    smolgen_activation: Activation,
    ffn_activation: Activation,
    alpha: f32,
    epsilon: f32,
}

/// One encoder layer on `[batch, 64, width]`.
fn encoder_layer(g: &mut GraphBuilder, x: &str, l: &EncoderLayer, s: &EncoderSettings<'_>) -> String {
    let d = l.q.outputs();
    let heads = s.heads as i64;
    let depth = (d / s.heads) as i64;
    let split = g.i64s("heads_shape", &[4], &[-1, 64, heads, depth]);
    let per_head = |g: &mut GraphBuilder, dense: &Dense, perm: Vec<i64>| -> String {
        let y = linear(g, x, dense);
        let y = g.op("Reshape", &[&y, &split], vec![]);
        g.op("Transpose", &[&y], vec![Attr::Ints("perm", perm)])
    };
    let q = per_head(g, &l.q, vec![0, 2, 1, 3]);
    let k = per_head(g, &l.k, vec![0, 2, 3, 1]);
    let v = per_head(g, &l.v, vec![0, 2, 1, 3]);
    let logits = g.op("MatMul", &[&q, &k], vec![]);
    let scale = g.f32s("scale", &[1], &[1.0 / (depth as f32).sqrt()]);
    let mut logits = g.op("Mul", &[&logits, &scale], vec![]);
    if let Some(sg) = &l.smolgen {
        let width = l.out.outputs();
        let hidden_channels = sg.compress.len() / width.max(1);
        let c = matmul(g, x, &sg.compress, hidden_channels);
        let flat_shape = g.i64s("sg_flat", &[2], &[-1, 64 * hidden_channels as i64]);
        let c = g.op("Reshape", &[&c, &flat_shape], vec![]);
        let h = gemm(g, &c, &sg.dense1);
        let h = activate(g, &h, s.smolgen_activation);
        let h = layer_norm(g, &h, &sg.ln1, 1e-3);
        let h = gemm(g, &h, &sg.dense2);
        let h = activate(g, &h, s.smolgen_activation);
        let h = layer_norm(g, &h, &sg.ln2, 1e-3);
        let per_head = sg.dense2.outputs() / s.heads;
        let head_shape = g.i64s("sg_heads", &[3], &[-1, heads, per_head as i64]);
        let h = g.op("Reshape", &[&h, &head_shape], vec![]);
        let generated = matmul(g, &h, s.smolgen_w, 64 * 64);
        let square_shape = g.i64s("sg_squares", &[4], &[-1, heads, 64, 64]);
        let generated = g.op("Reshape", &[&generated, &square_shape], vec![]);
        logits = g.op("Add", &[&logits, &generated], vec![]);
    }
    let weights = g.op("Softmax", &[&logits], vec![Attr::Int("axis", -1)]);
    let o = g.op("MatMul", &[&weights, &v], vec![]);
    let o = g.op("Transpose", &[&o], vec![Attr::Ints("perm", vec![0, 2, 1, 3])]);
    let joined = g.i64s("joined", &[3], &[-1, 64, d as i64]);
    let o = g.op("Reshape", &[&o, &joined], vec![]);
    let m = linear(g, &o, &l.out);
    let x1 = skip_norm(g, &m, x, s.alpha, &l.ln1, s.epsilon);
    let f = ffn(g, &x1, &l.ffn, s.ffn_activation);
    skip_norm(g, &f, &x1, s.alpha, &l.ln2, s.epsilon)
}

/// The attention body and its heads from the input `[batch, 112, 8, 8]` (see `RANDOM_NETS.md` in the lc0
/// fixtures for the computation, step by step).
fn attention_net(
    g: &mut GraphBuilder,
    x: &str,
    net: &Net,
    body: &AttentionBody,
    policy: &AttentionPolicy,
) -> (String, String, Option<String>) {
    let act = net.format.activation();
    let planes = PLANES as i64;
    // [batch, 112, 8, 8] → [batch, 64, 112].
    let shape = g.i64s("nchw_flat", &[3], &[-1, planes, 64]);
    let x = g.op("Reshape", &[x, &shape], vec![]);
    let x = g.op("Transpose", &[&x], vec![Attr::Ints("perm", vec![0, 2, 1])]);
    let (zero, axis2) = (g.i64s("z", &[1], &[0]), g.i64s("axis2", &[1], &[2]));
    let position = position_encoding(g, &x, body, &zero, &axis2);
    let x = g.op("Concat", &[&x, &position], vec![Attr::Int("axis", 2)]);
    let mut y = embedding(g, &x, body, act);
    let alpha = (2.0 * body.encoders.len() as f64).powf(-0.25) as f32;
    // The embedding's feed-forward block comes with the dense encoding; so does ε = 1e-3 in the encoders'
    // layer norms (1e-6 with the table), as lc0 runs them.
    let epsilon = if let Some(d) = &body.dense {
        let f = ffn(g, &y, &d.embedding_ffn, net.format.ffn_activation);
        y = skip_norm(g, &f, &y, alpha, &d.embedding_ffn_ln, 1e-3);
        1e-3
    } else {
        1e-6
    };
    let settings = EncoderSettings {
        heads: body.heads,
        smolgen_w: &body.smolgen_w,
        smolgen_activation: net.format.smolgen_activation,
        ffn_activation: net.format.ffn_activation,
        alpha,
        epsilon,
    };
    for layer in &body.encoders {
        y = encoder_layer(g, &y, layer, &settings);
    }
    let value = dense_head(g, &y, &net.value, act);
    let moves_left = net.moves_left.as_ref().map(|ml| dense_head(g, &y, ml, act));
    let policy = attention_policy(g, &y, policy, &settings, act, [&zero, &axis2]);
    (policy, value, moves_left)
}

/// The position encoding of `[batch, 64, 112]` squares: dense, from the first 12 planes of every square,
/// or lc0's fixed table (`zero` and `axis2` are the constants 0 and 2).
fn position_encoding(g: &mut GraphBuilder, x: &str, body: &AttentionBody, zero: &str, axis2: &str) -> String {
    match &body.dense {
        Some(d) => {
            let twelve = g.i64s("twelve", &[1], &[12]);
            let pieces = g.op("Slice", &[x, zero, &twelve, axis2], vec![]);
            let flat = g.i64s("pieces_flat", &[2], &[-1, 64 * 12]);
            let pieces = g.op("Reshape", &[&pieces, &flat], vec![]);
            let position = gemm(g, &pieces, &d.position);
            let encoding = (d.position.outputs() / 64) as i64;
            let per_square = g.i64s("pos_shape", &[3], &[-1, 64, encoding]);
            g.op("Reshape", &[&position, &per_square], vec![])
        }
        None => {
            // The table, one row per square, repeated over the batch.
            let width = position_map::CHANNELS as i64;
            let table = g.f32s("position_map", &[1, 64, width], &position_map::position_map());
            let one = g.i64s("one", &[1], &[1]);
            let column = g.op("Slice", &[x, zero, &one, axis2], vec![]);
            let nought = g.f32s("nought", &[1], &[0.0]);
            let zeros = g.op("Mul", &[&column, &nought], vec![]);
            g.op("Add", &[&zeros, &table], vec![])
        }
    }
}

/// The embedding of the squares with their position encoding, then (with the dense encoding) its layer
/// norm, then the gates if the network has them.
fn embedding(g: &mut GraphBuilder, x: &str, body: &AttentionBody, act: Activation) -> String {
    let e = body.embedding.outputs();
    let y = linear(g, x, &body.embedding);
    let mut y = activate(g, &y, act);
    if let Some(d) = &body.dense {
        y = layer_norm(g, &y, &d.embedding_ln, 1e-3);
    }
    if let Some(gates) = &body.gates {
        let mult = g.f32s("mult_gate", &[64, e as i64], &transposed(&gates.mult, e, 64));
        let add = g.f32s("add_gate", &[64, e as i64], &transposed(&gates.add, e, 64));
        let m = g.op("Mul", &[&y, &mult], vec![]);
        y = g.op("Add", &[&m, &add], vec![]);
    }
    y
}

/// A value or moves-left head: a per-square embedding flattened square-major, then dense layers.
fn dense_head(g: &mut GraphBuilder, y: &str, h: &DenseHead, act: Activation) -> String {
    let embed = Dense { weights: h.conv.weights.clone(), biases: h.conv.biases.clone() };
    let v = linear(g, y, &embed);
    let v = activate(g, &v, act);
    let flat = g.i64s("head_flat", &[2], &[-1, 64 * h.conv.outputs() as i64]);
    let v = g.op("Reshape", &[&v, &flat], vec![]);
    let v = gemm(g, &v, &h.fc1);
    let v = activate(g, &v, act);
    gemm(g, &v, &h.fc2)
}

/// The attention policy's 1858 logits from the body's output (`consts` are the constants 0 and 2).
fn attention_policy(
    g: &mut GraphBuilder,
    y: &str,
    policy: &AttentionPolicy,
    settings: &EncoderSettings<'_>,
    act: Activation,
    consts: [&str; 2],
) -> String {
    let p = linear(g, y, &policy.embedding);
    let mut p = activate(g, &p, act);
    let policy_settings = EncoderSettings { heads: policy.heads, alpha: 1.0, epsilon: 1e-6, ..*settings };
    for layer in &policy.encoders {
        p = encoder_layer(g, &p, layer, &policy_settings);
    }
    let pd = policy.query.outputs();
    let q = linear(g, &p, &policy.query);
    let k = linear(g, &p, &policy.key);
    let kt = g.op("Transpose", &[&k], vec![Attr::Ints("perm", vec![0, 2, 1])]);
    let logits = g.op("MatMul", &[&q, &kt], vec![]);
    let scale = g.f32s("policy_scale", &[1], &[1.0 / (pd as f32).sqrt()]);
    let logits = g.op("Mul", &[&logits, &scale], vec![]);
    let promotions = promotion_logits(g, &logits, &k, policy, consts);
    let lflat = g.i64s("logits_flat", &[2], &[-1, 64 * 64]);
    let logits = g.op("Reshape", &[&logits, &lflat], vec![]);
    let all = g.op("Concat", &[&logits, &promotions], vec![Attr::Int("axis", 1)]);
    let idx = g.i64s("attention_policy_map", &[POLICY_SIZE as i64], &attention_gather());
    g.op("Gather", &[&all, &idx], vec![Attr::Int("axis", 1)])
}

/// The promotion logits `[batch, 8 × 24]`: offsets from the keys `k` of the eighth rank, added to the
/// seventh-to-eighth-rank `logits` (`consts` are the constants 0 and 2).
fn promotion_logits(
    g: &mut GraphBuilder,
    logits: &str,
    k: &str,
    policy: &AttentionPolicy,
    [zero, axis2]: [&str; 2],
) -> String {
    let (axis1, r56, r64) =
        (g.i64s("axis1", &[1], &[1]), g.i64s("r56", &[1], &[56]), g.i64s("r64", &[1], &[64]));
    let keys8 = g.op("Slice", &[k, &r56, &r64, &axis1], vec![]);
    let offsets = matmul(g, &keys8, &policy.promotion, 4);
    let (three, four) = (g.i64s("three", &[1], &[3]), g.i64s("four", &[1], &[4]));
    let first = g.op("Slice", &[&offsets, zero, &three, axis2], vec![]);
    let last = g.op("Slice", &[&offsets, &three, &four, axis2], vec![]);
    let offsets = g.op("Add", &[&first, &last], vec![]);
    let offsets = g.op("Unsqueeze", &[&offsets, &axis1], vec![]);
    let (starts, ends, axes) =
        (g.i64s("pr_s", &[2], &[48, 56]), g.i64s("pr_e", &[2], &[56, 64]), g.i64s("pr_a", &[2], &[1, 2]));
    let seventh = g.op("Slice", &[logits, &starts, &ends, &axes], vec![]);
    let axis3 = g.i64s("axis3", &[1], &[3]);
    let seventh = g.op("Unsqueeze", &[&seventh, &axis3], vec![]);
    let promotions = g.op("Add", &[&seventh, &offsets], vec![]);
    let pflat = g.i64s("promo_flat", &[2], &[-1, 8 * 24]);
    g.op("Reshape", &[&promotions, &pflat], vec![])
}

/// The promotion pieces in the order of the attention policy's 3 promotion offsets per file.
const ATTENTION_PROMOTIONS: [Promotion; 3] = [Promotion::Queen, Promotion::Rook, Promotion::Bishop];

/// For each of the 1858 outputs, its element of the attention policy's `64 × 64 + 8 × 24` logits: from × 64
/// + to for every move (a knight promotion is the plain move), then `4096 + 24 · from-file + 3 · to-file +
/// piece` for the queen, rook and bishop promotions from the seventh rank.
pub fn attention_gather() -> Vec<i64> {
    let mut gather = vec![0i64; POLICY_SIZE];
    for from in 0..64u8 {
        for to in 0..64u8 {
            if let Some(j) = index(from, to, Promotion::None) {
                gather[j] = i64::from(from) * 64 + i64::from(to);
            }
        }
    }
    for from_file in 0..8u8 {
        for to_file in 0..8u8 {
            for (piece, promotion) in ATTENTION_PROMOTIONS.iter().enumerate() {
                if let Some(j) = index(48 + from_file, 56 + to_file, *promotion) {
                    gather[j] = 4096 + 24 * i64::from(from_file) + 3 * i64::from(to_file) + piece as i64;
                }
            }
        }
    }
    gather
}
