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

/// What a stoppable solver keeps besides its table: the count of positions it searched and the flag that
/// may stop it. Both exact solvers hold one, and their search calls [`Control::enter`] once per position.
#[derive(Debug, Clone, Default)]
pub struct Control {
    nodes: u64,
    flag: Option<StopFlag>,
    stopped: bool,
}

impl Control {
    /// Positions searched since the solver was made (or [`Control::reset_nodes`]).
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Sets the node counter to 0.
    pub fn reset_nodes(&mut self) {
        self.nodes = 0;
    }

    /// Lets `flag` stop the searches from now on.
    pub fn set_flag(&mut self, flag: StopFlag) {
        self.flag = Some(flag);
    }

    /// Whether the flag is set already: a search not worth starting.
    pub fn flag_set(&self) -> bool {
        self.flag.as_ref().is_some_and(StopFlag::is_set)
    }

    /// Counts one position entered by the search and says whether the search must unwind now: it was
    /// stopped before, or this is a look at the flag (every [`CHECK_MASK`] + 1 positions) and it is set.
    pub fn enter(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.nodes += 1;
        if self.nodes & CHECK_MASK == 0 && self.flag_set() {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether the search that just ended was stopped (its value is meaningless and the table unsound);
    /// clears the mark for the next search.
    pub fn take_stopped(&mut self) -> bool {
        std::mem::take(&mut self.stopped)
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

    #[test]
    fn control_counts_positions_and_stops_at_the_first_look_after_the_flag() {
        let mut c = Control::default();
        assert!(!c.enter() && c.nodes() == 1);
        let flag = StopFlag::new();
        c.set_flag(flag.clone());
        flag.set();
        assert!(c.flag_set());
        // The flag is looked at when the count reaches a multiple of CHECK_MASK + 1, not before.
        let mut entered = 1;
        while !c.enter() {
            entered += 1;
        }
        assert_eq!(entered + 1, CHECK_MASK + 1);
        assert!(c.enter(), "a stopped search stays stopped");
        assert_eq!(c.nodes(), CHECK_MASK + 1, "positions are not counted once stopped");
        assert!(c.take_stopped() && !c.take_stopped());
        c.reset_nodes();
        assert_eq!(c.nodes(), 0);
    }
}
