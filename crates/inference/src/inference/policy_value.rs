//! Two models as one evaluator, as AlphaZero splits its network's two heads: a *value* model values every
//! move and a *policy* model (a behavioural-cloning package, or any model with a best-action head) gives
//! each move's probability, which the answer carries as its `best_action`. MAV-MCTS with
//! [`crate::search::mcts::PriorSource::Policy`] then takes the policy as its prior and the values as what it
//! backs up. Both models see the same requests in one batch each; the policy's probabilities are matched to
//! the value model's moves by move, renormalised over them.

use std::collections::HashMap;

use super::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use crate::game::GameState;

/// A value model and a policy model answering as one (see the module documentation).
pub struct PolicyAndValue<S: GameState> {
    /// The model whose values the answers carry.
    pub value: Box<dyn Evaluator<S> + Send>,
    /// The model whose move probabilities the answers carry as `best_action`.
    pub policy: Box<dyn Evaluator<S> + Send>,
}

impl<S: GameState> std::fmt::Debug for PolicyAndValue<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyAndValue").finish_non_exhaustive()
    }
}

/// The value answer `v` with the policy answer `p`'s probabilities of its moves as `best_action`.
fn joined<S: GameState>(mut v: EvalResult<S>, p: &EvalResult<S>) -> Result<EvalResult<S>, EvalError> {
    if v.moves.is_empty() {
        return Ok(v);
    }
    let probs = p.best_action.as_ref().filter(|b| b.len() == p.moves.len()).ok_or_else(|| {
        EvalError::Unsupported {
            what: "give a policy".into(),
            why: "the policy model answered without move probabilities (a behavioral-cloning package, or a \
                  mav-encoder or mav-lm asked for its best action, gives them)"
                .into(),
        }
    })?;
    let by_action: HashMap<S::Action, f64> =
        p.moves.iter().map(|m| m.action).zip(probs.iter().copied()).collect();
    let listed: Vec<f64> = v.moves.iter().map(|m| by_action.get(&m.action).copied().unwrap_or(0.0)).collect();
    let sum: f64 = listed.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return Err(EvalError::Backend(
            "the policy model gave none of the valued moves a probability".into(),
        ));
    }
    v.best_action = Some(listed.iter().map(|x| x / sum).collect());
    v.timing.model += p.timing.model;
    Ok(v)
}

impl<S: GameState> Evaluator<S> for PolicyAndValue<S> {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let for_values: Vec<EvalRequest<S>> =
            requests.iter().map(|r| EvalRequest { want_best_action: false, ..r.clone() }).collect();
        let for_policy: Vec<EvalRequest<S>> =
            requests.iter().map(|r| EvalRequest { want_best_action: true, ..r.clone() }).collect();
        let values = self.value.evaluate(&for_values);
        let policies = self.policy.evaluate(&for_policy);
        values
            .into_iter()
            .zip(policies)
            .map(|(v, p)| match (v, p) {
                (Ok(v), Ok(p)) => joined(v, &p),
                (Err(e), _) => Err(e),
                (Ok(_), Err(e)) => Err(EvalError::Backend(format!("the policy model failed: {e}"))),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::material::MaterialEvaluator;

    /// The material evaluator's answers with a policy that gives the first listed move everything.
    struct FirstMove;

    impl Evaluator<ChessState> for FirstMove {
        fn evaluate(
            &mut self,
            requests: &[EvalRequest<ChessState>],
        ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
            let mut out = MaterialEvaluator::new(5).evaluate(requests);
            for r in out.iter_mut().flatten() {
                let mut p = vec![0.0; r.moves.len()];
                if let Some(first) = p.first_mut() {
                    *first = 1.0;
                }
                r.best_action = Some(p);
                r.moves.iter_mut().for_each(|m| m.dist = None);
            }
            out
        }
    }

    #[test]
    fn values_from_one_model_and_the_policy_from_the_other() {
        let mut both = PolicyAndValue::<ChessState> {
            value: Box::new(MaterialEvaluator::new(1)),
            policy: Box::new(FirstMove),
        };
        let start = ChessState::startpos();
        let r = both.evaluate(&[EvalRequest::values(start.clone())]).remove(0).expect("answers");
        assert!(r.has_values() && r.moves.len() == 20);
        let favourite =
            FirstMove.evaluate(&[EvalRequest::values(start)]).remove(0).expect("ok").moves[0].action;
        let p = r.best_action.expect("the policy");
        for (m, p) in r.moves.iter().zip(&p) {
            assert_eq!(*p, if m.action == favourite { 1.0 } else { 0.0 }, "{}", m.text);
        }
        // A "policy" model without probabilities is refused by name.
        let mut no_policy = PolicyAndValue::<ChessState> {
            value: Box::new(MaterialEvaluator::new(1)),
            policy: Box::new(MaterialEvaluator::new(2)),
        };
        let err = no_policy.evaluate(&[EvalRequest::values(ChessState::startpos())]).remove(0);
        assert!(err.expect_err("no policy").to_string().contains("without move probabilities"));
    }
}
