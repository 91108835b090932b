//! The tests of the `mavboard` binary and the library through it, one module per area: the subcommands,
//! model formats and importers, search, remote evaluation, the UCI server, packaging. The window's tests
//! are in `tests/ui/`; each crate under `crates/` has its own.

mod cli_analyse_games;
mod cli_bench;
mod cli_broken_pipe;
mod cli_compare;
mod cli_datagen;
mod cli_eval;
mod cli_mav;
mod cli_pgn;
mod cli_quantize;
#[path = "../common/mod.rs"]
mod common;
#[path = "../datagen_common/mod.rs"]
mod datagen_common;
mod datagen_run;
mod datagen_search;
mod datagen_shard;
mod datagen_stockfish;
mod hf_import;
mod hostile_packages;
mod inference_action_value;
mod inference_encoder;
mod inference_lm;
mod inspect;
mod internal_search;
mod journal_kill;
mod lc0_reference;
mod league;
mod league_games;
mod mav_examples;
mod mav_response;
mod mav_trace;
#[path = "../mlserver_common/mod.rs"]
mod mlserver_common;
#[path = "../package_copy/mod.rs"]
mod package_copy;
#[path = "../packaging_common/mod.rs"]
mod packaging_common;
mod packaging_deb;
mod packaging_layouts;
mod perft_suites;
mod remote_bench;
mod remote_llama;
mod remote_tls;
mod remote_triton_server;
mod review;
mod search_mcts;
mod search_minimax;
mod uci_python_chess;
mod uci_server;
mod uci_tournament;
