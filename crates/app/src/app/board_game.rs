//! Connect Four and Hex on the board: the game being played (a start position and the moves played, with
//! a cursor to step through them), and the solver beside it ([`crate::engine::oracle`]), which values
//! every legal move of the position on the board.
//!
//! Chess keeps its own richer document ([`super::game::GameDoc`]: PGN, variations, comments); these two
//! games have one line of moves, written as Connect Four's move string (`4453`) or Hex's SGF.

use super::error::AppError;
use crate::engine::Repaint;
use crate::engine::oracle::{Oracle, OraclePosition, OracleReport};
use crate::game::connect_four::ConnectFourState;
use crate::game::connect_four::record::write_moves;
use crate::game::hex::HexState;
use crate::game::hex::record::HexRecord;
use crate::game::{ActionError, GameKind, GameState, Outcome, Player};

/// Which board game, with its options (persisted as the last game chosen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum GameChoice {
    /// Chess (and Chess960): the analysis board with the model.
    #[default]
    Chess,
    /// Connect Four, 7 × 6.
    ConnectFour,
    /// Hex on a size × size board.
    Hex {
        /// The board size (1 to 13).
        size: u32,
        /// Whether the second player may swap after the first move.
        swap: bool,
    },
}

impl GameChoice {
    /// The name shown in the menu and the status bar.
    pub fn label(self) -> String {
        match self {
            GameChoice::Chess => "Chess".to_owned(),
            GameChoice::ConnectFour => "Connect Four".to_owned(),
            GameChoice::Hex { size, swap } => {
                format!("Hex {size}×{size}{}", if swap { " (swap rule)" } else { "" })
            }
        }
    }
}

/// A Connect Four or Hex position.
#[derive(Debug, Clone, PartialEq)]
pub enum BoardState {
    /// Connect Four.
    ConnectFour(ConnectFourState),
    /// Hex.
    Hex(HexState),
}

impl BoardState {
    /// The start position of `choice`, or why there is none (chess is not a board game here; a Hex size
    /// out of range).
    pub fn start(choice: GameChoice) -> Result<BoardState, AppError> {
        match choice {
            GameChoice::Chess => Err(AppError::ChessOnTheAnalysisBoard),
            GameChoice::ConnectFour => Ok(BoardState::ConnectFour(ConnectFourState::default())),
            GameChoice::Hex { size, swap } => HexState::new(size)
                .map(|s| BoardState::Hex(s.with_swap(swap)))
                .map_err(|e| AppError::HexBoard { size, reason: e.to_string() }),
        }
    }

    /// The game.
    pub fn kind(&self) -> GameKind {
        match self {
            BoardState::ConnectFour(s) => s.kind(),
            BoardState::Hex(s) => s.kind(),
        }
    }

    /// The player to move.
    pub fn to_move(&self) -> Player {
        match self {
            BoardState::ConnectFour(s) => s.to_move(),
            BoardState::Hex(s) => s.to_move(),
        }
    }

    /// The result, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            BoardState::ConnectFour(s) => s.outcome(),
            BoardState::Hex(s) => s.outcome(),
        }
    }

    /// The legal moves in the game's notation.
    pub fn legal_texts(&self) -> Vec<String> {
        match self {
            BoardState::ConnectFour(s) => {
                s.legal_actions().into_iter().map(|a| s.action_to_text(a)).collect()
            }
            BoardState::Hex(s) => s.legal_actions().into_iter().map(|a| s.action_to_text(a)).collect(),
        }
    }

    /// The position after the move written `text`, or why it cannot be played.
    pub fn play_text(&self, text: &str) -> Result<BoardState, ActionError> {
        Ok(match self {
            BoardState::ConnectFour(s) => BoardState::ConnectFour(s.play(s.parse_action(text)?)?),
            BoardState::Hex(s) => BoardState::Hex(s.play(s.parse_action(text)?)?),
        })
    }

    /// The position's one-line text.
    pub fn text(&self) -> String {
        match self {
            BoardState::ConnectFour(s) => s.to_text(),
            BoardState::Hex(s) => s.to_text(),
        }
    }

    fn oracle_position(&self) -> OraclePosition {
        match self {
            BoardState::ConnectFour(s) => OraclePosition::ConnectFour(*s),
            BoardState::Hex(s) => OraclePosition::Hex(*s),
        }
    }
}

/// The player's name in this game (Connect Four: first/second; Hex: x joins top and bottom, o left and
/// right).
pub fn player_name(kind: GameKind, player: Player) -> &'static str {
    match (kind, player) {
        (GameKind::Hex, Player::First) => "x (top–bottom)",
        (GameKind::Hex, Player::Second) => "o (left–right)",
        (_, Player::First) => "x (first)",
        (_, Player::Second) => "o (second)",
    }
}

/// A Connect Four or Hex game on the board: the moves played and where the cursor is.
#[derive(Debug, Clone)]
pub struct BoardGame {
    /// What was chosen (game and options).
    pub choice: GameChoice,
    /// The positions: the start, then one after each move.
    positions: Vec<BoardState>,
    /// The moves in the game's notation.
    moves: Vec<String>,
    /// How many moves are applied on the board.
    cursor: usize,
}

impl BoardGame {
    /// A new game of `choice` from its start position.
    pub fn new(choice: GameChoice) -> Result<BoardGame, AppError> {
        Ok(BoardGame { choice, positions: vec![BoardState::start(choice)?], moves: Vec::new(), cursor: 0 })
    }

    /// The start position of the game.
    pub fn start(&self) -> &BoardState {
        &self.positions[0]
    }

    /// The position on the board.
    pub fn current(&self) -> &BoardState {
        &self.positions[self.cursor]
    }

    /// The moves of the game.
    pub fn moves(&self) -> &[String] {
        &self.moves
    }

    /// How many moves are on the board.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Plays `text` at the cursor. Moves after the cursor are replaced when it differs from the next
    /// one, kept (the cursor steps forward) when it is the same.
    pub fn play(&mut self, text: &str) -> Result<(), ActionError> {
        let next = self.current().play_text(text)?;
        if self.moves.get(self.cursor).is_some_and(|m| m == text) {
            self.cursor += 1;
            return Ok(());
        }
        self.moves.truncate(self.cursor);
        self.positions.truncate(self.cursor + 1);
        self.moves.push(text.to_owned());
        self.positions.push(next);
        self.cursor += 1;
        Ok(())
    }

    /// Puts the cursor after `n` moves (clamped to the game).
    pub fn go_to(&mut self, n: usize) {
        self.cursor = n.min(self.moves.len());
    }

    /// The game as its record: Connect Four's move string, or Hex's SGF (HexGui dialect).
    pub fn record(&self) -> Result<String, AppError> {
        match self.positions.first() {
            Some(BoardState::ConnectFour(start)) => Ok(write_moves(&replay(*start, &self.moves)?)),
            Some(BoardState::Hex(start)) => {
                let actions = replay(*start, &self.moves)?;
                let record = HexRecord::new(start.size(), start.swap_rule(), &actions).map_err(|e| {
                    AppError::Replay {
                        number: actions.len(),
                        text: "the whole game".to_owned(),
                        reason: e.to_string(),
                    }
                })?;
                Ok(record.to_sgf())
            }
            None => Err(AppError::NoBoardGame),
        }
    }
}

/// The actions of `moves` (as written) played from `start`, or the first that does not replay.
fn replay<S: GameState>(start: S, moves: &[String]) -> Result<Vec<S::Action>, AppError> {
    let mut s = start;
    let mut actions = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        let bad = |reason: String| AppError::Replay { number: i + 1, text: m.clone(), reason };
        let a = s.parse_action(m).map_err(|e| bad(e.to_string()))?;
        s = s.play(a).map_err(|e| bad(e.to_string()))?;
        actions.push(a);
    }
    Ok(actions)
}

/// The solver beside the board: started for each new position, its newest report kept.
#[derive(Default)]
pub struct OracleLink {
    running: Option<(String, Oracle)>,
    /// The newest report for the position on the board.
    pub report: Option<OracleReport>,
    /// Why the solver could not start.
    pub error: Option<String>,
}

impl OracleLink {
    /// Follows the board: starts the solver when the position changed (stopping the previous one), and
    /// takes its reports. `enabled` false stops it.
    pub fn follow(&mut self, state: Option<&BoardState>, enabled: bool, repaint: &Repaint) {
        let text = state.filter(|_| enabled).map(BoardState::text);
        if self.running.as_ref().map(|r| &r.0) != text.as_ref() {
            self.running = None;
            self.report = None;
            self.error = None;
            if let (Some(state), Some(text)) = (state, text) {
                match Oracle::start(state.oracle_position(), repaint.clone()) {
                    Ok(o) => self.running = Some((text, o)),
                    Err(e) => self.error = Some(format!("The solver could not start: {e}")),
                }
            }
        }
        if let Some(r) = self.running.as_mut().and_then(|(_, o)| o.take_new()) {
            self.report = Some(r);
        }
    }
}

impl std::fmt::Debug for OracleLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OracleLink")
            .field("position", &self.running.as_ref().map(|r| &r.0))
            .field("report", &self.report)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_cursor_and_records() {
        let mut g = BoardGame::new(GameChoice::ConnectFour).expect("connect four");
        for m in ["4", "4", "5", "3"] {
            g.play(m).expect("legal");
        }
        assert_eq!(g.record().expect("writes"), "4453");
        g.go_to(2);
        // The same move as the game's next one steps forward and keeps the rest.
        g.play("5").expect("legal");
        assert_eq!((g.cursor(), g.moves().len()), (3, 4));
        // Another move replaces the rest.
        g.go_to(1);
        g.play("1").expect("legal");
        assert_eq!(g.record().expect("writes"), "41");
        assert!(matches!(g.play("8"), Err(ActionError::Syntax { .. })));
        assert_eq!(g.moves().len(), 2);

        let mut h = BoardGame::new(GameChoice::Hex { size: 5, swap: true }).expect("hex");
        h.play("c3").expect("legal");
        h.play("swap").expect("the swap is legal at the second move");
        assert!(matches!(h.play("c3"), Err(ActionError::Illegal { .. })), "c3 is taken");
        let sgf = h.record().expect("writes");
        assert!(sgf.contains("SZ[5]") && sgf.contains("swap-pieces"), "{sgf}");
        assert_eq!(h.current().to_move(), Player::First);
    }

    #[test]
    fn bad_choices_are_errors() {
        assert!(BoardGame::new(GameChoice::Chess).is_err());
        let e = BoardGame::new(GameChoice::Hex { size: 40, swap: false }).expect_err("too large");
        assert!(e.to_string().contains("40"), "{e}");
    }
}
