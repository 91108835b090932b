//! Sets of Hex cells as 192-bit bitboards, and the flood fill that decides connections.
//!
//! Cell (column `c`, row `r`), both 0-based, is bit `r·(N+1) + c` of an N×N board: each row has one
//! always-empty guard bit after its last cell, so that shifting a set sideways never carries a stone from
//! the end of one row to the start of the next. Thirteen rows of fourteen bits need 182 of the 192 bits.
//!
//! The board is a rhombus whose rows shift half a cell to the right going down (as HexGui draws it), so
//! the six neighbours of (c, r) are (c ± 1, r), (c, r ± 1), (c + 1, r − 1) and (c − 1, r + 1).

/// A set of cells of one board size (the size is not stored: every operation takes it or a mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CellSet(pub [u64; 3]);

impl CellSet {
    /// The empty set.
    pub const EMPTY: CellSet = CellSet([0; 3]);

    /// The set holding only bit `bit`.
    pub fn bit(bit: u32) -> CellSet {
        let mut s = CellSet::EMPTY;
        s.0[(bit / 64) as usize] = 1 << (bit % 64);
        s
    }

    /// Whether bit `bit` is in the set.
    pub fn has(self, bit: u32) -> bool {
        self.0[(bit / 64) as usize] >> (bit % 64) & 1 == 1
    }

    /// The number of cells.
    pub fn count(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == [0; 3]
    }

    /// Union.
    pub fn or(self, o: CellSet) -> CellSet {
        CellSet([self.0[0] | o.0[0], self.0[1] | o.0[1], self.0[2] | o.0[2]])
    }

    /// Intersection.
    pub fn and(self, o: CellSet) -> CellSet {
        CellSet([self.0[0] & o.0[0], self.0[1] & o.0[1], self.0[2] & o.0[2]])
    }

    /// The cells of `self` that are not in `o`.
    pub fn minus(self, o: CellSet) -> CellSet {
        CellSet([self.0[0] & !o.0[0], self.0[1] & !o.0[1], self.0[2] & !o.0[2]])
    }

    /// Every bit moved `n` places up (towards higher indices), `n < 64`.
    fn shl(self, n: u32) -> CellSet {
        if n == 0 {
            return self;
        }
        let w = self.0;
        CellSet([w[0] << n, (w[1] << n) | (w[0] >> (64 - n)), (w[2] << n) | (w[1] >> (64 - n))])
    }

    /// Every bit moved `n` places down, `n < 64`.
    fn shr(self, n: u32) -> CellSet {
        if n == 0 {
            return self;
        }
        let w = self.0;
        CellSet([(w[0] >> n) | (w[1] << (64 - n)), (w[1] >> n) | (w[2] << (64 - n)), w[2] >> n])
    }

    /// The set together with every neighbour of its cells, on a board of size `size`, restricted to the
    /// board's cells `board`.
    pub fn grow(self, size: u32, board: CellSet) -> CellSet {
        let w = size + 1;
        self.or(self.shl(1))
            .or(self.shr(1))
            .or(self.shl(w))
            .or(self.shr(w))
            .or(self.shl(w - 1))
            .or(self.shr(w - 1))
            .and(board)
    }

    /// The cells of `within` connected to `seed` (seed cells outside `within` are dropped first).
    pub fn flood(self, within: CellSet, size: u32) -> CellSet {
        let mut s = self.and(within);
        loop {
            let next = s.grow(size, within);
            if next == s {
                return s;
            }
            s = next;
        }
    }

    /// The bit indices in the set, lowest first.
    pub fn bits(self) -> impl Iterator<Item = u32> {
        (0u32..3).flat_map(move |i| {
            let mut w = self.0[i as usize];
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
}

/// The masks of a board size: every cell, and the four edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Masks {
    /// Every cell.
    pub board: CellSet,
    /// Row 1 (the first player's top edge).
    pub top: CellSet,
    /// Row N (the first player's bottom edge).
    pub bottom: CellSet,
    /// Column a (the second player's left edge).
    pub left: CellSet,
    /// The last column (the second player's right edge).
    pub right: CellSet,
}

impl Masks {
    /// The masks of an N×N board (`size` from 1 to 13).
    pub fn new(size: u32) -> Masks {
        let mut m = Masks {
            board: CellSet::EMPTY,
            top: CellSet::EMPTY,
            bottom: CellSet::EMPTY,
            left: CellSet::EMPTY,
            right: CellSet::EMPTY,
        };
        for r in 0..size {
            for c in 0..size {
                let b = CellSet::bit(r * (size + 1) + c);
                m.board = m.board.or(b);
                if r == 0 {
                    m.top = m.top.or(b);
                }
                if r == size - 1 {
                    m.bottom = m.bottom.or(b);
                }
                if c == 0 {
                    m.left = m.left.or(b);
                }
                if c == size - 1 {
                    m.right = m.right.or(b);
                }
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_have_six_directions_and_no_wraparound() {
        for size in [2u32, 5, 13] {
            let m = Masks::new(size);
            assert_eq!(m.board.count(), size * size);
            let w = size + 1;
            for r in 0..size as i32 {
                for c in 0..size as i32 {
                    let cell = CellSet::bit(r as u32 * w + c as u32);
                    let got = cell.grow(size, m.board).minus(cell);
                    let want = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)]
                        .iter()
                        .map(|(dc, dr)| (c + dc, r + dr))
                        .filter(|&(x, y)| (0..size as i32).contains(&x) && (0..size as i32).contains(&y))
                        .fold(CellSet::EMPTY, |s, (x, y)| s.or(CellSet::bit(y as u32 * w + x as u32)));
                    assert_eq!(got, want, "size {size} cell ({c}, {r})");
                }
            }
        }
    }

    #[test]
    fn bits_iterate_in_order() {
        let s = CellSet::bit(3).or(CellSet::bit(70)).or(CellSet::bit(181));
        assert_eq!(s.bits().collect::<Vec<_>>(), vec![3, 70, 181]);
        assert!(s.has(70) && !s.has(71));
        assert_eq!(s.count(), 3);
    }
}
