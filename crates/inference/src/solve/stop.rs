//! Stopping a long solve from another thread.
//!
//! The exact solvers can take minutes (Connect Four near the empty board, Hex with many empty cells). A
//! caller that may want the answer no longer (the app, when the user moves on) gives the solver a
//! [`StopFlag`]; the search checks it every few thousand positions and unwinds. The values it computed
//! while unwinding are meaningless, so a stopped solve returns no value and forgets its table.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many positions a solver searches between two looks at its flag (a power of two, minus one, as a
/// mask of the node counter).
pub const CHECK_MASK: u64 = 0x3FFF;

/// A shared flag: set it to stop the solves that hold a clone.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Asks every solve holding this flag to stop.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether it was set.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = StopFlag::new();
        let b = a.clone();
        assert!(!b.is_set());
        a.set();
        assert!(b.is_set());
    }
}
