//! [`MaterialNet`]: a chess evaluator that answers as an lc0 network answers, without a network — the
//! position's own win/draw/loss (from material), a policy over the legal moves (captures of more material
//! first), and each move's value from the position after it — so that the search lc0 runs can be tested
//! where what it must choose is known.

use shakmaty::Position;

use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{
    EvalError, EvalRequest, EvalResult, Evaluator, MoveValue, PositionOutcome,
};
use crate::inference::lc0::{BUCKETS, wdl_distribution};
use crate::inference::material::material_balance;
use crate::inference::synthetic::mix;
use crate::mav::buckets::{Buckets, win_prob_from_cp};

/// The network stand-in. Its answers depend on the position and `seed` only.
#[derive(Debug, Clone, Default)]
pub struct MaterialNet {
    /// The seed of the small noise on values and logits.
    pub seed: u64,
    /// Positions it has valued (what a network counts as rows): one per request asking for the position
    /// only, one plus one per move otherwise.
    pub rows: u64,
}

impl MaterialNet {
    /// A stand-in with this noise seed.
    pub fn new(seed: u64) -> MaterialNet {
        MaterialNet { seed, rows: 0 }
    }

    /// Win, draw and loss for the side to move: Lichess's win probability of the material balance (100
    /// centipawns a pawn, a few of seeded noise), a draw share that shrinks as the balance grows.
    pub fn wdl(&self, state: &ChessState) -> [f64; 3] {
        let noise = (mix(self.seed ^ state.hash64()) % 21) as f64 - 10.0;
        let p = win_prob_from_cp(100.0 * f64::from(material_balance(state, state.position().turn())) + noise);
        let d = 0.4 * (1.0 - (2.0 * p - 1.0).abs());
        [p - d / 2.0, d, 1.0 - p - d / 2.0]
    }

    /// The policy's logit of `action`: the captured piece's value (pawns), half a pawn for a check, and up
    /// to 0.3 of seeded noise.
    pub fn logit(&self, state: &ChessState, action: shakmaty::Move) -> f64 {
        let victim = action.capture().map_or(0.0, |r| match r {
            shakmaty::Role::Pawn => 1.0,
            shakmaty::Role::Knight | shakmaty::Role::Bishop => 3.0,
            shakmaty::Role::Rook => 5.0,
            shakmaty::Role::Queen => 9.0,
            shakmaty::Role::King => 0.0,
        });
        let check = state.play(action).map_or(0.0, |s| if s.position().is_check() { 0.5 } else { 0.0 });
        let text = state.action_to_text(action);
        let h = text.bytes().fold(self.seed ^ state.hash64(), |h, b| mix(h ^ u64::from(b)));
        victim + check + 0.3 * (h % 1000) as f64 / 1000.0
    }

    fn answer(&mut self, r: &EvalRequest<ChessState>) -> Result<EvalResult<ChessState>, EvalError> {
        let actions = r.state.legal_actions();
        if actions.is_empty() {
            return Ok(EvalResult::values(Vec::new(), r.state.outcome()));
        }
        self.rows += 1;
        let buckets = Buckets::new(BUCKETS).map_err(|e| EvalError::Backend(e.to_string()))?;
        let logits: Vec<f64> = actions.iter().map(|&a| self.logit(&r.state, a)).collect();
        let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        let mut moves = Vec::with_capacity(actions.len());
        for &a in &actions {
            let dist = if r.position_only {
                None
            } else {
                let after = r.state.play(a).map_err(|e| EvalError::Backend(e.to_string()))?;
                self.rows += 1;
                let [w, d, l] = self.wdl(&after);
                // The position after the move is the opponent's: its loss is the mover's win.
                Some(wdl_distribution(buckets, [l as f32, d as f32, w as f32])?)
            };
            moves.push(MoveValue { action: a, text: r.state.action_to_text(a), dist });
        }
        Ok(EvalResult {
            best_action: Some(exps.iter().map(|e| e / sum).collect()),
            position: Some(Box::new(PositionOutcome { wdl: self.wdl(&r.state), moves_left: None })),
            ..EvalResult::values(moves, None)
        })
    }
}

impl Evaluator<ChessState> for MaterialNet {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        requests.iter().map(|r| self.answer(r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_an_lc0_network_does() {
        let mut net = MaterialNet::new(3);
        // White to move can take a queen with the pawn.
        let s = ChessState::from_fen("rnb1kbnr/pppp1ppp/8/4q3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 3")
            .expect("fen");
        let full = net.evaluate(&[EvalRequest::values(s.clone())]).remove(0).expect("answer");
        assert_eq!(net.rows, 1 + full.moves.len() as u64);
        let policy = full.best_action.clone().expect("a policy");
        assert!((policy.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let top = policy.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i).expect("moves");
        assert_eq!(full.moves[top].text, "d4e5", "the policy takes the queen");
        assert!(full.has_values());
        let wdl = full.position.expect("an outcome").wdl;
        assert!((wdl.iter().sum::<f64>() - 1.0).abs() < 1e-12 && wdl[0] > wdl[2], "white is a pawn up");
        let only = EvalRequest { position_only: true, ..EvalRequest::values(s) };
        let brief = net.evaluate(&[only]).remove(0).expect("answer");
        assert!(!brief.has_values());
        assert_eq!(brief.best_action, full.best_action);
        assert_eq!(net.rows, 2 + full.moves.len() as u64, "the position only: one row");
    }
}
