//! Constrained decoding of one request (paper §2, "the rules give the legal moves"): the model chooses
//! which legal move to write next and its value, but can only write legal moves, each once, exactly as
//! many as `%top_k` asks for, and nothing but the format's fixed tokens around them. A move's value
//! distribution is the softmax of the value-token logits where the model writes its value; the
//! best-action distribution is the softmax of the logits of the listed moves where it writes
//! `%best_action`.
//!
//! [`ConstrainedRow`] is pure logic over logits (no ONNX), driven one token at a time by the decoder
//! loop: it returns the token to feed next; fixed tokens are queued and fed without a decision.

use std::collections::VecDeque;

use super::tokens::{FormatTokens, TokensError};
use crate::mav::command::{Command, StateFormat, TopK};

/// The most tokens a predicted state line may take before decoding gives up on it.
pub const MAX_STATE_TOKENS: usize = 160;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Move,
    Value,
    Best,
    State,
    Done,
}

/// One request's constrained decoding.
#[derive(Debug, Clone)]
pub struct ConstrainedRow {
    queue: VecDeque<u32>,
    phase: Phase,
    /// Token id of each legal move (same order as the request's legal moves).
    candidates: Vec<u32>,
    used: Vec<bool>,
    listed: usize,
    pending: usize,
    want_best: bool,
    /// The state line after the best action: its format, when asked.
    after: Option<StateFormat>,
    close: Vec<u32>,
    newline: Vec<u32>,
    colon: u32,
    space: u32,
    values: Vec<u32>,
    eos: u32,
    best_opening: Vec<u32>,
    state_opening: Vec<u32>,
    /// Every token written after the prompt, in order.
    pub generated: Vec<u32>,
    /// The moves written, as (index into the legal moves, value distribution over the buckets).
    pub written: Vec<(usize, Vec<f64>)>,
    /// The best-action distribution over `written` (same order) and the index of the chosen move in it.
    pub best: Option<(Vec<f64>, usize)>,
    /// The tokens of the state line after the best action (between `[%FEN ` and `]`), when asked.
    pub state_tokens: Vec<u32>,
}

/// The index of the largest logit among `ids`.
fn argmax(ids: impl Iterator<Item = (usize, u32)>, logits: &[f32]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, id) in ids {
        let l = logits.get(id as usize).copied().unwrap_or(f32::NEG_INFINITY);
        if best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.map(|(i, _)| i)
}

/// Softmax of the logits of `ids` (a missing id counts as −∞).
pub fn softmax_over(ids: &[u32], logits: &[f32]) -> Vec<f64> {
    let xs: Vec<f64> =
        ids.iter().map(|&id| logits.get(id as usize).map_or(f64::NEG_INFINITY, |&l| f64::from(l))).collect();
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return vec![1.0 / ids.len().max(1) as f64; ids.len()];
    }
    let e: Vec<f64> = xs.iter().map(|x| (x - max).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

impl ConstrainedRow {
    /// A row that writes `prefix` (output lines the rules fill in, e.g. the tracked state), then the
    /// `%top_k` line over `candidates` (the legal moves' token ids), then `%best_action` and the state
    /// after it when asked.
    pub fn new(
        tokens: &FormatTokens,
        prefix: Vec<u32>,
        k: TopK,
        candidates: Vec<u32>,
        want_best: bool,
        after: Option<StateFormat>,
    ) -> Result<ConstrainedRow, TokensError> {
        let listed = k.listed(candidates.len());
        let mut queue: VecDeque<u32> = prefix.into();
        queue.extend(tokens.top_opening(k)?);
        queue.push_back(tokens.space);
        let state_opening = match after {
            Some(f) => tokens.state_opening(f)?,
            None => Vec::new(),
        };
        Ok(ConstrainedRow {
            queue,
            phase: if listed == 0 { Phase::Done } else { Phase::Move },
            used: vec![false; candidates.len()],
            candidates,
            listed,
            pending: 0,
            want_best,
            after,
            close: tokens.close.clone(),
            newline: tokens.newline.clone(),
            colon: tokens.colon,
            space: tokens.space,
            values: tokens.values.clone(),
            eos: tokens.eos,
            best_opening: tokens.opening(Command::BestAction)?,
            state_opening,
            generated: Vec::new(),
            written: Vec::new(),
            best: None,
            state_tokens: Vec::new(),
        })
    }

    /// True once nothing is left to write: the last token returned need not be fed to the model.
    pub fn finished(&self) -> bool {
        self.phase == Phase::Done && self.queue.is_empty()
    }

    fn after_line(&mut self) {
        self.queue.extend(self.close.iter().copied());
        if self.after.is_some() {
            self.queue.extend(self.newline.iter().copied());
            self.queue.extend(self.state_opening.iter().copied());
            self.queue.push_back(self.space);
            self.phase = Phase::State;
        } else {
            self.phase = Phase::Done;
        }
    }

    /// Given the logits for the next position, the token written there; `None` once finished.
    pub fn next(&mut self, logits: &[f32]) -> Option<u32> {
        if let Some(t) = self.queue.pop_front() {
            self.generated.push(t);
            return Some(t);
        }
        let token = match self.phase {
            Phase::Done => return None,
            Phase::Move => {
                let open = self.candidates.iter().copied().enumerate().filter(|&(i, _)| !self.used[i]);
                let i = argmax(open, logits)?;
                self.used[i] = true;
                self.pending = i;
                self.queue.push_back(self.colon);
                self.phase = Phase::Value;
                self.candidates[i]
            }
            Phase::Value => {
                let probs = softmax_over(&self.values, logits);
                let b = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i);
                self.written.push((self.pending, probs));
                if self.written.len() < self.listed {
                    self.queue.push_back(self.space);
                    self.phase = Phase::Move;
                } else {
                    self.queue.extend(self.close.iter().copied());
                    if self.want_best {
                        self.queue.extend(self.newline.iter().copied());
                        self.queue.extend(self.best_opening.iter().copied());
                        self.queue.push_back(self.space);
                        self.phase = Phase::Best;
                    } else {
                        self.phase = Phase::Done;
                    }
                }
                self.values[b]
            }
            Phase::Best => {
                let ids: Vec<u32> = self.written.iter().map(|&(i, _)| self.candidates[i]).collect();
                let probs = softmax_over(&ids, logits);
                let j = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(j, _)| j);
                self.best = Some((probs, j));
                self.after_line();
                ids[j]
            }
            Phase::State => {
                let t = argmax(logits.iter().enumerate().map(|(i, _)| (i, i as u32)), logits)
                    .map_or(self.eos, |i| i as u32);
                let ends = self.close.last() == Some(&t) || self.newline.last() == Some(&t) || t == self.eos;
                if ends || self.state_tokens.len() >= MAX_STATE_TOKENS {
                    self.phase = Phase::Done;
                } else {
                    self.state_tokens.push(t);
                }
                t
            }
        };
        self.generated.push(token);
        Some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use crate::mav::buckets::Buckets;
    use crate::mav::command::Layout;
    use crate::mav::example::{ExampleSpec, MoveOrder, MoveValue, render_example};
    use crate::mav::tokenizer::Tokenizer;

    fn tokens() -> FormatTokens {
        let t = Tokenizer::new();
        let ids: Vec<u32> = (0..64).map(|i| t.id_of(&format!("<ctrl{i}>")).expect("ctrl")).collect();
        FormatTokens::new(t.clone(), &ids, t.eos_id()).expect("vocabulary")
    }

    /// Logits that prefer `want` strongly and `second` a little.
    fn logits_for(vocab: usize, want: u32, second: Option<u32>) -> Vec<f32> {
        let mut l = vec![0.0; vocab];
        l[want as usize] = 10.0;
        if let Some(s) = second {
            l[s as usize] = 5.0;
        }
        l
    }

    /// Drives a row with an oracle that, at each decision, prefers the token the rendered example has
    /// there: the row must then write exactly the tokenization of the rendered response.
    #[test]
    fn writes_exactly_what_the_example_writer_renders() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let state = ChessState::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
            .expect("fen");
        let legal = state.legal_actions();
        let values: Vec<_> =
            legal.iter().enumerate().map(|(i, a)| (*a, MoveValue::Bucket((i * 7 % 64) as u32))).collect();
        let layout = Layout::parse("<mav game=chess> %FEN %top_5 %best_action %FEN </mav>").expect("header");
        // The best action is the most valuable move (the renderer lists the k most valuable).
        let best = values.iter().max_by_key(|(_, v)| match v {
            MoveValue::Bucket(b) => *b,
            MoveValue::WinProb(_) => 0,
        });
        let best = best.map(|(a, _)| *a).expect("legal moves");
        let ex = render_example(&ExampleSpec {
            layout: &layout,
            previous: None,
            state: &state,
            values: &values,
            best: Some(best),
            order: MoveOrder::Shuffled(7),
            buckets: Buckets::mav(),
        })
        .expect("example");
        let expected = f.tokenizer.encode(&ex.response());
        let candidates: Vec<u32> =
            legal.iter().map(|a| f.move_id(&state.action_to_text(*a)).expect("move token")).collect();
        let mut row =
            ConstrainedRow::new(&f, Vec::new(), TopK::Count(5), candidates, true, Some(StateFormat::Fen))
                .expect("row");
        let mut pos = 0;
        let mut fed = Vec::new();
        while let Some(t) = row.next(&logits_for(vocab, expected.get(pos).copied().unwrap_or(0), None)) {
            fed.push(t);
            pos += 1;
            if row.finished() {
                break;
            }
        }
        assert_eq!(f.tokenizer.decode(&fed).expect("ids"), ex.response());
        assert_eq!(fed, expected);
        assert_eq!(row.written.len(), 5);
        let (probs, j) = row.best.clone().expect("best asked");
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(legal[row.written[j].0], best);
        for (_, d) in &row.written {
            assert_eq!(d.len(), 64);
        }
    }

    #[test]
    fn never_writes_an_illegal_or_repeated_move() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let state = ChessState::default();
        let legal = state.legal_actions();
        let candidates: Vec<u32> =
            legal.iter().map(|a| f.move_id(&state.action_to_text(*a)).expect("move")).collect();
        let mut row =
            ConstrainedRow::new(&f, Vec::new(), TopK::All, candidates.clone(), false, None).expect("row");
        // The model always wants e7e5 (illegal for White) and then e2e4 (legal once).
        let illegal = f.move_id("e7e5").expect("token");
        let e2e4 = f.move_id("e2e4").expect("token");
        let mut moves = Vec::new();
        let mut steps = 0;
        while let Some(t) = row.next(&logits_for(vocab, illegal, Some(e2e4))) {
            if candidates.contains(&t) {
                moves.push(t);
            }
            assert_ne!(t, illegal);
            steps += 1;
            assert!(steps < 1000, "decoding must end");
            if row.finished() {
                break;
            }
        }
        assert_eq!(moves.len(), 20);
        assert_eq!(moves[0], e2e4);
        let mut sorted = moves.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 20, "each legal move once");
        assert_eq!(row.written.len(), 20);
        assert!(row.best.is_none());
    }
}
