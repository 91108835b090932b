//! The time a move gets from the clock (UCI `go wtime btime winc binc movestogo`), and how long past that
//! its end may wait for the model's first answer.
//!
//! A GUI takes the time from sending `go` to reading `bestmove` off the engine's clock, so the plan keeps
//! back a *move overhead* for what the clock sees and the search does not (the pipe, thread hops, a loaded
//! machine; the UCI option `Move Overhead`, as Stockfish names it), and never spends more than half of
//! what is left on one move, grace included.

use std::time::Duration;

/// The default `Move Overhead`, in milliseconds.
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;

/// The largest `Move Overhead`, in milliseconds.
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5000;

/// Moves planned for the rest of the game when the GUI gives no `movestogo` (sudden death).
const PLANNED_MOVES: u64 = 30;

/// A move's time from the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveTime {
    /// When the search stops: a share of the time left plus most of the increment.
    pub soft: Duration,
    /// How much longer the stop may wait while the root has no evaluation yet (so that the move is the
    /// model's choice, not a fallback), up to half of the usable time left.
    pub grace: Duration,
}

/// The time for a move with `left_ms` on the mover's clock, an increment of `inc_ms`, `moves_to_go` moves
/// to the next time control (`None`: sudden death), keeping `overhead_ms` back.
pub fn move_time(left_ms: u64, inc_ms: u64, moves_to_go: Option<u64>, overhead_ms: u64) -> MoveTime {
    let usable = left_ms.saturating_sub(overhead_ms);
    let hard = usable / 2;
    let share = usable / moves_to_go.unwrap_or(PLANNED_MOVES).max(1) + inc_ms * 3 / 4;
    let soft = share.min(hard).max(1);
    MoveTime { soft: Duration::from_millis(soft), grace: Duration::from_millis(hard.saturating_sub(soft)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: MoveTime) -> (u128, u128) {
        (t.soft.as_millis(), t.grace.as_millis())
    }

    #[test]
    fn a_share_of_the_clock_plus_most_of_the_increment() {
        // 10 s + 0.1 s: (10000 − 30) / 30 + 75.
        assert_eq!(ms(move_time(10_000, 100, None, 30)), (407, 4985 - 407));
        // 40 moves to go in 60 s: a fortieth.
        assert_eq!(ms(move_time(60_000, 0, Some(40), 0)), (1500, 30_000 - 1500));
    }

    #[test]
    fn never_more_than_half_of_what_is_left_grace_included() {
        for (left, inc, to_go) in [(1000, 10, None), (200, 100, None), (100, 10, Some(1)), (60, 1000, None)] {
            let t = move_time(left, inc, to_go, 30);
            let usable = (left - 30) as u128;
            assert!(t.soft.as_millis() + t.grace.as_millis() <= usable / 2 + 1, "{left}+{inc}: {t:?}");
        }
        // 1 s + 0.01 s at the start: 32 + 7 ms, and a grace up to 485 ms.
        assert_eq!(ms(move_time(1000, 10, None, 30)), (39, 446));
    }

    #[test]
    fn a_clock_under_the_overhead_still_gives_a_move_no_grace() {
        assert_eq!(ms(move_time(20, 0, None, 30)), (1, 0));
        assert_eq!(ms(move_time(0, 0, Some(0), 0)), (1, 0));
    }
}
