//! The `lc0` evaluator: a Leela Chess Zero network imported by `mavboard import lc0`. The position and its
//! history (the request's `history`, then its state) become lc0's 112 input planes; the network gives its
//! policy logits, win/draw/loss and moves left. A move is valued as lc0's own search values a child, by the
//! win/draw/loss of the position after it, seen by the mover: every successor of every request of a batch
//! goes into the one model call, beside the position itself, whose policy (softmax over the legal moves)
//! is the answer's `best_action`. A successor the rules end is valued from its outcome. A request that asks
//! for the position only (`position_only`, what an AlphaZero-style search reads below its root) runs its
//! one row: the policy and the position's win/draw/loss, the moves listed without values.
//!
//! Win/draw/loss as a value distribution over [`BUCKETS`] (65) buckets: the loss share on the lowest bucket,
//! the draw share on the middle one (centre ½ exactly), the win share on the highest — so max scoring is the
//! most likely of the three outcomes, mean scoring the expected score (drawn 1/65 of the way towards ½: the
//! outer buckets' centres are 1/130 from 0 and 1), and the other rules read the same three masses.

use std::time::{Duration, Instant};

use ndarray::Array2;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use super::answers::BatchAnswers;
use super::backend::{BackendError, TensorBackend};
use super::evaluator::{
    EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, MoveValue, PositionOutcome, TopK,
};
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use super::screen::expect_shape;
use super::state_value::decided;
use crate::game::chess::ChessState;
use crate::game::fen::ModeChoice;
use crate::game::{GameKind, GameState};
use crate::lc0::history::History;
use crate::lc0::moves::move_index;
use crate::lc0::planes::{Fill, encode};
use crate::lc0::policy_index::POLICY_SIZE;
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::model::lc0_import::{INPUT, INPUT_WIDTH, MLH, POLICY, WDL};
use crate::model::manifest::Lc0Spec;
use crate::model::{ModelError, ModelPackage};

/// The games an lc0 network plays: chess and Chess960.
pub const GAMES: [GameKind; 2] = [GameKind::Chess, GameKind::Chess960];

/// The buckets a win/draw/loss split is spread over: an odd count, so that a draw has a bucket centred on ½.
pub const BUCKETS: u32 = crate::lc0::WDL_BUCKETS;

/// The history positions lc0 reads before the current one.
pub const HISTORY_READ: usize = 7;

/// An `lc0` package on one backend.
#[derive(Debug)]
pub struct Lc0Evaluator {
    backend: Box<dyn TensorBackend>,
    spec: Lc0Spec,
    buckets: Buckets,
    /// Summed time inside the backend's runs.
    pub model_time: Duration,
    /// The last position evaluated: its win/draw/loss and moves left (for an eval bar).
    pub last_position: Option<PositionValue>,
}

/// What the network says of a position itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionValue {
    /// Win, draw and loss for the side to move.
    pub wdl: [f32; 3],
    /// Moves left, when the net has the head.
    pub moves_left: Option<f32>,
}

/// The network's answer for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct NetOutput {
    /// The 1858 policy logits.
    pub policy: Vec<f32>,
    /// Win, draw, loss.
    pub wdl: [f32; 3],
    /// Moves left.
    pub moves_left: Option<f32>,
}

/// A chess position of a request as shakmaty's: the state itself when it is a [`ChessState`] (so nothing is
/// lost, e.g. an en-passant square whose capture a pin forbids, which lc0 still flags), else read from its
/// text.
fn chess_of<S: GameState>(s: &S) -> Result<Chess, EvalError> {
    if let Some(c) = (s as &dyn std::any::Any).downcast_ref::<ChessState>() {
        return Ok(c.position().clone());
    }
    let mode = if s.kind() == GameKind::Chess960 { ModeChoice::Chess960 } else { ModeChoice::Standard };
    ChessState::from_fen_mode(&s.to_text(), mode)
        .map(|c| c.position().clone())
        .map_err(|e| EvalError::Backend(format!("the position is not one lc0 can read: {e}")))
}

/// The distribution of a win/draw/loss split (see the module documentation).
pub fn wdl_distribution(buckets: Buckets, wdl: [f32; 3]) -> Result<ValueDistribution, EvalError> {
    let k = buckets.k() as usize;
    let clean: Vec<f64> = wdl.iter().map(|v| f64::from(*v).max(0.0)).collect();
    let sum: f64 = clean.iter().sum();
    if !(sum.is_finite() && sum > 0.0) || k < 2 {
        return Err(EvalError::Backend(format!("the network's win/draw/loss {wdl:?} is not a distribution")));
    }
    let (w, d, l) = (clean[0] / sum, clean[1] / sum, clean[2] / sum);
    let mut probs = vec![0.0; k];
    probs[0] += l;
    probs[k - 1] += w;
    probs[k / 2] += d;
    ValueDistribution::from_probs(buckets, probs).map_err(|e| EvalError::Backend(e.to_string()))
}

impl Lc0Evaluator {
    /// Opens the package's model.onnx.
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<Lc0Evaluator, SessionError> {
        let spec = Self::spec(package)?;
        Ok(Lc0Evaluator::with_backend(spec, OnnxBackend::boxed(package, options)?))
    }

    /// The package's mav.json `lc0` section.
    pub fn spec(package: &ModelPackage) -> Result<Lc0Spec, SessionError> {
        package.manifest.lc0.ok_or_else(|| {
            SessionError::Model(ModelError::Mismatch {
                dir: package.dir.clone(),
                field: "mav.json lc0".into(),
                expected: "the network's input format and heads (written by `mavboard import lc0`)".into(),
                found: "missing".into(),
            })
        })
    }

    /// The network `spec` describes on `backend`.
    pub fn with_backend(spec: Lc0Spec, backend: Box<dyn TensorBackend>) -> Lc0Evaluator {
        Lc0Evaluator {
            backend,
            spec,
            // BUCKETS is odd and above 2: a valid count.
            buckets: Buckets::new(BUCKETS).unwrap_or_default(),
            model_time: Duration::ZERO,
            last_position: None,
        }
    }

    /// Where the model runs.
    pub fn status(&self) -> &super::device::DeviceStatus {
        self.backend.status()
    }

    /// The input row of the last position of `history`.
    pub fn row(&self, history: &History) -> Option<([i64; INPUT_WIDTH], u8)> {
        encode(history, self.spec.input_format, Fill::FenOnly).map(|p| (p.row(), p.transform))
    }

    /// Runs the network on input rows.
    pub fn run(&mut self, rows: &[[i64; INPUT_WIDTH]]) -> Result<Vec<NetOutput>, EvalError> {
        let n = rows.len();
        let input = Array2::from_shape_fn((n, INPUT_WIDTH), |(r, c)| rows[r][c]);
        let mut names = vec![POLICY, WDL];
        if self.spec.moves_left {
            names.push(MLH);
        }
        let start = Instant::now();
        let out = self.backend.run(vec![(INPUT, input)], &names).map_err(BackendError::into_eval_error);
        self.model_time += start.elapsed();
        let out = out?;
        let (Some(policy), Some(wdl)) = (out.first(), out.get(1)) else {
            return Err(EvalError::Backend("the backend returned fewer outputs than asked".into()));
        };
        expect_shape(POLICY, policy.shape(), &[n, POLICY_SIZE])?;
        expect_shape(WDL, wdl.shape(), &[n, 3])?;
        let mlh = out.get(2);
        if let Some(m) = mlh {
            expect_shape(MLH, m.shape(), &[n, 1])?;
        }
        let policy =
            policy.as_slice().map(<[f32]>::to_vec).unwrap_or_else(|| policy.iter().copied().collect());
        let wdl: Vec<f32> = wdl.iter().copied().collect();
        let mlh: Option<Vec<f32>> = mlh.map(|m| m.iter().copied().collect());
        Ok((0..n)
            .map(|r| NetOutput {
                policy: policy[r * POLICY_SIZE..(r + 1) * POLICY_SIZE].to_vec(),
                wdl: [wdl[3 * r], wdl[3 * r + 1], wdl[3 * r + 2]],
                moves_left: mlh.as_ref().map(|m| m[r]),
            })
            .collect())
    }
}

/// How a legal move of a request is valued.
enum Source {
    Row(usize),
    Decided(ValueDistribution),
    /// Not at all: the request asked for the position only.
    Unvalued,
}

/// The request's move `a` on lc0's board `root` (the same position).
fn lc0_move<S: GameState>(state: &S, root: &Chess, a: S::Action) -> Result<shakmaty::Move, EvalError> {
    let text = state.action_to_text(a);
    text.parse::<UciMove>()
        .ok()
        .and_then(|u| u.to_move(root).ok())
        .ok_or_else(|| EvalError::Backend(format!("the move {text} does not read in lc0's board")))
}

/// One request of a batch that needs the network.
struct Job<A> {
    index: usize,
    root_row: usize,
    /// Each legal move: its action, its text, how it is valued and its policy output.
    moves: Vec<(A, Source, Option<usize>)>,
}

impl<S: GameState> Evaluator<S> for Lc0Evaluator {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = BatchAnswers::new(requests.len());
        let mut jobs: Vec<Job<S::Action>> = Vec::new();
        let mut rows: Vec<[i64; INPUT_WIDTH]> = Vec::new();
        for (i, r, actions) in out.screen(requests, "lc0", &GAMES) {
            match self.plan(r, actions, &mut rows) {
                Ok(job) => jobs.push(Job { index: i, ..job }),
                Err(e) => out[i] = Some(Err(e)),
            }
        }
        let queue = out.queue_time();
        let before = self.model_time;
        let outputs = if rows.is_empty() { Ok(Vec::new()) } else { self.run(&rows) };
        let share = (self.model_time - before) / u32::try_from(jobs.len().max(1)).unwrap_or(u32::MAX);
        for job in jobs {
            let req = &requests[job.index];
            let outputs = match &outputs {
                Ok(o) => o,
                Err(e) => {
                    out[job.index] = Some(Err(e.clone()));
                    continue;
                }
            };
            let index = job.index;
            out[index] = Some(self.answer(req, job, outputs, EvalTiming { queue, model: share, tokens: 0 }));
        }
        out.finish()
    }
}

impl Lc0Evaluator {
    /// The rows one request needs (its position, then each successor the rules do not end) and how each
    /// legal move is valued.
    fn plan<S: GameState>(
        &mut self,
        r: &EvalRequest<S>,
        actions: Vec<S::Action>,
        rows: &mut Vec<[i64; INPUT_WIDTH]>,
    ) -> Result<Job<S::Action>, EvalError> {
        // The positions lc0 shows (the last seven) and, for their repetition counts, those back to the last
        // capture or pawn move (inclusive) before the oldest of them.
        let mut positions = Vec::new();
        for s in r.history.iter().rev() {
            let p = chess_of(s)?;
            let zeroing = p.halfmoves() == 0;
            positions.push(p);
            if positions.len() >= HISTORY_READ && zeroing {
                break;
            }
        }
        positions.reverse();
        let root = chess_of(&r.state)?;
        positions.push(root.clone());
        let mut history = History::from_stretch(positions);
        let (root_row, transform) =
            self.row(&history).ok_or_else(|| EvalError::Backend("no position to encode".into()))?;
        let first = rows.len();
        rows.push(root_row);
        let mut moves = Vec::with_capacity(actions.len());
        for a in actions {
            if r.position_only {
                let m = lc0_move(&r.state, &root, a)?;
                moves.push((a, Source::Unvalued, move_index(&root, &m, transform)));
                continue;
            }
            let m = lc0_move(&r.state, &root, a)?;
            let policy = move_index(&root, &m, transform);
            let next = r
                .state
                .play(a)
                .map_err(|e| EvalError::Backend(format!("the rules' own move failed: {e}")))?;
            if let Some(outcome) = next.outcome() {
                let d = decided(self.buckets, &outcome, r.state.to_move())
                    .map_err(|e| EvalError::Backend(e.to_string()))?;
                moves.push((a, Source::Decided(d), policy));
                continue;
            }
            let mut after = root.clone();
            after.play_unchecked(m);
            history.push(after);
            let (row, _) =
                self.row(&history).ok_or_else(|| EvalError::Backend("no position to encode".into()))?;
            history.pop();
            moves.push((a, Source::Row(rows.len()), policy));
            rows.push(row);
        }
        Ok(Job { index: 0, root_row: first, moves })
    }

    fn answer<S: GameState>(
        &mut self,
        req: &EvalRequest<S>,
        job: Job<S::Action>,
        outputs: &[NetOutput],
        timing: EvalTiming,
    ) -> Result<EvalResult<S>, EvalError> {
        let root =
            outputs.get(job.root_row).ok_or_else(|| EvalError::Backend("missing output row".into()))?;
        self.last_position = Some(PositionValue { wdl: root.wdl, moves_left: root.moves_left });
        let mut valued = Vec::with_capacity(job.moves.len());
        let mut logits = Vec::with_capacity(job.moves.len());
        for (a, source, policy) in job.moves {
            let dist = match source {
                Source::Decided(d) => Some(d),
                Source::Row(row) => {
                    let o =
                        outputs.get(row).ok_or_else(|| EvalError::Backend("missing output row".into()))?;
                    // The successor's side to move is the opponent: its loss is the mover's win.
                    Some(wdl_distribution(self.buckets, [o.wdl[2], o.wdl[1], o.wdl[0]])?)
                }
                Source::Unvalued => None,
            };
            logits.push(policy.and_then(|p| root.policy.get(p).copied()).unwrap_or(f32::NEG_INFINITY));
            valued.push(MoveValue { action: a, text: req.state.action_to_text(a), dist });
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f64> = logits.iter().map(|l| f64::from(l - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        let probs: Vec<f64> = exps.iter().map(|e| if sum > 0.0 { e / sum } else { 0.0 }).collect();
        // Best first by mean value (by the policy when the moves are not valued), the policy's probabilities
        // kept in the same order.
        let mut order: Vec<usize> = (0..valued.len()).collect();
        if req.position_only {
            order.sort_by(|&x, &y| probs[y].total_cmp(&probs[x]));
        } else {
            order.sort_by(|&x, &y| MoveValue::by_mean_value(&valued[x], &valued[y]));
        }
        if !req.position_only
            && let TopK::Count(k) = req.top_k
        {
            order.truncate(k as usize);
        }
        let moves: Vec<MoveValue<S::Action>> = order.iter().map(|&i| valued[i].clone()).collect();
        let best: Vec<f64> = order.iter().map(|&i| probs[i]).collect();
        let wdl = root.wdl.map(f64::from);
        let sum: f64 = wdl.iter().sum();
        let position = (sum.is_finite() && sum > 0.0).then(|| {
            Box::new(PositionOutcome {
                wdl: wdl.map(|v| v / sum),
                moves_left: root.moves_left.map(f64::from),
            })
        });
        Ok(EvalResult { best_action: Some(best), timing, position, ..EvalResult::values(moves, None) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::evaluator::Scoring;

    #[test]
    fn wdl_becomes_three_masses_whose_mean_is_the_expected_score() {
        let b = Buckets::new(BUCKETS).expect("valid");
        let d = wdl_distribution(b, [0.5, 0.3, 0.2]).expect("a distribution");
        // ½ + (W − L)·(1/2 − 1/130).
        let expected = 0.5 + (0.5 - 0.2) * (0.5 - 1.0 / 130.0);
        assert!((d.mean_value() - expected).abs() < 1e-6, "{}", d.mean_value());
        assert_eq!(d.mode_bucket(), BUCKETS - 1, "a win is the most likely outcome");
        let drawish = wdl_distribution(b, [0.35, 0.4, 0.25]).expect("a distribution");
        assert_eq!(drawish.mode_bucket(), BUCKETS / 2, "a draw is the most likely outcome");
        assert!((Scoring::Max.value(&drawish) - 0.5).abs() < 1e-12);
        assert!(wdl_distribution(b, [f32::NAN, 0.0, 0.0]).is_err());
    }
}
