//! MCTS settings, with the paper's values as defaults (§5: τ = 1, k = 5, ε = 0.1, b = 16, n_min = 2).

use serde::{Deserialize, Serialize};

use crate::inference::evaluator::{DecodeMode, Scoring, TopK};
use crate::search::SearchError;

/// Where children states come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorldModel {
    /// The game rules play the moves (`GameState::play`); the model only gives values. Terminal states are
    /// decided by the rules, without a model call.
    #[default]
    Rules,
    /// The model is its own world model (paper §3.1, "State-Tracking MAV"): each child is evaluated with
    /// `previous = (parent state, move)`, `want_next_state` and free decoding, and the state the model
    /// predicts becomes the child's state; its listed moves are the child's moves and its terminal verdict
    /// ends the line. Failed answers make the node a dead end (value −∞, never selected again).
    Learned,
}

/// The value PUCT gives a child that has never been visited (the paper's V/N is undefined there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstPlayValue {
    /// 0, a loss: OpenSpiel's `explore_count and total_reward / explore_count`, which the paper adapts,
    /// read on the [0, 1] win-probability scale. Unvisited moves are tried only through their prior.
    Loss,
    /// 0.5, a draw.
    Draw,
    /// The model's own value for that move from the parent's evaluation (which a MAV model gives for every
    /// move in the same call); moves the model did not value (top-k requests) get the lowest value it gave
    /// at that node.
    #[default]
    ModelValue,
}

/// Where a node's prior P(s, a) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorSource {
    /// The moves' values, by the paper's Eq. 1 (a softmax over the k best, mixed with ε uniform).
    #[default]
    Values,
    /// A policy: the model's best-action probabilities (a mav-encoder's or mav-lm's best-action head, or a
    /// behavioural-cloning package paired with a value package, as AlphaZero splits policy and value),
    /// mixed with ε uniform as Eq. 1 mixes. Where an answer has no policy the values give the prior.
    Policy,
}

impl std::fmt::Display for PriorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PriorSource::Values => "values",
            PriorSource::Policy => "policy",
        })
    }
}

impl std::str::FromStr for PriorSource {
    type Err = String;

    fn from_str(s: &str) -> Result<PriorSource, String> {
        match s {
            "values" => Ok(PriorSource::Values),
            "policy" => Ok(PriorSource::Policy),
            other => Err(format!("'{other}' is not a prior source: values (Eq. 1) or policy")),
        }
    }
}

/// How the tree is searched: the paper's MAV-MCTS, or AlphaZero's PUCT as lc0 runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStyle {
    /// As the model answers: a model that gives the position's own outcome beside a policy (a Leela or Maia
    /// network) is searched as lc0 searches it, every other as MAV-MCTS. Decided by the root's evaluation.
    #[default]
    Auto,
    /// MAV-MCTS (paper §3): every node's moves valued in its one call, the prior from their values (Eq. 1)
    /// or a policy, a leaf backed up with its best move's value Q*.
    Mav,
    /// AlphaZero's PUCT with lc0's refinements ([`Lc0Params`]): below the root one network call per
    /// expanded node gives the position's win/draw/loss (backed up as the expected score) and its policy
    /// (the children's priors, at a softmax temperature); unvisited children take a first-play value
    /// reduced below the parent's; a pending evaluation's visits weigh only on exploration, as lc0's
    /// in-flight counts do. A model without a position outcome backs up Q* instead.
    Lc0,
}

impl std::fmt::Display for SearchStyle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchStyle::Auto => "auto",
            SearchStyle::Mav => "mav",
            SearchStyle::Lc0 => "lc0",
        })
    }
}

impl std::str::FromStr for SearchStyle {
    type Err = String;

    fn from_str(s: &str) -> Result<SearchStyle, String> {
        match s {
            "auto" => Ok(SearchStyle::Auto),
            "mav" => Ok(SearchStyle::Mav),
            "lc0" => Ok(SearchStyle::Lc0),
            other => Err(format!("'{other}' is not a search style: auto, mav or lc0")),
        }
    }
}

/// The settings of [`SearchStyle::Lc0`], with lc0 v0.32's defaults, on lc0's scale: Q from −1 (a loss) to 1
/// (a win) for the player choosing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lc0Params {
    /// c_puct at the start (`CPuct`, 1.745).
    pub cpuct: f64,
    /// The visit count over which c_puct grows (`CPuctBase`, 38,739): c(N) = c_puct + factor·ln((N + base) / base).
    pub cpuct_base: f64,
    /// How fast c_puct grows (`CPuctFactor`, 3.894).
    pub cpuct_factor: f64,
    /// First-play urgency reduction (`FPUValue`, 0.330): an unvisited child's Q is the parent's Q minus this
    /// times the square root of the policy already visited.
    pub fpu_reduction: f64,
    /// The policy's softmax temperature (`PolicyTemperature`, 1.359): priors ∝ p^(1/T).
    pub policy_temperature: f64,
    /// A position that occurred before, at least 4 plies below the root with its earlier occurrence in the
    /// tree, is a draw (`TwoFoldDraws`, on). A third occurrence is a draw either way.
    pub two_fold_draws: bool,
    /// The moves-left utility's cap (`MovesLeftMaxEffect`, 0.0345), for a network that predicts the moves
    /// left (lc0's moves-left head): among winning moves the shorter win is preferred, among losing ones the
    /// longer loss.
    pub moves_left_max_effect: f64,
    /// The |Q| of the parent above which the utility applies (`MovesLeftThreshold`, 0.8).
    pub moves_left_threshold: f64,
    /// The utility per move of difference from the parent's moves left (`MovesLeftSlope`, 0.0027).
    pub moves_left_slope: f64,
    /// The utility's constant factor (`MovesLeftConstantFactor`, 0).
    pub moves_left_constant_factor: f64,
    /// Its factor linear in the rescaled |Q| (`MovesLeftScaledFactor`, 1.6521).
    pub moves_left_scaled_factor: f64,
    /// Its factor quadratic in the rescaled Q (`MovesLeftQuadraticFactor`, −0.6521).
    pub moves_left_quadratic_factor: f64,
    /// The weight of Dirichlet noise on the root's priors when the root is evaluated
    /// (`DirichletNoiseEpsilon`, 0: off, as in play; self-play uses 0.25).
    pub noise_epsilon: f64,
    /// The noise's concentration α (`DirichletNoiseAlpha`, 0.3).
    pub noise_alpha: f64,
}

impl Default for Lc0Params {
    fn default() -> Self {
        Lc0Params {
            cpuct: 1.745,
            cpuct_base: 38_739.0,
            cpuct_factor: 3.894,
            fpu_reduction: 0.330,
            policy_temperature: 1.359,
            two_fold_draws: true,
            moves_left_max_effect: 0.0345,
            moves_left_threshold: 0.8,
            moves_left_slope: 0.0027,
            moves_left_constant_factor: 0.0,
            moves_left_scaled_factor: 1.6521,
            moves_left_quadratic_factor: -0.6521,
            noise_epsilon: 0.0,
            noise_alpha: 0.3,
        }
    }
}

impl Lc0Params {
    /// c_puct at a node visited `n` times.
    pub fn cpuct_at(&self, n: f64) -> f64 {
        self.cpuct + self.cpuct_factor * ((n + self.cpuct_base) / self.cpuct_base).ln()
    }

    /// lc0's moves-left utility of a visited child whose Q (from −1 to 1, for the player choosing) is `q`
    /// and whose moves left are `child_m`, below a parent with `parent_m` moves left whose |Q| is over the
    /// threshold: the difference in moves left, scaled and capped, signed against Q (a shorter line is
    /// worth more when winning, less when losing), weighted by how far |Q| is past the threshold.
    pub fn moves_left_utility(&self, child_m: f64, parent_m: f64, q: f64) -> f64 {
        let cap = self.moves_left_max_effect;
        let mut m = (self.moves_left_slope * (child_m - parent_m)).clamp(-cap, cap);
        m *= if -q < 0.0 { -1.0 } else { 1.0 };
        let t = self.moves_left_threshold;
        let q = if t > 0.0 && t < 1.0 { (q.abs() - t).max(0.0) / (1.0 - t) } else { q };
        m * (self.moves_left_constant_factor
            + self.moves_left_scaled_factor * q.abs()
            + self.moves_left_quadratic_factor * q * q)
    }

    fn validate(&self) -> Result<(), SearchError> {
        let checks: [(&'static str, f64, bool); 13] = [
            ("lc0.cpuct", self.cpuct, self.cpuct >= 0.0),
            ("lc0.cpuct_base", self.cpuct_base, self.cpuct_base > 0.0),
            ("lc0.cpuct_factor", self.cpuct_factor, self.cpuct_factor >= 0.0),
            ("lc0.fpu_reduction", self.fpu_reduction, true),
            ("lc0.policy_temperature", self.policy_temperature, self.policy_temperature > 0.0),
            ("lc0.moves_left_max_effect", self.moves_left_max_effect, self.moves_left_max_effect >= 0.0),
            (
                "lc0.moves_left_threshold",
                self.moves_left_threshold,
                (0.0..=1.0).contains(&self.moves_left_threshold),
            ),
            ("lc0.moves_left_slope", self.moves_left_slope, self.moves_left_slope >= 0.0),
            ("lc0.moves_left_constant_factor", self.moves_left_constant_factor, true),
            ("lc0.moves_left_scaled_factor", self.moves_left_scaled_factor, true),
            ("lc0.moves_left_quadratic_factor", self.moves_left_quadratic_factor, true),
            ("lc0.noise_epsilon", self.noise_epsilon, (0.0..=1.0).contains(&self.noise_epsilon)),
            ("lc0.noise_alpha", self.noise_alpha, self.noise_alpha > 0.0),
        ];
        for (name, v, ok) in checks {
            if !(v.is_finite() && ok) {
                return Err(SearchError::InvalidParam { name, why: format!("{v} is out of range") });
            }
        }
        Ok(())
    }
}

/// Temporary visit counts put on the edges of a simulation's path while its evaluation is out (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VirtualCounts {
    /// The same count n_c on every edge of the path.
    Fixed(u32),
    /// n_max on the edge into the leaf, halved (floor) at each step toward the root, never below n_min
    /// (Figure 5). Counts of different simulations add up.
    Dynamic {
        /// The count at the leaf.
        n_max: u32,
        /// The smallest count.
        n_min: u32,
    },
}

impl Default for VirtualCounts {
    fn default() -> Self {
        VirtualCounts::Dynamic { n_max: 8, n_min: 2 }
    }
}

impl VirtualCounts {
    /// The paper's tuned dynamic counts for a budget of `simulations` (§5: n_min = 2; n_max = 8 up to 500
    /// simulations, 16 at 1000, 32 at 2000; between the listed budgets the next larger one's value).
    pub fn paper_dynamic(simulations: u64) -> VirtualCounts {
        let n_max = match simulations {
            0..=500 => 8,
            501..=1000 => 16,
            _ => 32,
        };
        VirtualCounts::Dynamic { n_max, n_min: 2 }
    }

    /// The counts for a path of `len` edges, root side first (the last one is the edge into the leaf).
    pub fn for_path(self, len: usize) -> Vec<u32> {
        (0..len)
            .map(|i| {
                let from_leaf = len - 1 - i;
                match self {
                    VirtualCounts::Fixed(n) => n,
                    VirtualCounts::Dynamic { n_max, n_min } => {
                        let halved =
                            u32::try_from(from_leaf).ok().and_then(|d| n_max.checked_shr(d)).unwrap_or(0);
                        halved.max(n_min)
                    }
                }
            })
            .collect()
    }
}

/// The prior temperature τ as a function of the ply (half-move number) of the node being expanded:
/// piecewise linear through the given points, constant before the first and after the last (the paper
/// adapts τ with the number of moves played).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Temperature {
    /// (ply, τ) points, sorted by ply, τ > 0.
    pub points: Vec<(u32, f64)>,
}

impl Default for Temperature {
    fn default() -> Self {
        Temperature::constant(1.0)
    }
}

impl Temperature {
    /// The same τ at every ply.
    pub fn constant(tau: f64) -> Temperature {
        Temperature { points: vec![(0, tau)] }
    }

    /// τ at `ply`.
    pub fn at(&self, ply: u32) -> f64 {
        let Some(&(first_ply, first_tau)) = self.points.first() else { return 1.0 };
        if ply <= first_ply {
            return first_tau;
        }
        for w in self.points.windows(2) {
            let ((p0, t0), (p1, t1)) = (w[0], w[1]);
            if ply <= p1 {
                let span = f64::from(p1 - p0);
                let x = if span > 0.0 { f64::from(ply - p0) / span } else { 1.0 };
                return t0 + (t1 - t0) * x;
            }
        }
        self.points.last().map_or(1.0, |&(_, t)| t)
    }

    fn validate(&self) -> Result<(), SearchError> {
        if self.points.is_empty() {
            return Err(SearchError::InvalidParam {
                name: "temperature",
                why: "the schedule needs at least one (ply, τ) point".into(),
            });
        }
        if let Some((p, t)) = self.points.iter().find(|(_, t)| !(t.is_finite() && *t > 0.0)) {
            return Err(SearchError::InvalidParam {
                name: "temperature",
                why: format!("τ at ply {p} is {t}; it must be a positive number"),
            });
        }
        if self.points.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(SearchError::InvalidParam {
                name: "temperature",
                why: "the schedule's plies must be strictly increasing".into(),
            });
        }
        Ok(())
    }
}

/// Every MCTS setting. Defaults follow the paper where it gives a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MctsParams {
    /// The PUCT exploration constant (not given in the paper; 1.0 on the [0, 1] value scale).
    pub c_puct: f64,
    /// Which value each move contributes, to the prior and to the backed-up Q* (paper: mean is stronger).
    pub scoring: Scoring,
    /// k: how many of the best-valued moves share the greedy part of the prior (Eq. 1).
    pub prior_top_k: usize,
    /// Where the prior comes from: the values (Eq. 1) or a policy.
    pub prior_source: PriorSource,
    /// ε: the weight of the uniform part of the prior (Eq. 1).
    pub epsilon: f64,
    /// τ: the softmax temperature of the greedy part, by ply.
    pub temperature: Temperature,
    /// Virtual counts for batched (asynchronous) simulations.
    pub virtual_counts: VirtualCounts,
    /// The PUCT value of unvisited children.
    pub first_play: FirstPlayValue,
    /// Rules or the model's own predicted states.
    pub world_model: WorldModel,
    /// How many moves each request asks the model for.
    pub request_top_k: TopK,
    /// Decoding in the rules world model (the learned world model always decodes freely).
    pub decode: DecodeMode,
    /// The seed of the tie-breaking random number generator.
    pub seed: u64,
    /// Keep the model's full value distributions for nodes evaluated at depth < this (0 = the root's moves
    /// only ... 2 = also the moves after each root move, so they survive one tree reuse). Deeper nodes keep
    /// the max and mean values only.
    pub keep_distributions_depth: u32,
    /// Only these root moves are searched and can be chosen (in the game's move notation; UCI's
    /// `searchmoves`); empty: every move.
    pub root_moves: Vec<String>,
    /// MAV-MCTS or lc0's PUCT (by default as the model answers).
    pub style: SearchStyle,
    /// The settings of lc0's PUCT.
    pub lc0: Lc0Params,
}

impl Default for MctsParams {
    fn default() -> Self {
        MctsParams {
            c_puct: 1.0,
            scoring: Scoring::Mean,
            prior_top_k: 5,
            prior_source: PriorSource::Values,
            epsilon: 0.1,
            temperature: Temperature::default(),
            virtual_counts: VirtualCounts::default(),
            first_play: FirstPlayValue::default(),
            world_model: WorldModel::Rules,
            request_top_k: TopK::All,
            decode: DecodeMode::Constrained,
            seed: 0,
            keep_distributions_depth: 2,
            root_moves: Vec::new(),
            style: SearchStyle::Auto,
            lc0: Lc0Params::default(),
        }
    }
}

impl MctsParams {
    /// Checks every setting's range.
    pub fn validate(&self) -> Result<(), SearchError> {
        if !(self.c_puct.is_finite() && self.c_puct >= 0.0) {
            return Err(SearchError::InvalidParam {
                name: "c_puct",
                why: format!("{} is not a non-negative number", self.c_puct),
            });
        }
        if self.prior_top_k == 0 {
            return Err(SearchError::InvalidParam {
                name: "prior_top_k",
                why: "k must be at least 1".into(),
            });
        }
        if !(0.0..=1.0).contains(&self.epsilon) {
            return Err(SearchError::InvalidParam {
                name: "epsilon",
                why: format!("{} is not in [0, 1]", self.epsilon),
            });
        }
        if self.request_top_k == TopK::Count(0) {
            return Err(SearchError::InvalidParam {
                name: "request_top_k",
                why: "asking for 0 moves gives nothing to search; use at least 1 or all".into(),
            });
        }
        self.temperature.validate()?;
        self.lc0.validate()?;
        if self.style == SearchStyle::Lc0 && self.world_model == WorldModel::Learned {
            return Err(SearchError::InvalidParam {
                name: "style",
                why: "lc0's search plays the moves by the rules; the learned world model needs MAV-MCTS"
                    .into(),
            });
        }
        if let VirtualCounts::Dynamic { n_max, n_min } = self.virtual_counts
            && n_min > n_max
        {
            return Err(SearchError::InvalidParam {
                name: "virtual_counts",
                why: format!("n_min ({n_min}) is larger than n_max ({n_max})"),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_5_counts_per_path_length() {
        let d = VirtualCounts::Dynamic { n_max: 8, n_min: 2 };
        assert_eq!(d.for_path(1), vec![8]);
        assert_eq!(d.for_path(2), vec![4, 8]);
        assert_eq!(d.for_path(3), vec![2, 4, 8]);
        assert_eq!(d.for_path(5), vec![2, 2, 2, 4, 8]);
        assert_eq!(VirtualCounts::Dynamic { n_max: 32, n_min: 2 }.for_path(6), vec![2, 2, 4, 8, 16, 32]);
        assert_eq!(VirtualCounts::Fixed(3).for_path(3), vec![3, 3, 3]);
        assert_eq!(VirtualCounts::Dynamic { n_max: 8, n_min: 0 }.for_path(40)[0], 0);
        assert!(d.for_path(0).is_empty());
    }

    #[test]
    fn paper_n_max_by_budget() {
        assert_eq!(VirtualCounts::paper_dynamic(100), VirtualCounts::Dynamic { n_max: 8, n_min: 2 });
        assert_eq!(VirtualCounts::paper_dynamic(500), VirtualCounts::Dynamic { n_max: 8, n_min: 2 });
        assert_eq!(VirtualCounts::paper_dynamic(1000), VirtualCounts::Dynamic { n_max: 16, n_min: 2 });
        assert_eq!(VirtualCounts::paper_dynamic(2000), VirtualCounts::Dynamic { n_max: 32, n_min: 2 });
    }

    #[test]
    fn temperature_schedule_interpolates() {
        let t = Temperature { points: vec![(10, 2.0), (20, 1.0)] };
        assert_eq!(t.at(0), 2.0);
        assert_eq!(t.at(15), 1.5);
        assert_eq!(t.at(99), 1.0);
        assert_eq!(Temperature::constant(0.5).at(7), 0.5);
        assert!(
            MctsParams { temperature: Temperature { points: vec![(0, 0.0)] }, ..Default::default() }
                .validate()
                .is_err()
        );
        assert!(MctsParams::default().validate().is_ok());
        assert!(MctsParams { epsilon: 1.5, ..Default::default() }.validate().is_err());
    }
}
