//! An ONNX network in lc0's own interface — what lc0's `leela2onnx` writes, or the model inside an lc0
//! weights file (`onnx2leela`'s output) — wrapped into the `lc0` package's interface (see
//! [`super::lc0_interface`]): the package's int64 plane masks are unpacked by nodes written here into the float
//! planes `[batch, 112, 8, 8]` the network takes (cast to float16 or bfloat16 if it takes those), the
//! network's nodes and initializers follow as they were written (copied as encoded, never re-encoded), and
//! its outputs are renamed `policy`, `wdl` and `mlh` (cast back to float; a scalar value `q` becomes
//! `((1+q)/2, 0, (1−q)/2)`; a WDL head without its softmax gets one).

use std::collections::HashSet;

use super::lc0_interface::{INPUT, INPUT_WIDTH, MLH, POLICY, WDL, q_to_wdl, unpack_planes};
use super::onnx_write::{Attr, Dim, ElemType, GraphBuilder};
use crate::lc0::embedded_onnx::OnnxNames;
use crate::lc0::planes::PLANES;
use crate::lc0::policy_index::POLICY_SIZE;
use crate::lc0::wire::{Fields, Value};
use crate::lc0::{InputFormat, Lc0Error};

/// The oldest opset of the default domain read: `BitShift`, which unpacks the plane masks, came in 11.
pub const MIN_OPSET: i64 = 11;
/// The prefix of every value name the wrapper adds.
const PREFIX: &str = "mavboard/";

/// Why an ONNX file cannot be read as an lc0 network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Lc0OnnxError {
    /// The protobuf stream is malformed.
    #[error(
        "not a readable ONNX model ({0}); `import lc0` reads lc0 weights (.pb.gz, or the unpacked .pb) and ONNX \
         files in lc0's interface"
    )]
    Wire(#[from] Lc0Error),
    /// The model has no graph.
    #[error("the ONNX model has no graph")]
    NoGraph,
    /// The graph does not have exactly one input besides its initializers.
    #[error(
        "the ONNX model has {found} inputs ({names}); an lc0 network has one, its planes [batch, 112, 8, 8]"
    )]
    Inputs {
        /// How many.
        found: usize,
        /// Their names.
        names: String,
    },
    /// The input is not lc0's planes.
    #[error(
        "input `{name}` is {found}; an lc0 network takes planes [batch, 112, 8, 8] of float, float16 or bfloat16"
    )]
    Input {
        /// The input's name.
        name: String,
        /// Its type and shape.
        found: String,
    },
    /// The export was made for one batch size.
    #[error(
        "the ONNX model takes batches of exactly {batch}; re-export it with a free batch size (lc0 leela2onnx \
         without --onnx-batch-size)"
    )]
    FixedBatch {
        /// Its batch size.
        batch: i64,
    },
    /// A head the package needs is not among the outputs.
    #[error(
        "the ONNX model has no {what} output (its outputs: {outputs}); lc0's are /output/policy [batch, 1858] \
         and /output/wdl [batch, 3] or /output/value [batch, 1]"
    )]
    Output {
        /// The head.
        what: &'static str,
        /// The outputs it has.
        outputs: String,
    },
    /// An output is not of a float type.
    #[error("output `{name}` is of ONNX element type {elem}; float, float16 or bfloat16 is read")]
    OutputType {
        /// The output's name.
        name: String,
        /// Its element type code.
        elem: u64,
    },
    /// The default domain's opset is older than [`MIN_OPSET`].
    #[error(
        "the ONNX model imports opset {found} of the default domain; {MIN_OPSET} or later is read (re-export with \
         `lc0 leela2onnx --onnx-opset=17`)"
    )]
    Opset {
        /// The opset imported (0: none).
        found: i64,
    },
    /// A value of the model has a name the wrapper gives its own values.
    #[error(
        "the ONNX model names a value `{name}`, a name the package's graph gives its own input or outputs; \
         re-export with leela2onnx's default names (/input/planes, /output/policy, …)"
    )]
    NameClash {
        /// The name.
        name: String,
    },
    /// A part of ONNX this reader does not copy.
    #[error("the ONNX model uses {0}, which is not read here; export the network as one self-contained file")]
    Unsupported(&'static str),
}

/// A graph input or output: its name, element type and shape (`None`: a symbolic or unknown dimension).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Io {
    name: String,
    elem: u64,
    dims: Option<Vec<Option<i64>>>,
}

impl Io {
    fn describe(&self) -> String {
        let dims = match &self.dims {
            Some(d) => d
                .iter()
                .map(|d| d.map_or_else(|| "?".to_owned(), |v| v.to_string()))
                .collect::<Vec<_>>()
                .join(", "),
            None => "unknown shape".into(),
        };
        format!("{} [{dims}]", elem_name(self.elem))
    }

    fn last_dim(&self) -> Option<i64> {
        self.dims.as_ref().and_then(|d| d.last().copied().flatten())
    }
}

fn elem_name(elem: u64) -> String {
    match elem {
        1 => "float".into(),
        10 => "float16".into(),
        16 => "bfloat16".into(),
        7 => "int64".into(),
        other => format!("element type {other}"),
    }
}

fn is_float(elem: u64) -> bool {
    matches!(elem, 1 | 10 | 16)
}

/// An lc0 network's ONNX model, read: its parts, ready to be wrapped.
#[derive(Debug, Clone)]
pub struct LeelaOnnx<'a> {
    ir_version: i64,
    opsets: Vec<(String, i64)>,
    nodes: Vec<&'a [u8]>,
    initializers: Vec<&'a [u8]>,
    value_info: Vec<&'a [u8]>,
    input: Io,
    policy: Io,
    wdl: Option<Io>,
    value: Option<Io>,
    moves_left: Option<Io>,
    wdl_softmaxed: bool,
    /// The network's parameters, about: the elements of its float initializers (small constants included).
    pub parameters: u64,
    /// The program that wrote the model (`producer_name` and version).
    pub producer: String,
}

fn string(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The varints of a repeated integer field, packed or not.
fn push_varints(value: Value<'_>, out: &mut Vec<i64>, message: &'static str) -> Result<(), Lc0Error> {
    match value {
        Value::Varint(v) => out.push(v as i64),
        Value::Bytes(packed) => {
            let mut v = 0u64;
            let mut shift = 0;
            for &byte in packed {
                if shift > 63 {
                    return Err(Lc0Error::Wire {
                        message,
                        offset: 0,
                        why: "a packed varint longer than 64 bits",
                    });
                }
                v |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    out.push(v as i64);
                    v = 0;
                    shift = 0;
                } else {
                    shift += 7;
                }
            }
            if shift != 0 {
                return Err(Lc0Error::Wire {
                    message,
                    offset: packed.len(),
                    why: "a packed varint cut short",
                });
            }
        }
        _ => {
            return Err(Lc0Error::Wire {
                message,
                offset: 0,
                why: "an integer field of the wrong wire type",
            });
        }
    }
    Ok(())
}

/// A `ValueInfoProto`: name, tensor element type and shape.
fn value_info(b: &[u8]) -> Result<Io, Lc0Error> {
    let mut io = Io { name: String::new(), elem: 0, dims: None };
    for f in Fields::new(b, "ValueInfoProto") {
        match f? {
            (1, Value::Bytes(n)) => io.name = string(n),
            (2, Value::Bytes(ty)) => {
                for f in Fields::new(ty, "TypeProto") {
                    let (1, Value::Bytes(tensor)) = f? else { continue };
                    for f in Fields::new(tensor, "TypeProto.Tensor") {
                        match f? {
                            (1, Value::Varint(e)) => io.elem = e,
                            (2, Value::Bytes(shape)) => {
                                let mut dims = Vec::new();
                                for f in Fields::new(shape, "TensorShapeProto") {
                                    let (1, Value::Bytes(dim)) = f? else { continue };
                                    let mut size = None;
                                    for f in Fields::new(dim, "TensorShapeProto.Dimension") {
                                        if let (1, Value::Varint(v)) = f? {
                                            size = Some(v as i64);
                                        }
                                    }
                                    dims.push(size);
                                }
                                io.dims = Some(dims);
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(io)
}

/// A node's inputs and outputs, op type and domain.
struct NodeInfo {
    outputs: Vec<String>,
    inputs: Vec<String>,
    op: String,
}

fn node_info(b: &[u8]) -> Result<NodeInfo, Lc0Error> {
    let mut n = NodeInfo { outputs: Vec::new(), inputs: Vec::new(), op: String::new() };
    for f in Fields::new(b, "NodeProto") {
        match f? {
            (1, Value::Bytes(s)) => n.inputs.push(string(s)),
            (2, Value::Bytes(s)) => n.outputs.push(string(s)),
            (4, Value::Bytes(s)) => n.op = string(s),
            _ => {}
        }
    }
    Ok(n)
}

/// The fields of a `ModelProto` the reader uses.
struct ModelFields<'a> {
    ir_version: i64,
    opsets: Vec<(String, i64)>,
    graph: Option<&'a [u8]>,
    producer: String,
    producer_version: String,
}

impl<'a> ModelFields<'a> {
    /// Reads a serialized `ModelProto`'s top-level fields.
    fn read(bytes: &'a [u8]) -> Result<ModelFields<'a>, Lc0OnnxError> {
        let mut m = ModelFields {
            ir_version: 0,
            opsets: Vec::new(),
            graph: None,
            producer: String::new(),
            producer_version: String::new(),
        };
        for f in Fields::new(bytes, "ModelProto") {
            match f? {
                (1, Value::Varint(v)) => m.ir_version = v as i64,
                (2, Value::Bytes(s)) => m.producer = string(s),
                (3, Value::Bytes(s)) => m.producer_version = string(s),
                (7, Value::Bytes(g)) => m.graph = Some(g),
                (8, Value::Bytes(o)) => m.opsets.push(opset(o)?),
                (25, _) => return Err(Lc0OnnxError::Unsupported("model-local functions")),
                _ => {}
            }
        }
        Ok(m)
    }
}

/// An `OperatorSetIdProto`: its domain and version.
fn opset(o: &[u8]) -> Result<(String, i64), Lc0Error> {
    let (mut domain, mut version) = (String::new(), 0);
    for f in Fields::new(o, "OperatorSetIdProto") {
        match f? {
            (1, Value::Bytes(d)) => domain = string(d),
            (2, Value::Varint(v)) => version = v as i64,
            _ => {}
        }
    }
    Ok((domain, version))
}

/// The fields of a `GraphProto` the reader uses.
struct GraphFields<'a> {
    nodes: Vec<&'a [u8]>,
    initializers: Vec<&'a [u8]>,
    value_infos: Vec<&'a [u8]>,
    inputs: Vec<Io>,
    outputs: Vec<Io>,
    init_names: HashSet<String>,
    /// The elements of the float initializers.
    parameters: u64,
}

impl<'a> GraphFields<'a> {
    /// Reads a serialized `GraphProto`'s fields.
    fn read(graph: &'a [u8]) -> Result<GraphFields<'a>, Lc0OnnxError> {
        let mut g = GraphFields {
            nodes: Vec::new(),
            initializers: Vec::new(),
            value_infos: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            init_names: HashSet::new(),
            parameters: 0,
        };
        for f in Fields::new(graph, "GraphProto") {
            match f? {
                (1, Value::Bytes(n)) => g.nodes.push(n),
                (5, Value::Bytes(t)) => {
                    let (name, count) = initializer(t)?;
                    g.parameters = g.parameters.saturating_add(count);
                    g.init_names.insert(name);
                    g.initializers.push(t);
                }
                (11, Value::Bytes(i)) => g.inputs.push(value_info(i)?),
                (12, Value::Bytes(o)) => g.outputs.push(value_info(o)?),
                (13, Value::Bytes(v)) => g.value_infos.push(v),
                (15, _) => return Err(Lc0OnnxError::Unsupported("sparse initializers")),
                _ => {}
            }
        }
        Ok(g)
    }
}

/// An initializer's (`TensorProto`'s) name and its element count if it is of a float type (else 0).
fn initializer(t: &[u8]) -> Result<(String, u64), Lc0OnnxError> {
    let (mut dims, mut elem, mut name) = (Vec::new(), 0, String::new());
    for f in Fields::new(t, "TensorProto") {
        match f? {
            (1, v) => push_varints(v, &mut dims, "TensorProto.dims")?,
            (2, Value::Varint(e)) => elem = e,
            (8, Value::Bytes(n)) => name = string(n),
            (14, Value::Varint(1)) => {
                return Err(Lc0OnnxError::Unsupported("external tensor data"));
            }
            _ => {}
        }
    }
    if !is_float(elem) {
        return Ok((name, 0));
    }
    // Dims are the file's claim: a hostile one must not overflow the count.
    let count = dims.iter().fold(1u64, |n, d| n.saturating_mul((*d).max(0) as u64));
    Ok((name, count))
}

/// The graph's one input that is not an initializer, checked to be lc0's planes with a free batch size.
fn planes_input(
    inputs: Vec<Io>,
    init_names: &HashSet<String>,
    names: &OnnxNames,
) -> Result<Io, Lc0OnnxError> {
    let inputs: Vec<Io> = inputs.into_iter().filter(|i| !init_names.contains(&i.name)).collect();
    let input = match inputs.as_slice() {
        [one] => one.clone(),
        _ => {
            return Err(Lc0OnnxError::Inputs {
                found: inputs.len(),
                names: inputs.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
    };
    if let Some(want) = &names.input
        && want != &input.name
    {
        return Err(Lc0OnnxError::Input {
            name: want.clone(),
            found: format!("not in the graph (its input is `{}`)", input.name),
        });
    }
    let planes_shape = input
        .dims
        .as_ref()
        .is_some_and(|d| d.len() == 4 && d[1..] == [Some(PLANES as i64), Some(8), Some(8)]);
    if !is_float(input.elem) || !planes_shape || input.name.is_empty() {
        return Err(Lc0OnnxError::Input { name: input.name.clone(), found: input.describe() });
    }
    if let Some(batch) = input.dims.as_ref().and_then(|d| d[0]) {
        return Err(Lc0OnnxError::FixedBatch { batch });
    }
    Ok(input)
}

/// Fails if a value of the model (initializer, input or node output) has a name the wrapper gives its own.
fn check_name_clash(
    init_names: &HashSet<String>,
    input: &Io,
    infos: &[NodeInfo],
) -> Result<(), Lc0OnnxError> {
    let ours = [INPUT, POLICY, WDL, MLH];
    let mut seen = init_names.iter().cloned().chain([input.name.clone()]).collect::<HashSet<String>>();
    seen.extend(infos.iter().flat_map(|n| n.outputs.iter().cloned()));
    if let Some(name) = seen.iter().find(|n| ours.contains(&n.as_str()) || n.starts_with(PREFIX)) {
        return Err(Lc0OnnxError::NameClash { name: name.clone() });
    }
    Ok(())
}

/// The network's heads among the graph's outputs.
struct Heads {
    policy: Io,
    wdl: Option<Io>,
    value: Option<Io>,
    moves_left: Option<Io>,
}

impl Heads {
    /// Finds the heads among `outputs`, by the names in `names` or else by shape, and checks their types.
    fn pick(outputs: &[Io], names: &OnnxNames) -> Result<Heads, Lc0OnnxError> {
        let listed =
            outputs.iter().map(|o| format!("{} {}", o.name, o.describe())).collect::<Vec<_>>().join(", ");
        let pick = |named: &Option<String>, test: &dyn Fn(&Io) -> bool| -> Option<Io> {
            match named {
                Some(n) => outputs.iter().find(|o| &o.name == n).cloned(),
                None => outputs.iter().find(|o| test(o)).cloned(),
            }
        };
        let says_mlh = |o: &Io| {
            let n = o.name.to_ascii_lowercase();
            n.contains("mlh") || n.contains("moves")
        };
        let policy = pick(&names.policy, &|o| o.last_dim() == Some(POLICY_SIZE as i64))
            .ok_or_else(|| Lc0OnnxError::Output { what: "policy", outputs: listed.clone() })?;
        let wdl = pick(&names.wdl, &|o| o.last_dim() == Some(3));
        let value = if wdl.is_some() {
            None
        } else {
            pick(&names.value, &|o| o.last_dim() == Some(1) && !says_mlh(o))
        };
        if wdl.is_none() && value.is_none() {
            return Err(Lc0OnnxError::Output { what: "WDL or value", outputs: listed });
        }
        let moves_left = pick(&names.moves_left, &|o| o.last_dim() == Some(1) && says_mlh(o));
        for io in [Some(&policy), wdl.as_ref(), value.as_ref(), moves_left.as_ref()].into_iter().flatten() {
            if io.name.is_empty() {
                return Err(Lc0OnnxError::Output { what: "named", outputs: listed.clone() });
            }
            if !is_float(io.elem) {
                return Err(Lc0OnnxError::OutputType { name: io.name.clone(), elem: io.elem });
            }
        }
        Ok(Heads { policy, wdl, value, moves_left })
    }
}

impl<'a> LeelaOnnx<'a> {
    /// Reads a serialized `onnx.ModelProto` as an lc0 network; `names` are the names an lc0 weights file
    /// gives its input and outputs (else outputs are told apart by shape: 1858 policy logits, 3 WDL
    /// probabilities, 1 value — or moves left when the name says `mlh`).
    pub fn read(bytes: &'a [u8], names: &OnnxNames) -> Result<LeelaOnnx<'a>, Lc0OnnxError> {
        let model = ModelFields::read(bytes)?;
        let graph = model.graph.ok_or(Lc0OnnxError::NoGraph)?;
        let default_opset = model
            .opsets
            .iter()
            .filter(|(d, _)| d.is_empty() || d == "ai.onnx")
            .map(|(_, v)| *v)
            .max()
            .unwrap_or(0);
        if default_opset < MIN_OPSET {
            return Err(Lc0OnnxError::Opset { found: default_opset });
        }
        let g = GraphFields::read(graph)?;
        let input = planes_input(g.inputs, &g.init_names, names)?;
        let infos: Vec<NodeInfo> = g.nodes.iter().map(|n| node_info(n)).collect::<Result<_, _>>()?;
        check_name_clash(&g.init_names, &input, &infos)?;
        let heads = Heads::pick(&g.outputs, names)?;
        let wdl_softmaxed = heads.wdl.as_ref().is_some_and(|w| ends_in_softmax(&infos, &w.name));
        let producer = format!("{} {}", model.producer, model.producer_version).trim().to_owned();
        Ok(LeelaOnnx {
            ir_version: model.ir_version,
            opsets: model.opsets,
            nodes: g.nodes,
            initializers: g.initializers,
            value_info: g.value_infos,
            input,
            policy: heads.policy,
            wdl: heads.wdl,
            value: heads.value,
            moves_left: heads.moves_left,
            wdl_softmaxed,
            parameters: g.parameters,
            producer,
        })
    }

    /// Whether the network has a moves-left head.
    pub fn has_moves_left(&self) -> bool {
        self.moves_left.is_some()
    }

    /// Whether it values a position as win/draw/loss (else as one scalar).
    pub fn has_wdl(&self) -> bool {
        self.wdl.is_some()
    }

    /// What the user should know before running it: ONNX Runtime's CPU provider has no bfloat16 kernels for
    /// most operators, so a bfloat16 export runs only where a GPU provider has them.
    pub fn caveat(&self) -> Option<String> {
        (self.input.elem == 16).then(|| {
            "a bfloat16 network: ONNX Runtime's CPU provider cannot run most of its operators; on a CPU export it \
             with `lc0 leela2onnx --onnx-data-type=f32` (or f16)"
                .to_owned()
        })
    }

    /// A line describing the network.
    pub fn describe(&self) -> String {
        let opset = self.opsets.iter().find(|(d, _)| d.is_empty() || d == "ai.onnx").map_or(0, |o| o.1);
        format!(
            "an ONNX network in lc0's interface ({}, opset {opset}, {} nodes; {} value{}{})",
            elem_name(self.input.elem),
            self.nodes.len(),
            if self.wdl.is_some() { "WDL" } else { "scalar" },
            if self.moves_left.is_some() { ", moves left" } else { "" },
            if self.producer.is_empty() { String::new() } else { format!("; written by {}", self.producer) },
        )
    }

    /// The package's ONNX model: the network behind the unpacking of `format`'s planes, its outputs renamed.
    pub fn wrap(&self, format: InputFormat) -> Vec<u8> {
        let mut g = GraphBuilder::with_prefix(PREFIX);
        let batch = || Dim::Named("batch");
        let input = g.input(INPUT, ElemType::I64, vec![batch(), Dim::Fixed(INPUT_WIDTH as i64)]);
        let x = unpack_planes(&mut g, &input, format);
        if self.input.elem == 1 {
            g.op_named("Identity", &[&x], &self.input.name, vec![]);
        } else {
            g.op_named("Cast", &[&x], &self.input.name, vec![Attr::Int("to", self.input.elem as i64)]);
        }
        for n in &self.nodes {
            g.raw_node(n);
        }
        for t in &self.initializers {
            g.raw_initializer(t);
        }
        for v in &self.value_info {
            g.raw_value_info(v);
        }
        let as_f32 = |g: &mut GraphBuilder, io: &Io| -> String {
            if io.elem == 1 { io.name.clone() } else { g.op("Cast", &[&io.name], vec![Attr::Int("to", 1)]) }
        };
        let policy = as_f32(&mut g, &self.policy);
        g.output(&policy, POLICY, ElemType::F32, vec![batch(), Dim::Fixed(POLICY_SIZE as i64)]);
        let wdl = match (&self.wdl, &self.value) {
            (Some(w), _) => {
                let w = as_f32(&mut g, w);
                if self.wdl_softmaxed { w } else { g.op("Softmax", &[&w], vec![Attr::Int("axis", 1)]) }
            }
            (None, Some(v)) => {
                let q = as_f32(&mut g, v);
                q_to_wdl(&mut g, &q)
            }
            // `read` refuses a network with neither.
            (None, None) => unreachable!("read() requires a WDL or a value output"),
        };
        g.output(&wdl, WDL, ElemType::F32, vec![batch(), Dim::Fixed(3)]);
        if let Some(m) = &self.moves_left {
            let m = as_f32(&mut g, m);
            g.output(&m, MLH, ElemType::F32, vec![batch(), Dim::Fixed(1)]);
        }
        g.finish_with(self.ir_version.max(8), &self.opsets, "mavboard import lc0", &self.describe())
    }
}

/// Whether the value `name` is a softmax's output (through casts and identities).
fn ends_in_softmax(nodes: &[NodeInfo], name: &str) -> bool {
    let mut current = name.to_owned();
    for _ in 0..nodes.len() {
        let Some(n) = nodes.iter().find(|n| n.outputs.contains(&current)) else { return false };
        match n.op.as_str() {
            "Softmax" => return true,
            "Cast" | "Identity" => match n.inputs.first() {
                Some(i) => current = i.clone(),
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for an lc0 export: planes → flatten → dense heads, named as leela2onnx names them.
    fn export(opset: i64, softmax: bool, value: bool, input: &str) -> Vec<u8> {
        let mut g = GraphBuilder::new();
        let batch = || Dim::Named("batch");
        let x = g.input(input, ElemType::F32, vec![batch(), Dim::Fixed(112), Dim::Fixed(8), Dim::Fixed(8)]);
        let flat = g.op("Flatten", &[&x], vec![Attr::Int("axis", 1)]);
        let head = |g: &mut GraphBuilder, width: usize| {
            let w = g.f32s("w", &[112 * 64, width as i64], &vec![0.01; 112 * 64 * width]);
            g.op("MatMul", &[&flat, &w], vec![])
        };
        let p = head(&mut g, POLICY_SIZE);
        g.output(&p, "/output/policy", ElemType::F32, vec![batch(), Dim::Fixed(POLICY_SIZE as i64)]);
        if value {
            let v = head(&mut g, 1);
            let v = g.op("Tanh", &[&v], vec![]);
            g.output(&v, "/output/value", ElemType::F32, vec![batch(), Dim::Fixed(1)]);
        } else {
            let w = head(&mut g, 3);
            let w = if softmax { g.op("Softmax", &[&w], vec![Attr::Int("axis", 1)]) } else { w };
            g.output(&w, "/output/wdl", ElemType::F32, vec![batch(), Dim::Fixed(3)]);
        }
        let m = head(&mut g, 1);
        g.output(&m, "/output/mlh", ElemType::F32, vec![batch(), Dim::Fixed(1)]);
        g.finish(opset, "test", "")
    }

    #[test]
    fn heads_are_told_apart_by_shape_and_name() {
        let bytes = export(17, true, false, "/input/planes");
        let m = LeelaOnnx::read(&bytes, &OnnxNames::default()).expect("reads");
        assert_eq!(m.policy.name, "/output/policy");
        assert_eq!(m.wdl.as_ref().map(|w| w.name.as_str()), Some("/output/wdl"));
        assert_eq!(m.moves_left.as_ref().map(|w| w.name.as_str()), Some("/output/mlh"));
        assert!(m.wdl_softmaxed && m.has_wdl() && m.has_moves_left());
        assert_eq!(m.parameters, (112 * 64 * (POLICY_SIZE + 3 + 1)) as u64);
        assert_eq!(m.caveat(), None);
        let scalar = export(17, true, true, "/input/planes");
        let m = LeelaOnnx::read(&scalar, &OnnxNames::default()).expect("reads");
        assert_eq!(m.value.as_ref().map(|v| v.name.as_str()), Some("/output/value"));
        assert!(!m.has_wdl());
        assert!(m.describe().contains("scalar value, moves left"), "{}", m.describe());
    }

    #[test]
    fn a_wdl_head_without_its_softmax_gets_one() {
        let bytes = export(17, false, false, "/input/planes");
        let m = LeelaOnnx::read(&bytes, &OnnxNames::default()).expect("reads");
        assert!(!m.wdl_softmaxed);
        let wrapped = m.wrap(InputFormat::Classical);
        let ops = |bytes: &[u8]| -> Vec<String> {
            let graph = Fields::new(bytes, "ModelProto")
                .find_map(|f| match f {
                    Ok((7, Value::Bytes(g))) => Some(g),
                    _ => None,
                })
                .expect("a graph");
            Fields::new(graph, "GraphProto")
                .filter_map(|f| match f {
                    Ok((1, Value::Bytes(n))) => Some(node_info(n).expect("a node").op),
                    _ => None,
                })
                .collect()
        };
        let count = |ops: &[String], op: &str| ops.iter().filter(|o| *o == op).count();
        assert_eq!(count(&ops(&bytes), "Softmax"), 0);
        assert_eq!(count(&ops(&wrapped), "Softmax"), 1);
        assert_eq!(count(&ops(&wrapped), "BitShift"), 2);
        // The wrapped model reads back: one int64 input, the package's outputs, the same opset.
        let back = LeelaOnnx::read(&wrapped, &OnnxNames { input: Some(INPUT.into()), ..Default::default() });
        assert!(matches!(back, Err(Lc0OnnxError::Input { .. })), "{back:?}");
    }

    #[test]
    fn what_is_not_an_lc0_export_is_refused_by_name() {
        let old = export(10, true, false, "/input/planes");
        let e = LeelaOnnx::read(&old, &OnnxNames::default()).expect_err("opset 10");
        assert_eq!(e, Lc0OnnxError::Opset { found: 10 });
        assert!(e.to_string().contains("--onnx-opset=17"));
        let clash = export(17, true, false, "planes");
        let e = LeelaOnnx::read(&clash, &OnnxNames::default()).expect_err("a clash");
        assert_eq!(e, Lc0OnnxError::NameClash { name: "planes".into() });
        let mut g = GraphBuilder::new();
        let a = g.input("tokens", ElemType::I64, vec![Dim::Named("batch"), Dim::Fixed(5)]);
        g.output(&a, "out", ElemType::I64, vec![Dim::Named("batch"), Dim::Fixed(5)]);
        let e = LeelaOnnx::read(&g.finish(17, "t", ""), &OnnxNames::default()).expect_err("not planes");
        assert!(e.to_string().contains("`tokens` is int64 [?, 5]"), "{e}");
        let mut g = GraphBuilder::new();
        let x = g.input(
            "/input/planes",
            ElemType::F32,
            vec![Dim::Fixed(333), Dim::Fixed(112), Dim::Fixed(8), Dim::Fixed(8)],
        );
        g.output(
            &x,
            "/output/policy",
            ElemType::F32,
            vec![Dim::Fixed(333), Dim::Fixed(112), Dim::Fixed(8), Dim::Fixed(8)],
        );
        let e = LeelaOnnx::read(&g.finish(17, "t", ""), &OnnxNames::default()).expect_err("a fixed batch");
        assert_eq!(e, Lc0OnnxError::FixedBatch { batch: 333 });
        let unnamed = export(17, true, false, "");
        assert!(matches!(LeelaOnnx::read(&unnamed, &OnnxNames::default()), Err(Lc0OnnxError::Input { .. })));
        let bytes = export(17, true, false, "/input/planes");
        let names = OnnxNames { policy: Some("/output/logits".into()), ..Default::default() };
        let e = LeelaOnnx::read(&bytes, &names).expect_err("no such output");
        assert!(matches!(e, Lc0OnnxError::Output { what: "policy", .. }), "{e}");
        for cut in [3, bytes.len() / 2, bytes.len() - 1] {
            assert!(LeelaOnnx::read(&bytes[..cut], &OnnxNames::default()).is_err(), "cut at {cut}");
        }
    }
}
