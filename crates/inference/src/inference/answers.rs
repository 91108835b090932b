//! The answers of one batch, as an evaluator finds them: some at screening (a request the model cannot
//! serve, a finished position), the rest from the model's run. Every evaluator's `evaluate` starts and ends
//! the same way — one slot per request, the batch's queue clock started, the requests screened, and at the
//! end a slot left empty answered as an error rather than dropped — and that is this type.

use std::ops::{Index, IndexMut};
use std::time::{Duration, Instant};

use super::evaluator::{EvalAnswer, EvalError, EvalRequest};
use super::screen::{Screened, screen_one_pass};
use crate::game::{GameKind, GameState};

/// One slot per request of a batch; `answers[i] = Some(answer)` fills request `i`'s.
#[derive(Debug)]
pub struct BatchAnswers<S: GameState> {
    slots: Vec<Option<EvalAnswer<S>>>,
    queued: Instant,
}

/// A request the model is needed for: its index in the batch, the request, and its legal moves.
pub type Screened1<'r, S> = (usize, &'r EvalRequest<S>, Vec<<S as GameState>::Action>);

impl<S: GameState> BatchAnswers<S> {
    /// `n` empty slots; the batch's queue time starts now.
    pub fn new(n: usize) -> BatchAnswers<S> {
        BatchAnswers { slots: vec![None; n], queued: Instant::now() }
    }

    /// How long the batch has waited since [`BatchAnswers::new`]: its queue time once the model is about to
    /// run.
    pub fn queue_time(&self) -> Duration {
        self.queued.elapsed()
    }

    /// Screens every request for a one-pass model of format `format` trained on `games`
    /// ([`screen_one_pass`]): those answered without the model get their answer here; the others are
    /// returned with their legal moves, in batch order.
    pub fn screen<'r>(
        &mut self,
        requests: &'r [EvalRequest<S>],
        format: &str,
        games: &[GameKind],
    ) -> Vec<Screened1<'r, S>> {
        let mut need = Vec::with_capacity(requests.len());
        for (i, r) in requests.iter().enumerate() {
            match screen_one_pass(r, format, games) {
                Screened::Answered(a) => self.slots[i] = Some(a),
                Screened::Moves(moves) => need.push((i, r, moves)),
            }
        }
        need
    }

    /// The answers in batch order; a slot nothing filled is an error that says so.
    pub fn finish(self) -> Vec<EvalAnswer<S>> {
        self.slots
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Err(EvalError::Backend("request was not evaluated".into()))))
            .collect()
    }
}

impl<S: GameState> Index<usize> for BatchAnswers<S> {
    type Output = Option<EvalAnswer<S>>;

    fn index(&self, i: usize) -> &Self::Output {
        &self.slots[i]
    }
}

impl<S: GameState> IndexMut<usize> for BatchAnswers<S> {
    fn index_mut(&mut self, i: usize) -> &mut Self::Output {
        &mut self.slots[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::connect_four::ConnectFourState;
    use crate::inference::evaluator::EvalResult;

    #[test]
    fn screening_answers_what_needs_no_model_and_an_empty_slot_is_an_error() {
        let start = ConnectFourState::new();
        let requests = vec![EvalRequest::values(start); 3];
        let mut answers = BatchAnswers::new(requests.len());
        // A chess-only model: every Connect Four request is refused at screening.
        assert!(answers.screen(&requests, "action-value", &[GameKind::Chess]).is_empty());
        assert!(answers[0].as_ref().is_some_and(|a| a.is_err()));
        let mut answers = BatchAnswers::new(requests.len());
        let need = answers.screen(&requests, "mav-encoder", &[GameKind::ConnectFour]);
        assert_eq!(need.iter().map(|(i, _, m)| (*i, m.len())).collect::<Vec<_>>(), [(0, 7), (1, 7), (2, 7)]);
        answers[1] = Some(Ok(EvalResult::values(Vec::new(), None)));
        let done = answers.finish();
        assert!(done[0].is_err() && done[1].is_ok() && done[2].is_err());
        assert!(done[2].as_ref().err().is_some_and(|e| e.to_string().contains("not evaluated")));
    }
}
