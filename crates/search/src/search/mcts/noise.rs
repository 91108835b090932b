//! Dirichlet noise on the root's priors, as lc0 adds it (`DirichletNoiseEpsilon`, `DirichletNoiseAlpha`):
//! P ← (1 − ε)·P + ε·η with η ~ Dir(α, …, α), drawn from the search's seeded generator so that a search
//! with noise is reproducible. Off by default (ε = 0), as in lc0's play; self-play and training turn it on
//! to explore moves the policy undervalues.

use rand::Rng;

/// A sample of Gamma(α, 1) (Marsaglia and Tsang's method; for α < 1, Gamma(α + 1)·U^(1/α)).
fn gamma<R: Rng>(rng: &mut R, alpha: f64) -> f64 {
    if alpha < 1.0 {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A standard normal sample (Box–Muller).
fn normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Mixes Dirichlet(α) noise into `priors` with weight `epsilon` (lc0's `ApplyDirichletNoise`): nothing
/// when ε is 0 or the draw sums to nothing.
pub fn add_dirichlet_noise<R: Rng>(priors: &mut [f64], epsilon: f64, alpha: f64, rng: &mut R) {
    if epsilon <= 0.0 || priors.is_empty() {
        return;
    }
    let eta: Vec<f64> = priors.iter().map(|_| gamma(rng, alpha)).collect();
    let total: f64 = eta.iter().sum();
    if total.is_nan() || total <= f64::MIN_POSITIVE {
        return;
    }
    for (p, e) in priors.iter_mut().zip(eta) {
        *p = *p * (1.0 - epsilon) + epsilon * e / total;
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn gamma_samples_have_the_right_mean_and_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for alpha in [0.3, 1.0, 2.5] {
            let xs: Vec<f64> = (0..40_000).map(|_| gamma(&mut rng, alpha)).collect();
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
            // Gamma(α, 1): mean α, variance α.
            assert!((mean - alpha).abs() < 0.03 * alpha.max(1.0), "α {alpha}: mean {mean}");
            assert!((var - alpha).abs() < 0.08 * alpha.max(1.0), "α {alpha}: variance {var}");
            assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
        }
    }

    #[test]
    fn noise_keeps_a_distribution_and_is_reproducible() {
        let base = vec![0.7, 0.2, 0.1, 0.0];
        let mut none = base.clone();
        add_dirichlet_noise(&mut none, 0.0, 0.3, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(none, base, "ε = 0 changes nothing");
        let noisy = |seed| {
            let mut p = base.clone();
            add_dirichlet_noise(&mut p, 0.25, 0.3, &mut ChaCha8Rng::seed_from_u64(seed));
            p
        };
        let a = noisy(1);
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(a.iter().zip(&base).all(|(x, b)| *x >= 0.75 * b - 1e-12), "at least (1 − ε) of each prior");
        assert!(a[3] > 0.0 || a.iter().zip(&base).any(|(x, b)| x != b), "the noise moved something");
        assert_eq!(a, noisy(1), "the same seed, the same noise");
        assert_ne!(a, noisy(2));
        // Averaged over draws, each move's noise share is 1/n.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut mean = vec![0.0; 4];
        for _ in 0..20_000 {
            let mut p = vec![0.0; 4];
            add_dirichlet_noise(&mut p, 1.0, 0.3, &mut rng);
            for (m, x) in mean.iter_mut().zip(p) {
                *m += x / 20_000.0;
            }
        }
        assert!(mean.iter().all(|m| (m - 0.25).abs() < 0.01), "{mean:?}");
    }
}
