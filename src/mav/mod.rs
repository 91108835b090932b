//! The MAV text protocol: one source of truth for Rust and for training data.

pub mod buckets;
pub mod searchless;
