//! Randomness that must be reproducible: per-chain random streams, continuation moves, train/val split.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::record::{MoveLabel, Split};

/// A 64-bit mixing function (SplitMix64's finaliser): nearby inputs give unrelated outputs.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The random stream of chain `chain` in a run with `seed`: independent of every other chain, so chains
/// can be labelled in any order on any thread.
pub fn chain_rng(seed: u64, chain: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix64(mix64(seed) ^ chain))
}

/// Train or validation for a position hash: validation for a `val_fraction` share of hashes. A position
/// always lands on the same side, so no position is in both.
pub fn split_of(hash: u64, val_fraction: f64) -> Split {
    // Salted so the split is not correlated with hash-table buckets keyed by the same Zobrist hash.
    let u = (mix64(hash ^ 0x5EED_5A17_0000_0001) >> 11) as f64 / (1u64 << 53) as f64;
    if u < val_fraction { Split::Val } else { Split::Train }
}

/// Picks the move to continue with: a softmax over the moves' win probabilities (Lichess formula, mates
/// 0 or 1) divided by `temperature`; `temperature` ≤ 0 takes the best (the first of equals). `None` when
/// there are no moves.
pub fn sample_move<'a>(
    moves: &'a [MoveLabel],
    temperature: f64,
    rng: &mut impl Rng,
) -> Option<&'a MoveLabel> {
    let wp: Vec<f64> = moves.iter().map(|m| m.score.win_probability()).collect();
    let best = wp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if temperature <= 0.0 || !temperature.is_finite() {
        return moves.iter().zip(&wp).find(|(_, p)| **p == best).map(|(m, _)| m);
    }
    let weights: Vec<f64> = wp.iter().map(|p| ((p - best) / temperature).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut x = rng.random::<f64>() * total;
    for (m, w) in moves.iter().zip(&weights) {
        if x < *w {
            return Some(m);
        }
        x -= w;
    }
    moves.last()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::score::LabelScore;

    fn moves() -> Vec<MoveLabel> {
        let m = |uci: &str, score| MoveLabel { uci: uci.into(), score };
        vec![
            m("e2e4", LabelScore::Cp(30)),
            m("d2d4", LabelScore::Cp(25)),
            m("g1f3", LabelScore::Cp(-100)),
            m("f2f3", LabelScore::Mate(-2)),
        ]
    }

    #[test]
    fn zero_temperature_takes_the_best_and_mate_wins() {
        let mut rng = chain_rng(1, 2);
        assert_eq!(sample_move(&moves(), 0.0, &mut rng).map(|m| m.uci.as_str()), Some("e2e4"));
        let mut with_mate = moves();
        with_mate.push(MoveLabel { uci: "d1h5".into(), score: LabelScore::Mate(3) });
        assert_eq!(sample_move(&with_mate, 0.0, &mut rng).map(|m| m.uci.as_str()), Some("d1h5"));
        assert!(sample_move(&[], 0.5, &mut rng).is_none());
    }

    #[test]
    fn fixed_seed_reproduces_and_follows_the_softmax() {
        let ms = moves();
        let draw = |seed| {
            let mut rng = chain_rng(seed, 0);
            (0..2000).map(|_| sample_move(&ms, 0.1, &mut rng).map(|m| m.uci.clone())).collect::<Vec<_>>()
        };
        let a = draw(42);
        assert_eq!(a, draw(42));
        assert_ne!(a, draw(43));
        // Expected shares: softmax of wp/0.1 over wp ≈ 0.5276, 0.5230, 0.4090, 0.
        let wp: Vec<f64> = ms.iter().map(|m| m.score.win_probability()).collect();
        let w: Vec<f64> = wp.iter().map(|p| (p / 0.1).exp()).collect();
        let total: f64 = w.iter().sum();
        for (i, m) in ms.iter().enumerate() {
            let got = a.iter().filter(|u| u.as_deref() == Some(m.uci.as_str())).count() as f64 / 2000.0;
            let want = w[i] / total;
            assert!((got - want).abs() < 0.035, "{}: got {got}, want {want}", m.uci);
        }
    }

    #[test]
    fn split_is_stable_and_near_the_fraction() {
        let val = (0..20_000u64).filter(|h| split_of(mix64(*h), 0.05) == Split::Val).count();
        assert!((800..1200).contains(&val), "{val} of 20000");
        assert_eq!(split_of(12345, 0.05), split_of(12345, 0.05));
        assert_eq!(split_of(12345, 0.0), Split::Train);
        assert_eq!(split_of(12345, 1.0), Split::Val);
        assert_ne!(chain_rng(1, 0).random::<u64>(), chain_rng(1, 1).random::<u64>());
    }
}
