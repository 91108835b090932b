//! The eval graph: White's win probability over the line the board follows, by mean and by max scoring,
//! from the model's values of each position; click to jump. Below it, the moves that lost the most by
//! Lichess's thresholds, per player.

use eframe::egui::{self, Pos2, Sense, Stroke, Vec2};

use crate::app::command::{AnalysisCommand, DocCommand};
use crate::app::command::{Command, Navigate};
use crate::app::game_review::{ReviewedGame, for_doc};
use crate::app::line::MoveHistory;
use crate::app::position_evals::PositionEval;
use crate::app::state::AppState;
use crate::app::uci_review::{ReviewSettings, Reviewer};
use crate::game::chess::ChessState;
use crate::game::{GameState, Outcome, Player};
use crate::mav::scoring::Scoring;
use crate::review::classify::Classification;

/// One position of the line as the graph sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphPoint {
    /// White's win probability under the chosen scoring and the compared rule
    /// ([`crate::app::settings::Settings::scoring_rules`]); `None`: not evaluated yet.
    pub values: [Option<f64>; 2],
}

/// A move that lost win probability, for the mistakes list.
#[derive(Debug, Clone, PartialEq)]
pub struct Mistake {
    /// The move's node (click target).
    pub node: crate::pgn::NodeId,
    /// The line index after the move, when the move is on the line the board follows (graph marker).
    pub index: Option<usize>,
    /// Move number and SAN, e.g. `12...Nf6`.
    pub label: String,
    /// Who played it.
    pub player: Player,
    /// The win probability it lost (0..1 scale).
    pub loss: f64,
    /// Its class.
    pub class: Classification,
}

fn white_value(state: &ChessState, eval: Option<&PositionEval>, scoring: Scoring) -> Option<f64> {
    if let Some(outcome) = state.outcome() {
        return Some(match outcome {
            Outcome::Win { winner: Player::First, .. } => 1.0,
            Outcome::Win { .. } => 0.0,
            Outcome::Draw { .. } => 0.5,
        });
    }
    let v = eval?.value(scoring);
    Some(if state.to_move() == Player::First { v } else { 1.0 - v })
}

/// The positions of the line with their values for White, start first.
pub fn graph_points(state: &AppState) -> (Vec<ChessState>, Vec<GraphPoint>) {
    let line = &state.doc.line;
    let mut positions = vec![line.start().clone()];
    for m in line.moves() {
        let Some(last) = positions.last() else { break };
        match last.play(m.mv) {
            Ok(next) => positions.push(next),
            Err(_) => break,
        }
    }
    let evals = &state.analysis.evals;
    let rules = state.settings.scoring_rules();
    let points = positions
        .iter()
        .map(|p| {
            let e = evals.get(&p.to_text());
            GraphPoint { values: rules.map(|r| white_value(p, e, r)) }
        })
        .collect();
    (positions, points)
}

/// The moves the review classified as inaccuracies, mistakes or blunders (the same review as
/// `mavboard annotate`: the played move's value against the best move's, both from the position before).
pub fn mistakes(doc: &crate::app::document::Document, reviewed: &ReviewedGame) -> Vec<Mistake> {
    let line = doc.line.line_nodes();
    reviewed
        .review
        .moves
        .iter()
        .filter(|m| m.classification != Classification::Good)
        .map(|m| Mistake {
            node: m.node,
            index: line.iter().position(|&n| n == m.node).map(|i| i + 1),
            label: format!("{}{}{}", m.move_number, if m.white { ". " } else { "... " }, m.san),
            player: if m.white { Player::First } else { Player::Second },
            loss: m.loss,
            class: m.classification,
        })
        .collect()
}

/// Who judges the review: the model, or the UCI engine to a depth.
fn reviewer_ui(ui: &mut egui::Ui, settings: ReviewSettings) -> Option<Command> {
    let mut s = settings;
    let label = ui.label("by").on_hover_text("Who judges the moves");
    egui::ComboBox::from_id_salt("reviewer")
        .selected_text(match s.reviewer {
            Reviewer::Model => "the model",
            Reviewer::Uci => "a UCI engine",
        })
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut s.reviewer, Reviewer::Model, "the model");
            ui.selectable_value(&mut s.reviewer, Reviewer::Uci, "a UCI engine");
        })
        .response
        .labelled_by(label.id);
    if s.reviewer == Reviewer::Uci {
        ui.add(egui::DragValue::new(&mut s.depth).range(1..=40).prefix("depth ")).on_hover_text(
            "The engine's search depth per position (Stockfish at depth 10 takes about 0.1 s a position)",
        );
    }
    (s != settings).then_some(Command::Analysis(AnalysisCommand::SetReviewSettings(s)))
}

/// Who judged a review and whose view is beside it, in words: (the judge, the view beside).
fn judge_and_beside(reviewed: &ReviewedGame) -> (&'static str, String) {
    match &reviewed.beside {
        Some(name) => ("the model", format!("model B ({name})")),
        None => ("the judge", "the model".to_owned()),
    }
}

/// The moves a UCI-judged review says the model would have judged differently (or, beside the model's
/// judgement, model B), with the two classes.
pub fn disagreements(reviewed: &ReviewedGame) -> Vec<(crate::pgn::NodeId, String, String)> {
    let (judge, beside) = judge_and_beside(reviewed);
    reviewed
        .review
        .moves
        .iter()
        .filter_map(|m| {
            let view = m.model.as_ref().filter(|v| v.disagrees)?;
            let label = format!("{}{}{}", m.move_number, if m.white { ". " } else { "... " }, m.san);
            let why = format!(
                "{}: {}; {beside}: {} (it ranks the played move {} of {}, its favourite {})",
                capitalised(judge),
                m.classification.word().unwrap_or("good"),
                view.classification.word().unwrap_or("good"),
                view.played_rank,
                view.moves,
                view.favourite_san
            );
            Some((m.node, label, why))
        })
        .collect()
}

/// `text` with its first letter in capitals.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The colour of a review class (Lichess's: yellow, orange, red).
pub fn class_colour(class: Classification) -> egui::Color32 {
    match class {
        Classification::Blunder => egui::Color32::from_rgb(220, 60, 50),
        Classification::Mistake => egui::Color32::from_rgb(230, 140, 40),
        _ => egui::Color32::from_rgb(220, 200, 60),
    }
}

/// The eval graph with its review button and mistakes list.
pub fn eval_graph_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let (_, points) = graph_points(state);
    out.extend(review_bar_ui(ui, state, &points));
    let reviewed = for_doc(state.analysis.game_review.as_ref(), state.doc.line.stamp());
    if let Some(r) = reviewed {
        out.extend(review_summary_ui(ui, r));
    }
    let list = reviewed.map(|r| mistakes(&state.doc, r)).unwrap_or_default();
    out.extend(graph_ui(ui, state, &points, &list));
    out.extend(mistake_lists_ui(ui, &list));
    out
}

/// *Review game* (or its progress), the reviewer and how many positions the model has valued.
fn review_bar_ui(ui: &mut egui::Ui, state: &AppState, points: &[GraphPoint]) -> Vec<Command> {
    let mut out = Vec::new();
    let known = points.iter().filter(|p| p.values[0].is_some()).count();
    ui.horizontal(|ui| {
        match state.analysis.reviewing {
            Some((done, total)) => {
                ui.add(
                    egui::ProgressBar::new(done as f32 / total.max(1) as f32)
                        .desired_width(110.0)
                        .text(format!("{done}/{total}")),
                );
            }
            None => {
                let by_uci = state.settings.review.reviewer == Reviewer::Uci;
                let hover = if by_uci {
                    "Judge every move with the UCI engine (the engine panel's), the model's view beside it"
                } else if state.compare.is_open() {
                    "Evaluate every position of this line with the model, model B's view beside it"
                } else {
                    "Evaluate every position of this line with the model"
                };
                if ui.button("Review game").on_hover_text(hover).clicked() {
                    out.push(Command::Analysis(AnalysisCommand::ReviewLine));
                }
                out.extend(reviewer_ui(ui, state.settings.review));
            }
        }
        ui.weak(format!("{known}/{}", points.len())).on_hover_text("positions the model has valued");
    });
    out
}

/// The finished review: accuracy, *Annotate game*, and where the model disagrees with the engine.
fn review_summary_ui(ui: &mut egui::Ui, r: &ReviewedGame) -> Vec<Command> {
    let mut out = Vec::new();
    ui.horizontal_wrapped(|ui| {
        let acc = |a: Option<f64>| a.map_or("–".to_owned(), |a| format!("{a:.0}%"));
        ui.label(format!(
            "Accuracy: White {} · Black {}",
            acc(r.review.white.accuracy),
            acc(r.review.black.accuracy)
        ))
        .on_hover_text(format!("{} (Lichess's accuracy formula)", r.review.method));
        let write = ui
            .add_enabled(!r.annotated, egui::Button::new("Annotate game"))
            .on_hover_text("Write [%eval], ?!/?/?? and the best moves into the game (then save it)");
        if write.clicked() {
            out.push(Command::Doc(DocCommand::AnnotateGame));
        }
    });
    if r.review.moves.iter().any(|m| m.model.is_some()) {
        let differ = disagreements(r);
        let (judge, beside) = judge_and_beside(r);
        ui.horizontal_wrapped(|ui| {
            let who =
                r.beside.as_ref().map_or_else(|| "Model".to_owned(), |name| format!("Model B ({name})"));
            ui.strong(format!("{who} disagrees ({} of {}):", differ.len(), r.review.moves.len()))
                .on_hover_text(format!("Moves {beside} would have classed differently from {judge}"));
            for (node, label, why) in differ {
                if ui.link(label).on_hover_text(why).clicked() {
                    out.push(Command::Doc(DocCommand::SelectNode(node)));
                }
            }
        });
    }
    out
}

/// The graph: the value of every position of the line under the chosen and the compared rule, the cursor and the mistakes; a click
/// goes to that position.
fn graph_ui(ui: &mut egui::Ui, state: &AppState, points: &[GraphPoint], list: &[Mistake]) -> Vec<Command> {
    let mut out = Vec::new();
    let rules = state.settings.scoring_rules();
    let width = ui.available_width().max(160.0);
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, 110.0), Sense::click());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    let mid = rect.center().y;
    painter.line_segment(
        [Pos2::new(rect.left(), mid), Pos2::new(rect.right(), mid)],
        Stroke::new(0.5, visuals.weak_text_color()),
    );
    let n = points.len().max(2) - 1;
    let x_of = |i: usize| rect.left() + rect.width() * i as f32 / n as f32;
    let y_of = |v: f64| rect.bottom() - rect.height() * v as f32;
    let cursor_x = x_of(state.doc.line.cursor());
    painter.line_segment(
        [Pos2::new(cursor_x, rect.top()), Pos2::new(cursor_x, rect.bottom())],
        Stroke::new(1.0, visuals.selection.bg_fill),
    );
    // The chosen rule blue and thicker, the compared one amber.
    for (pick, colour, width) in
        [(0, egui::Color32::from_rgb(90, 170, 250), 2.0), (1, egui::Color32::from_rgb(240, 170, 60), 1.0)]
    {
        let mut run: Vec<Pos2> = Vec::new();
        for (i, p) in points.iter().enumerate() {
            match p.values[pick] {
                Some(v) => run.push(Pos2::new(x_of(i), y_of(v))),
                None => {
                    if run.len() > 1 {
                        painter.add(egui::Shape::line(std::mem::take(&mut run), Stroke::new(width, colour)));
                    }
                    run.clear();
                }
            }
        }
        if run.len() > 1 {
            painter.add(egui::Shape::line(run, Stroke::new(width, colour)));
        }
    }
    let font = egui::FontId::proportional(10.0);
    painter.text(
        rect.left_top() + Vec2::new(3.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("White 100% · {} blue, {} amber", rules[0], rules[1]),
        font.clone(),
        visuals.weak_text_color(),
    );
    for m in list {
        let Some(index) = m.index else { continue };
        let y = points.get(index).and_then(|p| p.values[0]).map_or(mid, y_of);
        painter.circle_filled(Pos2::new(x_of(index), y), 3.0, class_colour(m.class));
    }
    if response.clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let i = (((pos.x - rect.left()) / rect.width()) * n as f32).round().max(0.0) as usize;
        out.push(Command::Doc(DocCommand::Navigate(Navigate::To(i.min(points.len() - 1)))));
    }
    out
}

/// Each player's inaccuracies, mistakes and blunders as links to the move.
fn mistake_lists_ui(ui: &mut egui::Ui, list: &[Mistake]) -> Vec<Command> {
    let mut out = Vec::new();
    for (player, name) in [(Player::First, "White"), (Player::Second, "Black")] {
        let theirs: Vec<&Mistake> = list.iter().filter(|m| m.player == player).collect();
        if theirs.is_empty() {
            continue;
        }
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("{name}:"));
            for m in theirs {
                let r = ui.link(&m.label).on_hover_text(format!(
                    "{}: −{:.0}% win probability",
                    m.class.word().unwrap_or(""),
                    m.loss * 100.0
                ));
                if r.clicked() {
                    out.push(Command::Doc(DocCommand::SelectNode(m.node)));
                }
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::command::Command as C;
    use crate::app::settings::Settings;

    #[test]
    fn the_review_lists_mistakes_per_player_with_their_nodes() {
        use crate::app::game_review::PendingReview;
        use crate::inference::evaluator::{Evaluator, Scoring};
        use crate::search::mock::MaterialEvaluator;
        let mut state = AppState::new(Settings::default());
        state.apply(C::Doc(crate::app::command::DocCommand::LoadPasted(
            "1. e4 d5 2. Qg4 Nf6 3. Qxc8 Qxc8 *".into(),
        )));
        let mut pending =
            PendingReview::new(state.doc.line.tree().clone(), state.doc.line.stamp(), 0).expect("requests");
        let mut evaluator = MaterialEvaluator::new(3);
        for (tag, requests) in pending.chunks() {
            pending.accept(tag, evaluator.evaluate(&requests));
        }
        let reviewed = pending.finish(Scoring::Mean).expect("finished").expect("reviewed");
        let list = mistakes(&state.doc, &reviewed);
        let nf6 = list.iter().find(|m| m.label == "2... Nf6").expect("2... Nf6 is listed");
        assert_eq!(nf6.class, Classification::Blunder);
        assert_eq!(nf6.player, Player::Second);
        // On the line the board follows: the position after it is the 4th of the line.
        assert_eq!(nf6.index, Some(4));
        assert_eq!(Some(nf6.node), state.doc.line.line_nodes().get(3).copied());
        assert!(list.iter().all(|m| m.class != Classification::Good));
    }
}
