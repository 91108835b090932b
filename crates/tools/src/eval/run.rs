//! `mavboard eval`: a model against Stockfish labels and Lichess puzzles (the measures of Ruoss et al. and
//! the MAV paper's Table 3), under every scoring rule of [`Scoring::ALL`] (puzzles: the rules asked for).

use serde::Serialize;

use super::metrics::{Mean, kendall_tau};
use super::puzzles::{Puzzle, PuzzleOutcome, solve};
use crate::datagen::game_label::{four_state, hex_state};
use crate::datagen::record::LabelRecord;
use crate::datagen::render::label_state;
use crate::datagen::score::{ExactResult, LabelScore};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::inference::evaluator::{DecodeMode, EvalError, EvalRequest, EvalResult, Evaluator, Scoring};
use crate::mav::state::MavState;
use crate::search::SearchError;
use crate::search::mcts::{Mcts, MctsParams, RunLimits, VirtualCounts};

/// Measures under one scoring.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScoredMetrics {
    /// The rule.
    pub scoring: Scoring,
    /// The model's best move (by this scoring) is the labels' best move.
    pub action_accuracy: Mean,
    /// The model's best move is valued best by the labels, ties included (several Connect Four moves
    /// often share the best proven result and distance).
    pub best_value_accuracy: Mean,
    /// Positions whose every move has a proven result (a solver's labels): the model's best move keeps
    /// the position's result (a win stays a win, a draw a draw).
    pub result_accuracy: Mean,
    /// Kendall's τ between the model's move values and Stockfish's, per position, averaged.
    pub kendall_tau: Mean,
    /// Mean absolute error of each move's win probability.
    pub win_prob_mae: Mean,
}

/// Measures of one group of labelled positions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LabelMetrics {
    /// Positions evaluated.
    pub positions: u64,
    /// The reference a random mover sets: the share of each position's legal moves that the labels value
    /// best (ties included), averaged; compare with [`ScoredMetrics::best_value_accuracy`].
    pub random_best_value: Mean,
    /// The same reference for [`ScoredMetrics::result_accuracy`]: the share of each exactly solved
    /// position's moves that keep its proven result, averaged.
    pub random_result: Mean,
    /// The measures under each rule of [`Scoring::ALL`], in that order (filled as positions are scored).
    pub scored: Vec<ScoredMetrics>,
    /// Free decoding (text models only): precision of the moves written (legal / written).
    pub free_legal_precision: Mean,
    /// Free decoding: recall of the legal moves (written / legal), for `%top_all`.
    pub free_legal_recall: Mean,
    /// Free decoding: the written `%best_action` is legal.
    pub free_best_legal: Mean,
    /// Free decoding: the predicted state after the best action equals the rules' state.
    pub free_next_state_correct: Mean,
    /// Free decoding: requests whose output yielded nothing usable at all.
    pub free_failures: u64,
}

impl LabelMetrics {
    /// The measures under `scoring`, created empty the first time.
    pub fn scored_mut(&mut self, scoring: Scoring) -> &mut ScoredMetrics {
        let i = match self.scored.iter().position(|m| m.scoring == scoring) {
            Some(i) => i,
            None => {
                self.scored.push(ScoredMetrics { scoring, ..ScoredMetrics::default() });
                self.scored.len() - 1
            }
        };
        &mut self.scored[i]
    }

    /// The measures under `scoring`, if it was measured.
    pub fn scored(&self, scoring: Scoring) -> Option<&ScoredMetrics> {
        self.scored.iter().find(|m| m.scoring == scoring)
    }

    /// F1 of free decoding's legal-move precision and recall: 0 when the outputs named no legal move,
    /// None when no output could be read.
    pub fn free_legal_f1(&self) -> Option<f64> {
        let (p, r) = (self.free_legal_precision.mean, self.free_legal_recall.mean);
        (self.free_legal_precision.count > 0).then(|| if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 })
    }

    /// Whether free decoding was measured (some output was read, or some was unusable).
    pub fn free_measured(&self) -> bool {
        self.free_legal_precision.count > 0 || self.free_failures > 0
    }
}

/// Puzzle moves chosen by MAV-MCTS over the model instead of by its values alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PuzzleSearch {
    /// Simulations per solver move (a fresh tree for each).
    pub simulations: u64,
    /// Evaluations per model call.
    pub batch: usize,
}

/// Why a puzzle run stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PuzzleEvalError {
    /// The model failed on a puzzle position.
    #[error("the model could not evaluate a puzzle position: {0}")]
    Model(#[from] EvalError),
    /// The search could not run (a setting out of range).
    #[error("the search could not run on a puzzle position: {0}")]
    Search(SearchError),
    /// The chooser played a move that is not legal (a bug in the model layer, not a miss).
    #[error(transparent)]
    IllegalChoice(crate::eval::puzzles::BrokenPuzzle),
}

/// Measures on puzzles.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PuzzleMetrics {
    /// Puzzles tried (those whose solution replays).
    pub puzzles: u64,
    /// Puzzles left out because their own solution does not replay; the first reason is in `skipped_why`.
    pub skipped: u64,
    /// Why a puzzle was left out, the first time one was.
    pub skipped_why: Option<String>,
    /// MCTS simulations per solver move; 0 when the model's values alone chose the moves.
    pub simulations: u64,
    /// Evaluations per model call of the search (0 without search).
    pub batch: usize,
    /// The results under each rule tried, in the order asked.
    pub scored: Vec<PuzzleScore>,
    /// The puzzles tried by Lichess rating, in bands of [`RATING_BAND`] points (the searchless paper's
    /// Figure 2), lowest first; bands without a puzzle are left out.
    pub by_rating: Vec<RatingBand>,
}

/// The width of [`PuzzleMetrics::by_rating`]'s bands, in rating points.
pub const RATING_BAND: u32 = 200;

/// The puzzles of one rating band.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RatingBand {
    /// The band's lowest rating.
    pub from: u32,
    /// The first rating above the band.
    pub to: u32,
    /// Solved, under each rule tried (in the order of [`PuzzleMetrics::scored`]).
    pub solved: Vec<Mean>,
}

/// Puzzle results under one scoring rule.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PuzzleScore {
    /// The rule that chose the moves.
    pub scoring: Scoring,
    /// Solved.
    pub solved: Mean,
    /// The first solver move found (solved or not).
    pub first_move: Mean,
}

impl PuzzleMetrics {
    /// The results under `scoring`, if it was tried.
    pub fn scored(&self, scoring: Scoring) -> Option<&PuzzleScore> {
        self.scored.iter().find(|m| m.scoring == scoring)
    }
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvalReport {
    /// Chess positions from real games (source `game:…`).
    pub game_positions: LabelMetrics,
    /// Chess positions from opening books and their continuations.
    pub book_positions: LabelMetrics,
    /// Connect Four positions (solver labels), when the labels hold some.
    pub connect_four: Option<LabelMetrics>,
    /// Hex positions (solver and MCTS labels), when the labels hold some.
    pub hex: Option<LabelMetrics>,
    /// Puzzles.
    pub puzzles: Option<PuzzleMetrics>,
    /// Why free-decoding measures are absent, if they are.
    pub free_note: Option<String>,
    /// Internal search (`--internal`), on the chess validation positions.
    pub internal: Vec<super::internal::InternalMetrics>,
    /// Move matching (`--move-matching`), on the rated moves of a PGN file.
    pub move_matching: Option<super::move_matching::MatchingReport>,
}

fn best_by<S: GameState>(result: &EvalResult<S>, scoring: Scoring) -> Option<(S::Action, f64)> {
    result.best_by(scoring)
}

fn score_label<S: GameState>(
    rec: &LabelRecord,
    state: &S,
    result: &EvalResult<S>,
    scoring: Scoring,
    out: &mut ScoredMetrics,
) {
    let mut model = Vec::new();
    let mut truth = Vec::new();
    // A policy without values ranks the moves by its probabilities (τ); it has no win probability to err.
    let values = result.has_values();
    for (m, v) in result.moves.iter().zip(result.ranking_scores(scoring)) {
        let text = state.action_to_text(m.action);
        if let (Some(l), Some(v)) = (rec.moves.iter().find(|l| l.uci == text), v) {
            let wp = l.score.win_probability();
            model.push(v);
            truth.push(wp);
            if values {
                out.win_prob_mae.add((v - wp).abs());
            }
        }
    }
    if let Some(t) = kendall_tau(&model, &truth) {
        out.kendall_tau.add(t);
    }
    if let Some((best, _)) = best_by(result, scoring) {
        let text = state.action_to_text(best);
        out.action_accuracy.hit(text == rec.best);
        let top = rec.moves.iter().map(|l| l.score.win_probability()).fold(f64::NEG_INFINITY, f64::max);
        let chosen = rec.moves.iter().find(|l| l.uci == text);
        if let Some(l) = chosen {
            out.best_value_accuracy.hit(l.score.win_probability() >= top - 1e-9);
        }
        let proven: Option<Vec<u8>> = rec.moves.iter().map(|l| exact_rank(l.score)).collect();
        if let (Some(ranks), Some(l)) = (proven, chosen) {
            let best_result = ranks.iter().copied().max();
            out.result_accuracy.hit(exact_rank(l.score) == best_result);
        }
    }
}

/// A proven result's rank (win 2, draw 1, loss 0); `None` for a score that is not a proof.
fn exact_rank(score: LabelScore) -> Option<u8> {
    match score {
        LabelScore::Exact { result: ExactResult::Win, .. } => Some(2),
        LabelScore::Exact { result: ExactResult::Draw, .. } => Some(1),
        LabelScore::Exact { result: ExactResult::Loss, .. } => Some(0),
        _ => None,
    }
}

fn score_free<S: GameState>(state: &S, r: &EvalResult<S>, out: &mut LabelMetrics) {
    let legal = state.legal_actions().len();
    let written = r.moves.len() + r.hallucinations.iter().filter(|h| h.kind.contains("illegal")).count();
    if written == 0 && r.best_action.is_none() && r.next_state.is_none() {
        out.free_failures += 1;
    }
    if written > 0 {
        out.free_legal_precision.add(r.moves.len() as f64 / written as f64);
    }
    if legal > 0 {
        out.free_legal_recall.add(r.moves.len().min(legal) as f64 / legal as f64);
    }
    let best = r
        .best_action
        .as_ref()
        .and_then(|b| b.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).map(|(i, _)| i))
        .and_then(|i| r.moves.get(i));
    out.free_best_legal.hit(best.is_some());
    if let Some(b) = best {
        let truth = state.play(b.action).ok().map(|s| s.hash64());
        let predicted = r.next_state.as_ref().and_then(|n| n.state.as_ref()).map(GameState::hash64);
        out.free_next_state_correct.hit(truth.is_some() && truth == predicted);
    }
}

/// Evaluates `evaluator` on labelled chess positions (validation records only), in batches of `batch`,
/// into the report's game and book groups. `progress` is called with the number of positions done.
pub fn eval_labels(
    evaluator: &mut dyn Evaluator<ChessState>,
    labels: &[LabelRecord],
    batch: usize,
    report: &mut EvalReport,
    progress: impl FnMut(u64),
) -> Result<(), EvalError> {
    let mut groups = [std::mem::take(&mut report.game_positions), std::mem::take(&mut report.book_positions)];
    let set = LabelSet {
        labels,
        state_of: |rec: &LabelRecord| label_state(rec).ok(),
        group_of: |rec: &LabelRecord| usize::from(!rec.source.starts_with("game:")),
    };
    let out = eval_label_groups(evaluator, set, batch, &mut groups, &mut report.free_note, progress);
    let [game, book] = groups;
    report.game_positions = game;
    report.book_positions = book;
    out
}

/// Evaluates `evaluator` on labelled Connect Four positions into `report.connect_four`.
pub fn eval_connect_four_labels(
    evaluator: &mut dyn Evaluator<ConnectFourState>,
    labels: &[LabelRecord],
    batch: usize,
    report: &mut EvalReport,
    progress: impl FnMut(u64),
) -> Result<(), EvalError> {
    let EvalReport { connect_four, free_note, .. } = report;
    eval_one_group(
        evaluator,
        labels,
        |rec| four_state(&rec.fen).ok(),
        batch,
        connect_four,
        free_note,
        progress,
    )
}

/// Evaluates `evaluator` on labelled Hex positions into `report.hex`.
pub fn eval_hex_labels(
    evaluator: &mut dyn Evaluator<HexState>,
    labels: &[LabelRecord],
    batch: usize,
    report: &mut EvalReport,
    progress: impl FnMut(u64),
) -> Result<(), EvalError> {
    let EvalReport { hex, free_note, .. } = report;
    eval_one_group(evaluator, labels, |rec| hex_state(&rec.fen).ok(), batch, hex, free_note, progress)
}

/// A game measured as one group, added to `slot`.
fn eval_one_group<S: MavState>(
    evaluator: &mut dyn Evaluator<S>,
    labels: &[LabelRecord],
    state_of: impl Fn(&LabelRecord) -> Option<S>,
    batch: usize,
    slot: &mut Option<LabelMetrics>,
    free_note: &mut Option<String>,
    progress: impl FnMut(u64),
) -> Result<(), EvalError> {
    let mut groups = [slot.take().unwrap_or_default()];
    let set = LabelSet { labels, state_of, group_of: |_: &LabelRecord| 0 };
    let out = eval_label_groups(evaluator, set, batch, &mut groups, free_note, progress);
    let [g] = groups;
    *slot = Some(g);
    out
}

/// The labels to measure, how each is read as a state (`None`: left out) and which group it is scored in.
struct LabelSet<'a, F, G> {
    /// The labels.
    labels: &'a [LabelRecord],
    /// A label's position, when it reads as one.
    state_of: F,
    /// A label's group (an index into the groups measured).
    group_of: G,
}

/// The measures of any game: each label whose state `state_of` reads is valued (constrained decoding,
/// and free decoding where the model supports it) and scored into `groups[group_of(label)]`.
fn eval_label_groups<S: MavState, F, G>(
    evaluator: &mut dyn Evaluator<S>,
    set: LabelSet<'_, F, G>,
    batch: usize,
    groups: &mut [LabelMetrics],
    free_note: &mut Option<String>,
    mut progress: impl FnMut(u64),
) -> Result<(), EvalError>
where
    F: Fn(&LabelRecord) -> Option<S>,
    G: Fn(&LabelRecord) -> usize,
{
    let LabelSet { labels, state_of, group_of } = set;
    let mut free_supported = free_note.is_none();
    let mut done = 0u64;
    for chunk in labels.chunks(batch.max(1)) {
        let mut states = Vec::with_capacity(chunk.len());
        let mut recs = Vec::with_capacity(chunk.len());
        for rec in chunk {
            if let Some(s) = state_of(rec) {
                states.push(s);
                recs.push(rec);
            }
        }
        let requests: Vec<_> = states.iter().cloned().map(EvalRequest::values).collect();
        let results = evaluator.evaluate(&requests);
        let free_results = if free_supported {
            let free: Vec<_> = states
                .iter()
                .cloned()
                .map(|s| {
                    let mut r = EvalRequest::values(s);
                    r.mode = DecodeMode::Free;
                    r.want_best_action = true;
                    r.want_next_state = true;
                    r
                })
                .collect();
            let out = evaluator.evaluate(&free);
            if let Some(Err(EvalError::Unsupported { why, .. })) = out.first() {
                free_supported = false;
                *free_note = Some(why.clone());
                None
            } else {
                Some(out)
            }
        } else {
            None
        };
        for (i, (rec, state)) in recs.iter().zip(&states).enumerate() {
            let Some(group) = groups.get_mut(group_of(rec)) else { continue };
            let result = match &results[i] {
                Ok(r) => r,
                Err(EvalError::Backend(e)) => return Err(EvalError::Backend(e.clone())),
                Err(_) => continue,
            };
            group.positions += 1;
            if !rec.moves.is_empty() {
                let wp: Vec<f64> = rec.moves.iter().map(|l| l.score.win_probability()).collect();
                let top = wp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let best = wp.iter().filter(|&&v| v >= top - 1e-9).count();
                group.random_best_value.add(best as f64 / wp.len() as f64);
            }
            if let Some(ranks) = rec.moves.iter().map(|l| exact_rank(l.score)).collect::<Option<Vec<u8>>>()
                && let Some(&top) = ranks.iter().max()
            {
                let keep = ranks.iter().filter(|&&r| r == top).count();
                group.random_result.add(keep as f64 / ranks.len() as f64);
            }
            for scoring in Scoring::ALL {
                score_label(rec, state, result, scoring, group.scored_mut(scoring));
            }
            if let Some(Ok(fr)) = free_results.as_ref().map(|f| &f[i]) {
                score_free(state, fr, group);
            }
        }
        done += chunk.len() as u64;
        progress(done);
    }
    Ok(())
}

/// Tries every puzzle under each rule of `rules`: the model's values choose each solver move, or with
/// `search` MAV-MCTS over them does (a fresh tree per solver move, the paper's dynamic virtual counts).
/// A puzzle whose own solution does not replay is left out and counted; a model answer without a move to
/// play is a miss; a model failure, a search setting out of range (`batch` 0) or an illegal choice stops
/// the run.
pub fn eval_puzzles(
    evaluator: &mut dyn Evaluator<ChessState>,
    puzzles: &[Puzzle],
    search: Option<PuzzleSearch>,
    rules: &[Scoring],
    mut progress: impl FnMut(u64),
) -> Result<PuzzleMetrics, PuzzleEvalError> {
    let mut m = PuzzleMetrics {
        simulations: search.map_or(0, |s| s.simulations),
        batch: search.map_or(0, |s| s.batch),
        scored: rules.iter().map(|&scoring| PuzzleScore { scoring, ..PuzzleScore::default() }).collect(),
        ..PuzzleMetrics::default()
    };
    for (n, p) in puzzles.iter().enumerate() {
        if let Err(why) = p.check() {
            m.skipped += 1;
            m.skipped_why.get_or_insert(why.to_string());
            progress(n as u64 + 1);
            continue;
        }
        let mut outcome = vec![PuzzleOutcome { solver_moves: 0, found: 0 }; rules.len()];
        for (slot, &scoring) in rules.iter().enumerate() {
            let solved = solve(p, |s: &ChessState| -> Result<_, PuzzleEvalError> {
                let Some(search) = search else {
                    let mut results = evaluator.evaluate(&[EvalRequest::values(s.clone())]);
                    let r = match results.pop() {
                        Some(r) => r?,
                        None => {
                            return Err(EvalError::Backend("the evaluator returned no result".into()).into());
                        }
                    };
                    return Ok(best_by(&r, scoring).map(|b| b.0));
                };
                let params = MctsParams {
                    scoring,
                    virtual_counts: VirtualCounts::paper_dynamic(search.simulations),
                    ..MctsParams::default()
                };
                let mut mcts = Mcts::new(s.clone(), s.ply(), params).map_err(PuzzleEvalError::Search)?;
                let limits = RunLimits { simulations: search.simulations, batch_size: search.batch };
                match mcts.run(&mut *evaluator, limits) {
                    Ok(()) => Ok(mcts.best_action()),
                    // As with the values alone: an answer with nothing to play is a miss.
                    Err(SearchError::RootUnusable(_)) => Ok(None),
                    Err(SearchError::RootEvaluation(e)) => Err(e.into()),
                    Err(e) => Err(PuzzleEvalError::Search(e)),
                }
            });
            outcome[slot] = match solved {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => return Err(e),
                Err(why) => return Err(PuzzleEvalError::IllegalChoice(why)),
            };
        }
        m.puzzles += 1;
        for (score, o) in m.scored.iter_mut().zip(&outcome) {
            score.solved.hit(o.solved());
            score.first_move.hit(o.first_move());
        }
        let from = p.rating / RATING_BAND * RATING_BAND;
        let at = match m.by_rating.binary_search_by_key(&from, |b| b.from) {
            Ok(i) => i,
            Err(i) => {
                let band =
                    RatingBand { from, to: from + RATING_BAND, solved: vec![Mean::default(); rules.len()] };
                m.by_rating.insert(i, band);
                i
            }
        };
        for (mean, o) in m.by_rating[at].solved.iter_mut().zip(&outcome) {
            mean.hit(o.solved());
        }
        progress(n as u64 + 1);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::{LabelGame, MoveLabel, Split};
    use crate::inference::material::MaterialEvaluator;
    use crate::mav::state::MavState;

    #[test]
    fn free_decoding_that_names_no_legal_move_is_reported_not_hidden() {
        let mut m = LabelMetrics::default();
        assert!(!m.free_measured() && m.free_legal_f1().is_none());
        m.free_failures = 3;
        assert!(
            m.free_measured() && m.free_legal_f1().is_none(),
            "only unusable outputs: no F1, but measured"
        );
        m.free_legal_precision.add(0.0);
        m.free_legal_recall.add(0.0);
        assert_eq!(m.free_legal_f1(), Some(0.0), "outputs read, none legal: F1 0");
        m.free_legal_precision.add(1.0);
        m.free_legal_recall.add(0.5);
        let f1 = m.free_legal_f1().expect("measured");
        assert!((f1 - 2.0 * 0.5 * 0.25 / 0.75).abs() < 1e-12, "{f1}");
    }

    #[test]
    fn connect_four_labels_count_ties_and_kept_results() {
        use crate::datagen::score::{ExactResult, LabelScore};
        let exact = |result, plies| LabelScore::Exact { result, plies: Some(plies) };
        let label = |moves: Vec<(&str, LabelScore)>, best: &str| LabelRecord {
            game: LabelGame::ConnectFour,
            fen: ConnectFourState::default().mav_state(),
            chess960: false,
            moves: moves.into_iter().map(|(m, score)| MoveLabel { uci: m.to_owned(), score }).collect(),
            best: best.to_owned(),
            depth: 0,
            nodes: 1,
            source: "test".into(),
            ply: 0,
            split: Split::Val,
            search_path: Vec::new(),
        };
        let loss = exact(ExactResult::Loss, 10);
        // 1: column 3 wins sooner than the centre, which the model picks: not the best value, but still a win.
        let sooner = label(
            vec![
                ("3", exact(ExactResult::Win, 5)),
                ("4", exact(ExactResult::Win, 7)),
                ("1", loss),
                ("2", loss),
                ("5", loss),
                ("6", loss),
                ("7", loss),
            ],
            "3",
        );
        // 2: columns 3 and 4 tie; the labels name 3 best, the model's 4 is as good.
        let tie = label(
            vec![
                ("3", exact(ExactResult::Draw, 30)),
                ("4", exact(ExactResult::Draw, 30)),
                ("1", loss),
                ("2", loss),
                ("5", loss),
                ("6", loss),
                ("7", loss),
            ],
            "3",
        );
        // 3: only column 1 wins; the model's centre loses.
        let lost = label(
            vec![
                ("1", exact(ExactResult::Win, 9)),
                ("2", loss),
                ("3", loss),
                ("4", loss),
                ("5", loss),
                ("6", loss),
                ("7", loss),
            ],
            "1",
        );
        let mut report = EvalReport::default();
        eval_connect_four_labels(
            &mut crate::inference::mock::CentreEvaluator,
            &[sooner, tie, lost],
            2,
            &mut report,
            |_| {},
        )
        .expect("runs");
        let g = report.connect_four.expect("measured");
        assert_eq!(g.positions, 3);
        // One best move of seven, two of seven, one of seven.
        assert!((g.random_best_value.mean - 4.0 / 21.0).abs() < 1e-9, "{:?}", g.random_best_value);
        // Two wins of seven, two draws of seven, one win of seven keep the result.
        assert!((g.random_result.mean - 5.0 / 21.0).abs() < 1e-9, "{:?}", g.random_result);
        assert_eq!(g.scored.iter().map(|m| m.scoring).collect::<Vec<_>>(), Scoring::ALL);
        for m in &g.scored {
            assert_eq!(m.action_accuracy.mean, 0.0, "the model never names the labels' best move");
            assert!((m.best_value_accuracy.mean - 1.0 / 3.0).abs() < 1e-9, "{:?}", m.best_value_accuracy);
            assert_eq!(m.result_accuracy.count, 3);
            assert!((m.result_accuracy.mean - 2.0 / 3.0).abs() < 1e-9, "{:?}", m.result_accuracy);
        }
        assert!(report.free_note.is_some(), "free decoding was asked and refused");
        assert!(report.game_positions.positions == 0 && report.book_positions.positions == 0);
    }

    #[test]
    fn material_mock_solves_some_puzzles_and_scores_labels() {
        let path = crate::checkout_dir().join("tests/fixtures/puzzles/lichess-puzzles-dev.csv");
        let ps = super::super::puzzles::read_puzzles(&path).expect("reads");
        let mut e = MaterialEvaluator::new(1);
        let rules = [Scoring::Max, Scoring::Mean, Scoring::quantile(0.25).expect("q")];
        let m = eval_puzzles(&mut e, &ps[..60], None, &rules, |_| {}).expect("runs");
        assert_eq!(m.puzzles, 60);
        assert_eq!(m.scored.iter().map(|s| s.scoring).collect::<Vec<_>>(), rules);
        let max = m.scored(Scoring::Max).expect("tried");
        // A one-ply material counter wins some material puzzles, not all.
        assert!(max.solved.mean > 0.0 && max.solved.mean < 1.0, "{m:?}");
        // Every solved puzzle had its first move found, and some were only begun.
        assert_eq!(max.first_move.count, 60);
        assert!(max.first_move.mean > max.solved.mean, "{m:?}");
        for s in &m.scored {
            assert!(s.first_move.mean >= s.solved.mean, "{m:?}");
        }
        assert_eq!(m.simulations, 0);
        // The rating bands split the same puzzles: counts and hits add up to the totals, rule by rule.
        assert!(m.by_rating.len() > 1, "the dev set spans several bands: {:?}", m.by_rating);
        assert!(m.by_rating.windows(2).all(|w| w[0].to <= w[1].from), "lowest first, no overlap");
        for b in &m.by_rating {
            assert_eq!((b.to - b.from, b.from % RATING_BAND), (RATING_BAND, 0));
            let inside = ps[..60].iter().filter(|p| (b.from..b.to).contains(&p.rating)).count() as u64;
            assert!(b.solved.iter().all(|s| s.count == inside), "{b:?}");
        }
        for (slot, s) in m.scored.iter().enumerate() {
            let count: u64 = m.by_rating.iter().map(|b| b.solved[slot].count).sum();
            let hits: f64 =
                m.by_rating.iter().map(|b| b.solved[slot].mean * b.solved[slot].count as f64).sum();
            assert_eq!(count, s.solved.count);
            assert!((hits - s.solved.mean * s.solved.count as f64).abs() < 1e-9);
        }
        // Searching over the same values sees replies: it solves more of these material puzzles.
        let search = PuzzleSearch { simulations: 64, batch: 8 };
        let deep = eval_puzzles(&mut e, &ps[..60], Some(search), &[Scoring::Mean], |_| {}).expect("runs");
        assert_eq!((deep.puzzles, deep.simulations), (60, 64));
        let solved = |p: &PuzzleMetrics| p.scored(Scoring::Mean).expect("tried").solved.mean;
        assert!(solved(&deep) > solved(&m), "search {deep:?}\nvalues {m:?}");
        assert_eq!((deep.batch, deep.skipped), (8, 0));
        // A puzzle whose solution does not replay is left out, named, and the rest are measured.
        let mut broken = ps[..3].to_vec();
        broken[1].moves[1] = "a1a1".into();
        let part = eval_puzzles(&mut e, &broken, None, &[Scoring::Mean], |_| {}).expect("runs");
        assert_eq!((part.puzzles, part.skipped), (2, 1));
        assert!(part.skipped_why.as_deref().is_some_and(|w| w.contains(&broken[1].id)), "{part:?}");
        let none = PuzzleSearch { simulations: 8, batch: 0 };
        let err = eval_puzzles(&mut e, &ps[..1], Some(none), &[Scoring::Mean], |_| {})
            .expect_err("a zero batch is refused");
        assert!(err.to_string().contains("at least 1"), "{err}");
    }
}
