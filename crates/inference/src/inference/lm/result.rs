//! Turning a finished decoding row into an [`EvalResult`]. Pure logic over the row's tokens and recorded
//! distributions (no ONNX), so garbage output can be tested without a model.
//!
//! Constrained rows can only have written legal moves; free rows are read by the protocol module's tolerant
//! parser ([`parse_response`]) and whatever is wrong becomes [`Hallucination`]s — never an error.

use super::constrained::{ConstrainedRow, softmax_over};
use super::free::FreeRow;
use super::tokens::FormatTokens;
use crate::game::GameState;
use crate::inference::evaluator::{
    EvalError, EvalRequest, EvalResult, EvalTiming, Hallucination, MoveValue, PredictedState,
};
use crate::mav::buckets::{Buckets, ValueDistribution};
use crate::mav::command::{Layout, Role, StateFormat};
use crate::mav::response::{HallucinationKind, parse_response};
use crate::mav::state::MavState;

/// What every result of one model needs: its vocabulary, buckets and context.
#[derive(Debug, Clone, Copy)]
pub struct ResultContext<'a> {
    /// The model's format tokens.
    pub tokens: &'a FormatTokens,
    /// The model's value buckets.
    pub buckets: Buckets,
    /// The model's context length.
    pub context: usize,
}

/// A short class name for a hallucination (what the UI counts and filters by).
pub fn kind_name(kind: &HallucinationKind) -> &'static str {
    match kind {
        HallucinationKind::MalformedLine { .. } => "malformed line",
        HallucinationKind::UnknownToken { .. } => "unknown token",
        HallucinationKind::IllegalMove { .. } => "illegal move",
        HallucinationKind::DuplicateMove { .. } => "duplicate move",
        HallucinationKind::MissingLegalMoves { .. } => "missing legal moves",
        HallucinationKind::WrongMoveCount { .. } => "wrong move count",
        HallucinationKind::WrongState { .. } => "wrong state",
        HallucinationKind::WrongOutcome { .. } => "wrong outcome",
        HallucinationKind::MissingLine => "missing line",
        HallucinationKind::UnexpectedLine => "unexpected line",
    }
}

/// An empty result for `req` (no moves), with the rules' terminal outcome.
pub fn empty_result<S: GameState>(req: &EvalRequest<S>, timing: EvalTiming) -> EvalResult<S> {
    EvalResult {
        moves: Vec::new(),
        best_action: None,
        next_state: None,
        tracked_state: None,
        terminal: req.state.outcome(),
        raw_text: String::new(),
        hallucinations: Vec::new(),
        timing,
        position: None,
    }
}

fn dist(buckets: Buckets, probs: Vec<f64>) -> Result<ValueDistribution, EvalError> {
    ValueDistribution::from_probs(buckets, probs).map_err(|e| EvalError::Backend(e.to_string()))
}

fn decode(tokens: &FormatTokens, ids: &[u32]) -> String {
    tokens.tokenizer.decode(ids).unwrap_or_else(|e| format!("<undecodable output: {e}>"))
}

/// The result of a constrained row. `legal` are the request's legal moves in the order the row's candidates
/// were given; `after` the format of the state line after the best action (when asked).
pub fn constrained_result<S: MavState>(
    cx: ResultContext<'_>,
    req: &EvalRequest<S>,
    legal: &[S::Action],
    row: ConstrainedRow,
    after: StateFormat,
    timing: EvalTiming,
) -> Result<EvalResult<S>, EvalError> {
    let mut result = empty_result(req, timing);
    result.raw_text = decode(cx.tokens, &row.generated);
    for (i, probs) in row.written {
        let a = *legal
            .get(i)
            .ok_or_else(|| EvalError::Backend(format!("decoding wrote candidate {i} of {}", legal.len())))?;
        result.moves.push(MoveValue::valued(a, req.state.action_to_text(a), dist(cx.buckets, probs)?));
    }
    let chosen = row.best.as_ref().and_then(|(_, j)| result.moves.get(*j)).cloned();
    result.best_action = row.best.map(|(p, _)| p);
    if req.want_next_state {
        let text = decode(cx.tokens, &row.state_tokens);
        let state = S::from_mav_text(req.state.kind(), after, &text).ok();
        // The rules' state after the model's best move, to report a wrong prediction.
        if let Some(mv) = chosen
            && let Ok(truth) = req.state.play(mv.action)
            && let Ok(expected) = truth.render(after)
            && expected != text
        {
            result.hallucinations.push(Hallucination {
                kind: "wrong state".into(),
                detail: format!("after {} the model wrote '{text}', expected '{expected}'", mv.text),
            });
        }
        result.next_state = Some(PredictedState { text, state });
    }
    Ok(result)
}

/// The result of a free row: the parser reads the text written after the prompt of `layout`; every legal
/// move it finds keeps the value distribution recorded where the model wrote its value (a one-hot of the
/// written bucket if none was recorded). `truncated`: the row hit the model's context before `<eos>`.
pub fn free_result<S: MavState>(
    cx: ResultContext<'_>,
    req: &EvalRequest<S>,
    layout: &Layout,
    row: FreeRow,
    truncated: bool,
    timing: EvalTiming,
) -> Result<EvalResult<S>, EvalError> {
    let mut result = empty_result(req, timing);
    let text = decode(cx.tokens, &row.generated);
    let first_line = 2 + layout.input_count();
    let parsed = parse_response(layout, &req.state, cx.buckets, &text, first_line);
    for (a, bucket) in &parsed.top {
        let t = req.state.action_to_text(*a);
        let ids = cx.tokens.move_tokens(&t);
        let recorded = row.valued.iter().find(|(v, _)| Some(v) == ids.as_ref()).map(|(_, p)| p.clone());
        let d = match recorded {
            Some(p) => dist(cx.buckets, p)?,
            None => ValueDistribution::one_hot(cx.buckets, *bucket)
                .map_err(|e| EvalError::Backend(e.to_string()))?,
        };
        result.moves.push(MoveValue::valued(*a, t, d));
    }
    if (req.want_best_action || req.want_next_state) && !result.moves.is_empty() {
        let ids: Vec<u32> = result.moves.iter().filter_map(|m| cx.tokens.move_id(&m.text)).collect();
        if let Some(l) = &row.best_logits
            && ids.len() == result.moves.len()
        {
            result.best_action = Some(softmax_over(&ids, l));
        } else if let Some(b) = &parsed.best
            && let Some(i) = result.moves.iter().position(|m| m.action == *b)
        {
            // Moves of several tokens (Hex cells): one row of logits cannot weigh them, so the answer is
            // the move the model wrote.
            let mut p = vec![0.0; result.moves.len()];
            p[i] = 1.0;
            result.best_action = Some(p);
        }
    }
    for (role, written) in &parsed.states {
        let predicted = |f| PredictedState {
            text: written.clone(),
            state: S::from_mav_text(req.state.kind(), f, written).ok(),
        };
        match role {
            Role::After(f) if result.next_state.is_none() => result.next_state = Some(predicted(*f)),
            Role::Current(f) if req.previous.is_some() && result.tracked_state.is_none() => {
                result.tracked_state = Some(predicted(*f));
            }
            _ => {}
        }
    }
    result.hallucinations = parsed
        .hallucinations
        .iter()
        .map(|h| Hallucination { kind: kind_name(&h.kind).into(), detail: h.to_string() })
        .collect();
    if truncated {
        result.hallucinations.push(Hallucination {
            kind: "too long".into(),
            detail: format!("the output reached the model's context of {} tokens before <eos>", cx.context),
        });
    }
    result.raw_text = text;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::inference::lm::prompt::{PromptOptions, layout_for};
    use crate::mav::command::TopK;
    use crate::mav::tokenizer::Tokenizer;

    fn tokens() -> FormatTokens {
        let t = Tokenizer::new();
        let ids: Vec<u32> = (0..64).map(|i| t.id_of(&format!("<ctrl{i}>")).expect("ctrl")).collect();
        FormatTokens::new(t.clone(), &ids, t.eos_id()).expect("vocabulary")
    }

    /// Drives a free row through `script` (token ids), as a model that writes exactly that would.
    fn scripted(f: &FormatTokens, script: &[u32], budget: usize) -> FreeRow {
        let vocab = f.tokenizer.vocab_size();
        let mut row = FreeRow::new(f, budget);
        for &want in script {
            let mut l = vec![0.0f32; vocab];
            l[want as usize] = 3.0;
            if row.next(&l).is_none() {
                break;
            }
        }
        row
    }

    fn request(k: TopK) -> (EvalRequest<ChessState>, Layout) {
        let mut req = EvalRequest::values(ChessState::startpos());
        req.top_k = k;
        req.mode = crate::inference::evaluator::DecodeMode::Free;
        req.want_best_action = true;
        let layout = layout_for(&req, &PromptOptions::default()).expect("header");
        (req, layout)
    }

    #[test]
    fn garbage_is_reported_as_hallucinations_not_errors() {
        let f = tokens();
        let cx = ResultContext { tokens: &f, buckets: Buckets::mav(), context: 768 };
        let (req, layout) = request(TopK::Count(3));
        // Illegal, duplicate and unknown pieces, a broken line, no %best_action, and no <eos> (truncated).
        let text = "[%top_3 e2e4:<ctrl40> e7e5:<ctrl3> e2e4:<ctrl9> g1f3:e2e4]\n]]] [%FEN";
        let row = scripted(&f, &f.tokenizer.encode(text), 10_000);
        let r = free_result(cx, &req, &layout, row, true, EvalTiming::default()).expect("garbage is data");
        assert_eq!(r.raw_text, text);
        assert_eq!(r.moves.len(), 1, "only e2e4 is legal, valued and listed once: {:?}", r.moves);
        assert_eq!(r.moves[0].text, "e2e4");
        let sum: f64 = r.moves[0].dist.as_ref().expect("valued").probs().iter().sum();
        assert!((sum - 1.0).abs() < 1e-9);
        let kinds: Vec<&str> = r.hallucinations.iter().map(|h| h.kind.as_str()).collect();
        for k in
            ["illegal move", "duplicate move", "unknown token", "malformed line", "missing line", "too long"]
        {
            assert!(kinds.contains(&k), "{k} not in {kinds:?}");
        }
        // Pure noise: still a result.
        let noise: Vec<u32> = (3..200).collect();
        let row = scripted(&f, &noise, 10_000);
        let r = free_result(cx, &req, &layout, row, false, EvalTiming::default()).expect("noise is data");
        assert!(r.moves.is_empty());
        assert!(!r.hallucinations.is_empty());
    }

    /// The result of a model that writes `text` and ends it.
    fn answer<S: MavState>(
        cx: ResultContext<'_>,
        req: &EvalRequest<S>,
        layout: &Layout,
        text: &str,
    ) -> EvalResult<S> {
        let mut script = cx.tokens.tokenizer.encode(text);
        script.push(cx.tokens.eos);
        let row = scripted(cx.tokens, &script, 10_000);
        free_result(cx, req, layout, row, false, EvalTiming::default()).expect("clean")
    }

    #[test]
    fn a_clean_answer_has_no_hallucinations_and_a_best_action() {
        let f = tokens();
        let cx = ResultContext { tokens: &f, buckets: Buckets::mav(), context: 768 };
        let (req, layout) = request(TopK::Count(2));
        let r = answer(cx, &req, &layout, "[%top_2 d2d4:<ctrl33> e2e4:<ctrl34>]\n[%best_action e2e4]");
        assert!(r.hallucinations.is_empty(), "{:?}", r.hallucinations);
        let texts: Vec<&str> = r.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["d2d4", "e2e4"]);
        let best = r.best_action.expect("asked for");
        assert_eq!(best.len(), 2);
        assert!((best.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_hex_answer_keeps_its_written_best_action_and_values() {
        use crate::game::hex::HexState;
        let f = tokens();
        let cx = ResultContext { tokens: &f, buckets: Buckets::mav(), context: 768 };
        let state = HexState::new(5).expect("5x5");
        let mut req = EvalRequest::values(state);
        req.top_k = TopK::Count(2);
        req.mode = crate::inference::evaluator::DecodeMode::Free;
        req.want_best_action = true;
        let layout = layout_for(&req, &PromptOptions::default()).expect("header");
        let r = answer(cx, &req, &layout, "[%top_2 c3:<ctrl40> a1:<ctrl12>]\n[%best_action c3]");
        assert!(r.hallucinations.is_empty(), "{:?}", r.hallucinations);
        let texts: Vec<&str> = r.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["c3", "a1"]);
        // The values come from the logits recorded at each value token (the scripted row puts most of the
        // mass on the written bucket), not from a one-hot fallback.
        let p40 = r.moves[0].dist.as_ref().expect("valued").probs()[40];
        assert!(p40 > 0.2 && p40 < 1.0, "{p40}");
        assert_eq!(r.best_action, Some(vec![1.0, 0.0]), "the written best action");
    }
}
