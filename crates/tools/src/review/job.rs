//! One game's work on a review worker: review, annotate, and the game's line of the JSON report.

use serde::Serialize;

use super::annotate::{annotate, annotate_failure, game_text};
use super::game::{review_game, review_game_beside};
use super::judge::EngineJudge;
use super::options::ReviewOptions;
use super::report::GameReview;
use crate::game::chess::ChessState;
use crate::inference::evaluator::Evaluator;
use crate::pgn::GameTree;

/// One game for a worker.
#[derive(Debug)]
pub struct Job {
    /// The game's number in the input, from 1.
    pub game: usize,
    /// The game.
    pub tree: GameTree,
}

/// A worker's answer for one game.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutput {
    /// The game's PGN text (without what stood before it in the file).
    pub text: String,
    /// Its line of the JSON report.
    pub report: String,
    /// Whether the review succeeded.
    pub reviewed: bool,
    /// Positions evaluated.
    pub positions: u64,
}

/// One game's entry in the JSON report.
#[derive(Debug, Serialize)]
struct ReportEntry<'a> {
    game: usize,
    status: &'static str,
    headers: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<&'a GameReview>,
}

pub(super) fn report_line(
    game: usize,
    status: &'static str,
    tree: Option<&GameTree>,
    error: Option<String>,
    review: Option<&GameReview>,
) -> String {
    let headers = tree
        .map(|t| t.headers().iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect())
        .unwrap_or_default();
    let entry = ReportEntry { game, status, headers, error, review };
    serde_json::to_string(&entry).unwrap_or_else(|e| {
        format!("{{\"game\":{game},\"status\":\"report_failed\",\"error\":{:?}}}", e.to_string())
    })
}

/// Reviews one game and returns its annotated text and report line; a failed review is noted in the
/// game instead. With a `judge`, the engine values the moves and `evaluator` (the model) runs beside it.
pub fn review_job<E: Evaluator<ChessState> + ?Sized>(
    evaluator: &mut E,
    judge: Option<&mut EngineJudge>,
    job: Job,
    options: &ReviewOptions,
    model: &str,
) -> JobOutput {
    let mut tree = job.tree;
    let reviewed = match judge {
        Some(judge) => {
            let method = format!("{}; the model beside: {}", judge.describe(), options.describe());
            review_game_beside(&tree, judge, Some(evaluator), options, Some(&method))
        }
        None => review_game(&tree, evaluator, options),
    };
    let outcome = reviewed.and_then(|review| {
        annotate(&mut tree, &review, model)?;
        Ok(review)
    });
    match outcome {
        Ok(review) => JobOutput {
            report: report_line(job.game, "reviewed", Some(&tree), None, Some(&review)),
            text: game_text(&tree),
            reviewed: true,
            positions: review.positions() as u64,
        },
        Err(e) => {
            // A comment that cannot be added leaves the game as it was; it is still written.
            let _ = annotate_failure(&mut tree, &e);
            JobOutput {
                report: report_line(job.game, "review_failed", Some(&tree), Some(e.to_string()), None),
                text: game_text(&tree),
                reviewed: false,
                positions: 0,
            }
        }
    }
}
