//! The `[%eval]` command written after each reviewed move: the model's win probability turned back into
//! centipawns by inverting the Lichess curve win = 0.5 + 0.5·(2/(1+exp(−0.00368208·cp)) − 1)
//! (see [`crate::mav::buckets::cp_from_win_prob`]).
//!
//! A model only knows win probabilities, never distances to mate, so no `#n` is ever written. The curve is
//! flat at the ends (0 and 1 map to ∓∞), so the score is clamped to ±[`MAX_EVAL_CP`].

use crate::mav::buckets::cp_from_win_prob;

/// The largest centipawn score written (±20 pawns, a win probability of about 0.9994 on the Lichess curve).
pub const MAX_EVAL_CP: f64 = 2000.0;

/// Centipawns (clamped to ±[`MAX_EVAL_CP`]) for a win probability `p` of the side the score is for.
/// A NaN probability gives 0.
pub fn eval_cp(p: f64) -> f64 {
    if p.is_nan() {
        return 0.0;
    }
    cp_from_win_prob(p).clamp(-MAX_EVAL_CP, MAX_EVAL_CP)
}

/// The `[%eval]` command for White's win probability `white_p`: pawns with two decimals, as Lichess writes
/// them (`[%eval 0.17]`, `[%eval -1.50]`).
pub fn eval_command(white_p: f64) -> String {
    let pawns = eval_cp(white_p).round() / 100.0;
    // Avoid "-0.00".
    let pawns = if pawns == 0.0 { 0.0 } else { pawns };
    format!("[%eval {pawns:.2}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mav::buckets::win_prob_from_cp;
    use crate::pgn::Comment;

    #[test]
    fn inversion_round_trips_through_the_lichess_curve() {
        for cp in [-1999.0, -800.0, -150.0, -1.0, 0.0, 0.5, 37.0, 300.0, 1200.0, 1999.0] {
            let back = eval_cp(win_prob_from_cp(cp));
            assert!((back - cp).abs() < 1e-6, "{cp} came back as {back}");
        }
        for p in [0.01, 0.2, 0.5, 0.73, 0.99] {
            assert!((win_prob_from_cp(eval_cp(p)) - p).abs() < 1e-9, "{p}");
        }
        // A known point: +100 cp is a win probability of about 0.5910.
        assert!((eval_cp(0.591_012) - 100.0).abs() < 0.1);
    }

    #[test]
    fn ends_are_clamped_and_never_mate() {
        assert_eq!(eval_cp(1.0), MAX_EVAL_CP);
        assert_eq!(eval_cp(0.0), -MAX_EVAL_CP);
        assert_eq!(eval_cp(1.5), MAX_EVAL_CP);
        assert_eq!(eval_cp(f64::NAN), 0.0);
        assert_eq!(eval_command(1.0), "[%eval 20.00]");
        assert_eq!(eval_command(0.0), "[%eval -20.00]");
        assert_eq!(eval_command(0.5), "[%eval 0.00]");
        assert_eq!(eval_command(0.499_999_9), "[%eval 0.00]");
        assert_eq!(eval_command(win_prob_from_cp(-150.0)), "[%eval -1.50]");
    }

    #[test]
    fn the_command_reads_back_as_an_eval() {
        let c = Comment::new(eval_command(win_prob_from_cp(123.0))).expect("valid comment");
        assert_eq!(c.command("eval"), Some("1.23"));
        assert_eq!(c.eval(), Some(crate::pgn::Eval::Pawns(1.23)));
    }
}
