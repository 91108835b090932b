//! The command-line choices every subcommand shares: the game (`--game`), how a text model decodes
//! (`--mode`) and the search's world model (`--world`). One [`clap::ValueEnum`] each, so every command
//! accepts the same spellings and names the wrong value the same way. (`--scoring` reads
//! [`mavboard::mav::scoring::Scoring`]'s own text form.)

use mavboard::game::GameKind;
use mavboard::inference::evaluator::DecodeMode;
use mavboard::search::mcts::WorldModel;

/// `--mode`: how a text model decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DecodeArg {
    /// The rules give the legal moves; the model orders and values them.
    #[default]
    Constrained,
    /// The model writes everything; its output and hallucinations are printed.
    Free,
}

impl From<DecodeArg> for DecodeMode {
    fn from(d: DecodeArg) -> DecodeMode {
        match d {
            DecodeArg::Constrained => DecodeMode::Constrained,
            DecodeArg::Free => DecodeMode::Free,
        }
    }
}

/// `--world`: who plays the moves inside MAV-MCTS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum WorldArg {
    /// The rules play the moves.
    #[default]
    Rules,
    /// The model predicts the next state, its moves and the end of the game (a `mav-lm` package).
    Learned,
}

impl From<WorldArg> for WorldModel {
    fn from(w: WorldArg) -> WorldModel {
        match w {
            WorldArg::Rules => WorldModel::Rules,
            WorldArg::Learned => WorldModel::Learned,
        }
    }
}

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
        assert_eq!(DecodeMode::from(DecodeArg::from_str("free", false).expect("free")), DecodeMode::Free);
        assert_eq!(
            WorldModel::from(WorldArg::from_str("learned", false).expect("learned")),
            WorldModel::Learned
        );
        assert!(WorldArg::from_str("dreams", false).is_err());
    }
}
