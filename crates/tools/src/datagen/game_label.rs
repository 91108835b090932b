//! Labelling Connect Four and Hex positions with mavboard's own solvers.
//!
//! - **Connect Four**: the exact solver ([`crate::solve::connect_four`]) gives every legal move's result
//!   and how many plies the game lasts; stored as [`LabelScore::Exact`] with the plies (the win
//!   probability discounts them, see [`super::score`]). The solver is slow near the empty board, so runs
//!   start their positions [`GameLabelSettings::opening_min`] plies in (see the CLI's defaults).
//! - **Hex**: the exact solver ([`crate::solve::hex`]) when at most [`HexLabelOptions::exact_empty`] cells
//!   are empty and the board is at most 7 × 7 ([`LabelScore::Exact`] without plies: Hex results carry no
//!   distance), else UCT with [`HexLabelOptions::playouts`] random playouts ([`LabelScore::Mcts`], the
//!   record's `nodes` then holds the playouts).
//!
//! Labels must not depend on what a worker solved before (a run's records are the same whatever the
//! thread count), so the solvers' tables are cleared before every chain ([`GameLabeler::reset`]) and the
//! MCTS seed is drawn from the run seed and the position.

use serde::{Deserialize, Serialize};

use super::DatagenError;
use super::label::Label;
use super::record::{LabelGame, MoveLabel};
use super::sample::mix64;
use super::score::{ExactResult, LabelScore};
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::{HexState, MAX_SIZE, MIN_SIZE};
use crate::game::{GameKind, GameState};
use crate::mav::command::StateFormat;
use crate::mav::state::MavState;
use crate::solve::connect_four::{GameValue, Solver as FourSolver};
use crate::solve::hex::mcts::{self, Config};
use crate::solve::hex::{HexValue, MAX_EXACT_SIZE, Solver as HexSolver};

/// The transposition table of the Connect Four solver in a labelling worker: 2^22 entries (32 MiB),
/// cleared before every chain.
pub const FOUR_TABLE_BITS: u32 = 22;
/// The transposition table of the Hex solver in a labelling worker: 2^20 entries (24 MiB).
pub const HEX_TABLE_BITS: u32 = 20;
/// The most empty cells the exact Hex solver is asked to solve (the CLI's default and `mavboard solve`'s).
pub const DEFAULT_HEX_EXACT_EMPTY: u32 = 16;
/// The UCB1 constant of the Hex MCTS labeller (the solver's default).
pub const HEX_MCTS_C: f64 = 0.7;

/// How Hex positions are set up and labelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HexLabelOptions {
    /// The board size N (N × N).
    pub size: u32,
    /// Whether the swap rule is played.
    pub swap: bool,
    /// Positions with at most this many empty cells (on boards up to 7 × 7) are solved exactly.
    pub exact_empty: u32,
    /// Playouts of the MCTS labeller for the other positions.
    pub playouts: u32,
}

/// What decides a Connect Four or Hex run's positions and labels (part of [`super::LabelSettings`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameLabelSettings {
    /// Connect Four or Hex.
    pub game: LabelGame,
    /// The fewest random plies played from the empty board before a chain's first labelled position.
    pub opening_min: u32,
    /// The most (each chain draws its count uniformly from `opening_min..=opening_max`).
    pub opening_max: u32,
    /// Hex only: the board and the labeller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<HexLabelOptions>,
}

impl GameLabelSettings {
    /// Checks the settings.
    pub fn check(&self) -> Result<(), DatagenError> {
        let bad = |m: String| Err(DatagenError::Settings(m));
        if self.opening_min > self.opening_max {
            return bad(format!(
                "the opening plies run from {} to {}: the first must not exceed the second",
                self.opening_min, self.opening_max
            ));
        }
        match (self.game, &self.hex) {
            (LabelGame::ConnectFour, None) => {
                if self.opening_max >= 42 {
                    return bad("a Connect Four opening must leave an empty cell (at most 41 plies)".into());
                }
                Ok(())
            }
            (LabelGame::Hex, Some(h)) => {
                if !(MIN_SIZE..=MAX_SIZE).contains(&h.size) {
                    return bad(format!("--size must be between {MIN_SIZE} and {MAX_SIZE}, not {}", h.size));
                }
                if self.opening_max >= h.size * h.size {
                    return bad(format!(
                        "a Hex opening on {0}×{0} must leave an empty cell (at most {1} plies)",
                        h.size,
                        h.size * h.size - 1
                    ));
                }
                if h.playouts == 0 {
                    return bad("--playouts must be at least 1".into());
                }
                Ok(())
            }
            (LabelGame::Hex, None) => bad("Hex settings need the board options".into()),
            (game, _) => bad(format!("{} is not labelled by a solver", game.name())),
        }
    }

    /// The labeller's description for the manifest.
    pub fn labeler_name(&self) -> String {
        match &self.hex {
            Some(h) => format!(
                "mavboard Hex solver (exact up to {} empty cells on boards up to {MAX_EXACT_SIZE}×{MAX_EXACT_SIZE}, \
                 else UCT with {} random playouts, c = {HEX_MCTS_C})",
                h.exact_empty, h.playouts
            ),
            None => "mavboard Connect Four solver (exact)".to_owned(),
        }
    }
}

/// Reads a Connect Four or Hex label's position (its `%state` string).
pub fn four_state(text: &str) -> Result<ConnectFourState, DatagenError> {
    ConnectFourState::from_mav_text(GameKind::ConnectFour, StateFormat::State, text)
        .map_err(|e| DatagenError::BadState { text: text.to_owned(), reason: e.to_string() })
}

/// Reads a Hex label's position (its `%state` string).
pub fn hex_state(text: &str) -> Result<HexState, DatagenError> {
    HexState::from_mav_text(GameKind::Hex, StateFormat::State, text)
        .map_err(|e| DatagenError::BadState { text: text.to_owned(), reason: e.to_string() })
}

/// The position hash of a Connect Four or Hex label's `%state` string (what runs deduplicate on).
pub fn game_state_hash(game: LabelGame, text: &str) -> Result<u64, DatagenError> {
    match game {
        LabelGame::ConnectFour => Ok(four_state(text)?.hash64()),
        LabelGame::Hex => Ok(hex_state(text)?.hash64()),
        LabelGame::Chess => Err(DatagenError::Settings("a chess label has a FEN, not a %state".into())),
    }
}

/// A worker's solver for one game.
#[derive(Debug)]
pub enum GameLabeler {
    /// Connect Four's exact solver.
    ConnectFour(Box<FourSolver>),
    /// Hex's exact solver, with the options for when to use MCTS instead.
    Hex {
        /// The exact solver.
        solver: Box<HexSolver>,
        /// Board and labeller options.
        options: HexLabelOptions,
        /// The run seed (the MCTS seed of a position mixes it with the position's hash).
        seed: u64,
    },
}

fn exact(value: GameValue) -> LabelScore {
    match value {
        GameValue::Win { plies } => LabelScore::Exact { result: ExactResult::Win, plies: Some(plies) },
        GameValue::Draw { plies } => LabelScore::Exact { result: ExactResult::Draw, plies: Some(plies) },
        GameValue::Loss { plies } => LabelScore::Exact { result: ExactResult::Loss, plies: Some(plies) },
    }
}

fn hex_exact(value: HexValue) -> LabelScore {
    let result = match value {
        HexValue::Win => ExactResult::Win,
        HexValue::Loss => ExactResult::Loss,
    };
    LabelScore::Exact { result, plies: None }
}

impl GameLabeler {
    /// A labeller for the game of `settings`, with `seed` the run seed.
    pub fn new(settings: &GameLabelSettings, seed: u64) -> Result<GameLabeler, DatagenError> {
        settings.check()?;
        Ok(match &settings.hex {
            None => GameLabeler::ConnectFour(Box::new(FourSolver::with_table_bits(FOUR_TABLE_BITS))),
            Some(h) => GameLabeler::Hex {
                solver: Box::new(HexSolver::with_table_bits(HEX_TABLE_BITS)),
                options: h.clone(),
                seed,
            },
        })
    }

    /// Forgets what the solver learnt (called before every chain, so labels and node counts do not depend
    /// on which chains a worker solved before).
    pub fn reset(&mut self) {
        match self {
            GameLabeler::ConnectFour(s) => {
                s.clear();
                s.reset_nodes();
            }
            GameLabeler::Hex { solver, .. } => {
                solver.clear();
                solver.reset_nodes();
            }
        }
    }

    /// Labels a Connect Four position that is not over.
    pub fn label_four(&mut self, state: &ConnectFourState) -> Result<Label, DatagenError> {
        let GameLabeler::ConnectFour(solver) = self else {
            return Err(DatagenError::Settings("this worker labels Hex, not Connect Four".into()));
        };
        let a = solver.analyse(state);
        let best = a.best.ok_or_else(|| DatagenError::BadLabel {
            fen: state.mav_state(),
            reason: "the position has no legal move".into(),
        })?;
        let moves = a
            .moves
            .iter()
            .map(|m| MoveLabel { uci: state.action_to_text(m.column), score: exact(m.value) })
            .collect();
        Ok(Label { moves, best: state.action_to_text(best), depth: 0, nodes: a.nodes })
    }

    /// Labels a Hex position that is not over: exactly when it is small enough, else by MCTS.
    pub fn label_hex(&mut self, state: &HexState) -> Result<Label, DatagenError> {
        let GameLabeler::Hex { solver, options, seed } = self else {
            return Err(DatagenError::Settings("this worker labels Connect Four, not Hex".into()));
        };
        let bad = |reason: String| DatagenError::BadLabel { fen: state.mav_state(), reason };
        let empty = state.size() * state.size() - state.stone_count();
        if state.size() <= MAX_EXACT_SIZE && empty <= options.exact_empty {
            let a = solver.analyse(state).map_err(|e| bad(e.to_string()))?;
            let best = a.best.ok_or_else(|| bad("the position has no legal move".into()))?;
            let moves = a
                .moves
                .iter()
                .map(|m| MoveLabel { uci: state.action_to_text(m.action), score: hex_exact(m.value) })
                .collect();
            return Ok(Label { moves, best: state.action_to_text(best), depth: 0, nodes: a.nodes });
        }
        let config =
            Config { playouts: options.playouts, c: HEX_MCTS_C, seed: mix64(*seed ^ state.hash64()) };
        let r = mcts::search(state, config);
        let best = r.best.ok_or_else(|| bad("the position has no legal move".into()))?;
        let moves = r
            .moves
            .iter()
            .map(|m| MoveLabel {
                uci: state.action_to_text(m.action),
                score: LabelScore::Mcts { wp: m.win_prob, visits: m.visits },
            })
            .collect();
        Ok(Label { moves, best: state.action_to_text(best), depth: 0, nodes: r.playouts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::connect_four::Solver;

    fn hex(size: u32, exact_empty: u32, playouts: u32) -> GameLabelSettings {
        GameLabelSettings {
            game: LabelGame::Hex,
            opening_min: 0,
            opening_max: 4,
            hex: Some(HexLabelOptions { size, swap: false, exact_empty, playouts }),
        }
    }

    #[test]
    fn connect_four_labels_are_the_solver_values() {
        let four =
            GameLabelSettings { game: LabelGame::ConnectFour, opening_min: 10, opening_max: 12, hex: None };
        let mut l = GameLabeler::new(&four, 1).expect("labeller");
        let s = ConnectFourState::from_moves("4453445366").expect("moves");
        let label = l.label_four(&s).expect("labels");
        let a = Solver::new().analyse(&s);
        assert_eq!(label.moves.len(), a.moves.len());
        for (m, want) in label.moves.iter().zip(&a.moves) {
            assert_eq!(m.uci, want.column.to_string());
            assert_eq!(m.score, exact(want.value));
        }
        assert_eq!(Some(label.best), a.best.map(|c| c.to_string()));
        assert!(l.label_hex(&HexState::new(3).expect("3x3")).is_err());
    }

    #[test]
    fn hex_is_exact_when_small_and_mcts_otherwise() {
        let s = HexState::new(3).expect("3x3");
        let mut exact = GameLabeler::new(&hex(3, 16, 100), 1).expect("labeller");
        let label = exact.label_hex(&s).expect("labels");
        assert_eq!(label.moves.len(), 9);
        // The centre wins on 3×3; the solver proves it.
        let centre = label.moves.iter().find(|m| m.uci == "b2").expect("b2");
        assert_eq!(centre.score, LabelScore::Exact { result: ExactResult::Win, plies: None });
        let mut sampled = GameLabeler::new(&hex(3, 4, 300), 1).expect("labeller");
        let label = sampled.label_hex(&s).expect("labels");
        assert_eq!(label.nodes, 300);
        assert!(label.moves.iter().all(|m| matches!(m.score, LabelScore::Mcts { .. })));
        let again = GameLabeler::new(&hex(3, 4, 300), 1).expect("labeller").label_hex(&s).expect("labels");
        assert_eq!(label, again, "MCTS labels are seeded by the run seed and the position");
    }

    #[test]
    fn settings_are_checked() {
        assert!(hex(7, 16, 100).check().is_ok());
        assert!(hex(14, 16, 100).check().is_err());
        assert!(hex(3, 16, 0).check().is_err());
        assert!(GameLabelSettings { opening_max: 9, ..hex(3, 16, 10) }.check().is_err());
        let mut four =
            GameLabelSettings { game: LabelGame::ConnectFour, opening_min: 5, opening_max: 4, hex: None };
        assert!(four.check().is_err());
        four.opening_min = 4;
        assert!(four.check().is_ok());
        assert!(GameLabelSettings { game: LabelGame::Chess, ..four }.check().is_err());
        let s = ConnectFourState::from_moves("44").expect("moves");
        assert_eq!(game_state_hash(LabelGame::ConnectFour, &s.mav_state()).expect("reads"), s.hash64());
    }
}
