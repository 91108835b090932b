//! Synthetic MAV examples for checking the format and the tokenizer (not training data: the values are
//! random, not engine evaluations). Positions come from seeded random legal play from the standard start
//! or from a Chess960 start.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

use super::buckets::Buckets;
use super::command::{Command, Layout, StateFormat, TopK};
use super::example::{Example, ExampleSpec, MoveOrder, MoveValue, render_example};
use super::trace::{NodeEval, TraceConfig, build_tree, write_trace};
use crate::game::chess::ChessState;
use crate::game::{GameKind, GameState};

/// Chess960 start position number `n` (0..960, Scharnagl numbering; 518 is the standard array).
pub fn chess960_start(n: u32) -> ChessState {
    let n = n % 960;
    let mut rank = [' '; 8];
    rank[(2 * (n % 4) + 1) as usize] = 'b';
    rank[(2 * ((n / 4) % 4)) as usize] = 'b';
    let free = |rank: &mut [char; 8], nth: u32, piece: char| {
        if let Some(i) = (0..8).filter(|&i| rank[i] == ' ').nth(nth as usize) {
            rank[i] = piece;
        }
    };
    free(&mut rank, (n / 16) % 6, 'q');
    const KNIGHTS: [(u32, u32); 10] =
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];
    let (k1, k2) = KNIGHTS[(n / 96) as usize];
    free(&mut rank, k2, 'n');
    free(&mut rank, k1, 'n');
    for p in ['r', 'k', 'r'] {
        free(&mut rank, 0, p);
    }
    let black: String = rank.iter().collect();
    let white = black.to_ascii_uppercase();
    let rooks: Vec<char> = (0..8).filter(|&i| rank[i] == 'r').map(|i| char::from(b"abcdefgh"[i])).collect();
    let castling: String =
        rooks.iter().map(|c| c.to_ascii_uppercase()).chain(rooks.iter().copied()).collect();
    let fen = format!("{black}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - 0 1");
    let pos: Chess = fen
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(CastlingMode::Chess960).ok())
        .unwrap_or_default();
    ChessState::new(pos, CastlingMode::Chess960)
}

/// Plays up to `plies` random legal moves from `start`; returns (previous state, action, state) triples
/// along the way, so every position is reachable.
pub fn random_line(
    start: &ChessState,
    plies: usize,
    rng: &mut impl Rng,
) -> Vec<(ChessState, shakmaty::Move, ChessState)> {
    let mut out = Vec::with_capacity(plies);
    let mut s = start.clone();
    for _ in 0..plies {
        let moves = s.legal_actions();
        let Some(&m) = moves.choose(rng) else { break };
        let Ok(next) = s.play(m) else { break };
        out.push((s, m, next.clone()));
        s = next;
    }
    out
}

/// A random header (random state formats, previous state or not, k, best action, after-states); `None`
/// only for a game without FEN.
pub fn random_layout(game: GameKind, rng: &mut impl Rng) -> Option<Layout> {
    let formats = |rng: &mut ChaCha8Rng| -> Vec<StateFormat> {
        match rng.random_range(0..4) {
            0 => vec![StateFormat::State],
            1 => vec![StateFormat::Fen],
            2 => vec![StateFormat::Fen, StateFormat::State],
            _ => vec![StateFormat::State, StateFormat::Fen],
        }
    };
    let mut r = ChaCha8Rng::seed_from_u64(rng.random());
    let mut cmds = Vec::new();
    if r.random_bool(0.5) {
        cmds.extend(formats(&mut r).into_iter().map(Command::Prev));
        cmds.push(Command::PrevAction);
    }
    cmds.extend(formats(&mut r).into_iter().map(Command::State));
    let k = if r.random_bool(0.3) { TopK::All } else { TopK::Count(r.random_range(1..=40)) };
    cmds.push(Command::Top(k));
    if r.random_bool(0.7) {
        cmds.push(Command::BestAction);
        if r.random_bool(0.6) {
            cmds.extend(formats(&mut r).into_iter().map(Command::State));
        }
    }
    // The construction above always follows the accepted order.
    Layout::new(game, &cmds).ok()
}

/// A synthetic example for the transition `prev --action--> state` with random values and best move.
pub fn random_example(
    prev: &ChessState,
    action: shakmaty::Move,
    state: &ChessState,
    rng: &mut impl Rng,
) -> Option<Example> {
    let layout = random_layout(state.kind(), rng)?;
    let values: Vec<(shakmaty::Move, MoveValue)> = state
        .legal_actions()
        .into_iter()
        .map(|m| {
            (
                m,
                if rng.random_bool(0.5) {
                    MoveValue::WinProb(rng.random())
                } else {
                    MoveValue::Bucket(rng.random_range(0..64))
                },
            )
        })
        .collect();
    let best = values.choose(rng).map(|(m, _)| *m);
    let spec = ExampleSpec {
        layout: &layout,
        previous: Some((prev, action)),
        state,
        values: &values,
        best,
        order: MoveOrder::Shuffled(rng.random()),
        buckets: Buckets::mav(),
    };
    render_example(&spec).ok()
}

/// `count` synthetic examples from seeded random games (every third from a Chess960 start).
pub fn random_examples(count: usize, seed: u64) -> Vec<Example> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    let mut game = 0u32;
    while out.len() < count {
        let start =
            if game % 3 == 2 { chess960_start(rng.random_range(0..960)) } else { ChessState::startpos() };
        game += 1;
        let plies = rng.random_range(1..200);
        for (prev, m, s) in random_line(&start, plies, &mut rng) {
            if out.len() < count
                && rng.random_bool(0.2)
                && let Some(e) = random_example(&prev, m, &s, &mut rng)
            {
                out.push(e);
            }
        }
    }
    out
}

/// `count` synthetic internal-search traces (random positions and random evaluations; breadth 1–3,
/// depth 0–2, `%state` or `%FEN`, `%top_all`).
pub fn random_traces(count: usize, seed: u64) -> Vec<Example> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let start = if rng.random_bool(0.5) {
            ChessState::startpos()
        } else {
            chess960_start(rng.random_range(0..960))
        };
        let plies = rng.random_range(0..80);
        let state = random_line(&start, plies, &mut rng).pop().map_or(start, |(_, _, s)| s);
        let cfg = TraceConfig {
            breadth: rng.random_range(1..=3),
            depth: rng.random_range(0..=2),
            state_format: if rng.random_bool(0.5) { StateFormat::State } else { StateFormat::Fen },
            top: TopK::All,
            buckets: Buckets::mav(),
        };
        let mut eval = |s: &ChessState| {
            let values: Vec<_> =
                s.legal_actions().into_iter().map(|m| (m, rng.random_range(0..64u32))).collect();
            let best = values.choose(&mut rng).map(|v| v.0);
            NodeEval { values, best }
        };
        if let Ok(t) = write_trace(&build_tree(state, &cfg, &mut eval), &cfg) {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::mav::state::MavState;

    #[test]
    fn chess960_numbering() {
        assert!(chess960_start(518).fen().starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w "));
        assert!(chess960_start(0).fen().starts_with("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w "));
        assert!(chess960_start(0).mav_state().ends_with(" |hfhf0000001||"));
        let all: std::collections::HashSet<String> = (0..960).map(|n| chess960_start(n).fen()).collect();
        assert_eq!(all.len(), 960);
        assert!((0..960).all(|n| chess960_start(n).legal_actions().len() >= 18));
    }

    #[test]
    fn random_examples_are_deterministic() {
        let a = random_examples(5, 9);
        assert_eq!(a.len(), 5);
        assert_eq!(a, random_examples(5, 9));
    }
}
