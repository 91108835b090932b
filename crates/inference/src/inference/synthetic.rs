//! Answers without a model, built from a per-move value function: the shared core of the test
//! evaluators in [`super::mock`] and of [`super::material::MaterialEvaluator`].
//!
//! A synthetic evaluator acts as a learned world model too: it predicts the state after `previous`'s move
//! by the rules, and can be told to get some of those predictions wrong.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::game::GameState;
use crate::inference::evaluator::{
    EvalError, EvalRequest, EvalResult, Hallucination, MoveValue, PredictedState, TopK,
};
use crate::mav::buckets::{Buckets, ValueDistribution};

/// SplitMix64: a well-mixed 64-bit hash step.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

pub(crate) fn hash_of<T: Hash>(t: &T) -> u64 {
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

/// How a synthetic evaluator values moves.
pub(crate) trait MoveValuer<S: GameState> {
    /// The win probability of `action` in `state` for the player to move there, and a hash for noise.
    fn value(&self, state: &S, action: S::Action) -> f64;
}

/// The answer to one request from a per-move valuer: every legal move (or the best `top_k`) with a
/// peaked distribution, and, when the request names the previous move, the predicted state by the rules
/// (unreadable for about one in `break_every` predictions when `break_every` > 0).
pub(crate) fn answer<S: GameState, V: MoveValuer<S>>(
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
        moves.push((p, MoveValue::valued(a, r.state.action_to_text(a), dist)));
    }
    if let TopK::Count(k) = r.top_k {
        moves.sort_by(|x, y| y.0.total_cmp(&x.0));
        moves.truncate(k as usize);
    }
    result.moves = moves.into_iter().map(|(_, m)| m).collect();
    Ok(result)
}
