//! MAV-MCTS over mock evaluators and real chess positions.

use crate::common;

use common::chess;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{EvalError, EvalRequest, EvalResult, Evaluator};
use mavboard::inference::material::MaterialEvaluator;
use mavboard::inference::mock::HashEvaluator;
use mavboard::search::SearchError;
use mavboard::search::mcts::{
    Completion, FirstPlayValue, Mcts, MctsParams, NodeStatus, RunLimits, VirtualCounts, WorldModel,
};
use proptest::prelude::*;

/// White mates with Ra8#; by material every move is equal.
const MATE_IN_ONE: &str = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1";
/// Black wins a bishop with Rxb2?? but then Re8# follows; every other move keeps the balance.
const DONT_ALLOW_MATE: &str = "1r4k1/5ppp/8/8/8/8/1B3PPP/4R1K1 b - - 0 1";

/// The model's own favourite in `state` (highest value), as text.
fn model_choice<E: Evaluator<ChessState>>(e: &mut E, state: &ChessState) -> String {
    let r = e.evaluate(&[EvalRequest::values(state.clone())]).remove(0).expect("mock answers");
    let best = r
        .moves
        .iter()
        .max_by(|a, b| mavboard::inference::evaluator::MoveValue::by_mean_value(b, a))
        .expect("the position has moves");
    best.text.clone()
}

fn search(
    state: ChessState,
    params: MctsParams,
    e: &mut impl Evaluator<ChessState>,
    sims: u64,
    b: usize,
) -> Mcts<ChessState> {
    let mut m = Mcts::new(state, 0, params).expect("valid params");
    m.run(e, RunLimits { simulations: sims, batch_size: b }).expect("search runs");
    m.check_consistency().expect("consistent tree");
    m
}

#[test]
fn finds_a_mate_in_one_the_model_does_not_see() {
    let s = chess(MATE_IN_ONE);
    let mate = s.parse_action("a1a8").expect("legal");
    let mut e = MaterialEvaluator::new(3);
    assert_ne!(
        model_choice(&mut e, &s),
        "a1a8",
        "the test needs a model that does not already prefer the mate"
    );
    for b in [1, 16] {
        let m = search(s.clone(), MctsParams::default(), &mut e, 400, b);
        assert_eq!(m.best_action(), Some(mate), "b = {b}: {:#?}", m.snapshot().moves.first());
        let snap = m.snapshot();
        assert_eq!(snap.best.as_deref(), Some("a1a8"));
        assert_eq!(snap.moves[0].action, "a1a8");
        assert_eq!(snap.moves[0].q, Some(1.0));
        assert_eq!(snap.moves[0].status, NodeStatus::Terminal);
        assert!(snap.totals.stats.terminal_simulations > 0);
    }
}

#[test]
fn avoids_a_capture_that_allows_mate_in_one() {
    let s = chess(DONT_ALLOW_MATE);
    let mut e = MaterialEvaluator::new(5);
    assert_eq!(model_choice(&mut e, &s), "b8b2", "the model alone grabs the bishop");
    for b in [1, 16] {
        let m = search(s.clone(), MctsParams::default(), &mut e, 1500, b);
        let best = m.snapshot().best.expect("a move");
        assert_ne!(best, "b8b2", "b = {b}");
        let after = m.children_by_text(&["b8b2"]).expect("b8b2 was expanded");
        let re8 = after.iter().find(|c| c.action == "e1e8").expect("Re8 is a reply");
        assert_eq!(re8.status, NodeStatus::Terminal, "b = {b}: the mate was seen");
    }
}

#[test]
fn root_visits_equal_simulations_and_the_root_eval_is_shared() {
    let s = ChessState::startpos();
    let mut m = Mcts::new(s, 0, MctsParams::default()).expect("valid");
    // Before the root is evaluated, one pass asks for it and the others collide on it.
    let batch = m.select_batch(16);
    assert_eq!(batch.evals.len(), 1);
    assert_eq!(batch.collisions, 15);
    assert!(m.is_root_pending());
    let mut e = HashEvaluator::new(1);
    let r = e.evaluate(&[batch.evals[0].request.clone()]).remove(0);
    assert_eq!(m.complete(batch.evals[0].ticket, r), Completion::Applied);
    assert_eq!(m.root_visits(), 0, "the root's own evaluation is not a simulation");
    m.run(&mut e, RunLimits { simulations: 100, batch_size: 8 }).expect("runs");
    assert_eq!(u64::from(m.root_visits()), m.stats().simulations);
    assert_eq!(m.stats().simulations, 100);
    assert_eq!(m.virtual_count_total(), 0);
    m.check_consistency().expect("consistent");
}

#[test]
fn late_results_are_discarded() {
    let mut e = HashEvaluator::new(2);
    let mut m = search(ChessState::startpos(), MctsParams::default(), &mut e, 20, 4);
    let batch = m.select_batch(4);
    assert_eq!(batch.evals.len(), 4);
    assert!(m.virtual_count_total() > 0);
    let results = e.evaluate(&batch.evals.iter().map(|t| t.request.clone()).collect::<Vec<_>>());
    let visits = m.root_visits();
    // The first evaluation times out; the others come back in reverse order.
    assert!(m.abandon(batch.evals[0].ticket));
    assert!(!m.abandon(batch.evals[0].ticket));
    let mut results: Vec<_> = results.into_iter().collect();
    for (t, r) in batch.evals.iter().zip(results.drain(..)).skip(1).rev() {
        assert_eq!(m.complete(t.ticket, r), Completion::Applied);
        m.check_consistency().expect("consistent after each result");
    }
    assert_eq!(m.virtual_count_total(), 0);
    let late = e.evaluate(&[batch.evals[0].request.clone()]).remove(0);
    assert_eq!(m.complete(batch.evals[0].ticket, late), Completion::Discarded);
    assert_eq!(m.root_visits(), visits + 3);
    assert_eq!(m.stats().discarded, 1);
    assert_eq!(m.stats().abandoned, 1);
    m.check_consistency().expect("consistent");
}

/// A tree holds its moves' values under one rule: a new scoring starts a new tree, and is refused while
/// evaluations are out. Every rule searches to a legal move.
#[test]
fn a_new_scoring_starts_a_new_tree_and_every_rule_searches() {
    use mavboard::mav::scoring::Scoring;
    let mut e = HashEvaluator::new(2);
    let mut m = search(ChessState::startpos(), MctsParams::default(), &mut e, 20, 4);
    assert!(m.root_visits() >= 20 && m.tree_size() > 1);
    let same = MctsParams { c_puct: 2.0, ..m.params().clone() };
    m.set_params(same).expect("same scoring");
    assert!(m.root_visits() >= 20, "the tree is kept");
    let batch = m.select_batch(2);
    assert!(!batch.evals.is_empty());
    let quantile = Scoring::quantile(0.25).expect("q");
    let err =
        m.set_params(MctsParams { scoring: quantile, ..m.params().clone() }).expect_err("evaluations out");
    assert!(matches!(err, SearchError::ScoringChangedMidSearch { .. }), "{err}");
    assert!(err.to_string().contains("quantile:0.25"), "{err}");
    m.abandon_all();
    m.set_params(MctsParams { scoring: quantile, ..m.params().clone() }).expect("nothing out");
    assert_eq!((m.root_visits(), m.tree_size(), m.params().scoring), (0, 1, quantile));
    for rule in Scoring::ALL {
        let m = search(
            ChessState::startpos(),
            MctsParams { scoring: rule, ..MctsParams::default() },
            &mut e,
            32,
            4,
        );
        m.check_consistency().expect("consistent");
        let best = m.best_action().expect("a move");
        assert!(ChessState::startpos().legal_actions().contains(&best), "{rule}");
        let snap = m.snapshot();
        assert_eq!(snap.scoring, rule);
        for mv in &snap.moves {
            // The search's value of a move is its rule's value of the kept distribution.
            let derived = mv.value(rule).expect("kept at the root");
            assert!((mv.model.expect("valued") - derived).abs() < 1e-6, "{rule}: {mv:?}");
        }
    }
}

/// Drives the state machine the way the engine would, with results out of order and random timeouts.
fn drive(seed: u64, b: usize, rounds: usize, abandon_mask: u64, params: MctsParams) -> Mcts<ChessState> {
    let mut e = HashEvaluator::new(seed);
    let mut m = Mcts::new(ChessState::startpos(), 0, params).expect("valid");
    let mut late = Vec::new();
    for round in 0..rounds {
        let batch = m.select_batch(b);
        let requests: Vec<_> = batch.evals.iter().map(|t| t.request.clone()).collect();
        let results = e.evaluate(&requests);
        let mut pairs: Vec<_> = batch.evals.iter().map(|t| t.ticket).zip(results).enumerate().collect();
        // A seeded shuffle of the arrival order.
        pairs.sort_by_key(|(i, _)| {
            (*i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed.rotate_left(round as u32)
        });
        for (i, (ticket, r)) in pairs {
            if (abandon_mask >> ((i + round) % 64)) & 1 == 1 {
                assert!(m.abandon(ticket));
                late.push((ticket, r));
            } else {
                m.complete(ticket, r);
            }
        }
        assert_eq!(m.virtual_count_total(), 0, "round {round}");
        assert_eq!(u64::from(m.root_visits()), m.stats().simulations, "round {round}");
        m.check_consistency().expect("consistent");
    }
    for (t, r) in late {
        assert_eq!(m.complete(t, r), Completion::Discarded);
    }
    m.check_consistency().expect("consistent");
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn bookkeeping_holds_under_any_arrival_order(
        seed in any::<u64>(),
        b in 1usize..20,
        rounds in 1usize..25,
        abandon_mask in any::<u64>(),
        dynamic in any::<bool>(),
        fpu in 0u8..3,
    ) {
        let params = MctsParams {
            seed,
            virtual_counts: if dynamic { VirtualCounts::Dynamic { n_max: 8, n_min: 2 } } else { VirtualCounts::Fixed(3) },
            first_play: [FirstPlayValue::Loss, FirstPlayValue::Draw, FirstPlayValue::ModelValue][fpu as usize],
            ..MctsParams::default()
        };
        let m = drive(seed, b, rounds, abandon_mask, params);
        prop_assert_eq!(m.virtual_count_total(), 0);
        prop_assert_eq!(u64::from(m.root_visits()), m.stats().simulations);
    }
}

#[test]
fn same_seed_same_search() {
    let run = |seed| {
        let mut e = HashEvaluator::new(11);
        let params = MctsParams { seed, first_play: FirstPlayValue::Loss, ..MctsParams::default() };
        let m = search(ChessState::startpos(), params, &mut e, 300, 16);
        serde_json::to_string(&m.snapshot()).expect("snapshot serialises")
    };
    assert_eq!(run(4), run(4));
    let m = drive(9, 7, 12, 0x0102_0304_0506_0708, MctsParams::default());
    let again = drive(9, 7, 12, 0x0102_0304_0506_0708, MctsParams::default());
    assert_eq!(
        serde_json::to_string(&m.snapshot()).expect("serialises"),
        serde_json::to_string(&again.snapshot()).expect("serialises")
    );
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let mut e = HashEvaluator::new(21);
    let mut m = search(ChessState::startpos(), MctsParams::default(), &mut e, 400, 16);
    let best = m.best_action().expect("a move");
    let snap = m.snapshot();
    let played =
        snap.moves.iter().find(|mv| Some(mv.action.as_str()) == snap.best.as_deref()).expect("best listed");
    let below = m.children(&[best]).expect("expanded");
    let reused = m.advance(best).expect("legal move");
    assert!(reused > 1, "the played move's subtree had evaluated nodes");
    assert_eq!(m.stats().reused_evaluations, reused);
    assert_eq!(m.root_visits(), played.visits);
    assert_eq!(m.root_ply(), 1);
    let kept = m.children(&[]).expect("root");
    assert_eq!(kept, below, "the new root's children keep their statistics");
    m.check_consistency().expect("consistent after reuse");
    // Searching on needs fewer model calls than starting over for the same N(root).
    let calls_before = e.calls;
    let target = 400u64;
    let more = target - u64::from(m.root_visits());
    m.run(&mut e, RunLimits { simulations: more, batch_size: 16 }).expect("runs");
    let reuse_calls = e.calls - calls_before;
    let mut fresh_e = HashEvaluator::new(21);
    let fresh = search(m.root_state().clone(), MctsParams::default(), &mut fresh_e, target, 16);
    assert_eq!(u64::from(fresh.root_visits()), target);
    assert!(reuse_calls < fresh_e.calls, "reuse {reuse_calls} calls vs fresh {}", fresh_e.calls);
    println!(
        "tree reuse: {reused} evaluated nodes kept; N(root) {target} reached with {reuse_calls} model calls \
         instead of {}",
        fresh_e.calls
    );
    // A move the search never expanded starts a fresh tree.
    let s = m.root_state().clone();
    let unexplored = m
        .children(&[])
        .expect("root")
        .into_iter()
        .find(|c| c.visits == 0)
        .map(|c| s.parse_action(&c.action).expect("legal"));
    if let Some(a) = unexplored {
        assert_eq!(m.advance(a).expect("legal"), 0);
        assert_eq!(m.tree_size(), 1);
    }
}

#[test]
fn learned_world_model_counts_hallucinations_and_avoids_failed_nodes() {
    let mut e = HashEvaluator::new(5);
    e.break_every = 6;
    let params = MctsParams { world_model: WorldModel::Learned, ..MctsParams::default() };
    let m = search(ChessState::startpos(), params, &mut e, 300, 8);
    let st = m.stats();
    assert!(st.failed > 0, "some predictions were broken");
    assert_eq!(st.hallucinations, st.failed, "each broken prediction reported one hallucination");
    assert_eq!(u64::from(m.root_visits()), st.simulations);
    for c in m.children(&[]).expect("root") {
        if c.status == NodeStatus::Failed {
            assert_eq!(c.visits, 0, "{} failed and was never backed up", c.action);
            assert_eq!(c.hallucinations, 0, "a failed node has no stored evaluation");
        }
    }
    // The requests carried the previous state and asked for the next one.
    let mut m2 = Mcts::new(
        ChessState::startpos(),
        0,
        MctsParams { world_model: WorldModel::Learned, ..MctsParams::default() },
    )
    .expect("valid");
    m2.run(&mut HashEvaluator::new(5), RunLimits { simulations: 0, batch_size: 1 }).expect("runs");
    let first = m2.select_batch(1);
    let r = HashEvaluator::new(5).evaluate(&[first.evals[0].request.clone()]).remove(0);
    m2.complete(first.evals[0].ticket, r);
    let next = m2.select_batch(1);
    let req = &next.evals[0].request;
    assert!(req.previous.is_some(), "learned mode asks the model to track the state");
    assert_eq!(req.mode, mavboard::inference::evaluator::DecodeMode::Free);
}

/// Fails every request whose position hash is divisible by `every`.
struct Flaky {
    inner: HashEvaluator,
    every: u64,
}

impl Evaluator<ChessState> for Flaky {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        let mut out = self.inner.evaluate(requests);
        for (r, o) in requests.iter().zip(out.iter_mut()) {
            if r.state.hash64().is_multiple_of(self.every) {
                *o = Err(EvalError::Backend("simulated worker crash".into()));
            }
        }
        out
    }
}

#[test]
fn model_errors_fail_nodes_and_a_failed_root_is_an_error() {
    let mut e = Flaky { inner: HashEvaluator::new(8), every: 5 };
    let m = search(ChessState::startpos(), MctsParams::default(), &mut e, 300, 16);
    assert!(m.stats().failed > 0);
    assert_eq!(u64::from(m.root_visits()), m.stats().simulations);
    let mut always = Flaky { inner: HashEvaluator::new(8), every: 1 };
    let mut m = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("valid");
    let err = m.run(&mut always, RunLimits { simulations: 10, batch_size: 4 }).expect_err("root fails");
    assert!(matches!(err, SearchError::RootEvaluation(_)), "{err}");
    assert_eq!(m.virtual_count_total(), 0);
}

#[test]
fn terminal_root_and_bad_settings() {
    let mated = chess("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1");
    let mut m = Mcts::new(mated, 0, MctsParams::default()).expect("valid");
    assert!(m.is_stuck());
    let b = m.select_batch(16);
    assert!(!b.made_progress());
    assert_eq!(m.best_action(), None);
    assert!(
        Mcts::new(ChessState::startpos(), 0, MctsParams { prior_top_k: 0, ..MctsParams::default() }).is_err()
    );
    let mut m = Mcts::new(ChessState::startpos(), 0, MctsParams::default()).expect("valid");
    assert!(m.run(&mut HashEvaluator::new(1), RunLimits { simulations: 5, batch_size: 0 }).is_err());
    assert!(matches!(m.children_by_text(&["e2e4"]), Err(SearchError::NotInTree { index: 0, .. })));
    assert!(matches!(m.children_by_text(&["e2e5"]), Err(SearchError::IllegalAction { .. })));
}

#[test]
fn snapshot_reports_root_moves() {
    let mut e = HashEvaluator::new(13);
    let m = search(ChessState::startpos(), MctsParams::default(), &mut e, 200, 16);
    let s = m.snapshot();
    assert_eq!(s.moves.len(), 20);
    let total: u32 = s.moves.iter().map(|mv| mv.visits).sum();
    assert_eq!(total, s.totals.root_visits);
    let share: f64 = s.moves.iter().map(|mv| mv.visit_share).sum();
    assert!((share - 1.0).abs() < 1e-9);
    let prior: f64 = s.moves.iter().map(|mv| mv.prior).sum();
    assert!((prior - 1.0).abs() < 1e-5);
    for mv in &s.moves {
        let d = mv.distribution.as_ref().expect("root moves keep distributions");
        assert_eq!(d.len(), 64);
        // The search's own value is its scoring's (mean here) of the kept distribution.
        let own = mv.model.expect("valued");
        assert!(
            (own - mv.value(mavboard::mav::scoring::Scoring::Mean).expect("derived")).abs() < 1e-6,
            "{own}"
        );
    }
    assert!(s.moves.windows(2).all(|w| w[0].visits >= w[1].visits));
    assert_eq!(s.pv.first(), s.best.as_ref());
    assert_eq!(s.totals.tree_size, m.tree_size());
    assert_eq!(s.totals.stats.model_calls, e.calls);
}

#[test]
fn overlapping_batches_stay_consistent() {
    // The engine may select a new batch while the previous one is still out.
    let mut e = HashEvaluator::new(17);
    let mut m = search(ChessState::startpos(), MctsParams::default(), &mut e, 50, 16);
    let mut out = Vec::new();
    for round in 0..30 {
        let batch = m.select_batch(8);
        let results = e.evaluate(&batch.evals.iter().map(|t| t.request.clone()).collect::<Vec<_>>());
        out.extend(batch.evals.iter().map(|t| t.ticket).zip(results));
        // Deliver the older half, keep the rest out over the next selection.
        let keep = out.len() / 2;
        let ready: Vec<_> = out.drain(..out.len() - keep).collect();
        for (t, r) in ready.into_iter().rev() {
            assert_eq!(m.complete(t, r), Completion::Applied, "round {round}");
        }
        m.check_consistency().expect("consistent with evaluations out");
        assert_eq!(m.in_flight(), out.len());
    }
    for (t, r) in out {
        m.complete(t, r);
    }
    assert_eq!(m.virtual_count_total(), 0);
    assert_eq!(u64::from(m.root_visits()), m.stats().simulations);
    m.check_consistency().expect("consistent");
}

#[test]
fn root_moves_restrict_the_search_and_a_mating_line_reports_its_result() {
    let s = chess(MATE_IN_ONE);
    let mut e = MaterialEvaluator::new(3);
    // Only two quiet moves may be searched: the mate is neither searched nor chosen.
    let only = MctsParams { root_moves: vec!["h2h3".into(), "g1f1".into()], ..MctsParams::default() };
    let mut m = search(s.clone(), only, &mut e, 200, 8);
    let snap = m.snapshot();
    assert!(["h2h3", "g1f1"].contains(&snap.best.as_deref().unwrap_or("")), "{:?}", snap.best);
    for stats in &snap.moves {
        let allowed = ["h2h3", "g1f1"].contains(&stats.action.as_str());
        assert_eq!(stats.visits > 0, allowed, "{}: {} visits", stats.action, stats.visits);
    }
    assert!(snap.totals.stats.max_depth >= 2, "{:?}", snap.totals.stats);
    // Lifting the restriction on the same tree lets the search find the mate; its line ends in it.
    m.set_params(MctsParams::default()).expect("valid");
    m.run(&mut e, RunLimits { simulations: 400, batch_size: 8 }).expect("search runs");
    let snap = m.snapshot();
    assert_eq!(snap.best.as_deref(), Some("a1a8"));
    assert_eq!((snap.pv.as_slice(), snap.pv_result), (&["a1a8".to_owned()][..], Some(1.0)));
    assert_eq!(m.pv_outcome(), (1, Some(1.0)));
    assert_eq!(snap.moves[0].pv_result, Some(1.0));
    // A move that is not legal at the root is refused, and the old settings stay.
    let bad = MctsParams { root_moves: vec!["e2e4".into()], ..MctsParams::default() };
    assert!(matches!(m.set_params(bad.clone()), Err(SearchError::IllegalAction { .. })));
    assert!(Mcts::new(s, 0, bad).is_err());
    assert_eq!(m.best_action().map(|a| m.root_state().action_to_text(a)).as_deref(), Some("a1a8"));
}

/// A policy without values (as a behavioural-cloning model answers): the mock's moves with their values
/// dropped and a probability each instead, proportional to the mock's mean value squared.
struct PolicyOnly(HashEvaluator);

impl Evaluator<ChessState> for PolicyOnly {
    fn evaluate(
        &mut self,
        requests: &[EvalRequest<ChessState>],
    ) -> Vec<Result<EvalResult<ChessState>, EvalError>> {
        self.0
            .evaluate(requests)
            .into_iter()
            .map(|r| {
                r.map(|mut r| {
                    let w: Vec<f64> = r
                        .moves
                        .iter()
                        .map(|m| m.dist.as_ref().expect("valued").mean_value().powi(2))
                        .collect();
                    let sum: f64 = w.iter().sum();
                    r.best_action = Some(w.iter().map(|x| x / sum).collect());
                    for m in &mut r.moves {
                        m.dist = None;
                    }
                    r
                })
            })
            .collect()
    }
}

#[test]
fn a_policy_without_values_gives_the_root_its_priors_and_the_search_ends_there() {
    let mut e = PolicyOnly(HashEvaluator::new(3));
    let start = ChessState::startpos();
    let answer = e.evaluate(&[EvalRequest::values(start.clone())]).remove(0).expect("answers");
    let policy = answer.best_action.clone().expect("a policy");
    let m = search(start, MctsParams::default(), &mut e, 200, 8);
    assert_eq!(m.stats().simulations, 0, "nothing below the root has a value to back up");
    assert_eq!(m.stats().failed, 0);
    assert!(m.is_stuck());
    let snap = m.snapshot();
    assert_eq!(snap.moves.len(), 20);
    for s in &snap.moves {
        let i = answer.moves.iter().position(|m| m.text == s.action).expect("a listed move");
        assert_eq!(s.policy, Some(f64::from(policy[i] as f32)), "{}: the policy is the prior", s.action);
        assert!((s.prior - policy[i]).abs() < 1e-6 && s.model.is_none() && s.distribution.is_none());
    }
    // The move played is the policy's most likely one.
    let (best, _) = answer.best_by(mavboard::mav::scoring::Scoring::Mean).expect("a best move");
    assert_eq!(snap.best.as_deref(), Some(start_text(&best).as_str()));
}

fn start_text(mv: &<ChessState as GameState>::Action) -> String {
    ChessState::startpos().action_to_text(*mv)
}

/// AlphaZero's split: the values from one model, the prior from another's policy
/// ([`mavboard::search::mcts::PriorSource::Policy`]): every root move's prior is the policy with the ε
/// uniform share, and the search still backs values up below the root.
#[test]
fn a_policy_from_another_model_is_the_prior_and_the_values_are_backed_up() {
    use mavboard::inference::policy_value::PolicyAndValue;
    use mavboard::search::mcts::PriorSource;
    let start = ChessState::startpos();
    let policy_answer = PolicyOnly(HashEvaluator::new(3))
        .evaluate(&[EvalRequest::values(start.clone())])
        .remove(0)
        .expect("ok");
    let policy = policy_answer.best_action.clone().expect("a policy");
    let mut both = PolicyAndValue {
        value: Box::new(HashEvaluator::new(8)),
        policy: Box::new(PolicyOnly(HashEvaluator::new(3))),
    };
    let params = MctsParams { prior_source: PriorSource::Policy, ..MctsParams::default() };
    let eps = params.epsilon;
    let m = search(start, params.clone(), &mut both, 200, 8);
    assert!(m.stats().simulations >= 150, "values are backed up: {:?}", m.stats());
    let snap = m.snapshot();
    assert_eq!(snap.moves.len(), 20);
    for s in &snap.moves {
        let i = policy_answer.moves.iter().position(|m| m.text == s.action).expect("a listed move");
        let want = (1.0 - eps) * policy[i] + eps / 20.0;
        assert!((s.prior - want).abs() < 1e-6, "{}: prior {} vs {want}", s.action, s.prior);
        assert!(s.model.is_some(), "{}: valued by the value model", s.action);
        // The policy's own probability is kept beside the values (the panel's policy column).
        let p = s.policy.expect("the policy beside the values");
        assert!((p - policy[i]).abs() < 1e-6, "{}: policy {p} vs {}", s.action, policy[i]);
    }
    // With the values' prior (Eq. 1) the same two models give another prior.
    let mut both = PolicyAndValue {
        value: Box::new(HashEvaluator::new(8)),
        policy: Box::new(PolicyOnly(HashEvaluator::new(3))),
    };
    let eq1 = search(ChessState::startpos(), MctsParams::default(), &mut both, 50, 8).snapshot();
    assert!(eq1.moves.iter().zip(&snap.moves).any(|(a, b)| (a.prior - b.prior).abs() > 1e-3));
}
