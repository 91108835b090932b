//! Scoring rules: how a move's value distribution becomes one number, a win probability in [0, 1] for the
//! player choosing the move. The paper's two (§2: max, the most probable bucket's centre; mean, the
//! expectation) and two that only a distribution allows: a quantile (a cautious player's value) and the mean
//! less λ standard deviations (risk-averse).
//!
//! [`Scoring`] is the one door for a rule: every layer (search, review, eval, league, UCI, the command line,
//! settings and the panels) takes it, keeps distributions rather than per-rule values, and derives the value
//! with [`Scoring::value`]. Its text form (`max`, `mean`, `quantile:0.25`, `mean-sd:1`) is what the command
//! line, the settings file, league specs and UCI's `Scoring` option read and write.

use std::fmt;
use std::str::FromStr;

use crate::mav::buckets::{ValueDistribution, mean_centre, mode_index};

/// A scoring rule's parameter that is a fraction, kept in thousandths so that rules compare and hash exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Thousandths(u16);

impl Thousandths {
    /// `x` rounded to thousandths, if it lies in `[lo, hi]` (thousandths).
    fn new(x: f64, lo: u16, hi: u16) -> Option<Thousandths> {
        let t = (x * 1000.0).round();
        (x.is_finite() && t >= f64::from(lo) && t <= f64::from(hi)).then_some(Thousandths(t as u16))
    }

    /// The parameter as a number.
    pub fn get(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

impl fmt::Display for Thousandths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Shortest decimal: 0.25, 1, 0.5, 0.125.
        let s = format!("{:.3}", self.get());
        f.write_str(s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// How a move's value distribution becomes one number (a win probability for the player to move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scoring {
    /// The centre of the most probable bucket (the paper's max scoring).
    Max,
    /// The expected bucket centre (the paper's mean scoring).
    #[default]
    Mean,
    /// The q-quantile of the win probability (0 < q < 1), reading each bucket as uniform over its range: the
    /// value the move reaches with probability 1 − q. Low q is a cautious player's choice.
    Quantile(Thousandths),
    /// The mean less λ standard deviations of the bucket centres (λ ≥ 0), clamped to [0, 1]: risk-averse.
    MeanMinusSd(Thousandths),
}

/// What went wrong reading a scoring rule's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoringError {
    /// Not one of the rules.
    #[error(
        "unknown scoring '{0}': use max, mean, quantile:Q (0 < Q < 1, e.g. quantile:0.25) or mean-sd:L (L ≥ 0, e.g. mean-sd:1)"
    )]
    Unknown(String),
    /// A rule's parameter out of its range or not a number.
    #[error("scoring '{text}': {why}")]
    Parameter {
        /// The text as given.
        text: String,
        /// The range the parameter must lie in.
        why: &'static str,
    },
}

impl Scoring {
    /// The rules the panels and menus offer, parametric ones at their usual setting. Any other parameter is
    /// reached through the text form.
    pub const ALL: [Scoring; 4] = [
        Scoring::Max,
        Scoring::Mean,
        Scoring::Quantile(Thousandths(250)),
        Scoring::MeanMinusSd(Thousandths(1000)),
    ];

    /// The q-quantile rule; `None` unless 0 < q < 1 (in thousandths: 0.001 to 0.999).
    pub fn quantile(q: f64) -> Option<Scoring> {
        Thousandths::new(q, 1, 999).map(Scoring::Quantile)
    }

    /// The mean − λ·sd rule; `None` unless 0 ≤ λ ≤ 10.
    pub fn mean_minus_sd(lambda: f64) -> Option<Scoring> {
        Thousandths::new(lambda, 0, 10_000).map(Scoring::MeanMinusSd)
    }

    /// The value of `dist` under this rule, a win probability in [0, 1] for the player to move.
    pub fn value(self, dist: &ValueDistribution) -> f64 {
        self.of_probs(dist.probs())
    }

    /// The value of a distribution given as its bucket probabilities (K = their count, summing to 1, bucket i
    /// covering [i/K, (i+1)/K]); 0.5 for an empty slice.
    pub fn of_probs(self, probs: &[f64]) -> f64 {
        if probs.is_empty() {
            return 0.5;
        }
        let k = probs.len() as f64;
        let centre = |i: usize| (i as f64 + 0.5) / k;
        let mean = || mean_centre(probs);
        match self {
            Scoring::Max => centre(mode_index(probs)),
            Scoring::Mean => mean(),
            Scoring::Quantile(q) => {
                let q = q.get();
                let mut below = 0.0;
                for (i, &p) in probs.iter().enumerate() {
                    if p > 0.0 && below + p >= q {
                        return (i as f64 + (q - below) / p) / k;
                    }
                    below += p;
                }
                // Rounding left the total a hair under q: the top of the last bucket with mass.
                let last = probs.iter().rposition(|&p| p > 0.0).unwrap_or(probs.len() - 1);
                (last as f64 + 1.0) / k
            }
            Scoring::MeanMinusSd(lambda) => {
                let m = mean();
                let var = probs.iter().enumerate().map(|(i, p)| p * (centre(i) - m).powi(2)).sum::<f64>();
                (m - lambda.get() * var.max(0.0).sqrt()).clamp(0.0, 1.0)
            }
        }
    }

    /// The rule that breaks this one's ties: max for mean, mean for every other rule.
    pub fn tie_breaker(self) -> Scoring {
        match self {
            Scoring::Mean => Scoring::Max,
            _ => Scoring::Mean,
        }
    }

    /// A name for menus and legends: "Max (most likely bucket)", "Quantile 0.25", ...
    pub fn label(self) -> String {
        match self {
            Scoring::Max => "Max (most likely bucket)".to_owned(),
            Scoring::Mean => "Mean (expected value)".to_owned(),
            Scoring::Quantile(q) => format!("Quantile {q} (cautious)"),
            Scoring::MeanMinusSd(l) => format!("Mean − {l}·sd (risk-averse)"),
        }
    }

    /// What the rule means, for tooltips.
    pub fn describe(self) -> String {
        match self {
            Scoring::Max => "The centre of the most probable value bucket (the mode)".to_owned(),
            Scoring::Mean => "The expected value over the buckets".to_owned(),
            Scoring::Quantile(q) => {
                format!(
                    "The win probability the move reaches with probability 1 − {q}: a cautious player's value"
                )
            }
            Scoring::MeanMinusSd(l) => format!("The mean less {l} standard deviations: spread costs value"),
        }
    }

    /// A title for buttons and column heads: "Max", "Mean", "Q0.25", "Mean−1sd".
    pub fn title(self) -> String {
        match self {
            Scoring::Max => "Max".to_owned(),
            Scoring::Mean => "Mean".to_owned(),
            Scoring::Quantile(q) => format!("Q{q}"),
            Scoring::MeanMinusSd(l) => format!("Mean−{l}sd"),
        }
    }

    /// Where the rule stands in [`Scoring::ALL`] (rules outside it after them): the order in which panels
    /// list several rules side by side.
    pub fn catalogue_place(self) -> usize {
        Scoring::ALL.iter().position(|&a| a == self).unwrap_or(Scoring::ALL.len())
    }
}

impl fmt::Display for Scoring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scoring::Max => f.write_str("max"),
            Scoring::Mean => f.write_str("mean"),
            Scoring::Quantile(q) => write!(f, "quantile:{q}"),
            Scoring::MeanMinusSd(l) => write!(f, "mean-sd:{l}"),
        }
    }
}

impl FromStr for Scoring {
    type Err = ScoringError;

    fn from_str(s: &str) -> Result<Scoring, ScoringError> {
        let text = s.trim().to_ascii_lowercase();
        let param = |rest: &str, make: fn(f64) -> Option<Scoring>, why: &'static str| {
            rest.trim()
                .parse::<f64>()
                .ok()
                .and_then(make)
                .ok_or_else(|| ScoringError::Parameter { text: s.trim().to_owned(), why })
        };
        match text.as_str() {
            "max" => Ok(Scoring::Max),
            "mean" => Ok(Scoring::Mean),
            _ => {
                if let Some(rest) = text.strip_prefix("quantile:").or_else(|| text.strip_prefix("q:")) {
                    param(rest, Scoring::quantile, "the quantile must lie between 0.001 and 0.999")
                } else if let Some(rest) = text.strip_prefix("mean-sd:") {
                    param(rest, Scoring::mean_minus_sd, "λ must lie between 0 and 10")
                } else {
                    Err(ScoringError::Unknown(s.trim().to_owned()))
                }
            }
        }
    }
}

impl serde::Serialize for Scoring {
    fn serialize<Ser: serde::Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Scoring {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Scoring, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mav::buckets::Buckets;

    fn dist(probs: Vec<f64>) -> ValueDistribution {
        ValueDistribution::from_probs(Buckets::new(probs.len() as u32).expect("k"), probs).expect("valid")
    }

    #[test]
    fn the_papers_rules_match_the_distribution() {
        let d = dist(vec![0.1, 0.2, 0.6, 0.1]);
        assert!((Scoring::Max.value(&d) - d.max_value()).abs() < 1e-12);
        assert!((Scoring::Mean.value(&d) - d.mean_value()).abs() < 1e-12);
    }

    #[test]
    fn quantiles_interpolate_within_buckets() {
        // Buckets of width 0.25; the CDF reaches 0.1 at 0.25, 0.3 at 0.5, 0.9 at 0.75, 1 at 1.
        let d = dist(vec![0.1, 0.2, 0.6, 0.1]);
        let q = |x| Scoring::quantile(x).expect("q").value(&d);
        assert!((q(0.05) - 0.125).abs() < 1e-12);
        assert!((q(0.25) - (0.25 + 0.15 / 0.2 * 0.25)).abs() < 1e-12);
        assert!((q(0.5) - (0.5 + 0.2 / 0.6 * 0.25)).abs() < 1e-12);
        assert!(q(0.1) < q(0.5) && q(0.5) < q(0.9));
        // A one-bucket distribution: its median is the bucket's centre.
        let one = dist(vec![0.0, 0.0, 1.0, 0.0]);
        assert!((Scoring::quantile(0.5).expect("q").value(&one) - 0.625).abs() < 1e-12);
    }

    #[test]
    fn mean_minus_sd_penalises_spread() {
        let sure = dist(vec![0.0, 0.0, 1.0, 0.0]);
        let wide = dist(vec![0.3, 0.0, 0.0, 0.7]);
        let rule = Scoring::mean_minus_sd(1.0).expect("λ");
        // The wide one has the higher mean, but its spread costs it the first place.
        assert!(Scoring::Mean.value(&wide) > Scoring::Mean.value(&sure));
        assert!(rule.value(&wide) < rule.value(&sure));
        assert!((rule.value(&sure) - 0.625).abs() < 1e-12);
        let m = 0.3 * 0.125 + 0.7 * 0.875;
        let sd = (0.3 * (0.125f64 - m).powi(2) + 0.7 * (0.875f64 - m).powi(2)).sqrt();
        assert!((rule.value(&wide) - (m - sd)).abs() < 1e-12);
        assert_eq!(Scoring::mean_minus_sd(0.0).expect("λ").value(&wide), Scoring::Mean.value(&wide));
        // Clamped at 0.
        assert_eq!(Scoring::mean_minus_sd(10.0).expect("λ").value(&dist(vec![0.5, 0.0, 0.0, 0.5])), 0.0);
    }

    #[test]
    fn text_forms_round_trip_and_bad_ones_are_named() {
        for s in Scoring::ALL {
            assert_eq!(s.to_string().parse::<Scoring>(), Ok(s));
            let json = serde_json::to_string(&s).expect("json");
            assert_eq!(serde_json::from_str::<Scoring>(&json).expect("back"), s);
        }
        assert_eq!("quantile:0.25".parse(), Ok(Scoring::quantile(0.25).expect("q")));
        assert_eq!(" Mean-SD:0.5 ".parse(), Ok(Scoring::mean_minus_sd(0.5).expect("λ")));
        assert_eq!(Scoring::quantile(0.25).expect("q").to_string(), "quantile:0.25");
        assert_eq!(Scoring::mean_minus_sd(1.0).expect("λ").to_string(), "mean-sd:1");
        assert_eq!(serde_json::to_string(&Scoring::Max).expect("json"), "\"max\"");
        for bad in ["median", "quantile:0", "quantile:1", "quantile:x", "mean-sd:-1", "mean-sd:11"] {
            let e = bad.parse::<Scoring>().expect_err(bad).to_string();
            assert!(e.contains(bad), "{e}");
        }
        assert!(Scoring::quantile(f64::NAN).is_none());
    }
}
