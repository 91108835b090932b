//! lc0's 112 input planes from a game's history, for each input format lc0 networks use: 8 positions × 13
//! planes (the side to move's six piece kinds, the opponent's six, a plane set when the position occurred
//! before), then 8 auxiliary planes (castling, side to move or the en-passant square, the fifty-move counter,
//! the armageddon plane, all ones). Every history position is seen from the side to move now (ranks mirrored
//! when black is to move). Missing history is filled as lc0 fills it by default (`HistoryFill=fen_only`): with
//! copies of the first position unless the game started from the standard start position. The canonical
//! formats turn the board by the transform lc0 chooses when no castling right is left, and stop the history
//! at the last capture, pawn move, castling change or en-passant chance.
//!
//! A plane is a 64-bit mask (bit i = square i, a1 = 0) and a value; only the fifty-move plane has a value
//! other than one, so the network input is the 112 masks and the fifty-move count
//! ([`Planes::masks`], [`Planes::rule50`]), which the imported graph turns into 112 × 8 × 8 numbers.

use shakmaty::{CastlingSide, Chess, Color, Position, Role};

use super::format::InputFormat;
use super::history::{Entry, History, color_bb, role_bb};
use super::policy_index::transform;

/// Planes per history position.
pub const PLANES_PER_POSITION: usize = 13;
/// History positions.
pub const HISTORY: usize = 8;
/// The first auxiliary plane.
pub const AUX: usize = 104;
/// All planes.
pub const PLANES: usize = 112;
/// The fifty-move plane.
pub const RULE50_PLANE: usize = AUX + 5;

/// How missing history is filled (lc0's `HistoryFill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// Not filled.
    No,
    /// Filled unless the game started from the standard start position (lc0's default).
    #[default]
    FenOnly,
    /// Always filled.
    Always,
}

/// A position's input planes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planes {
    /// The 112 masks.
    pub masks: [u64; PLANES],
    /// The fifty-move counter in plies (the value of plane 109: this, or this / 100 in the hectoplies formats).
    pub rule50: u32,
    /// The transform applied (bits of [`transform`]); 0 outside the canonical formats.
    pub transform: u8,
}

const ALL: u64 = !0;

impl Planes {
    /// The network's input row: the 112 masks (as the bits of signed 64-bit integers) and the fifty-move
    /// count.
    pub fn row(&self) -> [i64; PLANES + 1] {
        let mut row = [0i64; PLANES + 1];
        for (r, m) in row.iter_mut().zip(self.masks) {
            *r = i64::from_ne_bytes(m.to_ne_bytes());
        }
        row[PLANES] = i64::from(self.rule50);
        row
    }
}

fn reverse_bits_in_bytes(mut v: u64) -> u64 {
    v = ((v >> 1) & 0x5555_5555_5555_5555) | ((v & 0x5555_5555_5555_5555) << 1);
    v = ((v >> 2) & 0x3333_3333_3333_3333) | ((v & 0x3333_3333_3333_3333) << 2);
    ((v >> 4) & 0x0F0F_0F0F_0F0F_0F0F) | ((v & 0x0F0F_0F0F_0F0F_0F0F) << 4)
}

fn transpose_bits_in_bytes(mut v: u64) -> u64 {
    v = (v & 0xAA00_AA00_AA00_AA00) >> 9 | (v & 0x0055_0055_0055_0055) << 9 | (v & 0x55AA_55AA_55AA_55AA);
    v = (v & 0xCCCC_0000_CCCC_0000) >> 18 | (v & 0x0000_3333_0000_3333) << 18 | (v & 0x3333_CCCC_3333_CCCC);
    (v & 0xF0F0_F0F0_0000_0000) >> 36 | (v & 0x0000_0000_0F0F_0F0F) << 36 | (v & 0x0F0F_0F0F_F0F0_F0F0)
}

/// A mask under transform `t`: flip (files), then mirror (ranks), then transpose.
pub fn transform_mask(mut v: u64, t: u8) -> u64 {
    if t & transform::FLIP != 0 {
        v = reverse_bits_in_bytes(v);
    }
    if t & transform::MIRROR != 0 {
        v = v.swap_bytes();
    }
    if t & transform::TRANSPOSE != 0 {
        v = transpose_bits_in_bytes(v);
    }
    v
}

/// A position's pieces from `view`'s side: (ours, theirs) and the piece kinds, all ranks mirrored for black.
struct Frame {
    ours: u64,
    theirs: u64,
    kinds: [u64; 6],
}

fn frame(pos: &Chess, view: Color) -> Frame {
    let turn = |b: u64| if view == Color::Black { b.swap_bytes() } else { b };
    let roles = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
    Frame {
        ours: turn(color_bb(pos, view)),
        theirs: turn(color_bb(pos, !view)),
        kinds: roles.map(|r| turn(role_bb(pos, r))),
    }
}

/// lc0's choice of transform for the position to move (canonical formats).
fn choose_transform(entry: &Entry) -> u8 {
    if entry.can_castle() {
        return 0;
    }
    let f = frame(&entry.pos, entry.turn());
    let mut king = f.ours & f.kinds[5];
    let mut t = 0;
    if king & 0x0F0F_0F0F_0F0F_0F0F != 0 {
        t |= transform::FLIP;
        king = reverse_bits_in_bytes(king);
    }
    if f.kinds[0] != 0 {
        return t;
    }
    if king & 0xFFFF_FFFF_0000_0000 != 0 {
        t |= transform::MIRROR;
        king = king.swap_bytes();
    }
    if king & 0xE0C0_8000 != 0 {
        return t | transform::TRANSPOSE;
    }
    if king & 0x1020_4080 != 0 {
        let compare = |board: u64| {
            let v = transform_mask(board, t & (transform::FLIP | transform::MIRROR));
            v.cmp(&transpose_bits_in_bytes(v))
        };
        for board in [f.ours | f.theirs, f.ours, f.kinds[5], f.kinds[4], f.kinds[3], f.kinds[1], f.kinds[2]] {
            match compare(board) {
                std::cmp::Ordering::Less => return t,
                std::cmp::Ordering::Greater => return t | transform::TRANSPOSE,
                std::cmp::Ordering::Equal => {}
            }
        }
    }
    t
}

/// The en-passant flag of `entry` in `view`'s frame, as lc0 keeps it: on the eighth rank when `entry`'s side
/// to move is `view`, else on the first.
fn ep_mask(entry: &Entry, view: Color) -> u64 {
    entry.ep_file().map_or(0, |f| if entry.turn() == view { 1u64 << (56 + f) } else { 1u64 << f })
}

fn is_standard_start(pos: &Chess) -> bool {
    *pos == Chess::default()
}

/// Encodes the last position of `history` (which must not be empty) with its history in `format`.
pub fn encode(history: &History, format: InputFormat, fill: Fill) -> Option<Planes> {
    let entries = history.entries();
    let current = entries.last()?;
    let mut masks = [0u64; PLANES];
    let t = if format.canonical() { choose_transform(current) } else { 0 };
    aux_planes(&mut masks, current, format);
    history_planes(&mut masks, entries, format, fill);
    if t != 0 {
        for m in masks.iter_mut().take(AUX + 5) {
            if *m != 0 && *m != ALL {
                *m = transform_mask(*m, t);
            }
        }
    }
    Some(Planes { masks, rule50: current.rule50(), transform: t })
}

/// Writes the auxiliary planes of `current` (the position to move) in `format`.
fn aux_planes(masks: &mut [u64; PLANES], current: &Entry, format: InputFormat) {
    let view = current.turn();
    let black = view == Color::Black;
    let (us, them) = (view, !view);
    match format {
        InputFormat::Classical => {
            let set = |b: bool| if b { ALL } else { 0 };
            masks[AUX] = set(current.castling_rook(us, CastlingSide::QueenSide).is_some());
            masks[AUX + 1] = set(current.castling_rook(us, CastlingSide::KingSide).is_some());
            masks[AUX + 2] = set(current.castling_rook(them, CastlingSide::QueenSide).is_some());
            masks[AUX + 3] = set(current.castling_rook(them, CastlingSide::KingSide).is_some());
        }
        _ => {
            let rook = |c: Color, side: CastlingSide, rank: u8| {
                current.castling_rook(c, side).map_or(0, |sq| 1u64 << (rank * 8 + sq % 8))
            };
            masks[AUX] = rook(us, CastlingSide::QueenSide, 0) | rook(them, CastlingSide::QueenSide, 7);
            masks[AUX + 1] = rook(us, CastlingSide::KingSide, 0) | rook(them, CastlingSide::KingSide, 7);
        }
    }
    if format.canonical() {
        masks[AUX + 4] = ep_mask(current, view);
    } else if black {
        masks[AUX + 4] = ALL;
    }
    // Plane 109's mask is all ones; its value is the fifty-move count.
    masks[RULE50_PLANE] = ALL;
    if format.armageddon() && black {
        masks[AUX + 6] = ALL;
    }
    masks[AUX + 7] = ALL;
}

/// Writes the history planes of `entries` (the last is the position to move), newest first, filling
/// missing history as `fill` says and stopping where `format` stops it.
fn history_planes(masks: &mut [u64; PLANES], entries: &[Entry], format: InputFormat, fill: Fill) {
    let Some(current) = entries.last() else { return };
    let view = current.turn();
    let canonical = format.canonical();
    let castling = current.pos.castles().castling_rights();
    let repeats_only = format.repeats_only();
    let last = entries.len() - 1;
    let mut i = 0usize;
    let mut idx = i64::try_from(last).unwrap_or(i64::MAX);
    while i < HISTORY {
        let entry = &entries[usize::try_from(idx.max(0)).unwrap_or(0)];
        let is_current = idx == i64::try_from(last).unwrap_or(i64::MAX);
        if canonical && entry.pos.castles().castling_rights() != castling {
            break;
        }
        if canonical && !is_current && entry.ep_file().is_some() {
            break;
        }
        if fill == Fill::No && (idx < -1 || (idx == -1 && entry.ep_file().is_none())) {
            break;
        }
        if idx < 0 && fill == Fill::FenOnly && is_standard_start(&entry.pos) {
            break;
        }
        if repeats_only && entry.repetitions == 0 && i > 0 {
            // Before the first position only its copies follow, which repeat nothing: the rest stays empty
            // (lc0 would look back there without end).
            if entry.rule50() == 0 || idx <= 0 {
                break;
            }
            idx -= 1;
            continue;
        }
        position_planes(masks, i * PLANES_PER_POSITION, entry, view, idx < 0);
        if canonical && entry.rule50() == 0 {
            break;
        }
        i += 1;
        idx -= 1;
    }
}

/// Writes the 13 planes of one history position from plane `base`, seen from `view`; `filled` for a copy
/// filling missing history.
fn position_planes(masks: &mut [u64; PLANES], base: usize, entry: &Entry, view: Color, filled: bool) {
    let f = frame(&entry.pos, view);
    for k in 0..6 {
        masks[base + k] = f.ours & f.kinds[k];
        masks[base + 6 + k] = f.theirs & f.kinds[k];
    }
    if entry.repetitions >= 1 {
        masks[base + 12] = ALL;
    }
    if filled {
        // A filled copy with an en-passant flag: the pawn that advanced two squares is put back.
        let ep = ep_mask(entry, view);
        if ep != 0 {
            let sq = ep.trailing_zeros();
            if sq < 8 {
                masks[base] = masks[base]
                    .wrapping_add(0x0000_0000_0000_0100u64.wrapping_sub(0x0000_0000_0100_0000) << sq);
            } else {
                masks[base + 6] = masks[base + 6]
                    .wrapping_add(0x0001_0000_0000_0000u64.wrapping_sub(0x0000_0001_0000_0000) << (sq - 56));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_in_the_classical_format() {
        let h = History::new([Chess::default()]);
        let p = encode(&h, InputFormat::Classical, Fill::FenOnly).expect("a position");
        assert_eq!(p.masks[0], 0xff00, "our pawns on rank 2");
        assert_eq!(p.masks[11], 1 << 60, "their king on e8");
        assert_eq!(p.masks[13], 0, "no history before the start position (fen_only)");
        assert_eq!(&p.masks[AUX..AUX + 4], &[ALL; 4]);
        assert_eq!(p.masks[AUX + 4], 0, "white to move");
        assert_eq!(p.masks[AUX + 7], ALL);
        let filled = encode(&h, InputFormat::Classical, Fill::Always).expect("a position");
        assert_eq!(filled.masks[13], 0xff00, "filled with copies");
    }

    #[test]
    fn the_v2_formats_stop_before_a_stretch_of_history_without_repeats() {
        // A stretch of a game (its start not included), fifty-move counter 7 and no repetition: only the
        // current position is written, and the encoder ends.
        let fen = "4k3/8/8/8/8/8/8/R3K3 w - - 7 40";
        let start: Chess = fen
            .parse::<shakmaty::fen::Fen>()
            .expect("a FEN")
            .into_position(shakmaty::CastlingMode::Standard)
            .expect("legal");
        let mut positions = vec![start.clone()];
        let mut pos = start;
        for m in ["a1a2", "e8d8", "a2a3"] {
            let mv = m.parse::<shakmaty::uci::UciMove>().expect("uci").to_move(&pos).expect("legal");
            pos.play_unchecked(mv);
            positions.push(pos.clone());
        }
        let h = History::from_stretch(positions);
        let p = encode(&h, InputFormat::CanonicalV2, Fill::FenOnly).expect("a position");
        assert_ne!(p.masks[5], 0, "the current position is written");
        assert!(p.masks[13..AUX].iter().all(|m| *m == 0), "no history plane without a repeat");
    }

    #[test]
    fn masks_transform_as_lc0_describes() {
        // a1 under flip is h1; under mirror a8; h1 transposed across a8–h1 is a8... and a1 goes to h8.
        assert_eq!(transform_mask(1, transform::FLIP), 1 << 7);
        assert_eq!(transform_mask(1, transform::MIRROR), 1 << 56);
        assert_eq!(transform_mask(1, transform::TRANSPOSE), 1 << 63);
        assert_eq!(transform_mask(1 << 7, transform::TRANSPOSE), 1 << 7);
    }
}
