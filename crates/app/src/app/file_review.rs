//! Review of every game of the opened file: the games go to the engine one after another (each as a
//! [`ReviewJob`](super::review_job::ReviewJob), the same job as *Review game*, and the same review as
//! `mavboard annotate`), their reviews are kept by game number for the game list's columns, attached to a
//! game when it is opened, and written together as an annotated PGN on export.

use std::collections::{BTreeMap, VecDeque};

use super::error::AppError;
use super::game_list::GameList;
use super::game_review::ReviewedGame;
use crate::inference::evaluator::Scoring;
use crate::review::annotate::{annotate, game_text};
use crate::review::classify::Classification;
use crate::review::error::ReviewError;

/// What the game list shows for one reviewed game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GameSummary {
    /// White's and Black's accuracy (Lichess's formula), when they made moves.
    pub accuracy: (Option<f64>, Option<f64>),
    /// Inaccuracies, mistakes and blunders of both players together.
    pub counts: [usize; 3],
}

impl GameSummary {
    fn of(reviewed: &ReviewedGame) -> GameSummary {
        let r = &reviewed.review;
        let count = |c: Classification| r.moves.iter().filter(|m| m.classification == c).count();
        GameSummary {
            accuracy: (r.white.accuracy, r.black.accuracy),
            counts: [
                count(Classification::Inaccuracy),
                count(Classification::Mistake),
                count(Classification::Blunder),
            ],
        }
    }
}

/// The review of a whole game list, game by game.
#[derive(Debug, Clone)]
pub struct FileReview {
    /// The [`GameList::id`] it belongs to.
    pub list: u64,
    /// Where the games came from (for messages).
    pub source: String,
    /// Games waiting, by number, in file order.
    pub queue: VecDeque<usize>,
    /// The game being reviewed and its positions answered / asked.
    pub current: Option<(usize, (usize, usize))>,
    /// Finished games by number: the review, or why it failed.
    pub done: BTreeMap<usize, Result<ReviewedGame, AppError>>,
    /// Games that were queued (every game that could be read).
    pub total: usize,
    /// Whether the user stopped it before the end.
    pub stopped: bool,
}

impl FileReview {
    /// A review of every readable game of `list`, none started yet (while the file is still being read:
    /// the games listed so far).
    pub fn new(list: &GameList) -> FileReview {
        let queue: VecDeque<usize> =
            list.entries.iter().filter(|e| e.game.is_ok()).map(|e| e.number()).collect();
        FileReview {
            list: list.id,
            source: list.source.clone(),
            total: queue.len(),
            queue,
            current: None,
            done: BTreeMap::new(),
            stopped: false,
        }
    }

    /// Whether games are still waiting or being reviewed.
    pub fn running(&self) -> bool {
        !self.stopped && (self.current.is_some() || !self.queue.is_empty())
    }

    /// Games finished (reviewed or failed) and games queued.
    pub fn progress(&self) -> (usize, usize) {
        (self.done.len(), self.total)
    }

    /// Stops before the next game (the game under review is dropped); finished reviews stay.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.queue.clear();
        self.current = None;
    }

    /// Takes a finished game's review (or why it failed).
    pub fn finish(&mut self, number: usize, result: Result<ReviewedGame, AppError>) {
        if self.current.is_some_and(|(n, _)| n == number) {
            self.current = None;
        }
        self.done.insert(number, result);
    }

    /// The review of game `number` of list `list`, when it finished.
    pub fn reviewed(&self, list: u64, number: usize) -> Option<&ReviewedGame> {
        (list == self.list).then(|| self.done.get(&number)?.as_ref().ok()).flatten()
    }

    /// The game list's columns for game `number`: its summary, or the reason its review failed.
    pub fn summary(&self, number: usize) -> Option<Result<GameSummary, &AppError>> {
        Some(self.done.get(&number)?.as_ref().map(GameSummary::of))
    }

    /// Re-derives every finished review under `scoring` (no model calls).
    pub fn rescore(&mut self, scoring: Scoring) -> Result<(), ReviewError> {
        for r in self.done.values_mut().filter_map(|r| r.as_mut().ok()) {
            r.rescore(scoring)?;
        }
        Ok(())
    }

    /// The players' average accuracy over every finished game (each side of each game counts once).
    pub fn average_accuracy(&self) -> Option<f64> {
        let all: Vec<f64> = self
            .done
            .values()
            .filter_map(|r| r.as_ref().ok())
            .flat_map(|r| [r.review.white.accuracy, r.review.black.accuracy])
            .flatten()
            .collect();
        (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
    }

    /// The whole list as PGN with the finished reviews written in (`[%eval]`, `?!`/`?`/`??`, best moves, a
    /// summary comment — the same as `mavboard annotate`). Every game is kept: games not reviewed are
    /// written as they were read, and games that could not be read are copied through as they stand in
    /// the file after a `%` line saying why. The games are read again from the file one at a time.
    pub fn export(&self, list: &GameList, model: &str) -> Result<String, ReviewError> {
        let mut out = String::new();
        for e in &list.entries {
            if !out.is_empty() {
                out.push('\n');
            }
            match list.game(e.number()) {
                Ok(mut tree) => {
                    let text = match self.reviewed(list.id, e.number()) {
                        Some(r) => {
                            annotate(&mut tree, &r.review, model)?;
                            game_text(&tree)
                        }
                        None => game_text(&tree),
                    };
                    out.push_str(text.trim_end());
                    out.push('\n');
                }
                Err(why) => {
                    // A `%` line is an escape in PGN: readers skip it, so the note never breaks a game.
                    out.push_str(&format!(
                        "% mavboard: game {} could not be read: {}\n",
                        e.number(),
                        one_line(&why.to_string())
                    ));
                    if let Ok(raw) = list.raw(e.number()) {
                        out.push_str(raw.trim_end());
                        out.push('\n');
                    }
                }
            }
        }
        Ok(out)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::game_review::DocStamp;
    use crate::app::review_job::ReviewJob;
    use crate::inference::evaluator::Evaluator;
    use crate::pgn::reader::read_all;
    use crate::search::mock::MaterialEvaluator;

    const FILE: &str = "[Event \"one\"]\n\n1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n\n\
                        [Event \"broken\"]\n\n1. e4 e4 *\n\n\
                        [Event \"three\"]\n\n{A comment} 1. d4 d5 2. c4 *\n";

    fn review(list: &GameList, number: usize) -> ReviewedGame {
        let tree = list.game(number).expect("a good game");
        let stamp = DocStamp { doc: 0, structure: 0 };
        let repaint: crate::engine::Repaint = std::sync::Arc::new(|| {});
        let mut job = ReviewJob::start(tree, stamp, 0, None, &repaint).expect("started");
        let mut evaluator = MaterialEvaluator::new(3);
        for (tag, requests) in job.chunks() {
            job.accept(tag, evaluator.evaluate(&requests));
        }
        job.poll(Scoring::Mean).expect("all answered").expect("reviewed")
    }

    #[test]
    fn queues_the_readable_games_and_counts_progress() {
        let list = GameList::read(FILE, "three.pgn");
        let mut f = FileReview::new(&list);
        assert_eq!(f.queue, [1, 3]);
        assert_eq!(f.progress(), (0, 2));
        assert!(f.running());
        f.queue.pop_front();
        f.current = Some((1, (0, 7)));
        f.finish(1, Ok(review(&list, 1)));
        assert_eq!((f.current, f.progress()), (None, (1, 2)));
        let s = f.summary(1).expect("finished").expect("reviewed");
        assert_eq!(s.counts[2], 1, "2... Nf6 loses the bishop: one blunder ({s:?})");
        assert!(f.reviewed(list.id, 1).is_some());
        assert!(f.reviewed(list.id + 1, 1).is_none(), "another list's game 1 is not this one");
        f.stop();
        assert!(!f.running());
        assert_eq!(f.progress(), (1, 2));
    }

    #[test]
    fn export_keeps_every_game_and_annotates_the_reviewed_ones() {
        let list = GameList::read(FILE, "three.pgn");
        let mut f = FileReview::new(&list);
        f.finish(1, Ok(review(&list, 1)));
        let text = f.export(&list, "mock").expect("exports");
        let games = read_all(&text);
        assert_eq!(games.len(), 3, "{text}");
        let first = games[0].as_ref().expect("the annotated game reads back");
        assert_eq!(first.header("Event"), Some("one"));
        assert!(text.contains("[%eval"), "{text}");
        assert!(text.contains("Nf6??") || text.contains("Nf6 $4"), "the blunder is marked: {text}");
        assert!(games[1].is_err(), "the broken game is still broken, and still there");
        assert!(text.contains("% mavboard: game 2 could not be read") && text.contains("1. e4 e4"), "{text}");
        let third = games[2].as_ref().expect("the unreviewed game reads back");
        assert_eq!(third.header("Event"), Some("three"));
        assert!(text.contains("{A comment} 1. d4 d5 2. c4 *"), "kept as it was: {text}");
    }

    #[test]
    fn failed_games_are_listed_with_their_reason() {
        let list = GameList::read(FILE, "three.pgn");
        let mut f = FileReview::new(&list);
        f.finish(3, Err(AppError::Judge { reason: "no engine".into() }));
        assert_eq!(f.summary(3), Some(Err(&AppError::Judge { reason: "no engine".into() })));
        assert!(f.summary(1).is_none());
        assert!(f.reviewed(list.id, 3).is_none());
    }
}
