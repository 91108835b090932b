//! Hex labels: an exact solver for small boards ([`Solver`]) and a Monte Carlo tree search with random
//! playouts for any size ([`mcts`], the paper's "MCTS" baseline).
//!
//! The exact solver is a boolean negamax (Hex has no draws: every position is a win or a loss for the
//! player to move) on 64-bit bitboards, so it takes boards up to 7×7 ([`MAX_EXACT_SIZE`]), with:
//!
//! - **immediate wins**: the empty cells that join a player's two edges at once are found with two flood
//!   fills (the cells next to the stones connected to one edge and next to those connected to the other);
//! - **forced replies**: if the opponent has two such cells the position is lost, if one, it is the only
//!   move tried;
//! - **a transposition table** of proven results with the winning move, always-replace;
//! - **move ordering**: the table's move first, then from the centre outwards.
//!
//! Limits (release build, one core of this 2-core machine, about 5 M positions/s): any 4×4 position
//! solves in milliseconds; a 5×5 position with 2 stones took 1844 s (10^10 positions), so 5×5 needs about
//! 9 stones (16 empty cells) to be quick, and 6×6 or 7×7 even more (no virtual-connection reasoning
//! here). `mavboard solve` therefore solves exactly only up to 16 empty cells and uses MCTS beyond.
//! Values carry no "how soon": Hex labels only need win or loss.

pub mod mcts;

use crate::game::hex::{HexAction, HexState};
use crate::game::{GameState, Player};
use crate::mav::buckets::Buckets;
use crate::solve::stop::{Control, StopFlag};

/// The largest board the exact solver takes (the cells must fit a `u64` with one guard bit per row).
pub const MAX_EXACT_SIZE: u32 = 7;

/// The default transposition table: 2^22 entries of 24 bytes (96 MiB).
pub const DEFAULT_TABLE_BITS: u32 = 22;

/// An exact value: for the player to move (of a position) or for the player making it (of a move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HexValue {
    /// A win with perfect play.
    Win,
    /// A loss against perfect play.
    Loss,
}

impl HexValue {
    /// The value for the other player.
    pub fn flipped(self) -> HexValue {
        match self {
            HexValue::Win => HexValue::Loss,
            HexValue::Loss => HexValue::Win,
        }
    }

    /// 1 for a win, 0 for a loss.
    pub fn win_prob(self) -> f64 {
        match self {
            HexValue::Win => 1.0,
            HexValue::Loss => 0.0,
        }
    }

    /// `win` or `loss`.
    pub fn describe(self) -> &'static str {
        match self {
            HexValue::Win => "win",
            HexValue::Loss => "loss",
        }
    }
}

/// Why a position cannot be solved exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// The board is larger than the exact solver takes.
    #[error(
        "the exact solver takes boards up to {MAX_EXACT_SIZE}×{MAX_EXACT_SIZE}, not {0}×{0}; use the MCTS \
         evaluator (--method mcts) for larger boards"
    )]
    TooLarge(u32),
}

/// One legal move with its exact value.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MoveSolution {
    /// The move.
    #[serde(serialize_with = "action_text")]
    pub action: HexAction,
    /// Its value for the player making it.
    pub value: HexValue,
    /// Its win probability (1 or 0).
    pub win_prob: f64,
    /// Its MAV value bucket (64 buckets).
    pub bucket: u32,
}

fn action_text<S: serde::Serializer>(a: &HexAction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&a.to_string())
}

fn optional_action_text<S: serde::Serializer>(a: &Option<HexAction>, s: S) -> Result<S::Ok, S::Error> {
    match a {
        Some(a) => s.serialize_some(&a.to_string()),
        None => s.serialize_none(),
    }
}

/// Every legal move of a position with its exact value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Analysis {
    /// The legal moves in the rules' order with their values (empty when the game is over).
    pub moves: Vec<MoveSolution>,
    /// A winning move (the most central) if there is one, else the most central move; `None` when over.
    #[serde(serialize_with = "optional_action_text")]
    pub best: Option<HexAction>,
    /// The position's value for the player to move.
    pub value: HexValue,
    /// Positions searched.
    pub nodes: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    x: u64,
    o: u64,
    /// Bit 7: valid; bit 6: the mover wins; bits 0–5: the winning move's bit index.
    data: u8,
}

/// The geometry of one board size as `u64` masks (stride N + 1, as in [`crate::game::hex::cells`]).
#[derive(Debug, Clone, Copy)]
struct Geo {
    size: u32,
    board: u64,
    top: u64,
    bottom: u64,
    left: u64,
    right: u64,
}

impl Geo {
    fn new(size: u32) -> Geo {
        let w = size + 1;
        let mut g = Geo { size, board: 0, top: 0, bottom: 0, left: 0, right: 0 };
        for r in 0..size {
            for c in 0..size {
                let b = 1u64 << (r * w + c);
                g.board |= b;
                if r == 0 {
                    g.top |= b;
                }
                if r == size - 1 {
                    g.bottom |= b;
                }
                if c == 0 {
                    g.left |= b;
                }
                if c == size - 1 {
                    g.right |= b;
                }
            }
        }
        g
    }

    fn grow(&self, s: u64) -> u64 {
        let w = self.size + 1;
        (s | s << 1 | s >> 1 | s << w | s >> w | s << (w - 1) | s >> (w - 1)) & self.board
    }

    fn flood(&self, seed: u64, within: u64) -> u64 {
        let mut s = seed & within;
        loop {
            let next = self.grow(s) & within;
            if next == s {
                return s;
            }
            s = next;
        }
    }

    /// The empty cells that join `stones`' edges `a` and `b` at once.
    fn winning_cells(&self, stones: u64, empty: u64, a: u64, b: u64) -> u64 {
        let from_a = self.flood(a, stones);
        let from_b = self.flood(b, stones);
        empty & (self.grow(from_a) | a) & (self.grow(from_b) | b)
    }
}

/// The exact solver. Reuse one for many positions of one size: its table carries over.
#[derive(Debug, Clone)]
pub struct Solver {
    table: Vec<Entry>,
    shift: u32,
    geo: Option<Geo>,
    order: Vec<u32>,
    control: Control,
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// A solver with the default table.
    pub fn new() -> Solver {
        Solver::with_table_bits(DEFAULT_TABLE_BITS)
    }

    /// A solver whose table has `2^bits` entries (`bits` clamped to 10–28).
    pub fn with_table_bits(bits: u32) -> Solver {
        let bits = bits.clamp(10, 28);
        Solver {
            table: vec![Entry::default(); 1 << bits],
            shift: 64 - bits,
            geo: None,
            order: Vec::new(),
            control: Control::default(),
        }
    }

    /// Positions searched since the solver was made (or [`Solver::reset_nodes`]).
    pub fn nodes(&self) -> u64 {
        self.control.nodes()
    }

    /// Sets the node counter to 0.
    pub fn reset_nodes(&mut self) {
        self.control.reset_nodes();
    }

    /// Forgets the transposition table.
    pub fn clear(&mut self) {
        self.table.fill(Entry::default());
    }

    fn prepare(&mut self, size: u32) -> Result<Geo, SolveError> {
        if size > MAX_EXACT_SIZE {
            return Err(SolveError::TooLarge(size));
        }
        if let Some(g) = self.geo
            && g.size == size
        {
            return Ok(g);
        }
        let g = Geo::new(size);
        // Cells from the centre outwards (hex distance on the doubled grid, then row order).
        let c = (size as i32 - 1) as f64 / 2.0;
        let mut cells: Vec<(i64, u32)> = Vec::new();
        for r in 0..size {
            for col in 0..size {
                let (dc, dr) = (col as f64 - c, r as f64 - c);
                let d = (dc.abs() + dr.abs() + (dc + dr).abs()) / 2.0;
                cells.push(((d * 100.0) as i64, r * (size + 1) + col));
            }
        }
        cells.sort();
        self.order = cells.into_iter().map(|(_, b)| b).collect();
        self.clear();
        self.geo = Some(g);
        Ok(g)
    }

    /// The exact value of `state` for the player to move.
    pub fn value(&mut self, state: &HexState) -> Result<HexValue, SolveError> {
        let g = self.prepare(state.size())?;
        if state.outcome().is_some() {
            return Ok(HexValue::Loss);
        }
        if state.swap_available() {
            // Only at the second move: try every reply, the swap included.
            for a in state.legal_actions() {
                if let Ok(child) = state.play(a)
                    && self.value(&child)? == HexValue::Loss
                {
                    return Ok(HexValue::Win);
                }
            }
            return Ok(HexValue::Loss);
        }
        let (x, o) = (state.stones(Player::First).0[0], state.stones(Player::Second).0[0]);
        let first = state.to_move() == Player::First;
        let tag = u64::from(state.swapped()) << 63;
        Ok(if self.wins(&g, x, o | tag, first) { HexValue::Win } else { HexValue::Loss })
    }

    /// Lets `flag` stop the searches of [`Solver::value_until_stopped`].
    pub fn set_stop(&mut self, flag: StopFlag) {
        self.control.set_flag(flag);
    }

    /// The exact value of `state` for the player to move, `Ok(None)` when the stop flag
    /// ([`Solver::set_stop`]) was set before the search ended. The table is then cleared: entries written
    /// while unwinding are not sound.
    pub fn value_until_stopped(&mut self, state: &HexState) -> Result<Option<HexValue>, SolveError> {
        if self.control.flag_set() {
            return Ok(None);
        }
        let value = self.value(state)?;
        if self.control.take_stopped() {
            self.clear();
            return Ok(None);
        }
        Ok(Some(value))
    }

    /// The exact value of every legal move, the best move and the position's value.
    pub fn analyse(&mut self, state: &HexState) -> Result<Analysis, SolveError> {
        let start = self.nodes();
        let buckets = Buckets::mav();
        let mut moves = Vec::new();
        for action in state.legal_actions() {
            let Ok(child) = state.play(action) else { continue };
            let value = self.value(&child)?.flipped();
            let bucket = buckets.bucket_of(value.win_prob()).unwrap_or(0);
            moves.push(MoveSolution { action, value, win_prob: value.win_prob(), bucket });
        }
        let g = self.prepare(state.size())?;
        let rank = |a: HexAction| match a {
            HexAction::Place(c) => {
                let bit = c.row() * (g.size + 1) + c.col();
                self.order.iter().position(|&b| b == bit).unwrap_or(usize::MAX)
            }
            HexAction::Swap => usize::MAX,
        };
        let best = moves
            .iter()
            .min_by_key(|m| (m.value == HexValue::Loss, rank(m.action)))
            .map(|m| (m.action, m.value));
        let value = match best {
            Some((_, v)) => v,
            None => self.value(state)?,
        };
        Ok(Analysis { moves, best: best.map(|b| b.0), value, nodes: self.nodes() - start })
    }

    fn slot(&self, x: u64, o: u64) -> usize {
        let h =
            (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ o.rotate_left(29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (h >> self.shift) as usize
    }

    /// Whether the player to move wins; `x`/`o` are the first and second player's stones (bit 63 of `o`
    /// tags a game after a swap, so that its positions never share entries with unswapped ones).
    fn wins(&mut self, g: &Geo, x: u64, o: u64, first: bool) -> bool {
        if self.control.enter() {
            return false;
        }
        let stones_o = o & g.board;
        let empty = g.board & !(x | stones_o);
        let (mine, theirs) = if first { (x, stones_o) } else { (stones_o, x) };
        let (ma, mb, ta, tb) =
            if first { (g.top, g.bottom, g.left, g.right) } else { (g.left, g.right, g.top, g.bottom) };
        if g.winning_cells(mine, empty, ma, mb) != 0 {
            return true;
        }
        let threats = g.winning_cells(theirs, empty, ta, tb);
        if threats.count_ones() >= 2 || empty == 0 {
            return false;
        }
        let slot = self.slot(x, o);
        let e = self.table[slot];
        let mut first_try = None;
        if e.data & 0x80 != 0 && e.x == x && e.o == o {
            if e.data & 0x40 == 0 {
                return false;
            }
            first_try = Some(u32::from(e.data & 0x3F));
        }
        let candidates = if threats != 0 { threats } else { empty };
        let order: Vec<u32> = first_try
            .into_iter()
            .chain(self.order.iter().copied().filter(|&b| Some(b) != first_try))
            .filter(|&b| candidates >> b & 1 == 1)
            .collect();
        for b in order {
            let cell = 1u64 << b;
            let (cx, co) = if first { (x | cell, o) } else { (x, o | cell) };
            if !self.wins(g, cx, co, !first) {
                self.table[slot] = Entry { x, o, data: 0xC0 | b as u8 };
                return true;
            }
        }
        self.table[slot] = Entry { x, o, data: 0x80 };
        false
    }
}

#[cfg(test)]
mod tests;
