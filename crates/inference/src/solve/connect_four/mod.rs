//! An exact Connect Four solver: the game-theoretic value of a position and of every legal move, with
//! how many plies the game lasts under perfect play (the winner wins as soon as it can, the loser holds
//! out as long as it can).
//!
//! Negamax with alpha-beta on bitboards (see [`crate::game::connect_four::bitboard`]):
//!
//! - **scores**: a win with the winner's `k`-th stone scores `22 − k` for the winner (and the negation for
//!   the loser), a draw 0, so sooner wins score higher; [`GameValue`] turns a score back into
//!   win/draw/loss and plies;
//! - **pruning before search**: an immediate win is found by the winning-cell bitboard, a position whose
//!   opponent has two immediate wins is lost at once, a single opponent threat forces the reply, and a
//!   move right below an opponent's winning cell is never tried; the score window is narrowed to what the
//!   remaining empty cells allow;
//! - **transposition table** ([`table`]): lower and upper bounds per position, always-replace;
//! - **move ordering**: moves that create the most winning cells (threats) first, ties from the centre
//!   column outwards;
//! - **exact scores** by a sequence of null-window searches that bisect the score range (tried first
//!   around 0, where most positions are).
//!
//! Pure and single-threaded: a [`Solver`] owns its table, which keeps what it learnt across calls.

pub mod table;

use crate::game::connect_four::bitboard::{BOTTOM, CELLS, WIDTH, column_mask, playable, winning_cells};
use crate::game::connect_four::{Column, ConnectFourState};
use crate::game::{GameState, Outcome};
use crate::mav::buckets::Buckets;
use crate::solve::stop::{Control, StopFlag};
use table::Table;

/// Columns in the order they are tried when they make equally many threats: centre first.
const CENTRE_FIRST: [u32; WIDTH as usize] = [3, 2, 4, 1, 5, 0, 6];

/// The default transposition table: 2^23 entries, 64 MiB.
pub const DEFAULT_TABLE_BITS: u32 = 23;

/// The exact value of a position (for the player to move) or of a move (for the player making it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "result")]
pub enum GameValue {
    /// A win, the game ending `plies` plies from here (a move's value counts the move itself).
    Win {
        /// Plies until the game ends.
        plies: u32,
    },
    /// A draw: the board fills up, `plies` plies from here.
    Draw {
        /// Plies until the board is full.
        plies: u32,
    },
    /// A loss, the game ending `plies` plies from here.
    Loss {
        /// Plies until the game ends.
        plies: u32,
    },
}

impl GameValue {
    /// Plies until the game ends.
    pub fn plies(self) -> u32 {
        match self {
            GameValue::Win { plies } | GameValue::Draw { plies } | GameValue::Loss { plies } => plies,
        }
    }

    /// The value for the other player, one ply earlier (the value of the move that leads to a position
    /// with this value, from the mover's side).
    pub fn before_move(self) -> GameValue {
        match self {
            GameValue::Win { plies } => GameValue::Loss { plies: plies + 1 },
            GameValue::Draw { plies } => GameValue::Draw { plies: plies + 1 },
            GameValue::Loss { plies } => GameValue::Win { plies: plies + 1 },
        }
    }

    /// The win probability of this exact value: 1 for a win, ½ for a draw, 0 for a loss (how soon is
    /// not part of it; see [`GameValue::plies`]).
    pub fn win_prob(self) -> f64 {
        match self {
            GameValue::Win { .. } => 1.0,
            GameValue::Draw { .. } => 0.5,
            GameValue::Loss { .. } => 0.0,
        }
    }

    /// The value bucket of [`GameValue::win_prob`] (64 MAV buckets: 63, 32 or 0).
    pub fn bucket(self, buckets: Buckets) -> u32 {
        // win_prob is always finite, so bucket_of cannot fail; the fallback is never used.
        buckets.bucket_of(self.win_prob()).unwrap_or(0)
    }

    /// An order on values for the player they belong to: sooner wins above later wins above draws above
    /// later losses above sooner losses.
    pub fn rank(self) -> i64 {
        match self {
            GameValue::Win { plies } => 1000 - i64::from(plies),
            GameValue::Draw { .. } => 0,
            GameValue::Loss { plies } => -1000 + i64::from(plies),
        }
    }

    /// Short text such as `win in 7`, `draw`, `loss in 12`.
    pub fn describe(self) -> String {
        match self {
            GameValue::Win { plies } => format!("win in {plies}"),
            GameValue::Draw { .. } => "draw".to_owned(),
            GameValue::Loss { plies } => format!("loss in {plies}"),
        }
    }

    /// The value of a solver score at a position with `played` stones on the board.
    fn from_score(score: i32, played: u32) -> GameValue {
        if score == 0 {
            return GameValue::Draw { plies: CELLS - played };
        }
        let to_move_first = played.is_multiple_of(2);
        let winner_first = (score > 0) == to_move_first;
        // The winner's stone count at the end: score = 22 − k.
        let k = (CELLS / 2 + 1).saturating_sub(score.unsigned_abs());
        let end = if winner_first { 2 * k - 1 } else { 2 * k };
        let plies = end.saturating_sub(played);
        if score > 0 { GameValue::Win { plies } } else { GameValue::Loss { plies } }
    }
}

/// One legal move and its exact value.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MoveSolution {
    /// The column.
    #[serde(serialize_with = "column_number")]
    pub column: Column,
    /// Its exact value for the player making it.
    pub value: GameValue,
    /// Its win probability ([`GameValue::win_prob`]).
    pub win_prob: f64,
    /// Its MAV value bucket (64 buckets).
    pub bucket: u32,
}

fn column_number<S: serde::Serializer>(c: &Column, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(c.number())
}

/// Every legal move of a position with its exact value, the best move and the position's value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Analysis {
    /// The legal moves from left to right with their values (empty when the game is over).
    pub moves: Vec<MoveSolution>,
    /// The best move: the highest [`GameValue::rank`], the most central among equals; `None` when the
    /// game is over.
    #[serde(serialize_with = "optional_column_number")]
    pub best: Option<Column>,
    /// The position's value for the player to move.
    pub value: GameValue,
    /// Positions searched for this analysis.
    pub nodes: u64,
}

fn optional_column_number<S: serde::Serializer>(c: &Option<Column>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_some(&c.number()),
        None => s.serialize_none(),
    }
}

/// A position as the search sees it: the stones of the player to move, all stones, the stone count.
#[derive(Debug, Clone, Copy)]
struct Pos {
    current: u64,
    mask: u64,
    moves: u32,
}

impl Pos {
    fn of(state: &ConnectFourState) -> Pos {
        Pos { current: state.stones(state.to_move()), mask: state.occupied(), moves: state.plies() }
    }

    /// Unique per position: a marker above each column's stones, the mover's stones below it.
    fn key(self) -> u64 {
        (self.mask + BOTTOM) | self.current
    }

    fn play(self, cell: u64) -> Pos {
        Pos { current: self.current ^ self.mask, mask: self.mask | cell, moves: self.moves + 1 }
    }

    fn can_win_next(self) -> bool {
        winning_cells(self.current, self.mask) & playable(self.mask) != 0
    }

    /// The playable cells that do not let the opponent win on the next move (0 when every move loses).
    fn non_losing_moves(self) -> u64 {
        let mut possible = playable(self.mask);
        let theirs = winning_cells(self.current ^ self.mask, self.mask);
        let forced = possible & theirs;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return 0;
            }
            possible = forced;
        }
        possible & !(theirs >> 1)
    }
}

/// The exact solver. Reuse one for many positions: its transposition table carries over.
#[derive(Debug, Clone)]
pub struct Solver {
    table: Table,
    control: Control,
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// A solver with the default table ([`DEFAULT_TABLE_BITS`]).
    pub fn new() -> Solver {
        Solver::with_table_bits(DEFAULT_TABLE_BITS)
    }

    /// A solver whose table has `2^bits` entries of 8 bytes (clamped to [`Table::BITS`]).
    pub fn with_table_bits(bits: u32) -> Solver {
        Solver { table: Table::new(bits), control: Control::default() }
    }

    /// Positions searched since the solver was made (or [`Solver::reset_nodes`]).
    pub fn nodes(&self) -> u64 {
        self.control.nodes()
    }

    /// Sets the node counter to 0.
    pub fn reset_nodes(&mut self) {
        self.control.reset_nodes();
    }

    /// Forgets the transposition table (for timing from a cold start).
    pub fn clear(&mut self) {
        self.table.clear();
    }

    /// The exact value of `state` for the player to move.
    pub fn value(&mut self, state: &ConnectFourState) -> GameValue {
        match state.outcome() {
            Some(Outcome::Win { .. }) => GameValue::Loss { plies: 0 },
            Some(Outcome::Draw { .. }) => GameValue::Draw { plies: 0 },
            None => GameValue::from_score(self.score(Pos::of(state)), state.plies()),
        }
    }

    /// Lets `flag` stop the searches of [`Solver::value_until_stopped`].
    pub fn set_stop(&mut self, flag: StopFlag) {
        self.control.set_flag(flag);
    }

    /// The exact value of `state` for the player to move, or `None` when the stop flag
    /// ([`Solver::set_stop`]) was set before the search ended. The table is then cleared: entries written
    /// while unwinding are not sound.
    pub fn value_until_stopped(&mut self, state: &ConnectFourState) -> Option<GameValue> {
        if self.control.flag_set() {
            return None;
        }
        let value = self.value(state);
        if self.control.take_stopped() {
            self.table.clear();
            return None;
        }
        Some(value)
    }

    /// The exact value of every legal move of `state`, the best move and the position's value.
    pub fn analyse(&mut self, state: &ConnectFourState) -> Analysis {
        let start = self.nodes();
        let buckets = Buckets::mav();
        let mut moves = Vec::new();
        for column in state.legal_actions() {
            let Ok(child) = state.play(column) else { continue };
            let value = self.value(&child).before_move();
            moves.push(MoveSolution {
                column,
                value,
                win_prob: value.win_prob(),
                bucket: value.bucket(buckets),
            });
        }
        let centre = |c: Column| (i64::from(c.index()) - 3).abs();
        let best =
            moves.iter().max_by_key(|m| (m.value.rank(), -centre(m.column))).map(|m| (m.column, m.value));
        let value = match best {
            Some((_, v)) => v,
            None => self.value(state),
        };
        Analysis { moves, best: best.map(|b| b.0), value, nodes: self.nodes() - start }
    }

    /// The exact score of a position that is not over.
    fn score(&mut self, p: Pos) -> i32 {
        let played = p.moves as i32;
        let cells = CELLS as i32;
        if p.can_win_next() {
            return (cells + 1 - played) / 2;
        }
        if p.moves == CELLS {
            return 0;
        }
        let mut min = -(cells - played) / 2;
        let mut max = (cells + 1 - played) / 2;
        while min < max {
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.negamax(p, med, med + 1);
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        min
    }

    /// Negamax with alpha-beta in the window (alpha, beta), fail-hard: a result `r` with
    /// alpha < r < beta is exact, `r <= alpha` an upper bound, `r >= beta` a lower bound. The player to
    /// move must not be able to win at once (checked by the caller).
    fn negamax(&mut self, p: Pos, mut alpha: i32, mut beta: i32) -> i32 {
        if self.control.enter() {
            return 0;
        }
        let cells = CELLS as i32;
        let played = p.moves as i32;
        let next = p.non_losing_moves();
        if next == 0 {
            // Every move lets the opponent win at once.
            return -(cells - played) / 2;
        }
        if p.moves + 2 >= CELLS {
            // Neither side can win in the last two plies (an immediate win was excluded above).
            return 0;
        }
        // The opponent cannot win on its next move, so the loss is at least one ply later.
        let min = -(cells - 2 - played) / 2;
        if alpha < min {
            alpha = min;
            if alpha >= beta {
                return alpha;
            }
        }
        // We cannot win on this move, so the win is at least two plies later.
        let mut max = (cells - 1 - played) / 2;
        let key = p.key();
        if let Some((lower, upper)) = self.table.get(key) {
            max = max.min(upper);
            if lower > alpha {
                alpha = lower;
                if alpha >= beta {
                    // Fails high: the value is at least `alpha`.
                    return alpha;
                }
            }
        }
        if beta > max {
            beta = max;
            if alpha >= beta {
                // Fails low: the value is at most `beta`.
                return beta;
            }
        }
        let mut ordered: [(u32, u64); WIDTH as usize] = [(0, 0); WIDTH as usize];
        let mut n = 0;
        for c in CENTRE_FIRST {
            let cell = next & column_mask(c);
            if cell == 0 {
                continue;
            }
            let threats = winning_cells(p.current | cell, p.mask | cell).count_ones();
            // Insertion: more threats first, the centre order kept among equals.
            let mut i = n;
            while i > 0 && ordered[i - 1].0 < threats {
                ordered[i] = ordered[i - 1];
                i -= 1;
            }
            ordered[i] = (threats, cell);
            n += 1;
        }
        let alpha0 = alpha;
        for &(_, cell) in &ordered[..n] {
            let s = -self.negamax(p.play(cell), -beta, -alpha);
            if s >= beta {
                self.table.put(key, s, table::UNBOUNDED);
                return s;
            }
            if s > alpha {
                alpha = s;
            }
        }
        if alpha > alpha0 {
            self.table.put(key, alpha, alpha);
        } else {
            self.table.put(key, -table::UNBOUNDED, alpha);
        }
        alpha
    }
}

#[cfg(test)]
mod tests;
