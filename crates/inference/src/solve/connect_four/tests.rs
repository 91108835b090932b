use rand::seq::IndexedRandom;
use rand::{SeedableRng, rngs::StdRng};

use super::*;

/// Full minimax over the rules of [`ConnectFourState`], no pruning, no table: the reference.
fn brute_force(state: &ConnectFourState) -> GameValue {
    match state.outcome() {
        Some(Outcome::Win { .. }) => return GameValue::Loss { plies: 0 },
        Some(Outcome::Draw { .. }) => return GameValue::Draw { plies: 0 },
        None => {}
    }
    state
        .legal_actions()
        .into_iter()
        .map(|c| brute_force(&state.play(c).expect("legal")).before_move())
        .max_by_key(|v| v.rank())
        .expect("a position that is not over has moves")
}

/// A position after `plies` random moves that is not over, from a seeded generator.
fn random_position(rng: &mut StdRng, plies: u32) -> ConnectFourState {
    loop {
        let mut s = ConnectFourState::new();
        for _ in 0..plies {
            let Some(&c) = s.legal_actions().choose(rng) else { break };
            s = s.play(c).expect("legal");
        }
        if s.outcome().is_none() && s.plies() == plies {
            return s;
        }
    }
}

fn state(moves: &str) -> ConnectFourState {
    ConnectFourState::from_moves(moves).expect("legal test position")
}

#[test]
fn agrees_with_brute_force_near_the_end() {
    let mut rng = StdRng::seed_from_u64(42);
    let mut solver = Solver::with_table_bits(16);
    let mut seen = [0; 3];
    for i in 0..60 {
        // 9 to 11 empty cells.
        let s = random_position(&mut rng, 31 + i % 3);
        let a = solver.analyse(&s);
        assert_eq!(a.moves.len(), s.legal_actions().len());
        for m in &a.moves {
            let want = brute_force(&s.play(m.column).expect("legal")).before_move();
            assert_eq!(m.value, want, "move {} in\n{}", m.column, s.diagram());
            seen[match want {
                GameValue::Win { .. } => 0,
                GameValue::Draw { .. } => 1,
                GameValue::Loss { .. } => 2,
            }] += 1;
        }
        assert_eq!(a.value, brute_force(&s), "\n{}", s.diagram());
        assert_eq!(solver.value(&s), a.value);
        let best = a.best.expect("not over");
        assert_eq!(a.moves.iter().find(|m| m.column == best).map(|m| m.value), Some(a.value));
    }
    assert!(seen.iter().all(|&n| n > 5), "wins, draws and losses all occur: {seen:?}");
}

#[test]
fn agrees_with_brute_force_with_a_tiny_table() {
    // A table much smaller than the tree forces many collisions and overwrites.
    let mut rng = StdRng::seed_from_u64(7);
    let mut solver = Solver::with_table_bits(10);
    for _ in 0..20 {
        let s = random_position(&mut rng, 30);
        assert_eq!(solver.value(&s), brute_force(&s), "\n{}", s.diagram());
    }
}

#[test]
fn published_scores_of_benchmark_positions() {
    // Scores of Pascal Pons's Connect Four benchmark positions ("Solving Connect 4", test set
    // Test_L3_R1): for the player to move, 22 − k for a win with the winner's k-th stone, the negation
    // for a loss, 0 for a draw.
    let facts = [
        ("2252576253462244111563365343671351441", -1),
        ("7422341735647741166133573473242566", 1),
        ("23163416124767223154467471272416755633", 0),
        ("65214673556155731566316327373221417", -1),
        ("52677675164321472411331752454", 0),
        ("67152117737262713366376314254", 6),
        ("2762751722231276466633475674533", 5),
        ("427566236745127177115664464254", 2),
        ("3575316255751336464276636772271112", -3),
    ];
    let mut solver = Solver::with_table_bits(18);
    for (moves, score) in facts {
        let s = state(moves);
        assert_eq!(solver.value(&s), GameValue::from_score(score, s.plies()), "{moves}");
    }
    // The first: the player to move (o) loses to x's 21st stone, ply 41, four plies from now.
    assert_eq!(solver.value(&state(facts[0].0)), GameValue::Loss { plies: 4 });
}

#[test]
fn immediate_wins_forced_replies_and_finished_games() {
    let mut solver = Solver::with_table_bits(12);
    let mut rng = StdRng::seed_from_u64(9);
    let (mut wins, mut forced) = (0, 0);
    for _ in 0..200 {
        let s = random_position(&mut rng, 30);
        let a = solver.analyse(&s);
        let winning: Vec<Column> = s
            .legal_actions()
            .into_iter()
            .filter(|&c| s.play(c).is_ok_and(|t| t.outcome().is_some_and(|o| o.winner().is_some())))
            .collect();
        if !winning.is_empty() {
            wins += 1;
            assert_eq!(a.value, GameValue::Win { plies: 1 });
            assert!(winning.contains(&a.best.expect("not over")));
            for m in a.moves.iter().filter(|m| winning.contains(&m.column)) {
                assert_eq!((m.value, m.win_prob, m.bucket), (GameValue::Win { plies: 1 }, 1.0, 63));
            }
            continue;
        }
        // The opponent's immediate wins if it were to move now: every move elsewhere loses in 2 plies
        // (unless it is below the threat and the threat is then still there, or a second threat exists).
        let pass = Pos::of(&s);
        let theirs = winning_cells(pass.current ^ pass.mask, pass.mask) & playable(pass.mask);
        if theirs.count_ones() == 1 {
            forced += 1;
            for m in &a.moves {
                let blocks = theirs & column_mask(m.column.index()) != 0;
                if !blocks {
                    assert_eq!(m.value, GameValue::Loss { plies: 2 }, "column {}\n{}", m.column, s.diagram());
                    assert_eq!(m.bucket, 0);
                }
            }
        }
    }
    assert!(wins > 5 && forced > 5, "{wins} immediate wins, {forced} forced replies");
    let over = state("1212121");
    let c = solver.analyse(&over);
    assert!(c.moves.is_empty() && c.best.is_none());
    assert_eq!(c.value, GameValue::Loss { plies: 0 });
}

#[test]
fn values_scores_and_buckets() {
    assert_eq!(GameValue::from_score(0, 10), GameValue::Draw { plies: 32 });
    // x (to move at ply 0) wins with its 21st stone: ply 41.
    assert_eq!(GameValue::from_score(1, 0), GameValue::Win { plies: 41 });
    // o to move at ply 1 loses to x's 21st stone.
    assert_eq!(GameValue::from_score(-1, 1), GameValue::Loss { plies: 40 });
    // o to move at ply 5 wins with its 4th stone: ply 8.
    assert_eq!(GameValue::from_score(18, 5), GameValue::Win { plies: 3 });
    let b = Buckets::mav();
    assert_eq!(GameValue::Draw { plies: 3 }.bucket(b), 32);
    assert_eq!(GameValue::Loss { plies: 3 }.bucket(b), 0);
    assert!(GameValue::Win { plies: 3 }.rank() > GameValue::Win { plies: 5 }.rank());
    assert!(GameValue::Loss { plies: 9 }.rank() > GameValue::Loss { plies: 3 }.rank());
    assert!(GameValue::Loss { plies: 41 }.rank() < GameValue::Draw { plies: 2 }.rank());
    assert_eq!(GameValue::Win { plies: 4 }.before_move(), GameValue::Loss { plies: 5 });
    assert_eq!(GameValue::Loss { plies: 7 }.describe(), "loss in 7");
}

#[test]
fn middle_game_positions_are_consistent_with_their_children_and_mirror() {
    // Positions of 16 to 20 plies: the value equals the best child value, each child solved by a fresh
    // solver, and the mirrored position has the mirrored values.
    let mut rng = StdRng::seed_from_u64(3);
    for plies in [16, 18, 20] {
        // Random play often leaves a position decided by immediate threats; take one that needs search.
        let (s, a) = std::iter::repeat_with(|| {
            let s = random_position(&mut rng, plies);
            let a = Solver::with_table_bits(20).analyse(&s);
            (s, a)
        })
        .take(50)
        .find(|(_, a)| a.nodes > 10_000)
        .expect("a position that needs search");
        let mut fresh = Vec::new();
        for c in s.legal_actions() {
            fresh.push(Solver::with_table_bits(20).value(&s.play(c).expect("legal")).before_move());
        }
        assert_eq!(a.moves.iter().map(|m| m.value).collect::<Vec<_>>(), fresh, "\n{}", s.diagram());
        let m = Solver::with_table_bits(20).analyse(&s.mirrored());
        let mirrored: Vec<_> = m.moves.iter().rev().map(|m| (m.column.mirrored(), m.value)).collect();
        let direct: Vec<_> = a.moves.iter().map(|m| (m.column, m.value)).collect();
        assert_eq!(mirrored, direct);
    }
}

#[test]
fn a_stop_flag_ends_a_long_solve_and_the_solver_stays_sound() {
    let flag = crate::solve::stop::StopFlag::new();
    let mut solver = Solver::with_table_bits(16);
    solver.set_stop(flag.clone());
    // The empty board takes minutes; the flag is set from another thread shortly after the start.
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            flag.set();
        })
    };
    assert_eq!(solver.value_until_stopped(&ConnectFourState::default()), None);
    setter.join().expect("the setter thread ends");
    // A flag that is set stops the next solve at once.
    assert_eq!(solver.value_until_stopped(&ConnectFourState::default()), None);
    // With an unset flag the same solver gives exact values again (its table was cleared).
    let mut fresh = Solver::with_table_bits(16);
    let state = ConnectFourState::from_moves("4444443").expect("legal moves");
    let mut reused = solver.clone();
    reused.set_stop(crate::solve::stop::StopFlag::new());
    assert_eq!(reused.value_until_stopped(&state), Some(fresh.value(&state)));
}
