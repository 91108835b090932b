//! Reviewing one game: every main-line position valued by the model (or searched), the move played
//! compared with the best move, losses classified, accuracies and summaries computed.

use shakmaty::san::SanPlus;
use shakmaty::{Color, Move, Position};

use super::accuracy::{AccuracyInput, game_accuracy};
use super::error::ReviewError;
use super::options::ReviewOptions;
use super::phase::phases;
use super::report::{GameReview, ModelView, MoveReview, PlayerSummary, SearchInfo, Values};
use crate::game::chess::ChessState;
use crate::game::{GameState, Outcome, OutcomeReason};
use crate::inference::evaluator::{EvalRequest, EvalResult, Evaluator, Scoring};
use crate::pgn::{GameTree, NodeId};
use crate::search::mcts::{Mcts, MctsParams, RunLimits};

/// A main-line move waiting for its values.
#[derive(Debug)]
struct Pending {
    node: NodeId,
    ply: u32,
    state: ChessState,
    mv: Move,
}

/// The numbers found for one position.
#[derive(Debug)]
struct Valued {
    played: Values,
    best: Values,
    best_move: Move,
    before: f64,
    after: f64,
    search: Option<SearchInfo>,
}

fn values(dist: &crate::mav::buckets::ValueDistribution, scoring: Scoring) -> Values {
    Values { value: scoring.value(dist), compare: scoring.tie_breaker().value(dist) }
}

/// The rules' value of `mv` for the mover when it ends the game at once: 1 for checkmate, ½ for stalemate
/// or insufficient material (fifty-move draws must be claimed, so they do not count).
fn rules_value(state: &ChessState, mv: Move) -> Option<f64> {
    let after = state.play(mv).ok()?;
    match after.outcome()? {
        Outcome::Win { winner, .. } => Some(if winner == state.to_move() { 1.0 } else { 0.0 }),
        Outcome::Draw { reason: OutcomeReason::Stalemate | OutcomeReason::InsufficientMaterial } => Some(0.5),
        Outcome::Draw { .. } => None,
    }
}

/// The model's values of a move, replaced by the rules' value for a move that ends the game.
fn move_values(state: &ChessState, mv: Move, model: Values) -> Values {
    match rules_value(state, mv) {
        Some(v) => Values { value: v, compare: v },
        None => model,
    }
}

fn san(state: &ChessState, mv: Move) -> String {
    SanPlus::from_move(state.position().clone(), mv).to_string()
}

/// The played and best move's values from one model answer.
fn from_model(p: &Pending, result: &EvalResult<ChessState>, scoring: Scoring) -> Result<Valued, ReviewError> {
    let not_valued = || ReviewError::MoveNotValued { ply: p.ply, san: san(&p.state, p.mv) };
    if !result.has_values() && !result.moves.is_empty() {
        return Err(ReviewError::NoValues);
    }
    let valued: Vec<(Move, Values)> = result
        .moves
        .iter()
        .filter_map(|m| Some((m.action, move_values(&p.state, m.action, values(m.dist.as_ref()?, scoring)))))
        .collect();
    let played_v = valued.iter().find(|(mv, _)| *mv == p.mv).map(|&(_, v)| v).ok_or_else(not_valued)?;
    let (best_move, best_v) = valued
        .iter()
        .copied()
        .reduce(|best, m| if m.1.value > best.1.value { m } else { best })
        .ok_or_else(not_valued)?;
    Ok(Valued {
        played: played_v,
        best: best_v,
        best_move,
        before: best_v.value,
        after: played_v.value,
        search: None,
    })
}

/// The played and best move's values from an MCTS of `simulations` from the position of pending move `i`
/// (searched with the game's positions before it).
fn from_search<E: Evaluator<ChessState> + ?Sized>(
    pending: &[Pending],
    i: usize,
    evaluator: &mut E,
    options: &ReviewOptions,
    simulations: u64,
) -> Result<Valued, ReviewError> {
    let p = &pending[i];
    let search_err = |source| ReviewError::Search { ply: p.ply, source };
    let params = MctsParams { scoring: options.scoring, ..MctsParams::default() };
    let mut mcts = Mcts::new(p.state.clone(), p.ply.saturating_sub(1), params).map_err(search_err)?;
    mcts.set_root_history(history_before(pending, i));
    mcts.run(evaluator, RunLimits { simulations, batch_size: options.batch_size }).map_err(search_err)?;
    let snapshot = mcts.snapshot();
    let not_valued = || ReviewError::MoveNotValued { ply: p.ply, san: san(&p.state, p.mv) };
    let played_text = p.state.action_to_text(p.mv);
    let best_move = mcts.best_action().ok_or_else(not_valued)?;
    let best_text = p.state.action_to_text(best_move);
    let stats = |text: &str| snapshot.moves.iter().find(|m| m.action == text);
    let (played, best) =
        (stats(&played_text).ok_or_else(not_valued)?, stats(&best_text).ok_or_else(not_valued)?);
    let model = |m: &crate::search::mcts::MoveStats, mv: Move| match m.value_or_model(options.scoring) {
        Some(value) => {
            let compare = m.value(options.scoring.tie_breaker()).unwrap_or(value);
            Ok(move_values(&p.state, mv, Values { value, compare }))
        }
        None => Err(not_valued()),
    };
    let (played_v, best_v) = (model(played, p.mv)?, model(best, best_move)?);
    let value = |m: &crate::search::mcts::MoveStats, mv: Move, v: Values| match rules_value(&p.state, mv) {
        Some(rules) => rules,
        None => m.q.unwrap_or(v.value),
    };
    Ok(Valued {
        played: played_v,
        best: best_v,
        best_move,
        before: value(best, best_move, best_v),
        after: value(played, p.mv, played_v),
        search: Some(SearchInfo { simulations, best_visits: best.visits, played_visits: played.visits }),
    })
}

/// The main line's moves to review and the null moves skipped.
fn pending_moves(tree: &GameTree) -> Result<(Vec<Pending>, usize), ReviewError> {
    let positions = tree.mainline_positions()?;
    let mut pending = Vec::new();
    let mut skipped = 0;
    for (i, pair) in positions.windows(2).enumerate() {
        let (before, (node, _)) = (&pair[0].1, &pair[1]);
        let ply = u32::try_from(i + 1).unwrap_or(u32::MAX);
        match tree.node(*node).and_then(|n| n.mv()) {
            Some(mv) => pending.push(Pending { node: *node, ply, state: before.clone(), mv }),
            None => skipped += 1,
        }
    }
    Ok((pending, skipped))
}

/// The game's positions before the one of pending move `i`, oldest first, as far as the pending moves follow
/// each other (at most [`crate::search::mcts::HISTORY_KEPT`]).
fn history_before(pending: &[Pending], i: usize) -> Vec<ChessState> {
    let mut history = Vec::new();
    let mut j = i;
    while j > 0 && history.len() < crate::search::mcts::HISTORY_KEPT {
        let prev = &pending[j - 1];
        if prev.state.play(prev.mv).ok().as_ref() != Some(&pending[j].state) {
            break;
        }
        history.push(prev.state.clone());
        j -= 1;
    }
    history.reverse();
    history
}

/// The request for the position before pending move `i`, with the game's positions before it (a model that
/// reads history, an lc0 network, sees them).
fn request_for(pending: &[Pending], i: usize) -> EvalRequest<ChessState> {
    EvalRequest { history: history_before(pending, i), ..EvalRequest::values(pending[i].state.clone()) }
}

/// The model calls a review without search needs: one request per main-line move (the position before
/// it, every legal move's value), in game order. Answer them in this order to [`review_from_results`]
/// (any evaluator, any batching: the app sends them through its engine in one go).
pub fn review_requests(tree: &GameTree) -> Result<Vec<EvalRequest<ChessState>>, ReviewError> {
    let (pending, _) = pending_moves(tree)?;
    Ok((0..pending.len()).map(|i| request_for(&pending, i)).collect())
}

/// The review of `tree` from the answers to [`review_requests`] (in the same order): the same review
/// [`review_game`] makes without search. `options.simulations` is ignored.
pub fn review_from_results(
    tree: &GameTree,
    results: &[Result<EvalResult<ChessState>, crate::inference::evaluator::EvalError>],
    options: &ReviewOptions,
) -> Result<GameReview, ReviewError> {
    options.validate()?;
    let (pending, skipped) = pending_moves(tree)?;
    let mut valued = Vec::with_capacity(pending.len());
    for (i, p) in pending.iter().enumerate() {
        valued.push(from_answer(p, results.get(i), options.scoring)?);
    }
    summarise(pending, valued, skipped, options)
}

/// The values of one position from its answer (an error, or a missing answer, fails the review).
fn from_answer(
    p: &Pending,
    result: Option<&Result<EvalResult<ChessState>, crate::inference::evaluator::EvalError>>,
    scoring: Scoring,
) -> Result<Valued, ReviewError> {
    match result {
        Some(Ok(r)) => from_model(p, r, scoring),
        Some(Err(e)) => Err(ReviewError::Eval { ply: p.ply, source: e.clone() }),
        None => Err(ReviewError::Eval {
            ply: p.ply,
            source: crate::inference::evaluator::EvalError::Backend(
                "the evaluator returned fewer results than requests".into(),
            ),
        }),
    }
}

/// The model's view of each pending move (in order), from one model answer per position, against the
/// judge's valued moves.
fn model_views<M: Evaluator<ChessState> + ?Sized>(
    pending: &[Pending],
    valued: &[Valued],
    model: &mut M,
    options: &ReviewOptions,
) -> Result<Vec<ModelView>, ReviewError> {
    let mut views = Vec::with_capacity(pending.len());
    let batch = options.batch_size.max(1);
    for (c, (chunk, judged)) in pending.chunks(batch).zip(valued.chunks(batch)).enumerate() {
        let requests: Vec<_> = (0..chunk.len()).map(|i| request_for(pending, c * batch + i)).collect();
        let results = model.evaluate(&requests);
        for (i, (p, v)) in chunk.iter().zip(judged).enumerate() {
            let result = match results.get(i) {
                Some(Ok(r)) => r,
                Some(Err(e)) => return Err(ReviewError::Eval { ply: p.ply, source: e.clone() }),
                None => {
                    let why = "the model returned fewer results than requests".to_owned();
                    let source = crate::inference::evaluator::EvalError::Backend(why);
                    return Err(ReviewError::Eval { ply: p.ply, source });
                }
            };
            views.push(model_view(p, v, result, options)?);
        }
    }
    Ok(views)
}

/// One move's [`ModelView`].
fn model_view(
    p: &Pending,
    judged: &Valued,
    result: &EvalResult<ChessState>,
    options: &ReviewOptions,
) -> Result<ModelView, ReviewError> {
    let not_valued = || ReviewError::MoveNotValued { ply: p.ply, san: san(&p.state, p.mv) };
    if !result.has_values() && !result.moves.is_empty() {
        return Err(ReviewError::NoValues);
    }
    let valued: Vec<(Move, Values)> = result
        .moves
        .iter()
        .filter_map(|m| {
            Some((m.action, move_values(&p.state, m.action, values(m.dist.as_ref()?, options.scoring))))
        })
        .collect();
    let find = |mv: Move| valued.iter().find(|(m, _)| *m == mv).map(|&(_, v)| v).ok_or_else(not_valued);
    let rank = |v: Values| 1 + valued.iter().filter(|(_, o)| o.value > v.value).count();
    let (played, best) = (find(p.mv)?, find(judged.best_move)?);
    let (favourite, favourite_v) = valued
        .iter()
        .copied()
        .reduce(|f, m| if m.1.value > f.1.value { m } else { f })
        .ok_or_else(not_valued)?;
    let loss = (favourite_v.value - played.value).max(0.0);
    let classification = options.thresholds.classify(loss);
    let judge_class = options.thresholds.classify((judged.before - judged.after).max(0.0));
    Ok(ModelView {
        played,
        best,
        played_rank: rank(played),
        best_rank: rank(best),
        moves: valued.len(),
        favourite_san: san(&p.state, favourite),
        loss,
        classification,
        disagrees: classification != judge_class,
    })
}

/// Reviews the main line of `tree` with `judge` (a UCI engine through [`super::judge::EngineJudge`], or a
/// model, as [`review_game`] does) and, when given, records `model`'s view of every move beside it: its
/// values and ranks of the played and the judge's best move, its own favourite, and whether it would have
/// classed the move differently ([`ModelView`]). `method` names the judge for the report.
pub fn review_game_beside<J, M>(
    tree: &GameTree,
    judge: &mut J,
    model: Option<&mut M>,
    options: &ReviewOptions,
    method: Option<&str>,
) -> Result<GameReview, ReviewError>
where
    J: Evaluator<ChessState> + ?Sized,
    M: Evaluator<ChessState> + ?Sized,
{
    let mut review = review_game(tree, judge, options)?;
    if let Some(model) = model {
        let (pending, _) = pending_moves(tree)?;
        let valued: Vec<Valued> = review
            .moves
            .iter()
            .zip(&pending)
            .map(|(m, p)| {
                let best_move = p
                    .state
                    .parse_action(&m.best_uci)
                    .map_err(|_| ReviewError::MoveNotValued { ply: m.ply, san: m.best_san.clone() })?;
                Ok(Valued {
                    played: m.played,
                    best: m.best,
                    best_move,
                    before: m.value_before,
                    after: m.value_after,
                    search: m.search,
                })
            })
            .collect::<Result<_, ReviewError>>()?;
        let views = model_views(&pending, &valued, model, options)?;
        for (m, view) in review.moves.iter_mut().zip(views) {
            m.model = Some(view);
        }
        let of = |white: bool| review.moves.iter().filter(|m| m.white == white).collect::<Vec<_>>();
        review.white = PlayerSummary::of(&of(true), review.white.accuracy);
        review.black = PlayerSummary::of(&of(false), review.black.accuracy);
    }
    if let Some(method) = method {
        review.method = method.to_owned();
    }
    Ok(review)
}

/// Reviews the main line of `tree` with `evaluator`.
///
/// Without search, the positions before the moves go to the model `options.batch_size` at a time, each
/// asking for every legal move's value (k = all): the best move is the one with the highest value under
/// the scoring. With `options.simulations`, each position gets its own MCTS. A move that ends the game by
/// the rules (checkmate, stalemate, insufficient material) is valued by the rules (1, ½), not the model, so
/// a mate is never a mistake. Null moves are skipped.
pub fn review_game<E: Evaluator<ChessState> + ?Sized>(
    tree: &GameTree,
    evaluator: &mut E,
    options: &ReviewOptions,
) -> Result<GameReview, ReviewError> {
    options.validate()?;
    let (pending, skipped) = pending_moves(tree)?;
    let mut valued = Vec::with_capacity(pending.len());
    match options.simulations {
        None => {
            let batch = options.batch_size.max(1);
            for (c, chunk) in pending.chunks(batch).enumerate() {
                let requests: Vec<_> =
                    (0..chunk.len()).map(|i| request_for(&pending, c * batch + i)).collect();
                let results = evaluator.evaluate(&requests);
                for (i, p) in chunk.iter().enumerate() {
                    valued.push(from_answer(p, results.get(i), options.scoring)?);
                }
            }
        }
        Some(simulations) => {
            for i in 0..pending.len() {
                valued.push(from_search(&pending, i, evaluator, options, simulations)?);
            }
        }
    }
    summarise(pending, valued, skipped, options)
}

/// Losses, classes, accuracies and summaries from the valued moves.
fn summarise(
    pending: Vec<Pending>,
    valued: Vec<Valued>,
    skipped: usize,
    options: &ReviewOptions,
) -> Result<GameReview, ReviewError> {
    let game_phases = phases(pending.iter().map(|p| p.state.position()));
    let inputs: Vec<AccuracyInput> = pending
        .iter()
        .zip(&valued)
        .map(|(p, v)| AccuracyInput {
            white: p.state.position().turn() == Color::White,
            before: v.before,
            after: v.after,
        })
        .collect();
    let (accuracies, white_accuracy, black_accuracy) = game_accuracy(&inputs);
    let mut moves = Vec::with_capacity(pending.len());
    for (i, (p, v)) in pending.iter().zip(valued).enumerate() {
        let loss = (v.before - v.after).max(0.0);
        moves.push(MoveReview {
            node: p.node,
            ply: p.ply,
            move_number: p.state.position().fullmoves().get(),
            white: inputs[i].white,
            san: san(&p.state, p.mv),
            uci: p.state.action_to_text(p.mv),
            played: v.played,
            best_san: san(&p.state, v.best_move),
            best_uci: p.state.action_to_text(v.best_move),
            best: v.best,
            value_before: v.before,
            value_after: v.after,
            loss,
            classification: options.thresholds.classify(loss),
            accuracy: accuracies[i],
            phase: game_phases[i],
            ends_game: rules_value(&p.state, p.mv).is_some(),
            search: v.search,
            model: None,
        });
    }
    let white_side = |m: &MoveReview, p: f64| if m.white { p } else { 1.0 - p };
    let mut series: Vec<f64> = moves.first().map(|m| white_side(m, m.value_before)).into_iter().collect();
    series.extend(moves.iter().map(|m| white_side(m, m.value_after)));
    let of = |white: bool| moves.iter().filter(|m| m.white == white).collect::<Vec<_>>();
    Ok(GameReview {
        method: options.describe(),
        scoring: options.scoring,
        white: PlayerSummary::of(&of(true), white_accuracy),
        black: PlayerSummary::of(&of(false), black_accuracy),
        moves,
        skipped_null_moves: skipped,
        white_win_probability: series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::material::MaterialEvaluator;
    use crate::inference::mock::HashEvaluator;
    use crate::review::classify::Classification;

    fn game(pgn: &str) -> GameTree {
        crate::pgn::reader::read_all(pgn).remove(0).expect("valid game")
    }

    #[test]
    fn each_review_request_carries_the_games_positions_before_it() {
        let tree = game("1. e4 e5 2. Nf3 Nc6 *");
        let r = review_requests(&tree).expect("requests");
        assert_eq!(r.iter().map(|q| q.history.len()).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(r[3].history[2], r[2].state);
        assert_eq!(r[3].history[0], ChessState::startpos());
    }

    #[test]
    fn a_review_with_search_searches_with_the_games_positions_before_each_move() {
        let tree = game("1. e4 e5 2. Nf3 Nc6 *");
        let options = ReviewOptions { simulations: Some(8), ..ReviewOptions::default() };
        let mut eval = crate::inference::mock::RecordingEvaluator::new(MaterialEvaluator::new(3));
        let asked = eval.asked();
        review_game(&tree, &mut eval, &options).expect("review");
        let asked = asked.borrow();
        let positions = review_requests(&tree).expect("requests");
        for (ply, want) in positions.iter().enumerate() {
            let (_, history) = asked.iter().find(|(s, _)| *s == want.state).expect("the root was valued");
            assert_eq!(history, &want.history, "ply {ply}");
        }
        // Below a root, a request's history runs on through the root.
        let last = positions.last().expect("four positions");
        let deeper = asked.iter().find(|(_, h)| h.len() == 4).expect("a leaf below the last root");
        assert_eq!(deeper.1[3], last.state);
    }

    #[test]
    fn missed_captures_are_classified_against_the_best_move() {
        let tree = game("[Event \"t\"]\n\n1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n");
        let review =
            review_game(&tree, &mut MaterialEvaluator::new(3), &ReviewOptions::default()).expect("review");
        assert_eq!(review.moves.len(), 6);
        let m = &review.moves;
        assert_eq!((m[0].san.as_str(), m[0].white, m[0].move_number, m[0].ply), ("e4", true, 1, 1));
        // 1... d5 offers a pawn; 2. Qg4 ignores it: exd5 wins a pawn (≈ 0.09 win probability).
        assert_eq!(m[2].best_san, "exd5");
        assert!(m[2].loss > 0.05 && m[2].loss < 0.12, "{}", m[2].loss);
        assert!(matches!(m[2].classification, Classification::Inaccuracy | Classification::Mistake));
        // 2... Nf6 leaves the queen on g4 alive: Bxg4 was best.
        assert_eq!(m[3].best_san, "Bxg4");
        assert!(m[3].loss > 0.4, "{}", m[3].loss);
        assert_eq!(m[3].classification, Classification::Blunder);
        // Taking the bishop, then the queen back, is best.
        assert_eq!(m[4].best_san, "Qxc8");
        assert_eq!(m[5].san, "Qxc8");
        assert_eq!(m[5].best_san, "Qxc8");
        assert_eq!(m[5].loss, 0.0);
        assert_eq!(m[5].accuracy, 100.0);
        for mv in m {
            assert!(mv.loss >= 0.0 && mv.value_before >= mv.value_after);
            assert!((0.0..=100.0).contains(&mv.accuracy));
            assert_eq!(mv.value_after, mv.played.value);
        }
        assert_eq!(review.black.blunders, 1);
        assert_eq!(review.white.inaccuracies + review.white.mistakes, 1);
        assert!(review.black.accuracy < review.white.accuracy);
        assert_eq!(review.white_win_probability.len(), 7);
        assert_eq!(review.white.moves + review.black.moves, 6);
    }

    #[test]
    fn a_mate_is_valued_by_the_rules() {
        let tree = game("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n");
        for options in
            [ReviewOptions::default(), ReviewOptions { simulations: Some(8), ..ReviewOptions::default() }]
        {
            let review = review_game(&tree, &mut MaterialEvaluator::new(1), &options).expect("review");
            let mate = review.moves.last().expect("moves");
            assert_eq!((mate.san.as_str(), mate.best_san.as_str()), ("Qxf7#", "Qxf7#"));
            assert!(mate.ends_game);
            assert_eq!((mate.value_after, mate.loss, mate.classification), (1.0, 0.0, Classification::Good));
            assert_eq!(mate.played, Values { value: 1.0, compare: 1.0 });
            assert!(!review.moves[0].ends_game);
        }
    }

    #[test]
    fn max_scoring_and_batch_size_change_nothing_structural() {
        let tree = game("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *\n");
        let mean = review_game(&tree, &mut HashEvaluator::new(1), &ReviewOptions::default()).expect("review");
        let one = ReviewOptions { batch_size: 1, ..ReviewOptions::default() };
        assert_eq!(review_game(&tree, &mut HashEvaluator::new(1), &one).expect("review"), mean);
        let max = ReviewOptions { scoring: Scoring::Max, ..ReviewOptions::default() };
        let max = review_game(&tree, &mut HashEvaluator::new(1), &max).expect("review");
        for (a, b) in mean.moves.iter().zip(&max.moves) {
            // Mean is compared with max and max with mean: the same two numbers, swapped.
            assert_eq!((a.played.value, a.played.compare), (b.played.compare, b.played.value));
            assert_eq!(b.value_after, b.played.value);
            assert_eq!(a.value_after, a.played.value);
        }
        // A rule beyond the paper's two: compared with the mean, and never above it for a cautious quantile
        // of a distribution whose mass is not all in one bucket.
        let q = ReviewOptions { scoring: Scoring::quantile(0.1).expect("q"), ..ReviewOptions::default() };
        let q = review_game(&tree, &mut HashEvaluator::new(1), &q).expect("review");
        assert_eq!(q.method, "quantile:0.1 scoring, model alone");
        for (a, b) in mean.moves.iter().zip(&q.moves) {
            assert_eq!(b.played.compare, a.played.value);
            assert_eq!(b.value_after, b.played.value);
        }
    }

    #[test]
    fn null_moves_are_skipped_and_search_reports_visits() {
        let tree = game("1. e4 -- 2. d4 e5 *\n");
        let options = ReviewOptions { simulations: Some(24), batch_size: 4, ..ReviewOptions::default() };
        let review = review_game(&tree, &mut MaterialEvaluator::new(5), &options).expect("review");
        assert_eq!(review.skipped_null_moves, 1);
        assert_eq!(review.moves.len(), 3);
        assert_eq!(review.method, "mean scoring, MCTS 24 simulations");
        for m in &review.moves {
            let s = m.search.expect("search info");
            assert_eq!(s.simulations, 24);
            if m.best_uci == m.uci {
                assert_eq!(s.best_visits, s.played_visits);
            }
            assert!(m.loss >= 0.0);
        }
        assert_eq!(review.moves[0].ply, 1);
        assert_eq!(review.moves[1].ply, 3);
    }

    #[test]
    fn a_model_beside_the_judge_records_its_view_and_disagreements() {
        let tree = game("[Event \"t\"]\n\n1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *\n");
        let options = ReviewOptions::default();
        let judged = review_game(&tree, &mut MaterialEvaluator::new(3), &options).expect("review");
        let mut judge = MaterialEvaluator::new(3);
        let mut model = HashEvaluator::new(7);
        let beside =
            review_game_beside(&tree, &mut judge, Some(&mut model), &options, Some("judge")).expect("review");
        assert_eq!(beside.method, "judge");
        let mut disagreements = 0;
        for (a, b) in judged.moves.iter().zip(&beside.moves) {
            // The judge's numbers are those of a review without a model.
            assert_eq!((a.loss, a.classification, &a.best_san), (b.loss, b.classification, &b.best_san));
            let v = b.model.as_ref().expect("a model view");
            assert!((1..=v.moves).contains(&v.played_rank) && (1..=v.moves).contains(&v.best_rank));
            assert_eq!(v.disagrees, v.classification != b.classification);
            assert!(v.loss >= 0.0);
            disagreements += usize::from(v.disagrees);
        }
        assert_eq!(beside.white.model_disagrees + beside.black.model_disagrees, disagreements);
        // The same model as judge and beside agrees with itself everywhere.
        let mut same = MaterialEvaluator::new(3);
        let itself =
            review_game_beside(&tree, &mut MaterialEvaluator::new(3), Some(&mut same), &options, None)
                .expect("review");
        assert!(
            itself.moves.iter().all(|m| m.model.as_ref().is_some_and(|v| !v.disagrees && v.best_rank == 1))
        );
        assert_eq!(itself.method, options.describe());
    }
}
