//! Rendering training examples from labels, with the protocol module (never a second implementation).
//!
//! One labelled position yields, per the training data contract (training/README.md):
//! - `mav-lm` examples: MAV texts with a randomly drawn header — `%FEN`, `%state` or both; with or without
//!   state tracking (`%prev_FEN`/`%prev_state` + `%prev_action`, when the position's parent is known);
//!   `%top_k` with k drawn from 1..all (k may exceed the number of moves) or `%top_all`; `%best_action`
//!   with or without the state after it; moves in a seeded random order. Positions one move away from
//!   the end of the game also give terminal examples (`[%top_k invalid : "1-0"]`).
//! - a `mav-encoder` example: `%state` tokens, `<sep>`, the legal moves in random order, each with its
//!   bucket and win probability, and the index of the best move.
//! - an `action-value` example (Ruoss et al.): the 77 state tokens, every move's index among the 1968
//!   chess moves, and its bucket out of 128.
//!
//! Everything is drawn from a ChaCha8 stream seeded by the run seed and the position, so a render is
//! reproducible and independent of the order in which shards are read.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::record::{LabelGame, LabelRecord};
use crate::game::chess::ChessState;
use crate::game::fen::ModeChoice;
use crate::game::{GameKind, GameState};
use crate::mav::buckets::Buckets;
use crate::mav::command::{Command, Layout, StateFormat, TopK};
use crate::mav::encoder_input::encoder_input;
use crate::mav::example::{ExampleSpec, MoveOrder, MoveValue, render_example};
use crate::mav::searchless;
use crate::mav::state::MavState;
use crate::mav::tokenizer::Tokenizer;

/// A text-model example: the prompt and the text the model should write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LmExample {
    /// Header and input lines.
    pub prompt: String,
    /// Output lines (the trainer appends `<eos>`).
    pub target: String,
    /// `mav` or `search`.
    pub kind: &'static str,
    /// Where the position came from (`book`, `game`, `terminal`).
    pub source: &'static str,
}

/// An encoder example.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EncExample {
    /// Token ids: state tokens, `<sep>`, moves.
    pub ids: Vec<u32>,
    /// Index in `ids` of each move token.
    pub move_pos: Vec<usize>,
    /// Each move's value bucket (K = 64).
    pub buckets: Vec<u32>,
    /// Each move's win probability.
    pub wp: Vec<f64>,
    /// Index (into `move_pos`) of the best move.
    pub best: usize,
}

/// An action-value example.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AvExample {
    /// The 77 state tokens.
    pub state_ids: Vec<u32>,
    /// Each move's index in the sorted list of 1968 chess moves.
    pub action_ids: Vec<u32>,
    /// Each move's bucket (K = 128).
    pub buckets: Vec<u32>,
}

/// What one label renders to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// Text-model examples.
    pub lm: Vec<LmExample>,
    /// The encoder example.
    pub enc: Option<EncExample>,
    /// The action-value example.
    pub av: Option<AvExample>,
}

/// Why a label cannot be rendered (the label set is then inconsistent: every one is a bug report).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The FEN does not parse.
    #[error("label {fen}: {reason}")]
    Label {
        /// The label's FEN.
        fen: String,
        /// What is wrong.
        reason: String,
    },
}

/// Knobs of the renderer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderOptions {
    /// Run seed.
    pub seed: u64,
    /// Text examples per position.
    pub lm_per_position: usize,
    /// Share of positions (whose parent is known) rendered with state tracking.
    pub state_tracking: f64,
    /// Share of text examples asking for `%top_all`.
    pub top_all: f64,
    /// The share of internal-search traces among the text examples of each split (0 = none; see
    /// [`super::search_render`] and [`super::render_run::render_dirs`]).
    pub search_share: f64,
    /// The longest trace written, in tokens (prompt + target + `<eos>`).
    pub search_max_tokens: usize,
    /// The largest trace breadth (2 to [`super::tree::MAX_SEARCH_BREADTH`]); traces of breadth 2 up to it
    /// and depth 1–2 are written ([`super::search_render::search_shapes`]).
    pub search_max_breadth: u32,
}

/// The default of [`RenderOptions::search_max_tokens`]: the context length of the `mav-lm-tiny` config.
pub const DEFAULT_SEARCH_MAX_TOKENS: usize = 1024;

/// The default of [`RenderOptions::search_max_breadth`]: the largest trace breadth a render writes unless
/// asked for another ([`super::search_render::search_shapes`]).
pub const DEFAULT_SEARCH_MAX_BREADTH: u32 = 3;

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            seed: 0,
            lm_per_position: 1,
            state_tracking: 0.3,
            top_all: 0.3,
            search_share: 0.0,
            search_max_tokens: DEFAULT_SEARCH_MAX_TOKENS,
            search_max_breadth: DEFAULT_SEARCH_MAX_BREADTH,
        }
    }
}

/// The position of a label.
pub fn label_state(rec: &LabelRecord) -> Result<ChessState, RenderError> {
    let mode = if rec.chess960 { ModeChoice::Chess960 } else { ModeChoice::Standard };
    ChessState::from_fen_mode(&rec.fen, mode)
        .map_err(|e| RenderError::Label { fen: rec.fen.clone(), reason: e.to_string() })
}

/// The label's moves as (move, win probability), best first, each checked to be legal.
fn label_values<S: GameState>(rec: &LabelRecord, state: &S) -> Result<Vec<(S::Action, f64)>, RenderError> {
    rec.moves
        .iter()
        .map(|m| {
            state
                .parse_action(&m.uci)
                .map(|a| (a, m.score.win_probability()))
                .map_err(|e| RenderError::Label { fen: rec.fen.clone(), reason: e.to_string() })
        })
        .collect()
}

/// Finds the move that leads from `parent` to `child`, if one does.
pub fn connecting_move<S: GameState>(parent: &S, child: &S) -> Option<S::Action> {
    let target = child.hash64();
    parent.legal_actions().into_iter().find(|&a| parent.play(a).is_ok_and(|s| s.hash64() == target))
}

/// The state lines of one example: `%FEN`, `%state` or both for chess; `%state` (without a draw) for the
/// games that have no FEN.
fn formats(rng: &mut ChaCha8Rng, kind: GameKind) -> Vec<StateFormat> {
    if !matches!(kind, GameKind::Chess | GameKind::Chess960) {
        return vec![StateFormat::State];
    }
    match rng.random_range(0..3) {
        0 => vec![StateFormat::Fen],
        1 => vec![StateFormat::State],
        _ => vec![StateFormat::Fen, StateFormat::State],
    }
}

fn draw_k(rng: &mut ChaCha8Rng, legal: usize, top_all: f64) -> TopK {
    if rng.random_bool(top_all.clamp(0.0, 1.0)) {
        TopK::All
    } else {
        // Mostly small k (as the paper uses k = 5 in search), sometimes more than the moves available.
        let cap = (legal + 4).max(2) as u32;
        let k = if rng.random_bool(0.5) { rng.random_range(1..=5) } else { rng.random_range(1..=cap) };
        TopK::Count(k)
    }
}

fn text_example<S: MavState>(
    rng: &mut ChaCha8Rng,
    state: &S,
    values: &[(S::Action, f64)],
    best: Option<S::Action>,
    previous: Option<(&S, S::Action)>,
    opts: &RenderOptions,
    source: &'static str,
) -> Result<LmExample, RenderError> {
    let err = |reason: String| RenderError::Label { fen: state.to_text(), reason };
    let kind = state.kind();
    let mut commands = Vec::new();
    if let Some(_p) = previous {
        commands.extend(formats(rng, kind).into_iter().map(Command::Prev));
        commands.push(Command::PrevAction);
    }
    commands.extend(formats(rng, kind).into_iter().map(Command::State));
    commands.push(Command::Top(draw_k(rng, values.len().max(1), opts.top_all)));
    let terminal = state.outcome().is_some();
    if !terminal && rng.random_bool(0.8) {
        commands.push(Command::BestAction);
        if rng.random_bool(0.5) {
            commands.extend(formats(rng, kind).into_iter().map(Command::State));
        }
    }
    let layout = Layout::new(state.kind(), &commands).map_err(|e| err(e.to_string()))?;
    let values: Vec<(S::Action, MoveValue)> =
        values.iter().map(|&(a, wp)| (a, MoveValue::WinProb(wp))).collect();
    let spec = ExampleSpec {
        layout: &layout,
        previous,
        state,
        values: &values,
        best,
        order: MoveOrder::Shuffled(rng.random()),
        buckets: Buckets::mav(),
    };
    let ex = render_example(&spec).map_err(|e| err(e.to_string()))?;
    Ok(LmExample { prompt: ex.prompt(), target: ex.response(), kind: "mav", source })
}

/// The `source` of a label's text examples: `game` for positions from game records, `random` for the
/// random openings of Connect Four and Hex runs, else `book`.
pub fn source_kind(rec: &LabelRecord) -> &'static str {
    if rec.source.starts_with("game:") {
        "game"
    } else if rec.source.starts_with("random:") {
        "random"
    } else {
        "book"
    }
}

/// Renders one chess label in all three formats. `parent` is the label of the position before it in its
/// continuation chain, if known. Labels of any game go through `game_render::render_label`.
pub fn render_chess_label(
    rec: &LabelRecord,
    parent: Option<&LabelRecord>,
    tokenizer: &Tokenizer,
    move_index: &std::collections::HashMap<String, u32>,
    opts: &RenderOptions,
) -> Result<Rendered, RenderError> {
    if !rec.game.is_chess() {
        let reason = "a Connect Four or Hex label is rendered by render_game_label".to_owned();
        return Err(RenderError::Label { fen: rec.fen.clone(), reason });
    }
    let state = label_state(rec)?;
    let parent_state = parent.map(label_state).transpose()?;
    let (mut out, values) = render_state(rec, &state, parent_state, tokenizer, opts)?;
    let err = |reason: String| RenderError::Label { fen: rec.fen.clone(), reason };
    // Action-value.
    let av = Buckets::new(128).map_err(|e| err(e.to_string()))?;
    let state_ids = searchless::tokenize_fen(&state.to_text()).map_err(|e| err(e.to_string()))?;
    let mut action_ids = Vec::with_capacity(values.len());
    let mut av_buckets = Vec::with_capacity(values.len());
    for &(a, p) in &values {
        let text = state.action_to_text(a);
        action_ids
            .push(*move_index.get(&text).ok_or_else(|| err(format!("move {text} has no action index")))?);
        av_buckets.push(av.bucket_of(p).map_err(|e| err(e.to_string()))?);
    }
    out.av = Some(AvExample { state_ids, action_ids, buckets: av_buckets });
    Ok(out)
}

/// A label's moves with their win probabilities, in the label's order.
pub type MoveValues<S> = Vec<(<S as GameState>::Action, f64)>;

/// The text and encoder examples of a label whose position is `state` (`parent`: the position of its
/// parent label, if known), for any game; also returns the label's (move, win probability) pairs.
pub fn render_state<S: MavState>(
    rec: &LabelRecord,
    state: &S,
    parent: Option<S>,
    tokenizer: &Tokenizer,
    opts: &RenderOptions,
) -> Result<(Rendered, MoveValues<S>), RenderError> {
    let values = label_values(rec, state)?;
    let err = |reason: String| RenderError::Label { fen: rec.fen.clone(), reason };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ state.hash64());
    let best = state.parse_action(&rec.best).ok().or_else(|| values.first().map(|v| v.0));
    let parent_link = parent.and_then(|ps| connecting_move(&ps, state).map(|m| (ps, m)));
    let mut out = Rendered::default();
    let source = source_kind(rec);
    for _ in 0..opts.lm_per_position {
        let previous = parent_link
            .as_ref()
            .filter(|_| rng.random_bool(opts.state_tracking.clamp(0.0, 1.0)))
            .map(|(p, m)| (p, *m));
        out.lm.push(text_example(&mut rng, state, &values, best, previous, opts, source)?);
    }
    // Terminal examples: a move that ends the game leads to a state whose answer is its result.
    for &(a, _) in &values {
        if let Ok(next) = state.play(a)
            && next.outcome().is_some()
        {
            let track = rng.random_bool(0.5);
            let previous = Some((state, a)).filter(|_| track);
            out.lm.push(text_example(&mut rng, &next, &[], None, previous, opts, "terminal")?);
        }
    }
    // Encoder: all moves, shuffled.
    let mav = Buckets::mav();
    let mut order: Vec<usize> = (0..values.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let moves: Vec<S::Action> = order.iter().map(|&i| values[i].0).collect();
    let input = encoder_input(tokenizer, state, &moves).map_err(|e| err(e.to_string()))?;
    let wp: Vec<f64> = order.iter().map(|&i| values[i].1).collect();
    let buckets = wp
        .iter()
        .map(|&p| mav.bucket_of(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(e.to_string()))?;
    let best_idx = best.and_then(|b| moves.iter().position(|&m| m == b)).unwrap_or(0);
    out.enc =
        Some(EncExample { ids: input.ids, move_pos: input.move_positions, buckets, wp, best: best_idx });
    Ok((out, values))
}

/// The action index of every chess move: its position in the byte-sorted list of 1968 moves.
pub fn move_index() -> std::collections::HashMap<String, u32> {
    searchless::action_index()
}

/// The game a label belongs to.
pub fn label_game(rec: &LabelRecord) -> GameKind {
    match rec.game {
        LabelGame::ConnectFour => GameKind::ConnectFour,
        LabelGame::Hex => GameKind::Hex,
        LabelGame::Chess if rec.chess960 => GameKind::Chess960,
        LabelGame::Chess => GameKind::Chess,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::{MoveLabel, Split};
    use crate::datagen::score::LabelScore;

    fn label(fen: &str) -> LabelRecord {
        let s = ChessState::from_fen_mode(fen, ModeChoice::Auto).expect("fen");
        let moves = s
            .legal_actions()
            .into_iter()
            .enumerate()
            .map(|(i, a)| MoveLabel { uci: s.action_to_text(a), score: LabelScore::Cp(50 - 10 * i as i32) })
            .collect::<Vec<_>>();
        LabelRecord {
            game: crate::datagen::record::LabelGame::Chess,
            fen: s.fen(),
            chess960: s.kind() == GameKind::Chess960,
            best: moves[0].uci.clone(),
            moves,
            depth: 1,
            nodes: 1,
            source: "2moves_v1".into(),
            ply: 0,
            split: Split::Train,
            search_path: Vec::new(),
        }
    }

    #[test]
    fn renders_all_three_formats_reproducibly() {
        let tok = Tokenizer::new();
        let idx = move_index();
        let rec = label("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let opts = RenderOptions { lm_per_position: 3, ..RenderOptions::default() };
        let a = render_chess_label(&rec, None, &tok, &idx, &opts).expect("renders");
        let b = render_chess_label(&rec, None, &tok, &idx, &opts).expect("renders");
        assert_eq!(a, b);
        assert_eq!(a.lm.len(), 3);
        for ex in &a.lm {
            assert!(ex.prompt.starts_with("<mav game=chess>"), "{}", ex.prompt);
            assert!(!ex.target.is_empty());
        }
        let enc = a.enc.expect("encoder example");
        assert_eq!(enc.move_pos.len(), 20);
        assert_eq!(enc.buckets.len(), 20);
        // The best move (value 50 cp) is where `best` points.
        assert!((enc.wp[enc.best] - crate::mav::buckets::win_prob_from_cp(50.0)).abs() < 1e-12);
        let av = a.av.expect("av example");
        assert_eq!(av.state_ids.len(), searchless::STATE_LEN);
        assert_eq!(av.action_ids.len(), 20);
        assert!(av.buckets.iter().all(|&b| b < 128));
    }

    #[test]
    fn state_tracking_uses_the_parent() {
        let tok = Tokenizer::new();
        let idx = move_index();
        let parent = label("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let child = label("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let opts = RenderOptions { lm_per_position: 8, state_tracking: 1.0, ..RenderOptions::default() };
        let r = render_chess_label(&child, Some(&parent), &tok, &idx, &opts).expect("renders");
        assert!(r.lm.iter().all(|e| e.prompt.contains("[%prev_action e2e4]")), "{:?}", r.lm[0]);
        // An unrelated "parent" gives no state tracking.
        let other = label("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        let r = render_chess_label(&child, Some(&other), &tok, &idx, &opts).expect("renders");
        assert!(r.lm.iter().all(|e| !e.prompt.contains("%prev_action")));
    }

    #[test]
    fn mating_moves_give_terminal_examples() {
        let tok = Tokenizer::new();
        // White mates with Qh7# ... use a simple back-rank mate: Ra8#.
        let rec = label("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
        let r =
            render_chess_label(&rec, None, &tok, &move_index(), &RenderOptions::default()).expect("renders");
        let terminal: Vec<_> = r.lm.iter().filter(|e| e.source == "terminal").collect();
        assert_eq!(terminal.len(), 1);
        assert!(terminal[0].target.contains("invalid : \"1-0\""), "{}", terminal[0].target);
    }

    #[test]
    fn chess960_labels_render() {
        let tok = Tokenizer::new();
        let rec = label("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9");
        assert!(rec.chess960);
        let r =
            render_chess_label(&rec, None, &tok, &move_index(), &RenderOptions::default()).expect("renders");
        assert!(r.lm[0].prompt.starts_with("<mav game=chess960>"), "{}", r.lm[0].prompt);
    }
}
