//! Shared by the labels tests (tests/cli/datagen_run.rs, tests/cli/datagen_shard.rs): a small deterministic
//! labeller standing in for Stockfish, the fixture opening files as sources, and the run's settings.

#![allow(dead_code)]

use std::sync::Arc;

use mavboard::datagen::run::{LabelSettings, Limit};
use mavboard::datagen::{DatagenError, EpdSource, Label, Labeler, MoveLabel, SourceMix};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::uci::ScoreValue;
use shakmaty::{Position, Role};

/// Scores each move by the material balance after it (mover's view, centipawns), mate as mate in 1.
pub struct MaterialLabeler;

fn material(pos: &shakmaty::Chess, color: shakmaty::Color) -> i32 {
    let value = |r: Role| match r {
        Role::Pawn => 100,
        Role::Knight | Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    };
    let board = pos.board();
    let mut total = 0;
    for sq in board.occupied() {
        if let Some(piece) = board.piece_at(sq) {
            let v = value(piece.role);
            total += if piece.color == color { v } else { -v };
        }
    }
    total
}

impl Labeler for MaterialLabeler {
    fn name(&self) -> String {
        "material-1ply".into()
    }

    fn label(&mut self, state: &ChessState) -> Result<Label, DatagenError> {
        let mover = state.position().turn();
        let mut moves: Vec<MoveLabel> = state
            .legal_actions()
            .into_iter()
            .map(|m| {
                let after = state.play(m).expect("legal move");
                let score = if after.position().is_checkmate() {
                    ScoreValue::Mate(1)
                } else {
                    // A small move-dependent term so that continuations branch.
                    let tie = (after.hash64() % 7) as i32;
                    ScoreValue::Cp(material(after.position(), mover) + tie)
                };
                MoveLabel { uci: state.action_to_text(m), score: score.into() }
            })
            .collect();
        moves.sort_by(|a, b| b.score.win_probability().total_cmp(&a.score.win_probability()));
        let best = moves.first().map(|m| m.uci.clone()).expect("at least one legal move");
        Ok(Label { moves, best, depth: 1, nodes: 0 })
    }
}

/// The fixture opening files as a source mix (2moves 0.5, UHO 0.3, Chess960 0.2).
pub fn mix() -> SourceMix {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datagen");
    let mut mix = SourceMix::new();
    for (file, chess960, weight) in [
        ("2moves_v1_head40.epd", false, 0.5),
        ("UHO_4060_v2_head20.epd.zip", false, 0.3),
        ("FRC_openings_head12.epd", true, 0.2),
    ] {
        let path = dir.join(file);
        let source = EpdSource::open(&path, &EpdSource::tag_for(&path), chess960).expect("fixture opens");
        mix.add(Arc::new(source), weight).expect("valid weight");
    }
    mix
}

/// The tests' label settings for `positions` records: depth 1, 3 chains per shard, no search trees.
pub fn settings(positions: usize) -> LabelSettings {
    LabelSettings {
        positions,
        limit: Limit::Depth(1),
        continuations: 6,
        temperature: 0.3,
        seed: 2024,
        val_fraction: 0.2,
        chains_per_shard: 3,
        hash_mb: 1,
        search_share: 0.0,
        search_breadth: 3,
        search_depth: 2,
        game: None,
    }
}
