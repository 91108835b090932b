//! The game on the board: a chess game tree (the analysis board) or a Connect Four / Hex game, where it
//! came from, and a counter that tells the engine glue when the position changed.

use std::path::PathBuf;

use super::board_game::BoardGame;
use super::command::{BoardMove, Navigate};
use super::game::GameDoc;
use super::game_review::DocStamp;
use super::line::MoveHistory;
use crate::game::{ActionError, GameState};

/// The game on the board and what is known about it.
#[derive(Default)]
pub struct Document {
    /// The chess game (a tree with variations) and the line the board follows. Kept while another game
    /// is on the board, so that chess comes back as it was.
    pub line: GameDoc,
    /// The Connect Four or Hex game on the board (`None`: chess, the analysis board).
    pub board_game: Option<BoardGame>,
    /// The file the chess game came from or was saved to.
    pub current_file: Option<PathBuf>,
    /// Players of the loaded game, if known.
    pub players: Option<(String, String)>,
    /// Increments whenever the chess position on the board changes (for the engine glue to notice).
    pub position_generation: u64,
    /// The game list entry the line was opened from: (list id, game number, the document's stamp then).
    pub opened_game: Option<(u64, usize, DocStamp)>,
    /// [`Document::position_generation`] when the Connect Four or Hex game was put on the board.
    pub(super) board_game_since: u64,
}

impl Document {
    /// Replaces the chess game (a new position for the engine glue).
    pub fn set_line(&mut self, line: GameDoc) {
        self.line = line;
        self.position_generation += 1;
    }

    /// Forgets where the chess game came from (a new game, a FEN): no file, no players.
    pub fn forget_origin(&mut self) {
        self.players = None;
        self.current_file = None;
    }

    /// Plays `mv` at the cursor of the game on the board. A chess move on a Connect Four or Hex board
    /// (or the other way round, a notation chess cannot read) is refused with the reason.
    pub fn play(&mut self, mv: BoardMove) -> Result<(), ActionError> {
        match (self.board_game.as_mut(), mv) {
            (Some(g), BoardMove::Notation(text)) => g.play(&text),
            (Some(_), BoardMove::Chess(mv)) => Err(ActionError::Illegal {
                text: format!("{mv} (a chess move, and chess is not on the board)"),
            }),
            (None, BoardMove::Notation(text)) => {
                let mv = self.line.current().parse_action(&text)?;
                self.play_chess(mv)
            }
            (None, BoardMove::Chess(mv)) => self.play_chess(mv),
        }
    }

    fn play_chess(&mut self, mv: shakmaty::Move) -> Result<(), ActionError> {
        self.line.play(mv)?;
        self.position_generation += 1;
        Ok(())
    }

    /// Moves the cursor of the game on the board.
    pub fn navigate(&mut self, to: Navigate) {
        let (cursor, len) = match &self.board_game {
            Some(g) => (g.cursor(), g.moves().len()),
            None => (self.line.cursor(), self.line.moves().len()),
        };
        let n = match to {
            Navigate::Start => 0,
            Navigate::Back => cursor.saturating_sub(1),
            Navigate::Forward => (cursor + 1).min(len),
            Navigate::End => len,
            Navigate::To(i) => i.min(len),
        };
        match self.board_game.as_mut() {
            Some(g) => g.go_to(n),
            None if n != cursor => {
                self.line.go_to(n);
                self.position_generation += 1;
            }
            None => {}
        }
    }

    /// The record of the game on the board, and what it is called: the PGN of the chess game, or the
    /// Connect Four move string / Hex SGF.
    pub fn record(&self) -> Result<(String, &'static str), super::error::AppError> {
        match &self.board_game {
            Some(g) => g.record().map(|r| (r, "Game record")),
            None => Ok((self.line.to_pgn(), "PGN")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::board_game::GameChoice;

    #[test]
    fn one_move_command_and_one_navigation_for_every_game() {
        let mut doc = Document::default();
        doc.play(BoardMove::Notation("e2e4".into())).expect("legal");
        assert_eq!(doc.line.cursor(), 1);
        assert_eq!(doc.position_generation, 1);
        assert!(doc.play(BoardMove::Notation("e2e4".into())).is_err());
        doc.navigate(Navigate::Back);
        assert_eq!((doc.line.cursor(), doc.position_generation), (0, 2));
        doc.navigate(Navigate::Back);
        assert_eq!(doc.position_generation, 2, "nothing moved");
        assert_eq!(doc.record().expect("pgn").1, "PGN");

        doc.board_game = Some(BoardGame::new(GameChoice::ConnectFour).expect("connect four"));
        doc.play(BoardMove::Notation("4".into())).expect("legal");
        doc.play(BoardMove::Notation("4".into())).expect("legal");
        let e2e4 = doc.line.current().parse_action("e2e4").expect("legal");
        assert!(doc.play(BoardMove::Chess(e2e4)).is_err());
        doc.navigate(Navigate::Start);
        assert_eq!(doc.board_game.as_ref().map(|g| g.cursor()), Some(0));
        doc.navigate(Navigate::End);
        assert_eq!(doc.board_game.as_ref().map(|g| g.cursor()), Some(2));
        assert_eq!(doc.position_generation, 2, "the chess game stayed as it was");
        let (record, name) = doc.record().expect("record");
        assert_eq!((record.as_str(), name), ("44", "Game record"));
    }
}
