//! The *Inside* panel: where the model looks from a board cell or a move (one head's attention as a
//! heatmap on a small board, or every head of a layer side by side), each move's value through the layers
//! (the logit lens) with the layer where the final best move takes the lead, and what switching a head off
//! or scaling it does to every move's value.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

use super::distribution::distribution_chart_ui;
use crate::app::command::{AnalysisCommand, Command};
use crate::app::inside::{
    InsideCommand, InsideState, InsideView, best_move, head_effects, lead_layer, query_token,
};
use crate::game::GameKind;
use crate::inference::inspect::{Inspection, TokenRole};
use crate::mav::scoring::Scoring;

/// Lines drawn in the values-through-depth chart (the best moves, and the query move).
const DEPTH_MOVES: usize = 3;
/// Heads side by side in a row of the "All" view.
const SMALL_MULTIPLES_PER_ROW: usize = 3;
/// Rows of the head-effect table.
const EFFECT_ROWS: usize = 12;
/// Line colours of the depth chart, one per move.
const PALETTE: [Color32; 4] = [
    Color32::from_rgb(230, 120, 40),
    Color32::from_rgb(60, 140, 220),
    Color32::from_rgb(90, 180, 90),
    Color32::from_rgb(200, 80, 180),
];

fn send(out: &mut Vec<Command>, c: InsideCommand) {
    out.push(Command::Analysis(AnalysisCommand::Inside(c)));
}

/// The panel: the switch, then (with an answer) attention, values through depth and heads.
pub fn inside_panel_ui(ui: &mut egui::Ui, inside: &InsideState, scoring: Scoring) -> Vec<Command> {
    let mut out = Vec::new();
    let mut on = inside.enabled;
    if ui.checkbox(&mut on, "Look inside the model").changed() {
        send(&mut out, InsideCommand::Enable(on));
    }
    if !inside.enabled {
        ui.weak(
            "Runs the package's inspection graph on the board position: attention per layer and head, \
             each move's value through the layers, heads switched off.",
        );
        return out;
    }
    if inside.running {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Inspecting…");
        });
    }
    if let Some(e) = &inside.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    let Some(view) = &inside.view else { return out };
    let shown = view.shown();
    ui.weak(format!(
        "{} layers × {} heads · {} tokens · {:.1} ms{}",
        shown.num_layers(),
        shown.num_heads(),
        shown.tokens.len(),
        shown.run_time.as_secs_f64() * 1e3,
        if view.scaled.is_some() { " · heads scaled" } else { "" }
    ));
    ui.add_space(4.0);
    ui.strong("Attention");
    attention_ui(ui, inside, shown, scoring, &mut out);
    ui.add_space(6.0);
    ui.strong("Values through the layers");
    depth_ui(ui, inside, shown, scoring, &mut out);
    ui.add_space(6.0);
    ui.strong("Heads");
    heads_ui(ui, inside, view, scoring, &mut out);
    out
}

/// Layer and head chips, the query, and the heatmap(s).
fn attention_ui(
    ui: &mut egui::Ui,
    inside: &InsideState,
    shown: &Inspection,
    scoring: Scoring,
    out: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Layer");
        for l in 0..shown.num_layers() {
            if ui.selectable_label(inside.layer == l, (l + 1).to_string()).clicked() {
                send(out, InsideCommand::Layer(l));
            }
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Head");
        if ui.selectable_label(inside.head.is_none(), "All").clicked() {
            send(out, InsideCommand::Head(None));
        }
        for h in 0..shown.num_heads() {
            if ui.selectable_label(inside.head == Some(h), (h + 1).to_string()).clicked() {
                send(out, InsideCommand::Head(Some(h)));
            }
        }
    });
    let best = best_move(shown, scoring).map(|i| shown.moves[i].text.clone()).unwrap_or_default();
    ui.horizontal(|ui| {
        let from = ui.label("From");
        let label = inside.query.clone().unwrap_or_else(|| format!("best move ({best})"));
        let combo = egui::ComboBox::from_id_salt("inside_query").selected_text(label).show_ui(ui, |ui| {
            if ui.selectable_label(inside.query.is_none(), format!("best move ({best})")).clicked() {
                send(out, InsideCommand::Query(None));
            }
            for m in &shown.moves {
                if ui.selectable_label(inside.query.as_deref() == Some(&m.text), &m.text).clicked() {
                    send(out, InsideCommand::Query(Some(m.text.clone())));
                }
            }
        });
        combo.response.labelled_by(from.id);
        ui.weak("or click a cell");
    });
    let Some(query) = query_token(shown, inside.query.as_deref(), scoring) else {
        ui.weak("That query is not in this position's input.");
        return;
    };
    if let Some(m) = shown.attention_move.and_then(|i| shown.moves.get(i)) {
        ui.weak(format!(
            "This model reads one move at a time: the maps are of {}'s input (choose another move above).",
            m.text
        ));
    }
    let width = ui.available_width().max(120.0);
    let clicked = match inside.head {
        Some(head) => heatmap_ui(ui, shown, inside.layer, head, query, width.min(260.0)),
        None => {
            // Small multiples that never widen the panel: three a row, the spacing between them counted.
            let per_row = SMALL_MULTIPLES_PER_ROW;
            let gap = ui.spacing().item_spacing.x;
            let size = ((width - gap * per_row as f32) / per_row as f32).floor().max(24.0);
            let mut clicked = None;
            for row in (0..shown.num_heads()).collect::<Vec<_>>().chunks(per_row) {
                ui.horizontal(|ui| {
                    for &head in row {
                        ui.vertical(|ui| {
                            ui.weak(format!("head {}", head + 1));
                            clicked =
                                heatmap_ui(ui, shown, inside.layer, head, query, size).or(clicked.take());
                        });
                    }
                });
            }
            clicked
        }
    };
    if let Some(cell) = clicked {
        send(out, InsideCommand::Query(Some(cell)));
    }
    let row = shown.attention_row(inside.layer, inside.head.unwrap_or(0), query).unwrap_or_default();
    let off_board: f32 = shown
        .tokens
        .iter()
        .zip(&row)
        .filter(|(t, _)| !matches!(t.role, TokenRole::Cell(_)))
        .map(|(_, p)| p)
        .sum();
    if inside.head.is_some() {
        ui.weak(format!(
            "{:.0}% of this head's attention goes to tokens off the board (moves, state).",
            off_board * 100.0
        ));
    }
}

/// One head's attention from `query` to the board cells, on a `size`-wide board; a click on a cell
/// returns its name.
fn heatmap_ui(
    ui: &mut egui::Ui,
    shown: &Inspection,
    layer: usize,
    head: usize,
    query: usize,
    size: f32,
) -> Option<String> {
    let cells = shown.board_attention(layer, head, query).ok()?;
    let cols = cells.iter().map(|(c, _)| c.col + 1).max()? as f32;
    let rows = cells.iter().map(|(c, _)| c.row + 1).max()? as f32;
    let hex = shown.game == GameKind::Hex;
    let span = if hex { cols + (rows - 1.0) * 0.5 } else { cols };
    let cell = size / span;
    let (rect, response) = ui.allocate_exact_size(Vec2::new(size, cell * rows), Sense::click());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    let peak = cells.iter().map(|(_, p)| *p).fold(0.0f32, f32::max).max(1e-9);
    let query_cell = match &shown.tokens.get(query).map(|t| &t.role) {
        Some(TokenRole::Cell(c)) => Some(c.clone()),
        _ => None,
    };
    let mut hovered = None;
    let mut clicked = None;
    for (i, (c, p)) in cells.iter().enumerate() {
        // Chess and Connect Four with their first row at the bottom; Hex row 1 on top, each row shifted.
        let (x, y) = if hex {
            (c.col as f32 + c.row as f32 * 0.5, c.row as f32)
        } else {
            (c.col as f32, rows - 1.0 - c.row as f32)
        };
        let r = Rect::from_min_size(rect.min + Vec2::new(x * cell, y * cell), Vec2::splat(cell)).shrink(0.5);
        let heat = (p / peak).clamp(0.0, 1.0);
        let base = if (c.col + c.row) % 2 == 0 { visuals.extreme_bg_color } else { visuals.faint_bg_color };
        painter.rect_filled(r, 1.0, base.lerp_to_gamma(Color32::from_rgb(255, 120, 30), heat));
        let text = shown
            .tokens
            .iter()
            .find(|t| matches!(&t.role, TokenRole::Cell(x) if x == c))
            .map(|t| t.text.clone())
            .unwrap_or_default();
        if text != "." && cell >= 10.0 {
            painter.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                &text,
                egui::FontId::monospace((cell * 0.5).min(14.0)),
                visuals.text_color(),
            );
        }
        if query_cell.as_ref() == Some(c) {
            painter.rect_stroke(r, 1.0, Stroke::new(2.0, visuals.selection.stroke.color), StrokeKind::Inside);
        }
        if let Some(pos) = response.hover_pos()
            && r.contains(pos)
        {
            hovered = Some(i);
            if response.clicked() {
                clicked = Some(c.name.clone());
            }
        }
    }
    if let Some(i) = hovered {
        let (c, p) = &cells[i];
        response.on_hover_text(format!("{}: {:.3} (head {}, layer {})", c.name, p, head + 1, layer + 1));
    }
    clicked
}

/// The Inside panel's attention on the chess board: the chosen head's (or the layer's heads' mean) from the
/// query, scaled from the least-looked-at square (0) to the most (1); empty while the panel is off, the
/// board is not chess, or every square gets the same.
pub fn board_heat(state: &crate::app::state::AppState) -> Vec<(shakmaty::Square, f32)> {
    let inside = &state.analysis.inside;
    let scoring = state.settings.scoring;
    let Some(view) = inside.view.as_ref().filter(|_| inside.enabled && state.doc.board_game.is_none()) else {
        return Vec::new();
    };
    let shown = view.shown();
    if !matches!(shown.game, GameKind::Chess | GameKind::Chess960) {
        return Vec::new();
    }
    let Some(query) = query_token(shown, inside.query.as_deref(), scoring) else { return Vec::new() };
    let heads: Vec<usize> = inside.head.map_or_else(|| (0..shown.num_heads()).collect(), |h| vec![h]);
    let mut sum = [0.0f32; 64];
    for head in heads {
        for (cell, p) in shown.board_attention(inside.layer, head, query).unwrap_or_default() {
            if let Some(i) = (cell.col < 8 && cell.row < 8).then(|| (cell.row * 8 + cell.col) as usize) {
                sum[i] += p;
            }
        }
    }
    // From the least-looked-at square (no tint) to the most (full), so that a broad head still shows
    // where it leans.
    let peak = sum.iter().copied().fold(0.0f32, f32::max);
    let low = sum.iter().copied().fold(f32::MAX, f32::min);
    if peak <= 0.0 || peak - low <= f32::EPSILON {
        return Vec::new();
    }
    shakmaty::Square::ALL.iter().map(|&sq| (sq, (sum[usize::from(sq)] - low) / (peak - low))).collect()
}

/// The moves the depth chart follows: the best by the output, then the query move when it is a move.
fn depth_moves(inside: &InsideState, shown: &Inspection, scoring: Scoring) -> Vec<usize> {
    let mut order: Vec<usize> = (0..shown.moves.len()).collect();
    order.sort_by(|&a, &b| {
        scoring.value(&shown.moves[b].value).total_cmp(&scoring.value(&shown.moves[a].value))
    });
    order.truncate(DEPTH_MOVES);
    if let Some(q) = inside.query.as_deref().and_then(|q| shown.move_index(q))
        && !order.contains(&q)
    {
        order.push(q);
    }
    order
}

/// Mean (solid) and max (dashed) value of the followed moves after each layer, the lead layer marked,
/// then one move's distribution at a chosen layer.
fn depth_ui(
    ui: &mut egui::Ui,
    inside: &InsideState,
    shown: &Inspection,
    scoring: Scoring,
    out: &mut Vec<Command>,
) {
    let moves = depth_moves(inside, shown, scoring);
    let layers = shown.moves.first().map_or(0, |m| m.layers.len());
    if layers == 0 || moves.is_empty() {
        return;
    }
    let mut lo = f64::MAX;
    let mut hi = f64::MIN;
    for &m in &moves {
        for d in &shown.moves[m].layers {
            for v in [d.mean_value(), d.max_value()] {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let pad = ((hi - lo) * 0.1).max(0.02);
    let (lo, hi) = ((lo - pad).max(0.0), (hi + pad).min(1.0));
    let width = ui.available_width().max(120.0);
    let (rect, _) = ui.allocate_exact_size(Vec2::new(width, 110.0), Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    let plot = rect.shrink2(Vec2::new(10.0, 8.0));
    let x_of = |l: usize| plot.left() + plot.width() * l as f32 / (layers - 1).max(1) as f32;
    let y_of = |v: f64| plot.bottom() - plot.height() * ((v - lo) / (hi - lo).max(1e-9)) as f32;
    if let Some(lead) = lead_layer(shown, scoring) {
        let x = x_of(lead);
        painter.line_segment(
            [Pos2::new(x, plot.top()), Pos2::new(x, plot.bottom())],
            visuals.widgets.noninteractive.bg_stroke,
        );
    }
    for (k, &m) in moves.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        let means: Vec<Pos2> = shown.moves[m]
            .layers
            .iter()
            .enumerate()
            .map(|(l, d)| Pos2::new(x_of(l), y_of(d.mean_value())))
            .collect();
        let maxes: Vec<Pos2> = shown.moves[m]
            .layers
            .iter()
            .enumerate()
            .map(|(l, d)| Pos2::new(x_of(l), y_of(d.max_value())))
            .collect();
        painter.add(egui::Shape::line(means, Stroke::new(2.0, colour)));
        painter.extend(egui::Shape::dashed_line(&maxes, Stroke::new(1.0, colour), 4.0, 3.0));
    }
    ui.horizontal_wrapped(|ui| {
        for (k, &m) in moves.iter().enumerate() {
            ui.colored_label(PALETTE[k % PALETTE.len()], &shown.moves[m].text);
        }
        ui.weak("— mean, - - max");
    });
    if let (Some(lead), Some(best)) = (lead_layer(shown, scoring), best_move(shown, scoring)) {
        ui.weak(format!("{} leads from layer {} on (the marked line).", shown.moves[best].text, lead + 1));
    }
    let mut layer = inside.depth_layer.unwrap_or(layers - 1).min(layers - 1) + 1;
    if ui.add(egui::Slider::new(&mut layer, 1..=layers).text("distribution after layer")).changed() {
        let chosen = (layer < layers).then_some(layer - 1);
        send(out, InsideCommand::DepthLayer(chosen));
    }
    let focus =
        inside.query.as_deref().and_then(|q| shown.move_index(q)).or_else(|| best_move(shown, scoring));
    if let Some(m) = focus {
        let d = &shown.moves[m].layers[layer - 1];
        ui.weak(format!(
            "{} after layer {layer}: mean {:.3}, max {:.3}",
            shown.moves[m].text,
            d.mean_value(),
            d.max_value()
        ));
        distribution_chart_ui(ui, d.probs(), 60.0);
    }
}

/// The selected head's multiplier, switch-off and reset, and what the scale changes per move.
fn heads_ui(
    ui: &mut egui::Ui,
    inside: &InsideState,
    view: &InsideView,
    scoring: Scoring,
    out: &mut Vec<Command>,
) {
    let (layer, head) = (inside.layer, inside.head.unwrap_or(0));
    let current = inside.scale.as_ref().and_then(|s| s.get(layer, head)).unwrap_or(1.0);
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("Layer {} head {}", layer + 1, head + 1));
        let mut value = current;
        if ui.add(egui::Slider::new(&mut value, -1.0..=3.0).text("× output")).changed() {
            send(out, InsideCommand::ScaleHead { layer, head, value });
        }
        if ui.button("Switch off").on_hover_text("Multiply this head's output by 0").clicked() {
            send(out, InsideCommand::ScaleHead { layer, head, value: 0.0 });
        }
        if ui.add_enabled(inside.scale.is_some(), egui::Button::new("Reset heads")).clicked() {
            send(out, InsideCommand::ResetHeads);
        }
    });
    let scaled = inside.scaled_heads();
    if scaled.is_empty() {
        ui.weak("Every head as trained. Switch one off to see which moves it holds up.");
        return;
    }
    let list: Vec<String> = scaled.iter().map(|(l, h, v)| format!("L{} H{} ×{v:.2}", l + 1, h + 1)).collect();
    ui.weak(format!("Scaled: {}", list.join(", ")));
    let effects = head_effects(view, scoring);
    if effects.is_empty() {
        return;
    }
    egui::Grid::new("inside_effects").striped(true).num_columns(4).show(ui, |ui| {
        ui.strong("Move");
        ui.strong("trained");
        ui.strong("now");
        ui.strong("Δ");
        ui.end_row();
        for e in effects.iter().take(EFFECT_ROWS) {
            ui.label(&e.text);
            ui.label(format!("{:.3}", e.clean));
            ui.label(format!("{:.3}", e.now));
            let d = e.delta();
            if d.abs() < 0.0005 {
                ui.weak("±0.000");
            } else if d < 0.0 {
                ui.colored_label(ui.visuals().error_fg_color, format!("{d:+.3}"));
            } else {
                ui.colored_label(Color32::from_rgb(90, 170, 90), format!("{d:+.3}"));
            }
            ui.end_row();
        }
    });
    if effects.len() > EFFECT_ROWS {
        ui.weak(format!("and {} more moves", effects.len() - EFFECT_ROWS));
    }
}
