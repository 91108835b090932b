//! What the app knows about internal search: whether a run is out, and the last report (with the position
//! it was for). Runtime state, filled by the engine glue ([`super::engine_link`]), read by the panel.

use super::game_link::LinkError;
use crate::search::internal::InternalReport;

/// The internal-search panel's state.
#[derive(Debug, Clone, Default)]
pub struct InternalSearchState {
    /// A run is in progress.
    pub running: bool,
    /// The last run's report, or why it failed.
    pub result: Option<Result<InternalReport, LinkError>>,
}
