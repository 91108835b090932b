//! The Hex board: a rhombus of hexagons, row 1 at the top, each row shifted half a cell to the right of
//! the one above. The first player (`x`, red) joins the top and bottom edges, the second (`o`, blue) the
//! left and right edges; the edges are drawn in their colours. Click an empty cell to play there; the
//! solver's value of each legal cell tints it and is written on it.

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, Sense, Shape, Stroke, Vec2};

use super::arrows::value_color;
use crate::game::hex::{Cell, HexAction, HexState};
use crate::game::{GameState, Player};

/// Red, the first player's stones and edges (top and bottom).
pub const FIRST_COLOR: Color32 = Color32::from_rgb(0xd0, 0x34, 0x2c);
/// Blue, the second player's stones and edges (left and right).
pub const SECOND_COLOR: Color32 = Color32::from_rgb(0x2a, 0x6f, 0xdb);

/// The margin around the cells, in radii, left and right (edge lines and row numbers).
const MARGIN_X: f32 = 2.2;
/// The margin around the cells, in radii, above and below (edge lines and column letters).
const MARGIN_Y: f32 = 1.3;

/// One cell's value.
#[derive(Debug, Clone, PartialEq)]
pub struct CellValue {
    /// The move text (`c5`; the swap has no cell and is shown in the panel only).
    pub action: String,
    /// The win probability of the move for the player making it.
    pub win_prob: f64,
    /// Whether it is the best move.
    pub best: bool,
}

/// What the board shows.
pub struct HexView<'a> {
    /// The position.
    pub state: &'a HexState,
    /// The cell of the last move (ringed).
    pub last_move: Option<Cell>,
    /// Values of legal cells (any subset).
    pub values: &'a [CellValue],
}

/// Where the cells are, for drawing and for tests that click on them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HexLayout {
    /// The board's size N.
    pub size: u32,
    /// The hexagons' circumradius.
    pub radius: f32,
    /// The centre of cell a1.
    pub origin: Pos2,
    /// The whole widget.
    pub rect: Rect,
}

impl HexLayout {
    /// The largest board that fits `available` (pointy-top hexagons, a margin for the labels).
    pub fn new(available: Rect, size: u32) -> HexLayout {
        let n = size.max(1) as f32;
        let w3 = 3f32.sqrt();
        // Width: n cells plus (n−1)/2 of shift; height: 1.5 R per row plus the first row's corners; around
        // them a margin of MARGIN_X / MARGIN_Y radii on each side for the edges and the coordinates.
        let by_width = available.width() / (w3 * (n + (n - 1.0) / 2.0) + 2.0 * MARGIN_X);
        let by_height = available.height() / (1.5 * (n - 1.0) + 2.0 + 2.0 * MARGIN_Y);
        let radius = by_width.min(by_height).max(4.0);
        let w = w3 * radius;
        let board = Vec2::new(w * (n + (n - 1.0) / 2.0), radius * (1.5 * (n - 1.0) + 2.0));
        let rect =
            Rect::from_center_size(available.center(), board + 2.0 * radius * Vec2::new(MARGIN_X, MARGIN_Y));
        let origin = Pos2::new(
            available.center().x - board.x / 2.0 + w / 2.0,
            available.center().y - board.y / 2.0 + radius,
        );
        HexLayout { size, radius, origin, rect }
    }

    /// The centre of cell (`col`, `row`), 0-based, row 0 at the top.
    pub fn centre(&self, col: u32, row: u32) -> Pos2 {
        let w = 3f32.sqrt() * self.radius;
        Pos2::new(
            self.origin.x + (col as f32 + row as f32 / 2.0) * w,
            self.origin.y + row as f32 * 1.5 * self.radius,
        )
    }

    /// The cell whose hexagon holds `pos` (the nearest centre within the inner radius).
    pub fn cell_at(&self, pos: Pos2) -> Option<Cell> {
        let mut best: Option<(f32, Cell)> = None;
        for row in 0..self.size {
            for col in 0..self.size {
                let d = self.centre(col, row).distance(pos);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Cell::new(col, row).map(|c| (d, c));
                }
            }
        }
        best.filter(|(d, _)| *d <= self.radius * 0.9).map(|(_, c)| c)
    }

    /// The six corners of a hexagon (pointy top) of circumradius `r` around `c`.
    pub fn hexagon(c: Pos2, r: f32) -> Vec<Pos2> {
        (0..6)
            .map(|i| {
                let a = std::f32::consts::PI / 180.0 * (60.0 * i as f32 - 90.0);
                Pos2::new(c.x + r * a.cos(), c.y + r * a.sin())
            })
            .collect()
    }
}

fn stone_color(p: Player) -> Color32 {
    match p {
        Player::First => FIRST_COLOR,
        Player::Second => SECOND_COLOR,
    }
}

const LAYOUT: &str = "mavboard_hex_layout";

/// Keeps a board's layout of this frame under `name` in egui's memory (for overlays and tests).
pub(super) fn remember<T: Clone + Send + Sync + 'static>(ctx: &egui::Context, name: &str, layout: T) {
    ctx.data_mut(|d| d.insert_temp(egui::Id::unique(name), layout));
}

/// The layout kept by [`remember`] under `name`.
pub(super) fn recalled<T: Clone + Send + Sync + 'static>(ctx: &egui::Context, name: &str) -> Option<T> {
    ctx.data(|d| d.get_temp(egui::Id::unique(name)))
}

/// The layout of the board as drawn last (for overlays and for tests that click on it).
pub fn last_layout(ctx: &egui::Context) -> Option<HexLayout> {
    recalled(ctx, LAYOUT)
}

/// Draws the board and returns the cell clicked, as its move text, when placing a stone there is legal.
pub fn hex_board_ui(ui: &mut egui::Ui, view: &HexView) -> Option<String> {
    let state = view.state;
    let n = state.size();
    let layout = HexLayout::new(ui.available_rect_before_wrap(), n);
    let response = ui.allocate_rect(layout.rect, Sense::click());
    remember(ui.ctx(), LAYOUT, layout);
    let painter = ui.painter_at(layout.rect.expand(2.0));
    let r = layout.radius;
    let over = state.outcome().is_some();
    let playable = |c: Cell| !over && state.owner(c).is_none();
    let hovered = response.hover_pos().and_then(|p| layout.cell_at(p)).filter(|c| playable(*c));

    // The edges: a thick line just outside each side of the rhombus, in the owner's colour.
    let edge = Stroke::new((r * 0.22).max(2.0), FIRST_COLOR);
    // Far enough out that the line clears the hexagons (their corners reach R from the centre).
    let off = r * 1.2;
    let last = n.saturating_sub(1);
    let (a1, n1, an, nn) =
        (layout.centre(0, 0), layout.centre(last, 0), layout.centre(0, last), layout.centre(last, last));
    let up = Vec2::new(0.0, -off);
    painter.line_segment([a1 + up, n1 + up], edge);
    painter.line_segment([an - up, nn - up], edge);
    // The sides slant at 60°: a horizontal shift d moves the line d·sin 60° away from the cells.
    let side = Vec2::new(-r * 1.4, 0.0);
    let edge = Stroke::new(edge.width, SECOND_COLOR);
    painter.line_segment([a1 + side, an + side], edge);
    painter.line_segment([n1 - side, nn - side], edge);

    let values: std::collections::HashMap<&str, &CellValue> =
        view.values.iter().map(|v| (v.action.as_str(), v)).collect();
    let font = FontId::proportional((r * 0.55).clamp(8.0, 15.0));
    let outline = Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color);
    let empty = ui.visuals().extreme_bg_color;
    for row in 0..n {
        for col in 0..n {
            let Some(cell) = Cell::new(col, row) else { continue };
            let c = layout.centre(col, row);
            let owner = state.owner(cell);
            let text = cell.to_string();
            let value = values.get(text.as_str()).filter(|_| owner.is_none());
            let fill = match (owner, value) {
                (Some(p), _) => stone_color(p),
                (None, Some(v)) => empty.lerp_to_gamma(value_color(v.win_prob as f32), 0.5),
                (None, None) => empty,
            };
            painter.add(Shape::convex_polygon(HexLayout::hexagon(c, r * 0.97), fill, outline));
            if let Some(v) = value {
                painter.text(
                    c,
                    Align2::CENTER_CENTER,
                    format!("{:.0}", v.win_prob * 100.0),
                    font.clone(),
                    Color32::WHITE,
                );
                if v.best {
                    painter.add(Shape::closed_line(
                        HexLayout::hexagon(c, r * 0.8),
                        Stroke::new(2.0, Color32::WHITE),
                    ));
                }
            }
            if view.last_move == Some(cell) {
                painter.circle_stroke(c, r * 0.35, Stroke::new(2.0, Color32::WHITE));
            }
        }
    }
    if let Some(cell) = hovered {
        let c = layout.centre(cell.col(), cell.row());
        painter.circle_filled(c, r * 0.55, stone_color(state.to_move()).gamma_multiply(0.5));
    }
    // Coordinates: column letters above row 1, row numbers left of column a.
    let label_font = FontId::proportional((r * 0.5).clamp(8.0, 14.0));
    let weak = ui.visuals().weak_text_color();
    for i in 0..n {
        let top = layout.centre(i, 0) + Vec2::new(0.0, -r * 1.85);
        painter.text(top, Align2::CENTER_CENTER, char::from(b'a' + i as u8), label_font.clone(), weak);
        let left = layout.centre(0, i) + Vec2::new(-r * 2.1, 0.0);
        painter.text(left, Align2::CENTER_CENTER, (i + 1).to_string(), label_font.clone(), weak);
    }
    let clicked = response.clicked().then(|| response.interact_pointer_pos()).flatten();
    clicked.and_then(|p| layout.cell_at(p)).filter(|c| playable(*c)).and_then(|c| {
        let action = HexAction::Place(c);
        state.legal_actions().contains(&action).then(|| state.action_to_text(action))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip_through_their_centres() {
        let l = HexLayout::new(Rect::from_min_size(Pos2::ZERO, Vec2::new(800.0, 600.0)), 7);
        for row in 0..7 {
            for col in 0..7 {
                let c = l.centre(col, row);
                assert!(l.rect.contains(c), "cell {col},{row} is on the widget");
                assert_eq!(l.cell_at(c), Cell::new(col, row));
            }
        }
        // Rows shift right by half a cell: b1 is right of a2's centre by half a cell.
        let w = 3f32.sqrt() * l.radius;
        assert!((l.centre(1, 0).x - l.centre(0, 1).x - w / 2.0).abs() < 1e-3);
        assert_eq!(l.cell_at(l.rect.left_top()), None);
    }

    #[test]
    fn the_largest_board_fits() {
        let area = Rect::from_min_size(Pos2::new(10.0, 20.0), Vec2::new(640.0, 480.0));
        let l = HexLayout::new(area, 13);
        assert!(area.expand(1.0).contains_rect(l.rect), "{:?} in {:?}", l.rect, area);
    }
}
