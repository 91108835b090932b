//! A tolerant reader of model output: it keeps whatever it can read and classifies everything else.
//!
//! The parser never fails on the output lines; each problem becomes a [`Hallucination`] with the line
//! (1-based, counted in the text given), the column (1-based byte offset in that line) and the command.
//! Kinds: malformed line, unknown token, illegal move, duplicate move, missing legal moves, wrong number
//! of moves, wrong state, wrong outcome (a terminal state not recognised, or a non-terminal one called
//! terminal), missing line and unexpected line. Empty lines are skipped.

use std::fmt;

use super::buckets::Buckets;
use super::command::{Command, Layout, Role, StateFormat, TopK};
use super::state::{MavState, StateTextError};
use super::vocab::parse_value_token;
use crate::game::ActionError;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HallucinationKind {
    /// Not a `[%command payload]` line, or a payload of the wrong shape.
    MalformedLine {
        /// What is wrong.
        reason: String,
    },
    /// A command, move notation or value token the format does not know (or a bucket ≥ K).
    UnknownToken {
        /// The text.
        token: String,
    },
    /// A well-formed move that is not legal in the state.
    IllegalMove {
        /// The move.
        action: String,
    },
    /// A move listed twice.
    DuplicateMove {
        /// The move.
        action: String,
    },
    /// Legal moves left out where every legal move must be listed.
    MissingLegalMoves {
        /// The moves left out.
        actions: Vec<String>,
    },
    /// Fewer or more legal moves than `%top_k` asks for.
    WrongMoveCount {
        /// How many should be listed.
        expected: usize,
        /// How many distinct legal moves were listed.
        got: usize,
    },
    /// A state line that differs from the true state.
    WrongState {
        /// The true state.
        expected: String,
        /// What the model wrote.
        got: String,
    },
    /// Terminal-state confusion: the model lists moves in a finished game or declares a result in a
    /// running one (or the wrong result).
    WrongOutcome {
        /// The truth (`1-0`, `0-1`, `1/2-1/2`, or `moves` when the game goes on).
        expected: String,
        /// What the model wrote.
        got: String,
    },
    /// An output line the header asks for is absent.
    MissingLine,
    /// A line the header does not ask for here (out of order, repeated, or after a terminal answer).
    UnexpectedLine,
}

/// One classified problem and where it occurred.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hallucination {
    /// The line, 1-based.
    pub line: usize,
    /// The byte column in the line, 1-based (1 for whole-line problems).
    pub column: usize,
    /// The command of the line (or the one expected), e.g. `%top_5`.
    pub command: Option<String>,
    /// What went wrong.
    pub kind: HallucinationKind,
}

impl fmt::Display for Hallucination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)?;
        if let Some(c) = &self.command {
            write!(f, " ({c})")?;
        }
        f.write_str(": ")?;
        match &self.kind {
            HallucinationKind::MalformedLine { reason } => write!(f, "malformed line: {reason}"),
            HallucinationKind::UnknownToken { token } => write!(f, "unknown token '{token}'"),
            HallucinationKind::IllegalMove { action } => write!(f, "illegal move {action}"),
            HallucinationKind::DuplicateMove { action } => write!(f, "duplicate move {action}"),
            HallucinationKind::MissingLegalMoves { actions } => {
                write!(f, "missing legal moves: {}", actions.join(" "))
            }
            HallucinationKind::WrongMoveCount { expected, got } => {
                write!(f, "listed {got} legal moves, expected {expected}")
            }
            HallucinationKind::WrongState { expected, got } => {
                write!(f, "wrong state: expected '{expected}', got '{got}'")
            }
            HallucinationKind::WrongOutcome { expected, got } => {
                write!(f, "wrong outcome: expected {expected}, got {got}")
            }
            HallucinationKind::MissingLine => f.write_str("missing line"),
            HallucinationKind::UnexpectedLine => f.write_str("unexpected line"),
        }
    }
}

/// Everything read from a model output.
#[derive(Debug, Clone)]
pub struct ParsedResponse<S: MavState> {
    /// State lines as written, with their role.
    pub states: Vec<(Role, String)>,
    /// Distinct legal moves of the `%top_k` line with their buckets, in output order.
    pub top: Vec<(S::Action, u32)>,
    /// The result the model declared (`1-0`, …) if it answered `invalid`.
    pub declared_result: Option<String>,
    /// The best action, if legal.
    pub best: Option<S::Action>,
    /// Every problem found.
    pub hallucinations: Vec<Hallucination>,
}

impl<S: MavState> ParsedResponse<S> {
    /// Whether the output is free of hallucinations.
    pub fn is_clean(&self) -> bool {
        self.hallucinations.is_empty()
    }
}

/// A line of a model's output that is not `[%command payload]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a line must look like `[%command payload]`")]
pub struct NotACommandLine;

/// Splits `[%cmd payload]` into the command word and the payload (empty when there is none).
pub fn split_line(line: &str) -> Result<(&str, &str), NotACommandLine> {
    let inner = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')).ok_or(NotACommandLine)?;
    Ok(inner.split_once(' ').unwrap_or((inner, "")))
}

struct Ctx<'a, S: MavState> {
    state: &'a S,
    buckets: Buckets,
    first_line: usize,
    out: ParsedResponse<S>,
}

impl<S: MavState> Ctx<'_, S> {
    fn report(&mut self, line: usize, column: usize, command: Option<String>, kind: HallucinationKind) {
        self.out.hallucinations.push(Hallucination { line: self.first_line + line, column, command, kind });
    }
}

/// Parses the output lines `text` of a call with header `layout` in the true current `state`.
/// `first_line` is the 1-based number of the text's first line in the caller's file (for locations).
pub fn parse_response<S: MavState>(
    layout: &Layout,
    state: &S,
    buckets: Buckets,
    text: &str,
    first_line: usize,
) -> ParsedResponse<S> {
    let out = ParsedResponse {
        states: Vec::new(),
        top: Vec::new(),
        declared_result: None,
        best: None,
        hallucinations: Vec::new(),
    };
    let mut cx = Ctx { state, buckets, first_line: first_line.max(1) - 1, out };
    let expected = layout.outputs();
    let truly_terminal = state.outcome();
    let mut next = 0;
    let mut after: Option<S> = None;
    let mut terminal_answer = truly_terminal.is_some();
    let mut last_line = 0;
    for (n, raw) in text.split('\n').enumerate() {
        let ln = n + 1;
        last_line = ln;
        if raw.trim().is_empty() {
            continue;
        }
        let (word, payload) = match split_line(raw) {
            Ok(x) => x,
            Err(e) => {
                cx.report(ln, 1, None, HallucinationKind::MalformedLine { reason: e.to_string() });
                continue;
            }
        };
        let cmd = match Command::parse(word) {
            Ok(c) => c,
            Err(_) => {
                cx.report(ln, 2, None, HallucinationKind::UnknownToken { token: word.to_owned() });
                continue;
            }
        };
        let name = Some(cmd.to_string());
        let Some(j) = expected[next..].iter().position(|r| r.command() == cmd).map(|j| next + j) else {
            cx.report(ln, 1, name, HallucinationKind::UnexpectedLine);
            continue;
        };
        for r in &expected[next..j] {
            if !(terminal_answer && matches!(r, Role::Best | Role::After(_))) {
                cx.report(ln, 1, Some(r.command().to_string()), HallucinationKind::MissingLine);
            }
        }
        next = j + 1;
        let role = expected[j];
        let payload_col = word.len() + 3;
        match role {
            Role::Current(f) => {
                check_state(&mut cx, ln, payload_col, &name, state, f, payload);
                cx.out.states.push((role, payload.to_owned()));
            }
            Role::After(f) => {
                if terminal_answer {
                    cx.report(ln, 1, name.clone(), HallucinationKind::UnexpectedLine);
                } else if let Some(a) = &after {
                    check_state(&mut cx, ln, payload_col, &name, a, f, payload);
                }
                cx.out.states.push((role, payload.to_owned()));
            }
            Role::Top(k) => {
                terminal_answer = parse_top(&mut cx, ln, payload_col, &name, k, payload);
            }
            Role::Best => {
                if terminal_answer {
                    cx.report(ln, 1, name.clone(), HallucinationKind::UnexpectedLine);
                    continue;
                }
                match state.parse_action(payload) {
                    Ok(a) => {
                        cx.out.best = Some(a);
                        after = state.play(a).ok();
                    }
                    Err(e) => report_action_error(&mut cx, ln, payload_col, &name, e, payload),
                }
            }
            Role::PrevState(_) | Role::PrevAction => {}
        }
    }
    for r in &expected[next..] {
        if !(terminal_answer && matches!(r, Role::Best | Role::After(_))) {
            cx.report(last_line.max(1), 1, Some(r.command().to_string()), HallucinationKind::MissingLine);
        }
    }
    cx.out
}

fn report_action_error<S: MavState>(
    cx: &mut Ctx<'_, S>,
    ln: usize,
    col: usize,
    name: &Option<String>,
    e: ActionError,
    text: &str,
) {
    let kind = match e {
        ActionError::Syntax { .. } => HallucinationKind::UnknownToken { token: text.to_owned() },
        ActionError::Illegal { .. } => HallucinationKind::IllegalMove { action: text.to_owned() },
    };
    cx.report(ln, col, name.clone(), kind);
}

fn check_state<S: MavState>(
    cx: &mut Ctx<'_, S>,
    ln: usize,
    col: usize,
    name: &Option<String>,
    truth: &S,
    f: StateFormat,
    got: &str,
) {
    match truth.render(f) {
        Ok(expected) if expected != got => {
            cx.report(ln, col, name.clone(), HallucinationKind::WrongState { expected, got: got.to_owned() });
        }
        Ok(_) => {}
        Err(StateTextError::NoFen(_) | StateTextError::Syntax { .. } | StateTextError::WrongGame { .. }) => {
            cx.report(ln, 1, name.clone(), HallucinationKind::UnexpectedLine);
        }
    }
}

/// Parses a `%top_k` payload; returns whether the model declared the state terminal.
fn parse_top<S: MavState>(
    cx: &mut Ctx<'_, S>,
    ln: usize,
    col0: usize,
    name: &Option<String>,
    k: TopK,
    payload: &str,
) -> bool {
    let truth = cx.state.outcome();
    if let Some(rest) = payload.strip_prefix("invalid") {
        let result = rest.strip_prefix(" : \"").and_then(|r| r.strip_suffix('"'));
        let Some(result) = result.filter(|r| matches!(*r, "1-0" | "0-1" | "1/2-1/2")) else {
            let reason =
                "a terminal answer must be `invalid : \"1-0\"`, `\"0-1\"` or `\"1/2-1/2\"`".to_owned();
            cx.report(ln, col0, name.clone(), HallucinationKind::MalformedLine { reason });
            return true;
        };
        cx.out.declared_result = Some(result.to_owned());
        let expected = truth.map_or_else(|| "moves".to_owned(), |o| o.result_str().to_owned());
        if expected != result {
            cx.report(
                ln,
                col0,
                name.clone(),
                HallucinationKind::WrongOutcome { expected, got: result.to_owned() },
            );
        }
        return true;
    }
    if let Some(o) = truth {
        let got = if payload.is_empty() { "nothing".to_owned() } else { "moves".to_owned() };
        cx.report(
            ln,
            col0,
            name.clone(),
            HallucinationKind::WrongOutcome { expected: o.result_str().to_owned(), got },
        );
        return false;
    }
    let legal = cx.state.legal_actions();
    let mut col = col0;
    for entry in payload.split(' ') {
        let here = col;
        col += entry.len() + 1;
        if entry.is_empty() {
            continue;
        }
        let Some((mv, value)) = entry.rsplit_once(':') else {
            let reason = format!("'{entry}' should be `move:<ctrlN>`");
            cx.report(ln, here, name.clone(), HallucinationKind::MalformedLine { reason });
            continue;
        };
        let bucket = parse_value_token(value).filter(|b| *b < cx.buckets.k());
        if bucket.is_none() {
            cx.report(
                ln,
                here + mv.len() + 1,
                name.clone(),
                HallucinationKind::UnknownToken { token: value.to_owned() },
            );
        }
        match cx.state.parse_action(mv) {
            Ok(a) => {
                if cx.out.top.iter().any(|(b, _)| *b == a) {
                    cx.report(
                        ln,
                        here,
                        name.clone(),
                        HallucinationKind::DuplicateMove { action: mv.to_owned() },
                    );
                } else if let Some(b) = bucket {
                    cx.out.top.push((a, b));
                }
            }
            Err(e) => report_action_error(cx, ln, here, name, e, mv),
        }
    }
    let listed = k.listed(legal.len());
    let got = cx.out.top.len();
    if listed == legal.len() && got < listed {
        let actions = legal
            .iter()
            .filter(|a| !cx.out.top.iter().any(|(b, _)| b == *a))
            .map(|a| cx.state.action_to_text(*a))
            .collect();
        cx.report(ln, col0, name.clone(), HallucinationKind::MissingLegalMoves { actions });
    } else if got != listed {
        cx.report(ln, col0, name.clone(), HallucinationKind::WrongMoveCount { expected: listed, got });
    }
    false
}

/// A prompt that cannot be used (not model output: the header or an input line is wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// The header line.
    #[error("line 1: {0}")]
    Header(#[from] super::command::HeaderError),
    /// An input line is absent or not the one the header announces.
    #[error("line {line}: expected the input line {expected}")]
    MissingInput {
        /// The line.
        line: usize,
        /// The command expected.
        expected: String,
    },
    /// An input state cannot be read.
    #[error("line {line}: {error}")]
    BadState {
        /// The line.
        line: usize,
        /// Why.
        error: StateTextError,
    },
    /// The previous action is not legal in the previous state.
    #[error("line {line}: the previous action '{action}' is not legal in the previous state")]
    BadAction {
        /// The line.
        line: usize,
        /// The action.
        action: String,
    },
    /// Two input state representations disagree.
    #[error("line {line}: this state disagrees with the one before it")]
    Inconsistent {
        /// The line.
        line: usize,
    },
}

/// Reads a prompt (header + input lines) at the start of `text` and returns the layout, the current
/// state it defines and the number of prompt lines.
pub fn read_prompt<S: MavState>(text: &str) -> Result<(Layout, S, usize), PromptError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let layout = Layout::parse(lines.first().copied().unwrap_or(""))?;
    let mut prev: Option<S> = None;
    let mut current: Option<S> = None;
    for (i, role) in layout.inputs().iter().enumerate() {
        let ln = i + 2;
        let expected = role.command().to_string();
        let missing = || PromptError::MissingInput { line: ln, expected: expected.clone() };
        let (word, payload) = lines.get(i + 1).and_then(|l| split_line(l).ok()).ok_or_else(missing)?;
        if word != expected {
            return Err(missing());
        }
        let read = |f| {
            S::from_mav_text(layout.game(), f, payload)
                .map_err(|error| PromptError::BadState { line: ln, error })
        };
        match role {
            Role::PrevState(f) => {
                let s = read(*f)?;
                if prev.as_ref().is_some_and(|p| p.hash64() != s.hash64()) {
                    return Err(PromptError::Inconsistent { line: ln });
                }
                prev = Some(s);
            }
            Role::PrevAction => {
                let p = prev.as_ref().ok_or_else(missing)?;
                let bad = || PromptError::BadAction { line: ln, action: payload.to_owned() };
                let a = p.parse_action(payload).map_err(|_| bad())?;
                current = Some(p.play(a).map_err(|_| bad())?);
            }
            Role::Current(f) => {
                let s = read(*f)?;
                if current.as_ref().is_some_and(|c| c.hash64() != s.hash64()) {
                    return Err(PromptError::Inconsistent { line: ln });
                }
                current = Some(s);
            }
            Role::Top(_) | Role::Best | Role::After(_) => {}
        }
    }
    let current = current.ok_or(PromptError::MissingInput { line: 2, expected: "a state".to_owned() })?;
    let n = 1 + layout.input_count();
    Ok((layout, current, n))
}

/// Reads a whole example (prompt + model output) and parses the output tolerantly.
pub fn parse_example_text<S: MavState>(
    text: &str,
    buckets: Buckets,
) -> Result<(Layout, S, ParsedResponse<S>), PromptError> {
    let (layout, state, n) = read_prompt::<S>(text)?;
    let rest: Vec<&str> = text.split('\n').skip(n).collect();
    let parsed = parse_response(&layout, &state, buckets, &rest.join("\n"), n + 1);
    Ok((layout, state, parsed))
}
