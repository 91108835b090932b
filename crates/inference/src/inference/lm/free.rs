//! Free decoding of one request: greedy, unmasked, until `<eos>` — the model is its own world model and
//! whatever it gets wrong is classified afterwards by the protocol's response parser.
//!
//! While it writes, [`FreeRow`] keeps the distributions the text alone would lose: at each value token
//! that follows `move:`, the softmax over the value tokens; where it writes the `%best_action` move, the
//! logits of every move token (restricted to the legal moves later).
//!
//! [`FreeRow::without_repeated_moves`] adds one guard, used for internal-search traces: within one move list
//! (`[%top_all m:<v> m:<v> …]`, one line) a move already listed is not written again; where it would be the
//! greedy pick, the next most likely token is written instead. Small models otherwise loop in long lists
//! and run out of context; nothing else is masked (an illegal move is still written and reported). Only
//! moves of one token are guarded (chess, Connect Four); a Hex cell of several tokens is not.

use super::constrained::softmax_over;
use super::tokens::FormatTokens;

/// One request's free decoding.
#[derive(Debug, Clone)]
pub struct FreeRow {
    max_new: usize,
    done: bool,
    colon: u32,
    space: u32,
    eos: u32,
    best_marker: Vec<u32>,
    values: Vec<u32>,
    /// Tokens written after the prompt (without `<eos>`).
    pub generated: Vec<u32>,
    /// (the move's tokens, value distribution) in the order the model wrote them; a move's tokens are
    /// those between the space before it and its colon (one for chess, several for a Hex cell).
    pub valued: Vec<(Vec<u32>, Vec<f64>)>,
    /// The logits where the model wrote its `%best_action` move (whole vocabulary).
    pub best_logits: Option<Vec<f32>>,
    /// Whether a move already listed on the current line may not be written again.
    no_repeat: bool,
    /// The tokens of `]` and of the newline: each ends a move list.
    line_end: Vec<u32>,
    /// Index into `valued` of the current line's first move.
    line_from: usize,
    /// Greedy picks the no-repeat guard replaced.
    pub repeats_avoided: usize,
}

impl FreeRow {
    /// A row allowed `max_new` tokens after the prompt.
    pub fn new(tokens: &FormatTokens, max_new: usize) -> FreeRow {
        let mut best_marker = tokens.opening(crate::mav::command::Command::BestAction).unwrap_or_default();
        best_marker.push(tokens.space);
        FreeRow {
            max_new,
            done: max_new == 0,
            colon: tokens.colon,
            space: tokens.space,
            eos: tokens.eos,
            best_marker,
            values: tokens.values.clone(),
            generated: Vec::new(),
            valued: Vec::new(),
            best_logits: None,
            no_repeat: false,
            line_end: tokens.close.iter().chain(&tokens.newline).copied().collect(),
            line_from: 0,
            repeats_avoided: 0,
        }
    }

    /// The same row, never listing a move twice on one line (see the module documentation).
    pub fn without_repeated_moves(mut self) -> FreeRow {
        self.no_repeat = true;
        self
    }

    /// Single-token moves already listed on the current line, when the next token starts a move.
    fn listed_here(&self) -> Vec<u32> {
        if !self.no_repeat || self.generated.last() != Some(&self.space) {
            return Vec::new();
        }
        self.valued[self.line_from..]
            .iter()
            .filter_map(|(m, _)| match m.as_slice() {
                [t] => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// True once the model wrote `<eos>` or ran out of room.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// Given the logits for the next position, the token written there; `None` once finished.
    pub fn next(&mut self, logits: &[f32]) -> Option<u32> {
        if self.done {
            return None;
        }
        let g = &self.generated;
        if g.len() >= 2 && g[g.len() - 1] == self.colon && g[g.len() - 2] != self.space {
            let body = &g[..g.len() - 1];
            let start = body.iter().rposition(|&t| t == self.space).map_or(0, |p| p + 1);
            self.valued.push((body[start..].to_vec(), softmax_over(&self.values, logits)));
        }
        if self.best_logits.is_none() && g.ends_with(&self.best_marker) {
            self.best_logits = Some(logits.to_vec());
        }
        let pick = |skip: &[u32]| {
            logits
                .iter()
                .enumerate()
                .filter(|(i, _)| u32::try_from(*i).is_ok_and(|t| !skip.contains(&t)))
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(self.eos, |(i, _)| u32::try_from(i).unwrap_or(self.eos))
        };
        let listed = self.listed_here();
        let t = pick(&listed);
        if !listed.is_empty() && t != pick(&[]) {
            self.repeats_avoided += 1;
        }
        if t == self.eos {
            self.done = true;
        } else {
            self.generated.push(t);
            self.done = self.generated.len() >= self.max_new;
            if self.line_end.contains(&t) {
                self.line_from = self.valued.len();
            }
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mav::tokenizer::Tokenizer;

    fn tokens() -> FormatTokens {
        let t = Tokenizer::new();
        let ids: Vec<u32> = (0..64).map(|i| t.id_of(&format!("<ctrl{i}>")).expect("ctrl")).collect();
        FormatTokens::new(t.clone(), &ids, t.eos_id()).expect("vocabulary")
    }

    #[test]
    fn records_values_and_best_logits_while_writing() {
        let f = tokens();
        let text = "[%top_2 e2e4:<ctrl40> e7e5:<ctrl3> d2d4:<ctrl12>]\n[%best_action d2d4]";
        let mut script = f.tokenizer.encode(text);
        script.push(f.eos);
        let vocab = f.tokenizer.vocab_size();
        let mut row = FreeRow::new(&f, 500);
        for &want in &script {
            let mut l = vec![0.0f32; vocab];
            l[want as usize] = 3.0;
            let t = row.next(&l).expect("not finished yet");
            assert_eq!(t, want);
        }
        assert!(row.finished());
        assert_eq!(row.next(&vec![0.0; vocab]), None);
        assert_eq!(f.tokenizer.decode(&row.generated).expect("ids"), text);
        let all_moves = crate::mav::vocab::chess_moves();
        let moves: Vec<&str> = row
            .valued
            .iter()
            .filter_map(|(ids, _)| match ids.as_slice() {
                [id] => f.tokenizer.token_of(*id),
                _ => None,
            })
            .filter(|t| all_moves.iter().any(|m| m == t))
            .collect();
        // Every move written before a colon is recorded (legality is the parser's business), in order.
        assert_eq!(moves, vec!["e2e4", "e7e5", "d2d4"]);
        assert!(row.valued.iter().all(|(_, d)| d.len() == 64));
        assert!(row.best_logits.is_some());
    }

    #[test]
    fn records_values_of_moves_of_several_tokens() {
        let f = tokens();
        let text = "[%top_2 c1:<ctrl40> c10:<ctrl3>]";
        let script = f.tokenizer.encode(text);
        let vocab = f.tokenizer.vocab_size();
        let mut row = FreeRow::new(&f, 500);
        for &want in &script {
            let mut l = vec![0.0f32; vocab];
            l[want as usize] = 3.0;
            row.next(&l);
        }
        let moves: Vec<Vec<u32>> = row.valued.iter().map(|(ids, _)| ids.clone()).collect();
        let c1 = f.move_tokens("c1").expect("tokens");
        let c10 = f.move_tokens("c10").expect("tokens");
        assert_eq!(moves, vec![c1, c10]);
        assert_eq!(moves[1].len(), 3);
    }

    /// Logits that prefer `want`, with `second` next.
    fn prefer(vocab: usize, want: u32, second: Option<u32>) -> Vec<f32> {
        let mut l = vec![0.0f32; vocab];
        l[want as usize] = 3.0;
        if let Some(s) = second {
            l[s as usize] = 2.0;
        }
        l
    }

    #[test]
    fn the_guard_skips_a_move_listed_on_the_same_line_only() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let id = |m: &str| f.move_tokens(m).expect("a move")[0];
        // The model wants to list e2e4 twice; its second choice there is d2d4. On the next line it names
        // e2e4 again, which is allowed.
        let script = f.tokenizer.encode("[%top_all e2e4:<ctrl40> e2e4:<ctrl3>]\n[%best_action e2e4]");
        let run = |guard: bool| {
            let row = FreeRow::new(&f, 500);
            let mut row = if guard { row.without_repeated_moves() } else { row };
            for &want in &script {
                let second = (want == id("e2e4")).then(|| id("d2d4"));
                row.next(&prefer(vocab, want, second));
            }
            row
        };
        let free = run(false);
        assert_eq!(
            f.tokenizer.decode(&free.generated).expect("ids"),
            "[%top_all e2e4:<ctrl40> e2e4:<ctrl3>]\n[%best_action e2e4]"
        );
        assert_eq!(free.repeats_avoided, 0);
        let guarded = run(true);
        assert_eq!(
            f.tokenizer.decode(&guarded.generated).expect("ids"),
            "[%top_all e2e4:<ctrl40> d2d4:<ctrl3>]\n[%best_action e2e4]"
        );
        assert_eq!(guarded.repeats_avoided, 1);
    }

    #[test]
    fn the_guard_leaves_moves_of_several_tokens_alone() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let text = "[%top_2 c1:<ctrl40> c1:<ctrl3>]";
        let mut row = FreeRow::new(&f, 500).without_repeated_moves();
        for &want in &f.tokenizer.encode(text) {
            row.next(&prefer(vocab, want, None));
        }
        assert_eq!(f.tokenizer.decode(&row.generated).expect("ids"), text);
        assert_eq!(row.repeats_avoided, 0);
    }

    #[test]
    fn stops_at_the_token_budget() {
        let f = tokens();
        let vocab = f.tokenizer.vocab_size();
        let mut row = FreeRow::new(&f, 3);
        let mut l = vec![0.0f32; vocab];
        l[f.space as usize] = 1.0;
        let mut n = 0;
        while row.next(&l).is_some() {
            n += 1;
            assert!(n <= 3);
        }
        assert_eq!(row.generated.len(), 3);
    }
}
