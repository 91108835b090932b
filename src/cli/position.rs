//! The position a command works on, from its `--fen` (chess) or `--moves` (Connect Four, Hex) arguments,
//! with errors that name the argument at fault. `analyse` and `inspect` take the same arguments
//! ([`PositionArgs`], flattened into theirs).

use anyhow::Context;
use mavboard::game::GameKind;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;

use super::choice::GameArg;

/// The game and the position a command works on.
#[derive(Debug, Clone, clap::Args)]
pub struct PositionArgs {
    /// The game: chess, connect_four or hex.
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::Chess)]
    pub game: GameArg,
    /// Chess: the position (FEN, Shredder-FEN or X-FEN; `startpos` for the initial position).
    #[arg(long, default_value = "startpos")]
    pub fen: String,
    /// Connect Four: the moves from the empty board as a move string of columns 1-7 (`4453`); Hex: the
    /// cells played from the empty board, separated by spaces or commas (`d4 c5 e3`).
    #[arg(long, default_value = "")]
    pub moves: String,
    /// Hex: the board size (5..=13).
    #[arg(long, default_value_t = 7)]
    pub hex_size: u32,
}

/// A position of any game, as [`PositionArgs`] name it.
#[derive(Debug, Clone)]
pub enum Position {
    /// Chess or Chess960.
    Chess(ChessState),
    /// Connect Four.
    ConnectFour(ConnectFourState),
    /// Hex.
    Hex(HexState),
}

impl PositionArgs {
    /// The position the arguments name. `--fen` with Connect Four or Hex, or `--moves` with chess, is an
    /// error that names the argument and the one to use.
    pub fn position(&self) -> anyhow::Result<Position> {
        let game = self.game.rules();
        if !matches!(game, GameKind::Chess | GameKind::Chess960) {
            anyhow::ensure!(
                self.fen == "startpos",
                "--fen is for chess; give a {} position with --moves",
                if game == GameKind::Hex { "Hex" } else { "Connect Four" }
            );
        }
        Ok(match game {
            GameKind::Chess | GameKind::Chess960 => Position::Chess(chess(&self.fen, &self.moves)?),
            GameKind::ConnectFour => Position::ConnectFour(connect_four(&self.moves)?),
            GameKind::Hex => Position::Hex(hex(self.hex_size, &self.moves)?),
        })
    }
}

/// A chess position: `fen` (`startpos` for the initial position); `moves` must be empty.
pub fn chess(fen: &str, moves: &str) -> anyhow::Result<ChessState> {
    anyhow::ensure!(
        moves.is_empty(),
        "--moves is for Connect Four and Hex; give a chess position with --fen"
    );
    Ok(if fen == "startpos" { ChessState::startpos() } else { ChessState::from_fen(fen)? })
}

/// A Connect Four position: the columns played from the empty board (`4453`).
pub fn connect_four(moves: &str) -> anyhow::Result<ConnectFourState> {
    let record = mavboard::game::connect_four::record::read_moves(moves)
        .with_context(|| format!("--moves {moves:?}"))?;
    Ok(record.end())
}

/// A Hex position on a `size`×`size` board (5 to 13): the cells played, separated by spaces or commas.
pub fn hex(size: u32, moves: &str) -> anyhow::Result<HexState> {
    anyhow::ensure!((5..=13).contains(&size), "--hex-size {size}: Hex boards run from 5x5 to 13x13");
    let mut state = HexState::new(size).with_context(|| format!("--hex-size {size}"))?;
    for (i, text) in moves.split([' ', ',']).filter(|t| !t.is_empty()).enumerate() {
        let action = state.parse_action(text).with_context(|| format!("--moves: move {} ({text})", i + 1))?;
        state = state.play(action).with_context(|| format!("--moves: move {} ({text})", i + 1))?;
    }
    Ok(state)
}
