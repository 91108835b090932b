//! A caching decorator: answers repeated requests (same position, same history, same options) from memory.

use std::collections::{HashMap, VecDeque};

use crate::game::GameState;

use super::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, TopK};

/// What makes two requests the same question: the position as the model reads it (its full text: for
/// chess the FEN with its clocks and the Chess960 castling notation, which the Zobrist hash leaves out), the
/// previous position and action for a model that tracks state, and the request's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    state: u64,
    previous: Option<u64>,
    top_k: TopK,
    mode: DecodeMode,
    best: bool,
    next: bool,
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
            top_k: r.top_k,
            mode: r.mode,
            best: r.want_best_action,
            next: r.want_next_state,
        }
    }
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

/// Counters of a [`CachedEvaluator`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Requests passed to the inner evaluator.
    pub misses: u64,
    /// Entries now held.
    pub entries: usize,
}

/// Up to `capacity` evaluation results by [`CacheKey`], the oldest evicted first. Used by
/// [`CachedEvaluator`] and by the engine, which answers repeated search requests before they reach its
/// workers.
#[derive(Debug, Clone)]
pub struct ResultCache<S: GameState> {
    capacity: usize,
    map: HashMap<CacheKey, EvalResult<S>>,
    order: VecDeque<CacheKey>,
}

impl<S: GameState> ResultCache<S> {
    /// An empty cache of at most `capacity` results (0: keeps nothing).
    pub fn new(capacity: usize) -> Self {
        ResultCache { capacity, map: HashMap::new(), order: VecDeque::new() }
    }

    /// The result stored for `key`.
    pub fn get(&self, key: &CacheKey) -> Option<&EvalResult<S>> {
        self.map.get(key)
    }

    /// Stores `value` for `key`, evicting the oldest entries beyond the capacity.
    pub fn insert(&mut self, key: CacheKey, value: EvalResult<S>) {
        if self.capacity == 0 {
            return;
        }
        if self.map.insert(key, value).is_none() {
            self.order.push_back(key);
        }
        while self.map.len() > self.capacity {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
    }

    /// Results held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Forgets everything (e.g. after loading another model).
    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

/// Wraps any evaluator; keeps up to `capacity` results (oldest evicted first). Errors are not cached.
#[derive(Debug)]
pub struct CachedEvaluator<S: GameState, E> {
    inner: E,
    cache: ResultCache<S>,
    stats: CacheStats,
}

impl<S: GameState, E: Evaluator<S>> CachedEvaluator<S, E> {
    /// A cache of at most `capacity` results around `inner`.
    pub fn new(inner: E, capacity: usize) -> Self {
        CachedEvaluator { inner, cache: ResultCache::new(capacity), stats: CacheStats::default() }
    }

    /// Hit/miss counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats { entries: self.cache.len(), ..self.stats }
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Forgets everything (e.g. after loading another model).
    pub fn clear(&mut self) {
        self.cache.clear();
    }
}

impl<S: GameState, E: Evaluator<S>> Evaluator<S> for CachedEvaluator<S, E> {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let keys: Vec<CacheKey> = requests.iter().map(CacheKey::of).collect();
        let mut out: Vec<Option<Result<EvalResult<S>, EvalError>>> = Vec::with_capacity(requests.len());
        let mut missing = Vec::new();
        let mut first_of: HashMap<CacheKey, usize> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(hit) = self.cache.get(k) {
                self.stats.hits += 1;
                out.push(Some(Ok(hit.clone())));
            } else if first_of.contains_key(k) {
                // The same question twice in one batch: ask once, answer both.
                self.stats.hits += 1;
                out.push(None);
            } else {
                self.stats.misses += 1;
                first_of.insert(*k, i);
                missing.push(i);
                out.push(None);
            }
        }
        if !missing.is_empty() {
            let batch: Vec<EvalRequest<S>> = missing.iter().map(|&i| requests[i].clone()).collect();
            let results = self.inner.evaluate(&batch);
            for (&i, r) in missing.iter().zip(results) {
                if let Ok(v) = &r {
                    self.cache.insert(keys[i], v.clone());
                }
                out[i] = Some(r);
            }
        }
        // Duplicates within the batch copy the answer of their first occurrence.
        for i in 0..requests.len() {
            if out[i].is_none() {
                out[i] = first_of.get(&keys[i]).and_then(|&j| out[j].clone());
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(EvalError::Backend("the inner evaluator returned too few results".into()))
                })
            })
            .collect()
    }
}

/// Splits batches larger than `max_batch` into several calls of the inner evaluator.
#[derive(Debug)]
pub struct BatchSplitter<E> {
    inner: E,
    max_batch: usize,
}

impl<E> BatchSplitter<E> {
    /// Calls `inner` with at most `max_batch` requests at a time (at least 1).
    pub fn new(inner: E, max_batch: usize) -> Self {
        BatchSplitter { inner, max_batch: max_batch.max(1) }
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }
}

impl<S: GameState, E: Evaluator<S>> Evaluator<S> for BatchSplitter<E> {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(self.max_batch) {
            let mut r = self.inner.evaluate(chunk);
            r.resize_with(chunk.len(), || {
                Err(EvalError::Backend("the inner evaluator returned too few results".into()))
            });
            out.extend(r);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::evaluator::MoveValue;
    use crate::mav::buckets::{Buckets, ValueDistribution};

    /// Values every legal move at bucket 10 and counts the requests it sees.
    struct Counting {
        seen: usize,
    }

    impl Evaluator<ChessState> for Counting {
        fn evaluate(
            &mut self,
            requests: &[EvalRequest<ChessState>],
        ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
            self.seen += requests.len();
            requests
                .iter()
                .map(|r| {
                    let moves = r
                        .state
                        .legal_actions()
                        .into_iter()
                        .map(|a| MoveValue {
                            action: a,
                            text: r.state.action_to_text(a),
                            dist: ValueDistribution::one_hot(Buckets::mav(), 10).expect("bucket"),
                        })
                        .collect();
                    Ok(EvalResult::values(moves, None))
                })
                .collect()
        }
    }

    fn after(moves: &[&str]) -> ChessState {
        let mut s = ChessState::startpos();
        for m in moves {
            let a = s.parse_action(m).expect("legal");
            s = s.play(a).expect("legal");
        }
        s
    }

    #[test]
    fn repeated_and_transposed_positions_hit() {
        let mut c = CachedEvaluator::new(Counting { seen: 0 }, 100);
        let a = EvalRequest::values(after(&["g1f3", "g8f6", "b1c3"]));
        let b = EvalRequest::values(after(&["b1c3", "g8f6", "g1f3"]));
        let r = c.evaluate(&[a.clone(), b.clone(), a.clone()]);
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(Result::is_ok));
        assert_eq!(c.inner_mut().seen, 1, "one transposition, asked once");
        c.evaluate(&[b]);
        assert_eq!(c.inner_mut().seen, 1);
        let stats = c.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (3, 1, 1));
        // Other options are another question.
        let mut free = a;
        free.top_k = TopK::Count(5);
        c.evaluate(&[free]);
        assert_eq!(c.inner_mut().seen, 2);
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
        let mut c = CachedEvaluator::new(Counting { seen: 0 }, 100);
        c.evaluate(&[a, b]);
        assert_eq!(c.inner_mut().seen, 2);
    }

    #[test]
    fn capacity_evicts_oldest() {
        let mut c = CachedEvaluator::new(Counting { seen: 0 }, 1);
        let a = EvalRequest::values(after(&["e2e4"]));
        let b = EvalRequest::values(after(&["d2d4"]));
        c.evaluate(std::slice::from_ref(&a));
        c.evaluate(&[b]);
        c.evaluate(&[a]);
        assert_eq!(c.inner_mut().seen, 3);
        assert_eq!(c.stats().entries, 1);
    }

    #[test]
    fn splitter_keeps_order_and_batches() {
        let mut s = BatchSplitter::new(Counting { seen: 0 }, 2);
        let reqs: Vec<_> = ["e2e4", "d2d4", "c2c4", "g1f3", "b1c3"]
            .iter()
            .map(|m| EvalRequest::values(after(&[m])))
            .collect();
        let r = s.evaluate(&reqs);
        assert_eq!(r.len(), 5);
        for (req, res) in reqs.iter().zip(&r) {
            assert_eq!(res.as_ref().expect("ok").moves.len(), req.state.legal_actions().len());
        }
        assert_eq!(s.inner_mut().seen, 5);
    }
}
