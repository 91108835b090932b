//! The window's tests, one module per area: egui_kittest drives the real app (`MavboardApp`) headless, and
//! the snapshot tests render it with wgpu.

#[path = "../common/mod.rs"]
mod common;
#[path = "../mlserver_common/mod.rs"]
mod mlserver_common;
mod remote_faults;
mod remote_mlserver;
mod searchless_import;
mod ui_analysis;
mod ui_board;
mod ui_board_games;
mod ui_board_model;
#[path = "../ui_common/mod.rs"]
mod ui_common;
mod ui_compare;
mod ui_heatmap;
mod ui_inside;
mod ui_internal_search;
mod ui_layout;
mod ui_lc0;
mod ui_model_runtime;
mod ui_pgn;
mod ui_pgn_index;
mod ui_pgn_open;
mod ui_play;
mod ui_pv_preview;
mod ui_review_uci;
mod ui_setup;
mod ui_snapshot;
mod ui_tree_explorer;
mod ui_uci_engine;
mod ui_unsaved;
