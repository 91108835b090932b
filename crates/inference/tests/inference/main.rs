//! mavboard-inference's integration tests: the evaluators on the shipped and fixture packages, the MAV
//! protocol for Connect Four and Hex through a model, ONNX Runtime, Triton's layout, the UCI client.

mod inference_games;
mod mav_connect_four;
mod mav_hex;
mod ort_runtime;
#[path = "../../../../tests/package_copy/mod.rs"]
mod package_copy;
mod remote_triton;
mod uci_stockfish;
