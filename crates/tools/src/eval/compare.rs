//! Two models on one position, move by move: each move's value under a scoring rule from model A and from
//! model B, their ranks, and a mark where they disagree — on the best move, or on a move's value by more
//! than a margin. Moves are matched by their text, so a move only one model valued is listed with the
//! other's side empty. A model without values (a behavioural-cloning policy) takes part by its probabilities:
//! its ranks and best move are compared, its numbers are not set against a value (no gap, no margin). The
//! one comparison behind `mavboard analyse --compare`.

use serde::Serialize;

use crate::game::GameState;
use crate::inference::evaluator::EvalResult;
use crate::mav::scoring::Scoring;

/// The margin used when none is given: five points of win probability.
pub const DEFAULT_MARGIN: f64 = 0.05;

/// One move as two models see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MoveComparison {
    /// The move (its text in the game's notation).
    #[serde(rename = "move")]
    pub text: String,
    /// Model A's value under the scoring rule, or its policy's probability where A has no values (`None`: A
    /// did not list the move).
    pub a: Option<f64>,
    /// Model B's value (or probability).
    pub b: Option<f64>,
    /// The move's rank among A's moves, 1 for A's best.
    pub rank_a: Option<usize>,
    /// The move's rank among B's moves.
    pub rank_b: Option<usize>,
    /// B's value less A's, where both valued the move (both are value models).
    pub gap: Option<f64>,
    /// The models disagree on this move: it is one model's best and not the other's, its values differ by
    /// more than the margin, or only one model valued it.
    pub disagree: bool,
}

/// Two models' values for one position's moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The rule both sides are valued under.
    pub scoring: String,
    /// The largest value gap that is not a disagreement.
    pub margin: f64,
    /// Whether A's numbers are values (else a policy's probabilities).
    pub a_values: bool,
    /// Whether B's numbers are values.
    pub b_values: bool,
    /// Every move either model valued: A's order first (best first), then moves only B valued.
    pub moves: Vec<MoveComparison>,
    /// A's best move.
    pub best_a: Option<String>,
    /// B's best move.
    pub best_b: Option<String>,
    /// Whether the two best moves differ.
    pub best_differs: bool,
}

/// The rank of each of `values` (1 = highest; ties keep their order).
pub fn ranks(values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let mut r = vec![0; values.len()];
    for (pos, &i) in order.iter().enumerate() {
        r[i] = pos + 1;
    }
    r
}

/// Each move's value, with its rank, best first.
fn ranked(values: &[(String, f64)]) -> Vec<(String, f64, usize)> {
    let just: Vec<f64> = values.iter().map(|m| m.1).collect();
    let mut out: Vec<(String, f64, usize)> =
        values.iter().zip(ranks(&just)).map(|((text, v), r)| (text.clone(), *v, r)).collect();
    out.sort_by_key(|m| m.2);
    out
}

/// One model's numbers for a position's moves: values under a scoring rule, or a policy's probabilities.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Each move (text) and its number, in any order.
    pub moves: Vec<(String, f64)>,
    /// Whether the numbers are values (win probabilities); `false`: a policy's probabilities.
    pub values: bool,
}

impl Scored {
    /// Each move of an answer with its value under `scoring` (or its probability, from a model without
    /// values), in the answer's order.
    pub fn of<S: GameState>(result: &EvalResult<S>, scoring: Scoring) -> Scored {
        let moves = result
            .moves
            .iter()
            .zip(result.ranking_scores(scoring))
            .filter_map(|(m, v)| v.map(|v| (m.text.clone(), v)))
            .collect();
        Scored { moves, values: result.has_values() }
    }
}

/// Compares model A's answer `a` with model B's answer `b` for the same position under `scoring`;
/// `margin` (win probability, 0 to 1) is the largest gap that is not marked.
pub fn compare<S: GameState>(
    a: &EvalResult<S>,
    b: &EvalResult<S>,
    scoring: Scoring,
    margin: f64,
) -> Comparison {
    compare_values(&Scored::of(a, scoring), &Scored::of(b, scoring), scoring, margin)
}

/// [`compare`] on numbers already taken under `scoring`. The app compares the panel's rows with the
/// second model's answer through this.
pub fn compare_values(a: &Scored, b: &Scored, scoring: Scoring, margin: f64) -> Comparison {
    let both_values = a.values && b.values;
    let ra = ranked(&a.moves);
    let rb = ranked(&b.moves);
    let best_a = ra.first().map(|m| m.0.clone());
    let best_b = rb.first().map(|m| m.0.clone());
    let mut moves: Vec<MoveComparison> = ra
        .iter()
        .map(|(text, va, rank_a)| {
            let other = rb.iter().find(|m| &m.0 == text);
            MoveComparison {
                text: text.clone(),
                a: Some(*va),
                b: other.map(|m| m.1),
                rank_a: Some(*rank_a),
                rank_b: other.map(|m| m.2),
                gap: other.filter(|_| both_values).map(|m| m.1 - va),
                disagree: false,
            }
        })
        .collect();
    for (text, vb, rank_b) in &rb {
        if !moves.iter().any(|m| &m.text == text) {
            moves.push(MoveComparison {
                text: text.clone(),
                a: None,
                b: Some(*vb),
                rank_a: None,
                rank_b: Some(*rank_b),
                gap: None,
                disagree: false,
            });
        }
    }
    for m in &mut moves {
        let best_of_one = (m.rank_a == Some(1)) != (m.rank_b == Some(1));
        let listed_by_one = m.rank_a.is_none() || m.rank_b.is_none();
        let apart = m.gap.is_some_and(|g| g.abs() > margin);
        m.disagree = best_of_one || listed_by_one || apart;
    }
    Comparison {
        scoring: scoring.to_string(),
        margin,
        a_values: a.values,
        b_values: b.values,
        best_differs: best_a != best_b,
        moves,
        best_a,
        best_b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::evaluator::{EvalRequest, Evaluator};
    use crate::search::mock::MaterialEvaluator;

    fn answer(seed: u64, fen: &str) -> EvalResult<ChessState> {
        let state = ChessState::from_fen(fen).expect("fen");
        MaterialEvaluator::new(seed).evaluate(&[EvalRequest::values(state)]).remove(0).expect("valued")
    }

    const HANGING: &str = "rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";

    #[test]
    fn a_model_against_itself_agrees_everywhere() {
        let a = answer(1, HANGING);
        let c = compare(&a, &a, Scoring::Mean, DEFAULT_MARGIN);
        assert_eq!(c.moves.len(), a.moves.len());
        assert!(!c.best_differs && c.best_a.is_some());
        assert!(c.moves.iter().all(|m| !m.disagree && m.gap == Some(0.0) && m.rank_a == m.rank_b));
        assert_eq!(c.moves[0].rank_a, Some(1), "A's order, best first");
    }

    #[test]
    fn gaps_beyond_the_margin_and_a_different_best_move_are_marked() {
        let a = answer(1, HANGING);
        let b = answer(7, HANGING);
        let c = compare(&a, &b, Scoring::Mean, 0.0);
        for m in &c.moves {
            let gap = m.gap.expect("both value every legal move");
            let one_best = (m.rank_a == Some(1)) != (m.rank_b == Some(1));
            assert_eq!(m.disagree, gap.abs() > 0.0 || one_best, "{m:?}");
        }
        assert!(c.moves.iter().any(|m| m.disagree), "two seeds' noise sets some values apart");
        // A huge margin leaves only the best-move disagreement, if any.
        let loose = compare(&a, &b, Scoring::Mean, 1.0);
        let marked: Vec<&MoveComparison> = loose.moves.iter().filter(|m| m.disagree).collect();
        assert_eq!(marked.is_empty(), !loose.best_differs, "{marked:?}");
        // Nxh4 takes the queen: both material evaluators rank it first whatever their noise.
        assert_eq!((c.best_a.as_deref(), c.best_b.as_deref()), (Some("f3h4"), Some("f3h4")));
    }

    #[test]
    fn a_move_only_one_model_valued_is_listed_and_marked() {
        let a = answer(1, HANGING);
        let mut b = a.clone();
        let dropped = b.moves.pop().expect("a move");
        let c = compare(&a, &b, Scoring::Max, DEFAULT_MARGIN);
        let m = c.moves.iter().find(|m| m.text == dropped.text).expect("still listed");
        assert!(m.b.is_none() && m.rank_b.is_none() && m.disagree);
        let c = compare(&b, &a, Scoring::Max, DEFAULT_MARGIN);
        let last = c.moves.last().expect("moves");
        assert_eq!((last.text.as_str(), last.a, last.disagree), (dropped.text.as_str(), None, true));
    }
}
