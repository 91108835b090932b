//! What kind of network a weights file holds: `Format.network_format` of lc0's `net.proto`, with the
//! defaults lc0 applies to files that predate a field.

use super::error::Lc0Error;

/// How the 112 input planes are filled (`NetworkFormat.input`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    /// 1: castling rights as four all-ones planes, the side to move as a plane.
    Classical,
    /// 2: castling rights as the squares of the rooks that may castle (Chess960-ready).
    CastlingPlane,
    /// 3: as 2, plus the board flipped, mirrored or transposed into a canonical frame when no castling is
    /// left, the en-passant square as a plane and history cut at irreversible moves.
    Canonical,
    /// 4: as 3, the fifty-move counter in hundreds of plies.
    CanonicalHectoplies,
    /// 132: as 4, plus an all-ones plane when black is to move (armageddon).
    CanonicalHectopliesArmageddon,
    /// 5: as 4, history planes only for the current position and repeated ones.
    CanonicalV2,
    /// 133: as 5, plus the armageddon plane.
    CanonicalV2Armageddon,
}

impl InputFormat {
    /// Every input format, in the order of `NetworkFormat.input`'s values.
    pub const ALL: [InputFormat; 7] = [
        InputFormat::Classical,
        InputFormat::CastlingPlane,
        InputFormat::Canonical,
        InputFormat::CanonicalHectoplies,
        InputFormat::CanonicalHectopliesArmageddon,
        InputFormat::CanonicalV2,
        InputFormat::CanonicalV2Armageddon,
    ];

    /// The format's name in mav.json and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Classical => "classical",
            InputFormat::CastlingPlane => "castling-plane",
            InputFormat::Canonical => "canonical",
            InputFormat::CanonicalHectoplies => "canonical-hectoplies",
            InputFormat::CanonicalHectopliesArmageddon => "canonical-hectoplies-armageddon",
            InputFormat::CanonicalV2 => "canonical-v2",
            InputFormat::CanonicalV2Armageddon => "canonical-v2-armageddon",
        }
    }

    /// The format named `name` (see [`InputFormat::name`]).
    pub fn from_name(name: &str) -> Option<InputFormat> {
        InputFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The format of `NetworkFormat.input`'s enum value.
    pub fn from_proto(v: u64) -> Result<InputFormat, Lc0Error> {
        Ok(match v {
            1 => InputFormat::Classical,
            2 => InputFormat::CastlingPlane,
            3 => InputFormat::Canonical,
            4 => InputFormat::CanonicalHectoplies,
            132 => InputFormat::CanonicalHectopliesArmageddon,
            5 => InputFormat::CanonicalV2,
            133 => InputFormat::CanonicalV2Armageddon,
            other => {
                return Err(Lc0Error::Unsupported {
                    field: "format.network_format.input",
                    value: other.to_string(),
                    what: "an input format this reader does not know".into(),
                });
            }
        })
    }

    /// Whether the board is turned into a canonical frame (formats 3 and later).
    pub fn canonical(self) -> bool {
        !matches!(self, InputFormat::Classical | InputFormat::CastlingPlane)
    }

    /// Whether the fifty-move plane counts hundreds of plies.
    pub fn hectoplies(self) -> bool {
        !matches!(self, InputFormat::Classical | InputFormat::CastlingPlane | InputFormat::Canonical)
    }

    /// Whether black to move sets the armageddon plane.
    pub fn armageddon(self) -> bool {
        matches!(self, InputFormat::CanonicalHectopliesArmageddon | InputFormat::CanonicalV2Armageddon)
    }

    /// Whether history planes are written only for repeated positions (the v2 formats).
    pub fn repeats_only(self) -> bool {
        matches!(self, InputFormat::CanonicalV2 | InputFormat::CanonicalV2Armageddon)
    }
}

/// The policy head (`NetworkFormat.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyFormat {
    /// 1: a 1×1 convolution, then a fully connected layer to the 1858 moves.
    Classical,
    /// 2: two 3×3 convolutions to 73 planes of 8×8, mapped to the 1858 moves.
    Convolution,
    /// 3: attention between the squares (a query and a key per square, promotions from the keys of the
    /// eighth rank), mapped to the 1858 moves.
    Attention,
}

/// The body of the network (`NetworkFormat.network`, after lc0's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    /// `NETWORK_CLASSICAL_WITH_HEADFORMAT` (3) or `NETWORK_SE_WITH_HEADFORMAT` (4): a 3×3 convolution and a
    /// tower of residual blocks.
    Residual,
    /// `NETWORK_ATTENTIONBODY_WITH_HEADFORMAT` (6) or `NETWORK_ATTENTIONBODY_WITH_MULTIHEADFORMAT` (7): a
    /// per-square embedding and a stack of transformer encoder layers (Leela's BT family).
    Attention,
}

/// An activation function (`NetworkFormat.ActivationFunction`), as lc0's CPU backend computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `max(x, 0)`.
    Relu,
    /// `x · tanh(softplus(x))`.
    Mish,
    /// The identity.
    None,
    /// `tanh(x)`.
    Tanh,
    /// `1 / (1 + e^−x)`.
    Sigmoid,
    /// `1.05070098 · x` above 0, else `1.05070098 · 1.67326324 · (e^x − 1)`.
    Selu,
    /// `x · sigmoid(x)`.
    Swish,
    /// `max(x, 0)²`.
    Relu2,
}

impl Activation {
    /// The activation of an `ActivationFunction` value other than `ACTIVATION_DEFAULT` (0).
    fn from_proto(v: u64, field: &'static str) -> Result<Activation, Lc0Error> {
        Ok(match v {
            1 => Activation::Mish,
            2 => Activation::Relu,
            3 => Activation::None,
            4 => Activation::Tanh,
            5 => Activation::Sigmoid,
            6 => Activation::Selu,
            7 => Activation::Swish,
            8 => Activation::Relu2,
            other => {
                return Err(unsupported(field, other, "an activation lc0's CPU backend does not compute"));
            }
        })
    }
}

/// How an attention body sees where each square is (`NetworkFormat.input_embedding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputEmbedding {
    /// 0: none named (lc0's CPU backend then appends its fixed 64-channel position table, as for 1).
    None,
    /// 1: lc0's fixed 64-channel position table appended to each square's planes.
    PeMap,
    /// 2: a learned dense encoding of the first 12 planes appended to each square's planes, with a layer
    /// norm and a feed-forward block after the embedding.
    PeDense,
}

/// The value head (`NetworkFormat.value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFormat {
    /// 1: one number, tanh: the expected score from −1 to 1.
    Scalar,
    /// 2: win, draw and loss logits (softmax).
    Wdl,
}

/// What the weights file says about its network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetFormat {
    /// The input planes.
    pub input: InputFormat,
    /// The policy head.
    pub policy: PolicyFormat,
    /// The value head.
    pub value: ValueFormat,
    /// Whether a moves-left head is there.
    pub moves_left: bool,
    /// Mish (true) or ReLU as the activation of the body and heads.
    pub mish: bool,
    /// The body.
    pub body: BodyFormat,
    /// The activation inside an attention body's smolgen (the default activation when the file names none).
    pub smolgen_activation: Activation,
    /// The activation inside an attention body's feed-forward blocks (likewise).
    pub ffn_activation: Activation,
    /// An attention body's position encoding ([`InputEmbedding::None`] for residual bodies).
    pub embedding: InputEmbedding,
}

impl NetFormat {
    /// The default activation: Mish or ReLU.
    pub fn activation(&self) -> Activation {
        if self.mish { Activation::Mish } else { Activation::Relu }
    }
}

/// What lc0's loader looks at in the weights, besides the format, to fill in the format of older files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightsPresence {
    /// `weights.encoder` has layers.
    pub encoder: bool,
    /// `weights.smolgen_w` is there.
    pub smolgen_w: bool,
    /// `weights.policy_heads` is there.
    pub policy_heads: bool,
    /// `weights.value_heads` is there.
    pub value_heads: bool,
}

/// `NetworkFormat` as read, before defaults (`None` where the file does not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawNetFormat {
    /// Field 1.
    pub input: Option<u64>,
    /// Field 3.
    pub network: Option<u64>,
    /// Field 4.
    pub policy: Option<u64>,
    /// Field 5.
    pub value: Option<u64>,
    /// Field 6.
    pub moves_left: Option<u64>,
    /// Field 7.
    pub default_activation: Option<u64>,
    /// Field 8.
    pub smolgen_activation: Option<u64>,
    /// Field 9.
    pub ffn_activation: Option<u64>,
    /// Field 10.
    pub input_embedding: Option<u64>,
}

impl RawNetFormat {
    /// The format with lc0's defaults for older files (as lc0's `FixOlderWeightsFile` fills them in): no
    /// `network_format` at all is a classical input, classical policy and scalar value network;
    /// `NETWORK_CLASSICAL` and `NETWORK_SE` imply classical heads; `NETWORK_SE_WITH_HEADFORMAT` with encoder
    /// layers is an attention body (with smolgen's SWISH and the feed-forward RELU_2 when `smolgen_w` is
    /// there); `NETWORK_AB_LEGACY_WITH_MULTIHEADFORMAT` is `NETWORK_ATTENTIONBODY_WITH_MULTIHEADFORMAT`; an
    /// attention body of format 6 with both `policy_heads` and `value_heads` becomes format 7 with the dense
    /// position encoding, and otherwise takes the position table when it names no encoding.
    pub fn resolve(self, present: bool, weights: WeightsPresence) -> Result<NetFormat, Lc0Error> {
        if !present {
            return Ok(NetFormat {
                input: InputFormat::Classical,
                policy: PolicyFormat::Classical,
                value: ValueFormat::Scalar,
                moves_left: false,
                mish: false,
                body: BodyFormat::Residual,
                smolgen_activation: Activation::Relu,
                ffn_activation: Activation::Relu,
                embedding: InputEmbedding::None,
            });
        }
        let raw = self.fill_older(weights);
        let body = body_format(raw.network.unwrap_or(0))?;
        let policy = match raw.policy.unwrap_or(0) {
            1 => PolicyFormat::Classical,
            2 => PolicyFormat::Convolution,
            3 => PolicyFormat::Attention,
            other => return Err(unsupported("format.network_format.policy", other, "unknown policy head")),
        };
        let value = match raw.value.unwrap_or(0) {
            1 => ValueFormat::Scalar,
            2 => ValueFormat::Wdl,
            other => return Err(unsupported("format.network_format.value", other, "unknown value head")),
        };
        let moves_left = match raw.moves_left.unwrap_or(0) {
            0 => false,
            1 => true,
            other => return Err(unsupported("format.network_format.moves_left", other, "unknown head")),
        };
        let mish = match raw.default_activation.unwrap_or(0) {
            0 => false,
            1 => true,
            other => {
                return Err(unsupported(
                    "format.network_format.default_activation",
                    other,
                    "unknown activation",
                ));
            }
        };
        let default = if mish { Activation::Mish } else { Activation::Relu };
        let (smolgen_activation, ffn_activation, embedding) = match body {
            BodyFormat::Residual => (default, default, InputEmbedding::None),
            BodyFormat::Attention => raw.attention_parts(default)?,
        };
        if body == BodyFormat::Attention && policy != PolicyFormat::Attention {
            return Err(unsupported(
                "format.network_format.policy",
                raw.policy.unwrap_or(0),
                "an attention body takes the attention policy (3) only",
            ));
        }
        Ok(NetFormat {
            input: InputFormat::from_proto(raw.input.unwrap_or(1))?,
            policy,
            value,
            moves_left,
            mish,
            body,
            smolgen_activation,
            ffn_activation,
            embedding,
        })
    }

    /// The format with the fields lc0's `FixOlderWeightsFile` fills in or changes for older files (see
    /// [`RawNetFormat::resolve`]).
    fn fill_older(self, weights: WeightsPresence) -> RawNetFormat {
        let mut raw = self;
        match raw.network.unwrap_or(0) {
            // NETWORK_CLASSICAL, NETWORK_SE: heads implied.
            1 | 2 => {
                raw.network = Some(raw.network.unwrap_or(0) + 2);
                raw.policy = Some(1);
                raw.value = Some(1);
            }
            4 if weights.encoder => {
                raw.network = Some(6);
                if weights.smolgen_w {
                    raw.ffn_activation = Some(8);
                    raw.smolgen_activation = Some(7);
                }
            }
            134 => raw.network = Some(7),
            _ => {}
        }
        if raw.network == Some(6) {
            if weights.policy_heads && weights.value_heads {
                raw.network = Some(7);
                raw.input_embedding = Some(2);
            }
            if raw.input_embedding.is_none() {
                raw.input_embedding = Some(1);
            }
        }
        raw
    }

    /// An attention body's smolgen and feed-forward activations (`default` where the file names none) and
    /// its position encoding.
    fn attention_parts(
        &self,
        default: Activation,
    ) -> Result<(Activation, Activation, InputEmbedding), Lc0Error> {
        let activation = |v: Option<u64>, field: &'static str| match v.unwrap_or(0) {
            0 => Ok(default),
            v => Activation::from_proto(v, field),
        };
        Ok((
            activation(self.smolgen_activation, "format.network_format.smolgen_activation")?,
            activation(self.ffn_activation, "format.network_format.ffn_activation")?,
            match self.input_embedding.unwrap_or(0) {
                0 => InputEmbedding::None,
                1 => InputEmbedding::PeMap,
                2 => InputEmbedding::PeDense,
                other => {
                    return Err(unsupported(
                        "format.network_format.input_embedding",
                        other,
                        "unknown encoding",
                    ));
                }
            },
        ))
    }
}

/// The body of `NetworkFormat.network` after lc0's defaults: residual (3, 4) or attention (6, 7).
fn body_format(network: u64) -> Result<BodyFormat, Lc0Error> {
    match network {
        3 | 4 => Ok(BodyFormat::Residual),
        6 | 7 => Ok(BodyFormat::Attention),
        5 => Err(unsupported(
            "format.network_format.network",
            network,
            "an embedded ONNX model (NETWORK_ONNX): `mavboard import lc0` reads it",
        )),
        other => Err(unsupported("format.network_format.network", other, "unknown structure")),
    }
}

fn unsupported(field: &'static str, value: u64, what: &str) -> Lc0Error {
    Lc0Error::Unsupported { field, value: value.to_string(), what: what.into() }
}

#[cfg(test)]
mod tests {

    #[test]
    fn input_format_names_are_mav_json_names() {
        for f in InputFormat::ALL {
            let json = serde_json::to_string(&f).expect("serializes");
            assert_eq!(json, format!("\"{}\"", f.name()));
            assert_eq!(InputFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(InputFormat::from_name("INPUT_CLASSICAL_112_PLANE"), None);
    }

    use super::*;

    #[test]
    fn defaults_and_refusals_name_the_field() {
        let none = WeightsPresence::default();
        let old = RawNetFormat::default().resolve(false, none).expect("old nets are classical");
        assert_eq!(old.policy, PolicyFormat::Classical);
        let maia = RawNetFormat {
            input: Some(1),
            network: Some(4),
            policy: Some(2),
            value: Some(2),
            moves_left: None,
            default_activation: None,
            ..RawNetFormat::default()
        };
        let f = maia.resolve(true, none).expect("maia's format");
        assert_eq!((f.policy, f.value, f.moves_left), (PolicyFormat::Convolution, ValueFormat::Wdl, false));
        assert_eq!(f.body, BodyFormat::Residual);
        let bt = RawNetFormat { network: Some(7), ..maia };
        let e = bt.resolve(true, none).expect_err("attention body, convolution policy");
        assert!(e.to_string().contains("format.network_format.policy = 2"), "{e}");
        let odd = RawNetFormat { input: Some(9), ..maia };
        assert!(odd.resolve(true, none).expect_err("input 9").to_string().contains("input = 9"));
        let onnx = RawNetFormat { network: Some(5), ..maia };
        assert!(onnx.resolve(true, none).expect_err("onnx").to_string().contains("network = 5"));
        assert!(InputFormat::CanonicalV2Armageddon.armageddon() && InputFormat::CanonicalV2.repeats_only());
        assert!(!InputFormat::Canonical.hectoplies() && InputFormat::Canonical.canonical());
    }

    #[test]
    fn older_attention_bodies_get_lc0s_defaults() {
        let mish = RawNetFormat {
            input: Some(4),
            network: Some(4),
            policy: Some(3),
            value: Some(2),
            moves_left: Some(1),
            default_activation: Some(1),
            ..RawNetFormat::default()
        };
        // Format 4 with encoders and smolgen: an attention body, SWISH smolgen, RELU_2 feed-forward, PE_MAP.
        let w = WeightsPresence { encoder: true, smolgen_w: true, ..WeightsPresence::default() };
        let f = mish.resolve(true, w).expect("old BT");
        assert_eq!(f.body, BodyFormat::Attention);
        assert_eq!((f.smolgen_activation, f.ffn_activation), (Activation::Swish, Activation::Relu2));
        assert_eq!(f.embedding, InputEmbedding::PeMap);
        // Format 6 with both head sets: multi-head with the dense encoding; activations default to Mish.
        let six = RawNetFormat { network: Some(6), ..mish };
        let w = WeightsPresence { encoder: true, smolgen_w: false, policy_heads: true, value_heads: true };
        let f = six.resolve(true, w).expect("format 6");
        assert_eq!((f.embedding, f.ffn_activation), (InputEmbedding::PeDense, Activation::Mish));
        // Format 7 names its encoding or has none.
        let seven = RawNetFormat { network: Some(7), ffn_activation: Some(8), ..mish };
        let f = seven.resolve(true, w).expect("format 7");
        assert_eq!((f.embedding, f.ffn_activation), (InputEmbedding::None, Activation::Relu2));
        let odd = RawNetFormat { smolgen_activation: Some(9), ..seven };
        assert!(odd.resolve(true, w).expect_err("softmax").to_string().contains("smolgen_activation = 9"));
    }
}
