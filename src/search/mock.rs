//! Deterministic evaluators for tests, benches and demos: no model, values from a seeded hash of the
//! position (any game) or from material (chess). Both can act as a learned world model (they predict the
//! state after `previous`'s move by the rules) and can be told to get some predictions wrong.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use shakmaty::{Color, Position};

use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{
    EvalError, EvalRequest, EvalResult, Evaluator, Hallucination, MoveValue, PredictedState, TopK,
};
use crate::mav::buckets::{Buckets, ValueDistribution, win_prob_from_cp};

/// SplitMix64: a well-mixed 64-bit hash step.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn hash_of<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// A distribution centred on win probability `p`: half the mass on its bucket, the rest on the two
/// neighbours (more on the side `skew` picks), so max and mean scoring differ a little.
pub fn peaked_distribution(buckets: Buckets, p: f64, skew: bool) -> Result<ValueDistribution, EvalError> {
    let k = buckets.k();
    let b = buckets.bucket_of(p).map_err(|e| EvalError::Backend(e.to_string()))?;
    let mut probs = vec![0.0; k as usize];
    let (lo, hi) = (b.saturating_sub(1), (b + 1).min(k - 1));
    let (wl, wh) = if skew { (0.15, 0.35) } else { (0.35, 0.15) };
    probs[b as usize] += 0.5;
    probs[lo as usize] += wl;
    probs[hi as usize] += wh;
    ValueDistribution::from_probs(buckets, probs).map_err(|e| EvalError::Backend(e.to_string()))
}

/// How a mock evaluator values moves.
trait MoveValuer<S: GameState> {
    /// The win probability of `action` in `state` for the player to move there, and a hash for noise.
    fn value(&self, state: &S, action: S::Action) -> f64;
}

/// Shared answer builder of the mocks.
fn answer<S: GameState, V: MoveValuer<S>>(
    valuer: &V,
    seed: u64,
    break_every: u64,
    buckets: Buckets,
    r: &EvalRequest<S>,
) -> Result<EvalResult<S>, EvalError> {
    let mut result = EvalResult::values(Vec::new(), r.state.outcome());
    if let Some((prev, action)) = &r.previous {
        let truth = prev.play(*action).ok();
        let key = mix(seed ^ prev.hash64() ^ hash_of(action));
        if break_every > 0 && key.is_multiple_of(break_every) {
            result.tracked_state = Some(PredictedState { text: "<unreadable state>".into(), state: None });
            result.hallucinations.push(Hallucination {
                kind: "wrong next state".into(),
                detail: "the mock was told to break this prediction".into(),
            });
            return Ok(result);
        }
        result.tracked_state = truth.map(|s| PredictedState { text: s.to_text(), state: Some(s) });
    }
    if result.terminal.is_some() {
        return Ok(result);
    }
    let mut moves: Vec<(f64, MoveValue<S::Action>)> = Vec::new();
    for a in r.state.legal_actions() {
        let p = valuer.value(&r.state, a);
        let skew = mix(seed ^ r.state.hash64() ^ hash_of(&a)) & 1 == 1;
        let dist = peaked_distribution(buckets, p, skew)?;
        moves.push((p, MoveValue { action: a, text: r.state.action_to_text(a), dist }));
    }
    if let TopK::Count(k) = r.top_k {
        moves.sort_by(|x, y| y.0.total_cmp(&x.0));
        moves.truncate(k as usize);
    }
    result.moves = moves.into_iter().map(|(_, m)| m).collect();
    Ok(result)
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

/// Chess values from material after the move (P 1, N 3, B 3, R 5, Q 9; 100 cp per pawn, Lichess win
/// probability) plus a few centipawns of seeded noise. Knows nothing about mates.
#[derive(Debug, Clone)]
pub struct MaterialEvaluator {
    /// The noise seed.
    pub seed: u64,
    /// The bucket set of the distributions.
    pub buckets: Buckets,
    /// If > 0, about one in this many predicted states is unreadable (a hallucination); 0 = never.
    pub break_every: u64,
    /// Requests answered so far.
    pub calls: u64,
}

impl MaterialEvaluator {
    /// A material evaluator with 64 buckets that never breaks.
    pub fn new(seed: u64) -> MaterialEvaluator {
        MaterialEvaluator { seed, buckets: Buckets::mav(), break_every: 0, calls: 0 }
    }
}

struct MaterialValuer(u64);

/// Material of `color` minus the opponent's, in pawns.
pub fn material_balance(state: &ChessState, color: Color) -> i32 {
    let value = |c: Color| {
        let m = state.position().board().material_side(c);
        i32::from(m.pawn)
            + 3 * i32::from(m.knight)
            + 3 * i32::from(m.bishop)
            + 5 * i32::from(m.rook)
            + 9 * i32::from(m.queen)
    };
    value(color) - value(color.other())
}

impl MoveValuer<ChessState> for MaterialValuer {
    fn value(&self, state: &ChessState, action: shakmaty::Move) -> f64 {
        let mover = state.position().turn();
        let Ok(after) = state.play(action) else { return 0.0 };
        let noise = (mix(self.0 ^ after.hash64()) % 21) as f64 - 10.0;
        win_prob_from_cp(100.0 * f64::from(material_balance(&after, mover)) + noise)
    }
}

impl Evaluator<ChessState> for MaterialEvaluator {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        self.calls += requests.len() as u64;
        let v = MaterialValuer(self.seed);
        requests.iter().map(|r| answer(&v, self.seed, self.break_every, self.buckets, r)).collect()
    }
}

/// A Connect Four evaluator that prefers the centre: each column's value is a one-hot bucket that falls by
/// 6 buckets per column away from column 4 (bucket 60 at the centre). A model whose choice is known, for
/// tests of the glue around evaluators; it refuses free decoding.
#[derive(Debug, Clone, Copy, Default)]
pub struct CentreEvaluator;

impl Evaluator<crate::game::connect_four::ConnectFourState> for CentreEvaluator {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<crate::game::connect_four::ConnectFourState>],
    ) -> Vec<Result<EvalResult<crate::game::connect_four::ConnectFourState>, EvalError>> {
        requests
            .iter()
            .map(|r| {
                if r.mode == crate::inference::evaluator::DecodeMode::Free {
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
                    moves.push(MoveValue { action: a, text, dist });
                }
                Ok(EvalResult::values(moves, r.state.outcome()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mocks_are_deterministic_and_value_every_move() {
        let s = ChessState::startpos();
        let mut a = HashEvaluator::new(7);
        let mut b = HashEvaluator::new(7);
        let ra = a.evaluate(&[EvalRequest::values(s.clone())]);
        let rb = b.evaluate(&[EvalRequest::values(s.clone())]);
        let (Ok(ra), Ok(rb)) = (&ra[0], &rb[0]) else { panic!("mock failed") };
        assert_eq!(ra.moves.len(), 20);
        assert_eq!(ra.moves, rb.moves);
        let mut m = MaterialEvaluator::new(1);
        let r = m.evaluate(&[EvalRequest::values(s)]);
        let Ok(r) = &r[0] else { panic!("mock failed") };
        for mv in &r.moves {
            assert!((mv.dist.mean_value() - 0.5).abs() < 0.03, "{}: {}", mv.text, mv.dist.mean_value());
        }
    }
}
