//! Value buckets: win probabilities as classes, and the two ways of reading a value back (max and mean
//! scoring).
//!
//! `K` uniform buckets cover the win probability range [0, 1]: bucket `i` holds [i/K, (i+1)/K) (the last
//! one also holds 1.0) and stands for its centre (i + 0.5)/K. MAV uses K = 64 ([`MAV_BUCKETS`]), the
//! searchless action-value format of Ruoss et al. K = 128 ([`SEARCHLESS_BUCKETS`]); nothing here assumes
//! either. Win probabilities come from Stockfish centipawns by the Lichess formula
//! ([`win_prob_from_cp`]); mate scores map to 0 or 1.

/// The bucket count of the MAV format (`<ctrl0>` .. `<ctrl63>`).
pub const MAV_BUCKETS: u32 = 64;

/// The bucket count of the searchless (Ruoss et al. 2024) action-value format.
pub const SEARCHLESS_BUCKETS: u32 = 128;

/// The slope of the Lichess centipawn → win probability curve.
pub const LICHESS_CP_SLOPE: f64 = 0.00368208;

/// A bad bucket count, bucket index, probability or distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BucketError {
    /// K must be at least 1.
    #[error("the bucket count must be at least 1 (got {0})")]
    ZeroBuckets(u32),
    /// A bucket index at or past K.
    #[error("bucket {index} does not exist: there are only {k} buckets (0..{k})")]
    IndexOutOfRange {
        /// The index given.
        index: u32,
        /// The bucket count.
        k: u32,
    },
    /// A probability that is NaN or infinite.
    #[error("the win probability {0} is not a finite number")]
    NotFinite(f64),
    /// A distribution whose length is not K.
    #[error("a value distribution over {k} buckets needs {k} numbers, got {got}")]
    WrongLength {
        /// The bucket count.
        k: u32,
        /// How many numbers were given.
        got: usize,
    },
    /// A distribution with a negative or non-finite entry, or not summing to 1.
    #[error("not a probability distribution: {0}")]
    NotADistribution(String),
}

/// A Stockfish score from the point of view of the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineScore {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves: positive when the side to move mates, negative (or 0: already mated)
    /// when it is mated.
    Mate(i32),
}

impl EngineScore {
    /// The win probability for the side to move: Lichess formula for centipawns, 1 or 0 for mates.
    pub fn win_prob(self) -> f64 {
        match self {
            EngineScore::Cp(cp) => win_prob_from_cp(f64::from(cp)),
            EngineScore::Mate(n) if n > 0 => 1.0,
            EngineScore::Mate(_) => 0.0,
        }
    }
}

/// The Lichess win probability for a centipawn score: 0.5 + 0.5·(2/(1+exp(−0.00368208·cp)) − 1).
pub fn win_prob_from_cp(cp: f64) -> f64 {
    0.5 + 0.5 * (2.0 / (1.0 + (-LICHESS_CP_SLOPE * cp).exp()) - 1.0)
}

/// The inverse of [`win_prob_from_cp`]: the centipawn score with this win probability. Gives −∞ at 0 and
/// +∞ at 1; probabilities outside [0, 1] are clamped first.
pub fn cp_from_win_prob(p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    // p = 1/(1+e^(-a·cp))  ⇔  cp = ln(p/(1-p))/a
    (p / (1.0 - p)).ln() / LICHESS_CP_SLOPE
}

/// K uniform value buckets over the win probability range [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Buckets {
    k: u32,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets { k: MAV_BUCKETS }
    }
}

impl Buckets {
    /// `k` buckets; `k` must be at least 1.
    pub fn new(k: u32) -> Result<Buckets, BucketError> {
        if k == 0 {
            return Err(BucketError::ZeroBuckets(k));
        }
        Ok(Buckets { k })
    }

    /// The MAV bucket set (K = 64).
    pub fn mav() -> Buckets {
        Buckets { k: MAV_BUCKETS }
    }

    /// The bucket count K.
    pub fn k(self) -> u32 {
        self.k
    }

    /// The bucket holding win probability `p` (values outside [0, 1] are clamped; 1.0 is in the last
    /// bucket).
    pub fn bucket_of(self, p: f64) -> Result<u32, BucketError> {
        if !p.is_finite() {
            return Err(BucketError::NotFinite(p));
        }
        let scaled = (p.clamp(0.0, 1.0) * f64::from(self.k)).floor();
        // `scaled` is in 0..=k, so the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let i = scaled as u32;
        Ok(i.min(self.k - 1))
    }

    /// The bucket of a centipawn score (through [`win_prob_from_cp`]).
    pub fn bucket_of_score(self, score: EngineScore) -> u32 {
        let i = (score.win_prob() * f64::from(self.k)).floor().clamp(0.0, f64::from(self.k - 1));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let i = i as u32;
        i
    }

    /// Checks that `index` names a bucket.
    pub fn check(self, index: u32) -> Result<u32, BucketError> {
        if index < self.k { Ok(index) } else { Err(BucketError::IndexOutOfRange { index, k: self.k }) }
    }

    /// The value a bucket stands for: its centre (i + 0.5)/K.
    pub fn centre(self, index: u32) -> Result<f64, BucketError> {
        self.check(index)?;
        Ok((f64::from(index) + 0.5) / f64::from(self.k))
    }

    /// The lower and upper bound of a bucket: [i/K, (i+1)/K).
    pub fn range(self, index: u32) -> Result<(f64, f64), BucketError> {
        self.check(index)?;
        let k = f64::from(self.k);
        Ok((f64::from(index) / k, f64::from(index + 1) / k))
    }

    /// The same value seen by the opponent: 1 − centre(i) is the centre of bucket K − 1 − i.
    pub fn flip(self, index: u32) -> Result<u32, BucketError> {
        self.check(index)?;
        Ok(self.k - 1 - index)
    }
}

/// A probability distribution over K value buckets (what a model predicts for one move).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueDistribution {
    buckets: Buckets,
    probs: Vec<f64>,
}

impl ValueDistribution {
    /// Tolerance on the sum of the probabilities.
    pub const SUM_TOLERANCE: f64 = 1e-6;

    /// A distribution from probabilities (non-negative, finite, summing to 1 within
    /// [`Self::SUM_TOLERANCE`]; they are then rescaled to sum to exactly 1 in floating point terms).
    pub fn from_probs(buckets: Buckets, probs: Vec<f64>) -> Result<ValueDistribution, BucketError> {
        if probs.len() != buckets.k() as usize {
            return Err(BucketError::WrongLength { k: buckets.k(), got: probs.len() });
        }
        if let Some((i, p)) = probs.iter().enumerate().find(|(_, p)| !p.is_finite() || **p < 0.0) {
            return Err(BucketError::NotADistribution(format!("entry {i} is {p}")));
        }
        let sum: f64 = probs.iter().sum();
        if (sum - 1.0).abs() > Self::SUM_TOLERANCE {
            return Err(BucketError::NotADistribution(format!("the entries sum to {sum}, not 1")));
        }
        let probs = probs.into_iter().map(|p| p / sum).collect();
        Ok(ValueDistribution { buckets, probs })
    }

    /// The softmax of `logits` (numerically stable: the maximum is subtracted first).
    pub fn from_logits(buckets: Buckets, logits: &[f32]) -> Result<ValueDistribution, BucketError> {
        if logits.len() != buckets.k() as usize {
            return Err(BucketError::WrongLength { k: buckets.k(), got: logits.len() });
        }
        if let Some((i, l)) = logits.iter().enumerate().find(|(_, l)| !l.is_finite()) {
            return Err(BucketError::NotADistribution(format!("logit {i} is {l}")));
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f64> = logits.iter().map(|&l| f64::from(l - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        Ok(ValueDistribution { buckets, probs: exps.into_iter().map(|e| e / sum).collect() })
    }

    /// All mass on one bucket.
    pub fn one_hot(buckets: Buckets, index: u32) -> Result<ValueDistribution, BucketError> {
        buckets.check(index)?;
        let mut probs = vec![0.0; buckets.k() as usize];
        probs[index as usize] = 1.0;
        Ok(ValueDistribution { buckets, probs })
    }

    /// The buckets this distribution is over.
    pub fn buckets(&self) -> Buckets {
        self.buckets
    }

    /// The probabilities, one per bucket.
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// The most probable bucket (the lowest index among equals).
    pub fn mode_bucket(&self) -> u32 {
        // The index is < K ≤ u32::MAX.
        u32::try_from(mode_index(&self.probs)).unwrap_or(0)
    }

    /// Max scoring: the centre of the most probable bucket.
    pub fn max_value(&self) -> f64 {
        (f64::from(self.mode_bucket()) + 0.5) / f64::from(self.buckets.k())
    }

    /// Mean scoring: the expected bucket centre Σ pᵢ·centreᵢ.
    pub fn mean_value(&self) -> f64 {
        mean_centre(&self.probs)
    }

    /// The distribution seen by the opponent (bucket i ↔ bucket K − 1 − i).
    pub fn flipped(&self) -> ValueDistribution {
        let mut probs = self.probs.clone();
        probs.reverse();
        ValueDistribution { buckets: self.buckets, probs }
    }
}

/// The index of the largest of `probs` (the lowest among equals; 0 for an empty slice).
pub(crate) fn mode_index(probs: &[f64]) -> usize {
    let mut best = 0usize;
    for (i, p) in probs.iter().enumerate() {
        if *p > probs[best] {
            best = i;
        }
    }
    best
}

/// Σ pᵢ·centreᵢ over K = `probs.len()` buckets of equal width on [0, 1].
pub(crate) fn mean_centre(probs: &[f64]) -> f64 {
    let k = probs.len() as f64;
    probs.iter().enumerate().map(|(i, p)| p * (i as f64 + 0.5) / k).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lichess_formula_values() {
        assert!((win_prob_from_cp(0.0) - 0.5).abs() < 1e-12);
        // 0.5 + 0.5·(2/(1+e^(-0.368208)) − 1): e^-0.368208 = 0.691973, 2/1.691973 = 1.182052, so the win
        // probability is 0.5 + 0.5·0.182052 = 0.591026.
        assert!((win_prob_from_cp(100.0) - 0.591_026).abs() < 1e-5);
        assert!((win_prob_from_cp(-100.0) - (1.0 - 0.591_026)).abs() < 1e-5);
        for cp in [-2000.0, -350.0, -1.0, 0.0, 12.0, 400.0, 1500.0] {
            let back = cp_from_win_prob(win_prob_from_cp(cp));
            assert!((back - cp).abs() < 1e-6 * cp.abs().max(1.0), "{cp} → {back}");
        }
        assert_eq!(cp_from_win_prob(1.0), f64::INFINITY);
        assert_eq!(cp_from_win_prob(0.0), f64::NEG_INFINITY);
        assert_eq!(EngineScore::Mate(3).win_prob(), 1.0);
        assert_eq!(EngineScore::Mate(-2).win_prob(), 0.0);
        assert_eq!(EngineScore::Mate(0).win_prob(), 0.0);
    }

    #[test]
    fn bucket_edges_and_centres() {
        let b = Buckets::mav();
        assert_eq!(b.bucket_of(0.0), Ok(0));
        assert_eq!(b.bucket_of(1.0 / 64.0 - 1e-12), Ok(0));
        assert_eq!(b.bucket_of(1.0 / 64.0), Ok(1));
        assert_eq!(b.bucket_of(0.5), Ok(32));
        assert_eq!(b.bucket_of(1.0), Ok(63));
        assert_eq!(b.bucket_of(1.7), Ok(63));
        assert_eq!(b.bucket_of(-0.1), Ok(0));
        assert!(b.bucket_of(f64::NAN).is_err());
        assert_eq!(b.centre(0), Ok(0.5 / 64.0));
        assert_eq!(b.centre(63), Ok(63.5 / 64.0));
        assert!(b.centre(64).is_err());
        assert_eq!(b.flip(0), Ok(63));
        assert_eq!(b.flip(22), Ok(41));
        assert_eq!(b.bucket_of_score(EngineScore::Mate(1)), 63);
        assert_eq!(b.bucket_of_score(EngineScore::Mate(-1)), 0);
        assert_eq!(b.bucket_of_score(EngineScore::Cp(0)), 32);
        let s = Buckets::new(SEARCHLESS_BUCKETS).expect("valid");
        assert_eq!(s.bucket_of(0.5), Ok(64));
        assert_eq!(s.range(1), Ok((1.0 / 128.0, 2.0 / 128.0)));
        assert!(Buckets::new(0).is_err());
    }

    #[test]
    fn every_centre_lies_in_its_bucket() {
        for k in [1, 2, 3, 64, 128] {
            let b = Buckets::new(k).expect("valid");
            for i in 0..k {
                let c = b.centre(i).expect("in range");
                assert_eq!(b.bucket_of(c), Ok(i));
                let f = b.flip(i).expect("in range");
                assert!((b.centre(f).expect("in range") - (1.0 - c)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn distributions_max_and_mean() {
        let b = Buckets::new(4).expect("valid");
        let d = ValueDistribution::from_probs(b, vec![0.1, 0.2, 0.6, 0.1]).expect("valid");
        assert_eq!(d.mode_bucket(), 2);
        assert!((d.max_value() - 2.5 / 4.0).abs() < 1e-12);
        let mean = 0.1 * 0.125 + 0.2 * 0.375 + 0.6 * 0.625 + 0.1 * 0.875;
        assert!((d.mean_value() - mean).abs() < 1e-12);
        assert!((d.flipped().mean_value() - (1.0 - mean)).abs() < 1e-12);
        assert!(ValueDistribution::from_probs(b, vec![0.5, 0.5, 0.5, 0.0]).is_err());
        assert!(ValueDistribution::from_probs(b, vec![1.5, -0.5, 0.0, 0.0]).is_err());
        assert!(ValueDistribution::from_probs(b, vec![1.0]).is_err());
        let l = ValueDistribution::from_logits(b, &[0.0, 0.0, 1000.0, 0.0]).expect("finite");
        assert_eq!(l.mode_bucket(), 2);
        assert!((l.probs().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let u = ValueDistribution::from_logits(b, &[3.0; 4]).expect("finite");
        assert!((u.mean_value() - 0.5).abs() < 1e-12);
        assert_eq!(ValueDistribution::one_hot(b, 3).expect("valid").max_value(), 3.5 / 4.0);
    }
}
