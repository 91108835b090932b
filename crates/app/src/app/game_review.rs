//! The app's game review: the main line's positions valued through the engine in batches — the same
//! requests and the same review as `mavboard annotate` ([`crate::review::game`]) — kept with the model's
//! answers, so switching between max and mean scoring re-derives the review without new model calls.

use std::collections::HashMap;

use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalRequest, Scoring};
use crate::pgn::{GameTree, NodeId};
use crate::review::classify::Classification;
use crate::review::error::ReviewError;
use crate::review::game::{review_from_results, review_requests};
use crate::review::options::ReviewOptions;
use crate::review::report::GameReview;

/// One model answer.
pub type Answer = crate::inference::evaluator::EvalAnswer<ChessState>;

/// Positions sent to the engine per `Evaluate` command: each answer moves the progress bar.
pub const CHUNK: usize = 8;

/// Which document a review belongs to: its identity and the version of its move structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocStamp {
    /// The document (a new one for every game opened or started).
    pub doc: u64,
    /// Bumped when moves are deleted or variations reordered (node ids may then change meaning).
    pub structure: u64,
}

/// A review waiting for the engine's answers.
#[derive(Debug, Clone)]
pub struct PendingReview {
    /// The game as it was when the review started.
    pub tree: GameTree,
    /// The document it came from.
    pub stamp: DocStamp,
    /// The requests, in [`review_requests`] order, then (optionally) the final position.
    pub requests: Vec<EvalRequest<ChessState>>,
    /// How many of `requests` are the review's (the rest only fill the eval graph).
    pub review_len: usize,
    /// The answers received, by request index.
    pub answers: Vec<Option<Answer>>,
    /// The first engine tag used; chunk `i` has tag `first_tag + i`.
    pub first_tag: u64,
    /// A UCI engine judges the moves: the review waits for its answers too ([`PendingReview::judged`]).
    pub wants_judge: bool,
    /// The UCI judge's answers, once in.
    pub judged: Option<super::uci_review::JudgedAnswers>,
    /// Model B's answers to the review's positions, with its name, when the model judges and B's view goes
    /// beside it.
    pub beside: Option<(String, Vec<Answer>)>,
}

impl PendingReview {
    /// The requests for `tree`'s main line (plus its final position when the game is not over), or why
    /// the game cannot be reviewed.
    pub fn new(tree: GameTree, stamp: DocStamp, first_tag: u64) -> Result<PendingReview, ReviewError> {
        let mut requests = review_requests(&tree)?;
        let review_len = requests.len();
        if let Some((_, last)) = tree.mainline_positions()?.pop()
            && last.outcome().is_none()
        {
            // The game's positions before it, as the review's requests carry theirs.
            let mut history = requests.last().map(|r| r.history.clone()).unwrap_or_default();
            history.extend(requests.last().map(|r| r.state.clone()));
            let keep = history.len().saturating_sub(crate::search::mcts::HISTORY_KEPT);
            history.drain(..keep);
            requests.push(EvalRequest { history, ..EvalRequest::values(last) });
        }
        let answers = vec![None; requests.len()];
        Ok(PendingReview {
            tree,
            stamp,
            requests,
            review_len,
            answers,
            first_tag,
            wants_judge: false,
            judged: None,
            beside: None,
        })
    }

    /// The engine commands' payloads: `(tag, requests)` per chunk.
    pub fn chunks(&self) -> Vec<(u64, Vec<EvalRequest<ChessState>>)> {
        self.requests
            .chunks(CHUNK)
            .enumerate()
            .map(|(i, c)| (self.first_tag + i as u64, c.to_vec()))
            .collect()
    }

    /// Whether `tag` answers one of this review's chunks.
    pub fn owns(&self, tag: u64) -> bool {
        tag >= self.first_tag && tag < self.first_tag + self.requests.len().div_ceil(CHUNK) as u64
    }

    /// Stores a chunk's answers; returns the positions (FEN) and answers newly known.
    pub fn accept(&mut self, tag: u64, results: Vec<Answer>) -> Vec<(String, Answer)> {
        let Some(offset) = tag.checked_sub(self.first_tag).map(|c| c as usize * CHUNK) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let Some(request) = self.requests.get(offset + i) else { break };
            out.push((request.state.to_text(), r.clone()));
            if let Some(slot) = self.answers.get_mut(offset + i) {
                *slot = Some(r);
            }
        }
        out
    }

    /// Positions answered so far, and positions asked.
    pub fn progress(&self) -> (usize, usize) {
        (self.answers.iter().filter(|a| a.is_some()).count(), self.answers.len())
    }

    /// The finished review, once every answer is in (`None` before).
    pub fn finish(&self, scoring: Scoring) -> Option<Result<ReviewedGame, ReviewError>> {
        let answers: Vec<Answer> =
            self.answers.iter().take(self.review_len).cloned().collect::<Option<_>>()?;
        if self.answers.iter().any(Option::is_none) {
            return None;
        }
        if self.wants_judge {
            let judged = self.judged.clone()?;
            return Some(ReviewedGame::judged(self.tree.clone(), self.stamp, answers, judged, scoring));
        }
        // B's view goes beside only whole: where B failed on a position, the review is the model's alone.
        let whole = |b: &Vec<Answer>| b.len() == self.review_len && b.iter().all(Result::is_ok);
        if let Some((name, b)) = self.beside.clone().filter(|(_, b)| whole(b)) {
            // The model judges; model B's answers are the view beside it, as the model's are beside a UCI
            // judge.
            let judged = super::uci_review::JudgedAnswers {
                requests: self.requests[..self.review_len].to_vec(),
                judge: answers,
                method: None,
            };
            let reviewed = ReviewedGame::judged(self.tree.clone(), self.stamp, b, judged, scoring);
            return Some(reviewed.map(|r| ReviewedGame { beside: Some(name), ..r }));
        }
        Some(ReviewedGame::new(self.tree.clone(), self.stamp, answers, scoring))
    }
}

/// A finished review of a game's main line.
#[derive(Debug, Clone)]
pub struct ReviewedGame {
    tree: GameTree,
    answers: Vec<Answer>,
    /// The document it belongs to.
    pub stamp: DocStamp,
    /// The review under [`ReviewedGame::scoring`].
    pub review: GameReview,
    /// The scoring it was derived with.
    pub scoring: Scoring,
    /// Whether its annotations were written into the game.
    pub annotated: bool,
    classes: HashMap<NodeId, Classification>,
    /// The UCI judge's answers when an engine judged the moves (`answers` are then the model's view), or
    /// the model's when model B's view is beside it (`answers` are then B's).
    judge: Option<super::uci_review::JudgedAnswers>,
    /// Model B's name when its view is beside the model's judgement; `None`: the view beside a UCI judge,
    /// if any, is the model's.
    pub beside: Option<String>,
}

impl ReviewedGame {
    /// The review of `tree` from the answers to its [`review_requests`].
    pub fn new(
        tree: GameTree,
        stamp: DocStamp,
        answers: Vec<Answer>,
        scoring: Scoring,
    ) -> Result<ReviewedGame, ReviewError> {
        Self::derived(tree, stamp, answers, None, scoring)
    }

    /// The review of `tree` judged by a UCI engine (`judged`), with the model's `answers` beside each move.
    pub fn judged(
        tree: GameTree,
        stamp: DocStamp,
        answers: Vec<Answer>,
        judged: super::uci_review::JudgedAnswers,
        scoring: Scoring,
    ) -> Result<ReviewedGame, ReviewError> {
        Self::derived(tree, stamp, answers, Some(judged), scoring)
    }

    fn derived(
        tree: GameTree,
        stamp: DocStamp,
        answers: Vec<Answer>,
        judge: Option<super::uci_review::JudgedAnswers>,
        scoring: Scoring,
    ) -> Result<ReviewedGame, ReviewError> {
        let review = derive(&tree, &answers, judge.as_ref(), scoring)?;
        let classes = review.moves.iter().map(|m| (m.node, m.classification)).collect();
        Ok(ReviewedGame {
            tree,
            answers,
            stamp,
            review,
            scoring,
            annotated: false,
            classes,
            judge,
            beside: None,
        })
    }

    /// Re-derives the review under another scoring (no model calls).
    pub fn rescore(&mut self, scoring: Scoring) -> Result<(), ReviewError> {
        if scoring != self.scoring {
            self.review = derive(&self.tree, &self.answers, self.judge.as_ref(), scoring)?;
            self.classes = self.review.moves.iter().map(|m| (m.node, m.classification)).collect();
            self.scoring = scoring;
        }
        Ok(())
    }

    /// The class of the move at `node`, when it was reviewed.
    pub fn class_of(&self, node: NodeId) -> Option<Classification> {
        self.classes.get(&node).copied()
    }
}

/// The review if it belongs to the document with `stamp`.
pub fn for_doc(review: Option<&ReviewedGame>, stamp: DocStamp) -> Option<&ReviewedGame> {
    review.filter(|r| r.stamp == stamp)
}

/// The review from the model's `answers`, or, with a UCI `judge`, the judge's review with the model's view.
fn derive(
    tree: &GameTree,
    answers: &[Answer],
    judge: Option<&super::uci_review::JudgedAnswers>,
    scoring: Scoring,
) -> Result<GameReview, ReviewError> {
    if let Some(judge) = judge {
        return judge.review(tree, answers, scoring);
    }
    let options = ReviewOptions { scoring, ..ReviewOptions::default() };
    review_from_results(tree, answers, &options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::evaluator::Evaluator;
    use crate::search::mock::MaterialEvaluator;

    fn game(pgn: &str) -> GameTree {
        crate::pgn::reader::read_all(pgn).remove(0).expect("valid game")
    }

    const STAMP: DocStamp = DocStamp { doc: 1, structure: 0 };

    #[test]
    fn chunked_answers_in_any_order_give_the_cli_review() {
        let tree = game("[Event \"t\"]\n\n1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 4. a3 a6 5. b3 b6 *\n");
        let mut pending = PendingReview::new(tree.clone(), STAMP, 40).expect("requests");
        // Ten moves, plus the final position for the graph.
        assert_eq!((pending.review_len, pending.requests.len()), (10, 11));
        let chunks = pending.chunks();
        assert_eq!(chunks.len(), 2);
        assert!(pending.owns(41) && !pending.owns(42) && !pending.owns(39));
        let mut evaluator = MaterialEvaluator::new(3);
        for (tag, requests) in chunks.into_iter().rev() {
            assert!(pending.finish(Scoring::Mean).is_none(), "not finished before every answer");
            let known = pending.accept(tag, evaluator.evaluate(&requests));
            assert_eq!(known.len(), requests.len());
        }
        assert_eq!(pending.progress(), (11, 11));
        let reviewed = pending.finish(Scoring::Mean).expect("finished").expect("reviewed");
        let cli = crate::review::game::review_game(
            &tree,
            &mut MaterialEvaluator::new(3),
            &ReviewOptions::default(),
        )
        .expect("cli review");
        assert_eq!(reviewed.review, cli);
        // 2... Nf6 hangs the queen's attacker: a blunder, found by its node.
        let blunder = cli.moves.iter().find(|m| m.san == "Nf6").expect("Nf6 reviewed");
        assert_eq!(reviewed.class_of(blunder.node), Some(Classification::Blunder));
    }

    #[test]
    fn failed_answers_fail_the_review_with_the_ply() {
        let tree = game("1. e4 e5 *");
        let mut pending = PendingReview::new(tree, STAMP, 0).expect("requests");
        let n = pending.requests.len();
        let errors =
            (0..n).map(|_| Err(crate::inference::evaluator::EvalError::Backend("no model".into()))).collect();
        pending.accept(0, errors);
        let err = pending.finish(Scoring::Max).expect("finished").expect_err("fails");
        assert!(err.to_string().contains("no model"), "{err}");
    }

    #[test]
    fn rescoring_uses_the_stored_answers() {
        let tree = game("1. e4 e5 2. Nf3 Nc6 *");
        let mut pending = PendingReview::new(tree, STAMP, 0).expect("requests");
        let mut evaluator = MaterialEvaluator::new(1);
        for (tag, requests) in pending.chunks() {
            pending.accept(tag, evaluator.evaluate(&requests));
        }
        let mut reviewed = pending.finish(Scoring::Mean).expect("finished").expect("reviewed");
        reviewed.rescore(Scoring::Max).expect("rescored");
        assert_eq!(reviewed.scoring, Scoring::Max);
        assert_eq!(reviewed.review.moves.len(), 4);
    }
}
