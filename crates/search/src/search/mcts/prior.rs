//! The prior of Eq. 1: P(s, a) = (1 − ε)·π^{g,k}(s, a) + ε·π^u(s, a), where π^{g,k} is a softmax at
//! temperature τ over the moves whose values (win probabilities) are among the k best and π^u is uniform
//! over all legal moves.

/// The prior over `values.len()` legal moves. `values[i]` is move i's win probability for the player to
/// move, `None` when the model gave no value for it (it then gets only the uniform share).
///
/// The greedy set holds every move whose value is at least the k-th best value (ties at the boundary are
/// all in, so the result does not depend on the order the model wrote its moves in); it is all valued
/// moves when there are at most k. When no move is valued the prior is uniform.
pub fn prior(values: &[Option<f64>], k: usize, tau: f64, epsilon: f64) -> Vec<f64> {
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let uniform = 1.0 / n as f64;
    let mut sorted: Vec<f64> = values.iter().flatten().copied().collect();
    if sorted.is_empty() || k == 0 {
        return vec![uniform; n];
    }
    sorted.sort_by(|a, b| b.total_cmp(a));
    let threshold = sorted[k.min(sorted.len()) - 1];
    let max = sorted[0];
    let weights: Vec<f64> = values
        .iter()
        .map(|v| match v {
            Some(v) if *v >= threshold => ((v - max) / tau).exp(),
            _ => 0.0,
        })
        .collect();
    let sum: f64 = weights.iter().sum();
    weights.iter().map(|w| (1.0 - epsilon) * w / sum + epsilon * uniform).collect()
}

/// The prior from a policy over the legal moves: `policy[i]` is move i's probability (`None`: the policy
/// did not list it), renormalised over the listed moves and mixed with ε uniform as Eq. 1 mixes; uniform
/// when no move is listed.
pub fn policy_prior(policy: &[Option<f64>], epsilon: f64) -> Vec<f64> {
    let n = policy.len();
    if n == 0 {
        return Vec::new();
    }
    let uniform = 1.0 / n as f64;
    let sum: f64 = policy.iter().flatten().filter(|p| p.is_finite() && **p > 0.0).sum();
    if sum <= 0.0 {
        return vec![uniform; n];
    }
    policy
        .iter()
        .map(|p| {
            let p = p.filter(|p| p.is_finite() && *p > 0.0).unwrap_or(0.0);
            (1.0 - epsilon) * p / sum + epsilon * uniform
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_prior_is_the_policy_with_the_uniform_share() {
        let p = policy_prior(&[Some(0.6), Some(0.2), None, Some(0.2)], 0.2);
        let want = [0.8 * 0.6 + 0.05, 0.8 * 0.2 + 0.05, 0.05, 0.8 * 0.2 + 0.05];
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{p:?}");
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(policy_prior(&[None, None], 0.1), vec![0.5, 0.5]);
        assert!(policy_prior(&[], 0.1).is_empty());
    }

    #[test]
    fn equation_one_by_hand() {
        // Three moves, k = 2, τ = 1, ε = 0.1: greedy over {0.8, 0.6}.
        let p = prior(&[Some(0.8), Some(0.2), Some(0.6)], 2, 1.0, 0.1);
        let e8 = 0.8f64.exp();
        let e6 = 0.6f64.exp();
        let u = 0.1 / 3.0;
        assert!((p[0] - (0.9 * e8 / (e8 + e6) + u)).abs() < 1e-12);
        assert!((p[1] - u).abs() < 1e-12);
        assert!((p[2] - (0.9 * e6 / (e8 + e6) + u)).abs() < 1e-12);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ties_unvalued_and_degenerate_inputs() {
        let p = prior(&[Some(0.5), Some(0.5), Some(0.5), None], 1, 1.0, 0.0);
        assert_eq!(p[0], p[1]);
        assert_eq!(p[3], 0.0);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(prior(&[None, None], 5, 1.0, 0.1), vec![0.5, 0.5]);
        assert!(prior(&[], 5, 1.0, 0.1).is_empty());
        // Low temperature concentrates on the best move.
        let cold = prior(&[Some(0.9), Some(0.1)], 5, 0.01, 0.0);
        assert!(cold[0] > 0.999_999);
    }
}
