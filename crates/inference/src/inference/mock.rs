//! Deterministic evaluators for tests, benches and demos: no model. [`HashEvaluator`] values any game's
//! moves from a seeded hash of the position; [`CentreEvaluator`] is a Connect Four model whose choice is
//! known; [`RecordingEvaluator`] wraps another and keeps what it was asked. The chess evaluator that values
//! material is [`super::material::MaterialEvaluator`].

use crate::game::GameState;
use crate::game::connect_four::ConnectFourState;
use crate::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, MoveValue};
use crate::inference::synthetic::{MoveValuer, answer, hash_of, mix};
use crate::mav::buckets::{Buckets, ValueDistribution};

pub use crate::inference::synthetic::peaked_distribution;

/// Each request's position and the history it carried, as a [`RecordingEvaluator`] keeps them.
pub type Asked<S> = std::rc::Rc<std::cell::RefCell<Vec<(S, Vec<S>)>>>;

/// Another evaluator's answers, keeping each request's position and history in a shared list (readable after
/// the evaluator is boxed or moved into a search).
pub struct RecordingEvaluator<S: GameState, E: Evaluator<S>> {
    inner: E,
    asked: Asked<S>,
}

impl<S: GameState, E: Evaluator<S>> RecordingEvaluator<S, E> {
    /// Wraps `inner`; the list it fills is [`RecordingEvaluator::asked`].
    pub fn new(inner: E) -> RecordingEvaluator<S, E> {
        RecordingEvaluator { inner, asked: Asked::default() }
    }

    /// The shared list of what was asked.
    pub fn asked(&self) -> Asked<S> {
        self.asked.clone()
    }
}

impl<S: GameState, E: Evaluator<S>> Evaluator<S> for RecordingEvaluator<S, E> {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        self.asked.borrow_mut().extend(requests.iter().map(|r| (r.state.clone(), r.history.clone())));
        self.inner.evaluate(requests)
    }
}

/// Values from a seeded hash of (position, move): arbitrary but fixed, in [0.05, 0.95].
#[derive(Debug, Clone)]
pub struct HashEvaluator {
    /// The seed.
    pub seed: u64,
    /// The bucket set of the distributions.
    pub buckets: Buckets,
    /// If > 0, about one in this many predicted states is unreadable (a hallucination); 0 = never.
    pub break_every: u64,
    /// Requests answered so far.
    pub calls: u64,
    /// Batches answered so far.
    pub batches: u64,
}

impl HashEvaluator {
    /// A hash evaluator with 64 buckets that never breaks.
    pub fn new(seed: u64) -> HashEvaluator {
        HashEvaluator { seed, buckets: Buckets::mav(), break_every: 0, calls: 0, batches: 0 }
    }
}

struct HashValuer(u64);

impl<S: GameState> MoveValuer<S> for HashValuer {
    fn value(&self, state: &S, action: S::Action) -> f64 {
        let h = mix(self.0 ^ mix(state.hash64()) ^ hash_of(&action));
        0.05 + 0.9 * ((h >> 11) as f64 / (1u64 << 53) as f64)
    }
}

impl<S: GameState> Evaluator<S> for HashEvaluator {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        self.calls += requests.len() as u64;
        self.batches += 1;
        let v = HashValuer(self.seed);
        requests.iter().map(|r| answer(&v, self.seed, self.break_every, self.buckets, r)).collect()
    }
}

/// A Connect Four evaluator that prefers the centre: each column's value is a one-hot bucket that falls by
/// 6 buckets per column away from column 4 (bucket 60 at the centre). A model whose choice is known, for
/// tests of the glue around evaluators; it refuses free decoding.
#[derive(Debug, Clone, Copy, Default)]
pub struct CentreEvaluator;

impl Evaluator<ConnectFourState> for CentreEvaluator {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ConnectFourState>],
    ) -> Vec<Result<EvalResult<ConnectFourState>, EvalError>> {
        requests
            .iter()
            .map(|r| {
                if r.mode == DecodeMode::Free {
                    return Err(EvalError::Unsupported {
                        what: "free decoding".into(),
                        why: "the centre evaluator only values the legal moves".into(),
                    });
                }
                let mut moves = Vec::new();
                for a in r.state.legal_actions() {
                    let text = r.state.action_to_text(a);
                    let col: u32 = text.parse().unwrap_or(1);
                    let dist = ValueDistribution::one_hot(Buckets::mav(), 60 - 6 * col.abs_diff(4))
                        .map_err(|e| EvalError::Backend(e.to_string()))?;
                    moves.push(MoveValue::valued(a, text, dist));
                }
                Ok(EvalResult::values(moves, r.state.outcome()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;

    #[test]
    fn hash_evaluator_is_deterministic_and_values_every_move() {
        let s = ChessState::startpos();
        let mut a = HashEvaluator::new(7);
        let mut b = HashEvaluator::new(7);
        let ra = a.evaluate(&[EvalRequest::values(s.clone())]);
        let rb = b.evaluate(&[EvalRequest::values(s)]);
        let (Ok(ra), Ok(rb)) = (&ra[0], &rb[0]) else { panic!("mock failed") };
        assert_eq!(ra.moves.len(), 20);
        assert_eq!(ra.moves, rb.moves);
    }
}
