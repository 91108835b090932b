//! Decoding against a server that writes text rather than handing out logits (an LLM engine behind the
//! OpenAI completions API): the server is asked for its greedy continuation with the top log-probabilities
//! at every position, and a [`Cursor`] walks that continuation as far as mavboard's own decoding agrees
//! with it.
//!
//! The log-probabilities the server lists at a position were computed after the prompt and the tokens the
//! server wrote before it. While mavboard's row feeds exactly those tokens, the next position's list is
//! valid for it too; the first token it feeds that differs (the rules chose another move, a fixed token the
//! model would not have written) makes the rest of the continuation stale, and the next position is asked
//! for anew, from the prompt and every token fed. A model that writes what the rules allow is decoded in
//! one request; each disagreement costs one more. Fixed tokens a row writes without a decision are fed
//! without asking for anything.
//!
//! The log-probabilities stand in for logits (a softmax over any subset of tokens is the same); the tokens
//! the server did not list count as −∞, so a distribution over buckets misses exactly the buckets outside
//! the listed top.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub use crate::inference::continuer::{Continuer, Step};
use crate::inference::remote::RemoteError;

/// Where one decoding stands against a [`Continuer`]: the tokens fed so far and the part of the server's
/// last continuation that is still valid after them.
pub struct Cursor<'a> {
    source: &'a dyn Continuer,
    ids: Vec<u32>,
    ahead: VecDeque<Step>,
    vocab: usize,
    context: usize,
    /// Tokens to ask for next: doubled after a continuation used to its end, cut to twice what was used of
    /// one that went stale, within `1..=max_chunk`.
    chunk: usize,
    max_chunk: usize,
    /// Tokens fed from the current continuation.
    used: usize,
    /// Requests made.
    pub requests: u32,
    /// Time spent waiting for the server.
    pub waited: Duration,
}

impl std::fmt::Debug for Cursor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("len", &self.ids.len())
            .field("ahead", &self.ahead.len())
            .field("requests", &self.requests)
            .finish()
    }
}

impl<'a> Cursor<'a> {
    /// A cursor after `prompt`, over a vocabulary of `vocab` tokens, asking for at most `max_chunk` tokens
    /// at a time (fewer while decoding keeps disagreeing with the server) and never past `context`.
    pub fn new(
        source: &'a dyn Continuer,
        prompt: Vec<u32>,
        vocab: usize,
        context: usize,
        max_chunk: usize,
    ) -> Cursor<'a> {
        let max_chunk = max_chunk.max(1);
        Cursor {
            source,
            ids: prompt,
            ahead: VecDeque::new(),
            vocab,
            context,
            chunk: max_chunk.min(16),
            max_chunk,
            used: 0,
            requests: 0,
            waited: Duration::ZERO,
        }
    }

    /// The tokens so far (prompt and fed).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing was fed and the prompt is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The next position's log-probabilities over the whole vocabulary in `out` (unlisted tokens −∞),
    /// asking the server when its continuation does not reach this far.
    pub fn logits(&mut self, out: &mut Vec<f32>) -> Result<(), RemoteError> {
        if self.ahead.is_empty() {
            if self.requests > 0 && self.used > 0 {
                // The last continuation was used to its end: ask for more at once.
                self.chunk = (self.chunk * 2).min(self.max_chunk);
            }
            self.used = 0;
            let room = self.context.saturating_sub(self.ids.len());
            if room == 0 {
                // The decoders never ask past the context; this names the case should one do so.
                return Err(RemoteError::Truncated {
                    url: "mavboard's decoder".into(),
                    written: 0,
                    asked: 0,
                    reason: "the package's context is full".into(),
                    context: self.context,
                });
            }
            let started = Instant::now();
            let steps = self.source.continue_greedy(&self.ids, self.chunk.min(room))?;
            self.waited += started.elapsed();
            self.requests += 1;
            self.ahead.extend(steps);
        }
        let Some(step) = self.ahead.front() else {
            return Err(RemoteError::Malformed {
                url: "the server".into(),
                reason: "a completion with no token".into(),
            });
        };
        out.clear();
        out.resize(self.vocab, f32::NEG_INFINITY);
        for &(id, lp) in &step.top {
            if let Some(slot) = out.get_mut(id as usize) {
                *slot = lp;
            }
        }
        Ok(())
    }

    /// Feeds `token`: the server's continuation stays valid if it wrote the same token here.
    pub fn feed(&mut self, token: u32) {
        match self.ahead.front() {
            Some(step) if step.token == token => {
                self.ahead.pop_front();
                self.used += 1;
            }
            Some(_) => {
                // Stale from here: what was used says how far the server and the decoding agree.
                self.chunk = (2 * (self.used + 1)).clamp(1, self.max_chunk);
                self.ahead.clear();
                self.used = 0;
            }
            None => {}
        }
        self.ids.push(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A deterministic "model" over 5 tokens: the logits of the next token depend on the sum of the ids.
    struct Toy {
        calls: AtomicU32,
    }

    fn toy_logits(ids: &[u32]) -> Vec<f32> {
        let s: u32 = ids.iter().sum::<u32>() + ids.len() as u32;
        (0..5u32).map(|t| -(((s + 3 * t) % 7) as f32)).collect()
    }

    impl Continuer for Toy {
        fn continue_greedy(&self, ids: &[u32], max_tokens: usize) -> Result<Vec<Step>, RemoteError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let mut ids = ids.to_vec();
            let mut out = Vec::new();
            for _ in 0..max_tokens {
                let l = toy_logits(&ids);
                let best = (0..5u32).max_by(|&a, &b| l[a as usize].total_cmp(&l[b as usize]).then(b.cmp(&a)));
                let token = best.unwrap_or(0);
                let mut top: Vec<(u32, f32)> = (0..5u32).map(|t| (t, l[t as usize])).collect();
                top.sort_by(|a, b| b.1.total_cmp(&a.1));
                top.truncate(3);
                out.push(Step { token, top });
                ids.push(token);
            }
            Ok(out)
        }
    }

    #[test]
    fn gives_each_position_the_servers_view_after_the_tokens_fed() {
        let toy = Toy { calls: AtomicU32::new(0) };
        let mut c = Cursor::new(&toy, vec![1, 2], 5, 40, 8);
        let mut out = Vec::new();
        let mut fed = vec![1u32, 2];
        // Feed a fixed pattern that sometimes agrees with the greedy choice and sometimes does not.
        for i in 0..20u32 {
            c.logits(&mut out).expect("logits");
            let exact = toy_logits(&fed);
            let mut sorted: Vec<f32> = exact.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            for (t, &l) in out.iter().enumerate() {
                if l.is_finite() {
                    assert_eq!(l, exact[t], "position {i}");
                } else {
                    assert!(exact[t] <= sorted[2], "an unlisted token was in the top 3");
                }
            }
            let t = if i % 5 == 4 { (i % 3) + 1 } else { argmax(&out) };
            c.feed(t);
            fed.push(t);
        }
        let calls = toy.calls.load(Ordering::Relaxed);
        assert_eq!(c.requests, calls);
        assert!(calls < 20, "agreeing tokens reuse the continuation: {calls} calls");
    }

    fn argmax(xs: &[f32]) -> u32 {
        let mut best = 0;
        for (i, &x) in xs.iter().enumerate() {
            if x > xs[best] {
                best = i;
            }
        }
        best as u32
    }

    #[test]
    fn never_asks_past_the_context() {
        let toy = Toy { calls: AtomicU32::new(0) };
        let mut c = Cursor::new(&toy, vec![0; 9], 5, 10, 8);
        let mut out = Vec::new();
        c.logits(&mut out).expect("one position left");
        c.feed(argmax(&out));
        assert!(c.logits(&mut out).is_err());
    }
}
