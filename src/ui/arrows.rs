//! Move arrows on the board: candidate moves coloured by value and labelled with a win percentage,
//! as wide as their weight (e.g. visit share), and the played move in its own style.
//!
//! The caller passes the data ([`Arrow`]); [`candidate_arrows`] turns per-move statistics (from a
//! search snapshot or a model's action values) into arrows.

use eframe::egui::{self, Color32, FontId, Pos2, Stroke, Vec2};
use shakmaty::{CastlingMode, Move, Square};

/// How an arrow is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowStyle {
    /// A candidate move: filled, coloured by its value.
    Candidate,
    /// The move that was played in the line: blue, outlined, drawn under the candidates.
    Played,
}

/// One arrow to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrow {
    /// Origin square.
    pub from: Square,
    /// Target square.
    pub to: Square,
    /// Win probability for the side to move, 0..=1, if known (colour and label).
    pub win_probability: Option<f32>,
    /// Relative weight 0..=1 (e.g. visits / most visits): the arrow's width.
    pub weight: f32,
    /// Candidate or played.
    pub style: ArrowStyle,
}

/// Statistics for one candidate move, as a search or a model reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandidateMove {
    /// The move.
    pub mv: Move,
    /// Win probability for the side to move, 0..=1.
    pub win_probability: f32,
    /// Visits (or any non-negative weight).
    pub visits: u32,
}

/// The squares an arrow for `mv` joins: for castling, the king's destination in standard chess and the
/// rook's square in Chess960 (as the move is entered there).
pub fn move_squares(mv: Move, mode: CastlingMode) -> Option<(Square, Square)> {
    let from = mv.from()?;
    let to = match (mv, mv.castling_side(), mode) {
        (Move::Castle { king, .. }, Some(side), CastlingMode::Standard) => {
            Square::from_coords(side.king_to_file(), king.rank())
        }
        _ => mv.to(),
    };
    Some((from, to))
}

/// Arrows for the best `max` candidates by visits, widths relative to the most visited move.
pub fn candidate_arrows(candidates: &[CandidateMove], mode: CastlingMode, max: usize) -> Vec<Arrow> {
    let mut sorted: Vec<&CandidateMove> = candidates.iter().collect();
    sorted.sort_by_key(|c| std::cmp::Reverse(c.visits));
    let most = sorted.first().map_or(0, |c| c.visits).max(1) as f32;
    sorted
        .into_iter()
        .take(max)
        .filter_map(|c| {
            let (from, to) = move_squares(c.mv, mode)?;
            Some(Arrow {
                from,
                to,
                win_probability: Some(c.win_probability.clamp(0.0, 1.0)),
                weight: c.visits as f32 / most,
                style: ArrowStyle::Candidate,
            })
        })
        .collect()
}

/// The colour for a win probability: red (losing) through amber (even) to green (winning).
pub fn value_color(win_probability: f32) -> Color32 {
    let p = win_probability.clamp(0.0, 1.0);
    let lerp = |a: u8, b: u8, t: f32| (f32::from(a) + (f32::from(b) - f32::from(a)) * t).round() as u8;
    let (lo, hi, t) = if p < 0.5 {
        ((200, 40, 40), (225, 170, 30), p * 2.0)
    } else {
        ((225, 170, 30), (40, 160, 60), (p - 0.5) * 2.0)
    };
    Color32::from_rgb(lerp(lo.0, hi.0, t), lerp(lo.1, hi.1, t), lerp(lo.2, hi.2, t))
}

/// The label of a win probability, e.g. `63%`.
pub fn percent_label(win_probability: f32) -> String {
    format!("{:.0}%", win_probability.clamp(0.0, 1.0) * 100.0)
}

/// Shaft width in points for a weight, on squares of `square` points.
pub fn arrow_width(weight: f32, square: f32) -> f32 {
    square * (0.06 + 0.14 * weight.clamp(0.0, 1.0))
}

/// The fill colour and outline of an arrow.
pub fn arrow_colors(arrow: &Arrow) -> (Color32, Stroke) {
    match arrow.style {
        ArrowStyle::Played => (
            Color32::from_rgba_unmultiplied(40, 110, 230, 150),
            Stroke::new(1.5, Color32::from_rgb(10, 40, 120)),
        ),
        ArrowStyle::Candidate => {
            let c = arrow.win_probability.map_or(Color32::from_rgb(120, 120, 120), value_color);
            (
                Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), 200),
                Stroke::new(1.0, Color32::from_black_alpha(160)),
            )
        }
    }
}

/// The outline of an arrow from `a` to `b` as a convex-friendly polygon (shaft and head), points in order.
pub fn arrow_polygon(a: Pos2, b: Pos2, width: f32) -> Vec<Pos2> {
    let d = b - a;
    let len = d.length();
    if len < 1.0 {
        return Vec::new();
    }
    let dir = d / len;
    let n = Vec2::new(-dir.y, dir.x);
    let head_len = (width * 2.2).min(len * 0.6);
    let head_half = width * 1.6;
    let neck = b - dir * head_len;
    let h = width / 2.0;
    vec![a + n * h, neck + n * h, neck + n * head_half, b, neck - n * head_half, neck - n * h, a - n * h]
}

/// Paints `arrows` given a function from squares to their centres and the square size. Played arrows
/// go first (under), then candidates from the lightest to the heaviest.
pub fn paint_arrows(painter: &egui::Painter, arrows: &[Arrow], square: f32, center: impl Fn(Square) -> Pos2) {
    let mut order: Vec<&Arrow> = arrows.iter().collect();
    order.sort_by(|a, b| {
        let key = |x: &Arrow| (x.style == ArrowStyle::Candidate, x.weight);
        key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut labels: Vec<(Pos2, Pos2, String)> = Vec::new();
    for arrow in order {
        let (a, b) = (center(arrow.from), center(arrow.to));
        let width = match arrow.style {
            ArrowStyle::Played => square * 0.16,
            ArrowStyle::Candidate => arrow_width(arrow.weight, square),
        };
        // Start a little off the origin's centre so the piece stays visible.
        let dir = (b - a).normalized();
        let a = a + dir * square * 0.25;
        let points = arrow_polygon(a, b, width);
        if points.is_empty() {
            continue;
        }
        let (fill, stroke) = arrow_colors(arrow);
        // The polygon is not convex (the head is wider than the shaft): paint shaft and head as two
        // convex parts, then the outline.
        painter.add(egui::Shape::convex_polygon(
            vec![points[0], points[1], points[5], points[6]],
            fill,
            Stroke::NONE,
        ));
        painter.add(egui::Shape::convex_polygon(vec![points[2], points[3], points[4]], fill, Stroke::NONE));
        painter.add(egui::Shape::closed_line(points.clone(), stroke));
        if let (ArrowStyle::Candidate, Some(p)) = (arrow.style, arrow.win_probability) {
            labels.push((a, b, percent_label(p)));
        }
    }
    // Labels over every arrow, the heaviest arrow's placed first, none over another.
    let font = FontId::proportional((square * 0.2).clamp(9.0, 18.0));
    let galleys: Vec<_> = labels
        .iter()
        .rev()
        .map(|(_, _, text)| painter.layout_no_wrap(text.clone(), font.clone(), Color32::WHITE))
        .collect();
    let segments: Vec<(Pos2, Pos2, Vec2)> = labels
        .iter()
        .rev()
        .zip(&galleys)
        .map(|((a, b, _), g)| (*a, *b, g.size() + Vec2::new(6.0, 2.0)))
        .collect();
    for (rect, galley) in place_labels(&segments).into_iter().zip(galleys) {
        painter.rect_filled(rect, 3.0, Color32::from_black_alpha(170));
        painter.galley(rect.min + Vec2::new(3.0, 1.0), galley, Color32::WHITE);
    }
}

/// Where along its arrow each label goes (as a fraction from the start), tried in this order.
const LABEL_SPOTS: [f32; 7] = [0.55, 0.4, 0.7, 0.3, 0.82, 0.2, 0.92];

/// Places labels of `size` on arrows from `a` to `b` (in priority order): each at the first spot along
/// its own arrow where it overlaps no label placed before it, else at the spot overlapping least.
pub fn place_labels(arrows: &[(Pos2, Pos2, Vec2)]) -> Vec<egui::Rect> {
    let mut placed: Vec<egui::Rect> = Vec::with_capacity(arrows.len());
    for &(a, b, size) in arrows {
        let overlap = |r: &egui::Rect| -> f32 {
            placed
                .iter()
                .map(|p| {
                    let i = p.intersect(*r);
                    if i.is_positive() { i.area() } else { 0.0 }
                })
                .sum()
        };
        let mut best: Option<(f32, egui::Rect)> = None;
        for t in LABEL_SPOTS {
            let rect = egui::Rect::from_center_size(a + (b - a) * t, size);
            let o = overlap(&rect);
            if best.is_none_or(|(bo, _)| o < bo) {
                best = Some((o, rect));
            }
            if o == 0.0 {
                break;
            }
        }
        if let Some((_, rect)) = best {
            placed.push(rect);
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Role;

    fn normal(from: Square, to: Square) -> Move {
        Move::Normal { role: Role::Pawn, from, capture: None, to, promotion: None }
    }

    #[test]
    fn candidates_are_sorted_weighted_and_coloured() {
        let c = [
            CandidateMove { mv: normal(Square::D2, Square::D4), win_probability: 0.40, visits: 50 },
            CandidateMove { mv: normal(Square::E2, Square::E4), win_probability: 0.63, visits: 200 },
            CandidateMove { mv: normal(Square::A2, Square::A3), win_probability: 0.20, visits: 1 },
        ];
        let arrows = candidate_arrows(&c, CastlingMode::Standard, 2);
        assert_eq!(arrows.len(), 2);
        assert_eq!((arrows[0].from, arrows[0].to), (Square::E2, Square::E4));
        assert_eq!(arrows[0].weight, 1.0);
        assert_eq!(arrows[1].weight, 0.25);
        assert!(arrow_width(arrows[0].weight, 80.0) > arrow_width(arrows[1].weight, 80.0));
        assert_eq!(percent_label(0.634), "63%");
        let good = value_color(0.9);
        let bad = value_color(0.1);
        assert!(good.g() > good.r() && bad.r() > bad.g());
    }

    #[test]
    fn played_style_differs_from_candidates() {
        let mut a = Arrow {
            from: Square::E2,
            to: Square::E4,
            win_probability: Some(0.5),
            weight: 1.0,
            style: ArrowStyle::Candidate,
        };
        let candidate = arrow_colors(&a);
        a.style = ArrowStyle::Played;
        assert_ne!(arrow_colors(&a), candidate);
    }

    #[test]
    fn castling_arrow_depends_on_mode() {
        let castle = Move::Castle { king: Square::E1, rook: Square::H1 };
        assert_eq!(move_squares(castle, CastlingMode::Standard), Some((Square::E1, Square::G1)));
        assert_eq!(move_squares(castle, CastlingMode::Chess960), Some((Square::E1, Square::H1)));
    }

    #[test]
    fn labels_of_arrows_sharing_a_square_do_not_overlap() {
        let size = Vec2::new(34.0, 16.0);
        // Three arrows from one square (e2-e4, e2-e3, e2-d3 on 60-px squares), and two into one square.
        let from = Pos2::new(270.0, 390.0);
        let arrows = [
            (from, Pos2::new(270.0, 270.0), size),
            (from, Pos2::new(270.0, 330.0), size),
            (from, Pos2::new(210.0, 330.0), size),
            (Pos2::new(90.0, 90.0), Pos2::new(150.0, 150.0), size),
            (Pos2::new(210.0, 90.0), Pos2::new(150.0, 150.0), size),
        ];
        let rects = place_labels(&arrows);
        assert_eq!(rects.len(), arrows.len());
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                let inter = a.intersect(*b);
                assert!(!inter.is_positive(), "labels {a:?} and {b:?} overlap");
            }
        }
        // Alone, a label sits at its usual spot.
        let alone = place_labels(&arrows[..1]);
        assert_eq!(alone[0].center(), Pos2::new(270.0, 390.0 - 120.0 * 0.55));
    }

    #[test]
    fn polygon_ends_at_the_target() {
        let p = arrow_polygon(Pos2::new(0.0, 0.0), Pos2::new(100.0, 0.0), 10.0);
        assert_eq!(p.len(), 7);
        assert_eq!(p[3], Pos2::new(100.0, 0.0));
        assert!(arrow_polygon(Pos2::ZERO, Pos2::ZERO, 10.0).is_empty());
    }
}
