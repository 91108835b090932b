//! The chess board widget: squares, pieces, highlights, legal-move dots, arrows, coordinates, and move
//! input by click-click or drag-and-drop with a promotion picker.
//!
//! [`board_ui`] reads a [`BoardView`] and returns the moves the user made; it never changes the game.
//! Its only state is the interaction in progress ([`BoardInteraction`]: selection, drag, promotion).

use eframe::egui::{self, Align2, Color32, CornerRadius, FontId, Pos2, Rect, Sense, Stroke, Vec2};
use shakmaty::{Chess, Color, File, Move, Piece, Position, Rank, Role, Square};

use super::arrows::{Arrow, paint_arrows};
use super::move_input::{PROMOTION_ROLES, moves_between, target_squares};
use super::pieces::{PieceTextures, piece_index};
use crate::game::chess::ChessState;

/// What the board shows.
pub struct BoardView<'a> {
    /// The position.
    pub state: &'a ChessState,
    /// Black at the bottom.
    pub flipped: bool,
    /// The move that led here (highlighted).
    pub last_move: Option<Move>,
    /// Arrows to draw (candidates, the played move).
    pub arrows: &'a [Arrow],
    /// Letters and numbers along the edges.
    pub show_coordinates: bool,
    /// Dots on the selected piece's targets.
    pub show_legal_moves: bool,
    /// Where the model looks (the *Inside* panel's attention), 0..1 per square, as a tint under the pieces.
    pub heat: &'a [(Square, f32)],
}

/// What the user did on the board this frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardOutput {
    /// A legal move.
    Move(Move),
    /// A move that is not legal, as `from-to` (e.g. `e2-e5`).
    Rejected(String),
}

/// A promotion waiting for the user to choose the piece.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingPromotion {
    to: Square,
    moves: Vec<Move>,
}

/// The interaction in progress on a board.
#[derive(Debug, Clone, Default)]
pub struct BoardInteraction {
    selected: Option<Square>,
    dragging: Option<Square>,
    promotion: Option<PendingPromotion>,
    /// Where the board was drawn last frame (for tests and overlays).
    last_rect: Option<Rect>,
}

impl BoardInteraction {
    /// The selected square, if any.
    pub fn selected(&self) -> Option<Square> {
        self.selected
    }

    /// Whether the promotion picker is open.
    pub fn promotion_open(&self) -> bool {
        self.promotion.is_some()
    }

    /// The board's rectangle in the last frame.
    pub fn last_rect(&self) -> Option<Rect> {
        self.last_rect
    }

    /// Forgets the selection, drag and promotion (e.g. after the position changed elsewhere).
    pub fn reset(&mut self) {
        self.selected = None;
        self.dragging = None;
        self.promotion = None;
    }
}

/// Board colours (light square, dark square and highlights).
mod palette {
    use super::Color32;
    pub const LIGHT: Color32 = Color32::from_rgb(240, 217, 181);
    pub const DARK: Color32 = Color32::from_rgb(181, 136, 99);
    // Premultiplied: rgba(155, 199, 0) at 41% and rgba(20, 85, 30) at 50%.
    pub const LAST_MOVE: Color32 = Color32::from_rgba_premultiplied(64, 82, 0, 105);
    pub const SELECTED: Color32 = Color32::from_rgba_premultiplied(10, 42, 15, 128);
    pub const DOT: Color32 = Color32::from_rgba_premultiplied(15, 50, 15, 90);
    pub const CHECK: Color32 = Color32::from_rgb(230, 30, 30);
}

/// The largest square board that fits in `available`, aligned to physical pixels so that squares are
/// whole pixels wide.
pub fn board_rect(available: Rect, pixels_per_point: f32) -> Rect {
    let side = available.width().min(available.height()).max(8.0);
    let square_px = ((side * pixels_per_point) / 8.0).floor().max(1.0);
    let side = square_px * 8.0 / pixels_per_point;
    let min = available.center() - Vec2::splat(side / 2.0);
    let min = Pos2::new(
        (min.x * pixels_per_point).round() / pixels_per_point,
        (min.y * pixels_per_point).round() / pixels_per_point,
    );
    Rect::from_min_size(min, Vec2::splat(side))
}

/// The rectangle of `sq` on a board drawn in `board`.
pub fn square_rect(board: Rect, sq: Square, flipped: bool) -> Rect {
    let size = board.width() / 8.0;
    let file = sq.file().to_u32() as f32;
    let rank = sq.rank().to_u32() as f32;
    let (col, row) = if flipped { (7.0 - file, rank) } else { (file, 7.0 - rank) };
    Rect::from_min_size(board.min + Vec2::new(col * size, row * size), Vec2::splat(size))
}

/// The centre of `sq` on a board drawn in `board`.
pub fn square_center(board: Rect, sq: Square, flipped: bool) -> Pos2 {
    square_rect(board, sq, flipped).center()
}

/// The square under `pos`, if it is on the board.
pub fn square_at(board: Rect, pos: Pos2, flipped: bool) -> Option<Square> {
    if !board.contains(pos) {
        return None;
    }
    let size = board.width() / 8.0;
    let col = (((pos.x - board.min.x) / size).floor() as i32).clamp(0, 7) as u32;
    let row = (((pos.y - board.min.y) / size).floor() as i32).clamp(0, 7) as u32;
    let (file, rank) = if flipped { (7 - col, row) } else { (col, 7 - row) };
    Some(Square::from_coords(File::new(file), Rank::new(rank)))
}

/// Where the promotion picker shows each piece: on the target file, from the promotion square towards
/// the middle of the board.
fn promotion_slots(board: Rect, to: Square, flipped: bool) -> Vec<(Role, Rect)> {
    let size = board.width() / 8.0;
    let first = square_rect(board, to, flipped);
    let down = if first.center().y < board.center().y { 1.0 } else { -1.0 };
    PROMOTION_ROLES
        .iter()
        .enumerate()
        .map(|(i, role)| (*role, first.translate(Vec2::new(0.0, down * size * i as f32))))
        .collect()
}

fn is_own_piece(state: &ChessState, sq: Square) -> bool {
    let pos = state.position();
    pos.board().color_at(sq) == Some(pos.turn())
}

fn square_name(sq: Square) -> String {
    sq.to_string()
}

impl BoardInteraction {
    /// Handles the user choosing `to` for the selected piece on `from`.
    fn try_move(&mut self, state: &ChessState, from: Square, to: Square) -> Option<BoardOutput> {
        let moves = moves_between(state.position(), from, to);
        match moves.len() {
            0 if is_own_piece(state, to) => {
                self.selected = Some(to);
                None
            }
            0 => {
                self.selected = None;
                Some(BoardOutput::Rejected(format!("{}-{}", square_name(from), square_name(to))))
            }
            1 => {
                self.selected = None;
                Some(BoardOutput::Move(moves[0]))
            }
            _ => {
                self.selected = None;
                self.promotion = Some(PendingPromotion { to, moves });
                None
            }
        }
    }

    /// Handles a click on `sq` (or off the board when `None`).
    fn click(&mut self, state: &ChessState, sq: Option<Square>) -> Option<BoardOutput> {
        let sq = sq?;
        match self.selected {
            Some(from) if from == sq => {
                self.selected = None;
                None
            }
            Some(from) => self.try_move(state, from, sq),
            None => {
                if is_own_piece(state, sq) {
                    self.selected = Some(sq);
                }
                None
            }
        }
    }
}

/// Draws the board in the space available and handles move input. Returns what the user did.
pub fn board_ui(
    ui: &mut egui::Ui,
    view: &BoardView<'_>,
    interaction: &mut BoardInteraction,
    pieces: &mut PieceTextures,
) -> Option<BoardOutput> {
    let available = ui.available_size().max(Vec2::splat(64.0));
    let (area, response) = ui.allocate_exact_size(available, Sense::click_and_drag());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, ui.is_enabled(), "Chess board"));
    let ppp = ui.ctx().pixels_per_point();
    let board = board_rect(area, ppp);
    interaction.last_rect = Some(board);
    let output = board_input(ui, &response, board, view, interaction);

    let painter = ui.painter_at(area);
    let size = board.width() / 8.0;
    paint_squares(&painter, board, view, interaction);
    let piece_painter =
        PiecePainter { textures: pieces.get(ui.ctx(), (size * ppp).round() as u32).map(|t| t.to_vec()) };
    let flipped = view.flipped;
    let pos = view.state.position();
    for (sq, piece) in pos.board() {
        if interaction.dragging == Some(sq) && response.dragged() {
            continue;
        }
        piece_painter.paint(&painter, piece, square_rect(board, sq, flipped));
    }
    if view.show_legal_moves
        && let Some(from) = interaction.selected
    {
        paint_targets(&painter, board, flipped, pos, from);
    }
    paint_arrows(&painter, view.arrows, size, |sq| square_center(board, sq, flipped));

    if let Some(promo) = &interaction.promotion {
        painter.rect_filled(board, 0.0, Color32::from_black_alpha(120));
        for (role, rect) in promotion_slots(board, promo.to, flipped) {
            painter.rect_filled(rect.shrink(1.0), CornerRadius::same(255), Color32::from_gray(235));
            piece_painter.paint(&painter, Piece { color: pos.turn(), role }, rect.shrink(size * 0.08));
        }
    }

    // The dragged piece follows the pointer, above everything else.
    if let (Some(from), true) = (interaction.dragging, response.dragged())
        && let (Some(piece), Some(at)) = (pos.board().piece_at(from), ui.input(|i| i.pointer.latest_pos()))
    {
        let layer = egui::LayerId::new(egui::Order::Tooltip, response.id.with("drag"));
        let top = ui.ctx().layer_painter(layer);
        piece_painter.paint(&top, piece, Rect::from_center_size(at, Vec2::splat(size)));
    }
    output
}

/// Clicks, drags, the promotion picker and Esc: the move the user made, if any.
fn board_input(
    ui: &egui::Ui,
    response: &egui::Response,
    board: Rect,
    view: &BoardView<'_>,
    interaction: &mut BoardInteraction,
) -> Option<BoardOutput> {
    let flipped = view.flipped;
    let state = view.state;
    let mut output = None;
    if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
        interaction.reset();
    }
    if let Some(promo) = interaction.promotion.clone() {
        if response.clicked() {
            let at = response.interact_pointer_pos();
            let chosen = at.and_then(|p| {
                promotion_slots(board, promo.to, flipped).into_iter().find(|(_, r)| r.contains(p))
            });
            interaction.promotion = None;
            if let Some((role, _)) = chosen {
                output =
                    promo.moves.iter().find(|m| m.promotion() == Some(role)).map(|m| BoardOutput::Move(*m));
            }
        }
    } else {
        if response.drag_started() {
            let origin = ui.input(|i| i.pointer.press_origin());
            let sq = origin.and_then(|p| square_at(board, p, flipped));
            if let Some(sq) = sq.filter(|sq| is_own_piece(state, *sq)) {
                interaction.dragging = Some(sq);
                interaction.selected = Some(sq);
            }
        }
        if response.drag_stopped()
            && let Some(from) = interaction.dragging.take()
        {
            let at = response.interact_pointer_pos().or_else(|| ui.input(|i| i.pointer.latest_pos()));
            match at.and_then(|p| square_at(board, p, flipped)) {
                Some(to) if to != from => output = interaction.try_move(state, from, to),
                Some(_) => {}
                None => interaction.selected = None,
            }
        }
        if response.clicked() {
            let sq = response.interact_pointer_pos().and_then(|p| square_at(board, p, flipped));
            output = interaction.click(state, sq);
        }
    }
    // A selection that no longer belongs to the side to move (position changed) is dropped.
    if interaction.selected.is_some_and(|sq| !is_own_piece(state, sq)) {
        interaction.selected = None;
    }
    output
}

/// The squares with the last move, the selection, the check glow and the coordinates.
fn paint_squares(painter: &egui::Painter, board: Rect, view: &BoardView<'_>, interaction: &BoardInteraction) {
    let flipped = view.flipped;
    let pos = view.state.position();
    let size = board.width() / 8.0;
    for sq in Square::ALL {
        let light = (sq.file().to_u32() + sq.rank().to_u32()) % 2 == 1;
        painter.rect_filled(
            square_rect(board, sq, flipped),
            0.0,
            if light { palette::LIGHT } else { palette::DARK },
        );
    }
    for &(sq, heat) in view.heat {
        let alpha = (heat.clamp(0.0, 1.0) * 170.0).round() as u8;
        painter.rect_filled(
            square_rect(board, sq, flipped),
            0.0,
            Color32::from_rgba_unmultiplied(255, 110, 20, alpha),
        );
    }
    if let Some(m) = view.last_move {
        for sq in [m.from(), Some(m.to())].into_iter().flatten() {
            painter.rect_filled(square_rect(board, sq, flipped), 0.0, palette::LAST_MOVE);
        }
    }
    if let Some(sq) = interaction.selected {
        painter.rect_filled(square_rect(board, sq, flipped), 0.0, palette::SELECTED);
    }
    if pos.is_check()
        && let Some(king) = pos.board().king_of(pos.turn())
    {
        let c = square_center(board, king, flipped);
        for (i, alpha) in [40u8, 70, 110, 160].iter().enumerate() {
            let r = size * (0.55 - 0.1 * i as f32);
            let col = palette::CHECK;
            painter.circle_filled(c, r, Color32::from_rgba_unmultiplied(col.r(), col.g(), col.b(), *alpha));
        }
    }
    if view.show_coordinates {
        paint_coordinates(painter, board, flipped);
    }
}

/// The dots (and capture rings) on the squares the selected piece can go to.
fn paint_targets(painter: &egui::Painter, board: Rect, flipped: bool, pos: &Chess, from: Square) {
    let size = board.width() / 8.0;
    for to in target_squares(pos, from) {
        let c = square_center(board, to, flipped);
        if pos.board().color_at(to).is_some_and(|owner| owner != pos.turn()) {
            painter.circle_stroke(c, size * 0.44, Stroke::new(size * 0.08, palette::DOT));
        } else {
            painter.circle_filled(c, size * 0.15, palette::DOT);
        }
    }
}

/// Paints pieces with the piece set's textures, or with letters where they cannot be loaded.
struct PiecePainter {
    textures: Option<Vec<egui::TextureHandle>>,
}

impl PiecePainter {
    fn paint(&self, painter: &egui::Painter, piece: Piece, rect: Rect) {
        match &self.textures {
            Some(t) => {
                let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
                painter.image(t[piece_index(piece)].id(), rect, uv, Color32::WHITE);
            }
            None => {
                let text =
                    if piece.color == Color::White { piece.role.upper_char() } else { piece.role.char() };
                painter.text(
                    rect.center(),
                    Align2::CENTER_CENTER,
                    text,
                    FontId::proportional(rect.height() * 0.6),
                    if piece.color == Color::White { Color32::WHITE } else { Color32::BLACK },
                );
            }
        }
    }
}

fn paint_coordinates(painter: &egui::Painter, board: Rect, flipped: bool) {
    let size = board.width() / 8.0;
    let font = FontId::proportional((size * 0.18).clamp(7.0, 16.0));
    let pad = size * 0.05;
    for i in 0..8u32 {
        // Files along the bottom edge, ranks along the left edge.
        let file = File::new(if flipped { 7 - i } else { i });
        let bottom_rank = if flipped { Rank::Eighth } else { Rank::First };
        let sq = Square::from_coords(file, bottom_rank);
        let rect = square_rect(board, sq, flipped);
        let light = (sq.file().to_u32() + sq.rank().to_u32()) % 2 == 1;
        let color = if light { palette::DARK } else { palette::LIGHT };
        painter.text(
            rect.right_bottom() + Vec2::new(-pad, -pad * 0.5),
            Align2::RIGHT_BOTTOM,
            file.char(),
            font.clone(),
            color,
        );

        let rank = Rank::new(if flipped { i } else { 7 - i });
        let left_file = if flipped { File::H } else { File::A };
        let sq = Square::from_coords(left_file, rank);
        let rect = square_rect(board, sq, flipped);
        let light = (sq.file().to_u32() + sq.rank().to_u32()) % 2 == 1;
        let color = if light { palette::DARK } else { palette::LIGHT };
        painter.text(
            rect.left_top() + Vec2::new(pad, pad * 0.5),
            Align2::LEFT_TOP,
            rank.char(),
            font.clone(),
            color,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_and_positions_round_trip() {
        let board = Rect::from_min_size(Pos2::new(10.0, 20.0), Vec2::splat(400.0));
        for flipped in [false, true] {
            for sq in Square::ALL {
                let c = square_center(board, sq, flipped);
                assert_eq!(square_at(board, c, flipped), Some(sq));
            }
        }
        assert_eq!(square_at(board, Pos2::new(15.0, 25.0), false), Some(Square::A8));
        assert_eq!(square_at(board, Pos2::new(15.0, 25.0), true), Some(Square::H1));
        assert_eq!(square_at(board, Pos2::new(5.0, 25.0), false), None);
    }

    #[test]
    fn board_rect_is_pixel_aligned_and_centred() {
        let r = board_rect(Rect::from_min_size(Pos2::ZERO, Vec2::new(803.0, 500.0)), 1.5);
        let square_px = r.width() * 1.5 / 8.0;
        assert!((square_px - square_px.round()).abs() < 1e-3);
        assert!(r.width() <= 500.0);
        assert!((r.center().x - 401.5).abs() < 1.0);
    }

    #[test]
    fn click_click_selects_moves_and_rejects() {
        let state = ChessState::startpos();
        let mut b = BoardInteraction::default();
        assert_eq!(b.click(&state, Some(Square::E7)), None, "black piece, White to move");
        assert_eq!(b.selected(), None);
        assert_eq!(b.click(&state, Some(Square::E2)), None);
        assert_eq!(b.selected(), Some(Square::E2));
        assert_eq!(b.click(&state, Some(Square::D2)), None, "reselect own piece");
        assert_eq!(b.selected(), Some(Square::D2));
        assert_eq!(b.click(&state, Some(Square::D5)), Some(BoardOutput::Rejected("d2-d5".to_owned())));
        assert_eq!(b.selected(), None);
        b.click(&state, Some(Square::G1));
        let out = b.click(&state, Some(Square::F3));
        assert!(matches!(out, Some(BoardOutput::Move(m)) if m.to() == Square::F3));
    }

    #[test]
    fn promotion_opens_the_picker() {
        let state =
            crate::game::chess::ChessState::from_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").expect("valid");
        let mut b = BoardInteraction::default();
        b.click(&state, Some(Square::E7));
        assert_eq!(b.click(&state, Some(Square::E8)), None);
        assert!(b.promotion_open());
        let board = Rect::from_min_size(Pos2::ZERO, Vec2::splat(800.0));
        let slots = promotion_slots(board, Square::E8, false);
        assert_eq!(slots[0].0, Role::Queen);
        assert_eq!(slots[0].1, square_rect(board, Square::E8, false));
        assert_eq!(slots[1].1, square_rect(board, Square::E7, false));
        let flipped = promotion_slots(board, Square::E8, true);
        assert_eq!(flipped[1].1, square_rect(board, Square::E7, true));
    }
}
