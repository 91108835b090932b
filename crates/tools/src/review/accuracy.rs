//! Accuracy in percent, by Lichess's formulas (lila `modules/analyse/src/main/AccuracyPercent.scala` and
//! `modules/common/src/main/Maths.scala`; explained at <https://lichess.org/page/accuracy>).
//!
//! What is implemented, exactly:
//!
//! - **Win%** of a position for a player: 100 × the model's win probability, clamped to the range that
//!   Lichess's ±1000 centipawn cap gives (about 2.5 % .. 97.5 %), see [`win_percent`].
//! - **Move accuracy** ([`move_accuracy`]): with Δ = win%Before − win%After for the mover,
//!   `103.1668100711649 · exp(−0.04354415386753951 · Δ) − 3.166924740191411`, plus Lichess's "+1 uncertainty
//!   bonus", clamped to 0..100; 100 when the move did not lower the win%.
//!   *Difference from Lichess:* Lichess takes win%Before from the engine's evaluation of the position after
//!   the opponent's move and win%After from the next one. A MAV model values every move of a position in
//!   one call, so here win%Before is the value of the model's best move and win%After the value of the move
//!   played, both from that one call (for an exact engine the two definitions agree; for a model this one
//!   never charges a move for the model's own inconsistency between positions).
//! - **Game accuracy per player** ([`game_accuracy`]): Lichess's "mean of a volatility-weighted mean and a
//!   harmonic mean". The win% series from White's side (one value before each move, and the value after the
//!   last) is cut into windows of `clamp(moves / 10, 2, 8)` values: the first window repeated
//!   `window − 2` times, then every sliding window, one per move. A move's weight is its window's
//!   (population) standard deviation clamped to 0.5..12. A player's accuracy is
//!   (Σ accuracy·weight / Σ weight + harmonic mean of the accuracies, each taken as at least 1) / 2.

use crate::mav::buckets::win_prob_from_cp;

/// Lichess caps evaluations at ±1000 centipawns before turning them into win%.
pub const WIN_PERCENT_CP_CAP: f64 = 1000.0;

/// 100 × `p`, clamped to the win% range of ±[`WIN_PERCENT_CP_CAP`] centipawns.
pub fn win_percent(p: f64) -> f64 {
    let lo = win_prob_from_cp(-WIN_PERCENT_CP_CAP);
    let hi = win_prob_from_cp(WIN_PERCENT_CP_CAP);
    100.0 * if p.is_nan() { 0.5 } else { p.clamp(lo, hi) }
}

/// The accuracy (0..100) of a move that took the mover from `before` to `after` win% (0..100 each).
pub fn move_accuracy(before: f64, after: f64) -> f64 {
    if after >= before {
        return 100.0;
    }
    let diff = before - after;
    let raw = 103.166_810_071_164_9 * (-0.043_544_153_867_539_51 * diff).exp() - 3.166_924_740_191_411;
    (raw + 1.0).clamp(0.0, 100.0)
}

/// Population standard deviation (0 for an empty slice).
fn standard_deviation(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// The volatility weight of each of `moves` moves from the White-side win% series (`moves + 1` values:
/// before each move and after the last).
pub fn volatility_weights(series: &[f64], moves: usize) -> Vec<f64> {
    let window = (moves / 10).clamp(2, 8);
    let first = &series[..window.min(series.len())];
    let mut windows: Vec<&[f64]> = vec![first; first.len().saturating_sub(2)];
    if series.len() <= window {
        if !series.is_empty() {
            windows.push(series);
        }
    } else {
        windows.extend(series.windows(window));
    }
    windows.into_iter().take(moves).map(|w| standard_deviation(w).clamp(0.5, 12.0)).collect()
}

/// One player's accuracy from (accuracy, weight) pairs of their moves; `None` without moves (or with
/// all weights zero).
pub fn player_accuracy(moves: &[(f64, f64)]) -> Option<f64> {
    if moves.is_empty() {
        return None;
    }
    let (sum, weights) = moves.iter().fold((0.0, 0.0), |(s, w), &(a, wt)| (s + a * wt, w + wt));
    if weights == 0.0 {
        return None;
    }
    let weighted = sum / weights;
    let harmonic = moves.len() as f64 / moves.iter().map(|&(a, _)| 1.0 / a.max(1.0)).sum::<f64>();
    Some((weighted + harmonic) / 2.0)
}

/// A reviewed move as the accuracy formulas see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccuracyInput {
    /// Whether White made the move.
    pub white: bool,
    /// The mover's win probability (0..1) before the move (the best move's value).
    pub before: f64,
    /// The mover's win probability (0..1) after the move (the played move's value).
    pub after: f64,
}

/// Per-move accuracies and both players' game accuracies (White, Black) for the moves in order.
pub fn game_accuracy(moves: &[AccuracyInput]) -> (Vec<f64>, Option<f64>, Option<f64>) {
    let white_side = |m: &AccuracyInput, p: f64| if m.white { p } else { 1.0 - p };
    let mut series: Vec<f64> = moves.iter().map(|m| win_percent(white_side(m, m.before))).collect();
    if let Some(last) = moves.last() {
        series.push(win_percent(white_side(last, last.after)));
    }
    let weights = volatility_weights(&series, moves.len());
    let accuracies: Vec<f64> =
        moves.iter().map(|m| move_accuracy(win_percent(m.before), win_percent(m.after))).collect();
    let of = |white: bool| {
        let pairs: Vec<(f64, f64)> = moves
            .iter()
            .zip(accuracies.iter().zip(&weights))
            .filter(|(m, _)| m.white == white)
            .map(|(_, (&a, &w))| (a, w))
            .collect();
        player_accuracy(&pairs)
    };
    let (white, black) = (of(true), of(false));
    (accuracies, white, black)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_accuracy_follows_the_lichess_curve() {
        assert_eq!(move_accuracy(50.0, 50.0), 100.0);
        assert_eq!(move_accuracy(50.0, 60.0), 100.0);
        // Δ = 0+: 103.1668 − 3.1669 + 1 > 100 → clamped.
        assert_eq!(move_accuracy(50.0, 49.99), 100.0);
        // Δ = 10: 103.1668·e^(−0.4354) − 3.1669 + 1 ≈ 64.580.
        assert!((move_accuracy(60.0, 50.0) - 64.580).abs() < 0.001, "{}", move_accuracy(60.0, 50.0));
        // Δ = 40: ≈ 15.909; Δ = 100: clamped at 0.
        assert!((move_accuracy(90.0, 50.0) - 15.909).abs() < 0.001, "{}", move_accuracy(90.0, 50.0));
        assert_eq!(move_accuracy(100.0, 0.0), 0.0);
        // Monotone in the loss.
        let mut prev = 101.0;
        for d in 0..100 {
            let a = move_accuracy(100.0, 100.0 - f64::from(d));
            assert!(a <= prev);
            prev = a;
        }
    }

    #[test]
    fn win_percent_is_capped_like_lichess() {
        assert!((win_percent(0.5) - 50.0).abs() < 1e-12);
        assert!((win_percent(1.0) - 100.0 * win_prob_from_cp(1000.0)).abs() < 1e-12);
        assert!(win_percent(1.0) < 97.6 && win_percent(1.0) > 97.4);
        assert!((win_percent(0.0) + win_percent(1.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn weights_follow_the_window_rules() {
        // 4 moves: window 2, no repeated first window, one sliding window per move.
        let series = [50.0, 50.0, 70.0, 70.0, 10.0];
        let w = volatility_weights(&series, 4);
        assert_eq!(w.len(), 4);
        assert_eq!(w[0], 0.5); // std 0 → clamped up
        assert!((w[1] - 10.0).abs() < 1e-12);
        assert_eq!(w[3], 12.0); // std 30 → clamped down
        // 40 moves: window 4, the first window twice more, then 37 sliding windows = 40 weights.
        let series: Vec<f64> = (0..41).map(|i| f64::from(i % 7) * 5.0).collect();
        let w = volatility_weights(&series, 40);
        assert_eq!(w.len(), 40);
        assert_eq!(w[0], w[1]);
        assert_eq!(w[1], w[2]);
        assert!((w[0] - standard_deviation(&series[..4])).abs() < 1e-12);
        assert!((w[3] - standard_deviation(&series[1..5]).clamp(0.5, 12.0)).abs() < 1e-12);
        assert!(volatility_weights(&[], 0).is_empty());
        assert_eq!(volatility_weights(&[50.0, 60.0], 1), vec![5.0]);
    }

    #[test]
    fn player_accuracy_mixes_weighted_and_harmonic_means() {
        assert_eq!(player_accuracy(&[]), None);
        assert_eq!(player_accuracy(&[(80.0, 1.0), (80.0, 3.0)]), Some(80.0));
        // weighted (100·1 + 20·3)/4 = 40; harmonic 2/(1/100 + 1/20) = 33.33…; mean 36.67.
        let a = player_accuracy(&[(100.0, 1.0), (20.0, 3.0)]).expect("moves");
        assert!((a - (40.0 + 200.0 / 6.0) / 2.0).abs() < 1e-9, "{a}");
        // A zero accuracy counts as 1 in the harmonic mean.
        let z = player_accuracy(&[(0.0, 1.0), (100.0, 1.0)]).expect("moves");
        assert!((z - (50.0 + 2.0 / 1.01) / 2.0).abs() < 1e-9, "{z}");
    }

    #[test]
    fn perfect_play_scores_100_and_blunders_score_low() {
        let even = |white| AccuracyInput { white, before: 0.5, after: 0.5 };
        let (per, w, b) = game_accuracy(&[even(true), even(false), even(true)]);
        assert_eq!(per, vec![100.0; 3]);
        assert_eq!((w, b), (Some(100.0), Some(100.0)));
        let blunder = AccuracyInput { white: false, before: 0.5, after: 0.1 };
        let (per, w, b) = game_accuracy(&[even(true), blunder]);
        assert!(per[1] < 20.0, "{}", per[1]);
        assert_eq!(w, Some(100.0));
        assert!(b.is_some_and(|b| b < 20.0));
        assert_eq!(game_accuracy(&[]), (Vec::new(), None, None));
    }
}
