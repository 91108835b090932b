//! The MAV text protocol: one source of truth for Rust and for training data.
//!
//! Placeholder docs; completed below.

pub mod buckets;
pub mod command;
pub mod encoder_input;
pub mod example;
pub mod response;
pub mod sample;
pub mod state;
pub mod tokenizer;
pub mod trace;
pub mod vocab;
