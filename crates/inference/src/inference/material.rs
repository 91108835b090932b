//! A chess evaluator without a model that values material: what `mavboard uci --mock` plays with, and a
//! known opponent for tests and benches.

use shakmaty::{Color, Position};

use crate::game::GameState;
use crate::game::chess::ChessState;
#[cfg(test)]
use crate::inference::evaluator::Scoring;
use crate::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use crate::inference::synthetic::{MoveValuer, answer, mix};
use crate::mav::buckets::{Buckets, win_prob_from_cp};

/// Chess values from material after the move (P 1, N 3, B 3, R 5, Q 9; 100 cp per pawn, Lichess win
/// probability) plus a few centipawns of seeded noise. Knows nothing about mates.
#[derive(Debug, Clone)]
pub struct MaterialEvaluator {
    /// The noise seed.
    pub seed: u64,
    /// The bucket set of the distributions.
    pub buckets: Buckets,
    /// If > 0, about one in this many predicted states is unreadable (a hallucination); 0 = never.
    pub break_every: u64,
    /// Requests answered so far.
    pub calls: u64,
}

impl MaterialEvaluator {
    /// A material evaluator with 64 buckets that never breaks.
    pub fn new(seed: u64) -> MaterialEvaluator {
        MaterialEvaluator { seed, buckets: Buckets::mav(), break_every: 0, calls: 0 }
    }
}

struct MaterialValuer(u64);

/// Material of `color` minus the opponent's, in pawns.
pub fn material_balance(state: &ChessState, color: Color) -> i32 {
    let value = |c: Color| {
        let m = state.position().board().material_side(c);
        i32::from(m.pawn)
            + 3 * i32::from(m.knight)
            + 3 * i32::from(m.bishop)
            + 5 * i32::from(m.rook)
            + 9 * i32::from(m.queen)
    };
    value(color) - value(color.other())
}

impl MoveValuer<ChessState> for MaterialValuer {
    fn value(&self, state: &ChessState, action: shakmaty::Move) -> f64 {
        let mover = state.position().turn();
        let Ok(after) = state.play(action) else { return 0.0 };
        let noise = (mix(self.0 ^ after.hash64()) % 21) as f64 - 10.0;
        win_prob_from_cp(100.0 * f64::from(material_balance(&after, mover)) + noise)
    }
}

impl Evaluator<ChessState> for MaterialEvaluator {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        self.calls += requests.len() as u64;
        let v = MaterialValuer(self.seed);
        requests.iter().map(|r| answer(&v, self.seed, self.break_every, self.buckets, r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_is_level() {
        let mut m = MaterialEvaluator::new(1);
        let r = m.evaluate(&[EvalRequest::values(ChessState::startpos())]);
        let Ok(r) = &r[0] else { panic!("material evaluator failed") };
        assert_eq!(r.moves.len(), 20);
        for mv in &r.moves {
            let mean = mv.value(Scoring::Mean).expect("valued");
            assert!((mean - 0.5).abs() < 0.03, "{}: {mean}", mv.text);
        }
    }
}
