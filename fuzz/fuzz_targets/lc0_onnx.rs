//! An ONNX file handed to `mavboard import lc0` (lc0's `leela2onnx` output, or anything else): reading it
//! never panics; a model that reads wraps for every input format into a model that is well-formed protobuf
//! whose one input is the package's plane masks (so reading it again as an lc0 export names that input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::lc0::InputFormat;
use mavboard::lc0::embedded_onnx::OnnxNames;
use mavboard::model::lc0_onnx::{Lc0OnnxError, LeelaOnnx};

fuzz_target!(|data: &[u8]| {
    let model = match LeelaOnnx::read(data, &OnnxNames::default()) {
        Ok(model) => model,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(!model.describe().is_empty());
    for format in InputFormat::ALL {
        let wrapped = model.wrap(format);
        match LeelaOnnx::read(&wrapped, &OnnxNames::default()) {
            Err(Lc0OnnxError::Input { name, .. }) => assert_eq!(name, "planes"),
            other => panic!("the wrapped model reads back as {other:?}"),
        }
    }
});
