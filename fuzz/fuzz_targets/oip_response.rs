//! Open Inference Protocol answers (KServe v2 REST JSON) as a model server may send them: the inference
//! response reader, the error-body reader and the model metadata reader never panic, and what the
//! response reader accepts holds exactly the outputs asked for, each with the rows asked for, finite
//! numbers, and as many numbers as its shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::inference::remote::wire::{ModelMetadata, read_outputs};

fuzz_target!(|data: &[u8]| {
    let Some((&rows, body)) = data.split_first() else { return };
    // The first byte is the rows asked for: an ASCII digit 0 to 4 (other bytes wrap into that range).
    let rows = usize::from(rows.wrapping_sub(b'0') % 5);
    for outputs in [&["value_logits", "best_logits"][..], &["logits"][..], &[][..]] {
        if let Ok(tensors) = read_outputs(body, outputs, rows) {
            assert_eq!(tensors.len(), outputs.len());
            for t in &tensors {
                assert_eq!(t.shape().first(), Some(&rows));
                assert_eq!(t.len(), t.shape().iter().product::<usize>());
                assert!(t.iter().all(|v| v.is_finite()));
            }
        }
    }
    if let Ok(metadata) = serde_json::from_slice::<ModelMetadata>(body) {
        let signature = metadata.signature();
        assert_eq!(signature.inputs.len(), metadata.inputs.len());
    }
});
