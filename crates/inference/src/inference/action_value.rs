//! The `action-value` evaluator (Ruoss et al. 2024): one row per legal move — the 77 state tokens of the
//! FEN and the move's action index — and 128 (or mav.json's `num_buckets`) value logits per row. Every
//! legal move of every request of a batch goes into one ONNX run. The format has no policy head, so a
//! result's `best_action` stays `None` (its moves come best first by mean value); free decoding and state
//! prediction are refused as [`EvalError::Unsupported`]. The action ids follow the package's
//! `av_action_order`: mavboard's sorted order, or the published searchless models' own (an imported
//! package, `mavboard import searchless`), whose graph also puts their zero start token in front.

use std::collections::HashMap;
use std::time::Duration;

use ndarray::Array2;

use super::answers::BatchAnswers;
use super::backend::TensorBackend;
use super::evaluator::{EvalError, EvalRequest, EvalResult, EvalTiming, Evaluator, MoveValue, TopK};
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use crate::game::{GameKind, GameState};
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::mav::searchless::{STATE_LEN, tokenize_fen};
use crate::model::{ModelError, ModelPackage};

/// The games an action-value model values: chess, standard or Chess960 (the FEN carries the castling
/// rights either way). Requests of any other game are refused by name.
pub const GAMES: [GameKind; 2] = [GameKind::Chess, GameKind::Chess960];

/// An `action-value` model on one backend (an ONNX Runtime session or a server).
#[derive(Debug)]
pub struct ActionValueEvaluator {
    backend: Box<dyn TensorBackend>,
    buckets: Buckets,
    actions: HashMap<String, u32>,
    /// Summed time inside `Session::run`.
    pub model_time: Duration,
}

impl ActionValueEvaluator {
    /// Opens the package's model.onnx (its graph is checked against mav.json when the session opens).
    pub fn open(
        package: &ModelPackage,
        options: &SessionOptions,
    ) -> Result<ActionValueEvaluator, SessionError> {
        Self::with_backend(package, || OnnxBackend::boxed(package, options))
    }

    /// The package's model on the backend `open_backend` opens once mav.json is checked.
    pub fn with_backend(
        package: &ModelPackage,
        open_backend: impl FnOnce() -> Result<Box<dyn TensorBackend>, SessionError>,
    ) -> Result<ActionValueEvaluator, SessionError> {
        let actions = checked_actions(package)?;
        let buckets = package.buckets()?;
        let backend = open_backend()?;
        Ok(ActionValueEvaluator { backend, buckets, actions, model_time: Duration::ZERO })
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

/// Generic over the game so that one loader serves every game: the input is the position's text (a FEN
/// for chess) and the moves' text (UCI), and requests of a game outside [`GAMES`] are refused by name.
impl<S: GameState> Evaluator<S> for ActionValueEvaluator {
    fn evaluate(&mut self, requests: &[EvalRequest<S>]) -> Vec<Result<EvalResult<S>, EvalError>> {
        let mut out = BatchAnswers::new(requests.len());
        // (request, its legal moves, first row in the batch).
        let mut jobs = Vec::new();
        let mut rows: Vec<Vec<u32>> = Vec::new();
        for (i, r, moves) in out.screen(requests, "action-value", &GAMES) {
            let state_ids = match tokenize_fen(&r.state.to_text()) {
                Ok(s) => s,
                Err(e) => {
                    out[i] = Some(Err(EvalError::Unsupported {
                        what: "value this position".into(),
                        why: format!("the action-value input has no room for it: {e}"),
                    }));
                    continue;
                }
            };
            let first = rows.len();
            let mut missing = None;
            for a in &moves {
                let text = r.state.action_to_text(*a);
                match self.actions.get(&text) {
                    Some(&id) => {
                        let mut row = state_ids.clone();
                        row.push(id);
                        rows.push(row);
                    }
                    None => missing = Some(text),
                }
            }
            if let Some(text) = missing {
                rows.truncate(first);
                out[i] = Some(Err(EvalError::Unsupported {
                    what: format!("value the move {text}"),
                    why: "it has no action index".into(),
                }));
                continue;
            }
            jobs.push((i, moves, first));
        }
        if !rows.is_empty() {
            let ids = Array2::from_shape_fn((rows.len(), STATE_LEN + 1), |(r, j)| i64::from(rows[r][j]));
            let queue = out.queue_time();
            let before = self.model_time;
            let run = self.run(ids);
            let model = (self.model_time - before) / jobs.len().max(1) as u32;
            match run {
                Err(e) => {
                    for (i, _, _) in &jobs {
                        out[*i] = Some(Err(e.clone()));
                    }
                }
                Ok(logits) => {
                    for (i, moves, first) in jobs {
                        let req = &requests[i];
                        let mut mv = Vec::with_capacity(moves.len());
                        for (j, a) in moves.iter().enumerate() {
                            let l = logits.row(first + j).to_vec();
                            match ValueDistribution::from_logits(self.buckets, &l) {
                                Ok(dist) => {
                                    mv.push(MoveValue::valued(*a, req.state.action_to_text(*a), dist))
                                }
                                Err(e) => {
                                    out[i] = Some(Err(EvalError::Backend(format!(
                                        "the model's value logits are invalid: {e}"
                                    ))));
                                    break;
                                }
                            }
                        }
                        if out[i].is_some() {
                            continue;
                        }
                        // %top_k: the k best by mean value, best first (the model writes no order itself).
                        mv.sort_by(MoveValue::by_mean_value);
                        if let TopK::Count(k) = req.top_k {
                            mv.truncate(k as usize);
                        }
                        let tokens = moves.len() * (STATE_LEN + 1);
                        out[i] = Some(Ok(EvalResult {
                            timing: EvalTiming { queue, model, tokens },
                            ..EvalResult::values(mv, None)
                        }));
                    }
                }
            }
        }
        out.finish()
    }
}

/// The action ids of an action-value package (move → id), after checking that mav.json's state length and
/// action vocabulary are the ones the format has (the evaluator and the inspector both read them).
pub(crate) fn checked_actions(
    package: &ModelPackage,
) -> Result<std::collections::HashMap<String, u32>, ModelError> {
    let m = &package.manifest;
    let mismatch = |field: &str, expected: String, found: String| package.mismatch(field, expected, found);
    if m.av_state_length != Some(STATE_LEN) {
        return Err(mismatch(
            "mav.json av_state_length",
            STATE_LEN.to_string(),
            format!("{:?}", m.av_state_length),
        ));
    }
    let actions = m.av_action_order.index();
    if m.av_action_vocab_size != Some(actions.len()) {
        return Err(mismatch(
            "mav.json av_action_vocab_size",
            actions.len().to_string(),
            format!("{:?}", m.av_action_vocab_size),
        ));
    }
    Ok(actions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::game::connect_four::ConnectFourState;
    use crate::inference::screen::{Screened, screen_one_pass};

    #[test]
    fn chess960_positions_pass_the_screening_as_standard_ones_do() {
        for state in [ChessState::startpos(), ChessState::chess960(0).expect("position 0")] {
            let screened = screen_one_pass(&EvalRequest::values(state), "action-value", &GAMES);
            assert!(matches!(screened, Screened::Moves(m) if !m.is_empty()));
        }
    }

    #[test]
    fn another_game_is_refused_by_name_before_any_tokenizing() {
        let request = EvalRequest::values(ConnectFourState::default());
        match screen_one_pass(&request, "action-value", &GAMES) {
            Screened::Answered(Err(e)) => {
                assert!(
                    e.to_string().contains("connect_four")
                        && e.to_string().contains("trained on chess, chess960 only"),
                    "{e}"
                )
            }
            _ => panic!("a Connect Four position must be refused by the action-value format"),
        }
    }
}
