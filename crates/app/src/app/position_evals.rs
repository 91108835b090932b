//! The model's values of the positions it evaluated, for the evaluation graph: each position's moves'
//! value distributions, kept for the loaded model only and up to a fixed number of positions (the oldest
//! forgotten first), so that hours of analysis, reviews and searches do not grow memory without end.

use crate::bounded_map::BoundedMap;
use crate::game::chess::ChessState;
use crate::mav::scoring::Scoring;
use crate::search::mcts::MoveStats;

/// How many positions [`PositionEvals`] keeps by default: a few dozen reviewed games (about 30 MB at most
/// with 40 moves of 64 buckets a position).
pub const DEFAULT_CAPACITY: usize = 4096;

/// The model's value of a position: its moves' value distributions, from which each scoring rule gives the
/// best move's win probability for the player to move.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionEval {
    /// One distribution per valued move (bucket probabilities, single precision: half the memory, and the
    /// graph draws far coarser than 1e-6).
    dists: Vec<Vec<f32>>,
}

impl PositionEval {
    /// From a snapshot's root moves (`None` when no move has a distribution).
    pub fn from_moves(moves: &[MoveStats]) -> Option<PositionEval> {
        Self::from_dists(moves.iter().filter_map(|m| m.distribution.as_deref()))
    }

    /// From a model answer's moves (`None` when it valued none).
    pub fn from_result(result: &crate::inference::evaluator::EvalResult<ChessState>) -> Option<PositionEval> {
        Self::from_dists(result.moves.iter().filter_map(|m| m.dist.as_ref().map(|d| d.probs())))
    }

    fn from_dists<'a>(dists: impl Iterator<Item = &'a [f64]>) -> Option<PositionEval> {
        let dists: Vec<Vec<f32>> =
            dists.filter(|d| !d.is_empty()).map(|d| d.iter().map(|&p| p as f32).collect()).collect();
        (!dists.is_empty()).then_some(PositionEval { dists })
    }

    /// The best move's value under `scoring`.
    pub fn value(&self, scoring: Scoring) -> f64 {
        let mut probs = Vec::new();
        self.dists
            .iter()
            .map(|d| {
                probs.clear();
                probs.extend(d.iter().map(|&p| f64::from(p)));
                scoring.of_probs(&probs)
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// The values of up to a fixed number of positions by position text (FEN), the oldest stored forgotten
/// first. The app empties it when another model is loaded: a graph never mixes two models' values.
#[derive(Debug, Clone)]
pub struct PositionEvals(BoundedMap<String, PositionEval>);

impl Default for PositionEvals {
    fn default() -> Self {
        PositionEvals::with_capacity(DEFAULT_CAPACITY)
    }
}

impl PositionEvals {
    /// An empty store of at most `capacity` positions (0 keeps nothing).
    pub fn with_capacity(capacity: usize) -> PositionEvals {
        PositionEvals(BoundedMap::new(capacity))
    }

    /// Stores the value of `position` (replacing an older one), forgetting the oldest positions beyond the
    /// capacity.
    pub fn insert(&mut self, position: String, eval: PositionEval) {
        self.0.insert(position, eval);
    }

    /// The value of `position`, when it is kept.
    pub fn get(&self, position: &str) -> Option<&PositionEval> {
        self.0.get(position)
    }

    /// Positions kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets every position (another model was loaded).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(peak: usize) -> PositionEval {
        let mut d = vec![0.0; 4];
        d[peak] = 1.0;
        PositionEval::from_dists(std::iter::once(d.as_slice())).expect("valued")
    }

    #[test]
    fn the_oldest_positions_are_forgotten_beyond_the_capacity() {
        let mut evals = PositionEvals::with_capacity(3);
        for (i, fen) in ["a", "b", "c"].iter().enumerate() {
            evals.insert((*fen).to_owned(), eval(i));
        }
        // Storing a kept position again replaces its value and does not make room.
        evals.insert("a".to_owned(), eval(3));
        assert_eq!(evals.len(), 3);
        assert_eq!(evals.get("a"), Some(&eval(3)));
        evals.insert("d".to_owned(), eval(0));
        evals.insert("e".to_owned(), eval(1));
        assert_eq!(evals.len(), 3);
        assert!(evals.get("a").is_none() && evals.get("b").is_none());
        assert_eq!(evals.get("c"), Some(&eval(2)));
        assert_eq!(evals.get("e"), Some(&eval(1)));
        evals.clear();
        assert!(evals.is_empty() && evals.get("e").is_none());
        let mut none = PositionEvals::with_capacity(0);
        none.insert("a".to_owned(), eval(0));
        assert!(none.is_empty());
    }
}
