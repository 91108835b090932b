//! Rendering Connect Four and Hex labels: the same text and encoder examples as chess, through the same
//! protocol code ([`super::render::render_state`]): headers `<mav game=connect_four>` / `<mav game=hex>`,
//! `%state` lines only (these games have no FEN), a random k or `%top_all`, moves in a seeded random
//! order, `%best_action` with or without the state after it, state tracking (`%prev_state` +
//! `%prev_action`) when the parent label is known, and terminal examples for moves that end the game.
//! No action-value example: that format (Ruoss et al.) is defined for chess only.

use super::game_label::{four_state, hex_state};
use super::record::{LabelGame, LabelRecord};
use super::render::{RenderError, RenderOptions, Rendered, render_chess_label, render_state};
use crate::mav::tokenizer::Tokenizer;

/// Renders one label of any game. `parent` is the label of the position before it in its continuation
/// chain, if known. Chess labels give all three formats; Connect Four and Hex labels no action-value
/// example, a format that exists for chess only.
pub fn render_label(
    rec: &LabelRecord,
    parent: Option<&LabelRecord>,
    tokenizer: &Tokenizer,
    move_index: &std::collections::HashMap<String, u32>,
    opts: &RenderOptions,
) -> Result<Rendered, RenderError> {
    if rec.game.is_chess() {
        render_chess_label(rec, parent, tokenizer, move_index, opts)
    } else {
        render_game_label(rec, parent, tokenizer, opts)
    }
}

/// Renders a Connect Four or Hex label (`parent`: the label before it in its chain, if known).
pub fn render_game_label(
    rec: &LabelRecord,
    parent: Option<&LabelRecord>,
    tokenizer: &Tokenizer,
    opts: &RenderOptions,
) -> Result<Rendered, RenderError> {
    let bad = |reason: String| RenderError::Label { fen: rec.fen.clone(), reason };
    // A parent of another game cannot be this label's parent.
    let parent = parent.filter(|p| p.game == rec.game);
    match rec.game {
        LabelGame::ConnectFour => {
            let state = four_state(&rec.fen).map_err(|e| bad(e.to_string()))?;
            let parent = parent.map(|p| four_state(&p.fen)).transpose().map_err(|e| bad(e.to_string()))?;
            Ok(render_state(rec, &state, parent, tokenizer, opts)?.0)
        }
        LabelGame::Hex => {
            let state = hex_state(&rec.fen).map_err(|e| bad(e.to_string()))?;
            let parent = parent.map(|p| hex_state(&p.fen)).transpose().map_err(|e| bad(e.to_string()))?;
            Ok(render_state(rec, &state, parent, tokenizer, opts)?.0)
        }
        LabelGame::Chess => Err(bad("a chess label is rendered by render_chess_label".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::game_label::{GameLabelSettings, GameLabeler, HexLabelOptions};
    use crate::datagen::record::Split;
    use crate::game::connect_four::ConnectFourState;
    use crate::game::hex::HexState;
    use crate::game::{GameKind, GameState};
    use crate::mav::buckets::Buckets;
    use crate::mav::response::parse_example_text;
    use crate::mav::state::MavState;

    fn record<S: MavState>(
        game: LabelGame,
        state: &S,
        label: crate::datagen::Label,
        ply: u32,
    ) -> LabelRecord {
        LabelRecord {
            game,
            fen: state.mav_state(),
            chess960: false,
            moves: label.moves,
            best: label.best,
            depth: label.depth,
            nodes: label.nodes,
            source: "random:8".into(),
            ply,
            split: Split::Train,
            search_path: Vec::new(),
        }
    }

    fn check_clean<S: MavState>(r: &Rendered, game: &str) {
        let tok = Tokenizer::new();
        assert!(r.av.is_none());
        for ex in &r.lm {
            assert!(ex.prompt.starts_with(&format!("<mav game={game}>")), "{}", ex.prompt);
            assert!(!ex.prompt.contains("%FEN") && !ex.prompt.contains("%prev_FEN"), "{}", ex.prompt);
            let text = format!("{}{}", ex.prompt, ex.target);
            let (_, _, parsed) = parse_example_text::<S>(&text, Buckets::mav()).expect("the prompt reads");
            assert!(parsed.is_clean(), "{text}\n{parsed:?}");
            assert!(!tok.encode(&text).contains(&tok.unk_id()), "{text}");
        }
        let enc = r.enc.as_ref().expect("encoder example");
        assert!(!enc.ids.contains(&tok.unk_id()));
    }

    #[test]
    fn connect_four_labels_render_clean_examples_with_state_tracking() {
        let g =
            GameLabelSettings { game: LabelGame::ConnectFour, opening_min: 12, opening_max: 12, hex: None };
        let mut l = GameLabeler::new(&g, 0).expect("labeller");
        let parent = ConnectFourState::from_moves("1234567123").expect("moves");
        let child = parent.play(parent.parse_action("4").expect("legal")).expect("plays");
        let p = record(LabelGame::ConnectFour, &parent, l.label_four(&parent).expect("labels"), 0);
        let c = record(LabelGame::ConnectFour, &child, l.label_four(&child).expect("labels"), 1);
        let opts = RenderOptions { lm_per_position: 6, state_tracking: 1.0, ..RenderOptions::default() };
        let r = render_game_label(&c, Some(&p), &Tokenizer::new(), &opts).expect("renders");
        assert!(r.lm.iter().filter(|e| e.source == "random").all(|e| e.prompt.contains("[%prev_action 4]")));
        check_clean::<ConnectFourState>(&r, "connect_four");
        let enc = r.enc.expect("encoder");
        let mav = Buckets::mav();
        for (i, &pos) in enc.move_pos.iter().enumerate() {
            let text = Tokenizer::new().token_of(enc.ids[pos]).expect("token").to_owned();
            let m = c.moves.iter().find(|m| m.uci == text).expect("a labelled move");
            assert_eq!(enc.buckets[i], mav.bucket_of(m.score.win_probability()).expect("bucket"));
        }
        assert_eq!(GameKind::ConnectFour, crate::datagen::render::label_game(&c));
    }

    #[test]
    fn hex_labels_render_clean_examples_and_terminal_ones() {
        let g = GameLabelSettings {
            game: LabelGame::Hex,
            opening_min: 0,
            opening_max: 0,
            hex: Some(HexLabelOptions { size: 3, swap: false, exact_empty: 16, playouts: 100 }),
        };
        let mut l = GameLabeler::new(&g, 0).expect("labeller");
        // x to move can win at once by b3 (a column a1-b2 ... joined top to bottom).
        let mut s = HexState::new(3).expect("3x3");
        for m in ["b1", "a1", "b2", "a2"] {
            s = s.play(s.parse_action(m).expect("legal")).expect("plays");
        }
        let rec = record(LabelGame::Hex, &s, l.label_hex(&s).expect("labels"), 0);
        let opts = RenderOptions { lm_per_position: 4, ..RenderOptions::default() };
        let r = render_game_label(&rec, None, &Tokenizer::new(), &opts).expect("renders");
        check_clean::<HexState>(&r, "hex");
        assert!(r.lm.iter().any(|e| e.source == "terminal" && e.target.contains("invalid")), "{:?}", r.lm);
        // With the swap rule, the second player's first choice includes `swap` (one token).
        let mut l = GameLabeler::new(&g, 0).expect("labeller");
        let first = HexState::new(3).expect("3x3").with_swap(true);
        let s = first.play(first.parse_action("a1").expect("legal")).expect("plays");
        let rec = record(LabelGame::Hex, &s, l.label_hex(&s).expect("labels"), 1);
        assert!(rec.moves.iter().any(|m| m.uci == "swap"));
        let p = record(LabelGame::Hex, &first, l.label_hex(&first).expect("labels"), 0);
        let opts = RenderOptions { lm_per_position: 6, state_tracking: 1.0, top_all: 1.0, ..opts };
        let r = render_game_label(&rec, Some(&p), &Tokenizer::new(), &opts).expect("renders");
        check_clean::<HexState>(&r, "hex");
        assert!(r.lm.iter().all(|e| e.target.contains("swap:") && e.prompt.contains("[%prev_action a1]")));
    }
}
