//! What a MAV-LM is asked: the header for a request and the prompt text (header and input lines), both
//! written by the protocol module.

use crate::game::chess::ChessState;
use crate::game::{GameKind, GameState};
use crate::inference::evaluator::EvalRequest;
use crate::mav::command::{Command, HeaderError, Layout, Role, StateFormat};
use crate::mav::example::line;
use crate::mav::state::{MavState, StateTextError};

/// How requests become prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptOptions {
    /// The state line(s) given as input (and written as output when tracking state): `%FEN`, `%state`,
    /// or both, as the model was trained.
    pub state_formats: Vec<StateFormat>,
    /// The format of the state line after `%best_action`.
    pub after_format: StateFormat,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions { state_formats: vec![StateFormat::Fen], after_format: StateFormat::Fen }
    }
}

/// Why a request cannot be put to the model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PromptError {
    /// The header the request needs is invalid.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// A state cannot be written in the asked format.
    #[error(transparent)]
    State(#[from] StateTextError),
    /// The previous action does not lead to the state.
    #[error("the previous action {0} does not lead to the requested position")]
    Previous(String),
}

/// The game a chess state's header names.
pub fn game_of(state: &ChessState) -> GameKind {
    state.kind()
}

/// The header for `req`: previous state(s) and action with the current state as output when the request
/// tracks state, else the current state as input; then `%top_k`, and `%best_action` (+ the state after
/// it) when asked.
pub fn layout_for(req: &EvalRequest<ChessState>, options: &PromptOptions) -> Result<Layout, PromptError> {
    let mut commands = Vec::new();
    if req.previous.is_some() {
        commands.extend(options.state_formats.iter().map(|f| Command::Prev(*f)));
        commands.push(Command::PrevAction);
    }
    commands.extend(options.state_formats.iter().map(|f| Command::State(*f)));
    commands.push(Command::Top(req.top_k));
    if req.want_best_action || req.want_next_state {
        commands.push(Command::BestAction);
    }
    if req.want_next_state {
        commands.push(Command::State(options.after_format));
    }
    Ok(Layout::new(game_of(&req.state), &commands)?)
}

/// The prompt: the header line and the input lines, each followed by `\n`.
pub fn prompt_text(layout: &Layout, req: &EvalRequest<ChessState>) -> Result<String, PromptError> {
    let mut s = layout.header_line();
    s.push('\n');
    for role in layout.inputs() {
        let cmd = role.command().to_string();
        let l = match (role, &req.previous) {
            (Role::PrevState(f), Some((prev, _))) => line(&cmd, &prev.render(*f)?),
            (Role::PrevAction, Some((prev, a))) => {
                let text = prev.action_to_text(*a);
                match prev.play(*a) {
                    Ok(next) if next.hash64() == req.state.hash64() => line(&cmd, &text),
                    _ => return Err(PromptError::Previous(text)),
                }
            }
            (Role::Current(f), _) => line(&cmd, &req.state.render(*f)?),
            _ => continue,
        };
        s.push_str(&l);
        s.push('\n');
    }
    Ok(s)
}

/// The output lines a state-tracking header expects before `%top_k` (the current state), as the rules
/// write them: what constrained decoding feeds instead of letting the model guess.
pub fn tracked_lines(layout: &Layout, state: &ChessState) -> Result<Vec<String>, PromptError> {
    let mut out = Vec::new();
    for role in layout.outputs() {
        if let Role::Current(f) = role {
            out.push(line(&role.command().to_string(), &state.render(*f)?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mav::command::TopK;

    #[test]
    fn plain_and_tracking_prompts() {
        let start = ChessState::default();
        let mut req = EvalRequest::values(start.clone());
        req.top_k = TopK::Count(5);
        req.want_best_action = true;
        let opts = PromptOptions::default();
        let layout = layout_for(&req, &opts).expect("header");
        assert_eq!(layout.header_line(), "<mav game=chess> %FEN %top_5 %best_action </mav>");
        let p = prompt_text(&layout, &req).expect("prompt");
        assert_eq!(
            p,
            "<mav game=chess> %FEN %top_5 %best_action </mav>\n\
             [%FEN rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n"
        );
        let e4 = start.parse_action("e2e4").expect("legal");
        let after = start.play(e4).expect("legal");
        let mut tracked = EvalRequest::values(after.clone());
        tracked.previous = Some((start.clone(), e4));
        let layout = layout_for(&tracked, &opts).expect("header");
        assert_eq!(layout.header_line(), "<mav game=chess> %prev_FEN %prev_action %FEN %top_all </mav>");
        let p = prompt_text(&layout, &tracked).expect("prompt");
        assert!(p.ends_with("[%prev_action e2e4]\n"), "{p}");
        assert_eq!(tracked_lines(&layout, &after).expect("lines").len(), 1);
        // A previous action that does not lead to the state is refused.
        tracked.previous = Some((start.clone(), start.parse_action("d2d4").expect("legal")));
        assert!(matches!(prompt_text(&layout, &tracked), Err(PromptError::Previous(_))));
    }
}
