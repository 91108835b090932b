//! The comparison measures of model evaluation: Kendall's τ between two rankings, and running means.

use serde::Serialize;

/// Kendall's τ-b between two score lists over the same items (ties counted as neither concordant nor
/// discordant, and corrected for in the denominator). `None` with fewer than two items or when either list
/// is constant.
pub fn kendall_tau(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n < 2 {
        return None;
    }
    let (mut concordant, mut discordant, mut ties_a, mut ties_b) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..n {
        for j in (i + 1)..n {
            let da = (a[i] - a[j]).partial_cmp(&0.0);
            let db = (b[i] - b[j]).partial_cmp(&0.0);
            let sa = match da {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
            let sb = match db {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
            match (sa, sb) {
                (0, 0) => {
                    ties_a += 1;
                    ties_b += 1;
                }
                (0, _) => ties_a += 1,
                (_, 0) => ties_b += 1,
                _ if sa == sb => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    let pairs = (n * (n - 1) / 2) as i64;
    let denom = (((pairs - ties_a) * (pairs - ties_b)) as f64).sqrt();
    (denom > 0.0).then(|| (concordant - discordant) as f64 / denom)
}

/// A mean over samples, with its count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Mean {
    /// Sum of the samples.
    #[serde(skip)]
    sum: f64,
    /// Number of samples.
    pub count: u64,
    /// The mean (0 with no samples).
    pub mean: f64,
}

impl Mean {
    /// Adds a sample.
    pub fn add(&mut self, x: f64) {
        self.sum += x;
        self.count += 1;
        self.mean = self.sum / self.count as f64;
    }

    /// Adds 1 when `hit`, else 0 (an accuracy).
    pub fn hit(&mut self, hit: bool) {
        self.add(if hit { 1.0 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_of_equal_reversed_and_tied_rankings() {
        let a = [1.0, 2.0, 3.0, 4.0];
        assert!((kendall_tau(&a, &a).expect("defined") - 1.0).abs() < 1e-12);
        let r = [4.0, 3.0, 2.0, 1.0];
        assert!((kendall_tau(&a, &r).expect("defined") + 1.0).abs() < 1e-12);
        assert_eq!(kendall_tau(&a, &[1.0; 4]), None);
        assert_eq!(kendall_tau(&[1.0], &[1.0]), None);
        // One swapped pair out of six: (5 − 1) / 6.
        let s = [1.0, 2.0, 4.0, 3.0];
        assert!((kendall_tau(&a, &s).expect("defined") - 4.0 / 6.0).abs() < 1e-12);
        // τ-b with a tie: a = 1,2,3 ; b = 1,1,2 → C=2, D=0, tie in b: 1 → 2/sqrt(3·2).
        let t = kendall_tau(&[1.0, 2.0, 3.0], &[1.0, 1.0, 2.0]).expect("defined");
        assert!((t - 2.0 / 6f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn means_count() {
        let mut m = Mean::default();
        m.hit(true);
        m.hit(false);
        m.add(0.5);
        assert_eq!(m.count, 3);
        assert!((m.mean - 0.5).abs() < 1e-12);
    }
}
