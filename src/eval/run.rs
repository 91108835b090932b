//! `mavboard eval`: a model against Stockfish labels and Lichess puzzles (the measures of Ruoss et al. and
//! the MAV paper's Table 3), for max and mean scoring.

use serde::Serialize;

use super::metrics::{Mean, kendall_tau};
use super::puzzles::{Puzzle, solve};
use crate::datagen::record::LabelRecord;
use crate::datagen::render::label_state;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, Scoring};

/// Measures under one scoring.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScoredMetrics {
    /// The model's best move (by this scoring) is Stockfish's best move.
    pub action_accuracy: Mean,
    /// Kendall's τ between the model's move values and Stockfish's, per position, averaged.
    pub kendall_tau: Mean,
    /// Mean absolute error of each move's win probability.
    pub win_prob_mae: Mean,
}

/// Measures of one group of labelled positions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LabelMetrics {
    /// Positions evaluated.
    pub positions: u64,
    /// Max scoring.
    pub max: ScoredMetrics,
    /// Mean scoring.
    pub mean: ScoredMetrics,
    /// Free decoding (text models only): precision of the moves written (legal / written).
    pub free_legal_precision: Mean,
    /// Free decoding: recall of the legal moves (written / legal), for `%top_all`.
    pub free_legal_recall: Mean,
    /// Free decoding: the written `%best_action` is legal.
    pub free_best_legal: Mean,
    /// Free decoding: the predicted state after the best action equals the rules' state.
    pub free_next_state_correct: Mean,
    /// Free decoding: requests whose output yielded nothing usable at all.
    pub free_failures: u64,
}

impl LabelMetrics {
    /// F1 of free decoding's legal-move precision and recall.
    pub fn free_legal_f1(&self) -> Option<f64> {
        let (p, r) = (self.free_legal_precision.mean, self.free_legal_recall.mean);
        (self.free_legal_precision.count > 0 && p + r > 0.0).then(|| 2.0 * p * r / (p + r))
    }
}

/// Measures on puzzles.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PuzzleMetrics {
    /// Puzzles tried.
    pub puzzles: u64,
    /// Solved with max scoring.
    pub max: Mean,
    /// Solved with mean scoring.
    pub mean: Mean,
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvalReport {
    /// Positions from real games (source `game:…`).
    pub game_positions: LabelMetrics,
    /// Positions from opening books and their continuations.
    pub book_positions: LabelMetrics,
    /// Puzzles.
    pub puzzles: Option<PuzzleMetrics>,
    /// Why free-decoding measures are absent, if they are.
    pub free_note: Option<String>,
}

fn best_by(result: &EvalResult<ChessState>, scoring: Scoring) -> Option<(shakmaty::Move, f64)> {
    result.moves.iter().map(|m| (m.action, scoring.value(&m.dist))).max_by(|a, b| a.1.total_cmp(&b.1))
}

fn score_label(
    rec: &LabelRecord,
    state: &ChessState,
    result: &EvalResult<ChessState>,
    scoring: Scoring,
    out: &mut ScoredMetrics,
) {
    let mut model = Vec::new();
    let mut truth = Vec::new();
    for m in &result.moves {
        let text = state.action_to_text(m.action);
        if let Some(l) = rec.moves.iter().find(|l| l.uci == text) {
            let wp = l.score.win_probability();
            let v = scoring.value(&m.dist);
            model.push(v);
            truth.push(wp);
            out.win_prob_mae.add((v - wp).abs());
        }
    }
    if let Some(t) = kendall_tau(&model, &truth) {
        out.kendall_tau.add(t);
    }
    if let Some((best, _)) = best_by(result, scoring) {
        out.action_accuracy.hit(state.action_to_text(best) == rec.best);
    }
}

fn score_free(state: &ChessState, r: &EvalResult<ChessState>, out: &mut LabelMetrics) {
    let legal = state.legal_actions().len();
    let written = r.moves.len() + r.hallucinations.iter().filter(|h| h.kind.contains("illegal")).count();
    if written == 0 && r.best_action.is_none() && r.next_state.is_none() {
        out.free_failures += 1;
    }
    if written > 0 {
        out.free_legal_precision.add(r.moves.len() as f64 / written as f64);
    }
    if legal > 0 {
        out.free_legal_recall.add(r.moves.len().min(legal) as f64 / legal as f64);
    }
    let best = r
        .best_action
        .as_ref()
        .and_then(|b| b.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).map(|(i, _)| i))
        .and_then(|i| r.moves.get(i));
    out.free_best_legal.hit(best.is_some());
    if let Some(b) = best {
        let truth = state.play(b.action).ok().map(|s| s.hash64());
        let predicted = r.next_state.as_ref().and_then(|n| n.state.as_ref()).map(GameState::hash64);
        out.free_next_state_correct.hit(truth.is_some() && truth == predicted);
    }
}

/// Evaluates `evaluator` on labelled positions (validation records only), in batches of `batch`.
/// `progress` is called with the number of positions done.
pub fn eval_labels(
    evaluator: &mut dyn Evaluator<ChessState>,
    labels: &[LabelRecord],
    batch: usize,
    report: &mut EvalReport,
    mut progress: impl FnMut(u64),
) -> Result<(), EvalError> {
    let mut free_supported = true;
    let mut done = 0u64;
    for chunk in labels.chunks(batch.max(1)) {
        let mut states = Vec::with_capacity(chunk.len());
        let mut recs = Vec::with_capacity(chunk.len());
        for rec in chunk {
            if let Ok(s) = label_state(rec) {
                states.push(s);
                recs.push(rec);
            }
        }
        let requests: Vec<_> = states.iter().cloned().map(EvalRequest::values).collect();
        let results = evaluator.evaluate(&requests);
        let free_results = if free_supported {
            let free: Vec<_> = states
                .iter()
                .cloned()
                .map(|s| {
                    let mut r = EvalRequest::values(s);
                    r.mode = DecodeMode::Free;
                    r.want_best_action = true;
                    r.want_next_state = true;
                    r
                })
                .collect();
            let out = evaluator.evaluate(&free);
            if let Some(Err(EvalError::Unsupported { why, .. })) = out.first() {
                free_supported = false;
                report.free_note = Some(why.clone());
                None
            } else {
                Some(out)
            }
        } else {
            None
        };
        for (i, (rec, state)) in recs.iter().zip(&states).enumerate() {
            let group = if rec.source.starts_with("game:") {
                &mut report.game_positions
            } else {
                &mut report.book_positions
            };
            let result = match &results[i] {
                Ok(r) => r,
                Err(EvalError::Backend(e)) => return Err(EvalError::Backend(e.clone())),
                Err(_) => continue,
            };
            group.positions += 1;
            score_label(rec, state, result, Scoring::Max, &mut group.max);
            score_label(rec, state, result, Scoring::Mean, &mut group.mean);
            if let Some(Ok(fr)) = free_results.as_ref().map(|f| &f[i]) {
                score_free(state, fr, group);
            }
        }
        done += chunk.len() as u64;
        progress(done);
    }
    Ok(())
}

/// Tries every puzzle with max and with mean scoring.
pub fn eval_puzzles(
    evaluator: &mut dyn Evaluator<ChessState>,
    puzzles: &[Puzzle],
    mut progress: impl FnMut(u64),
) -> Result<PuzzleMetrics, EvalError> {
    let mut m = PuzzleMetrics::default();
    for (n, p) in puzzles.iter().enumerate() {
        let mut outcome = [false; 2];
        for (slot, scoring) in [Scoring::Max, Scoring::Mean].into_iter().enumerate() {
            let solved = solve(p, |s: &ChessState| {
                let r = evaluator.evaluate(&[EvalRequest::values(s.clone())]).remove(0)?;
                Ok(best_by(&r, scoring).map(|b| b.0))
            });
            match solved {
                Ok(Ok(ok)) => outcome[slot] = ok,
                Ok(Err(e)) => return Err(e),
                Err(_) => continue,
            }
        }
        m.puzzles += 1;
        m.max.hit(outcome[0]);
        m.mean.hit(outcome[1]);
        progress(n as u64 + 1);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::mock::MaterialEvaluator;

    #[test]
    fn material_mock_solves_some_puzzles_and_scores_labels() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puzzles/lichess-puzzles-dev.csv");
        let ps = super::super::puzzles::read_puzzles(&path).expect("reads");
        let mut e = MaterialEvaluator::new(1);
        let m = eval_puzzles(&mut e, &ps[..60], |_| {}).expect("runs");
        assert_eq!(m.puzzles, 60);
        // A one-ply material counter wins some material puzzles, not all.
        assert!(m.max.mean > 0.0 && m.max.mean < 1.0, "{m:?}");
    }
}
