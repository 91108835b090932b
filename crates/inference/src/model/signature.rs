//! The inputs and outputs a model format requires of its ONNX graph, checked against the real graph.

use std::path::Path;

use super::error::ModelError;
use super::manifest::{Manifest, ModelFormat};

/// Element type of a graph tensor, as far as mavboard cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// 64-bit integers (token ids, masks, positions).
    I64,
    /// 32-bit floats (logits, KV cache).
    F32,
    /// Anything else (named for the error message).
    Other(&'static str),
}

/// One input or output of a graph: name, element type, and shape with `-1` for dynamic axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSig {
    /// Its name in the graph.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape; `-1` marks a dynamic axis.
    pub shape: Vec<i64>,
}

/// The inputs and outputs of an ONNX graph.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GraphSignature {
    /// Graph inputs.
    pub inputs: Vec<TensorSig>,
    /// Graph outputs.
    pub outputs: Vec<TensorSig>,
}

/// One requirement: a tensor with this name, type, rank, and some fixed axes.
struct Want<'a> {
    name: String,
    dtype: Dtype,
    rank: usize,
    fixed: Vec<(usize, usize, &'a str)>,
}

fn mismatch(dir: &Path, field: String, expected: String, found: String) -> ModelError {
    ModelError::Mismatch { dir: dir.to_path_buf(), field, expected, found }
}

fn check(dir: &Path, side: &str, have: &[TensorSig], want: &Want<'_>) -> Result<(), ModelError> {
    let field = format!("ONNX {side} {}", want.name);
    let Some(t) = have.iter().find(|t| t.name == want.name) else {
        let names = have.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(mismatch(dir, field, "to exist".into(), format!("only [{names}]")));
    };
    if t.dtype != want.dtype {
        return Err(mismatch(dir, field, format!("{:?}", want.dtype), format!("{:?}", t.dtype)));
    }
    if t.shape.len() != want.rank {
        return Err(mismatch(dir, field, format!("rank {}", want.rank), format!("shape {:?}", t.shape)));
    }
    for &(axis, size, what) in &want.fixed {
        let got = t.shape[axis];
        if got >= 0 && got as usize != size {
            return Err(mismatch(
                dir,
                format!("{field} axis {axis} ({what})"),
                size.to_string(),
                got.to_string(),
            ));
        }
    }
    Ok(())
}

fn want(name: impl Into<String>, dtype: Dtype, rank: usize) -> Want<'static> {
    Want { name: name.into(), dtype, rank, fixed: Vec::new() }
}

/// Checks mav.json's own consistency (bucket tokens, sizes) for the package in `dir`.
pub fn check_manifest(dir: &Path, m: &Manifest) -> Result<(), ModelError> {
    if m.format_version != super::manifest::FORMAT_VERSION {
        return Err(mismatch(
            dir,
            "mav.json format_version".into(),
            super::manifest::FORMAT_VERSION.to_string(),
            m.format_version.to_string(),
        ));
    }
    if m.format.capabilities().values && m.num_buckets < 2 {
        return Err(mismatch(
            dir,
            "mav.json num_buckets".into(),
            "at least 2".into(),
            m.num_buckets.to_string(),
        ));
    }
    if m.games.is_empty() {
        return Err(mismatch(dir, "mav.json games".into(), "at least one game".into(), "none".into()));
    }
    check_format_fields(dir, m)
}

/// Checks the fields of mav.json that its model format needs.
fn check_format_fields(dir: &Path, m: &Manifest) -> Result<(), ModelError> {
    match m.format {
        ModelFormat::MavLm | ModelFormat::MavEncoder => check_value_tokens(dir, m)?,
        ModelFormat::StateValue => {
            if m.av_state_length.is_none() {
                return Err(mismatch(
                    dir,
                    "mav.json av_state_length".into(),
                    "set for the state-value format".into(),
                    "missing".into(),
                ));
            }
        }
        ModelFormat::BehavioralCloning => {
            if m.av_state_length.is_none() || m.av_action_vocab_size.is_none() {
                return Err(mismatch(
                    dir,
                    "mav.json av_state_length / av_action_vocab_size".into(),
                    "both set for the behavioral-cloning format (the state tokens, the actions it scores)"
                        .into(),
                    "missing".into(),
                ));
            }
        }
        ModelFormat::Lc0 => {
            if m.lc0.is_none() {
                return Err(mismatch(
                    dir,
                    "mav.json lc0".into(),
                    "the network's input format and heads (written by `mavboard import lc0`)".into(),
                    "missing".into(),
                ));
            }
        }
        ModelFormat::ActionValue => {
            if m.av_state_length.is_none() || m.av_action_vocab_size.is_none() {
                return Err(mismatch(
                    dir,
                    "mav.json av_state_length / av_action_vocab_size".into(),
                    "both set for the action-value format".into(),
                    "missing".into(),
                ));
            }
        }
    }
    Ok(())
}

/// Checks a token-writing format's value token ids (one per bucket, inside the vocabulary, distinct) and,
/// for a format that writes text, its end-of-sequence token.
fn check_value_tokens(dir: &Path, m: &Manifest) -> Result<(), ModelError> {
    if m.value_token_ids.len() != m.num_buckets {
        return Err(mismatch(
            dir,
            "mav.json value_token_ids".into(),
            format!("{} ids (one per bucket)", m.num_buckets),
            m.value_token_ids.len().to_string(),
        ));
    }
    if let Some(&bad) = m.value_token_ids.iter().find(|&&id| id as usize >= m.vocab_size) {
        return Err(mismatch(
            dir,
            "mav.json value_token_ids".into(),
            format!("ids below vocab_size {}", m.vocab_size),
            bad.to_string(),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(&dup) = m.value_token_ids.iter().find(|id| !seen.insert(**id)) {
        return Err(mismatch(
            dir,
            "mav.json value_token_ids".into(),
            "distinct ids".into(),
            format!("{dup} twice"),
        ));
    }
    if m.format.capabilities().generates_text && m.eos_token_id.is_none() {
        return Err(mismatch(dir, "mav.json eos_token_id".into(), "a token id".into(), "none".into()));
    }
    Ok(())
}

/// Checks that the graph has every input and output the manifest's format needs, with the right types,
/// ranks and fixed sizes (KV layer count and shapes, logits width against the vocabulary or bucket count).
pub fn check_graph(dir: &Path, m: &Manifest, g: &GraphSignature) -> Result<(), ModelError> {
    use Dtype::{F32, I64};
    let (inputs, outputs): (Vec<Want<'_>>, Vec<Want<'_>>) = match m.format {
        ModelFormat::MavLm => {
            let mut ins =
                vec![want("input_ids", I64, 2), want("attention_mask", I64, 2), want("position_ids", I64, 2)];
            let mut logits = want("logits", F32, 3);
            logits.fixed.push((2, m.vocab_size, "vocabulary size"));
            let mut outs = vec![logits];
            for i in 0..m.num_layers {
                for kv in ["key", "value"] {
                    let fixed = vec![(1, m.num_heads, "heads"), (3, m.head_dim, "head_dim")];
                    ins.push(Want {
                        name: format!("past_key_values.{i}.{kv}"),
                        dtype: F32,
                        rank: 4,
                        fixed: fixed.clone(),
                    });
                    outs.push(Want { name: format!("present.{i}.{kv}"), dtype: F32, rank: 4, fixed });
                }
            }
            let layers = g.inputs.iter().filter(|t| t.name.starts_with("past_key_values.")).count() / 2;
            if layers != m.num_layers {
                return Err(mismatch(
                    dir,
                    "ONNX past_key_values layers".into(),
                    format!("{} (mav.json num_layers)", m.num_layers),
                    layers.to_string(),
                ));
            }
            (ins, outs)
        }
        ModelFormat::MavEncoder => {
            let mut values = want("value_logits", F32, 3);
            values.fixed.push((2, m.num_buckets, "buckets"));
            (
                vec![want("input_ids", I64, 2), want("attention_mask", I64, 2)],
                vec![values, want("best_logits", F32, 2)],
            )
        }
        ModelFormat::ActionValue => {
            let mut ids = want("input_ids", I64, 2);
            if let Some(n) = m.av_state_length {
                ids.fixed.push((1, n + 1, "state tokens + 1 action token"));
            }
            let mut logits = want("logits", F32, 2);
            logits.fixed.push((1, m.num_buckets, "buckets"));
            (vec![ids], vec![logits])
        }
        ModelFormat::StateValue => {
            let mut ids = want("input_ids", I64, 2);
            if let Some(n) = m.av_state_length {
                ids.fixed.push((1, n, "state tokens"));
            }
            let mut logits = want("logits", F32, 2);
            logits.fixed.push((1, m.num_buckets, "buckets"));
            (vec![ids], vec![logits])
        }
        ModelFormat::BehavioralCloning => {
            let mut ids = want("input_ids", I64, 2);
            if let Some(n) = m.av_state_length {
                ids.fixed.push((1, n, "state tokens"));
            }
            let mut logits = want("logits", F32, 2);
            if let Some(n) = m.av_action_vocab_size {
                logits.fixed.push((1, n, "actions"));
            }
            (vec![ids], vec![logits])
        }
        ModelFormat::Lc0 => {
            let mut planes = want(super::lc0_import::INPUT, I64, 2);
            planes.fixed.push((1, super::lc0_import::INPUT_WIDTH, "112 plane masks + the fifty-move count"));
            let mut policy = want(super::lc0_import::POLICY, F32, 2);
            policy.fixed.push((1, crate::lc0::policy_index::POLICY_SIZE, "lc0's policy outputs"));
            let mut wdl = want(super::lc0_import::WDL, F32, 2);
            wdl.fixed.push((1, 3, "win, draw, loss"));
            let mut outs = vec![policy, wdl];
            if m.lc0.is_some_and(|l| l.moves_left) {
                outs.push(want(super::lc0_import::MLH, F32, 2));
            }
            (vec![planes], outs)
        }
    };
    for w in &inputs {
        check(dir, "input", &g.inputs, w)?;
    }
    for w in &outputs {
        check(dir, "output", &g.outputs, w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameKind;
    use crate::model::manifest::TrainingInfo;

    fn encoder_manifest() -> Manifest {
        Manifest {
            format: ModelFormat::MavEncoder,
            format_version: 1,
            name: "t".into(),
            games: vec![GameKind::Chess],
            num_buckets: 4,
            value_token_ids: vec![10, 11, 12, 13],
            pad_token_id: Some(0),
            eos_token_id: None,
            vocab_size: 20,
            context_length: 64,
            num_layers: 1,
            num_heads: 2,
            head_dim: 8,
            d_model: 16,
            internal_search: false,
            av_state_length: None,
            av_action_vocab_size: None,
            av_action_order: Default::default(),
            remote: None,
            source: None,
            parameters: 0,
            training: TrainingInfo::default(),
            created: String::new(),
            lc0: None,
        }
    }

    fn sig(name: &str, dtype: Dtype, shape: &[i64]) -> TensorSig {
        TensorSig { name: name.into(), dtype, shape: shape.to_vec() }
    }

    fn encoder_graph(buckets: i64) -> GraphSignature {
        GraphSignature {
            inputs: vec![
                sig("input_ids", Dtype::I64, &[-1, -1]),
                sig("attention_mask", Dtype::I64, &[-1, -1]),
            ],
            outputs: vec![
                sig("value_logits", Dtype::F32, &[-1, -1, buckets]),
                sig("best_logits", Dtype::F32, &[-1, -1]),
            ],
        }
    }

    #[test]
    fn accepts_matching_encoder_graph() {
        let dir = Path::new("pkg");
        let m = encoder_manifest();
        check_manifest(dir, &m).expect("valid manifest");
        check_graph(dir, &m, &encoder_graph(4)).expect("valid graph");
    }

    #[test]
    fn names_the_field_on_bucket_mismatch() {
        let err =
            check_graph(Path::new("pkg"), &encoder_manifest(), &encoder_graph(5)).expect_err("mismatch");
        let msg = err.to_string();
        assert!(
            msg.contains("value_logits axis 2 (buckets)") && msg.contains("expected 4, found 5"),
            "{msg}"
        );
    }

    #[test]
    fn missing_input_lists_what_exists() {
        let mut g = encoder_graph(4);
        g.inputs.remove(1);
        let msg = check_graph(Path::new("pkg"), &encoder_manifest(), &g).expect_err("missing").to_string();
        assert!(msg.contains("attention_mask") && msg.contains("only [input_ids]"), "{msg}");
    }

    #[test]
    fn rejects_bad_value_tokens() {
        let mut m = encoder_manifest();
        m.value_token_ids = vec![10, 11, 12, 99];
        assert!(
            check_manifest(Path::new("pkg"), &m)
                .expect_err("out of range")
                .to_string()
                .contains("vocab_size")
        );
        m.value_token_ids = vec![10, 11, 12];
        assert!(check_manifest(Path::new("pkg"), &m).is_err());
        m.value_token_ids = vec![10, 11, 11, 12];
        assert!(check_manifest(Path::new("pkg"), &m).expect_err("dup").to_string().contains("twice"));
    }

    #[test]
    fn checks_kv_layers_of_a_decoder() {
        let mut m = encoder_manifest();
        m.format = ModelFormat::MavLm;
        m.eos_token_id = Some(2);
        let mut g = GraphSignature {
            inputs: vec![
                sig("input_ids", Dtype::I64, &[-1, -1]),
                sig("attention_mask", Dtype::I64, &[-1, -1]),
                sig("position_ids", Dtype::I64, &[-1, -1]),
            ],
            outputs: vec![sig("logits", Dtype::F32, &[-1, -1, 20])],
        };
        for kv in ["key", "value"] {
            g.inputs.push(sig(&format!("past_key_values.0.{kv}"), Dtype::F32, &[-1, 2, -1, 8]));
            g.outputs.push(sig(&format!("present.0.{kv}"), Dtype::F32, &[-1, 2, -1, 8]));
        }
        check_graph(Path::new("pkg"), &m, &g).expect("valid decoder");
        m.num_layers = 2;
        let msg = check_graph(Path::new("pkg"), &m, &g).expect_err("layers").to_string();
        assert!(msg.contains("past_key_values layers"), "{msg}");
        m.num_layers = 1;
        m.head_dim = 16;
        let msg = check_graph(Path::new("pkg"), &m, &g).expect_err("head dim").to_string();
        assert!(msg.contains("head_dim"), "{msg}");
    }
}
