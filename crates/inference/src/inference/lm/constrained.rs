//! Constrained decoding of one request (paper §2, "the rules give the legal moves"): the model chooses
//! which legal move to write next and its value, but can only write legal moves, each once, exactly as
//! many as `%top_k` asks for, and nothing but the format's fixed tokens around them. A move's value
//! distribution is the softmax of the value-token logits where the model writes its value; the
//! best-action distribution is the softmax of the logits of the listed moves where it writes
//! `%best_action`.
//!
//! A move may take several tokens (a Hex cell: `c` `1` `0`). The row then chooses it one token at a time
//! among the moves that still match what it wrote (a walk down the trie of the candidates); where one move
//! is a prefix of another (`c1`, `c10`), the token that ends a move (`:` after a listed move, `]` after
//! the best action) is one of the choices. The best-action distribution is then the probability of each
//! move's path as far as the decoder walked it: a first token's probability is shared equally between
//! the moves that begin with it, except along the path taken, where each further token's conditional
//! probability splits it (exact for the chosen move, a sum of 1 always). With one token per move (chess,
//! Connect Four) it is the softmax over the moves' tokens.
//!
//! [`ConstrainedRow`] is pure logic over logits (no ONNX), driven one token at a time by the decoder
//! loop: it returns the token to feed next; fixed tokens are queued and fed without a decision.

use std::collections::VecDeque;

use super::tokens::{FormatTokens, TokensError};
use crate::mav::command::{Command, StateFormat, TopK};

/// The most tokens a predicted state line may take before decoding gives up on it: room for the
/// longest state line of any game (a 13×13 Hex board writes 169 cells and their spaces) with a margin.
pub const MAX_STATE_TOKENS: usize = 512;

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
    /// The tokens of each legal move (same order as the request's legal moves).
    candidates: Vec<Vec<u32>>,
    used: Vec<bool>,
    /// The move being chosen: the candidates (indices) that still match, and how many tokens are written.
    walk: Walk,
    /// The best-action probability of each written move (same order as `written`), while it is chosen.
    best_mass: Vec<f64>,
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

/// A choice among token sequences in progress: the sequences that still match the tokens written, and
/// how many are written.
#[derive(Debug, Clone, Default)]
struct Walk {
    open: Vec<usize>,
    depth: usize,
}

impl Walk {
    /// The option each open sequence takes next: its next token, or `end` when it is complete.
    fn option(seqs: &[Vec<u32>], i: usize, depth: usize, end: u32) -> u32 {
        seqs[i].get(depth).copied().unwrap_or(end)
    }

    /// The distinct options, in first-seen order.
    fn options(&self, seqs: &[Vec<u32>], end: u32) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for &i in &self.open {
            let o = Walk::option(seqs, i, self.depth, end);
            if !out.contains(&o) {
                out.push(o);
            }
        }
        out
    }

    /// Keeps the sequences that take `token`; returns the one that ended, when `token` is `end` or the
    /// only sequence left is complete.
    fn take(&mut self, seqs: &[Vec<u32>], token: u32, end: u32) -> Option<usize> {
        let depth = self.depth;
        self.open.retain(|&i| Walk::option(seqs, i, depth, end) == token);
        if token == end {
            return self.open.first().copied();
        }
        self.depth += 1;
        match self.open.as_slice() {
            [only] if seqs[*only].len() == self.depth => Some(*only),
            _ => None,
        }
    }
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
    /// `%top_k` line over `candidates` (the legal moves' tokens, at least one each), then `%best_action`
    /// and the state after it when asked.
    pub fn new(
        tokens: &FormatTokens,
        prefix: Vec<u32>,
        k: TopK,
        candidates: Vec<Vec<u32>>,
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
        let listed = if candidates.iter().any(Vec::is_empty) { 0 } else { listed };
        Ok(ConstrainedRow {
            queue,
            phase: if listed == 0 { Phase::Done } else { Phase::Move },
            used: vec![false; candidates.len()],
            walk: Walk { open: (0..candidates.len()).collect(), depth: 0 },
            best_mass: Vec::new(),
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

    /// Queues the end of the best-action line (its closing tokens but the first `close_written`) and the
    /// state line's opening when asked.
    fn after_line(&mut self, close_written: usize) {
        self.queue.extend(self.close.iter().skip(close_written).copied());
        if self.after.is_some() {
            self.queue.extend(self.newline.iter().copied());
            self.queue.extend(self.state_opening.iter().copied());
            self.queue.push_back(self.space);
            self.phase = Phase::State;
        } else {
            self.phase = Phase::Done;
        }
    }

    /// Whether the next token is a fixed one, written without reading the logits.
    pub fn forced(&self) -> bool {
        !self.queue.is_empty()
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
                let options = self.walk.options(&self.candidates, self.colon);
                let t = options[argmax(options.iter().copied().enumerate(), logits)?];
                if let Some(i) = self.walk.take(&self.candidates, t, self.colon) {
                    self.used[i] = true;
                    self.pending = i;
                    if t != self.colon {
                        self.queue.push_back(self.colon);
                    }
                    self.phase = Phase::Value;
                }
                t
            }
            Phase::Value => {
                let probs = softmax_over(&self.values, logits);
                let b = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i);
                self.written.push((self.pending, probs));
                if self.written.len() < self.listed {
                    self.queue.push_back(self.space);
                    self.phase = Phase::Move;
                    let used = &self.used;
                    self.walk = Walk { open: (0..used.len()).filter(|&i| !used[i]).collect(), depth: 0 };
                } else {
                    self.queue.extend(self.close.iter().copied());
                    if self.want_best {
                        self.queue.extend(self.newline.iter().copied());
                        self.queue.extend(self.best_opening.iter().copied());
                        self.queue.push_back(self.space);
                        self.phase = Phase::Best;
                        self.walk = Walk { open: (0..self.written.len()).collect(), depth: 0 };
                        self.best_mass = vec![1.0 / self.written.len() as f64; self.written.len()];
                    } else {
                        self.phase = Phase::Done;
                    }
                }
                self.values[b]
            }
            Phase::Best => {
                let seqs: Vec<Vec<u32>> =
                    self.written.iter().map(|&(i, _)| self.candidates[i].clone()).collect();
                let end = self.close.first().copied().unwrap_or(self.eos);
                let options = self.walk.options(&seqs, end);
                let probs = softmax_over(&options, logits);
                // The open moves' mass, split by the options' probabilities and equally among the moves
                // that take the same option.
                let mass: f64 = self.walk.open.iter().map(|&j| self.best_mass[j]).sum();
                let depth = self.walk.depth;
                let option_of = |j: usize| Walk::option(&seqs, j, depth, end);
                for &j in &self.walk.open {
                    let o = option_of(j);
                    let sharing = self.walk.open.iter().filter(|&&k| option_of(k) == o).count();
                    let p = options.iter().position(|&x| x == o).map_or(0.0, |x| probs[x]);
                    self.best_mass[j] = mass * p / sharing as f64;
                }
                let pick = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(x, _)| x);
                let t = options[pick];
                if let Some(j) = self.walk.take(&seqs, t, end) {
                    self.best = Some((std::mem::take(&mut self.best_mass), j));
                    // When the move ended on the closing token, that token is written already.
                    self.after_line(usize::from(t == end));
                }
                t
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
        let candidates: Vec<Vec<u32>> =
            legal.iter().map(|a| vec![f.move_id(&state.action_to_text(*a)).expect("move token")]).collect();
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

    /// Hex cells take several tokens (`c1`, `c10`, `c11`: one is a prefix of the others): the row must still
    /// write exactly the rendered response, and the best-action distribution must sum to 1 with the
    /// most probable move the one it wrote.
    #[test]
    fn multi_token_moves_are_written_token_by_token() {
        use crate::game::hex::HexState;
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let mut state = HexState::new(11).expect("11x11");
        for m in ["f6", "c1", "k11"] {
            state = state.play(state.parse_action(m).expect("cell")).expect("legal");
        }
        let legal = state.legal_actions();
        let values: Vec<_> =
            legal.iter().enumerate().map(|(i, a)| (*a, MoveValue::Bucket((i * 13 % 64) as u32))).collect();
        let best = values
            .iter()
            .max_by_key(|(_, v)| match v {
                MoveValue::Bucket(b) => *b,
                MoveValue::WinProb(_) => 0,
            })
            .map(|(a, _)| *a)
            .expect("legal moves");
        let layout =
            Layout::parse("<mav game=hex> %state %top_all %best_action %state </mav>").expect("header");
        let ex = render_example(&ExampleSpec {
            layout: &layout,
            previous: None,
            state: &state,
            values: &values,
            best: Some(best),
            order: MoveOrder::Shuffled(3),
            buckets: Buckets::mav(),
        })
        .expect("example");
        let expected = f.tokenizer.encode(&ex.response());
        let candidates: Vec<Vec<u32>> =
            legal.iter().map(|a| f.move_tokens(&state.action_to_text(*a)).expect("cell tokens")).collect();
        assert!(candidates.iter().any(|c| c.len() == 3), "two-digit rows take three tokens");
        let mut row =
            ConstrainedRow::new(&f, Vec::new(), TopK::All, candidates, true, Some(StateFormat::State))
                .expect("row");
        let mut fed = Vec::new();
        while let Some(t) = row.next(&logits_for(vocab, expected.get(fed.len()).copied().unwrap_or(0), None))
        {
            fed.push(t);
            assert!(fed.len() < 5000, "decoding must end");
            if row.finished() {
                break;
            }
        }
        assert_eq!(f.tokenizer.decode(&fed).expect("ids"), ex.response());
        assert_eq!(row.written.len(), legal.len());
        let (probs, j) = row.best.clone().expect("best asked");
        assert_eq!(probs.len(), legal.len());
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{}", probs.iter().sum::<f64>());
        assert_eq!(legal[row.written[j].0], best);
        let top = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i);
        assert_eq!(top, Some(j));
    }

    /// Where a move is a prefix of another, the model's choice between ending it and going on decides.
    #[test]
    fn a_move_that_is_a_prefix_of_another_can_end_or_go_on() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let seq = |m: &str| f.move_tokens(m).expect("tokens");
        let (c1, c10) = (seq("c1"), seq("c10"));
        assert_eq!(&c10[..c1.len()], &c1[..]);
        for (prefer_end, want) in [(true, 0usize), (false, 1usize)] {
            let mut row = ConstrainedRow::new(
                &f,
                Vec::new(),
                TopK::Count(1),
                vec![c1.clone(), c10.clone()],
                false,
                None,
            )
            .expect("row");
            let zero = seq("0")[0];
            let mut steps = 0;
            while row.next(&logits_for(vocab, if prefer_end { f.colon } else { zero }, Some(c1[0]))).is_some()
            {
                steps += 1;
                assert!(steps < 100);
                if row.finished() {
                    break;
                }
            }
            assert_eq!(row.written.iter().map(|w| w.0).collect::<Vec<_>>(), vec![want]);
            let text = f.tokenizer.decode(&row.generated).expect("ids");
            assert!(text.contains(if want == 0 { " c1:" } else { " c10:" }), "{text}");
        }
    }

    #[test]
    fn never_writes_an_illegal_or_repeated_move() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let state = ChessState::default();
        let legal = state.legal_actions();
        let candidates: Vec<Vec<u32>> =
            legal.iter().map(|a| vec![f.move_id(&state.action_to_text(*a)).expect("move")]).collect();
        let mut row =
            ConstrainedRow::new(&f, Vec::new(), TopK::All, candidates.clone(), false, None).expect("row");
        // The model always wants e7e5 (illegal for White) and then e2e4 (legal once).
        let illegal = f.move_id("e7e5").expect("token");
        let e2e4 = f.move_id("e2e4").expect("token");
        let mut moves = Vec::new();
        let mut steps = 0;
        while let Some(t) = row.next(&logits_for(vocab, illegal, Some(e2e4))) {
            if candidates.contains(&vec![t]) {
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
