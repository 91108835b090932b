//! lc0's fixed position encoding (`INPUT_EMBEDDING_PE_MAP`, the older attention-body nets): beside its 112
//! planes each square gets 64 more inputs, one per square of the board — −1 for the square itself, 1 for the
//! squares a queen or a knight could reach from it on an empty board, 0 for the others. (The rule was checked
//! entry by entry against the 64 × 64 table lc0 v0.32.1 ships.)

/// The extra inputs per square.
pub const CHANNELS: usize = 64;

/// The value of square `to`'s column in square `from`'s row (squares 0 = a1 … 63 = h8).
pub fn relation(from: usize, to: usize) -> f32 {
    if from == to {
        return -1.0;
    }
    let (df, dr) = ((from % 8).abs_diff(to % 8), (from / 8).abs_diff(to / 8));
    let queen = df == 0 || dr == 0 || df == dr;
    let knight = matches!((df, dr), (1, 2) | (2, 1));
    if queen || knight { 1.0 } else { 0.0 }
}

/// The whole table, row-major: `[from][to]`, 64 × 64.
pub fn position_map() -> Vec<f32> {
    (0..64).flat_map(|from| (0..CHANNELS).map(move |to| relation(from, to))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1s_row_is_lc0s() {
        // lc0's first row: −1, then b1…h1, a2, b2, c2 (a knight move), a3, b3 (knight), c3, a4, d4, a5, e5,
        // a6, f6, a7, g7, a8, h8.
        let ones: Vec<usize> = (0..64).filter(|&to| relation(0, to) == 1.0).collect();
        assert_eq!(
            ones,
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17, 18, 24, 27, 32, 36, 40, 45, 48, 54, 56, 63]
        );
        assert_eq!(relation(0, 0), -1.0);
    }

    #[test]
    fn the_table_is_symmetric_with_minus_one_on_its_diagonal() {
        let t = position_map();
        assert_eq!(t.len(), 64 * 64);
        for a in 0..64 {
            assert_eq!(t[a * 64 + a], -1.0);
            for b in 0..64 {
                assert_eq!(t[a * 64 + b], t[b * 64 + a]);
            }
        }
        // A centre square reaches 27 squares as a queen and 8 as a knight.
        assert_eq!((0..64).filter(|&to| relation(27, to) == 1.0).count(), 35);
    }
}
