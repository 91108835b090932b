//! `mavboard package triton`: the Triton model repository of the shipped encoder lists the graph's exact
//! inputs and outputs (read from model.onnx) and carries the graph unchanged.

use mavboard_inference::inference::onnx::session::graph_signature;
use mavboard_inference::inference::onnx::{OnnxSession, SessionOptions};
use mavboard_inference::inference::remote::triton::write_repository;
use mavboard_inference::model::ModelPackage;

#[test]
fn triton_repository_of_the_shipped_encoder() {
    let src = mavboard_inference::checkout_dir().join("assets/models/mav-enc-tiny");
    let package = ModelPackage::open(&src).expect("package");
    let session = OnnxSession::open(&package, &SessionOptions::default()).expect("opens");
    let repo = std::env::temp_dir().join(format!("mavboard-triton-{}", std::process::id()));
    std::fs::remove_dir_all(&repo).ok();
    let dir = write_repository(&package, &graph_signature(&session.session), &repo, 32).expect("writes");
    assert_eq!(dir, repo.join("mav-enc-tiny"));
    let config = std::fs::read_to_string(dir.join("config.pbtxt")).expect("config");
    let body: String = config.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body,
        "name: \"mav-enc-tiny\"
backend: \"onnxruntime\"
max_batch_size: 32
input [
  { name: \"input_ids\" data_type: TYPE_INT64 dims: [ -1 ] },
  { name: \"attention_mask\" data_type: TYPE_INT64 dims: [ -1 ] }
]
output [
  { name: \"value_logits\" data_type: TYPE_FP32 dims: [ -1, 64 ] },
  { name: \"best_logits\" data_type: TYPE_FP32 dims: [ -1 ] }
]
dynamic_batching { max_queue_delay_microseconds: 1000 }"
    );
    let copied = std::fs::read(dir.join("1/model.onnx")).expect("graph");
    assert_eq!(copied, std::fs::read(package.onnx_path()).expect("original"), "the graph is unchanged");
    std::fs::remove_dir_all(&repo).ok();
}
