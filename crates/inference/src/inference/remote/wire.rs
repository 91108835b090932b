//! The JSON bodies of the Open Inference Protocol (KServe v2 REST): inference requests and responses, and
//! model metadata.

use std::fmt;

use ndarray::{ArrayD, IxDyn};
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::model::signature::{Dtype, GraphSignature, TensorSig};

/// One input tensor of a request, its data flattened row-major.
#[derive(Debug, Serialize)]
pub struct RequestInput<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its element type (`INT64`).
    pub datatype: &'static str,
    /// The elements, row-major.
    pub data: &'a [i64],
}

/// An output the request asks for.
#[derive(Debug, Serialize)]
pub struct RequestOutput<'a> {
    /// The tensor's name.
    pub name: &'a str,
}

/// `POST v2/models/NAME/infer`.
#[derive(Debug, Serialize)]
pub struct InferRequest<'a> {
    /// The inputs.
    pub inputs: Vec<RequestInput<'a>>,
    /// The outputs wanted.
    pub outputs: Vec<RequestOutput<'a>>,
}

/// Numbers of a tensor, flattened row-major whether the server wrote them flat or nested.
#[derive(Debug, Default, PartialEq)]
pub struct Flat(pub Vec<f32>);

struct FlatInto<'a>(&'a mut Vec<f32>);

impl<'de> DeserializeSeed<'de> for FlatInto<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FlatInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or a (nested) list of numbers")
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.0.push(v as f32);
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.0.push(v as f32);
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.0.push(v as f32);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(FlatInto(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Flat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flat, D::Error> {
        let mut v = Vec::new();
        FlatInto(&mut v).deserialize(d)?;
        Ok(Flat(v))
    }
}

/// One output tensor of a response.
#[derive(Debug, Deserialize)]
pub struct ResponseOutput {
    /// The tensor's name.
    pub name: String,
    /// Its element type (`FP32` expected).
    pub datatype: String,
    /// Its shape.
    pub shape: Vec<i64>,
    /// Its elements, row-major.
    pub data: Flat,
}

/// The answer to an inference request.
#[derive(Debug, Deserialize)]
pub struct InferResponse {
    /// The outputs.
    pub outputs: Vec<ResponseOutput>,
}

/// One tensor of the model metadata.
#[derive(Debug, Clone, Deserialize)]
pub struct MetadataTensor {
    /// The tensor's name.
    pub name: String,
    /// Its element type (`INT64`, `FP32`, …).
    pub datatype: String,
    /// Its shape, `-1` for a dynamic axis.
    #[serde(default)]
    pub shape: Vec<i64>,
}

/// `GET v2/models/NAME[/versions/V]`.
#[derive(Debug, Clone, Deserialize)]
pub struct ModelMetadata {
    /// The model's name.
    pub name: String,
    /// The model's inputs (empty when the server was not told them).
    #[serde(default)]
    pub inputs: Vec<MetadataTensor>,
    /// The model's outputs.
    #[serde(default)]
    pub outputs: Vec<MetadataTensor>,
}

/// The element type of a protocol datatype name, as the graph check knows it.
pub fn dtype(datatype: &str) -> Dtype {
    match datatype {
        "INT64" => Dtype::I64,
        "FP32" => Dtype::F32,
        "FP16" => Dtype::Other("float16"),
        "BF16" => Dtype::Other("bfloat16"),
        "FP64" => Dtype::Other("float64"),
        "INT32" => Dtype::Other("int32"),
        "INT8" | "INT16" | "UINT8" | "UINT16" | "UINT32" | "UINT64" => Dtype::Other("another integer type"),
        "BOOL" => Dtype::Other("bool"),
        "BYTES" => Dtype::Other("bytes"),
        _ => Dtype::Other("an unknown datatype"),
    }
}

impl ModelMetadata {
    /// The served inputs and outputs in the form the package check reads (the same check as for a local
    /// model.onnx).
    pub fn signature(&self) -> GraphSignature {
        let sig = |t: &MetadataTensor| TensorSig {
            name: t.name.clone(),
            dtype: dtype(&t.datatype),
            shape: t.shape.clone(),
        };
        GraphSignature {
            inputs: self.inputs.iter().map(sig).collect(),
            outputs: self.outputs.iter().map(sig).collect(),
        }
    }
}

/// What is wrong with an inference answer's body (the caller names the server).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutputError {
    /// The body is not the protocol's response JSON.
    #[error("not an inference response: {0}")]
    NotAResponse(String),
    /// An output asked for is missing.
    #[error("no output {0}")]
    Missing(String),
    /// An output is not 32-bit floats.
    #[error("output {name} is {datatype}, expected FP32")]
    Datatype {
        /// The output.
        name: String,
        /// Its data type as the server wrote it.
        datatype: String,
    },
    /// An output's shape has a negative dimension.
    #[error("output {name} has shape {shape:?}")]
    NegativeShape {
        /// The output.
        name: String,
        /// Its shape as the server wrote it.
        shape: Vec<i64>,
    },
    /// An output does not have one row per request row.
    #[error("output {name} has shape {shape:?}, expected {rows} rows")]
    Rows {
        /// The output.
        name: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The rows asked for.
        rows: usize,
    },
    /// An output holds NaN or an infinity.
    #[error("output {name} holds {value} at index {index}, not a finite number")]
    NotFinite {
        /// The output.
        name: String,
        /// The number.
        value: f32,
        /// Where it is in the flat data.
        index: usize,
    },
    /// An output's numbers do not fill its shape.
    #[error("output {name} has {len} numbers, which do not fill shape {shape:?}")]
    Fill {
        /// The output.
        name: String,
        /// How many numbers it has.
        len: usize,
        /// Its shape.
        shape: Vec<usize>,
    },
}

/// Reads the body of an inference answer for a request over `rows` rows: the tensors named `outputs`, in
/// that order, each FP32, with `rows` rows, finite numbers and as many numbers as its shape holds. The error
/// says what is wrong (the caller names the server).
pub fn read_outputs(body: &[u8], outputs: &[&str], rows: usize) -> Result<Vec<ArrayD<f32>>, OutputError> {
    let response: InferResponse =
        serde_json::from_slice(body).map_err(|e| OutputError::NotAResponse(e.to_string()))?;
    let mut out = Vec::with_capacity(outputs.len());
    let mut taken: Vec<Option<ResponseOutput>> = response.outputs.into_iter().map(Some).collect();
    for name in outputs {
        let Some(t) =
            taken.iter_mut().find(|t| t.as_ref().is_some_and(|t| t.name == *name)).and_then(Option::take)
        else {
            return Err(OutputError::Missing((*name).to_owned()));
        };
        if t.datatype != "FP32" {
            return Err(OutputError::Datatype { name: t.name, datatype: t.datatype });
        }
        let shape: Option<Vec<usize>> = t.shape.iter().map(|&d| usize::try_from(d).ok()).collect();
        let Some(shape) = shape else {
            return Err(OutputError::NegativeShape { name: t.name, shape: t.shape });
        };
        if shape.first() != Some(&rows) {
            return Err(OutputError::Rows { name: t.name, shape, rows });
        }
        if let Some(i) = t.data.0.iter().position(|v| !v.is_finite()) {
            let v = t.data.0[i];
            return Err(OutputError::NotFinite { name: t.name, value: v, index: i });
        }
        let len = t.data.0.len();
        let a = ArrayD::from_shape_vec(IxDyn(&shape), t.data.0).map_err(|_| OutputError::Fill {
            name: (*name).to_owned(),
            len,
            shape: shape.clone(),
        })?;
        out.push(a);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_flat_and_nested_data() {
        let r: InferResponse = serde_json::from_str(
            r#"{"model_name":"m","outputs":[
                {"name":"a","datatype":"FP32","shape":[2,2],"data":[1.5,2,3,4]},
                {"name":"b","datatype":"FP32","shape":[2,2],"data":[[1.5,2],[3,-4e-3]],"parameters":{}}]}"#,
        )
        .expect("valid");
        assert_eq!(r.outputs[0].data, Flat(vec![1.5, 2.0, 3.0, 4.0]));
        assert_eq!(r.outputs[1].data, Flat(vec![1.5, 2.0, 3.0, -4e-3]));
        assert!(
            serde_json::from_str::<InferResponse>(
                r#"{"outputs":[{"name":"a","datatype":"FP32","shape":[1],"data":["x"]}]}"#
            )
            .is_err()
        );
    }

    #[test]
    fn outputs_are_checked_against_the_request() {
        let body = br#"{"outputs":[{"name":"b","datatype":"FP32","shape":[2,1],"data":[1,2]},
            {"name":"a","datatype":"FP32","shape":[2,2],"data":[[1,2],[3,4]]}]}"#;
        let out = read_outputs(body, &["a", "b"], 2).expect("valid");
        assert_eq!(out[0].shape(), &[2, 2]);
        assert_eq!(out[1].iter().copied().collect::<Vec<f32>>(), vec![1.0, 2.0]);
        let err =
            |outputs: &[&str], rows| read_outputs(body, outputs, rows).expect_err("refused").to_string();
        assert_eq!(err(&["c"], 2), "no output c");
        assert_eq!(err(&["a"], 3), "output a has shape [2, 2], expected 3 rows");
        let short =
            br#"{"outputs":[{"name":"a","datatype":"FP32","shape":[2,4611686018427387904],"data":[1]}]}"#;
        assert!(matches!(read_outputs(short, &["a"], 2), Err(OutputError::Fill { len: 1, .. })));
        let int = br#"{"outputs":[{"name":"a","datatype":"INT64","shape":[1],"data":[1]}]}"#;
        assert_eq!(
            read_outputs(int, &["a"], 1).expect_err("refused").to_string(),
            "output a is INT64, expected FP32"
        );
        // 1e300 is a JSON number, and no f32: it reads as infinity.
        let huge = br#"{"outputs":[{"name":"a","datatype":"FP32","shape":[1,2],"data":[1,1e300]}]}"#;
        assert!(matches!(read_outputs(huge, &["a"], 1), Err(OutputError::NotFinite { index: 1, .. })));
        let negative = br#"{"outputs":[{"name":"a","datatype":"FP32","shape":[-1],"data":[1]}]}"#;
        assert!(matches!(read_outputs(negative, &["a"], 1), Err(OutputError::NegativeShape { .. })));
    }

    #[test]
    fn request_body_is_the_protocol_layout() {
        let data = [1i64, 2, 3, 4];
        let body = InferRequest {
            inputs: vec![RequestInput {
                name: "input_ids",
                shape: vec![2, 2],
                datatype: "INT64",
                data: &data,
            }],
            outputs: vec![RequestOutput { name: "logits" }],
        };
        assert_eq!(
            serde_json::to_string(&body).expect("serializes"),
            r#"{"inputs":[{"name":"input_ids","shape":[2,2],"datatype":"INT64","data":[1,2,3,4]}],"outputs":[{"name":"logits"}]}"#
        );
    }

    #[test]
    fn metadata_maps_datatypes() {
        let m: ModelMetadata = serde_json::from_str(
            r#"{"name":"m","versions":[],"platform":"","inputs":[{"name":"input_ids","datatype":"INT32","shape":[-1,-1]}],"outputs":[]}"#,
        )
        .expect("valid");
        let s = m.signature();
        assert_eq!(s.inputs[0].dtype, Dtype::Other("int32"));
        assert_eq!(s.inputs[0].shape, vec![-1, -1]);
    }
}
