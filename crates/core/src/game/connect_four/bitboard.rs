//! The Connect Four bitboard layout and the bit tricks on it, shared by the rules and the solver.
//!
//! The board has [`WIDTH`] = 7 columns and [`HEIGHT`] = 6 rows. Each column takes 7 bits of a `u64`: bit
//! `7·c + r` is the cell in column `c` (0 = leftmost) and row `r` (0 = bottom), and bit `7·c + 6` is an
//! always-empty guard above the column, so that shifting a line of stones never carries it from the top of
//! one column into the bottom of the next. 49 bits are used.

/// Columns.
pub const WIDTH: u32 = 7;
/// Rows.
pub const HEIGHT: u32 = 6;
/// Cells on the board.
pub const CELLS: u32 = WIDTH * HEIGHT;
/// Bits per column (the rows plus the guard bit).
pub const COLUMN_BITS: u32 = HEIGHT + 1;

/// The bottom cell of every column.
pub const BOTTOM: u64 = {
    let mut b = 0;
    let mut c = 0;
    while c < WIDTH {
        b |= 1 << (c * COLUMN_BITS);
        c += 1;
    }
    b
};

/// Every playable cell (guard bits excluded).
pub const BOARD: u64 = BOTTOM * ((1 << HEIGHT) - 1);

/// The cell of column `col` and row `row` (both 0-based) as a one-bit mask.
pub const fn cell(col: u32, row: u32) -> u64 {
    1 << (col * COLUMN_BITS + row)
}

/// Every cell of column `col` (0-based).
pub const fn column_mask(col: u32) -> u64 {
    ((1 << HEIGHT) - 1) << (col * COLUMN_BITS)
}

/// The bottom cell of column `col` (0-based).
pub const fn bottom_cell(col: u32) -> u64 {
    1 << (col * COLUMN_BITS)
}

/// The top cell of column `col` (0-based).
pub const fn top_cell(col: u32) -> u64 {
    1 << (col * COLUMN_BITS + HEIGHT - 1)
}

/// The shifts between neighbouring cells along the four line directions: vertical, horizontal and the
/// two diagonals.
pub const DIRECTIONS: [u32; 4] = [1, COLUMN_BITS, COLUMN_BITS - 1, COLUMN_BITS + 1];

/// Whether `stones` contain four in a row in any direction.
pub const fn has_four(stones: u64) -> bool {
    let mut i = 0;
    while i < DIRECTIONS.len() {
        let s = DIRECTIONS[i];
        let pairs = stones & (stones >> s);
        if pairs & (pairs >> (2 * s)) != 0 {
            return true;
        }
        i += 1;
    }
    false
}

/// The empty cells that would complete four in a row for `stones` (whether or not they are playable
/// now); `occupied` holds every stone on the board.
pub const fn winning_cells(stones: u64, occupied: u64) -> u64 {
    // Vertical: only the cell right above three stones.
    let mut r = (stones << 1) & (stones << 2) & (stones << 3);
    let mut i = 1;
    while i < DIRECTIONS.len() {
        let s = DIRECTIONS[i];
        // Three stones to one side of the cell, or two on one side and one on the other.
        let left2 = (stones << s) & (stones << (2 * s));
        r |= left2 & (stones << (3 * s));
        r |= left2 & (stones >> s);
        let right2 = (stones >> s) & (stones >> (2 * s));
        r |= right2 & (stones >> (3 * s));
        r |= right2 & (stones << s);
        i += 1;
    }
    r & (BOARD ^ occupied)
}

/// The cells where a stone can be dropped now: the lowest empty cell of each column that is not full.
pub const fn playable(occupied: u64) -> u64 {
    (occupied + BOTTOM) & BOARD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_constants() {
        assert_eq!(BOARD.count_ones(), CELLS);
        assert_eq!(BOARD & (BOTTOM << HEIGHT), 0, "guard bits are not on the board");
        assert_eq!(playable(0), BOTTOM);
        assert_eq!(playable(column_mask(2)), BOTTOM & !bottom_cell(2));
        assert_eq!(top_cell(6), cell(6, 5));
    }

    #[test]
    fn fours_in_every_direction_and_no_wraparound() {
        let vertical = cell(0, 0) | cell(0, 1) | cell(0, 2) | cell(0, 3);
        let horizontal = cell(3, 5) | cell(4, 5) | cell(5, 5) | cell(6, 5);
        let rising = cell(0, 0) | cell(1, 1) | cell(2, 2) | cell(3, 3);
        let falling = cell(3, 3) | cell(4, 2) | cell(5, 1) | cell(6, 0);
        for four in [vertical, horizontal, rising, falling] {
            assert!(has_four(four));
            for bit in 0..64 {
                if four & (1 << bit) != 0 {
                    assert!(!has_four(four & !(1 << bit)));
                }
            }
        }
        // The top of column 0 and the bottom of column 1 are not neighbours.
        assert!(!has_four(cell(0, 4) | cell(0, 5) | cell(1, 0) | cell(1, 1)));
        assert!(!has_four(cell(0, 3) | cell(0, 4) | cell(0, 5) | cell(1, 0)));
    }

    #[test]
    fn winning_cells_complete_lines_with_gaps() {
        let three = cell(1, 0) | cell(2, 0) | cell(4, 0);
        assert_eq!(winning_cells(three, three), cell(3, 0));
        let row = cell(1, 0) | cell(2, 0) | cell(3, 0);
        assert_eq!(winning_cells(row, row), cell(0, 0) | cell(4, 0));
        let stack = cell(5, 0) | cell(5, 1) | cell(5, 2);
        assert_eq!(winning_cells(stack, stack), cell(5, 3));
        let taken = stack | cell(5, 3);
        assert_eq!(winning_cells(stack, taken), 0);
        let diag = cell(0, 0) | cell(1, 1) | cell(3, 3);
        assert_eq!(winning_cells(diag, diag), cell(2, 2));
    }
}
