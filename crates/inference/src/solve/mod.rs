//! Exact solvers: game-theoretic values computed by exhaustive search, used as training labels and as
//! reference opponents. Pure: no I/O, no threads.
//!
//! - [`connect_four`]: Connect Four (negamax with alpha-beta, a transposition table, move ordering).
//! - [`depth_limited`]: negamax with alpha-beta to a fixed depth for any game (the league's depth-limited
//!   solvers).
//! - [`hex`]: Hex (exact boolean negamax on boards up to 7×7, and MCTS with random playouts for any size).
//! - [`stop`]: a flag another thread sets to stop a long solve.

pub mod connect_four;
pub mod depth_limited;
pub mod hex;
pub mod stop;
