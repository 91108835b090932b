//! Free decoding of one request: greedy, unmasked, until `<eos>` — the model is its own world model and
//! whatever it gets wrong is classified afterwards by the protocol's response parser.
//!
//! While it writes, [`FreeRow`] keeps the distributions the text alone would lose: at each value token
//! that follows `move:`, the softmax over the value tokens; where it writes the `%best_action` move, the
//! logits of every move token (restricted to the legal moves later).

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
        }
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
        let t = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(self.eos, |(i, _)| u32::try_from(i).unwrap_or(self.eos));
        if t == self.eos {
            self.done = true;
        } else {
            self.generated.push(t);
            self.done = self.generated.len() >= self.max_new;
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
