use super::*;

fn cell(name: &str) -> Cell {
    Cell::parse(name).expect("a cell name")
}

fn board(size: u32, first: &[&str], second: &[&str]) -> Result<HexState, PositionError> {
    let f: Vec<Cell> = first.iter().map(|n| cell(n)).collect();
    let s: Vec<Cell> = second.iter().map(|n| cell(n)).collect();
    let to_move = if f.len() > s.len() { Player::Second } else { Player::First };
    HexState::from_cells(size, false, &f, &s, to_move)
}

/// A deliberately naive reference: breadth-first search over a grid with the six neighbours.
fn naive_connected(s: &HexState, p: Player) -> bool {
    let n = s.size() as i32;
    let mine = |c: i32, r: i32| {
        (0..n).contains(&c)
            && (0..n).contains(&r)
            && Cell::new(c as u32, r as u32).and_then(|x| s.owner(x)) == Some(p)
    };
    let start: Vec<(i32, i32)> = (0..n)
        .map(|i| if p == Player::First { (i, 0) } else { (0, i) })
        .filter(|&(c, r)| mine(c, r))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut todo = start;
    while let Some((c, r)) = todo.pop() {
        if !seen.insert((c, r)) {
            continue;
        }
        if (p == Player::First && r == n - 1) || (p == Player::Second && c == n - 1) {
            return true;
        }
        for (dc, dr) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)] {
            if mine(c + dc, r + dr) {
                todo.push((c + dc, r + dr));
            }
        }
    }
    false
}

#[test]
fn hand_made_wins() {
    // A zig-zag down a 5×5 board using the (c−1, r+1) neighbour: e1 d2 c3 b4 a5 is the short diagonal.
    let s = board(5, &["e1", "d2", "c3", "b4", "a5"], &["a1", "b1", "c1", "d1"]).expect("reachable");
    assert_eq!(s.outcome(), Some(Outcome::Win { winner: Player::First, reason: OutcomeReason::Connection }));
    assert!(s.legal_actions().is_empty());
    // The long diagonal a1 b2 … is not connected: (c+1, r+1) is not a neighbour.
    let s = board(5, &["a1", "b2", "c3", "d4", "e5"], &["a2", "a3", "a4", "b5"]).expect("reachable");
    assert_eq!(s.outcome(), None);
    assert!(!s.connected(Player::First));
    // White joins a and e along row 3.
    let s = board(5, &["a1", "b1", "c1", "d1", "a2"], &["a3", "b3", "c3", "d3", "e3"]).expect("reachable");
    assert_eq!(s.outcome().map(Outcome::result_str), Some("0-1"));
    // A chain touching only one edge does not win.
    let s = board(5, &["c1", "c2", "c3", "c4"], &["a1", "a2", "a3", "a4"]).expect("reachable");
    assert_eq!(s.outcome(), None);
    let s = s.play(HexAction::Place(cell("c5"))).expect("legal");
    assert_eq!(s.outcome().map(Outcome::result_str), Some("1-0"));
}

#[test]
fn random_full_boards_have_exactly_one_winner() {
    use rand::seq::IndexedRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(3);
    for size in [1u32, 2, 5, 7, 11, 13] {
        let mut wins = [0; 2];
        for _ in 0..200 {
            // Fill the whole board at random, ignoring when the game ended, then check both players.
            let mut cells: Vec<Cell> = HexState::new(size).expect("size").cells().collect();
            let mut first = Vec::new();
            let mut second = Vec::new();
            let mut turn = 0;
            while !cells.is_empty() {
                let i = (0..cells.len()).collect::<Vec<_>>().choose(&mut rng).copied().unwrap_or(0);
                let c = cells.swap_remove(i);
                if turn % 2 == 0 {
                    first.push(c)
                } else {
                    second.push(c)
                }
                turn += 1;
            }
            let mut s = HexState::new(size).expect("size");
            s.stones[0] = first.iter().fold(CellSet::EMPTY, |a, c| a.or(CellSet::bit(c.bit(size))));
            s.stones[1] = second.iter().fold(CellSet::EMPTY, |a, c| a.or(CellSet::bit(c.bit(size))));
            let (f, w) = (s.connected(Player::First), s.connected(Player::Second));
            assert_eq!(f, naive_connected(&s, Player::First));
            assert_eq!(w, naive_connected(&s, Player::Second));
            assert!(f != w, "exactly one winner on a full board:\n{}", s.diagram());
            wins[usize::from(w)] += 1;
        }
        if size > 1 {
            assert!(wins[0] > 0 && wins[1] > 0, "size {size}: {wins:?}");
        }
    }
}

#[test]
fn random_games_end_with_a_winner_and_agree_with_the_naive_rules() {
    use rand::seq::IndexedRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(9);
    for game in 0..300 {
        let size = [5, 7, 9, 13][game % 4];
        let mut s = HexState::new(size).expect("size").with_swap(game % 3 == 0);
        let mut seen = std::collections::HashSet::new();
        loop {
            assert!(seen.insert(s.hash64()));
            let over = naive_connected(&s, Player::First) || naive_connected(&s, Player::Second);
            assert_eq!(s.outcome().is_some(), over);
            let Some(&a) = s.legal_actions().choose(&mut rng) else { break };
            s = s.play(a).expect("legal");
        }
        assert!(s.outcome().is_some(), "a game without moves is won");
        assert!(s.stone_count() <= size * size);
    }
}

#[test]
fn swap_rule() {
    let s = HexState::new(5).expect("size").with_swap(true);
    assert!(!s.legal_actions().contains(&HexAction::Swap));
    let s = s.play(HexAction::Place(cell("a3"))).expect("legal");
    assert_eq!(s.to_move(), Player::Second);
    assert_eq!(s.legal_actions().last(), Some(&HexAction::Swap));
    assert_eq!(s.parse_action("swap"), Ok(HexAction::Swap));
    assert_eq!(s.parse_action("swap-pieces"), Ok(HexAction::Swap));
    let t = s.play(HexAction::Swap).expect("legal");
    assert_eq!(t.owner(cell("a3")), None);
    assert_eq!(t.owner(cell("c1")), Some(Player::Second));
    assert_eq!(t.to_move(), Player::First);
    assert!(!t.swap_available());
    assert!(t.play(HexAction::Swap).is_err());
    let u = t.play(HexAction::Place(cell("b2"))).expect("legal");
    assert_eq!(u.to_move(), Player::Second);
    assert!(!u.legal_actions().contains(&HexAction::Swap));
    // Without the rule there is no swap; an ordinary reply also ends the chance.
    let plain = HexState::new(5).expect("size").play(HexAction::Place(cell("a3"))).expect("legal");
    assert!(plain.play(HexAction::Swap).is_err());
    assert!(matches!(plain.parse_action("swap"), Err(ActionError::Illegal { .. })));
    let later = s.play(HexAction::Place(cell("e5"))).expect("legal");
    assert!(!later.legal_actions().contains(&HexAction::Swap));
    assert_eq!(
        HexState::from_cells(5, false, &[], &[cell("c1")], Player::First),
        Err(PositionError::NoSwapRule)
    );
    assert_eq!(HexState::from_cells(5, true, &[], &[cell("c1")], Player::First), Ok(t));
    assert_eq!(HexState::from_cells(5, true, &[cell("b2")], &[cell("c1")], Player::Second), Ok(u));
    assert_ne!(
        u.hash64(),
        HexState::from_cells(5, true, &[cell("b2")], &[cell("c1")], Player::First)
            .map(|s| s.hash64())
            .unwrap_or(0)
    );
}

#[test]
fn notation_round_trips_and_errors() {
    let s = HexState::new(13).expect("size");
    for c in s.cells() {
        let text = c.to_string();
        assert_eq!(Cell::parse(&text), Some(c));
        assert_eq!(s.parse_action(&text), Ok(HexAction::Place(c)));
        assert_eq!(s.action_to_text(HexAction::Place(c)), text);
    }
    assert_eq!(cell("m13").to_string(), "m13");
    let small = HexState::new(5).expect("size");
    for bad in ["f1", "a6", "a0", "a01", "A1", "1a", "", "c", "swapp", " a1", "a1 "] {
        let e = small.parse_action(bad).expect_err(bad);
        assert!(matches!(e, ActionError::Syntax { .. }), "{bad}: {e:?}");
        assert!(e.to_string().contains("a1 to e5"), "{e}");
    }
    let taken = small.play(HexAction::Place(cell("c3"))).expect("legal");
    assert!(matches!(taken.parse_action("c3"), Err(ActionError::Illegal { .. })));
    assert_eq!(HexState::new(0), Err(PositionError::Size(0)));
    assert_eq!(HexState::new(14), Err(PositionError::Size(14)));
    assert!(HexState::new(14).expect_err("size").to_string().contains("14×14"));
}

#[test]
fn text_and_diagram() {
    let s = board(3, &["b2"], &[]).expect("reachable").with_swap(true);
    assert_eq!(s.to_text(), ".../.x./... o swap");
    assert_eq!(s.diagram(), "  a b c \n 1 . . .\n  2 . x .\n   3 . . .");
    assert_eq!(HexState::new(2).expect("size").to_text(), "../.. x");
}

#[test]
fn unreachable_boards_are_rejected() {
    assert_eq!(board(3, &["a1", "a2"], &[]), Err(PositionError::StoneCount { first: 2, second: 0 }));
    assert_eq!(board(3, &["a1"], &["a1"]), Err(PositionError::StoneCount { first: 1, second: 0 }));
    assert_eq!(board(3, &["d1"], &[]), Err(PositionError::StoneCount { first: 0, second: 0 }));
    // White connected but White is to move: the game ended before Black's last stone.
    assert_eq!(board(3, &["a1", "b1", "c1", "a3"], &["a2", "b2", "c2"]), Err(PositionError::WrongWinner));
}
