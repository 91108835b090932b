use super::*;
use crate::game::hex::Cell;

/// Plain minimax over the rules, no table, no pruning beyond "a win ends the loop".
fn brute_force(s: &HexState) -> HexValue {
    if s.outcome().is_some() {
        return HexValue::Loss;
    }
    for a in s.legal_actions() {
        if brute_force(&s.play(a).expect("legal")) == HexValue::Loss {
            return HexValue::Win;
        }
    }
    HexValue::Loss
}

fn cell(n: &str) -> HexAction {
    HexAction::Place(Cell::parse(n).expect("cell"))
}

#[test]
fn the_first_player_wins_every_small_empty_board() {
    let mut solver = Solver::with_table_bits(16);
    for size in 1..=4 {
        let s = HexState::new(size).expect("size");
        assert_eq!(solver.value(&s), Ok(HexValue::Win), "{size}×{size}");
    }
}

#[test]
fn with_the_swap_rule_the_second_player_wins() {
    // Whatever the first stone, the second player swaps it when it wins and answers it when it loses.
    let mut solver = Solver::with_table_bits(16);
    for size in 2..=4 {
        let s = HexState::new(size).expect("size").with_swap(true);
        let a = solver.analyse(&s).expect("small");
        assert_eq!(a.value, HexValue::Loss, "{size}×{size}");
        assert!(a.moves.iter().all(|m| m.value == HexValue::Loss));
    }
    let s = HexState::new(3).expect("size").with_swap(true);
    assert_eq!(brute_force(&s), HexValue::Loss);
}

#[test]
fn winning_openings_on_3x3_are_the_centre_row_and_the_obtuse_corners() {
    // The first player (top–bottom) wins 3×3 with the centre, the two other cells of the middle row and
    // the two obtuse corners c1 and a3; the acute corners and the cells next to them lose. The set is
    // symmetric under the half turn (as it must be), and brute force gives the same for every move.
    let s = HexState::new(3).expect("size");
    let mut solver = Solver::with_table_bits(12);
    let a = solver.analyse(&s).expect("small");
    let wins: Vec<String> =
        a.moves.iter().filter(|m| m.value == HexValue::Win).map(|m| m.action.to_string()).collect();
    assert_eq!(wins, ["c1", "a2", "b2", "c2", "a3"]);
    for m in &a.moves {
        assert_eq!(brute_force(&s.play(m.action).expect("legal")).flipped(), m.value, "{}", m.action);
        assert_eq!(m.bucket, if m.value == HexValue::Win { 63 } else { 0 });
    }
    assert_eq!(a.best, Some(cell("b2")));
}

#[test]
fn agrees_with_brute_force_on_every_3x3_position_and_random_4x4_positions() {
    use rand::seq::IndexedRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let mut solver = Solver::with_table_bits(14);
    // Every position of 3×3 reachable in up to 4 plies.
    let mut level = vec![HexState::new(3).expect("size")];
    let mut checked = 0;
    for _ in 0..4 {
        let mut next = Vec::new();
        for p in &level {
            assert_eq!(solver.value(p), Ok(brute_force(p)), "{}", p.to_text());
            checked += 1;
            next.extend(p.legal_actions().into_iter().map(|a| p.play(a).expect("legal")));
        }
        level = next;
    }
    assert!(checked > 500);
    // 4×4 with 6 to 9 stones (brute force gets slow with more empty cells).
    let mut rng = StdRng::seed_from_u64(4);
    for i in 0..60 {
        let mut s = HexState::new(4).expect("size").with_swap(i % 4 == 0);
        for _ in 0..(6 + i % 4) {
            let Some(&a) = s.legal_actions().choose(&mut rng) else { break };
            s = s.play(a).expect("legal");
        }
        assert_eq!(solver.value(&s), Ok(brute_force(&s)), "{}", s.to_text());
        if i % 10 == 0 {
            solver.clear();
        }
    }
}

#[test]
fn refuses_boards_too_large() {
    let mut solver = Solver::with_table_bits(10);
    let s = HexState::new(8).expect("size");
    assert_eq!(solver.value(&s), Err(SolveError::TooLarge(8)));
    assert!(solver.analyse(&s).expect_err("large").to_string().contains("--method mcts"));
}

#[test]
fn mcts_agrees_with_the_solver_on_a_decided_4x4_position() {
    let s = HexState::new(4).expect("size");
    let mut solver = Solver::with_table_bits(16);
    let exact = solver.analyse(&s).expect("small");
    let r = mcts::search(&s, mcts::Config { playouts: 20_000, ..mcts::Config::default() });
    let best = r.best.expect("moves");
    let v = exact.moves.iter().find(|m| m.action == best).map(|m| m.value);
    assert_eq!(v, Some(HexValue::Win), "MCTS picked {best}");
}

#[test]
fn a_stop_flag_ends_a_long_solve() {
    let flag = crate::solve::stop::StopFlag::new();
    let mut solver = Solver::with_table_bits(12);
    solver.set_stop(flag.clone());
    let empty = HexState::new(5).expect("5×5");
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            flag.set();
        })
    };
    // A 5×5 board with two stones took half an hour; the empty one is stopped long before its end.
    assert_eq!(solver.value_until_stopped(&empty).expect("5×5 fits"), None);
    setter.join().expect("the setter thread ends");
    // With an unset flag a small board is solved exactly after the stop (the table was cleared).
    solver.set_stop(crate::solve::stop::StopFlag::new());
    let small = HexState::new(3).expect("3×3");
    assert_eq!(solver.value_until_stopped(&small).expect("3×3 fits"), Some(brute_force(&small)));
}
