//! Exact solvers: game-theoretic values computed by exhaustive search, used as training labels and as
//! reference opponents. Pure: no I/O, no threads.
//!
//! - [`connect_four`]: Connect Four (negamax with alpha-beta, a transposition table, move ordering).

pub mod connect_four;
