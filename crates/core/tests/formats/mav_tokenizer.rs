//! Tokenizer round trips over many rendered examples and traces from random legal play (standard and
//! Chess960 starts, seeded), the move-token set, and the encoder input.

use mavboard_core::game::GameState;
use mavboard_core::game::chess::ChessState;
use mavboard_core::mav::buckets::Buckets;
use mavboard_core::mav::command::{StateFormat, TopK};
use mavboard_core::mav::encoder_input::encoder_input;
use mavboard_core::mav::sample::{chess960_start, random_examples, random_line};
use mavboard_core::mav::state::MavState;
use mavboard_core::mav::tokenizer::Tokenizer;
use mavboard_core::mav::trace::{NodeEval, TraceConfig, build_tree, write_trace};
use mavboard_core::mav::vocab;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Position;

#[test]
fn rendered_examples_round_trip_exactly() {
    let t = Tokenizer::new();
    let examples = random_examples(400, 2024);
    for e in &examples {
        let text = e.text();
        let ids = t.encode(&text);
        assert!(!ids.contains(&t.unk_id()), "unknown text in {text}");
        assert_eq!(t.decode(&ids).expect("valid ids"), text);
        // Prompt and response tokenize independently to the same ids (the split is on a newline).
        let (p, r) = (t.encode(&e.prompt()), t.encode(&e.response()));
        assert_eq!([p, r].concat(), ids);
    }
}

#[test]
fn every_legal_move_on_random_games_has_one_token_and_states_are_fixed_length() {
    let t = Tokenizer::new();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut castles960 = 0;
    for game in 0..60 {
        let start =
            if game % 2 == 0 { ChessState::startpos() } else { chess960_start(rng.random_range(0..960)) };
        for (_, _, s) in random_line(&start, 300, &mut rng) {
            let moves = s.legal_actions();
            for m in &moves {
                let text = s.action_to_text(*m);
                assert!(t.id_of(&text).is_some(), "{text} has no token");
                if m.is_castle() && s.castling_mode() == shakmaty::CastlingMode::Chess960 {
                    castles960 += 1;
                }
            }
            let e = encoder_input(&t, &s, &moves).expect("in vocabulary");
            let sep = e.ids.iter().position(|&id| id == t.sep_id()).expect("separator");
            assert!(
                sep == 79 || (sep == 80 && s.position().halfmoves() >= 100),
                "state part of {sep} tokens"
            );
            let state_text = s.mav_state();
            assert_eq!(t.decode(&t.encode(&state_text)).expect("ids"), state_text);
        }
    }
    assert!(castles960 > 0, "the random games include Chess960 castling moves");
}

#[test]
fn traces_round_trip_exactly() {
    let t = Tokenizer::new();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let start = chess960_start(100);
    for (i, (_, _, s)) in random_line(&start, 40, &mut rng).into_iter().enumerate().step_by(8) {
        let cfg = TraceConfig {
            breadth: 2,
            depth: 2,
            state_format: if i % 2 == 0 { StateFormat::State } else { StateFormat::Fen },
            top: TopK::All,
            buckets: Buckets::mav(),
        };
        let mut r = ChaCha8Rng::seed_from_u64(i as u64);
        let mut eval = |s: &ChessState| {
            let values: Vec<_> =
                s.legal_actions().into_iter().map(|m| (m, r.random_range(0..64u32))).collect();
            NodeEval { best: values.first().map(|v| v.0), values }
        };
        let text = write_trace(&build_tree(s, &cfg, &mut eval), &cfg).expect("writable").text();
        let ids = t.encode(&text);
        assert!(!ids.contains(&t.unk_id()));
        assert_eq!(t.decode(&ids).expect("ids"), text);
    }
}

#[test]
fn vocabulary_counts() {
    let t = Tokenizer::new();
    assert_eq!(vocab::chess_moves().len(), 1968);
    assert_eq!(t.vocab_size(), 2188);
    assert_eq!(
        (t.id_of("<pad>"), t.id_of("<eos>"), t.id_of("<unk>"), t.id_of("<sep>")),
        (Some(0), Some(1), Some(2), Some(3))
    );
    for i in 0..128 {
        assert!(t.id_of(&format!("<ctrl{i}>")).is_some());
    }
}

fn alphabet() -> Vec<String> {
    vocab::vocabulary().into_iter().filter(|s| !vocab::SPECIALS.contains(&s.as_str())).collect()
}

proptest! {
    #[test]
    fn any_concatenation_of_tokens_round_trips(picks in proptest::collection::vec(0usize..2177, 0..60)) {
        let t = Tokenizer::new();
        let a = alphabet();
        let text: String = picks.iter().map(|&i| a[i % a.len()].as_str()).collect();
        let ids = t.encode(&text);
        prop_assert!(!ids.contains(&t.unk_id()));
        prop_assert_eq!(t.decode(&ids).expect("ids"), text);
    }

    #[test]
    fn buckets_are_consistent(k in 1u32..300, p in 0.0f64..=1.0) {
        let b = Buckets::new(k).expect("k ≥ 1");
        let i = b.bucket_of(p).expect("finite");
        let (lo, hi) = b.range(i).expect("in range");
        prop_assert!(lo <= p && (p < hi || (i == k - 1 && p <= 1.0)));
        prop_assert_eq!(b.bucket_of(b.centre(i).expect("in range")).expect("finite"), i);
    }

    #[test]
    fn win_probability_inverts(cp in -3000.0f64..3000.0) {
        let p = mavboard_core::mav::buckets::win_prob_from_cp(cp);
        prop_assert!((0.0..=1.0).contains(&p));
        prop_assert!((mavboard_core::mav::buckets::cp_from_win_prob(p) - cp).abs() < 1e-6 * cp.abs().max(1.0));
    }
}
