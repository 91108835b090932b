//! The `state-value` evaluator (Ruoss et al. 2024, the state-value predictor): the model values a
//! position, not a move — one row of the 77 state tokens of a FEN, 128 (mav.json's `num_buckets`) value
//! logits for the player to move there. A move is valued as the authors' `StateValueEngine` values it, by
//! a search of depth one: the successor after the move, its distribution flipped (bucket i ↔ K − 1 − i,
//! the opponent's win probability turned into the mover's). Every successor of every request of a batch
//! goes into one model call. A successor that the rules end (mate, stalemate, insufficient material,
//! fifty moves) is not shown to the model: it is valued from its outcome — all mass on the top bucket for
//! a mate, on the two middle buckets for a draw. As for action-value, there is no policy head
//! (`best_action` stays `None`, the moves come best first by mean value) and free decoding or state
//! prediction is refused.

use std::time::Duration;

use ndarray::Array2;

use super::answers::BatchAnswers;
use super::backend::TensorBackend;
use super::evaluator::{EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, MoveValue, TopK};
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use crate::game::{GameKind, GameState, Outcome};
use crate::mav::buckets::{BucketError, Buckets, ValueDistribution};
use crate::mav::searchless::{STATE_LEN, tokenize_fen};
use crate::model::ModelPackage;

/// The games a state-value model values: chess, standard or Chess960 (as for action-value, the FEN carries
/// the castling rights either way). Requests of any other game are refused by name.
pub const GAMES: [GameKind; 2] = [GameKind::Chess, GameKind::Chess960];

/// A `state-value` model on one backend.
#[derive(Debug)]
pub struct StateValueEvaluator {
    backend: Box<dyn TensorBackend>,
    buckets: Buckets,
    /// Summed time inside the backend's runs.
    pub model_time: Duration,
}

/// How one legal move is valued: by the model (its successor's row) or by the rules (the game ended).
enum Source {
    Row(usize),
    Decided(ValueDistribution),
}

/// A request of a batch that needs the model: its index, and its legal moves with how each is valued.
type Job<S> = (usize, Vec<(<S as GameState>::Action, Source)>);

impl StateValueEvaluator {
    /// Opens the package's model.onnx (its graph is checked against mav.json when the session opens).
    pub fn open(
        package: &ModelPackage,
        options: &SessionOptions,
    ) -> Result<StateValueEvaluator, SessionError> {
        Self::with_backend(package, || OnnxBackend::boxed(package, options))
    }

    /// The package's model on the backend `open_backend` opens once mav.json is checked.
    pub fn with_backend(
        package: &ModelPackage,
        open_backend: impl FnOnce() -> Result<Box<dyn TensorBackend>, SessionError>,
    ) -> Result<StateValueEvaluator, SessionError> {
        let length = package.manifest.av_state_length;
        if length != Some(STATE_LEN) {
            let found = format!("{length:?}");
            return Err(package.mismatch("mav.json av_state_length", STATE_LEN.to_string(), found).into());
        }
        let buckets = package.buckets()?;
        let backend = open_backend()?;
        Ok(StateValueEvaluator { backend, buckets, model_time: Duration::ZERO })
    }

    /// Where the model runs.
    pub fn status(&self) -> &super::device::DeviceStatus {
        self.backend.status()
    }

    fn run(&mut self, ids: Array2<i64>) -> Result<Array2<f32>, EvalError> {
        super::backend::run_logits(
            self.backend.as_mut(),
            &mut self.model_time,
            ids,
            self.buckets.k() as usize,
        )
    }
}

/// The distribution of a move whose successor the rules end, for the player who made it: a win all on the
/// top bucket, a loss on the bottom one, a draw split between the two middle buckets (its mean is ½; with
/// an odd K, all on the middle bucket).
pub fn decided(
    buckets: Buckets,
    outcome: &Outcome,
    mover: crate::game::Player,
) -> Result<ValueDistribution, BucketError> {
    let k = buckets.k();
    match outcome {
        Outcome::Win { winner, .. } => {
            ValueDistribution::one_hot(buckets, if *winner == mover { k - 1 } else { 0 })
        }
        Outcome::Draw { .. } if k.is_multiple_of(2) => {
            let mut probs = vec![0.0; k as usize];
            probs[(k / 2 - 1) as usize] = 0.5;
            probs[(k / 2) as usize] = 0.5;
            ValueDistribution::from_probs(buckets, probs)
        }
        Outcome::Draw { .. } => ValueDistribution::one_hot(buckets, k / 2),
    }
}

/// Generic over the game, as the action-value evaluator: the input is the successors' text (FENs), and
/// requests of a game outside [`GAMES`] are refused by name.
impl<S: GameState> Evaluator<S> for StateValueEvaluator {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = BatchAnswers::new(requests.len());
        // (request, its legal moves and how each is valued).
        let mut jobs: Vec<Job<S>> = Vec::new();
        let mut rows: Vec<Vec<u32>> = Vec::new();
        for (i, r, moves) in out.screen(requests, "state-value", &GAMES) {
            match self.sources(r, moves, &mut rows) {
                Ok(sources) => jobs.push((i, sources)),
                Err(e) => out[i] = Some(Err(e)),
            }
        }
        let queue = out.queue_time();
        let before = self.model_time;
        let logits = if rows.is_empty() {
            Ok(Array2::zeros((0, self.buckets.k() as usize)))
        } else {
            let ids = Array2::from_shape_fn((rows.len(), STATE_LEN), |(r, j)| i64::from(rows[r][j]));
            self.run(ids)
        };
        // Each request's share of the one model call.
        let share = (self.model_time - before) / u32::try_from(jobs.len().max(1)).unwrap_or(u32::MAX);
        for (i, sources) in jobs {
            out[i] = Some(match &logits {
                Ok(l) => self.answer(&requests[i], sources, l, EvalTiming { queue, model: share, tokens: 0 }),
                Err(e) => Err(e.clone()),
            });
        }
        out.finish()
    }
}

impl StateValueEvaluator {
    /// How each legal move of request `r` is valued: a successor the rules end from its outcome, the others
    /// by the model, their rows appended to `rows` (none kept when the request fails).
    fn sources<S: GameState>(
        &self,
        r: &EvalRequest<S>,
        moves: Vec<S::Action>,
        rows: &mut Vec<Vec<u32>>,
    ) -> Result<Vec<(S::Action, Source)>, EvalError> {
        let first = rows.len();
        let mut sources = Vec::with_capacity(moves.len());
        let mut failed = None;
        for a in moves {
            let next = match r.state.play(a) {
                Ok(n) => n,
                Err(e) => {
                    failed = Some(EvalError::Backend(format!("the rules' own move failed: {e}")));
                    break;
                }
            };
            if let Some(outcome) = next.outcome() {
                match decided(self.buckets, &outcome, r.state.to_move()) {
                    Ok(d) => sources.push((a, Source::Decided(d))),
                    Err(e) => {
                        failed =
                            Some(EvalError::Backend(format!("no distribution for a finished game: {e}")));
                        break;
                    }
                }
                continue;
            }
            match tokenize_fen(&next.to_text()) {
                Ok(ids) => {
                    sources.push((a, Source::Row(rows.len())));
                    rows.push(ids);
                }
                Err(e) => {
                    failed = Some(EvalError::Unsupported {
                        what: format!("value the move {}", r.state.action_to_text(a)),
                        why: format!("the state-value input has no room for the position after it: {e}"),
                    });
                    break;
                }
            }
        }
        if let Some(e) = failed {
            rows.truncate(first);
            return Err(e);
        }
        Ok(sources)
    }

    /// The answer to `req` from its moves' sources and the batch's value logits, best first by mean value;
    /// `timing`'s tokens are filled in.
    fn answer<S: GameState>(
        &self,
        req: &EvalRequest<S>,
        sources: Vec<(S::Action, Source)>,
        logits: &Array2<f32>,
        timing: EvalTiming,
    ) -> Result<EvalResult<S>, EvalError> {
        let mut mv = Vec::with_capacity(sources.len());
        let mut tokens = 0;
        for (a, source) in sources {
            let dist = match source {
                Source::Decided(d) => d,
                Source::Row(row) => {
                    tokens += STATE_LEN;
                    match ValueDistribution::from_logits(self.buckets, &logits.row(row).to_vec()) {
                        // The model speaks for the opponent, who moves in the successor.
                        Ok(d) => d.flipped(),
                        Err(e) => {
                            return Err(EvalError::Backend(format!(
                                "the model's value logits are invalid: {e}"
                            )));
                        }
                    }
                }
            };
            mv.push(MoveValue::valued(a, req.state.action_to_text(a), dist));
        }
        mv.sort_by(MoveValue::by_mean_value);
        if let TopK::Count(k) = req.top_k {
            mv.truncate(k as usize);
        }
        Ok(EvalResult { timing: EvalTiming { tokens, ..timing }, ..EvalResult::values(mv, None) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Player;
    use crate::game::chess::ChessState;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::outcome::OutcomeReason;
    use crate::inference::screen::{Screened, screen_one_pass};

    #[test]
    fn finished_successors_are_valued_from_their_outcome() {
        let b = Buckets::new(128).expect("valid");
        let mate = Outcome::Win { winner: Player::First, reason: OutcomeReason::Checkmate };
        assert_eq!(decided(b, &mate, Player::First).expect("ok").mean_value(), 127.5 / 128.0);
        assert_eq!(decided(b, &mate, Player::Second).expect("ok").mean_value(), 0.5 / 128.0);
        let draw = Outcome::Draw { reason: OutcomeReason::Stalemate };
        assert!((decided(b, &draw, Player::First).expect("ok").mean_value() - 0.5).abs() < 1e-12);
        let odd = Buckets::new(5).expect("valid");
        assert_eq!(decided(odd, &draw, Player::Second).expect("ok").mode_bucket(), 2);
    }

    #[test]
    fn another_game_is_refused_by_name() {
        let request = EvalRequest::values(ConnectFourState::default());
        assert!(matches!(screen_one_pass(&request, "state-value", &GAMES), Screened::Answered(Err(_))));
        let chess = EvalRequest::values(ChessState::startpos());
        assert!(
            matches!(screen_one_pass(&chess, "state-value", &GAMES), Screened::Moves(m) if m.len() == 20)
        );
    }
}
