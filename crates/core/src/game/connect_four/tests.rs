use std::collections::HashSet;

use super::bitboard::cell;
use super::*;

/// An independent, deliberately naive model of the rules: a column-major grid and a scan of every
/// possible line of four.
#[derive(Clone)]
struct Naive {
    grid: [[u8; 6]; 7],
    plies: u32,
}

impl Naive {
    fn new() -> Naive {
        Naive { grid: [[0; 6]; 7], plies: 0 }
    }

    fn wins(&self, who: u8) -> bool {
        let at = |c: i32, r: i32| {
            (0..7).contains(&c) && (0..6).contains(&r) && self.grid[c as usize][r as usize] == who
        };
        for c in 0..7 {
            for r in 0..6 {
                for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                    if (0..4).all(|k| at(c + k * dc, r + k * dr)) {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn over(&self) -> bool {
        self.plies == 42 || self.wins(1) || self.wins(2)
    }

    fn moves(&self) -> Vec<usize> {
        if self.over() {
            return Vec::new();
        }
        (0..7).filter(|&c| self.grid[c][5] == 0).collect()
    }

    fn play(&self, c: usize) -> Naive {
        let mut n = self.clone();
        let r = n.grid[c].iter().position(|&v| v == 0).expect("not full");
        n.grid[c][r] = if self.plies.is_multiple_of(2) { 1 } else { 2 };
        n.plies += 1;
        n
    }

    fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.moves().into_iter().map(|c| self.play(c).perft(depth - 1)).sum()
    }
}

#[test]
fn perft_matches_a_naive_reference() {
    // Leaf counts from the empty board, depth 1..8: 7^d up to depth 6; at depth 7 the seven lines that
    // fill one column (six stones) have only six moves left; from depth 8 on, wins at ply 7 end lines.
    const PERFT: [u64; 8] = [7, 49, 343, 2401, 16_807, 117_649, 823_536, 5_673_234];
    let s = ConnectFourState::new();
    let naive = Naive::new();
    for (d, &want) in (1..=8).zip(PERFT.iter()) {
        let got = perft(&s, d);
        assert_eq!(got, naive.perft(d), "depth {d} against the naive rules");
        assert_eq!(got, want, "depth {d}");
    }
}

#[test]
fn random_games_agree_with_the_naive_rules() {
    use rand::seq::IndexedRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(11);
    let (mut wins, mut draws) = (0, 0);
    for _ in 0..2000 {
        let mut s = ConnectFourState::new();
        let mut n = Naive::new();
        loop {
            let ours: Vec<usize> = s.legal_actions().iter().map(|c| c.index() as usize).collect();
            assert_eq!(ours, n.moves(), "{}", s.diagram());
            let first = s.stones(Player::First);
            let back = ConnectFourState::from_bitboards(first, s.stones(Player::Second)).expect("consistent");
            assert_eq!(back, s);
            let Some(&c) = ours.choose(&mut rng) else { break };
            s = s.play(Column::ALL[c]).expect("legal");
            n = n.play(c);
        }
        match s.outcome() {
            Some(Outcome::Win { winner, reason }) => {
                assert_eq!(reason, OutcomeReason::FourInARow);
                assert_eq!(Some(winner), s.last_mover());
                assert!(n.wins(if winner == Player::First { 1 } else { 2 }));
                wins += 1;
            }
            Some(Outcome::Draw { reason }) => {
                assert_eq!(reason, OutcomeReason::BoardFull);
                assert_eq!(s.plies(), 42);
                draws += 1;
            }
            None => panic!("a game without moves must be over"),
        }
    }
    assert!(wins > 1000 && draws > 0, "{wins} wins, {draws} draws");
}

#[test]
fn moves_notation_and_illegal_moves() {
    let s = ConnectFourState::new();
    assert_eq!(s.legal_actions(), Column::ALL.to_vec());
    assert_eq!(s.to_move(), Player::First);
    let c = s.parse_action("4").expect("legal");
    assert_eq!(c.number(), 4);
    assert_eq!(s.action_to_text(c), "4");
    for bad in ["0", "8", "44", "", "d", "-1", " 4"] {
        assert!(matches!(s.parse_action(bad), Err(ActionError::Syntax { .. })), "{bad}");
    }
    let full = ConnectFourState::from_moves("444444").expect("legal");
    assert!(full.is_full(c));
    assert!(matches!(full.parse_action("4"), Err(ActionError::Illegal { .. })));
    assert!(full.play(c).is_err());
    assert_eq!(full.legal_actions().len(), 6);
    let won = ConnectFourState::from_moves("1212121").expect("legal");
    assert_eq!(won.outcome().map(Outcome::result_str), Some("1-0"));
    assert!(won.legal_actions().is_empty());
    assert!(matches!(won.parse_action("3"), Err(ActionError::Illegal { .. })));
    let blocked = ConnectFourState::from_moves("121211").expect("legal");
    assert_eq!(blocked.outcome(), None);
    assert_eq!(blocked.height(Column::ALL[0]), 4);
    assert_eq!(Column::from_number(0), None);
    assert_eq!(Column::from_index(7), None);
    assert_eq!(Column::ALL[0].mirrored(), Column::ALL[6]);
}

#[test]
fn text_diagram_mirror_and_hash() {
    let s = ConnectFourState::from_moves("4453").expect("legal");
    assert_eq!(s.to_text(), "......./......./......./......./...o.../..oxx.. x");
    assert_eq!(s.diagram().lines().last(), Some("1 2 3 4 5 6 7"));
    assert_eq!(s.diagram().lines().nth(5), Some(". . o x x . ."));
    let m = s.mirrored();
    assert_eq!(m, ConnectFourState::from_moves("4435").expect("legal"));
    assert_eq!(m.mirrored(), s);
    // Every position up to 5 plies has its own code and hash; transpositions share them.
    let mut codes = HashSet::new();
    let mut hashes = HashSet::new();
    let mut level = vec![ConnectFourState::new()];
    for _ in 0..5 {
        let mut next = HashSet::new();
        for p in &level {
            for c in p.legal_actions() {
                next.insert(p.play(c).expect("legal"));
            }
        }
        level = next.into_iter().collect();
        for p in &level {
            assert!(codes.insert(p.code()));
            assert!(hashes.insert(p.hash64()));
        }
    }
    let a = ConnectFourState::from_moves("1234").expect("legal");
    let b = ConnectFourState::from_moves("3214").expect("legal");
    assert_eq!((a.code(), a.hash64()), (b.code(), b.hash64()));
}

#[test]
fn inconsistent_boards_are_rejected() {
    use PositionError::*;
    assert_eq!(ConnectFourState::from_bitboards(cell(0, 0), cell(0, 0)), Err(Overlap));
    assert_eq!(ConnectFourState::from_bitboards(1 << 6, 0), Err(Overlap), "guard bit");
    assert_eq!(ConnectFourState::from_bitboards(cell(2, 1), 0), Err(Floating { column: 3 }));
    assert_eq!(
        ConnectFourState::from_bitboards(cell(0, 0) | cell(1, 0), 0),
        Err(StoneCount { first: 2, second: 0 })
    );
    assert_eq!(ConnectFourState::from_bitboards(0, cell(0, 0)), Err(StoneCount { first: 0, second: 1 }));
    let four = cell(0, 0) | cell(1, 0) | cell(2, 0) | cell(3, 0);
    let answers = cell(0, 1) | cell(1, 1) | cell(2, 1);
    assert!(ConnectFourState::from_bitboards(four, answers).is_ok());
    // The second player cannot have a four when the first moved last.
    assert_eq!(
        ConnectFourState::from_bitboards(answers | cell(4, 0) | cell(5, 0) | cell(6, 0), four | cell(4, 1)),
        Err(UnreachableWin)
    );
    // Two separate fours (a column and a row) cannot both be the last move's.
    let two =
        cell(0, 1) | cell(0, 2) | cell(0, 3) | cell(0, 4) | cell(3, 0) | cell(4, 0) | cell(5, 0) | cell(6, 0);
    let other = cell(0, 0) | cell(1, 0) | cell(2, 0) | cell(1, 1) | cell(3, 1) | cell(5, 1) | cell(6, 1);
    assert_eq!(ConnectFourState::from_bitboards(two, other), Err(UnreachableWin));
    // Without the row, the column alone is a win the last move made.
    let column = cell(0, 1) | cell(0, 2) | cell(0, 3) | cell(0, 4) | cell(4, 0);
    let answers = cell(0, 0) | cell(1, 0) | cell(2, 0) | cell(5, 0);
    assert!(ConnectFourState::from_bitboards(column, answers).is_ok());
    let e = ConnectFourState::from_bitboards(cell(2, 1), 0).expect_err("floating");
    assert!(e.to_string().contains("column 3"), "{e}");
}
