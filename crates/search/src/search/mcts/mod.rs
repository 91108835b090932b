//! MAV-MCTS (paper §3 and its appendix, Algorithms 1–8): AlphaZero-style PUCT search whose prior, values and
//! (optionally) transitions all come from one model call per new node.
//!
//! - [`tree`]: the node arena. [`prior`]: Eq. 1. [`puct`]: SELECT. [`backup`]: BACKPROPAGATE and virtual
//!   counts. [`final_move`]: FINALMOVESELECTION and the PV. [`snapshot`]: plain data for display.
//! - [`search`]: [`Mcts`], the asynchronous batch state machine the engine drives
//!   ([`Mcts::select_batch`] → evaluate → [`Mcts::complete`] / [`Mcts::abandon`]), tree reuse
//!   ([`Mcts::advance`]) and the consistency check. [`driver`]: the synchronous [`Mcts::run`].
//! - [`params`]: every setting, with the paper's values as defaults.
//!
//! Values are win probabilities in [0, 1]; a node's value sum is from the perspective of the player to move
//! there, and a child's Q seen from its parent is 1 − its mean value.

pub mod backup;
pub mod driver;
pub mod final_move;
pub mod noise;
pub mod params;
pub mod prior;
pub mod puct;
pub mod search;
pub mod snapshot;
pub mod tree;

pub use driver::RunLimits;
pub use params::{
    FirstPlayValue, Lc0Params, MctsParams, PriorSource, SearchStyle, Temperature, VirtualCounts, WorldModel,
};
pub use search::{Batch, Completion, EvalTicket, HISTORY_KEPT, Mcts, MctsStats, Ticket};
pub use snapshot::{MctsSnapshot, MoveStats, Totals};
pub use tree::{NodeStatus, TreeMemory};
