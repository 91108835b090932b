//! *Review game* with a UCI engine as the judge (Stockfish, as Lichess and En Croissant review), the model's
//! view kept beside it — the same review as `mavboard annotate --reviewer uci`.
//!
//! The engine judges the main line's positions on its own thread ([`JudgeRun`]) while the model answers
//! the same positions through the app's engine as for any review. Once both are in, the two sets of answers
//! are replayed ([`Replay`]) through [`review_game_beside`], so the app and the command line share one
//! review, and switching scoring re-derives it without asking either again.

use std::collections::HashMap;
use std::path::PathBuf;

use crossbeam_channel::{Receiver, unbounded};
use serde::{Deserialize, Serialize};

use super::error::AppError;
use crate::engine::Repaint;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalAnswer, EvalError, EvalRequest, Evaluator, Scoring};
use crate::pgn::GameTree;
use crate::review::error::ReviewError;
use crate::review::game::review_game_beside;
use crate::review::judge::EngineJudge;
use crate::review::options::ReviewOptions;
use crate::review::report::GameReview;
use crate::uci::SearchLimits;

/// One model or judge answer.
type Answer = EvalAnswer<ChessState>;

/// Who judges the moves of a game review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Reviewer {
    /// The loaded model (its values under the chosen scoring).
    #[default]
    Model,
    /// The UCI engine of the engine panel (Stockfish unless another is set), the model's view beside it.
    Uci,
}

/// The review settings (saved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewSettings {
    /// Who judges.
    pub reviewer: Reviewer,
    /// The UCI judge's search depth per position.
    pub depth: u32,
}

impl Default for ReviewSettings {
    fn default() -> Self {
        ReviewSettings { reviewer: Reviewer::Model, depth: 10 }
    }
}

/// Answers recorded earlier, given again by position: an [`Evaluator`] that replays a review's answers.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    answers: HashMap<String, Answer>,
}

impl Replay {
    /// The answers to `requests`, in the same order.
    pub fn new(requests: &[EvalRequest<ChessState>], answers: &[Answer]) -> Replay {
        let answers = requests
            .iter()
            .zip(answers)
            .map(|(r, a)| (r.state.to_text(), a.clone()))
            .collect::<HashMap<_, _>>();
        Replay { answers }
    }
}

impl Evaluator<ChessState> for Replay {
    fn evaluate(&mut self, requests: &[EvalRequest<ChessState>]) -> Vec<Answer> {
        requests
            .iter()
            .map(|r| {
                self.answers.get(&r.state.to_text()).cloned().unwrap_or_else(|| {
                    Err(EvalError::Backend(format!("no recorded answer for {}", r.state.to_text())))
                })
            })
            .collect()
    }
}

/// The judge's answers to a game's review requests, with the model's, ready to be derived under a scoring.
#[derive(Debug, Clone)]
pub struct JudgedAnswers {
    /// The review's requests (the main line's positions before each move).
    pub requests: Vec<EvalRequest<ChessState>>,
    /// The judge's answers, in request order.
    pub judge: Vec<Answer>,
    /// The judge in words (`Stockfish 15.1 at depth 10`); `None` where the judge is the model (the review's
    /// own words for it).
    pub method: Option<String>,
}

impl JudgedAnswers {
    /// The review of `tree`: the judge's classes, the model's `model` answers beside them under `scoring`.
    pub fn review(
        &self,
        tree: &GameTree,
        model: &[Answer],
        scoring: Scoring,
    ) -> Result<GameReview, ReviewError> {
        let mut judge = Replay::new(&self.requests, &self.judge);
        let mut model = Replay::new(&self.requests, model);
        let options = ReviewOptions { scoring, ..ReviewOptions::default() };
        review_game_beside(tree, &mut judge, Some(&mut model), &options, self.method.as_deref())
    }
}

enum Message {
    /// Positions judged so far.
    Progress(usize),
    /// Every answer, and the judge in words; or why the engine could not judge.
    Done(Result<(Vec<Answer>, String), AppError>),
}

/// The UCI judge at work on one game's positions, on its own thread.
pub struct JudgeRun {
    rx: Receiver<Message>,
    /// Positions judged, and positions asked.
    pub progress: (usize, usize),
    requests: Vec<EvalRequest<ChessState>>,
}

impl std::fmt::Debug for JudgeRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeRun").field("progress", &self.progress).finish_non_exhaustive()
    }
}

impl JudgeRun {
    /// Starts the engine at `path` judging `requests` to `depth`; `repaint` wakes the UI on each answer.
    pub fn start(
        path: PathBuf,
        depth: u32,
        requests: Vec<EvalRequest<ChessState>>,
        repaint: Repaint,
    ) -> Result<JudgeRun, AppError> {
        let (tx, rx) = unbounded();
        let total = requests.len();
        let work = requests.clone();
        std::thread::Builder::new()
            .name("mavboard-uci-review".into())
            .spawn(move || {
                let send = |m: Message| {
                    let _ = tx.send(m);
                    repaint();
                };
                let mut judge = match EngineJudge::start(&path, SearchLimits::depth(depth.max(1))) {
                    Ok(j) => j,
                    Err(e) => return send(Message::Done(Err(AppError::Judge { reason: e.to_string() }))),
                };
                let mut answers = Vec::with_capacity(work.len());
                for request in &work {
                    answers.extend(judge.evaluate(std::slice::from_ref(request)));
                    send(Message::Progress(answers.len()));
                }
                send(Message::Done(Ok((answers, judge.describe()))));
            })
            .map_err(|e| AppError::thread("the review engine", &e))?;
        Ok(JudgeRun { rx, progress: (0, total), requests })
    }

    /// Takes the thread's news: the judged answers once every position is in, or why it failed.
    pub fn poll(&mut self) -> Option<Result<JudgedAnswers, AppError>> {
        let mut out = None;
        while let Ok(m) = self.rx.try_recv() {
            match m {
                Message::Progress(n) => self.progress.0 = n,
                Message::Done(Ok((judge, method))) => {
                    out = Some(Ok(JudgedAnswers {
                        requests: self.requests.clone(),
                        judge,
                        method: Some(method),
                    }))
                }
                Message::Done(Err(e)) => out = Some(Err(e)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::game::review_requests;
    use crate::search::mock::MaterialEvaluator;

    #[test]
    fn replayed_answers_give_the_review_of_the_live_evaluators() {
        let tree =
            crate::pgn::reader::read_all("1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n").remove(0).expect("game");
        let requests = review_requests(&tree).expect("requests");
        let judge_answers = MaterialEvaluator::new(3).evaluate(&requests);
        let model_answers = MaterialEvaluator::new(1).evaluate(&requests);
        let judged =
            JudgedAnswers { requests: requests.clone(), judge: judge_answers, method: Some("judge".into()) };
        let replayed = judged.review(&tree, &model_answers, Scoring::Mean).expect("review");
        let options = ReviewOptions::default();
        let live = review_game_beside(
            &tree,
            &mut MaterialEvaluator::new(3),
            Some(&mut MaterialEvaluator::new(1)),
            &options,
            Some("judge"),
        )
        .expect("live review");
        assert_eq!(replayed, live);
        assert!(replayed.moves.iter().all(|m| m.model.is_some()), "the model's view is beside every move");
        // A position that was never answered is an error, not a guess.
        let mut empty = Replay::default();
        assert!(empty.evaluate(&requests[..1])[0].is_err());
    }
}
