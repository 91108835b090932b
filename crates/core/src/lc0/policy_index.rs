//! lc0's 1858 policy outputs: every queen-like or knight move between two squares, seen from the side to
//! move (from-square a1, b1, …, h8, then to-square in the same order), followed by the promotions from the
//! seventh rank to queen, rook and bishop (per from- and to-square); a knight promotion is the plain move.
//! Castling is the king taking its own rook. The convolution policy head's 73 planes of 8×8 map onto these:
//! 56 queen-like planes (north, north-east, east, south-east, south, south-west, west, north-west; 1 to 7
//! squares each), 8 knight planes, and 9 promotion planes (to the left, straight, to the right; rook,
//! bishop, queen each).

use std::sync::OnceLock;

/// The policy outputs of an lc0 network.
pub const POLICY_SIZE: usize = 1858;

/// The convolution policy head's used planes.
pub const CONV_PLANES: usize = 73;

/// A square as lc0 numbers it: 0 = a1, 1 = b1, …, 63 = h8.
pub type Sq = u8;

/// A promotion as lc0's policy tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Promotion {
    /// Not a promotion, or a knight promotion.
    None,
    /// To a queen.
    Queen,
    /// To a rook.
    Rook,
    /// To a bishop.
    Bishop,
}

const QUEEN_DIRECTIONS: [(i8, i8); 8] =
    [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)];
const KNIGHT_JUMPS: [(i8, i8); 8] = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];

fn offset(sq: Sq, df: i8, dr: i8) -> Option<Sq> {
    let f = i16::from(sq % 8) + i16::from(df);
    let r = i16::from(sq / 8) + i16::from(dr);
    ((0..8).contains(&f) && (0..8).contains(&r)).then(|| u8::try_from(r * 8 + f).unwrap_or(0))
}

struct Tables {
    /// `index[promotion][from][to]`, `u16::MAX` where there is no output.
    index: Vec<u16>,
    /// For each output, the element of the 80×64 convolution output it is read from.
    conv_gather: Vec<i64>,
}

fn key(promotion: Promotion, from: Sq, to: Sq) -> usize {
    let p = match promotion {
        Promotion::None => 0,
        Promotion::Queen => 1,
        Promotion::Rook => 2,
        Promotion::Bishop => 3,
    };
    p * 4096 + usize::from(from) * 64 + usize::from(to)
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut index = vec![u16::MAX; 4 * 4096];
        let mut next = 0u16;
        for from in 0..64u8 {
            for to in 0..64u8 {
                let (df, dr) =
                    (i16::from(to % 8) - i16::from(from % 8), i16::from(to / 8) - i16::from(from / 8));
                let queen = from != to && (df == 0 || dr == 0 || df.abs() == dr.abs());
                let knight = matches!((df.abs(), dr.abs()), (1, 2) | (2, 1));
                if queen || knight {
                    index[key(Promotion::None, from, to)] = next;
                    next += 1;
                }
            }
        }
        for file in 0..8u8 {
            let from = 48 + file;
            for df in [-1i8, 0, 1] {
                if let Some(to) = offset(from, df, 1) {
                    for p in [Promotion::Queen, Promotion::Rook, Promotion::Bishop] {
                        index[key(p, from, to)] = next;
                        next += 1;
                    }
                }
            }
        }
        debug_assert_eq!(usize::from(next), POLICY_SIZE);
        let mut conv_gather = vec![-1i64; POLICY_SIZE];
        for plane in 0..CONV_PLANES {
            for from in 0..64u8 {
                let target = match plane {
                    0..56 => {
                        let (df, dr) = QUEEN_DIRECTIONS[plane / 7];
                        let n = i8::try_from(plane % 7 + 1).unwrap_or(1);
                        offset(from, df * n, dr * n).map(|to| (to, Promotion::None))
                    }
                    56..64 => {
                        let (df, dr) = KNIGHT_JUMPS[plane - 56];
                        offset(from, df, dr).map(|to| (to, Promotion::None))
                    }
                    _ => {
                        let q = plane - 64;
                        let df = [-1i8, 0, 1][q / 3];
                        let p = [Promotion::Rook, Promotion::Bishop, Promotion::Queen][q % 3];
                        (from / 8 == 6).then(|| offset(from, df, 1)).flatten().map(|to| (to, p))
                    }
                };
                if let Some((to, p)) = target {
                    let i = index[key(p, from, to)];
                    if i != u16::MAX {
                        conv_gather[usize::from(i)] =
                            i64::try_from(plane * 64 + usize::from(from)).unwrap_or(-1);
                    }
                }
            }
        }
        Tables { index, conv_gather }
    })
}

/// The policy output of a move from the side to move's view (`from`, `to` already in that frame).
pub fn index(from: Sq, to: Sq, promotion: Promotion) -> Option<usize> {
    if from >= 64 || to >= 64 {
        return None;
    }
    let i = tables().index[key(promotion, from, to)];
    (i != u16::MAX).then_some(usize::from(i))
}

/// For each of the 1858 outputs, the element of the flattened 80×64 convolution policy it is (the
/// convolution head's map).
pub fn conv_gather() -> &'static [i64] {
    &tables().conv_gather
}

/// lc0's transforms of the canonical input formats (bits): flip files, mirror ranks, transpose.
pub mod transform {
    /// Files reversed (a ↔ h).
    pub const FLIP: u8 = 1;
    /// Ranks reversed (1 ↔ 8).
    pub const MIRROR: u8 = 2;
    /// Transposed across the a8–h1 diagonal.
    pub const TRANSPOSE: u8 = 4;
}

/// A square under one of lc0's transforms, as lc0 moves a policy square: ranks reversed under mirror or
/// transpose, files under flip or transpose.
pub fn transform_square(sq: Sq, t: u8) -> Sq {
    let (mut file, mut rank) = (sq % 8, sq / 8);
    if t & (transform::MIRROR | transform::TRANSPOSE) != 0 {
        rank ^= 7;
    }
    if t & (transform::FLIP | transform::TRANSPOSE) != 0 {
        file ^= 7;
    }
    rank * 8 + file
}

/// The policy output of a move in the side to move's frame, under transform `t`.
pub fn index_transformed(from: Sq, to: Sq, promotion: Promotion, t: u8) -> Option<usize> {
    if t == 0 {
        return index(from, to, promotion);
    }
    index(transform_square(from, t), transform_square(to, t), promotion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Sq {
        let b = name.as_bytes();
        (b[1] - b'1') * 8 + (b[0] - b'a')
    }

    #[test]
    fn known_indices_and_the_convolution_map() {
        assert_eq!(index(sq("a1"), sq("b1"), Promotion::None), Some(0));
        assert_eq!(index(sq("a1"), sq("a2"), Promotion::None), Some(7));
        assert_eq!(index(sq("e1"), sq("h1"), Promotion::None), Some(103));
        assert_eq!(index(sq("a7"), sq("a8"), Promotion::Queen), Some(1792));
        assert_eq!(index(sq("h7"), sq("h8"), Promotion::Bishop), Some(1857));
        assert_eq!(index(sq("a1"), sq("h7"), Promotion::None), None);
        let g = conv_gather();
        assert!(g.iter().all(|&i| (0..(CONV_PLANES * 64) as i64).contains(&i)), "every output has a source");
        let mut seen = g.to_vec();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), POLICY_SIZE);
        // Plane 0 (north, one square) from a1 is a1a2; plane 66 (to the left, queen) from b7 is b7a8q.
        assert_eq!(g[7], i64::from(sq("a1")));
        assert_eq!(g[1798], 66 * 64 + i64::from(sq("b7")));
    }
}
