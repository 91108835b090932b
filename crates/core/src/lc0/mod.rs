//! Leela Chess Zero's network format, as facts: its weights file (gzip of a protobuf `Net`, the field numbers
//! of lc0's `net.proto`), its 112 input planes and its 1858 policy indices. Written here from those facts;
//! no lc0 code. The importer that turns a net into an ONNX graph is [`crate::model::lc0_import`]; the
//! evaluator that runs it, [`crate::inference::lc0`].

pub mod embedded_onnx;
pub mod error;
pub mod format;
pub mod history;
pub mod moves;
pub mod planes;
pub mod policy_index;
pub mod position_map;
pub mod weights;
pub mod wire;

pub use error::Lc0Error;

/// How many value buckets mavboard spreads a network's win/draw/loss over (mav.json `num_buckets` of an
/// imported package): an odd count, so that a draw has a bucket centred on ½ (loss, draw and win on the
/// lowest, middle and highest bucket; see [`crate::inference::lc0`]).
pub const WDL_BUCKETS: u32 = 65;
pub use format::{InputFormat, NetFormat};
pub use weights::Net;
