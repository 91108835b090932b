//! Win / draw / loss shares from a value distribution, as UCI's `wdl W D L` (per mille).
//!
//! A MAV model predicts a distribution over win-probability buckets, not separate win, draw and loss
//! probabilities. A win probability `v` (the expected score, a draw counting ½) is read as the outcome mix
//! with the most draws that has that expected score: for `v ≥ ½`, win `2v − 1` and draw `2 − 2v`; for `v < ½`,
//! loss `1 − 2v` and draw `2v`. Summed over the buckets (each at its centre) this keeps the distribution's
//! spread: a sharp peak at ½ is a certain draw, half the mass at 0 and half at 1 is a coin toss with no draw.
//!
//! The search's value of a move and the model's one-ply distribution usually differ a little. [`wdl`]
//! keeps the search's expected score exactly (`W + D/2 = value`) and takes only the draw share from the
//! distribution, so the line's `score` and its `wdl` always agree.

/// Win, draw and loss per mille for the player to move; the three add up to 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wdl {
    /// Wins per mille.
    pub win: u32,
    /// Draws per mille.
    pub draw: u32,
    /// Losses per mille.
    pub loss: u32,
}

/// The win, draw and loss masses of a distribution over three outcomes: an odd number of buckets, at least
/// three, with all the mass on the lowest (a loss), the middle (a draw) and the highest (a win) — what an
/// lc0 network's win/draw/loss becomes, and a finished game's outcome. `None` for any other distribution.
pub fn outcome_masses(probs: &[f64]) -> Option<[f64; 3]> {
    let k = probs.len();
    if k < 3 || k.is_multiple_of(2) {
        return None;
    }
    let (loss, draw, win) = (probs[0], probs[k / 2], probs[k - 1]);
    let other: f64 =
        probs.iter().enumerate().filter(|(i, _)| ![0, k / 2, k - 1].contains(i)).map(|(_, p)| p.abs()).sum();
    (other <= 1e-12 && [win, draw, loss].iter().all(|p| p.is_finite() && *p >= 0.0))
        .then_some([win, draw, loss])
}

/// The draw share of a distribution over equal-width win-probability buckets (probabilities in bucket
/// order, lowest win probability first), by the most-draws reading of each bucket's centre; `None` when
/// it is empty or holds no mass.
pub fn draw_share(probs: &[f64]) -> Option<f64> {
    let k = probs.len() as f64;
    let mass: f64 = probs.iter().filter(|p| p.is_finite() && **p > 0.0).sum();
    if probs.is_empty() || mass <= 0.0 {
        return None;
    }
    let draws: f64 = probs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_finite() && **p > 0.0)
        .map(|(i, p)| {
            let centre = (i as f64 + 0.5) / k;
            p * (1.0 - (2.0 * centre - 1.0).abs())
        })
        .sum();
    Some((draws / mass).clamp(0.0, 1.0))
}

/// The win/draw/loss split with expected score `value` (a win probability, clamped to [0, 1]) and the draw
/// share of `distribution` (when given; otherwise the most draws `value` allows).
pub fn wdl(value: f64, distribution: Option<&[f64]>) -> Wdl {
    let v = if value.is_finite() { value.clamp(0.0, 1.0) } else { 0.5 };
    // A draw share above 2·min(v, 1 − v) would need a negative win or loss share.
    let most = 2.0 * v.min(1.0 - v);
    let draw = distribution.and_then(draw_share).map_or(most, |d| d.min(most));
    let win = (v - draw / 2.0).max(0.0);
    let permille = |x: f64| (x * 1000.0).round().clamp(0.0, 1000.0) as u32;
    let (w, d) = (permille(win), permille(draw));
    let d = d.min(1000 - w);
    Wdl { win: w, draw: d, loss: 1000 - w - d }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peak_at_one_half_is_a_draw_and_a_split_is_a_coin_toss() {
        let mut peak = vec![0.0; 64];
        peak[31] = 0.5;
        peak[32] = 0.5;
        let d = draw_share(&peak).expect("mass");
        assert!(d > 0.98, "{d}");
        assert_eq!(wdl(0.5, Some(&peak)), Wdl { win: 8, draw: 984, loss: 8 });
        let mut split = vec![0.0; 64];
        split[0] = 0.5;
        split[63] = 0.5;
        assert!(draw_share(&split).expect("mass") < 0.02);
        assert_eq!(wdl(0.5, Some(&split)), Wdl { win: 492, draw: 16, loss: 492 });
    }

    #[test]
    fn three_outcome_distributions_are_recognised() {
        let mut p = vec![0.0; 65];
        p[0] = 0.2;
        p[32] = 0.3;
        p[64] = 0.5;
        assert_eq!(outcome_masses(&p), Some([0.5, 0.3, 0.2]));
        p[10] = 0.01;
        assert_eq!(outcome_masses(&p), None);
        assert_eq!(outcome_masses(&[0.5, 0.5]), None, "an even count has no middle bucket");
    }

    #[test]
    fn the_expected_score_is_the_search_value() {
        let uniform = vec![1.0 / 128.0; 128];
        for value in [0.0, 0.1, 0.37, 0.5, 0.81, 1.0] {
            let w = wdl(value, Some(&uniform));
            assert_eq!(w.win + w.draw + w.loss, 1000);
            let expected = f64::from(w.win) + f64::from(w.draw) / 2.0;
            assert!((expected - value * 1000.0).abs() <= 1.0, "{value}: {w:?}");
        }
        // Certain results have no draws whatever the distribution says.
        assert_eq!(wdl(1.0, Some(&uniform)), Wdl { win: 1000, draw: 0, loss: 0 });
        assert_eq!(wdl(0.0, Some(&uniform)), Wdl { win: 0, draw: 0, loss: 1000 });
        // A uniform distribution reads as half draws.
        assert_eq!(wdl(0.5, Some(&uniform)).draw, 500);
    }

    #[test]
    fn without_a_distribution_the_most_draws_the_value_allows() {
        assert_eq!(wdl(0.75, None), Wdl { win: 500, draw: 500, loss: 0 });
        assert_eq!(wdl(0.25, None), Wdl { win: 0, draw: 500, loss: 500 });
        assert_eq!(wdl(f64::NAN, Some(&[])), Wdl { win: 0, draw: 1000, loss: 0 });
        assert_eq!(draw_share(&[0.0, 0.0]), None);
    }
}
