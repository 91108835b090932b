//! The MAV text protocol: one source of truth for Rust and for training data.
//!
//! The format follows Schultz et al. (2024), "Mastering Board Games by External and Internal Planning
//! with Language Models", Figure 1 (a MAV example) and Figure 6 (an internal-search trace). A prompt is a
//! command header followed by input lines; the model writes the output lines in the header's order:
//!
//! ```text
//! <mav game=chess> %prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN </mav>
//! [%prev_FEN r1b1nr2/pp1np1bk/2pp1pp1/q3P3/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 13]
//! [%prev_action e5e6]
//! [%FEN r1b1nr2/pp1np1bk/2ppPpp1/q7/3P1P2/2NQB3/PPP1B1PP/R4RK1 b - - 0 13]
//! [%state b || R . . . . R K . P P P . B . P P . . N Q B . . . … n r . . |00000000013||]
//! [%top_5 d7b6:<ctrl28> f6f5:<ctrl33> d7c5:<ctrl28> f8h8:<ctrl29> a5f5:<ctrl29>]
//! [%best_action f6f5]
//! [%FEN r1b1nr2/pp1np1bk/2ppP1p1/q4p2/3P1P2/2NQB3/PPP1B1PP/R4RK1 w - - 0 14]
//! ```
//!
//! Lines are separated by `\n`; the prompt is the header and the input lines (each ending in `\n`), the
//! response the output lines (no trailing newline; a model ends with `<eos>`).
//!
//! Modules, one concept each:
//! - [`command`]: the header, its commands and which lines are inputs and outputs;
//! - [`state`]: per-game state strings (`%state`, FEN), the [`state::MavState`] trait games implement;
//! - [`buckets`]: value buckets, the Lichess win-probability formula;
//! - [`scoring`]: the rules that turn a value distribution into one number (max, mean, quantile, mean − λ·sd);
//! - [`wdl`]: win/draw/loss shares from a value distribution (UCI's `wdl`);
//! - [`example`]: rendering complete examples for training and prompting;
//! - [`response`]: the tolerant parser of model output with classified hallucinations;
//! - [`trace`]: internal-search traces (writer and tolerant parser);
//! - [`vocab`] and [`tokenizer`]: the fixed vocabulary, text ↔ ids, the Hugging Face export;
//! - [`encoder_input`]: the input contract of the one-pass encoder model;
//! - [`sample`]: synthetic examples for format and tokenizer checks.

pub mod buckets;
pub mod command;
pub mod encoder_input;
pub mod example;
pub mod response;
pub mod sample;
pub mod scoring;
pub mod searchless;
pub mod state;
pub mod tokenizer;
pub mod trace;
pub mod vocab;
pub mod wdl;
