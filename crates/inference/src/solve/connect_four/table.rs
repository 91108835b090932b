//! The transposition table: one `u64` per entry, always-replace, holding a position key with a lower and
//! an upper bound on its score.

/// Bits of the position key (the 49-bit code of [`crate::game::connect_four::ConnectFourState::code`]).
const KEY_BITS: u32 = 49;
const KEY_MASK: u64 = (1 << KEY_BITS) - 1;
/// Scores lie in −21..=21; stored with this offset in 6 bits each.
const OFFSET: i32 = 32;

/// A bound beyond every score (scores lie in −21..=21): `put(key, lower, UNBOUNDED)` stores only a lower
/// bound, `put(key, -UNBOUNDED, upper)` only an upper bound.
pub const UNBOUNDED: i32 = 31;

/// A fixed-size transposition table of score bounds.
#[derive(Debug, Clone)]
pub struct Table {
    entries: Vec<u64>,
    shift: u32,
}

impl Table {
    /// The smallest and the largest size accepted, in bits of the entry count.
    pub const BITS: std::ops::RangeInclusive<u32> = 10..=30;

    /// A table of `2^bits` entries (8 bytes each); `bits` is clamped to [`Table::BITS`].
    pub fn new(bits: u32) -> Table {
        let bits = bits.clamp(*Self::BITS.start(), *Self::BITS.end());
        Table { entries: vec![0; 1 << bits], shift: 64 - bits }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no entries (never: it has at least 2^10).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.fill(0);
    }

    fn slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the key's low bits are the first columns, so they are mixed first. The
        // shift leaves at most 30 bits, so the index fits a usize.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The (lower, upper) bounds stored for `key`, if any. Keys are never 0.
    pub fn get(&self, key: u64) -> Option<(i32, i32)> {
        let e = self.entries[self.slot(key)];
        if e & KEY_MASK != key {
            return None;
        }
        // Both fields are 6-bit values: the casts are exact.
        let lower = ((e >> KEY_BITS) & 63) as i32 - OFFSET;
        let upper = ((e >> (KEY_BITS + 6)) & 63) as i32 - OFFSET;
        Some((lower, upper))
    }

    /// Stores bounds for `key`, tightening the bounds already stored for the same key.
    pub fn put(&mut self, key: u64, lower: i32, upper: i32) {
        let (lower, upper) = match self.get(key) {
            Some((l, u)) => (lower.max(l), upper.min(u)),
            None => (lower, upper),
        };
        let slot = self.slot(key);
        // Bounds are within ±31 (UNBOUNDED), so both fields are in 1..=63.
        let field = |v: i32| (v.clamp(-UNBOUNDED, UNBOUNDED) + OFFSET) as u64;
        self.entries[slot] = key | (field(lower) << KEY_BITS) | (field(upper) << (KEY_BITS + 6));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_tightens_bounds() {
        let mut t = Table::new(10);
        assert_eq!(t.len(), 1024);
        let key = 0x1_2345_6789;
        assert_eq!(t.get(key), None);
        t.put(key, -21, 3);
        assert_eq!(t.get(key), Some((-21, 3)));
        t.put(key, -2, 21);
        assert_eq!(t.get(key), Some((-2, 3)));
        t.put(key, 0, 0);
        assert_eq!(t.get(key), Some((0, 0)));
        assert_eq!(t.get(key + 1), None);
        t.clear();
        assert_eq!(t.get(key), None);
        assert_eq!(Table::new(0).len(), 1024);
    }
}
