//! Rendering complete MAV examples (prompt + response) for training and for model prompts.
//!
//! An example is a list of lines joined by `\n`: the header, the input lines, then the output lines in
//! header order. [`Example::prompt`] is the header and inputs, each followed by `\n`;
//! [`Example::response`] is the outputs joined by `\n` with no trailing newline (a model ends it with
//! `<eos>`), so `prompt() + response() == text()`.
//!
//! Lines: `[%prev_FEN FEN]`, `[%prev_state STATE]`, `[%prev_action MOVE]`, `[%FEN FEN]`,
//! `[%state STATE]`, `[%top_k m1:<ctrlA> m2:<ctrlB> …]`, `[%best_action MOVE]`, and after it the state(s)
//! after the best move. In a terminal state the `%top_k` line is `[%top_k invalid : "RESULT"]`
//! (`"1-0"`, `"0-1"`, `"1/2-1/2"`) and the lines that need a move (`%best_action` and the states after
//! it) are left out.
//!
//! `%top_k` lists the `k` moves with the highest values (all legal moves when `k` ≥ their number or
//! `k` = `all`), then in random order drawn from the seed ([`MoveOrder::Shuffled`]); ties at the cut
//! are broken by the same seeded draw. [`MoveOrder::AsGiven`] keeps the caller's order instead (used to
//! reproduce published examples). Each move is followed by `:` and its value token `<ctrlN>`.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::buckets::{BucketError, Buckets};
use super::command::{Layout, Role, TopK};
use super::state::{MavState, StateTextError};
use crate::game::Outcome;

/// The value of one move, for the player to move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MoveValue {
    /// A win probability in [0, 1].
    WinProb(f64),
    /// A bucket index (0..K).
    Bucket(u32),
}

/// The order of the moves on the `%top_k` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveOrder {
    /// A random permutation drawn from this seed (ChaCha8), as the paper trains.
    Shuffled(u64),
    /// The order of the given values.
    AsGiven,
}

/// Everything one example is rendered from.
#[derive(Debug, Clone)]
pub struct ExampleSpec<'a, S: MavState> {
    /// The validated header.
    pub layout: &'a Layout,
    /// The previous state and the action played in it (needed when the header asks for them).
    pub previous: Option<(&'a S, S::Action)>,
    /// The current state (the one `%top_k` is about).
    pub state: &'a S,
    /// Values of legal moves in the current state: every legal move for `%top_all`, at least
    /// min(k, legal moves) of them for `%top_k`.
    pub values: &'a [(S::Action, MoveValue)],
    /// The best action (needed when the header asks for `%best_action` and the state is not terminal).
    pub best: Option<S::Action>,
    /// Move order on the `%top_k` line.
    pub order: MoveOrder,
    /// The value buckets.
    pub buckets: Buckets,
}

/// Inputs that do not make a valid example.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExampleError {
    /// The header is for another game than the state.
    #[error("the header is for {header} but the state is {state}")]
    GameMismatch {
        /// The header's game.
        header: &'static str,
        /// The state's game.
        state: &'static str,
    },
    /// The header asks for a previous state that was not given.
    #[error("the header asks for %prev_… lines: give the previous state and action")]
    MissingPrevious,
    /// The previous action does not lead to the current state.
    #[error("playing {action} in the previous state does not give the current state")]
    PreviousMismatch {
        /// The action.
        action: String,
    },
    /// The previous action is illegal.
    #[error("the previous action {0} is not legal in the previous state")]
    IllegalPrevious(String),
    /// A value for a move that is not legal.
    #[error("a value was given for {0}, which is not a legal move here")]
    IllegalValueMove(String),
    /// Two values for one move.
    #[error("two values were given for {0}")]
    DuplicateValue(String),
    /// Legal moves without values where every move needs one.
    #[error("%top_all needs a value for every legal move; missing: {}", .0.join(" "))]
    MissingValues(Vec<String>),
    /// Fewer values than moves to list.
    #[error("%top_{k} needs at least {need} move values, got {got}")]
    NotEnoughValues {
        /// The k of the header.
        k: u32,
        /// How many are needed.
        need: usize,
        /// How many were given.
        got: usize,
    },
    /// The header asks for the best action but none was given.
    #[error("the header asks for %best_action: give the best move")]
    MissingBest,
    /// The best action is illegal.
    #[error("the best action {0} is not legal here")]
    IllegalBest(String),
    /// Values or a best move for a finished game.
    #[error("the state is terminal ({0}): it has no moves, so give no values and no best move")]
    TerminalWithMoves(String),
    /// A bad value.
    #[error(transparent)]
    Bucket(#[from] BucketError),
    /// A state format the game lacks.
    #[error(transparent)]
    State(#[from] StateTextError),
}

/// A rendered example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    lines: Vec<String>,
    prompt_lines: usize,
}

impl Example {
    /// Builds an example from its lines; the first `prompt_lines` are the prompt (header + inputs).
    pub fn from_lines(lines: Vec<String>, prompt_lines: usize) -> Example {
        let prompt_lines = prompt_lines.min(lines.len());
        Example { lines, prompt_lines }
    }

    /// All lines (header first).
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// How many lines belong to the prompt.
    pub fn prompt_line_count(&self) -> usize {
        self.prompt_lines
    }

    /// The whole example: lines joined by `\n`, no trailing newline.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The prompt: header and input lines, each followed by `\n`.
    pub fn prompt(&self) -> String {
        let mut s = String::new();
        for l in &self.lines[..self.prompt_lines] {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// The response: the output lines joined by `\n`, no trailing newline.
    pub fn response(&self) -> String {
        self.lines[self.prompt_lines..].join("\n")
    }
}

/// A bracketed line `[%cmd payload]`.
pub fn line(command: &str, payload: &str) -> String {
    format!("[{command} {payload}]")
}

/// The `%top_k` line of a non-terminal state from (move text, bucket) pairs in print order.
pub fn top_line(k: TopK, moves: &[(String, u32)]) -> String {
    let mut s = format!("[{}", super::command::Command::Top(k));
    for (m, b) in moves {
        s.push_str(&format!(" {m}:<ctrl{b}>"));
    }
    s.push(']');
    s
}

/// The `%top_k` line of a terminal state: `[%top_k invalid : "RESULT"]`.
pub fn terminal_top_line(k: TopK, outcome: Outcome) -> String {
    format!("[{} invalid : \"{}\"]", super::command::Command::Top(k), outcome.result_str())
}

/// Picks and orders the `%top_k` moves: the `listed` best by value, ordered by `order`.
/// `values` holds (move, bucket, win probability) in the caller's order.
pub fn select_top<A: Clone>(values: &[(A, u32, f64)], listed: usize, order: MoveOrder) -> Vec<(A, u32)> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    let mut rng = match order {
        MoveOrder::Shuffled(seed) => Some(ChaCha8Rng::seed_from_u64(seed)),
        MoveOrder::AsGiven => None,
    };
    if let Some(rng) = rng.as_mut() {
        idx.shuffle(rng);
    }
    idx.sort_by(|&a, &b| values[b].2.total_cmp(&values[a].2));
    idx.truncate(listed);
    match rng.as_mut() {
        Some(rng) => idx.shuffle(rng),
        None => idx.sort_unstable(),
    }
    idx.into_iter().map(|i| (values[i].0.clone(), values[i].1)).collect()
}

/// Renders an example (see the module documentation for the format and the rules).
pub fn render_example<S: MavState>(spec: &ExampleSpec<'_, S>) -> Result<Example, ExampleError> {
    let layout = spec.layout;
    let state = spec.state;
    if layout.game() != state.kind() {
        return Err(ExampleError::GameMismatch { header: layout.game().name(), state: state.kind().name() });
    }
    let previous = match (layout.has_previous(), spec.previous) {
        (true, None) => return Err(ExampleError::MissingPrevious),
        (true, Some((prev, action))) => {
            let text = prev.action_to_text(action);
            let next = prev.play(action).map_err(|_| ExampleError::IllegalPrevious(text.clone()))?;
            if next.hash64() != state.hash64() || next.to_text() != state.to_text() {
                return Err(ExampleError::PreviousMismatch { action: text });
            }
            Some((prev, text))
        }
        (false, _) => None,
    };
    let outcome = state.outcome();
    let legal = state.legal_actions();
    if let Some(o) = outcome
        && (!spec.values.is_empty() || spec.best.is_some())
    {
        return Err(ExampleError::TerminalWithMoves(o.result_str().to_owned()));
    }
    let mut top = None;
    if let Some(k) = layout.top().filter(|_| outcome.is_none()) {
        top = Some(top_moves(spec, k, &legal)?);
    }
    let mut after = None;
    if layout.has_best() && outcome.is_none() {
        let best = spec.best.ok_or(ExampleError::MissingBest)?;
        let text = state.action_to_text(best);
        let next = state.play(best).map_err(|_| ExampleError::IllegalBest(text.clone()))?;
        after = Some((text, next));
    }
    let mut lines = vec![layout.header_line()];
    for role in layout.roles() {
        let cmd = role.command().to_string();
        let l = match role {
            Role::PrevState(f) => match &previous {
                Some((prev, _)) => line(&cmd, &prev.render(*f)?),
                None => return Err(ExampleError::MissingPrevious),
            },
            Role::PrevAction => match &previous {
                Some((_, a)) => line(&cmd, a),
                None => return Err(ExampleError::MissingPrevious),
            },
            Role::Current(f) => line(&cmd, &state.render(*f)?),
            Role::Top(k) => match (outcome, &top) {
                (Some(o), _) => terminal_top_line(*k, o),
                (None, Some(moves)) => top_line(*k, moves),
                (None, None) => continue,
            },
            Role::Best => match &after {
                Some((a, _)) => line(&cmd, a),
                None => continue,
            },
            Role::After(f) => match &after {
                Some((_, next)) => line(&cmd, &next.render(*f)?),
                None => continue,
            },
        };
        lines.push(l);
    }
    Ok(Example { lines, prompt_lines: 1 + layout.input_count() })
}

fn top_moves<S: MavState>(
    spec: &ExampleSpec<'_, S>,
    k: TopK,
    legal: &[S::Action],
) -> Result<Vec<(String, u32)>, ExampleError> {
    let state = spec.state;
    let mut seen = Vec::with_capacity(spec.values.len());
    let mut valued = Vec::with_capacity(spec.values.len());
    for (action, value) in spec.values {
        let text = state.action_to_text(*action);
        if !legal.contains(action) {
            return Err(ExampleError::IllegalValueMove(text));
        }
        if seen.contains(action) {
            return Err(ExampleError::DuplicateValue(text));
        }
        seen.push(*action);
        let (bucket, p) = match *value {
            MoveValue::WinProb(p) => (spec.buckets.bucket_of(p)?, p),
            MoveValue::Bucket(b) => (spec.buckets.check(b)?, spec.buckets.centre(b)?),
        };
        valued.push((text, bucket, p));
    }
    let listed = k.listed(legal.len());
    match k {
        TopK::All => {
            let missing: Vec<String> =
                legal.iter().filter(|a| !seen.contains(a)).map(|a| state.action_to_text(*a)).collect();
            if !missing.is_empty() {
                return Err(ExampleError::MissingValues(missing));
            }
        }
        TopK::Count(k) if valued.len() < listed => {
            return Err(ExampleError::NotEnoughValues { k, need: listed, got: valued.len() });
        }
        TopK::Count(_) => {}
    }
    Ok(select_top(&valued, listed, spec.order))
}
