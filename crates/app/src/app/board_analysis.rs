//! What analyses a Connect Four or Hex board: the exact solver and the model (MCTS) beside it.

use super::board_game::OracleLink;
use super::board_model::BoardModel;

/// The solver and the model beside the Connect Four / Hex board.
#[derive(Default)]
pub struct BoardAnalysis {
    /// The solver beside the board.
    pub oracle: OracleLink,
    /// The model beside the board (driven by the app shell when it has an engine).
    pub model: BoardModel,
}
