//! The [`Agent`] interface the game loop plays through, and what an agent sees. Generic over the game
//! ([`GameState`]); chess is the default so the chess league reads as before.

use super::LeagueError;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::solve::stop::StopFlag;

/// The game so far, as an agent sees it when it is to move.
#[derive(Debug, Clone, Copy)]
pub struct GameView<'a, G: GameState = ChessState> {
    /// The opening position the game started from.
    pub start: &'a G,
    /// The moves played since, in order.
    pub moves: &'a [G::Action],
    /// The current position (the agent's side is to move).
    pub state: &'a G,
    /// The current ply counted from the game's real start (the opening's move number), for schedules.
    pub ply: u32,
}

impl<G: GameState> GameView<'_, G> {
    /// The positions of the game before the current one, oldest first, the last `keep` of them (from the
    /// opening position on; a model that reads history, an lc0 network, is shown them).
    pub fn history(&self, keep: usize) -> Vec<G> {
        let mut positions = Vec::with_capacity(self.moves.len());
        let mut state = self.start.clone();
        for m in self.moves {
            let Ok(next) = state.play(*m) else { break };
            positions.push(std::mem::replace(&mut state, next));
        }
        let cut = positions.len().saturating_sub(keep);
        positions.split_off(cut)
    }
}

/// The move an agent chose and a short note for the game record (its value, the search's statistics, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<G: GameState = ChessState> {
    /// The move (legal in the position it was asked about).
    pub action: G::Action,
    /// A note for the move's comment in the record.
    pub note: Option<String>,
}

/// A player of the league.
pub trait Agent<G: GameState = ChessState> {
    /// The label used in the records and the tables.
    fn label(&self) -> &str;

    /// A new game starts (clear trees, hash tables).
    fn new_game(&mut self) -> Result<(), LeagueError>;

    /// Chooses a move in `game.state`, which is not over.
    fn choose(&mut self, game: &GameView<'_, G>) -> Result<Choice<G>, LeagueError>;

    /// Gives the agent the league's stop flag, for a move that can take long (the exact solver): once the
    /// flag is set it may return at once with any move, which the game loop throws away with the game.
    fn watch(&mut self, _stop: &StopFlag) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_history_is_its_positions_before_the_current_one() {
        let start = ChessState::startpos();
        let moves: Vec<_> = ["e2e4", "e7e5", "g1f3"]
            .iter()
            .scan(start.clone(), |s, t| {
                let m = s.parse_action(t).expect("legal");
                *s = s.play(m).expect("plays");
                Some(m)
            })
            .collect();
        let state = moves.iter().fold(start.clone(), |s, m| s.play(*m).expect("plays"));
        let view = GameView { start: &start, moves: &moves, state: &state, ply: 3 };
        let all = view.history(128);
        assert_eq!(all.len(), 3);
        assert_eq!(all[0], start);
        assert_eq!(all[2].play(moves[2]).expect("plays"), state);
        assert_eq!(view.history(2), all[1..].to_vec());
        assert!(view.history(0).is_empty());
    }
}
