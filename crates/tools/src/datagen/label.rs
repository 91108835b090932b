//! Labelling one position: every legal move's score.

use std::path::Path;

use super::DatagenError;
use super::record::MoveLabel;
use crate::game::chess::ChessState;
use crate::game::{GameKind, GameState};
use crate::uci::{SearchLimits, UciEngine};

/// The labels of one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Every legal move with its score (side to move's view), best first.
    pub moves: Vec<MoveLabel>,
    /// The move the labeller would play.
    pub best: String,
    /// The search depth reached.
    pub depth: u32,
    /// The nodes searched.
    pub nodes: u64,
}

/// Something that scores every legal move of a position. Implementations must be deterministic: the same
/// position always gets the same label (the data set's reproducibility rests on it).
pub trait Labeler {
    /// The labeller's name for the manifest (e.g. `Stockfish 15.1`).
    fn name(&self) -> String;
    /// Labels a position that has at least one legal move.
    fn label(&mut self, state: &ChessState) -> Result<Label, DatagenError>;
}

/// Stockfish (or any UCI engine with MultiPV) as a labeller: MultiPV = the number of legal moves, one
/// search thread, a fixed hash size cleared before every position (`ucinewgame`), so that labels do not
/// depend on what was searched before.
pub struct StockfishLabeler {
    engine: UciEngine,
    limits: SearchLimits,
    chess960: bool,
    multipv: usize,
}

impl StockfishLabeler {
    /// Starts the engine at `path` with `Threads=1` and `Hash=hash_mb`, searching to `limits` for each
    /// position.
    pub fn start(path: &Path, hash_mb: u32, limits: SearchLimits) -> Result<Self, DatagenError> {
        let mut engine = UciEngine::start(path, &[])?;
        engine.set_option("Threads", "1")?;
        engine.set_option("Hash", &hash_mb.to_string())?;
        engine.set_option("UCI_Chess960", "false")?;
        engine.set_option("MultiPV", "1")?;
        engine.is_ready()?;
        Ok(StockfishLabeler { engine, limits, chess960: false, multipv: 1 })
    }
}

impl Labeler for StockfishLabeler {
    fn name(&self) -> String {
        self.engine.name()
    }

    fn label(&mut self, state: &ChessState) -> Result<Label, DatagenError> {
        let fen = state.fen();
        let bad = |reason: String| DatagenError::BadLabel { fen: fen.clone(), reason };
        let legal = state.legal_actions();
        if legal.is_empty() {
            return Err(bad("the position has no legal move".into()));
        }
        let chess960 = state.kind() == GameKind::Chess960;
        if chess960 != self.chess960 {
            self.engine.set_option("UCI_Chess960", if chess960 { "true" } else { "false" })?;
            self.chess960 = chess960;
        }
        if legal.len() != self.multipv {
            self.engine.set_option("MultiPV", &legal.len().to_string())?;
            self.multipv = legal.len();
        }
        self.engine.new_game()?;
        self.engine.position(&fen, &[])?;
        let result = self.engine.go(&self.limits)?;
        let mut moves = Vec::with_capacity(result.lines.len());
        let mut seen = std::collections::HashSet::new();
        for line in &result.lines {
            let (Some(first), Some(score)) = (line.pv.first(), line.score) else { continue };
            let action =
                state.parse_action(first).map_err(|e| bad(format!("the engine's line starts {e}")))?;
            if !seen.insert(action) {
                return Err(bad(format!("the engine gave two lines for {first}")));
            }
            moves.push(MoveLabel { uci: state.action_to_text(action), score: score.value.into() });
        }
        if moves.len() != legal.len() {
            return Err(bad(format!("the engine scored {} of the {} legal moves", moves.len(), legal.len())));
        }
        let best = result.bestmove.ok_or_else(|| bad("the engine gave no bestmove".into()))?;
        let depth = result.lines.first().and_then(|l| l.depth).unwrap_or(0);
        let nodes = result.lines.iter().filter_map(|l| l.nodes).max().unwrap_or(0);
        Ok(Label { moves, best, depth, nodes })
    }
}
