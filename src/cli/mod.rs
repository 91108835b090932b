//! The command-line subcommands, one file each. They parse arguments and print; the work is in the library.

#[macro_use]
pub mod out;

pub mod analyse;
pub mod annotate;
pub mod bench;
pub mod bench_lc0;
pub mod choice;
pub mod datagen;
pub mod eval;
pub mod eval_matching;
pub mod import;
pub mod inspect;
pub mod internal;
pub mod journal_drill;
pub mod league;
pub mod mav;
pub mod package;
pub mod perft;
pub mod pgn;
pub mod position;
pub mod soak;
pub mod solve;
pub mod solve_hex;
pub mod uci;
