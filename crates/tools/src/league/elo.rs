//! Elo ratings by maximum likelihood, with confidence intervals.
//!
//! The model: agent i scores against agent j with expectation E = 1 / (1 + 10^(−(R_i − R_j)/400)); a draw
//! counts as half a win and half a loss (the usual logistic Elo model, as in BayesElo's and Ordo's simple
//! modes). The ratings maximise the log-likelihood Σ s_ij·ln E_ij + (n_ij − s_ij)·ln(1 − E_ij) over the
//! pairs, with one agent fixed (the anchor). Newton's method on the natural log-odds scale; the 95 %
//! intervals are ±1.96 standard errors from the inverse of the observed information matrix (relative to
//! the anchor, whose interval is zero by definition).
//!
//! A plain maximum-likelihood estimate does not exist when some group of agents scored nothing (or
//! everything) against the rest: ratings go to ±∞. `prior_draws` adds that many virtual drawn games to every
//! pair that played (a maximum a-posteriori estimate, as BayesElo does), which keeps every rating finite and
//! pulls perfect scores in; 0 gives the plain estimate and an error where it does not exist.

use super::LeagueError;

/// Scale from natural log-odds to Elo points: 400 / ln 10.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The results of one pair of agents, from `a`'s side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairScore {
    /// One agent (an index into the agent list).
    pub a: usize,
    /// The other.
    pub b: usize,
    /// Games played between them.
    pub games: f64,
    /// Points `a` scored (win 1, draw ½).
    pub points_a: f64,
}

/// How to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloOptions {
    /// The agent whose rating is fixed.
    pub anchor: usize,
    /// Its rating.
    pub anchor_elo: f64,
    /// Virtual draws added to every pair that played (0 = plain maximum likelihood).
    pub prior_draws: f64,
    /// The z value of the interval (1.96 for 95 %).
    pub z: f64,
}

impl Default for EloOptions {
    fn default() -> Self {
        EloOptions { anchor: 0, anchor_elo: 0.0, prior_draws: 1.0, z: 1.96 }
    }
}

/// One agent's estimate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rating {
    /// The rating.
    pub elo: f64,
    /// Half the width of the confidence interval (0 for the anchor).
    pub ci: f64,
}

/// The expected score of a player rated `diff` points above the opponent.
pub fn expected_score(diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-diff / 400.0))
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Fits ratings for `n` agents. Agents that played no game connected (through opponents) to the anchor get
/// `None`.
pub fn fit(n: usize, pairs: &[PairScore], options: &EloOptions) -> Result<Vec<Option<Rating>>, LeagueError> {
    if options.anchor >= n {
        return Err(LeagueError::Elo(format!("the anchor {} is not one of the {n} agents", options.anchor)));
    }
    let tally = Tally::new(n, pairs, options.prior_draws)?;
    let component = tally.anchored(options.anchor)?;
    let free: Vec<usize> = (0..n).filter(|&i| component[i] && i != options.anchor).collect();
    let r = tally.maximise(&free)?;
    let (_, h) = tally.information(&free, &r);
    let cov = invert(&h);
    let mut out = vec![None; n];
    out[options.anchor] = Some(Rating { elo: options.anchor_elo, ci: 0.0 });
    for (a, &i) in free.iter().enumerate() {
        let var = cov.as_ref().map_or(f64::INFINITY, |c| c[a][a].max(0.0));
        out[i] = Some(Rating {
            elo: options.anchor_elo + r[i] * ELO_PER_NAT,
            ci: options.z * var.sqrt() * ELO_PER_NAT,
        });
    }
    Ok(out)
}

/// Games and points between every two of `n` agents, with the prior's virtual draws.
struct Tally {
    /// How many agents.
    n: usize,
    /// `games[i][j]`: games between `i` and `j`.
    games: Vec<Vec<f64>>,
    /// `points[i][j]`: points `i` scored against `j`.
    points: Vec<Vec<f64>>,
}

impl Tally {
    /// Aggregates `pairs` into n×n games and points, adding `prior_draws` virtual draws to each pair that met.
    fn new(n: usize, pairs: &[PairScore], prior_draws: f64) -> Result<Tally, LeagueError> {
        let mut games = vec![vec![0.0; n]; n];
        let mut points = vec![vec![0.0; n]; n];
        for p in pairs {
            if p.a >= n || p.b >= n || p.a == p.b {
                return Err(LeagueError::Elo(format!("bad pair ({}, {}) for {n} agents", p.a, p.b)));
            }
            if !(p.games >= 0.0 && (0.0..=p.games).contains(&p.points_a)) {
                return Err(LeagueError::Elo(format!("bad score {} in {} games", p.points_a, p.games)));
            }
            games[p.a][p.b] += p.games;
            games[p.b][p.a] += p.games;
            points[p.a][p.b] += p.points_a;
            points[p.b][p.a] += p.games - p.points_a;
        }
        for i in 0..n {
            for j in 0..n {
                if i != j && games[i][j] > 0.0 {
                    games[i][j] += prior_draws;
                    points[i][j] += prior_draws / 2.0;
                }
            }
        }
        Ok(Tally { n, games, points })
    }

    /// The agents reachable from `anchor` through games played; an error when plain ML has no finite
    /// estimate for one of them.
    fn anchored(&self, anchor: usize) -> Result<Vec<bool>, LeagueError> {
        let (n, games, points) = (self.n, &self.games, &self.points);
        let component = reachable(n, anchor, |i, j| games[i][j] > 0.0);
        // Plain ML needs the "scored against" graph to be strongly connected within the component.
        let forward = reachable(n, anchor, |i, j| points[i][j] > 0.0);
        let backward = reachable(n, anchor, |i, j| points[j][i] > 0.0);
        if let Some(i) = (0..n).find(|&i| component[i] && !(forward[i] && backward[i])) {
            return Err(LeagueError::Elo(format!(
                "no finite maximum-likelihood estimate: agent {i} is cut off from the anchor by a perfect or \
                 zero score (add virtual draws with a prior)"
            )));
        }
        Ok(component)
    }

    /// The log-likelihood of ratings `r` (in nats).
    fn loglik(&self, r: &[f64]) -> f64 {
        let (n, games, points) = (self.n, &self.games, &self.points);
        let mut l = 0.0;
        for i in 0..n {
            for j in (i + 1)..n {
                if games[i][j] > 0.0 {
                    let p = sigmoid(r[i] - r[j]).clamp(1e-300, 1.0);
                    let q = sigmoid(r[j] - r[i]).clamp(1e-300, 1.0);
                    l += points[i][j] * p.ln() + points[j][i] * q.ln();
                }
            }
        }
        l
    }

    /// The gradient and information matrix of the log-likelihood at `r` over the `free` agents.
    fn information(&self, free: &[usize], r: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let (n, games, points) = (self.n, &self.games, &self.points);
        let m = free.len();
        let mut g = vec![0.0; m];
        let mut h = vec![vec![0.0; m]; m];
        for (a, &i) in free.iter().enumerate() {
            for j in 0..n {
                if j == i || games[i][j] <= 0.0 {
                    continue;
                }
                let p = sigmoid(r[i] - r[j]);
                g[a] += points[i][j] - games[i][j] * p;
                let w = games[i][j] * p * (1.0 - p);
                h[a][a] += w;
                if let Some(b) = free.iter().position(|&f| f == j) {
                    h[a][b] -= w;
                }
            }
        }
        (g, h)
    }

    /// The maximum-likelihood ratings (in nats, the others at 0) of the `free` agents, by damped Newton steps.
    fn maximise(&self, free: &[usize]) -> Result<Vec<f64>, LeagueError> {
        let mut r = vec![0.0; self.n];
        let mut converged = free.is_empty();
        for _ in 0..200 {
            if converged {
                break;
            }
            let (g, h) = self.information(free, &r);
            let step =
                solve(&h, &g).ok_or_else(|| LeagueError::Elo("the information matrix is singular".into()))?;
            let before = self.loglik(&r);
            let mut scale = 1.0;
            loop {
                let mut next = r.clone();
                for (a, &i) in free.iter().enumerate() {
                    next[i] += scale * step[a];
                }
                if self.loglik(&next) >= before - 1e-12 || scale < 1e-6 {
                    r = next;
                    break;
                }
                scale /= 2.0;
            }
            converged = step.iter().all(|s| (scale * s).abs() < 1e-10);
        }
        if !converged {
            return Err(LeagueError::Elo("the estimate did not converge".into()));
        }
        Ok(r)
    }
}

/// Which nodes `from` reaches along edges `edge(i, j)`.
fn reachable(n: usize, from: usize, edge: impl Fn(usize, usize) -> bool) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut stack = vec![from];
    seen[from] = true;
    while let Some(i) = stack.pop() {
        for (j, s) in seen.iter_mut().enumerate() {
            if !*s && edge(i, j) {
                *s = true;
                stack.push(j);
            }
        }
    }
    seen
}

/// Solves `a·x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> =
        a.iter().zip(b).map(|(row, &v)| row.iter().copied().chain([v]).collect()).collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        let pivot_row = m[col].clone();
        for (row, r) in m.iter_mut().enumerate() {
            if row != col {
                let f = r[col] / pivot_row[col];
                if f != 0.0 {
                    for (x, p) in r.iter_mut().zip(&pivot_row).skip(col) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
}

/// The inverse of `a` (columns solved one by one); `None` when singular.
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv = vec![vec![0.0; n]; n];
    for c in 0..n {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        let x = solve(a, &e)?;
        for r in 0..n {
            inv[r][c] = x[r];
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn plain(anchor: usize) -> EloOptions {
        EloOptions { anchor, prior_draws: 0.0, ..EloOptions::default() }
    }

    #[test]
    fn expected_counts_are_recovered_exactly() {
        let truth = [0.0, 100.0, 300.0, -150.0];
        let mut pairs = Vec::new();
        for a in 0..4 {
            for b in (a + 1)..4 {
                let n = 1000.0;
                pairs.push(PairScore { a, b, games: n, points_a: n * expected_score(truth[a] - truth[b]) });
            }
        }
        let fit = fit(4, &pairs, &plain(0)).expect("fits");
        for (i, t) in truth.iter().enumerate() {
            let r = fit[i].expect("rated");
            assert!((r.elo - t).abs() < 1e-6, "agent {i}: {} vs {t}", r.elo);
        }
        assert_eq!(fit[0].expect("anchor").ci, 0.0);
        // Anchoring elsewhere shifts every rating by the same amount.
        let other =
            super::fit(4, &pairs, &EloOptions { anchor: 2, anchor_elo: 1000.0, ..plain(2) }).expect("fits");
        for (i, t) in truth.iter().enumerate() {
            let r = other[i].expect("rated");
            assert!((r.elo - (t - 300.0 + 1000.0)).abs() < 1e-6, "agent {i}: {}", r.elo);
        }
    }

    #[test]
    fn sampled_games_recover_the_ordering_within_the_interval() {
        let truth = [0.0, 200.0, 400.0];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut pairs = Vec::new();
        for a in 0..3 {
            for b in (a + 1)..3 {
                let e = expected_score(truth[a] - truth[b]);
                let mut points = 0.0;
                let n = 600;
                for _ in 0..n {
                    // Some games drawn (at most a third, and few enough that the decided games can keep the
                    // expectation: draw/2 ≤ min(E, 1 − E)).
                    let draw = (1.0 / 3.0f64).min(e.min(1.0 - e));
                    let x: f64 = rng.random();
                    if x < draw {
                        points += 0.5;
                    } else if rng.random::<f64>() < (e - draw / 2.0) / (1.0 - draw) {
                        points += 1.0;
                    }
                }
                pairs.push(PairScore { a, b, games: f64::from(n), points_a: points });
            }
        }
        let fit = fit(3, &pairs, &plain(0)).expect("fits");
        let r: Vec<Rating> = fit.iter().map(|r| r.expect("rated")).collect();
        assert!(r[0].elo < r[1].elo && r[1].elo < r[2].elo, "{r:?}");
        for (i, t) in truth.iter().enumerate().skip(1) {
            assert!(r[i].ci > 5.0 && r[i].ci < 80.0, "agent {i}: interval {}", r[i].ci);
            assert!((r[i].elo - t).abs() < r[i].ci * 1.5, "agent {i}: {} ± {} vs {t}", r[i].elo, r[i].ci);
        }
    }

    #[test]
    fn intervals_shrink_with_more_games() {
        let pairs = |n: f64| vec![PairScore { a: 0, b: 1, games: n, points_a: n * 0.6 }];
        let small = fit(2, &pairs(20.0), &plain(0)).expect("fits")[1].expect("rated");
        let large = fit(2, &pairs(2000.0), &plain(0)).expect("fits")[1].expect("rated");
        assert!((small.elo - large.elo).abs() < 1e-6);
        assert!(large.ci < small.ci / 5.0, "{} vs {}", large.ci, small.ci);
        // 60 % is about −70 Elo for the anchor's opponent... seen from agent 1 it lost 60 %.
        assert!((large.elo + 70.4).abs() < 0.5, "{}", large.elo);
    }

    #[test]
    fn perfect_scores_need_the_prior() {
        let pairs = vec![
            PairScore { a: 0, b: 1, games: 8.0, points_a: 8.0 },
            PairScore { a: 1, b: 2, games: 8.0, points_a: 4.0 },
        ];
        assert!(matches!(fit(3, &pairs, &plain(0)), Err(LeagueError::Elo(_))));
        let r = fit(3, &pairs, &EloOptions::default()).expect("finite with virtual draws");
        let (a, b) = (r[0].expect("anchor"), r[1].expect("rated"));
        assert!(b.elo < a.elo - 300.0 && b.elo.is_finite() && b.ci.is_finite(), "{b:?}");
    }

    #[test]
    fn agents_without_games_are_not_rated() {
        let pairs = vec![PairScore { a: 0, b: 1, games: 4.0, points_a: 2.0 }];
        let r = fit(3, &pairs, &plain(1)).expect("fits");
        assert!(r[0].is_some() && r[1].is_some() && r[2].is_none());
        assert!(r[0].expect("rated").elo.abs() < 1e-9);
        assert!(fit(3, &pairs, &plain(5)).is_err());
    }
}
