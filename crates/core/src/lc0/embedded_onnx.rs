//! An lc0 weights file that carries an ONNX model instead of weights (`Net.onnx_model`, what lc0's
//! `onnx2leela` writes): the model's bytes, the names of its input and outputs, and the input format from the
//! file's `Format.network_format`.

use super::error::Lc0Error;
use super::format::InputFormat;
use super::weights::MAGIC;
use super::wire::{Fields, Value};

/// The ONNX model inside an lc0 weights file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedOnnx {
    /// The serialized `onnx.ModelProto`.
    pub model: Vec<u8>,
    /// How its 112 input planes are filled.
    pub input_format: InputFormat,
    /// The names the file gives the model's input and outputs.
    pub names: OnnxNames,
    /// The licence the file states (empty if none).
    pub license: String,
}

/// The names of an lc0 ONNX model's input and outputs (`OnnxModel.input_planes`, `output_*`); `None` where
/// the file does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnnxNames {
    /// The input planes `[batch, 112, 8, 8]`.
    pub input: Option<String>,
    /// The policy logits `[batch, 1858]`.
    pub policy: Option<String>,
    /// The win/draw/loss probabilities `[batch, 3]`.
    pub wdl: Option<String>,
    /// A scalar value in [-1, 1] `[batch, 1]`.
    pub value: Option<String>,
    /// Moves left `[batch, 1]`.
    pub moves_left: Option<String>,
}

fn sub<'a>(buf: &'a [u8], field: u32, name: &'static str) -> Result<Option<&'a [u8]>, Lc0Error> {
    let mut found = None;
    for f in Fields::new(buf, name) {
        if let (n, Value::Bytes(b)) = f?
            && n == field
        {
            found = Some(b);
        }
    }
    Ok(found)
}

fn varint(buf: &[u8], field: u32, name: &'static str) -> Result<Option<u64>, Lc0Error> {
    let mut found = None;
    for f in Fields::new(buf, name) {
        if let (n, Value::Varint(v)) = f?
            && n == field
        {
            found = Some(v);
        }
    }
    Ok(found)
}

fn string(buf: &[u8], field: u32, name: &'static str) -> Result<Option<String>, Lc0Error> {
    Ok(sub(buf, field, name)?.map(|b| String::from_utf8_lossy(b).into_owned()))
}

/// The ONNX model of an unpacked `Net` message, or `None` when the file holds weights (read those with
/// [`super::Net::from_proto`]). A file whose magic number is not lc0's, or that does not say its input
/// format, is refused.
pub fn embedded_onnx(net: &[u8]) -> Result<Option<EmbeddedOnnx>, Lc0Error> {
    let mut magic = 0;
    let mut onnx = None;
    for f in Fields::new(net, "Net") {
        match f? {
            (1, Value::Fixed32(m)) => magic = m,
            (11, Value::Bytes(b)) => onnx = Some(b),
            _ => {}
        }
    }
    if magic != MAGIC {
        return Err(Lc0Error::Magic { found: magic });
    }
    let Some(onnx) = onnx else { return Ok(None) };
    let model = sub(onnx, 1, "OnnxModel")?.ok_or_else(|| Lc0Error::Missing("onnx_model.model".into()))?;
    let format = sub(net, 4, "Format")?;
    let network_format = match format {
        Some(f) => sub(f, 2, "NetworkFormat")?,
        None => None,
    };
    let input = match network_format {
        Some(nf) => varint(nf, 1, "NetworkFormat")?,
        None => None,
    };
    let input_format = match input {
        Some(v) => InputFormat::from_proto(v)?,
        None => {
            return Err(Lc0Error::Missing(
                "format.network_format.input (the ONNX model's input format)".into(),
            ));
        }
    };
    let names = OnnxNames {
        input: string(onnx, 3, "OnnxModel")?,
        value: string(onnx, 4, "OnnxModel")?,
        wdl: string(onnx, 5, "OnnxModel")?,
        policy: string(onnx, 6, "OnnxModel")?,
        moves_left: string(onnx, 7, "OnnxModel")?,
    };
    let license = string(net, 2, "Net")?.unwrap_or_default();
    Ok(Some(EmbeddedOnnx { model: model.to_vec(), input_format, names, license }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(field: u32, b: &[u8]) -> Vec<u8> {
        let mut out = vec![((field << 3) | 2) as u8, b.len() as u8];
        out.extend_from_slice(b);
        out
    }

    fn net(with_input: bool) -> Vec<u8> {
        let mut n = vec![0x0d];
        n.extend_from_slice(&MAGIC.to_le_bytes());
        n.extend(bytes(2, b"GPL-3.0"));
        let nf = if with_input { vec![0x08, 0x04] } else { vec![] };
        n.extend(bytes(4, &bytes(2, &nf)));
        let mut onnx = bytes(1, b"model-bytes");
        onnx.extend(bytes(3, b"/in"));
        onnx.extend(bytes(5, b"/wdl"));
        onnx.extend(bytes(6, b"/policy"));
        n.extend(bytes(11, &onnx));
        n
    }

    #[test]
    fn an_embedded_model_gives_its_bytes_names_and_input_format() {
        let e = embedded_onnx(&net(true)).expect("reads").expect("an ONNX model");
        assert_eq!(e.model, b"model-bytes");
        assert_eq!(e.input_format, InputFormat::CanonicalHectoplies);
        assert_eq!(e.names.input.as_deref(), Some("/in"));
        assert_eq!(e.names.wdl.as_deref(), Some("/wdl"));
        assert_eq!(e.names.policy.as_deref(), Some("/policy"));
        assert_eq!(e.names.value, None);
        assert_eq!(e.license, "GPL-3.0");
    }

    #[test]
    fn no_input_format_or_a_wrong_magic_is_refused_and_weights_are_not_onnx() {
        let err = embedded_onnx(&net(false)).expect_err("no input format");
        assert!(err.to_string().contains("format.network_format.input"), "{err}");
        let mut wrong = net(true);
        wrong[1] = 0;
        assert!(matches!(embedded_onnx(&wrong), Err(Lc0Error::Magic { .. })));
        let mut weights = vec![0x0d];
        weights.extend_from_slice(&MAGIC.to_le_bytes());
        weights.extend(bytes(10, b""));
        assert_eq!(embedded_onnx(&weights).expect("reads"), None);
    }
}
