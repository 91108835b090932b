//! The position a command works on, from its `--fen` (chess) or `--moves` (Connect Four, Hex) arguments,
//! with errors that name the argument at fault.

use anyhow::Context;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;

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
