//! The command-line choices every subcommand shares: the game (`--game`) and the scoring of a value
//! distribution (`--scoring`, `--internal-scoring`). One [`clap::ValueEnum`] each, so every command
//! accepts the same spellings and names the wrong value the same way.

use mavboard::game::GameKind;

/// `--game`: the game a command works on. Case does not matter (the arguments set `ignore_case`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GameArg {
    /// Chess (Chess960 positions too).
    Chess,
    /// Chess960: read as chess, except where the MAV header names the game.
    #[value(hide = true)]
    Chess960,
    /// Connect Four on the standard 7 × 6 board.
    #[value(name = "connect_four", alias = "connect-four", alias = "connect4", alias = "c4")]
    ConnectFour,
    /// Hex (see --hex-size).
    Hex,
}

impl GameArg {
    /// The game kind as written: Chess960 stays Chess960.
    pub fn kind(self) -> GameKind {
        match self {
            GameArg::Chess => GameKind::Chess,
            GameArg::Chess960 => GameKind::Chess960,
            GameArg::ConnectFour => GameKind::ConnectFour,
            GameArg::Hex => GameKind::Hex,
        }
    }

    /// The rules the command plays by: Chess960 is chess.
    pub fn rules(self) -> GameKind {
        match self {
            GameArg::Chess960 => GameKind::Chess,
            other => other.kind(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn spellings_parse_and_chess960_is_chess_by_rules() {
        assert_eq!(GameArg::from_str("C4", true), Ok(GameArg::ConnectFour));
        assert_eq!(GameArg::from_str("connect-four", true), Ok(GameArg::ConnectFour));
        assert_eq!(GameArg::from_str("chess960", true).map(GameArg::rules), Ok(GameKind::Chess));
        assert!(GameArg::from_str("go", true).is_err());
    }
}
