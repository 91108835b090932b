//! Threads: the only module that spawns them.
//!
//! Everything below this layer (rules, formats, inference, search) is single-threaded and deterministic;
//! this module runs that work on background threads and talks to them over crossbeam channels:
//! [`pool`] runs independent jobs on N workers that each own an expensive resource (a Stockfish process,
//! an ONNX session), and [`line_reader`] turns a blocking byte stream (a child process's stdout) into a
//! channel of lines that can be waited on with a timeout.

pub mod line_reader;
pub mod pool;
