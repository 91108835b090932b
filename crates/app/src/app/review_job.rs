//! One game's review at work — the single pipeline behind *Review game* and *Review all games*, with the
//! model or a UCI engine as the judge. The model's answers come through the app's engine in tagged
//! chunks ([`ReviewJob::chunks`], [`ReviewJob::accept`]); a UCI judge answers the same positions on its own
//! thread ([`JudgeRun`]); [`ReviewJob::poll`] gives the finished review once both are in, or why it failed.
//! What a game review and a file review do with the result (show it; keep it by game number and go on
//! with the next game) is theirs.

use std::path::PathBuf;

use super::error::AppError;
use super::game_review::{Answer, DocStamp, PendingReview, ReviewedGame};
use super::uci_review::JudgeRun;
use crate::engine::Repaint;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalRequest, Scoring};
use crate::pgn::GameTree;

/// The UCI engine that judges a review's moves, and how deep it searches each position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeSpec {
    /// The engine's executable.
    pub path: PathBuf,
    /// Its search depth per position.
    pub depth: u32,
}

/// One game's review waiting for the model's answers and, when an engine judges, the engine's.
#[derive(Debug)]
pub struct ReviewJob {
    pending: PendingReview,
    /// The judge at work (`None` once its answers are in, or when the model judges).
    judge: Option<JudgeRun>,
    /// The judge's positions answered and asked (kept after its run ends).
    judged: (usize, usize),
    /// Model B's view asked beside the model's judgement: its name and the tag its answers come by, until
    /// they are in.
    beside: Option<(String, u64)>,
}

impl ReviewJob {
    /// Prepares the review of `tree`'s main line (engine tags from `first_tag`) and starts `judge` on
    /// its positions; a game without moves, or whose moves cannot be replayed, is an error.
    pub fn start(
        tree: GameTree,
        stamp: DocStamp,
        first_tag: u64,
        judge: Option<&JudgeSpec>,
        repaint: &Repaint,
    ) -> Result<ReviewJob, AppError> {
        let mut pending = PendingReview::new(tree, stamp, first_tag).map_err(|e| AppError::review(&e))?;
        if pending.review_len == 0 {
            return Err(AppError::NothingToReview);
        }
        let (judge, judged) = match judge {
            Some(spec) => {
                let requests = pending.requests[..pending.review_len].to_vec();
                let run = JudgeRun::start(spec.path.clone(), spec.depth, requests, repaint.clone())?;
                pending.wants_judge = true;
                let progress = run.progress;
                (Some(run), progress)
            }
            None => (None, (0, 0)),
        };
        Ok(ReviewJob { pending, judge, judged, beside: None })
    }

    /// The review's own positions (the moves' positions, without the final one the graph adds).
    pub fn review_requests(&self) -> Vec<EvalRequest<ChessState>> {
        self.pending.requests[..self.pending.review_len].to_vec()
    }

    /// Waits for model B's view (`name`, answers by `tag`) beside the model's judgement.
    pub fn expect_beside(&mut self, name: String, tag: u64) {
        if !self.pending.wants_judge {
            self.beside = Some((name, tag));
        }
    }

    /// The tag model B's answers are awaited by, while they are.
    pub fn beside_tag(&self) -> Option<u64> {
        self.beside.as_ref().map(|b| b.1)
    }

    /// Model B's answers (empty when B went away: the review is then the model's alone).
    pub fn accept_beside(&mut self, answers: Vec<Answer>) {
        if let Some((name, _)) = self.beside.take()
            && !answers.is_empty()
        {
            self.pending.beside = Some((name, answers));
        }
    }

    /// The engine commands' payloads: `(tag, requests)` per chunk.
    pub fn chunks(&self) -> Vec<(u64, Vec<EvalRequest<ChessState>>)> {
        self.pending.chunks()
    }

    /// Whether `tag` answers one of this job's chunks.
    pub fn owns(&self, tag: u64) -> bool {
        self.pending.owns(tag)
    }

    /// Stores a chunk of the model's answers; returns the positions (FEN) and answers newly known.
    pub fn accept(&mut self, tag: u64, results: Vec<Answer>) -> Vec<(String, Answer)> {
        self.pending.accept(tag, results)
    }

    /// Positions answered so far and positions asked, the judge's counted with the model's.
    pub fn progress(&self) -> (usize, usize) {
        let (done, total) = self.pending.progress();
        (done + self.judged.0, total + self.judged.1)
    }

    /// Takes the judge's news; returns the finished review under `scoring` once every answer is in, or
    /// why the job failed (`None` while it is still at work).
    pub fn poll(&mut self, scoring: Scoring) -> Option<Result<ReviewedGame, AppError>> {
        if let Some(run) = self.judge.as_mut() {
            let news = run.poll();
            self.judged = run.progress;
            match news {
                Some(Ok(answers)) => {
                    self.judged = (answers.judge.len(), answers.judge.len());
                    self.pending.judged = Some(answers);
                    self.judge = None;
                }
                Some(Err(e)) => {
                    self.judge = None;
                    return Some(Err(e));
                }
                None => return None,
            }
        }
        if self.beside.is_some() {
            return None;
        }
        self.pending.finish(scoring).map(|r| r.map_err(|e| AppError::review(&e)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::inference::evaluator::Evaluator;
    use crate::review::options::ReviewOptions;
    use crate::search::mock::MaterialEvaluator;

    const STAMP: DocStamp = DocStamp { doc: 1, structure: 0 };

    fn game(pgn: &str) -> GameTree {
        crate::pgn::reader::read_all(pgn).remove(0).expect("valid game")
    }

    fn repaint() -> Repaint {
        Arc::new(|| {})
    }

    #[test]
    fn a_model_judged_job_finishes_with_the_cli_review() {
        let tree = game("1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n");
        let mut job = ReviewJob::start(tree.clone(), STAMP, 7, None, &repaint()).expect("started");
        assert!(job.owns(7) && !job.owns(6));
        assert!(job.poll(Scoring::Mean).is_none(), "no answer yet");
        let mut evaluator = MaterialEvaluator::new(3);
        for (tag, requests) in job.chunks() {
            job.accept(tag, evaluator.evaluate(&requests));
        }
        assert_eq!(job.progress(), (7, 7), "six moves and the final position");
        let reviewed = job.poll(Scoring::Mean).expect("finished").expect("reviewed");
        let cli = crate::review::game::review_game(
            &tree,
            &mut MaterialEvaluator::new(3),
            &ReviewOptions::default(),
        )
        .expect("cli review");
        assert_eq!(reviewed.review, cli);
    }

    #[test]
    fn model_b_s_view_goes_beside_the_model_s_judgement_once_in() {
        let tree = game("1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n");
        let mut job = ReviewJob::start(tree.clone(), STAMP, 0, None, &repaint()).expect("started");
        job.expect_beside("model-b".into(), 41);
        assert_eq!(job.beside_tag(), Some(41));
        let mut a = MaterialEvaluator::new(3);
        for (tag, requests) in job.chunks() {
            job.accept(tag, a.evaluate(&requests));
        }
        assert!(job.poll(Scoring::Mean).is_none(), "waits for model B");
        let b_answers = MaterialEvaluator::new(1).evaluate(&job.review_requests());
        job.accept_beside(b_answers);
        assert_eq!(job.beside_tag(), None);
        let mut reviewed = job.poll(Scoring::Mean).expect("finished").expect("reviewed");
        assert_eq!(reviewed.beside.as_deref(), Some("model-b"));
        let cli = crate::review::game::review_game_beside(
            &tree,
            &mut MaterialEvaluator::new(3),
            Some(&mut MaterialEvaluator::new(1)),
            &ReviewOptions::default(),
            None,
        )
        .expect("cli review");
        assert_eq!(reviewed.review, cli, "the model judges, B's view beside every move");
        assert!(reviewed.review.moves.iter().all(|m| m.model.is_some()));
        // Rescoring keeps both sides.
        reviewed.rescore(Scoring::Max).expect("rescored");
        assert!(reviewed.review.moves.iter().all(|m| m.model.is_some()));
        // B closed meanwhile: no answers, the review is the model's alone.
        let mut job = ReviewJob::start(tree, STAMP, 0, None, &repaint()).expect("started");
        job.expect_beside("gone".into(), 7);
        for (tag, requests) in job.chunks() {
            job.accept(tag, a.evaluate(&requests));
        }
        job.accept_beside(Vec::new());
        let alone = job.poll(Scoring::Mean).expect("finished").expect("reviewed");
        assert!(alone.beside.is_none() && alone.review.moves.iter().all(|m| m.model.is_none()));
        // B failed on a position: the model's review stands alone, not lost.
        let mut job =
            ReviewJob::start(game("1. e4 e5 2. Nf3 *"), STAMP, 0, None, &repaint()).expect("started");
        job.expect_beside("failing".into(), 8);
        for (tag, requests) in job.chunks() {
            job.accept(tag, a.evaluate(&requests));
        }
        let mut failed = MaterialEvaluator::new(1).evaluate(&job.review_requests());
        failed[1] = Err(crate::inference::evaluator::EvalError::Backend("B crashed".into()));
        job.accept_beside(failed);
        let alone = job.poll(Scoring::Mean).expect("finished").expect("the model's review");
        assert!(alone.beside.is_none() && alone.review.moves.len() == 3);
    }

    #[test]
    fn games_that_cannot_be_reviewed_say_why() {
        let empty = game("[Event \"no moves\"]\n\n*\n");
        let err = ReviewJob::start(empty, STAMP, 0, None, &repaint()).expect_err("nothing to review");
        assert_eq!(err, AppError::NothingToReview);
        let mut job = ReviewJob::start(game("1. e4 e5 *"), STAMP, 0, None, &repaint()).expect("started");
        for (tag, requests) in job.chunks() {
            let failed = requests
                .iter()
                .map(|_| Err(crate::inference::evaluator::EvalError::Backend("no model".into())))
                .collect();
            job.accept(tag, failed);
        }
        let err = job.poll(Scoring::Max).expect("finished").expect_err("failed");
        assert!(matches!(&err, AppError::Review { reason } if reason.contains("no model")), "{err}");
    }

    #[test]
    fn a_judge_that_cannot_start_fails_the_job_by_name() {
        let spec = JudgeSpec { path: PathBuf::from("/nonexistent/mavboard-no-engine"), depth: 1 };
        let mut job =
            ReviewJob::start(game("1. e4 e5 *"), STAMP, 0, Some(&spec), &repaint()).expect("thread started");
        let mut evaluator = MaterialEvaluator::new(1);
        for (tag, requests) in job.chunks() {
            job.accept(tag, evaluator.evaluate(&requests));
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let news = loop {
            if let Some(news) = job.poll(Scoring::Mean) {
                break news;
            }
            assert!(std::time::Instant::now() < deadline, "the judge's thread never answered");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let err = news.expect_err("no engine there");
        assert!(matches!(err, AppError::Judge { .. }), "{err}");
        assert!(err.to_string().starts_with("the review's engine failed"), "{err}");
    }
}
