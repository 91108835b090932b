//! The second model beside the loaded one (*Engine → Compare with…*): a package opened on its own engine
//! worker, which values the board position with one model call each time the board moves, so that the
//! action-values panel can set model B's value, rank and distribution beside model A's for every move.
//! The comparison itself is [`crate::eval::compare`], the one behind `mavboard analyse --compare`. B opens
//! through the same loader as A, so either may be a remote package.
//!
//! Runtime state only (never saved), like the UCI engine beside the model; the panel reads the answer
//! ([`CompareModel::answer_for`]), never the engine.

use std::path::{Path, PathBuf};

use super::analysis::{ModelInfo, ModelStatus, ValueRow};
use super::game_link::{GameLink, LinkEvent};
use super::settings::Settings;
use crate::engine::internal::InternalSource;
use crate::engine::{Command as EngineCommand, Repaint};
use crate::eval::compare::{Comparison, DEFAULT_MARGIN, Scored, compare_values};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalAnswer, EvalError, EvalRequest};
use crate::mav::scoring::Scoring;
use crate::model::ModelPackage;

/// The largest margin the panel offers (win probability).
pub const MAX_MARGIN: f64 = 0.5;

/// The shipped packages that play chess, for *Engine → Compare with* (found once: the folders do not change
/// while the app runs).
pub fn shipped_choices() -> &'static [(String, PathBuf)] {
    static CHOICES: std::sync::OnceLock<Vec<(String, PathBuf)>> = std::sync::OnceLock::new();
    CHOICES.get_or_init(|| {
        crate::model::package::shipped_package_dirs()
            .into_iter()
            .filter_map(|dir| {
                let package = ModelPackage::open(&dir).ok()?;
                package
                    .manifest
                    .games
                    .contains(&crate::game::GameKind::Chess)
                    .then(|| (format!("{} ({})", package.manifest.name, package.manifest.format.name()), dir))
            })
            .collect()
    })
}

/// What the user asks of model B.
#[derive(Debug, Clone, PartialEq)]
pub enum CompareCommand {
    /// Open the package in this folder as model B (replacing the one open).
    Open(PathBuf),
    /// Choose model B's folder with the system dialog.
    ChooseFolder,
    /// Close model B.
    Close,
    /// The largest gap between the two values (win probability, 0 to [`MAX_MARGIN`]) that is not marked.
    SetMargin(f64),
}

/// Model B's answer for one position: each move it valued (UCI) with its bucket probabilities, or, from a
/// model without values (behavioural cloning), its policy's probability for each move.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The position (its text: a FEN).
    pub position: String,
    /// The moves and their distributions, in the order the model gave them (empty distributions from a
    /// model without values).
    pub moves: Vec<(String, Vec<f64>)>,
    /// The policy's probability of each move (same order), from a model without values; `None` from a
    /// value model.
    pub policy: Option<Vec<f64>>,
}

impl Answer {
    /// B's answer from its evaluation result.
    pub fn from_result(
        position: String,
        result: &crate::inference::evaluator::EvalResult<ChessState>,
    ) -> Answer {
        let moves = result
            .moves
            .iter()
            .map(|m| (m.text.clone(), m.dist.as_ref().map(|d| d.probs().to_vec()).unwrap_or_default()))
            .collect();
        let policy = (!result.has_values()).then(|| result.best_action.clone().unwrap_or_default());
        Answer { position, moves, policy }
    }

    /// The distribution B gave `uci`, if it valued it.
    pub fn distribution(&self, uci: &str) -> Option<&[f64]> {
        self.moves.iter().find(|m| m.0 == uci).map(|m| m.1.as_slice()).filter(|d| !d.is_empty())
    }

    /// Panel rows (model A) against this answer under `scoring` (the rule that orders the rows).
    pub fn compare(&self, rows: &[ValueRow], scoring: Scoring, margin: f64) -> Comparison {
        let a = Scored {
            moves: rows.iter().map(|r| (r.uci.clone(), r.value())).collect(),
            values: rows.iter().all(|r| r.probability.is_none()),
        };
        let b = match &self.policy {
            Some(p) => Scored {
                moves: self.moves.iter().zip(p).map(|((m, _), p)| (m.clone(), *p)).collect(),
                values: false,
            },
            None => Scored {
                moves: self.moves.iter().map(|(m, d)| (m.clone(), scoring.of_probs(d))).collect(),
                values: true,
            },
        };
        compare_values(&a, &b, scoring, margin)
    }
}

/// Model B: its engine worker, where it is in its life, and its latest answer.
pub struct CompareModel {
    link: Option<GameLink<ChessState>>,
    /// Loading, ready or failed (`None`: no model B).
    pub status: ModelStatus,
    /// The largest gap between the two values that is not marked (win probability).
    pub margin: f64,
    /// The latest answer, or why the last evaluation failed (for its position).
    answer: Option<Result<Answer, (String, String)>>,
    /// The position last sent, and the tag of its evaluation.
    sent: Option<(String, u64)>,
    /// A hash of the positions before it that were sent with it (a model that reads history answers the same
    /// position reached by another line differently).
    sent_history: u64,
    next_tag: u64,
    /// A game review's positions sent to B: the tag, how many, and B's answers once in.
    review: Option<ReviewAsk>,
}

/// A game review's positions asked of model B.
#[derive(Debug, Clone)]
struct ReviewAsk {
    tag: u64,
    count: usize,
    answers: Option<Vec<EvalAnswer<ChessState>>>,
}

impl Default for CompareModel {
    fn default() -> CompareModel {
        CompareModel {
            link: None,
            status: ModelStatus::None,
            margin: DEFAULT_MARGIN,
            answer: None,
            sent: None,
            sent_history: 0,
            next_tag: 0,
            review: None,
        }
    }
}

impl std::fmt::Debug for CompareModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompareModel")
            .field("status", &self.status)
            .field("margin", &self.margin)
            .field("answer", &self.answer)
            .finish_non_exhaustive()
    }
}

impl CompareModel {
    /// Applies a command (the folder dialog is the caller's); `repaint` wakes the UI when B answers.
    pub fn apply(&mut self, command: CompareCommand, settings: &Settings, repaint: Repaint) {
        match command {
            CompareCommand::Open(dir) => self.open(&dir, settings, repaint),
            CompareCommand::Close => *self = CompareModel { margin: self.margin, ..CompareModel::default() },
            CompareCommand::SetMargin(m) => self.margin = m.clamp(0.0, MAX_MARGIN),
            // Handled by the app state (it owns the dialog).
            CompareCommand::ChooseFolder => {}
        }
    }

    /// Opens the package in `dir` as model B on a new engine worker (the old one, if any, ends).
    fn open(&mut self, dir: &Path, settings: &Settings, repaint: Repaint) {
        let margin = self.margin;
        *self = CompareModel { margin, ..CompareModel::default() };
        let package = match ModelPackage::open(dir) {
            Ok(p) => p,
            Err(e) => {
                self.status = ModelStatus::Failed(format!(
                    "Model B in {} cannot be used: {e}. Choose another package folder.",
                    dir.display()
                ));
                return;
            }
        };
        let info = ModelInfo::of_package(&package, dir.to_path_buf(), 1);
        let mut link = match GameLink::start(ChessState::startpos(), repaint) {
            Ok(l) => l,
            Err(e) => {
                self.status = ModelStatus::Failed(format!("Model B's engine could not start: {e}"));
                return;
            }
        };
        let options = super::model_runtime::session_options(settings);
        let factory =
            super::model_runtime::model_factory(dir.to_path_buf(), options.clone(), Default::default());
        let internal = InternalSource::Package { dir: dir.to_path_buf(), options };
        if let Err(e) = link.load(factory, 1, internal) {
            self.status = ModelStatus::Failed(format!("Model B could not be loaded: {e}"));
            return;
        }
        self.status = ModelStatus::Loading(info);
        self.link = Some(link);
    }

    /// Once per frame: takes B's events and, once it is loaded, asks it for `current` (with the line's
    /// positions before it, `history`) when the board moved.
    pub fn frame(&mut self, current: &ChessState, history: &[ChessState]) {
        let Some(link) = self.link.as_mut() else { return };
        while let Some(event) = link.next_event() {
            match event {
                LinkEvent::Ready => {
                    if let ModelStatus::Loading(info) = &self.status {
                        self.status = ModelStatus::Ready(info.clone());
                    }
                }
                LinkEvent::LoadFailed(why) => {
                    self.status = ModelStatus::Failed(format!("Model B could not be loaded: {why}"));
                }
                LinkEvent::Evaluated { tag, results }
                    if self.review.as_ref().is_some_and(|r| r.tag == tag) =>
                {
                    if let Some(r) = self.review.as_mut() {
                        r.answers = Some(results);
                    }
                }
                LinkEvent::Evaluated { tag, mut results } => {
                    let Some((position, sent_tag)) = &self.sent else { continue };
                    if tag != *sent_tag {
                        continue;
                    }
                    let position = position.clone();
                    self.answer = Some(match results.pop() {
                        Some(Ok(result)) => Ok(Answer::from_result(position, &result)),
                        Some(Err(e)) => Err((position, e.to_string())),
                        None => Err((position, "the engine gave no answer".to_owned())),
                    });
                }
                LinkEvent::Error(e) => {
                    if let Some((position, _)) = &self.sent {
                        self.answer = Some(Err((position.clone(), e.to_string())));
                    }
                    if let Some(r) = self.review.as_mut().filter(|r| r.answers.is_none()) {
                        let why = EvalError::Backend(format!("model B failed: {e}"));
                        r.answers = Some(vec![Err(why); r.count]);
                    }
                }
                LinkEvent::Info(_) | LinkEvent::Done { .. } | LinkEvent::Explored { .. } => {}
            }
        }
        if !matches!(self.status, ModelStatus::Ready(_)) {
            return;
        }
        let position = current.to_text();
        let history_key = crate::inference::cache::history_hash(history);
        if self.sent.as_ref().is_some_and(|(p, _)| *p == position) && self.sent_history == history_key {
            return;
        }
        self.sent_history = history_key;
        self.next_tag += 1;
        let request = EvalRequest { history: history.to_vec(), ..EvalRequest::values(current.clone()) };
        match link.send(EngineCommand::Evaluate { tag: self.next_tag, requests: vec![request] }) {
            Ok(()) => self.sent = Some((position, self.next_tag)),
            Err(e) => self.status = ModelStatus::Failed(format!("Model B stopped: {e}")),
        }
    }

    /// Sends a game review's positions to model B when it is ready; its name and the tag to collect its
    /// answers by ([`CompareModel::take_review`]). `None` when no model B is ready, or B is a policy
    /// without values.
    pub fn ask_review(&mut self, requests: Vec<EvalRequest<ChessState>>) -> Option<(String, u64)> {
        let ModelStatus::Ready(info) = &self.status else { return None };
        if info.buckets == 0 {
            // A policy without values has no view of a move's loss to give.
            return None;
        }
        let name = info.name.clone();
        let link = self.link.as_mut()?;
        self.next_tag += 1;
        let (tag, count) = (self.next_tag, requests.len());
        match link.send(EngineCommand::Evaluate { tag, requests }) {
            Ok(()) => {
                self.review = Some(ReviewAsk { tag, count, answers: None });
                Some((name, tag))
            }
            Err(e) => {
                self.status = ModelStatus::Failed(format!("Model B stopped: {e}"));
                None
            }
        }
    }

    /// Model B's answers to the review positions sent with `tag`, once all are in (taken: asked again,
    /// `None`); answers of errors where B was closed or failed meanwhile.
    pub fn take_review(&mut self, tag: u64) -> Option<Vec<EvalAnswer<ChessState>>> {
        match &self.review {
            Some(r) if r.tag == tag && r.answers.is_some() => self.review.take().and_then(|r| r.answers),
            Some(r) if r.tag == tag => None,
            // B was closed (or asked for another review): the review goes on without it.
            _ => Some(Vec::new()),
        }
    }

    /// Whether a model B is open (loading, ready or failed).
    pub fn is_open(&self) -> bool {
        !matches!(self.status, ModelStatus::None)
    }

    /// B's answer for `current`, or why it failed there; `None` while it is being valued.
    pub fn answer_for(&self, current: &ChessState) -> Option<Result<&Answer, &str>> {
        let position = current.to_text();
        match self.answer.as_ref()? {
            Ok(a) if a.position == position => Some(Ok(a)),
            Err((p, why)) if *p == position => Some(Err(why.as_str())),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(uci: &str, value: f64) -> ValueRow {
        ValueRow {
            uci: uci.into(),
            san: uci.into(),
            values: vec![value, value],
            ranks: vec![0, 0],
            distribution: vec![1.0],
            visits: 0,
            probability: None,
            policy: None,
        }
    }

    #[test]
    fn rows_are_compared_with_the_answer_under_the_panel_rule() {
        // Two buckets: centres 0.25 and 0.75.
        let answer = Answer {
            position: ChessState::startpos().to_text(),
            moves: vec![("e2e4".into(), vec![1.0, 0.0]), ("d2d4".into(), vec![0.0, 1.0])],
            policy: None,
        };
        let rows = [row("e2e4", 0.6), row("d2d4", 0.55), row("g1f3", 0.5)];
        let c = answer.compare(&rows, Scoring::Mean, 0.1);
        assert_eq!((c.best_a.as_deref(), c.best_b.as_deref()), (Some("e2e4"), Some("d2d4")));
        assert!(c.best_differs);
        let e4 = &c.moves[0];
        assert_eq!((e4.b, e4.rank_b), (Some(0.25), Some(2)));
        assert!(e4.disagree, "A's best, not B's");
        // Only A valued Nf3: marked, B's side empty.
        let nf3 = c.moves.iter().find(|m| m.text == "g1f3").expect("Nf3");
        assert!(nf3.disagree && nf3.b.is_none());
        assert_eq!(answer.distribution("d2d4"), Some(&[0.0, 1.0][..]));
        assert_eq!(answer.distribution("a2a3"), None);
    }

    #[test]
    fn a_package_that_does_not_open_fails_by_name_and_close_forgets_it() {
        let mut b = CompareModel::default();
        let settings = Settings::default();
        b.apply(CompareCommand::Open("/no/such/package".into()), &settings, std::sync::Arc::new(|| {}));
        match &b.status {
            ModelStatus::Failed(why) => assert!(why.contains("/no/such/package"), "{why}"),
            other => panic!("expected a failure, got {other:?}"),
        }
        assert!(b.is_open());
        b.apply(CompareCommand::SetMargin(2.0), &settings, std::sync::Arc::new(|| {}));
        assert_eq!(b.margin, MAX_MARGIN);
        b.apply(CompareCommand::Close, &settings, std::sync::Arc::new(|| {}));
        assert!(!b.is_open());
        assert_eq!(b.margin, MAX_MARGIN, "the margin stays");
        assert!(b.answer_for(&ChessState::startpos()).is_none());
    }
}
