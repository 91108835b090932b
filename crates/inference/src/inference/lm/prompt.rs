//! What a MAV-LM is asked: the header for a request and the prompt text (header and input lines), both
//! written by the protocol module.

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

/// The game a state's header names.
pub fn game_of<S: GameState>(state: &S) -> GameKind {
    state.kind()
}

/// The state formats a request about `state` is written in: `formats`, with `%FEN` replaced by `%state`
/// for a game that has no FEN (Connect Four, Hex), without repeating a format.
pub fn formats_for<S: MavState>(state: &S, formats: &[StateFormat]) -> Vec<StateFormat> {
    let fen = formats.contains(&StateFormat::Fen) && state.mav_fen().is_some();
    let mut out: Vec<StateFormat> = Vec::with_capacity(formats.len());
    for &f in formats {
        let f = if f == StateFormat::Fen && !fen { StateFormat::State } else { f };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// The header for `req`: previous state(s) and action with the current state as output when the request
/// tracks state, else the current state as input; then `%top_k`, and `%best_action` (+ the state after
/// it) when asked. A game without FEN is written in `%state` wherever the options say `%FEN`.
pub fn layout_for<S: MavState>(req: &EvalRequest<S>, options: &PromptOptions) -> Result<Layout, PromptError> {
    let formats = formats_for(&req.state, &options.state_formats);
    let mut commands = Vec::new();
    if req.previous.is_some() {
        commands.extend(formats.iter().map(|f| Command::Prev(*f)));
        commands.push(Command::PrevAction);
    }
    commands.extend(formats.iter().map(|f| Command::State(*f)));
    commands.push(Command::Top(req.top_k));
    if req.want_best_action || req.want_next_state {
        commands.push(Command::BestAction);
    }
    if req.want_next_state {
        commands.push(Command::State(after_format(&req.state, options)));
    }
    Ok(Layout::new(game_of(&req.state), &commands)?)
}

/// The format of the state line after `%best_action` for `state`: the options' format, `%state` for a game
/// without FEN.
pub fn after_format<S: MavState>(state: &S, options: &PromptOptions) -> StateFormat {
    formats_for(state, &[options.after_format])[0]
}

/// The prompt: the header line and the input lines, each followed by `\n`.
pub fn prompt_text<S: MavState>(layout: &Layout, req: &EvalRequest<S>) -> Result<String, PromptError> {
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
pub fn tracked_lines<S: MavState>(layout: &Layout, state: &S) -> Result<Vec<String>, PromptError> {
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
    use crate::game::chess::ChessState;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::hex::HexState;
    use crate::mav::command::TopK;

    #[test]
    fn games_without_fen_are_written_in_state_format() {
        let c4 = ConnectFourState::default();
        let mut req = EvalRequest::values(c4);
        req.want_next_state = true;
        let layout = layout_for(&req, &PromptOptions::default()).expect("header");
        assert_eq!(
            layout.header_line(),
            "<mav game=connect_four> %state %top_all %best_action %state </mav>"
        );
        let text = prompt_text(&layout, &req).expect("prompt");
        assert!(text.ends_with(&format!("[%state {}]\n", c4.mav_state())), "{text}");
        let both = PromptOptions {
            state_formats: vec![StateFormat::Fen, StateFormat::State],
            after_format: StateFormat::Fen,
        };
        assert_eq!(formats_for(&c4, &both.state_formats), vec![StateFormat::State]);
        let hex = HexState::new(5).expect("5x5");
        let layout = layout_for(&EvalRequest::values(hex), &both).expect("header");
        assert_eq!(layout.header_line(), "<mav game=hex> %state %top_all </mav>");
        let chess = ChessState::default();
        assert_eq!(formats_for(&chess, &both.state_formats), both.state_formats);
    }

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
