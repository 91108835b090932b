//! The command header `<mav game=…> %cmd … </mav>` and what each command's line means.
//!
//! A header is validated into a [`Layout`]: which lines are inputs (given in the prompt) and which are
//! outputs (written by the model), in header order. The accepted order is
//!
//! 1. optionally the previous state in one or more representations (`%prev_state`, `%prev_FEN`, each at
//!    most once) followed by `%prev_action`;
//! 2. the current state in zero or more representations (`%state`, `%FEN`): inputs when there is no
//!    previous state (then at least one is required), outputs (state tracking) when there is;
//! 3. optionally `%top_k` (`k` = 1, 2, … or `all`);
//! 4. optionally `%best_action` (only after `%top_k`, as the paper requires);
//! 5. optionally the state after the best action in one or more representations (only after
//!    `%best_action`).
//!
//! At least one output is required. `%FEN`/`%prev_FEN` exist for chess and Chess960 only.

use std::fmt;

use crate::game::GameKind;

/// How a state is written on its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateFormat {
    /// The per-game square-by-square string (`%state`, `%prev_state`).
    State,
    /// Standard FEN (`%FEN`, `%prev_FEN`; chess and Chess960 only).
    Fen,
}

/// How many moves `%top_k` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopK {
    /// The `k` best moves (all of them if there are fewer legal moves); `k` ≥ 1.
    Count(u32),
    /// Every legal move.
    All,
}

impl TopK {
    /// How many moves are listed when `legal` moves are legal.
    pub fn listed(self, legal: usize) -> usize {
        match self {
            TopK::Count(k) => (k as usize).min(legal),
            TopK::All => legal,
        }
    }
}

/// One header command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// `%prev_state` / `%prev_FEN`: the state before the previous action (an input).
    Prev(StateFormat),
    /// `%prev_action`: the move played in the previous state (an input).
    PrevAction,
    /// `%state` / `%FEN`: the current state, or after `%best_action` the state after the best action.
    State(StateFormat),
    /// `%top_k` / `%top_all`: moves with their value tokens, or `invalid : "result"` in a terminal state.
    Top(TopK),
    /// `%best_action`: the move to play.
    BestAction,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Prev(StateFormat::State) => f.write_str("%prev_state"),
            Command::Prev(StateFormat::Fen) => f.write_str("%prev_FEN"),
            Command::PrevAction => f.write_str("%prev_action"),
            Command::State(StateFormat::State) => f.write_str("%state"),
            Command::State(StateFormat::Fen) => f.write_str("%FEN"),
            Command::Top(TopK::All) => f.write_str("%top_all"),
            Command::Top(TopK::Count(k)) => write!(f, "%top_{k}"),
            Command::BestAction => f.write_str("%best_action"),
        }
    }
}

impl Command {
    /// Reads one command word such as `%top_5`.
    pub fn parse(word: &str) -> Result<Command, HeaderError> {
        let unknown = || HeaderError::UnknownCommand(word.to_owned());
        Ok(match word {
            "%prev_state" => Command::Prev(StateFormat::State),
            "%prev_FEN" => Command::Prev(StateFormat::Fen),
            "%prev_action" => Command::PrevAction,
            "%state" => Command::State(StateFormat::State),
            "%FEN" => Command::State(StateFormat::Fen),
            "%top_all" => Command::Top(TopK::All),
            "%best_action" => Command::BestAction,
            _ => {
                let k = word.strip_prefix("%top_").ok_or_else(unknown)?;
                if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) || k.starts_with('0') {
                    return Err(unknown());
                }
                Command::Top(TopK::Count(k.parse().map_err(|_| unknown())?))
            }
        })
    }
}

/// A header that cannot be read or whose commands are not in an accepted order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Not of the form `<mav game=NAME> … </mav>`.
    #[error("not a MAV header: {0} (expected `<mav game=chess> %state %top_all </mav>` or similar)")]
    Syntax(String),
    /// A game name this build does not know.
    #[error("unknown game '{0}' (known: chess, chess960, connect_four, hex)")]
    UnknownGame(String),
    /// A word that is not a command.
    #[error(
        "unknown command '{0}' (known: %prev_state %prev_FEN %prev_action %state %FEN %top_K %top_all \
         %best_action)"
    )]
    UnknownCommand(String),
    /// Commands in an order the format does not allow.
    #[error("commands out of order: {0}")]
    Order(String),
    /// FEN asked for a game that has none.
    #[error("%FEN and %prev_FEN exist only for chess and chess960, not {0}")]
    FenNotAvailable(&'static str),
}

/// What one line of an example holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The previous state (input).
    PrevState(StateFormat),
    /// The previous action (input).
    PrevAction,
    /// The current state: an input without a previous state, an output (state tracking) with one.
    Current(StateFormat),
    /// The move list with values (output).
    Top(TopK),
    /// The best action (output).
    Best,
    /// The state after the best action (output).
    After(StateFormat),
}

impl Role {
    /// The command that introduces this line.
    pub fn command(self) -> Command {
        match self {
            Role::PrevState(f) => Command::Prev(f),
            Role::PrevAction => Command::PrevAction,
            Role::Current(f) | Role::After(f) => Command::State(f),
            Role::Top(k) => Command::Top(k),
            Role::Best => Command::BestAction,
        }
    }
}

/// A validated header: the game, and each line's role in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    game: GameKind,
    roles: Vec<Role>,
    inputs: usize,
}

impl Layout {
    /// Validates `commands` for `game` (see the module documentation for the accepted order).
    pub fn new(game: GameKind, commands: &[Command]) -> Result<Layout, HeaderError> {
        let order = |s: &str| Err(HeaderError::Order(s.to_owned()));
        let mut roles = Vec::with_capacity(commands.len());
        let mut i = 0;
        let mut prev = Vec::new();
        while let Some(Command::Prev(f)) = commands.get(i) {
            if prev.contains(f) {
                return order("a previous-state command appears twice");
            }
            prev.push(*f);
            roles.push(Role::PrevState(*f));
            i += 1;
        }
        let has_prev = !prev.is_empty();
        if has_prev {
            if commands.get(i) != Some(&Command::PrevAction) {
                return order("%prev_state/%prev_FEN must be followed by %prev_action");
            }
            roles.push(Role::PrevAction);
            i += 1;
        } else if commands.get(i) == Some(&Command::PrevAction) {
            return order("%prev_action needs %prev_state or %prev_FEN before it");
        }
        let current = take_states(commands, &mut i)?;
        if !has_prev && current.is_empty() {
            return order("the header must give the current state (%state or %FEN) or a previous state");
        }
        roles.extend(current.iter().map(|f| Role::Current(*f)));
        let inputs = if has_prev { prev.len() + 1 } else { roles.len() };
        let mut has_top = false;
        if let Some(Command::Top(k)) = commands.get(i) {
            roles.push(Role::Top(*k));
            has_top = true;
            i += 1;
        }
        if commands.get(i) == Some(&Command::BestAction) {
            if !has_top {
                return order("%best_action must follow %top_k");
            }
            roles.push(Role::Best);
            i += 1;
            let after = take_states(commands, &mut i)?;
            roles.extend(after.iter().map(|f| Role::After(*f)));
        }
        if let Some(c) = commands.get(i) {
            return Err(HeaderError::Order(format!(
                "'{c}' cannot come here; the order is: previous state(s) + %prev_action, current state(s), \
                 %top_k, %best_action, state(s) after the best action"
            )));
        }
        if roles.len() == inputs {
            return order("the header asks for no output");
        }
        let chess = matches!(game, GameKind::Chess | GameKind::Chess960);
        let uses_fen = roles.iter().any(|r| {
            matches!(
                r,
                Role::PrevState(StateFormat::Fen)
                    | Role::Current(StateFormat::Fen)
                    | Role::After(StateFormat::Fen)
            )
        });
        if uses_fen && !chess {
            return Err(HeaderError::FenNotAvailable(game.name()));
        }
        Ok(Layout { game, roles, inputs })
    }

    /// Reads a header line such as `<mav game=chess> %state %top_1 </mav>`.
    pub fn parse(line: &str) -> Result<Layout, HeaderError> {
        let words: Vec<&str> = line.split(' ').collect();
        let (first, rest) = words.split_first().ok_or_else(|| HeaderError::Syntax(line.to_owned()))?;
        let (last, middle) = rest.split_last().ok_or_else(|| HeaderError::Syntax(line.to_owned()))?;
        if *first != "<mav" || *last != "</mav>" {
            return Err(HeaderError::Syntax(format!(
                "'{line}' does not start with `<mav ` and end with ` </mav>`"
            )));
        }
        let (game_word, commands) =
            middle.split_first().ok_or_else(|| HeaderError::Syntax(line.to_owned()))?;
        let name = game_word
            .strip_prefix("game=")
            .and_then(|g| g.strip_suffix('>'))
            .ok_or_else(|| HeaderError::Syntax(format!("'{game_word}' should look like `game=chess>`")))?;
        let game = parse_game(name)?;
        let commands = commands.iter().map(|w| Command::parse(w)).collect::<Result<Vec<_>, _>>()?;
        Layout::new(game, &commands)
    }

    /// Reads a space-separated command list such as `%FEN %top_5 %best_action`.
    pub fn from_command_list(game: GameKind, list: &str) -> Result<Layout, HeaderError> {
        let commands = list.split_whitespace().map(Command::parse).collect::<Result<Vec<_>, _>>()?;
        Layout::new(game, &commands)
    }

    /// The game.
    pub fn game(&self) -> GameKind {
        self.game
    }

    /// Every line's role, in header order.
    pub fn roles(&self) -> &[Role] {
        &self.roles
    }

    /// How many leading roles are inputs.
    pub fn input_count(&self) -> usize {
        self.inputs
    }

    /// The input roles.
    pub fn inputs(&self) -> &[Role] {
        &self.roles[..self.inputs]
    }

    /// The output roles.
    pub fn outputs(&self) -> &[Role] {
        &self.roles[self.inputs..]
    }

    /// Whether the prompt gives a previous state and action.
    pub fn has_previous(&self) -> bool {
        matches!(self.roles.first(), Some(Role::PrevState(_)))
    }

    /// The `%top_k` request, if any.
    pub fn top(&self) -> Option<TopK> {
        self.roles.iter().find_map(|r| if let Role::Top(k) = r { Some(*k) } else { None })
    }

    /// Whether `%best_action` is asked for.
    pub fn has_best(&self) -> bool {
        self.roles.contains(&Role::Best)
    }

    /// The header line, e.g. `<mav game=chess> %FEN %top_all </mav>`.
    pub fn header_line(&self) -> String {
        let mut s = format!("<mav game={}>", self.game.name());
        for r in &self.roles {
            s.push(' ');
            s.push_str(&r.command().to_string());
        }
        s.push_str(" </mav>");
        s
    }
}

/// The game named in a header (`chess`, `chess960`, `connect_four`, `hex`).
pub fn parse_game(name: &str) -> Result<GameKind, HeaderError> {
    [GameKind::Chess, GameKind::Chess960, GameKind::ConnectFour, GameKind::Hex]
        .into_iter()
        .find(|g| g.name() == name)
        .ok_or_else(|| HeaderError::UnknownGame(name.to_owned()))
}

fn take_states(commands: &[Command], i: &mut usize) -> Result<Vec<StateFormat>, HeaderError> {
    let mut out = Vec::new();
    while let Some(Command::State(f)) = commands.get(*i) {
        if out.contains(f) {
            return Err(HeaderError::Order(format!("'{}' appears twice in a row", Command::State(*f))));
        }
        out.push(*f);
        *i += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_one_header_round_trips() {
        let line = "<mav game=chess> %prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN </mav>";
        let l = Layout::parse(line).expect("valid header");
        assert_eq!(l.header_line(), line);
        assert_eq!(l.input_count(), 2);
        assert_eq!(
            l.outputs(),
            &[
                Role::Current(StateFormat::Fen),
                Role::Current(StateFormat::State),
                Role::Top(TopK::Count(5)),
                Role::Best,
                Role::After(StateFormat::Fen)
            ]
        );
        assert!(l.has_previous());
        assert_eq!(l.top(), Some(TopK::Count(5)));
    }

    #[test]
    fn current_state_without_previous_is_an_input() {
        let l = Layout::from_command_list(GameKind::Chess960, "%state %FEN %top_all").expect("valid");
        assert_eq!(l.input_count(), 2);
        assert_eq!(l.outputs(), &[Role::Top(TopK::All)]);
        assert_eq!(l.header_line(), "<mav game=chess960> %state %FEN %top_all </mav>");
    }

    #[test]
    fn bad_headers_are_rejected_with_reasons() {
        let g = GameKind::Chess;
        for bad in [
            "%top_5",
            "%state",
            "%state %best_action",
            "%prev_FEN %state",
            "%prev_action %state",
            "%state %top_1 %state",
            "%state %state %top_1",
            "%state %top_0",
            "%state %top_05",
            "%state %top_x",
            "%state %bogus",
            "%state %top_1 %top_2",
            "%state %top_1 %best_action %FEN %FEN",
        ] {
            assert!(Layout::from_command_list(g, bad).is_err(), "{bad} should be rejected");
        }
        assert!(matches!(
            Layout::parse("<mav game=go> %state %top_1 </mav>"),
            Err(HeaderError::UnknownGame(_))
        ));
        assert!(Layout::parse("<mav game=chess> %state %top_1").is_err());
        assert!(Layout::parse("").is_err());
    }
}
