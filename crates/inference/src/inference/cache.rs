//! A cache of evaluation results: answers repeated requests (same position, same history, same options)
//! from memory. The engine keeps one ([`ResultCache`]) in front of its pool of inference workers.

use crate::bounded_map::BoundedMap;
use crate::game::GameState;

use super::evaluator::{DecodeMode, EvalRequest, EvalResult, TopK};

/// What makes two requests the same question: the position as the model reads it (its full text: for
/// chess the FEN with its clocks and the Chess960 castling notation, which the Zobrist hash leaves out), the
/// previous position and action for a model that tracks state, and the request's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    state: u64,
    previous: Option<u64>,
    /// The positions before it (a model that reads history answers differently after another history).
    history: u64,
    top_k: TopK,
    mode: DecodeMode,
    best: bool,
    next: bool,
    position_only: bool,
}

impl CacheKey {
    /// The key of `r`.
    pub fn of<S: GameState>(r: &EvalRequest<S>) -> CacheKey {
        CacheKey {
            state: hash_text(r.state.kind().name(), &r.state.to_text()),
            // A model that tracks state sees the previous position and action: they are part of the question.
            previous: r
                .previous
                .as_ref()
                .map(|(p, a)| hash_text(p.kind().name(), &p.to_text()).rotate_left(1) ^ hash_action(p, *a)),
            history: history_hash(&r.history),
            top_k: r.top_k,
            mode: r.mode,
            best: r.want_best_action,
            next: r.want_next_state,
            position_only: r.position_only,
        }
    }
}

/// A hash of a request's history (the positions' Zobrist hashes in order): what tells the same position
/// reached by two lines apart, for a model that reads history.
pub fn history_hash<S: GameState>(history: &[S]) -> u64 {
    history.iter().fold(history.len() as u64, |h, s| h.rotate_left(7) ^ s.hash64())
}

fn hash_text(game: &str, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    game.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

fn hash_action<S: GameState>(p: &S, a: S::Action) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.action_to_text(a).hash(&mut h);
    h.finish()
}

/// Up to `capacity` evaluation results by [`CacheKey`], the oldest evicted first. Used by the engine, which
/// answers repeated search requests before they reach its workers (one cache shared by all of them).
#[derive(Debug, Clone)]
pub struct ResultCache<S: GameState>(BoundedMap<CacheKey, EvalResult<S>>);

impl<S: GameState> ResultCache<S> {
    /// An empty cache of at most `capacity` results (0: keeps nothing).
    pub fn new(capacity: usize) -> Self {
        ResultCache(BoundedMap::new(capacity))
    }

    /// The result stored for `key`.
    pub fn get(&self, key: &CacheKey) -> Option<&EvalResult<S>> {
        self.0.get(key)
    }

    /// Stores `value` for `key`, evicting the oldest entries beyond the capacity.
    pub fn insert(&mut self, key: CacheKey, value: EvalResult<S>) {
        self.0.insert(key, value);
    }

    /// Results held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets everything (e.g. after loading another model).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;

    fn after(moves: &[&str]) -> ChessState {
        let mut s = ChessState::startpos();
        for m in moves {
            let a = s.parse_action(m).expect("legal");
            s = s.play(a).expect("legal");
        }
        s
    }

    fn answer(r: &EvalRequest<ChessState>) -> EvalResult<ChessState> {
        EvalResult::values(Vec::new(), r.state.outcome())
    }

    #[test]
    fn transposed_positions_are_the_same_question_and_other_options_another() {
        let a = EvalRequest::values(after(&["g1f3", "g8f6", "b1c3"]));
        let b = EvalRequest::values(after(&["b1c3", "g8f6", "g1f3"]));
        assert_eq!(CacheKey::of(&a), CacheKey::of(&b));
        let mut cache = ResultCache::new(100);
        cache.insert(CacheKey::of(&a), answer(&a));
        assert!(cache.get(&CacheKey::of(&b)).is_some());
        let mut top5 = a;
        top5.top_k = TopK::Count(5);
        assert!(cache.get(&CacheKey::of(&top5)).is_none());
    }

    #[test]
    fn the_same_board_with_other_clocks_is_another_question() {
        // The knights go out and back: the board of the start, but the halfmove clock and move number
        // (which the model reads) differ, though the Zobrist hash is the same.
        let back = after(&["g1f3", "g8f6", "f3g1", "f6g8"]);
        let start = ChessState::startpos();
        assert_eq!(back.hash64(), start.hash64());
        let (a, b) = (EvalRequest::values(start), EvalRequest::values(back));
        assert_ne!(CacheKey::of(&a), CacheKey::of(&b));
    }

    #[test]
    fn capacity_evicts_oldest() {
        let a = EvalRequest::values(after(&["e2e4"]));
        let b = EvalRequest::values(after(&["d2d4"]));
        let mut cache = ResultCache::new(1);
        cache.insert(CacheKey::of(&a), answer(&a));
        cache.insert(CacheKey::of(&b), answer(&b));
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&CacheKey::of(&a)).is_none());
        assert!(cache.get(&CacheKey::of(&b)).is_some());
        cache.clear();
        assert!(cache.is_empty());
        let mut none = ResultCache::new(0);
        none.insert(CacheKey::of(&a), answer(&a));
        assert!(none.is_empty());
    }
}
