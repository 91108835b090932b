//! Search over a model: MAV-MCTS (paper §3, the external search) and explicit minimax (the tree that internal
//! search writes out, §4).
//!
//! Pure and deterministic: no threads, no clocks, no ONNX. Models are reached only through
//! [`crate::inference::evaluator::Evaluator`]; the engine drives [`mcts::Mcts`]'s batch state machine from its
//! threads, tests and the CLI use the synchronous [`mcts::Mcts::run`].
//!
//! ```
//! use mavboard_search::game::GameState;
//! use mavboard_search::game::connect_four::ConnectFourState;
//! use mavboard_search::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator, MoveValue};
//! use mavboard_search::mav::buckets::{Buckets, ValueDistribution};
//! use mavboard_search::search::mcts::{Mcts, MctsParams, RunLimits};
//!
//! /// A model that likes the centre: each Connect Four column's win probability falls off with its distance
//! /// from column 4, as a distribution peaked in one of 64 buckets.
//! struct Centre;
//!
//! impl Evaluator<ConnectFourState> for Centre {
//!     fn evaluate(
//!         &mut self,
//!         requests: &[EvalRequest<ConnectFourState>],
//!     ) -> Vec<Result<EvalResult<ConnectFourState>, EvalError>> {
//!         let buckets = Buckets::mav();
//!         requests
//!             .iter()
//!             .map(|r| {
//!                 let moves = r
//!                     .state
//!                     .legal_actions()
//!                     .into_iter()
//!                     .map(|a| {
//!                         let p = 0.8 - 0.1 * (a.index() as f64 - 3.0).abs();
//!                         let mut probs = vec![0.0; buckets.k() as usize];
//!                         probs[((p * 63.0).round()) as usize] = 1.0;
//!                         let dist = ValueDistribution::from_probs(buckets, probs).expect("sums to 1");
//!                         MoveValue::valued(a, r.state.action_to_text(a), dist)
//!                     })
//!                     .collect();
//!                 Ok(EvalResult::values(moves, r.state.outcome()))
//!             })
//!             .collect()
//!     }
//! }
//!
//! // MAV-MCTS over the evaluator: 64 simulations in batches of 8 model calls.
//! let root = ConnectFourState::default();
//! let mut mcts = Mcts::new(root, 0, MctsParams::default()).expect("valid parameters");
//! mcts.run(&mut Centre, RunLimits { simulations: 64, batch_size: 8 }).expect("searched");
//! let best = mcts.best_action().expect("a move");
//! assert_eq!(root.action_to_text(best), "4");
//! assert!(mcts.snapshot().totals.stats.simulations >= 64);
//! ```

pub mod error;
pub mod internal;
pub mod mcts;
pub mod minimax;
pub mod mock;
pub mod trace_align;
pub mod tree_node;

pub use error::SearchError;
