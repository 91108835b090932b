//! The Connect Four board: 7 columns × 6 rows of holes in a blue frame, red stones for the first player
//! (`x`), yellow for the second (`o`). Click anywhere in a column to drop a stone there; the column under
//! the pointer shows where the stone would land. Above each column: the solver's value of that move.

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::arrows::value_color;
use crate::game::connect_four::bitboard::{HEIGHT, WIDTH};
use crate::game::connect_four::{Column, ConnectFourState};
use crate::game::{GameState, Player};

/// Red, the first player's stones.
pub const FIRST_COLOR: Color32 = Color32::from_rgb(0xd0, 0x34, 0x2c);
/// Yellow, the second player's stones.
pub const SECOND_COLOR: Color32 = Color32::from_rgb(0xf2, 0xc2, 0x30);
const FRAME_COLOR: Color32 = Color32::from_rgb(0x1f, 0x4e, 0xa8);

/// One column's value shown above it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnValue {
    /// The column's move text (`1`–`7`).
    pub action: String,
    /// The win probability of the move for the player making it.
    pub win_prob: f64,
    /// A short text (`win in 7`).
    pub label: String,
    /// Whether it is the best move.
    pub best: bool,
}

/// What the board shows.
pub struct ConnectFourView<'a> {
    /// The position.
    pub state: &'a ConnectFourState,
    /// The column of the last move (its top stone gets a ring).
    pub last_move: Option<Column>,
    /// Values above the columns (any subset).
    pub values: &'a [ColumnValue],
}

/// Where the board's parts are, for drawing and for tests that click on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnectFourLayout {
    /// The whole widget (value row and board).
    pub rect: Rect,
    /// The board (holes) without the value row.
    pub board: Rect,
    /// The side of one cell.
    pub cell: f32,
}

impl ConnectFourLayout {
    /// The layout in `available` (the largest 7 : 7 box, centred: one row of values above six rows).
    pub fn new(available: Rect) -> ConnectFourLayout {
        let cols = WIDTH as f32;
        let rows = HEIGHT as f32 + 1.0;
        let cell = (available.width() / cols).min(available.height() / rows).max(8.0);
        let size = Vec2::new(cell * cols, cell * rows);
        let rect = Rect::from_center_size(available.center(), size);
        let board = Rect::from_min_max(rect.min + Vec2::new(0.0, cell), rect.max);
        ConnectFourLayout { rect, board, cell }
    }

    /// The centre of the hole at 0-based `col` and `row` (row 0 at the bottom).
    pub fn hole(&self, col: u32, row: u32) -> Pos2 {
        Pos2::new(
            self.board.left() + (col as f32 + 0.5) * self.cell,
            self.board.bottom() - (row as f32 + 0.5) * self.cell,
        )
    }

    /// The column under `pos`, anywhere from the value row down.
    pub fn column_at(&self, pos: Pos2) -> Option<Column> {
        if !self.rect.contains(pos) {
            return None;
        }
        Column::from_index(((pos.x - self.rect.left()) / self.cell) as u32)
    }
}

fn stone_color(p: Player) -> Color32 {
    match p {
        Player::First => FIRST_COLOR,
        Player::Second => SECOND_COLOR,
    }
}

const LAYOUT: &str = "mavboard_connect_four_layout";

/// The layout of the board as drawn last (for overlays and for tests that click on it).
pub fn last_layout(ctx: &egui::Context) -> Option<ConnectFourLayout> {
    super::hex_board::recalled(ctx, LAYOUT)
}

/// Draws the board and returns the column clicked, as its move text, when that move is legal.
pub fn connect_four_board_ui(ui: &mut egui::Ui, view: &ConnectFourView) -> Option<String> {
    let available = ui.available_rect_before_wrap();
    let layout = ConnectFourLayout::new(available);
    let response = ui.allocate_rect(layout.rect, Sense::click());
    super::hex_board::remember(ui.ctx(), LAYOUT, layout);
    let painter = ui.painter_at(layout.rect);
    let state = view.state;
    let over = state.outcome().is_some();
    let hovered =
        response.hover_pos().and_then(|p| layout.column_at(p)).filter(|c| !over && !state.is_full(*c));

    painter.rect_filled(layout.board, layout.cell * 0.12, FRAME_COLOR);
    if let Some(c) = hovered {
        let x = layout.board.left() + c.index() as f32 * layout.cell;
        let column = Rect::from_min_size(
            Pos2::new(x, layout.board.top()),
            Vec2::new(layout.cell, layout.board.height()),
        );
        painter.rect_filled(column, 0.0, Color32::from_white_alpha(24));
    }
    let radius = layout.cell * 0.4;
    let empty = ui.visuals().extreme_bg_color;
    for col in 0..WIDTH {
        for row in 0..HEIGHT {
            let centre = layout.hole(col, row);
            let fill = state.stone_at(col, row).map_or(empty, stone_color);
            painter.circle_filled(centre, radius, fill);
        }
    }
    if let Some(c) = view.last_move {
        let h = state.height(c);
        if h > 0 {
            painter.circle_stroke(
                layout.hole(c.index(), h - 1),
                radius * 0.55,
                Stroke::new(2.0, Color32::WHITE),
            );
        }
    }
    if let Some(c) = hovered {
        let landing = layout.hole(c.index(), state.height(c));
        painter.circle_filled(landing, radius, stone_color(state.to_move()).gamma_multiply(0.45));
    }
    // The values above the columns.
    let font = FontId::proportional((layout.cell * 0.22).clamp(9.0, 16.0));
    for v in view.values {
        let Some(c) = v.action.parse::<u32>().ok().and_then(Column::from_number) else { continue };
        let centre = Pos2::new(layout.hole(c.index(), 0).x, layout.rect.top() + layout.cell * 0.5);
        let bg = Rect::from_center_size(centre, Vec2::new(layout.cell * 0.92, layout.cell * 0.7));
        painter.rect_filled(bg, 4.0, value_color(v.win_prob as f32));
        if v.best {
            painter.rect_stroke(
                bg,
                4.0,
                Stroke::new(2.0, ui.visuals().strong_text_color()),
                egui::StrokeKind::Outside,
            );
        }
        painter.text(centre, Align2::CENTER_CENTER, &v.label, font.clone(), Color32::WHITE);
    }
    let clicked = response.clicked().then(|| response.interact_pointer_pos()).flatten();
    clicked
        .and_then(|p| layout.column_at(p))
        .filter(|c| !over && !state.is_full(*c))
        .map(|c| state.action_to_text(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_maps_columns_and_holes() {
        let l = ConnectFourLayout::new(Rect::from_min_size(Pos2::ZERO, Vec2::new(700.0, 900.0)));
        assert_eq!(l.cell, 100.0);
        assert_eq!(l.board.height(), 600.0);
        let h = l.hole(3, 0);
        assert_eq!(l.column_at(h), Column::from_index(3));
        // The value row above the board belongs to the columns too; outside it nothing does.
        assert_eq!(l.column_at(Pos2::new(h.x, l.rect.top() + 5.0)), Column::from_index(3));
        assert_eq!(l.column_at(Pos2::new(h.x, l.rect.top() - 5.0)), None);
        assert!(l.hole(0, 5).y < l.hole(0, 0).y, "row 0 is at the bottom");
    }
}
