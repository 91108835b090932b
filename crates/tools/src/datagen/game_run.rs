//! Connect Four and Hex label runs: random openings, continuations sampled from the labels, the solvers
//! as labellers, on the same driver as chess ([`super::run`]: worker pool, shards, manifest, resume,
//! deduplication by position hash, train/val split by hash).
//!
//! Chain `c` draws from its own random stream: an opening length uniform in
//! `opening_min..=opening_max`, that many uniformly random legal moves from the empty board (drawn again
//! when the game ends on the way), then the labelled position and up to `continuations` more, each move
//! sampled from the previous position's labels with the run's temperature (as chess runs do).

use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::DatagenError;
use super::game_label::{GameLabelSettings, GameLabeler};
use super::label::Label;
use super::label_settings::LabelSettings;
use super::manifest::{ShardSpec, SourceInfo};
use super::record::{LabelGame, LabelRecord};
use super::run::{Labelled, Progress, RunPlan, RunSummary, drive};
use super::sample::{chain_rng, sample_move, split_of};
use crate::game::GameState;
use crate::game::connect_four::ConnectFourState;
use crate::game::hex::HexState;
use crate::mav::state::MavState;

/// Attempts at drawing an opening that does not end the game, per chain.
const OPENING_ATTEMPTS: usize = 1000;

/// Plays `plies` random legal moves from `start`; `None` when the game ends (or nothing is legal) first.
fn random_opening<S: GameState>(start: &S, plies: u32, rng: &mut ChaCha8Rng) -> Option<S> {
    let mut s = start.clone();
    for _ in 0..plies {
        let legal = s.legal_actions();
        if legal.is_empty() || s.outcome().is_some() {
            return None;
        }
        s = s.play(legal[rng.random_range(0..legal.len())]).ok()?;
    }
    (s.outcome().is_none() && !s.legal_actions().is_empty()).then_some(s)
}

/// The source tag of a chain that starts `plies` random plies in.
fn opening_tag(plies: u32) -> String {
    format!("random:{plies}")
}

/// Labels one chain of `S` positions from `start` with `label`.
fn chain<S: MavState>(
    start: &S,
    game: LabelGame,
    g: &GameLabelSettings,
    settings: &LabelSettings,
    chain: u64,
    label: &mut dyn FnMut(&S) -> Result<Label, DatagenError>,
) -> Result<Vec<Labelled>, DatagenError> {
    let mut rng = chain_rng(settings.seed, chain);
    let mut opening = None;
    for _ in 0..OPENING_ATTEMPTS {
        let plies = rng.random_range(g.opening_min..=g.opening_max);
        if let Some(s) = random_opening(start, plies, &mut rng) {
            opening = Some((s, plies));
            break;
        }
    }
    let Some((mut state, plies)) = opening else {
        return Err(DatagenError::Settings(format!(
            "{OPENING_ATTEMPTS} random openings of {} to {} plies all ended the game: ask for shorter openings",
            g.opening_min, g.opening_max
        )));
    };
    let tag = opening_tag(plies);
    let mut out = Vec::new();
    for ply in 0..=settings.continuations {
        if state.outcome().is_some() || state.legal_actions().is_empty() {
            break;
        }
        let l = label(&state)?;
        let hash = state.hash64();
        let record = LabelRecord {
            game,
            fen: state.mav_state(),
            chess960: false,
            moves: l.moves,
            best: l.best,
            depth: l.depth,
            nodes: l.nodes,
            source: tag.clone(),
            ply,
            split: split_of(hash, settings.val_fraction),
            search_path: Vec::new(),
        };
        let next = if ply < settings.continuations {
            sample_move(&record.moves, settings.temperature, &mut rng).map(|m| m.uci.clone())
        } else {
            None
        };
        out.push((hash, record));
        let Some(text) = next else { break };
        let bad = |e: crate::game::ActionError| DatagenError::BadLabel {
            fen: state.mav_state(),
            reason: format!("its labelled move cannot be played: {e}"),
        };
        let action = state.parse_action(&text).map_err(bad)?;
        state = state.play(action).map_err(bad)?;
    }
    Ok(out)
}

/// Labels chain `chain` of a Connect Four or Hex run.
fn label_game_chain(
    labeler: &mut GameLabeler,
    g: &GameLabelSettings,
    settings: &LabelSettings,
    index: u64,
) -> Result<Vec<Labelled>, DatagenError> {
    labeler.reset();
    match &g.hex {
        None => chain(&ConnectFourState::new(), LabelGame::ConnectFour, g, settings, index, &mut |s| {
            labeler.label_four(s)
        }),
        Some(h) => {
            let start =
                HexState::new(h.size).map_err(|e| DatagenError::Settings(e.to_string()))?.with_swap(h.swap);
            chain(&start, LabelGame::Hex, g, settings, index, &mut |s| labeler.label_hex(s))
        }
    }
}

/// The one "source" of a game run: random openings, described for the manifest.
fn game_source(g: &GameLabelSettings) -> SourceInfo {
    let board = g.hex.as_ref().map_or("7×6".to_owned(), |h| format!("{0}×{0}", h.size));
    SourceInfo {
        tag: "random".to_owned(),
        origin: format!(
            "{} {board}: {} to {} uniformly random plies from the empty board",
            g.game.name(),
            g.opening_min,
            g.opening_max
        ),
        weight: 1.0,
        positions: 0,
    }
}

/// Runs (or resumes) a Connect Four or Hex labels run into `out`: like [`super::run_labels`], with
/// `settings.game` saying the game and `settings.limit` = [`super::Limit::Solver`].
pub fn run_game_labels(
    out: &Path,
    settings: &LabelSettings,
    threads: usize,
    stop_after_shards: Option<usize>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunSummary, DatagenError> {
    run_game_labels_shard(out, settings, None, threads, stop_after_shards, progress)
}

/// [`run_game_labels`] for one shard of a run split over machines (`shard`; `None` = the whole run; see
/// [`super::run`]).
pub fn run_game_labels_shard(
    out: &Path,
    settings: &LabelSettings,
    shard: Option<ShardSpec>,
    threads: usize,
    stop_after_shards: Option<usize>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunSummary, DatagenError> {
    let Some(g) = settings.game.clone() else {
        return Err(DatagenError::Settings("chess labels are run by run_labels".into()));
    };
    let (factory_g, job_g, job_settings, seed) = (g.clone(), g.clone(), settings.clone(), settings.seed);
    drive(
        RunPlan { out, settings, shard, threads, stop_after_shards },
        vec![game_source(&g)],
        move |_| Ok((GameLabeler::new(&factory_g, seed)?, factory_g.labeler_name())),
        move |labeler: &mut GameLabeler, c: u64| label_game_chain(labeler, &job_g, &job_settings, c),
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::label_settings::Limit;

    fn settings(game: GameLabelSettings) -> LabelSettings {
        LabelSettings {
            positions: 12,
            limit: Limit::Solver,
            continuations: 3,
            temperature: 0.25,
            seed: 5,
            val_fraction: 0.2,
            chains_per_shard: 4,
            hash_mb: 0,
            search_share: 0.0,
            search_breadth: 3,
            search_depth: 2,
            game: Some(game),
        }
    }

    #[test]
    fn chains_are_reproducible_start_after_the_opening_and_follow_legal_moves() {
        let g =
            GameLabelSettings { game: LabelGame::ConnectFour, opening_min: 14, opening_max: 16, hex: None };
        let s = settings(g.clone());
        let mut l = GameLabeler::new(&g, s.seed).expect("labeller");
        let a = label_game_chain(&mut l, &g, &s, 3).expect("labels");
        let b = label_game_chain(&mut l, &g, &s, 3).expect("labels");
        assert_eq!(a, b);
        assert!(!a.is_empty() && a.len() <= 4);
        for (i, (hash, r)) in a.iter().enumerate() {
            let st = crate::datagen::game_label::four_state(&r.fen).expect("reads");
            assert_eq!(st.hash64(), *hash);
            assert!(st.plies() >= 14, "{} plies", st.plies());
            assert_eq!(r.ply as usize, i);
            assert!(r.source.starts_with("random:"));
        }
        assert!(GameLabelSettings { opening_min: 3, ..g }.check().is_ok());
    }

    #[test]
    fn an_opening_that_ends_the_game_is_drawn_again() {
        let mut rng = chain_rng(1, 1);
        // One stone on 1×1 joins both of its owner's edges: every one-ply opening ends the game.
        let tiny = HexState::new(1).expect("1x1");
        assert!(random_opening(&tiny, 1, &mut rng).is_none());
        let four = random_opening(&ConnectFourState::new(), 6, &mut rng).expect("six plies never end a game");
        assert_eq!(four.plies(), 6);
    }
}
