//! An lc0 weights file's protobuf (what `mavboard import lc0` reads once the gzip is off): reading it never
//! panics and its errors say something; a network that reads builds its ONNX graph or is refused by name;
//! an ONNX model carried inside the file reads and wraps without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::lc0::embedded_onnx::{OnnxNames, embedded_onnx};
use mavboard::lc0::weights::Net;
use mavboard::model::lc0_import::graph;
use mavboard::model::lc0_onnx::LeelaOnnx;

fuzz_target!(|data: &[u8]| {
    match Net::from_proto(data) {
        Ok(net) => {
            assert!(!net.describe().is_empty());
            if let Ok(onnx) = graph(&net) {
                assert!(!onnx.is_empty(), "a graph is never empty");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Ok(Some(e)) = embedded_onnx(data)
        && let Ok(model) = LeelaOnnx::read(&e.model, &e.names)
    {
        let wrapped = model.wrap(e.input_format);
        assert!(LeelaOnnx::read(&wrapped, &OnnxNames::default()).is_err(), "the package's input is not lc0's planes");
    }
});
