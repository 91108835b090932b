//! Move matching, Maia's measure of human-likeness: how often a model's top move is the move a rated player
//! made, per 100-point band of the mover's rating (the PGN's `WhiteElo` / `BlackElo`). The top move is the
//! policy's most likely move when the model gives a policy (an lc0 network, a best-action head, a
//! behavioural-cloning package), else its best-valued move under the chosen scoring rule.

use shakmaty::{Move, Position};

use crate::game::chess::ChessState;
use crate::inference::evaluator::{EvalRequest, EvalResult, Evaluator, Scoring};
use crate::pgn::tree::{GameTree, TreeError};
use crate::search::mcts::HISTORY_KEPT;

/// The width of a rating band.
pub const BAND: u32 = 100;

/// One move of a rated game to predict.
#[derive(Debug, Clone)]
pub struct RatedMove {
    /// The position before the move.
    pub state: ChessState,
    /// The game's positions before it, oldest first (at most [`HISTORY_KEPT`]).
    pub history: Vec<ChessState>,
    /// The move the player made.
    pub played: Move,
    /// The mover's rating.
    pub rating: u32,
}

/// The moves of `tree`'s main line from ply `skip_plies` on (ply 0 is the first move) whose mover has a
/// rating tag that is a number; the others are left out.
pub fn rated_moves(tree: &GameTree, skip_plies: usize) -> Result<Vec<RatedMove>, TreeError> {
    // Ratings are positive and below 10,000 (Elo); anything else is not a rating.
    let elo = |tag: &str| {
        tree.header(tag).and_then(|v| v.trim().parse::<u32>().ok()).filter(|&e| e > 0 && e < 10_000)
    };
    let (white, black) = (elo("WhiteElo"), elo("BlackElo"));
    let positions = tree.mainline_positions()?;
    let mut out = Vec::new();
    for (i, pair) in positions.windows(2).enumerate() {
        let (before, (node, _)) = (&pair[0].1, &pair[1]);
        let Some(mv) = tree.node(*node).and_then(|n| n.mv()) else { continue };
        let rating = match before.position().turn() {
            shakmaty::Color::White => white,
            shakmaty::Color::Black => black,
        };
        let Some(rating) = rating.filter(|_| i >= skip_plies) else { continue };
        let history = positions[i.saturating_sub(HISTORY_KEPT)..i].iter().map(|(_, s)| s.clone()).collect();
        out.push(RatedMove { state: before.clone(), history, played: mv, rating });
    }
    Ok(out)
}

/// How the model's top move was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TopBy {
    /// The policy's most likely move.
    Policy,
    /// The best value under the scoring rule.
    Value,
}

/// The model's top move in `result`: the policy's most likely move when it gave a policy, else the best
/// value under `scoring`.
pub fn top_move(result: &EvalResult<ChessState>, scoring: Scoring) -> Option<(Move, TopBy)> {
    if let Some(p) = result.best_action.as_ref().filter(|p| p.len() == result.moves.len() && !p.is_empty()) {
        let i = p.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i)?;
        return Some((result.moves[i].action, TopBy::Policy));
    }
    result.best_by(scoring).map(|(a, _)| (a, TopBy::Value))
}

/// One rating band's count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Band {
    /// Its lowest rating (a multiple of [`BAND`]).
    pub from: u32,
    /// Moves predicted.
    pub moves: u64,
    /// Of those, moves the model's top move matched.
    pub matched: u64,
}

impl Band {
    /// The share matched (0 when there is no move).
    pub fn accuracy(&self) -> f64 {
        if self.moves == 0 { 0.0 } else { self.matched as f64 / self.moves as f64 }
    }
}

/// A model's move matching over a set of rated moves.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MatchingReport {
    /// By band, lowest first; only bands with moves.
    pub bands: Vec<Band>,
    /// All moves predicted.
    pub total: Band,
    /// Moves whose evaluation failed (not counted in the bands).
    pub failed: u64,
    /// Moves predicted by the policy (the rest by value).
    pub by_policy: u64,
}

impl MatchingReport {
    fn add(&mut self, rating: u32, matched: bool) {
        let from = rating / BAND * BAND;
        let i = match self.bands.binary_search_by_key(&from, |b| b.from) {
            Ok(i) => i,
            Err(i) => {
                self.bands.insert(i, Band { from, ..Band::default() });
                i
            }
        };
        for b in [&mut self.bands[i], &mut self.total] {
            b.moves += 1;
            b.matched += u64::from(matched);
        }
    }
}

/// Predicts every move of `moves` with `evaluator` (`batch` requests per call; `progress` is told how many
/// are done after each call). The requests ask for the position and its policy only, which an lc0 network
/// answers with one row; the others answer as usual.
pub fn move_matching<E: Evaluator<ChessState> + ?Sized>(
    evaluator: &mut E,
    moves: &[RatedMove],
    batch: usize,
    scoring: Scoring,
    mut progress: impl FnMut(usize),
) -> MatchingReport {
    let mut report = MatchingReport::default();
    let mut done = 0;
    for chunk in moves.chunks(batch.max(1)) {
        let requests: Vec<EvalRequest<ChessState>> = chunk
            .iter()
            .map(|m| EvalRequest {
                history: m.history.clone(),
                want_best_action: true,
                position_only: true,
                ..EvalRequest::values(m.state.clone())
            })
            .collect();
        let answers = evaluator.evaluate(&requests);
        for (i, m) in chunk.iter().enumerate() {
            match answers.get(i).and_then(|a| a.as_ref().ok()).and_then(|r| top_move(r, scoring)) {
                Some((top, by)) => {
                    report.by_policy += u64::from(by == TopBy::Policy);
                    report.add(m.rating, top == m.played);
                }
                None => report.failed += 1,
            }
        }
        done += chunk.len();
        progress(done);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::inference::material_net::MaterialNet;
    use crate::pgn::reader::read_all;

    const GAME: &str = "[WhiteElo \"1534\"]\n[BlackElo \"?\"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5 *\n";

    #[test]
    fn rated_moves_carry_the_movers_rating_and_history() {
        let tree = read_all(GAME).remove(0).expect("a game");
        let moves = rated_moves(&tree, 0).expect("main line");
        // Black has no rating: only White's three moves.
        assert_eq!(moves.len(), 3);
        assert!(moves.iter().all(|m| m.rating == 1534));
        assert_eq!(moves[1].history.len(), 2, "after 1. e4 d5");
        assert_eq!(moves[1].state.action_to_text(moves[1].played), "e4d5");
        assert_eq!(rated_moves(&tree, 2).expect("main line").len(), 2, "ply 0 and 1 skipped");
    }

    #[test]
    fn a_capture_loving_policy_matches_the_captures() {
        let tree = read_all(GAME).remove(0).expect("a game");
        let mut net = MaterialNet::new(0);
        let moves = rated_moves(&tree, 0).expect("main line");
        let mut calls = Vec::new();
        let r = move_matching(&mut net, &moves, 2, Scoring::Mean, |n| calls.push(n));
        assert_eq!(calls, [2, 3]);
        assert_eq!(net.rows, 3, "one row per position");
        assert_eq!(r.by_policy, 3);
        // 2. exd5 is the only capture; e4 and Nc3 are not what a capture-lover plays first.
        let capture = top_move(
            &net.evaluate(&[EvalRequest::values(moves[1].state.clone())]).remove(0).expect("answer"),
            Scoring::Mean,
        );
        assert_eq!(capture.map(|(m, _)| m), Some(moves[1].played));
        assert_eq!(r.total.moves, 3);
        assert!(r.total.matched >= 1);
        assert_eq!(r.bands.len(), 1);
        assert_eq!(r.bands[0].from, 1500);
        assert_eq!((r.bands[0].moves, r.bands[0].matched), (r.total.moves, r.total.matched));
    }
}
