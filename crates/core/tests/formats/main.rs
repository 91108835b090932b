//! mavboard-core's integration tests, one module per area: the MAV text protocol and its tokenizers, PGN.
//! They link neither ONNX Runtime nor egui.

mod mav_hf_tokenizer;
mod mav_robustness;
mod mav_tokenizer;
mod mav_tokenizer_master_games;
mod pgn;
mod pgn_strict;
