//! A game's positions as lc0's encoder sees them: pieces as bitboards, castling rights by rook square, the
//! en-passant flag as lc0 sets it (after a double step with an enemy pawn beside it, pins ignored), the
//! fifty-move counter, and how often each position occurred before (lc0's repetition count: the same
//! pieces, castling rights, en-passant flag and side to move, looked for among the positions since the last
//! capture or pawn move).

use shakmaty::{CastlingSide, Chess, Color, EnPassantMode, Position, Role};

/// One position of a game, as the encoder needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The position.
    pub pos: Chess,
    /// lc0's repetition count: 0 for a position not seen before, else 1 + the count of its last occurrence.
    pub repetitions: u32,
    /// The file of the en-passant flag as lc0 keeps it.
    ep: Option<u8>,
}

impl Entry {
    /// The fifty-move counter in plies.
    pub fn rule50(&self) -> u32 {
        self.pos.halfmoves()
    }

    /// The file of the en-passant square as lc0 flags it: after a move, when an enemy pawn stands beside
    /// the pawn that advanced two squares (pseudo-legal); in the position a history starts from, as its FEN
    /// gives it.
    pub fn ep_file(&self) -> Option<u8> {
        self.ep
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.pos.turn()
    }

    /// Whether any castling right is left.
    pub fn can_castle(&self) -> bool {
        self.pos.castles().castling_rights().any()
    }

    /// The rook square of a castling right, if that right is left.
    pub fn castling_rook(&self, color: Color, side: CastlingSide) -> Option<u8> {
        self.pos.castles().rook(color, side).map(u8::from)
    }

    /// Whether two positions are the same for lc0's repetition count.
    fn same_board(&self, other: &Entry) -> bool {
        let (a, b) = (&self.pos, &other.pos);
        a.turn() == b.turn()
            && a.board() == b.board()
            && a.castles().castling_rights() == b.castles().castling_rights()
            && self.ep_file() == other.ep_file()
    }
}

/// The bitboard of `role` pieces of both colours.
pub fn role_bb(pos: &Chess, role: Role) -> u64 {
    pos.board().by_role(role).0
}

/// The bitboard of `color`'s pieces.
pub fn color_bb(pos: &Chess, color: Color) -> u64 {
    pos.board().by_color(color).0
}

/// A game as lc0's history: each position with its repetition count, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct History {
    entries: Vec<Entry>,
    /// The first position is not where the game or its record starts ([`History::from_stretch`]).
    started: bool,
}

impl History {
    /// A history from a game's positions, oldest first (the first is where the game or its record starts:
    /// its en-passant square is taken as its FEN gives it).
    pub fn new(positions: impl IntoIterator<Item = Chess>) -> History {
        let mut h = History::default();
        for p in positions {
            h.push(p);
        }
        h
    }

    /// A history from a stretch of a game that may not begin at its start (the positions an evaluation
    /// request carries): every en-passant square is read as lc0 reads one after a move.
    pub fn from_stretch(positions: impl IntoIterator<Item = Chess>) -> History {
        let mut h = History { entries: Vec::new(), started: true };
        for p in positions {
            h.push(p);
        }
        h
    }

    /// Appends the position after the last one and counts its repetitions as lc0 does.
    pub fn push(&mut self, pos: Chess) {
        let first = self.entries.is_empty() && !self.started;
        let mode = if first { EnPassantMode::Always } else { EnPassantMode::PseudoLegal };
        let ep = pos.ep_square(mode).map(|s| u8::from(s.file()));
        let mut entry = Entry { pos, repetitions: 0, ep };
        entry.repetitions = self.repetitions_of(&entry);
        self.entries.push(entry);
    }

    fn repetitions_of(&self, last: &Entry) -> u32 {
        if last.rule50() < 4 {
            return 0;
        }
        // Same side to move: every second position, starting four plies back.
        let n = self.entries.len() + 1;
        let mut idx = n.checked_sub(5);
        while let Some(i) = idx {
            let pos = &self.entries[i];
            if pos.same_board(last) {
                return 1 + pos.repetitions;
            }
            if pos.rule50() < 2 {
                return 0;
            }
            idx = i.checked_sub(2);
        }
        0
    }

    /// Removes the last position.
    pub fn pop(&mut self) -> Option<Entry> {
        self.entries.pop()
    }

    /// The positions, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The last position.
    pub fn last(&self) -> Option<&Entry> {
        self.entries.last()
    }

    /// Whether the history holds no position.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn play(moves: &[&str]) -> History {
        let mut pos = Chess::default();
        let mut h = History::new([pos.clone()]);
        for m in moves {
            let mv = m.parse::<UciMove>().expect("uci").to_move(&pos).expect("legal");
            pos.play_unchecked(mv);
            h.push(pos.clone());
        }
        h
    }

    #[test]
    fn knight_shuffles_repeat_and_count_up() {
        let h = play(&["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]);
        let reps: Vec<u32> = h.entries().iter().map(|e| e.repetitions).collect();
        assert_eq!(reps, vec![0, 0, 0, 0, 1, 1, 1, 1, 2]);
    }

    #[test]
    fn en_passant_flag_needs_an_enemy_pawn_beside() {
        let h = play(&["e2e4"]);
        assert_eq!(h.last().expect("one").ep_file(), None);
        let h = play(&["e2e4", "a7a6", "e4e5", "d7d5"]);
        assert_eq!(h.last().expect("one").ep_file(), Some(3));
    }
}
