//! An lc0 weights file read into a network's layers: gzip, then the protobuf `Net` (field numbers of lc0's
//! `net.proto`), each `Layer` decoded from its encoding (LINEAR16 as lc0 dequantises it:
//! `u16 / 65535 · (max − min) + min` in single precision; float16, bfloat16 and float32 as they are), and
//! batch normalisation folded into each convolution's weights and biases as lc0 folds it (the file's
//! `bn_stddivs` are variances; ε = 1e-5). Two bodies are read: a residual tower of 3×3 convolutions, and an
//! attention body (Leela's BT family: a per-square embedding with the dense position encoding or lc0's fixed position table, then
//! transformer encoder layers with smolgen) with the attention policy; for nets with several policy or value
//! heads one of each is taken by name, lc0's "vanilla" and "winner" unless asked otherwise.

use std::collections::HashMap;
use std::io::Read;

use super::error::Lc0Error;
use super::format::{
    BodyFormat, InputEmbedding, NetFormat, PolicyFormat, RawNetFormat, ValueFormat, WeightsPresence,
};
use super::wire::{Fields, Value};

/// lc0's magic number (`Net.magic`).
pub const MAGIC: u32 = 0x1c0;

/// The largest unpacked network read (Leela's biggest nets are about 400 MB unpacked).
pub const MAX_UNPACKED: u64 = 1 << 30;

/// The fields of one message by number, each with every value written (repeated fields in order).
struct Message<'a> {
    fields: HashMap<u32, Vec<Value<'a>>>,
}

impl<'a> Message<'a> {
    fn parse(buf: &'a [u8], name: &'static str) -> Result<Message<'a>, Lc0Error> {
        let mut fields: HashMap<u32, Vec<Value<'a>>> = HashMap::new();
        for f in Fields::new(buf, name) {
            let (n, v) = f?;
            fields.entry(n).or_default().push(v);
        }
        Ok(Message { fields })
    }

    fn last(&self, n: u32) -> Option<Value<'a>> {
        self.fields.get(&n).and_then(|v| v.last().copied())
    }

    fn varint(&self, n: u32) -> Option<u64> {
        match self.last(n) {
            Some(Value::Varint(v)) => Some(v),
            _ => None,
        }
    }

    fn bytes(&self, n: u32) -> Option<&'a [u8]> {
        match self.last(n) {
            Some(Value::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    fn all_bytes(&self, n: u32) -> Vec<&'a [u8]> {
        self.fields
            .get(&n)
            .map(|v| v.iter().filter_map(|x| if let Value::Bytes(b) = x { Some(*b) } else { None }).collect())
            .unwrap_or_default()
    }

    fn sub(&self, n: u32, name: &'static str) -> Result<Option<Message<'a>>, Lc0Error> {
        self.bytes(n).map(|b| Message::parse(b, name)).transpose()
    }

    fn has(&self, n: u32) -> bool {
        self.fields.contains_key(&n)
    }

    fn f32(&self, n: u32) -> Option<f32> {
        match self.last(n) {
            Some(Value::Fixed32(v)) => Some(f32::from_bits(v)),
            _ => None,
        }
    }
}

/// A layer's values, decoded.
pub type Floats = Vec<f32>;

/// How a `Layer`'s bytes are encoded (`Layer.encoding`, else `Format.weights_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Linear16,
    Float16,
    BFloat16,
    Float32,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::Linear16 => "LINEAR16",
            Encoding::Float16 => "FLOAT16",
            Encoding::BFloat16 => "BFLOAT16",
            Encoding::Float32 => "FLOAT32",
        }
    }
}

/// Reads layers with the file's default encoding.
struct Decoder {
    default: Option<Encoding>,
}

impl Decoder {
    /// The values of `Layer` message `n` of `m` (empty when absent), named `name` in errors.
    fn layer(&self, m: &Message<'_>, n: u32, name: &str) -> Result<Floats, Lc0Error> {
        let Some(layer) = m.sub(n, "Weights.Layer")? else {
            return Ok(Vec::new());
        };
        let encoding = match layer.varint(4) {
            None | Some(0) => self.default.ok_or_else(|| Lc0Error::Unsupported {
                field: "format.weights_encoding",
                value: "UNKNOWN".into(),
                what: format!("layer {name} has no encoding and the file names none"),
            })?,
            Some(1) => Encoding::Linear16,
            Some(2) => Encoding::Float16,
            Some(3) => Encoding::BFloat16,
            Some(4) => Encoding::Float32,
            Some(other) => {
                return Err(Lc0Error::Unsupported {
                    field: "Weights.Layer.encoding",
                    value: other.to_string(),
                    what: format!("an encoding this reader does not know (layer {name})"),
                });
            }
        };
        let params = layer.bytes(3).unwrap_or_default();
        let width = if encoding == Encoding::Float32 { 4 } else { 2 };
        if params.len() % width != 0 {
            return Err(Lc0Error::Encoding {
                layer: name.into(),
                bytes: params.len(),
                encoding: encoding.name(),
            });
        }
        let min = layer.f32(1).unwrap_or(0.0);
        let range = layer.f32(2).unwrap_or(0.0) - min;
        Ok(match encoding {
            Encoding::Linear16 => params
                .chunks_exact(2)
                .map(|c| f32::from(u16::from_le_bytes([c[0], c[1]])) / 65535.0f32 * range + min)
                .collect(),
            Encoding::Float16 => {
                params.chunks_exact(2).map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect()
            }
            Encoding::BFloat16 => params
                .chunks_exact(2)
                .map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16))
                .collect(),
            Encoding::Float32 => {
                params.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
            }
        })
    }

    fn conv(&self, m: &Message<'_>, n: u32, name: &str) -> Result<Option<ConvBlock>, Lc0Error> {
        let Some(block) = m.sub(n, "Weights.ConvBlock")? else {
            return Ok(None);
        };
        let l = |i: u32, part: &str| self.layer(&block, i, &format!("{name}.{part}"));
        let raw = RawConv {
            weights: l(1, "weights")?,
            biases: l(2, "biases")?,
            bn_means: l(3, "bn_means")?,
            bn_stddivs: l(4, "bn_stddivs")?,
            bn_gammas: l(5, "bn_gammas")?,
            bn_betas: l(6, "bn_betas")?,
        };
        if raw.weights.is_empty() {
            return Ok(None);
        }
        raw.fold(name).map(Some)
    }

    /// The dense layer of `m`'s fields `wn` (weights) and `bn` (biases), named `{name}_w` and `{name}_b`.
    fn dense(&self, m: &Message<'_>, wn: u32, bn: u32, name: &str) -> Result<Dense, Lc0Error> {
        Ok(Dense {
            weights: self.layer(m, wn, &format!("{name}_w"))?,
            biases: self.layer(m, bn, &format!("{name}_b"))?,
        })
    }

    /// The layer norm of `m`'s fields `gn` (gammas) and `bn` (betas), named `{name}_gammas` and
    /// `{name}_betas`.
    fn ln(&self, m: &Message<'_>, gn: u32, bn: u32, name: &str) -> Result<LayerNorm, Lc0Error> {
        Ok(LayerNorm {
            gammas: self.layer(m, gn, &format!("{name}_gammas"))?,
            betas: self.layer(m, bn, &format!("{name}_betas"))?,
        })
    }
}

/// IEEE half precision to single (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: normalise.
            let shift = f.leading_zeros() - 21;
            let f = (f << shift) & 0x3ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (f << 13)
        }
        (31, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 127 - 15) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

/// A convolution as stored, before batch normalisation is folded in.
struct RawConv {
    weights: Floats,
    biases: Floats,
    bn_means: Floats,
    bn_stddivs: Floats,
    bn_gammas: Floats,
    bn_betas: Floats,
}

impl RawConv {
    /// Folds batch normalisation into the weights and biases, in lc0's order of operations.
    fn fold(mut self, name: &str) -> Result<ConvBlock, Lc0Error> {
        let outputs = if self.biases.is_empty() { self.bn_means.len() } else { self.biases.len() };
        if outputs == 0 || !self.weights.len().is_multiple_of(outputs) {
            return Err(Lc0Error::Shape {
                layer: format!("{name}.weights"),
                expected: outputs.max(1),
                found: self.weights.len(),
            });
        }
        if self.biases.is_empty() {
            self.biases = vec![0.0; outputs];
        }
        if !self.bn_means.is_empty() {
            if self.bn_betas.is_empty() {
                self.bn_betas = vec![0.0; outputs];
                self.bn_gammas = vec![1.0; outputs];
            }
            for (part, v) in [
                ("bn_means", &self.bn_means),
                ("bn_stddivs", &self.bn_stddivs),
                ("bn_gammas", &self.bn_gammas),
                ("bn_betas", &self.bn_betas),
            ] {
                if v.len() != outputs {
                    return Err(Lc0Error::Shape {
                        layer: format!("{name}.{part}"),
                        expected: outputs,
                        found: v.len(),
                    });
                }
            }
            let inputs = self.weights.len() / outputs;
            for o in 0..outputs {
                let gamma = self.bn_gammas[o] * (1.0f32 / (self.bn_stddivs[o] + 1e-5f32).sqrt());
                let mean = self.bn_means[o] - self.biases[o];
                for w in &mut self.weights[o * inputs..(o + 1) * inputs] {
                    *w *= gamma;
                }
                self.biases[o] = -gamma * mean + self.bn_betas[o];
            }
        }
        Ok(ConvBlock { weights: self.weights, biases: self.biases })
    }
}

/// A convolution with batch normalisation folded in: weights `[out][in][k][k]`, one bias per output.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvBlock {
    /// The weights, output-major.
    pub weights: Floats,
    /// The biases.
    pub biases: Floats,
}

impl ConvBlock {
    /// The output channels.
    pub fn outputs(&self) -> usize {
        self.biases.len()
    }

    /// Input channels × kernel area.
    pub fn fan_in(&self) -> usize {
        self.weights.len() / self.biases.len().max(1)
    }
}

/// A fully connected layer: weights `[out][in]`, one bias per output.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// The weights, output-major.
    pub weights: Floats,
    /// The biases.
    pub biases: Floats,
}

impl Dense {
    /// The outputs.
    pub fn outputs(&self) -> usize {
        self.biases.len()
    }

    /// The inputs.
    pub fn inputs(&self) -> usize {
        self.weights.len() / self.biases.len().max(1)
    }
}

/// A squeeze-excitation unit: pool, dense to `w1`'s outputs with the activation, dense to twice the
/// channels (a scale through a sigmoid, then a shift).
#[derive(Debug, Clone, PartialEq)]
pub struct SeUnit {
    /// The first dense layer.
    pub fc1: Dense,
    /// The second (2 × channels outputs: scales, then shifts).
    pub fc2: Dense,
}

/// One residual block.
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// The first 3×3 convolution.
    pub conv1: ConvBlock,
    /// The second.
    pub conv2: ConvBlock,
    /// Its squeeze-excitation unit, if any.
    pub se: Option<SeUnit>,
}

/// A layer normalisation over the channels of each square: `(x − mean) / sqrt(var + ε) · gammas + betas`.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm {
    /// The scales.
    pub gammas: Floats,
    /// The shifts.
    pub betas: Floats,
}

/// A feed-forward block: a dense layer with the feed-forward activation, then a dense layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Ffn {
    /// The first layer (`dense1`, `[dff][embedding]`).
    pub dense1: Dense,
    /// The second (`dense2`, `[embedding][dff]`).
    pub dense2: Dense,
}

/// Smolgen: attention logits generated from the whole board, added to each head's logits.
#[derive(Debug, Clone, PartialEq)]
pub struct Smolgen {
    /// Each square's embedding compressed, no bias: `[hidden channels][embedding]`.
    pub compress: Floats,
    /// The compressed board (64 × hidden channels) to the hidden size, with the smolgen activation.
    pub dense1: Dense,
    /// The layer norm after it (ε = 1e-3).
    pub ln1: LayerNorm,
    /// The hidden size to heads × the generator width, with the smolgen activation.
    pub dense2: Dense,
    /// The layer norm after it (ε = 1e-3).
    pub ln2: LayerNorm,
}

/// One transformer encoder layer: multi-head attention, then a feed-forward block, each added back to its
/// input (scaled by α) under a layer norm.
#[derive(Debug, Clone, PartialEq)]
pub struct EncoderLayer {
    /// The queries (`[d_model][embedding]`).
    pub q: Dense,
    /// The keys.
    pub k: Dense,
    /// The values.
    pub v: Dense,
    /// The attention's output layer (`[embedding][d_model]`).
    pub out: Dense,
    /// Smolgen, if the layer has it.
    pub smolgen: Option<Smolgen>,
    /// The layer norm after the attention.
    pub ln1: LayerNorm,
    /// The feed-forward block.
    pub ffn: Ffn,
    /// The layer norm after it.
    pub ln2: LayerNorm,
}

/// Per-square, per-channel gates after the embedding: `x · mult + add`, each stored `[embedding][64]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gates {
    /// The multiplicative gate (`ip_mult_gate`).
    pub mult: Floats,
    /// The additive gate (`ip_add_gate`).
    pub add: Floats,
}

/// An attention body with the dense position encoding (`INPUT_EMBEDDING_PE_DENSE`).
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionBody {
    /// The dense position encoding and the layers that follow the embedding with it
    /// (`INPUT_EMBEDDING_PE_DENSE`); `None` for lc0's fixed position table (`INPUT_EMBEDDING_PE_MAP`, older BT
    /// nets: each square's 112 planes followed by its row of [`super::position_map::position_map`]).
    pub dense: Option<DenseEmbedding>,
    /// Each square's 112 planes and position encoding to the embedding (`ip_emb`), with the default
    /// activation.
    pub embedding: Dense,
    /// The input gates, if any.
    pub gates: Option<Gates>,
    /// The attention heads (`headcount`).
    pub heads: usize,
    /// The encoder layers.
    pub encoders: Vec<EncoderLayer>,
    /// Smolgen's generator shared by all layers (`smolgen_w`, `[64 × 64][generator width]`); empty without
    /// smolgen.
    pub smolgen_w: Floats,
}

/// The dense position encoding of an attention body and the layers lc0 runs with it.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseEmbedding {
    /// The dense position encoding from the first 12 planes of all squares (`ip_emb_preproc`,
    /// `[64 × encoding][64 × 12]`, inputs square-major).
    pub position: Dense,
    /// The layer norm after the embedding (ε = 1e-3).
    pub embedding_ln: LayerNorm,
    /// The embedding's feed-forward block (`ip_emb_ffn`).
    pub embedding_ffn: Ffn,
    /// The layer norm after it (ε = 1e-3).
    pub embedding_ffn_ln: LayerNorm,
}

/// The body of a network.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A 3×3 input convolution and residual blocks (the tensor stays `[channels][8][8]`).
    Residual {
        /// The input convolution (112 planes → filters).
        input: ConvBlock,
        /// The residual tower.
        blocks: Vec<Residual>,
    },
    /// An attention body (the tensor is `[64 squares][embedding]`).
    Attention(Box<AttentionBody>),
}

/// The attention policy head: the squares' embedding, optional encoder layers, a query and a key per square;
/// the logit of from → to is `query(from) · key(to) / sqrt(d)`, and promotions add a per-piece offset from the
/// keys of the eighth rank.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionPolicy {
    /// The policy embedding (`ip_pol`), with the default activation.
    pub embedding: Dense,
    /// The policy's own encoder layers (`pol_encoder`), usually none.
    pub encoders: Vec<EncoderLayer>,
    /// Their heads (`pol_headcount`).
    pub heads: usize,
    /// The queries (`ip2_pol`, "wq").
    pub query: Dense,
    /// The keys (`ip3_pol`, "wk").
    pub key: Dense,
    /// The promotion offsets (`ip4_pol_w`, `[4][d]`): each row dotted with the key of the eighth-rank target
    /// square; rows 0, 1 and 2, each plus row 3, offset the queen, rook and bishop promotions.
    pub promotion: Floats,
}

/// The policy head's layers.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyHead {
    /// A 1×1 convolution, then a dense layer to 1858.
    Classical {
        /// The convolution.
        conv: ConvBlock,
        /// The dense layer.
        dense: Dense,
    },
    /// A 3×3 convolution with the activation, then a 3×3 convolution to 80 planes (73 used).
    Convolution {
        /// The first convolution (`policy1`).
        conv1: ConvBlock,
        /// The second (`policy`).
        conv2: ConvBlock,
    },
    /// Attention between the squares (attention bodies).
    Attention(Box<AttentionPolicy>),
}

/// A head that ends in dense layers: a 1×1 convolution, a dense layer with the activation, a last dense
/// layer (the value head's 3 or 1 outputs, the moves-left head's 1). On an attention body the "convolution"
/// is the per-square embedding (`ip_val`, `ip_mov`: `[channels][embedding]`, the same as a 1×1 convolution's
/// weights) and its output is flattened square-major (`square × channels + channel`), not channel-major.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseHead {
    /// The 1×1 convolution.
    pub conv: ConvBlock,
    /// The hidden dense layer.
    pub fc1: Dense,
    /// The output layer.
    pub fc2: Dense,
}

/// A network read from an lc0 weights file.
#[derive(Debug, Clone, PartialEq)]
pub struct Net {
    /// What kind of network it is.
    pub format: NetFormat,
    /// `Net.license`, as written.
    pub license: String,
    /// `Net.min_version` (major, minor, patch).
    pub min_version: (u64, u64, u64),
    /// The body.
    pub body: Body,
    /// The policy head.
    pub policy: PolicyHead,
    /// The value head.
    pub value: DenseHead,
    /// The moves-left head, when the format has one.
    pub moves_left: Option<DenseHead>,
}

/// The planes lc0 feeds a network.
pub const INPUT_PLANES: usize = 112;

/// The policy head lc0 uses unless told otherwise (its `policy_head` backend option).
pub const DEFAULT_POLICY_HEAD: &str = "vanilla";
/// The value head lc0 uses unless told otherwise (its `value_head` backend option).
pub const DEFAULT_VALUE_HEAD: &str = "winner";

/// The policy heads of `PolicyHeads` by lc0's names (`optimistic_st` is lc0's "optimistic").
const POLICY_HEADS: [(&str, u32); 4] = [("vanilla", 3), ("optimistic", 4), ("soft", 5), ("opponent", 6)];
/// The value heads of `ValueHeads` by lc0's names.
const VALUE_HEADS: [(&str, u32); 3] = [("winner", 1), ("q", 2), ("st", 3)];

/// The head called `name` in a `PolicyHeads` or `ValueHeads` message (`table`: lc0's names and their fields),
/// or an error naming the heads the net has.
fn named_head<'a>(
    heads: &Message<'a>,
    table: &[(&str, u32)],
    name: &str,
    kind: &str,
    message: &'static str,
) -> Result<Message<'a>, Lc0Error> {
    let field = table.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    if let Some(head) = field.map(|f| heads.sub(f, message)).transpose()?.flatten() {
        return Ok(head);
    }
    let have: Vec<&str> = table.iter().filter(|(_, f)| heads.has(*f)).map(|(n, _)| *n).collect();
    Err(Lc0Error::Missing(format!("{kind} head \"{name}\" (it has: {})", have.join(", "))))
}

/// How many times its packed size a network may unpack to beyond [`UNPACK_FLOOR`]: weights barely compress
/// (the fixture nets of random weights unpack to at most 20 times their size, real nets to about 1.4), so
/// more is a gzip bomb.
pub const MAX_RATIO: u64 = 64;

/// What any gzip stream may unpack to, whatever its packed size.
pub const UNPACK_FLOOR: u64 = 64 << 20;

/// The most bytes a gzip stream of `packed` bytes is unpacked to: [`MAX_UNPACKED`] at most, and no more than
/// [`MAX_RATIO`] times its size above [`UNPACK_FLOOR`], so that memory stays bounded by the file's size.
pub fn unpack_limit(packed: u64) -> u64 {
    packed.saturating_mul(MAX_RATIO).clamp(UNPACK_FLOOR, MAX_UNPACKED)
}

/// A `.pb.gz` file's protobuf: gzip unpacked, at most [`unpack_limit`] bytes (more is refused, having
/// unpacked no more than that: a corrupt file or a gzip bomb).
pub fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, Lc0Error> {
    gunzip_at_most(bytes, unpack_limit(bytes.len() as u64))
}

fn gunzip_at_most(bytes: &[u8], limit: u64) -> Result<Vec<u8>, Lc0Error> {
    let mut out = Vec::new();
    let mut decoder = flate2::read::GzDecoder::new(bytes).take(limit + 1);
    decoder.read_to_end(&mut out).map_err(|e| Lc0Error::Gzip(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(Lc0Error::TooLarge { limit, packed: bytes.len() as u64 });
    }
    Ok(out)
}

impl Net {
    /// Reads a `.pb.gz` weights file's bytes (gzip unpacked at most [`MAX_UNPACKED`] bytes), with lc0's
    /// default heads.
    pub fn from_gz(bytes: &[u8]) -> Result<Net, Lc0Error> {
        Net::from_gz_heads(bytes, DEFAULT_POLICY_HEAD, DEFAULT_VALUE_HEAD)
    }

    /// As [`Net::from_gz`], taking the named policy and value heads of a multi-head network (lc0's names:
    /// "vanilla", "optimistic", "soft", "opponent"; "winner", "q", "st").
    pub fn from_gz_heads(bytes: &[u8], policy_head: &str, value_head: &str) -> Result<Net, Lc0Error> {
        Net::from_proto_heads(&gunzip(bytes)?, policy_head, value_head)
    }

    /// Reads an unpacked `Net` message, with lc0's default heads.
    pub fn from_proto(bytes: &[u8]) -> Result<Net, Lc0Error> {
        Net::from_proto_heads(bytes, DEFAULT_POLICY_HEAD, DEFAULT_VALUE_HEAD)
    }

    /// Reads an unpacked `Net` message, taking the named heads (see [`Net::from_gz_heads`]).
    pub fn from_proto_heads(bytes: &[u8], policy_head: &str, value_head: &str) -> Result<Net, Lc0Error> {
        let net = Message::parse(bytes, "Net")?;
        let magic = match net.last(1) {
            Some(Value::Fixed32(m)) => m,
            _ => 0,
        };
        if magic != MAGIC {
            return Err(Lc0Error::Magic { found: magic });
        }
        let license = net.bytes(2).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
        let min_version = match net.sub(3, "EngineVersion")? {
            Some(v) => (v.varint(1).unwrap_or(0), v.varint(2).unwrap_or(0), v.varint(3).unwrap_or(0)),
            None => (0, 0, 0),
        };
        // lc0 0.32 reads nets that ask for up to 0.32; newer ones may hold what this reader does not know.
        if (min_version.0, min_version.1) > (0, 32) {
            return Err(Lc0Error::TooNew {
                version: format!("{}.{}.{}", min_version.0, min_version.1, min_version.2),
            });
        }
        let format = net.sub(4, "Format")?;
        let (encoding, nf) = match &format {
            Some(f) => (f.varint(1), f.sub(2, "NetworkFormat")?),
            None => (None, None),
        };
        let raw = nf.as_ref().map(|n| RawNetFormat {
            input: n.varint(1),
            network: n.varint(3),
            policy: n.varint(4),
            value: n.varint(5),
            moves_left: n.varint(6),
            default_activation: n.varint(7),
            smolgen_activation: n.varint(8),
            ffn_activation: n.varint(9),
            input_embedding: n.varint(10),
        });
        let default = match encoding {
            None | Some(0) => None,
            Some(1) => Some(Encoding::Linear16),
            Some(other) => {
                return Err(Lc0Error::Unsupported {
                    field: "format.weights_encoding",
                    value: other.to_string(),
                    what: "only LINEAR16 is defined".into(),
                });
            }
        };
        let weights = net.sub(10, "Weights")?;
        let presence = weights
            .as_ref()
            .map(|w| WeightsPresence {
                encoder: w.has(27),
                smolgen_w: w.has(35),
                policy_heads: w.has(45),
                value_heads: w.has(44),
            })
            .unwrap_or_default();
        let format = raw.unwrap_or_default().resolve(raw.is_some(), presence)?;
        if net.has(11) && weights.is_none() {
            return Err(Lc0Error::Unsupported {
                field: "onnx_model",
                value: "present".into(),
                what: "an ONNX model wrapped in a weights file: read it with `embedded_onnx`".into(),
            });
        }
        let w = weights.ok_or_else(|| Lc0Error::Missing("weights".into()))?;
        let d = Decoder { default };
        if format.body == BodyFormat::Attention {
            return Net::read_attention(&w, &d, format, license, min_version, policy_head, value_head);
        }
        if w.has(27) || w.has(25) {
            return Err(Lc0Error::Unsupported {
                field: "weights.encoder",
                value: "present".into(),
                what: "encoder layers in a network whose format says it is residual".into(),
            });
        }
        if w.has(44) || w.has(45) {
            return Err(Lc0Error::Unsupported {
                field: "weights.value_heads / weights.policy_heads",
                value: "present".into(),
                what: "multi-head residual networks, not read yet".into(),
            });
        }
        for (name, n) in [(DEFAULT_POLICY_HEAD, policy_head), (DEFAULT_VALUE_HEAD, value_head)] {
            if name != n {
                return Err(Lc0Error::Missing(format!(
                    "head \"{n}\" (a single-head network has \"{name}\" only)"
                )));
            }
        }
        Net::read_weights(&w, &d, format, license, min_version)
    }

    /// Reads a residual body and its heads.
    fn read_weights(
        w: &Message<'_>,
        d: &Decoder,
        format: NetFormat,
        license: String,
        min_version: (u64, u64, u64),
    ) -> Result<Net, Lc0Error> {
        let input = need(d.conv(w, 1, "input")?, "input convolution (weights.input)")?;
        let filters = input.outputs();
        check(&input.weights, filters * INPUT_PLANES * 9, "input.weights")?;
        let mut blocks = Vec::new();
        for (i, block) in w.all_bytes(2).into_iter().enumerate() {
            blocks.push(read_residual(d, block, i, filters)?);
        }
        let policy = read_residual_policy(d, w, format.policy, filters)?;
        let value = DenseHead {
            conv: need(d.conv(w, 6, "value")?, "value convolution (weights.value)")?,
            fc1: d.dense(w, 7, 8, "ip1_val")?,
            fc2: d.dense(w, 9, 10, "ip2_val")?,
        };
        check_head(&value, filters, if format.value == ValueFormat::Wdl { 3 } else { 1 }, "val")?;
        let moves_left = if format.moves_left {
            let head = DenseHead {
                conv: need(d.conv(w, 12, "moves_left")?, "moves-left convolution (weights.moves_left)")?,
                fc1: d.dense(w, 13, 14, "ip1_mov")?,
                fc2: d.dense(w, 15, 16, "ip2_mov")?,
            };
            check_head(&head, filters, 1, "mov")?;
            Some(head)
        } else {
            None
        };
        Ok(Net {
            format,
            license,
            min_version,
            body: Body::Residual { input, blocks },
            policy,
            value,
            moves_left,
        })
    }

    /// Reads an attention body and its heads (`MultiHeadWeights` of lc0: multi-head fields, or the single
    /// head's fields at the top level of older files).
    fn read_attention(
        w: &Message<'_>,
        d: &Decoder,
        format: NetFormat,
        license: String,
        min_version: (u64, u64, u64),
        policy_head: &str,
        value_head: &str,
    ) -> Result<Net, Lc0Error> {
        if format.embedding == InputEmbedding::None {
            return Err(Lc0Error::Unsupported {
                field: "format.network_format.input_embedding",
                value: "0 (NONE)".into(),
                what: "an attention body without a position encoding; lc0's fixed table (1) and the dense \
                       encoding (2) are read"
                    .into(),
            });
        }
        if w.has(2) {
            return Err(Lc0Error::Unsupported {
                field: "weights.residual",
                value: "present".into(),
                what: "residual blocks before an attention body (a hybrid lc0's CPU backend does not run)"
                    .into(),
            });
        }
        let body = read_attention_body(d, w, format.embedding)?;
        let e = body.embedding.outputs();
        let policy = read_attention_policy(d, w, policy_head)?;
        check_attention_policy(&policy, e, &body.smolgen_w)?;
        // Value: a head of `value_heads`, or the top-level fields.
        let value = if let Some(heads_msg) = w.sub(44, "Weights.ValueHeads")? {
            let head = named_head(&heads_msg, &VALUE_HEADS, value_head, "value", "Weights.ValueHead")?;
            embedded_head(d, &head, [1, 2, 3, 4, 5, 6], "val")?
        } else {
            if value_head != DEFAULT_VALUE_HEAD {
                return Err(Lc0Error::Missing(format!(
                    "value head \"{value_head}\" (the net has \"winner\" only)"
                )));
            }
            embedded_head(d, w, [29, 30, 7, 8, 9, 10], "val")?
        };
        check_embedded_head(&value, e, if format.value == ValueFormat::Wdl { 3 } else { 1 }, "val")?;
        let moves_left = if format.moves_left {
            let head = embedded_head(d, w, [31, 32, 13, 14, 15, 16], "mov")?;
            check_embedded_head(&head, e, 1, "mov")?;
            Some(head)
        } else {
            None
        };
        Ok(Net {
            format,
            license,
            min_version,
            body: Body::Attention(Box::new(body)),
            policy: PolicyHead::Attention(Box::new(policy)),
            value,
            moves_left,
        })
    }

    /// The width of the body: the residual tower's filters, or the attention body's embedding.
    pub fn filters(&self) -> usize {
        match &self.body {
            Body::Residual { input, .. } => input.outputs(),
            Body::Attention(a) => a.embedding.outputs(),
        }
    }

    /// The residual blocks or encoder layers.
    pub fn layers(&self) -> usize {
        match &self.body {
            Body::Residual { blocks, .. } => blocks.len(),
            Body::Attention(a) => a.encoders.len(),
        }
    }

    /// A one-line description: "6 residual blocks × 64 filters, SE, convolution policy, WDL value", or
    /// "10 encoder layers × 768 embedding, 24 heads, smolgen, attention policy, WDL value".
    pub fn describe(&self) -> String {
        let body = match &self.body {
            Body::Residual { blocks, .. } => {
                let se = if blocks.iter().any(|r| r.se.is_some()) { ", squeeze-excitation" } else { "" };
                format!("{} residual blocks × {} filters{se}", blocks.len(), self.filters())
            }
            Body::Attention(a) => {
                let smolgen = if a.encoders.iter().any(|l| l.smolgen.is_some()) { ", smolgen" } else { "" };
                let table = if a.dense.is_none() { ", lc0's position table" } else { "" };
                format!(
                    "{} encoder layers × {} embedding, {} heads{smolgen}{table}",
                    a.encoders.len(),
                    self.filters(),
                    a.heads
                )
            }
        };
        let policy = match self.format.policy {
            PolicyFormat::Classical => "classical policy",
            PolicyFormat::Convolution => "convolution policy",
            PolicyFormat::Attention => "attention policy",
        };
        let value = match self.format.value {
            ValueFormat::Wdl => "WDL value",
            ValueFormat::Scalar => "scalar value",
        };
        let ml = if self.moves_left.is_some() { ", moves-left head" } else { "" };
        format!(
            "{body}, {policy}, {value}{ml}, {} input, {}",
            serde_json::to_value(self.format.input)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            if self.format.mish { "mish" } else { "relu" }
        )
    }
}

/// The convolution `c`, or an error that the one described by `name` is missing.
fn need(c: Option<ConvBlock>, name: &str) -> Result<ConvBlock, Lc0Error> {
    c.ok_or_else(|| Lc0Error::Missing(name.into()))
}

/// Reads residual block `i` (a `Weights.Residual` message) of a tower of `filters` channels.
fn read_residual(d: &Decoder, block: &[u8], i: usize, filters: usize) -> Result<Residual, Lc0Error> {
    let r = Message::parse(block, "Weights.Residual")?;
    let conv1 = need(d.conv(&r, 1, &format!("residual[{i}].conv1"))?, &format!("residual[{i}].conv1"))?;
    let conv2 = need(d.conv(&r, 2, &format!("residual[{i}].conv2"))?, &format!("residual[{i}].conv2"))?;
    check(&conv1.weights, filters * filters * 9, &format!("residual[{i}].conv1.weights"))?;
    check(&conv2.weights, filters * filters * 9, &format!("residual[{i}].conv2.weights"))?;
    check(&conv1.biases, filters, &format!("residual[{i}].conv1.biases"))?;
    check(&conv2.biases, filters, &format!("residual[{i}].conv2.biases"))?;
    let se = match r.sub(3, "Weights.SEunit")? {
        Some(se) => Some(read_se(d, &se, i, filters)?),
        None => None,
    };
    Ok(Residual { conv1, conv2, se })
}

/// Reads the squeeze-excitation unit `se` of residual block `i`, checked against `filters` channels.
fn read_se(d: &Decoder, se: &Message<'_>, i: usize, filters: usize) -> Result<SeUnit, Lc0Error> {
    let name = |p: &str| format!("residual[{i}].se.{p}");
    let fc1 = Dense { weights: d.layer(se, 1, &name("w1"))?, biases: d.layer(se, 2, &name("b1"))? };
    let fc2 = Dense { weights: d.layer(se, 3, &name("w2"))?, biases: d.layer(se, 4, &name("b2"))? };
    if fc1.outputs() == 0 {
        return Err(Lc0Error::Shape { layer: name("b1"), expected: 1, found: 0 });
    }
    check(&fc1.weights, fc1.outputs() * filters, &name("w1"))?;
    check(&fc2.biases, 2 * filters, &name("b2"))?;
    check(&fc2.weights, 2 * filters * fc1.outputs(), &name("w2"))?;
    Ok(SeUnit { fc1, fc2 })
}

/// Reads the policy head of a residual body of `filters` channels, in the format `policy`.
fn read_residual_policy(
    d: &Decoder,
    w: &Message<'_>,
    policy: PolicyFormat,
    filters: usize,
) -> Result<PolicyHead, Lc0Error> {
    match policy {
        PolicyFormat::Classical => {
            let conv = need(d.conv(w, 3, "policy")?, "policy convolution (weights.policy)")?;
            check(&conv.weights, conv.outputs() * filters, "policy.weights")?;
            let dense = d.dense(w, 4, 5, "ip_pol")?;
            check(&dense.biases, super::policy_index::POLICY_SIZE, "ip_pol_b")?;
            check(&dense.weights, super::policy_index::POLICY_SIZE * conv.outputs() * 64, "ip_pol_w")?;
            Ok(PolicyHead::Classical { conv, dense })
        }
        PolicyFormat::Convolution => {
            let conv1 = need(d.conv(w, 11, "policy1")?, "policy1 convolution (weights.policy1)")?;
            let conv2 = need(d.conv(w, 3, "policy")?, "policy convolution (weights.policy)")?;
            check(&conv1.weights, filters * filters * 9, "policy1.weights")?;
            check(&conv1.biases, filters, "policy1.biases")?;
            if conv2.outputs() < super::policy_index::CONV_PLANES {
                return Err(Lc0Error::Shape {
                    layer: "policy.biases".into(),
                    expected: 80,
                    found: conv2.outputs(),
                });
            }
            check(&conv2.weights, conv2.outputs() * filters * 9, "policy.weights")?;
            Ok(PolicyHead::Convolution { conv1, conv2 })
        }
        PolicyFormat::Attention => Err(Lc0Error::Unsupported {
            field: "format.network_format.policy",
            value: "3".into(),
            what: "an attention policy on a residual body (SELU embedding), not read yet".into(),
        }),
    }
}

/// Reads an attention body whose position encoding is `embedding` (the fixed table or the dense one).
fn read_attention_body(
    d: &Decoder,
    w: &Message<'_>,
    embedding: InputEmbedding,
) -> Result<AttentionBody, Lc0Error> {
    let position = if embedding == InputEmbedding::PeDense { Some(read_position(d, w)?) } else { None };
    let encoding = position.as_ref().map_or(super::position_map::CHANNELS, |p| p.outputs() / 64);
    let embedding = d.dense(w, 25, 26, "ip_emb")?;
    let e = embedding.outputs();
    if e == 0 {
        return Err(Lc0Error::Missing("input embedding (weights.ip_emb_b)".into()));
    }
    check(&embedding.weights, e * (INPUT_PLANES + encoding), "ip_emb_w")?;
    let gates = read_gates(d, w, e)?;
    let dense = match position {
        Some(position) => Some(read_dense_embedding(d, w, position, e)?),
        None => None,
    };
    let heads = w.varint(28).unwrap_or(0) as usize;
    let smolgen_w = d.layer(w, 35, "smolgen_w")?;
    let mut encoders = Vec::new();
    for (i, bytes) in w.all_bytes(27).into_iter().enumerate() {
        let layer = read_encoder(d, bytes, &format!("encoder[{i}]"))?;
        check_encoder(&layer, e, heads, &smolgen_w, &format!("encoder[{i}]"))?;
        encoders.push(layer);
    }
    if encoders.is_empty() {
        return Err(Lc0Error::Missing("encoder layers (weights.encoder)".into()));
    }
    Ok(AttentionBody { dense, embedding, gates, heads, encoders, smolgen_w })
}

/// Reads the dense position encoding (`ip_emb_preproc`): 64 squares × some channels from 64 × 12 planes.
fn read_position(d: &Decoder, w: &Message<'_>) -> Result<Dense, Lc0Error> {
    let position = d.dense(w, 37, 38, "ip_emb_preproc")?;
    let encoding = position.outputs() / 64;
    if encoding == 0 || !position.outputs().is_multiple_of(64) {
        return Err(Lc0Error::Shape {
            layer: "ip_emb_preproc_b".into(),
            expected: 64,
            found: position.outputs(),
        });
    }
    check(&position.weights, 64 * encoding * 64 * 12, "ip_emb_preproc_w")?;
    Ok(position)
}

/// Reads the input gates of an embedding `e` wide, when both are there (lc0 gates only then).
fn read_gates(d: &Decoder, w: &Message<'_>, e: usize) -> Result<Option<Gates>, Lc0Error> {
    let mult = d.layer(w, 33, "ip_mult_gate")?;
    let add = d.layer(w, 34, "ip_add_gate")?;
    if mult.is_empty() || add.is_empty() {
        return Ok(None);
    }
    check(&mult, e * 64, "ip_mult_gate")?;
    check(&add, e * 64, "ip_add_gate")?;
    Ok(Some(Gates { mult, add }))
}

/// Reads the layers that follow an embedding `e` wide with the dense position encoding `position`.
fn read_dense_embedding(
    d: &Decoder,
    w: &Message<'_>,
    position: Dense,
    e: usize,
) -> Result<DenseEmbedding, Lc0Error> {
    let embedding_ln = d.ln(w, 39, 40, "ip_emb_ln")?;
    check_ln(&embedding_ln, e, "ip_emb_ln")?;
    let ffn_msg = w
        .sub(41, "Weights.FFN")?
        .ok_or_else(|| Lc0Error::Missing("embedding FFN (weights.ip_emb_ffn)".into()))?;
    let embedding_ffn = read_ffn(d, &ffn_msg, "ip_emb_ffn")?;
    check_ffn(&embedding_ffn, e, "ip_emb_ffn")?;
    let embedding_ffn_ln = d.ln(w, 42, 43, "ip_emb_ffn_ln")?;
    check_ln(&embedding_ffn_ln, e, "ip_emb_ffn_ln")?;
    Ok(DenseEmbedding { position, embedding_ln, embedding_ffn, embedding_ffn_ln })
}

/// Reads the attention policy: the head `policy_head` of `policy_heads`, or the top-level fields of a
/// single-head file.
fn read_attention_policy(
    d: &Decoder,
    w: &Message<'_>,
    policy_head: &str,
) -> Result<AttentionPolicy, Lc0Error> {
    if let Some(heads_msg) = w.sub(45, "Weights.PolicyHeads")? {
        let head = named_head(&heads_msg, &POLICY_HEADS, policy_head, "policy", "Weights.PolicyHead")?;
        let own = d.dense(&head, 1, 2, "policy_heads.ip_pol")?;
        let embedding = if own.weights.is_empty() {
            let shared = d.dense(&heads_msg, 1, 2, "policy_heads.ip_pol")?;
            if shared.weights.is_empty() { d.dense(w, 4, 5, "ip_pol")? } else { shared }
        } else {
            own
        };
        return Ok(AttentionPolicy {
            embedding,
            encoders: read_encoders(d, &head.all_bytes(8), "pol_encoder")?,
            heads: head.varint(9).unwrap_or(0) as usize,
            query: d.dense(&head, 3, 4, "ip2_pol")?,
            key: d.dense(&head, 5, 6, "ip3_pol")?,
            promotion: d.layer(&head, 7, "ip4_pol_w")?,
        });
    }
    if policy_head != DEFAULT_POLICY_HEAD {
        return Err(Lc0Error::Missing(format!(
            "policy head \"{policy_head}\" (the net has \"vanilla\" only)"
        )));
    }
    Ok(AttentionPolicy {
        embedding: d.dense(w, 4, 5, "ip_pol")?,
        encoders: read_encoders(d, &w.all_bytes(21), "pol_encoder")?,
        heads: w.varint(24).unwrap_or(0) as usize,
        query: d.dense(w, 17, 18, "ip2_pol")?,
        key: d.dense(w, 19, 20, "ip3_pol")?,
        promotion: d.layer(w, 22, "ip4_pol_w")?,
    })
}

/// Checks an attention policy's shapes against the body's embedding width `e` and its smolgen generator.
fn check_attention_policy(policy: &AttentionPolicy, e: usize, smolgen_w: &[f32]) -> Result<(), Lc0Error> {
    let pe = policy.embedding.outputs();
    if pe == 0 {
        return Err(Lc0Error::Missing("policy embedding (ip_pol_b)".into()));
    }
    check(&policy.embedding.weights, pe * e, "ip_pol_w")?;
    for (i, layer) in policy.encoders.iter().enumerate() {
        check_encoder(layer, pe, policy.heads, smolgen_w, &format!("pol_encoder[{i}]"))?;
    }
    let pd = policy.query.outputs();
    if pd == 0 {
        return Err(Lc0Error::Missing("policy queries (ip2_pol_b)".into()));
    }
    check(&policy.query.weights, pd * pe, "ip2_pol_w")?;
    check(&policy.key.biases, pd, "ip3_pol_b")?;
    check(&policy.key.weights, pd * pe, "ip3_pol_w")?;
    check(&policy.promotion, 4 * pd, "ip4_pol_w")
}

/// Reads a value or moves-left head of an attention body from `m`'s `fields` (the per-square embedding's
/// weights and biases, then the two dense layers'), named `ip_{tag}`, `ip1_{tag}` and `ip2_{tag}`.
fn embedded_head(d: &Decoder, m: &Message<'_>, fields: [u32; 6], tag: &str) -> Result<DenseHead, Lc0Error> {
    let ip = d.dense(m, fields[0], fields[1], &format!("ip_{tag}"))?;
    Ok(DenseHead {
        conv: ConvBlock { weights: ip.weights, biases: ip.biases },
        fc1: d.dense(m, fields[2], fields[3], &format!("ip1_{tag}"))?,
        fc2: d.dense(m, fields[4], fields[5], &format!("ip2_{tag}"))?,
    })
}

fn read_ffn(d: &Decoder, m: &Message<'_>, name: &str) -> Result<Ffn, Lc0Error> {
    let l = |n: u32, part: &str| d.layer(m, n, &format!("{name}.{part}"));
    Ok(Ffn {
        dense1: Dense { weights: l(1, "dense1_w")?, biases: l(2, "dense1_b")? },
        dense2: Dense { weights: l(3, "dense2_w")?, biases: l(4, "dense2_b")? },
    })
}

fn read_encoders(d: &Decoder, layers: &[&[u8]], name: &str) -> Result<Vec<EncoderLayer>, Lc0Error> {
    layers.iter().enumerate().map(|(i, b)| read_encoder(d, b, &format!("{name}[{i}]"))).collect()
}

fn read_encoder(d: &Decoder, bytes: &[u8], name: &str) -> Result<EncoderLayer, Lc0Error> {
    let layer = Message::parse(bytes, "Weights.EncoderLayer")?;
    let mha = layer.sub(1, "Weights.MHA")?.ok_or_else(|| Lc0Error::Missing(format!("{name}.mha")))?;
    if mha.has(10) || mha.has(11) || mha.has(12) {
        return Err(Lc0Error::Unsupported {
            field: "weights.encoder.mha.rpe_q / rpe_k / rpe_v",
            value: "present".into(),
            what: "relative position encodings (RPE), which lc0 0.32 refuses too".into(),
        });
    }
    let l = |m: &Message<'_>, n: u32, part: &str| d.layer(m, n, &format!("{name}.{part}"));
    let dense = |m: &Message<'_>, wn: u32, bn: u32, part: &str| -> Result<Dense, Lc0Error> {
        Ok(Dense { weights: l(m, wn, &format!("{part}_w"))?, biases: l(m, bn, &format!("{part}_b"))? })
    };
    let ln = |m: &Message<'_>, gn: u32, bn: u32, part: &str| -> Result<LayerNorm, Lc0Error> {
        Ok(LayerNorm {
            gammas: l(m, gn, &format!("{part}_gammas"))?,
            betas: l(m, bn, &format!("{part}_betas"))?,
        })
    };
    let smolgen = match mha.sub(9, "Weights.Smolgen")? {
        Some(sg) => Some(Smolgen {
            compress: l(&sg, 1, "mha.smolgen.compress")?,
            dense1: dense(&sg, 2, 3, "mha.smolgen.dense1")?,
            ln1: ln(&sg, 4, 5, "mha.smolgen.ln1")?,
            dense2: dense(&sg, 6, 7, "mha.smolgen.dense2")?,
            ln2: ln(&sg, 8, 9, "mha.smolgen.ln2")?,
        }),
        None => None,
    };
    let ffn = layer.sub(4, "Weights.FFN")?.ok_or_else(|| Lc0Error::Missing(format!("{name}.ffn")))?;
    Ok(EncoderLayer {
        q: dense(&mha, 1, 2, "mha.q")?,
        k: dense(&mha, 3, 4, "mha.k")?,
        v: dense(&mha, 5, 6, "mha.v")?,
        out: dense(&mha, 7, 8, "mha.dense")?,
        smolgen,
        ln1: ln(&layer, 2, 3, "ln1")?,
        ffn: read_ffn(d, &ffn, &format!("{name}.ffn"))?,
        ln2: ln(&layer, 5, 6, "ln2")?,
    })
}

fn check_ln(n: &LayerNorm, width: usize, name: &str) -> Result<(), Lc0Error> {
    check(&n.gammas, width, &format!("{name}_gammas"))?;
    check(&n.betas, width, &format!("{name}_betas"))
}

fn check_dense(x: &Dense, outputs: usize, inputs: usize, name: &str) -> Result<(), Lc0Error> {
    check(&x.biases, outputs, &format!("{name}_b"))?;
    check(&x.weights, outputs * inputs, &format!("{name}_w"))
}

fn check_ffn(f: &Ffn, width: usize, name: &str) -> Result<(), Lc0Error> {
    let dff = f.dense1.outputs();
    if dff == 0 {
        return Err(Lc0Error::Missing(format!("{name}.dense1_b")));
    }
    check_dense(&f.dense1, dff, width, &format!("{name}.dense1"))?;
    check_dense(&f.dense2, width, dff, &format!("{name}.dense2"))
}

/// Checks an encoder layer's shapes against the embedding width and the heads.
fn check_encoder(
    layer: &EncoderLayer,
    width: usize,
    heads: usize,
    smolgen_w: &[f32],
    name: &str,
) -> Result<(), Lc0Error> {
    let d = layer.q.outputs();
    if heads == 0 || d == 0 || !d.is_multiple_of(heads) {
        return Err(Lc0Error::Shape {
            layer: format!("{name}.mha.q_b (by the head count)"),
            expected: heads.max(1),
            found: d,
        });
    }
    check_dense(&layer.q, d, width, &format!("{name}.mha.q"))?;
    check_dense(&layer.k, d, width, &format!("{name}.mha.k"))?;
    check_dense(&layer.v, d, width, &format!("{name}.mha.v"))?;
    check_dense(&layer.out, width, d, &format!("{name}.mha.dense"))?;
    check_ln(&layer.ln1, width, &format!("{name}.ln1"))?;
    check_ffn(&layer.ffn, width, &format!("{name}.ffn"))?;
    check_ln(&layer.ln2, width, &format!("{name}.ln2"))?;
    if let Some(sg) = &layer.smolgen {
        let sname = |p: &str| format!("{name}.mha.smolgen.{p}");
        let hidden_channels = sg.compress.len() / width;
        if hidden_channels == 0 {
            return Err(Lc0Error::Missing(sname("compress")));
        }
        check(&sg.compress, hidden_channels * width, &sname("compress"))?;
        let hidden = sg.dense1.outputs();
        check_dense(&sg.dense1, hidden, 64 * hidden_channels, &sname("dense1"))?;
        check_ln(&sg.ln1, hidden, &sname("ln1"))?;
        let generated = sg.dense2.outputs();
        if generated == 0 || !generated.is_multiple_of(heads) {
            return Err(Lc0Error::Shape {
                layer: sname("dense2_b (by the head count)"),
                expected: heads,
                found: generated,
            });
        }
        check_dense(&sg.dense2, generated, hidden, &sname("dense2"))?;
        check_ln(&sg.ln2, generated, &sname("ln2"))?;
        if smolgen_w.is_empty() {
            return Err(Lc0Error::Missing("smolgen's shared generator (weights.smolgen_w)".into()));
        }
        check(smolgen_w, 64 * 64 * (generated / heads), "smolgen_w")?;
    }
    Ok(())
}

/// Checks a value or moves-left head of an attention body: a per-square embedding of the body's width.
fn check_embedded_head(h: &DenseHead, width: usize, outputs: usize, tag: &str) -> Result<(), Lc0Error> {
    let channels = h.conv.outputs();
    if channels == 0 {
        return Err(Lc0Error::Missing(format!("ip_{tag}_b")));
    }
    check(&h.conv.weights, channels * width, &format!("ip_{tag}_w"))?;
    let hidden = h.fc1.outputs();
    if hidden == 0 {
        return Err(Lc0Error::Missing(format!("ip1_{tag}_b")));
    }
    check(&h.fc1.weights, hidden * channels * 64, &format!("ip1_{tag}_w"))?;
    check_dense(&h.fc2, outputs, hidden, &format!("ip2_{tag}"))
}

fn check(v: &[f32], expected: usize, layer: &str) -> Result<(), Lc0Error> {
    if v.len() == expected {
        Ok(())
    } else {
        Err(Lc0Error::Shape { layer: layer.into(), expected, found: v.len() })
    }
}

fn check_head(h: &DenseHead, filters: usize, outputs: usize, tag: &str) -> Result<(), Lc0Error> {
    let name = if tag == "val" { "value" } else { "moves_left" };
    check(&h.conv.weights, h.conv.outputs() * filters, &format!("{name}.weights"))?;
    check(&h.fc1.weights, h.fc1.outputs() * h.conv.outputs() * 64, &format!("ip1_{tag}_w"))?;
    check(&h.fc2.biases, outputs, &format!("ip2_{tag}_b"))?;
    check(&h.fc2.weights, outputs * h.fc1.outputs(), &format!("ip2_{tag}_w"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn a_gzip_bomb_is_refused_at_its_limit() {
        use std::io::Write;
        let mut packed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        packed.write_all(&vec![0u8; 4 << 20]).expect("gzip");
        let packed = packed.finish().expect("gzip");
        assert!(packed.len() < 16 << 10, "4 MiB of zeros pack small: {}", packed.len());
        assert_eq!(gunzip_at_most(&packed, 4 << 20).expect("at the limit").len(), 4 << 20);
        let e = gunzip_at_most(&packed, 1 << 20).expect_err("over");
        assert_eq!(e, Lc0Error::TooLarge { limit: 1 << 20, packed: packed.len() as u64 });
        assert!(e.to_string().contains("gzip bomb"), "{e}");
        // The limit follows the packed size above the floor, never past MAX_UNPACKED.
        assert_eq!(unpack_limit(1000), UNPACK_FLOOR);
        assert_eq!(unpack_limit(8 << 20), (8 * MAX_RATIO) << 20);
        assert_eq!(unpack_limit(u64::MAX), MAX_UNPACKED);
    }

    #[test]
    fn not_gzip_and_not_lc0_are_named() {
        let e = Net::from_gz(b"hello").expect_err("not gzip");
        assert!(e.to_string().contains("gzip"), "{e}");
        let e = Net::from_proto(&[0x0d, 1, 2, 3, 4]).expect_err("bad magic");
        assert!(e.to_string().contains("magic"), "{e}");
    }

    #[test]
    fn batch_norm_folds_as_lc0_folds_it() {
        let raw = RawConv {
            weights: vec![1.0, 2.0],
            biases: vec![0.5],
            bn_means: vec![1.5],
            bn_stddivs: vec![4.0 - 1e-5],
            bn_gammas: vec![2.0],
            bn_betas: vec![0.25],
        };
        let c = raw.fold("t").expect("folds");
        // gamma = 2/sqrt(4) = 1; mean - bias = 1; bias = -1 + 0.25
        assert!((c.weights[0] - 1.0).abs() < 1e-6 && (c.weights[1] - 2.0).abs() < 1e-6);
        assert!((c.biases[0] + 0.75).abs() < 1e-6);
    }
}
