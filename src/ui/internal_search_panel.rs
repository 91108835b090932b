//! The internal-search panel (paper §4): breadth and depth, *Run*, the explicit minimax as a collapsible
//! tree (each move with the model's max and mean value, the backed-up value, the chosen line highlighted)
//! with its trace text, and beside it the model's own trace read back into a tree, its mistakes and where
//! it differs from the explicit search — or one line saying why the model writes none.

use eframe::egui::{self, Color32, RichText};

use crate::app::analysis::ModelStatus;
use crate::app::command::AnalysisCommand;
use crate::app::command::{BoardMove, Command, DocCommand};
use crate::app::state::AppState;
use crate::app::view::ViewCommand;
use crate::game::GameState;
use crate::inference::completer::TraceDecoding;
use crate::search::internal::{InternalReport, ModelSide, ModelTraceReport, TreeNode};
use crate::search::trace_align::{AlignedNode, Mark, Side};

/// Largest breadth offered.
pub const MAX_BREADTH: usize = 8;
/// Largest depth offered (b^d model calls on the last level).
pub const MAX_DEPTH: u32 = 3;

fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", 100.0 * v))
}

/// One node's line: its move, the parent's model values of the move, the backed-up value, the choice.
pub fn node_text(n: &TreeNode) -> String {
    let mut s = match &n.action {
        None => "root".to_owned(),
        Some(a) if n.move_max == n.move_mean => format!("{a}  value {}", percent(n.move_max)),
        Some(a) => format!("{a}  max {} mean {}", percent(n.move_max), percent(n.move_mean)),
    };
    s.push_str(&format!("  backed-up {}", percent(n.value)));
    if let Some(c) = &n.choice {
        s.push_str(&format!("  -> {c}"));
    }
    if let Some(note) = &n.note {
        s.push_str(&format!("  ({note})"));
    }
    s
}

fn chosen_colour(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode { Color32::from_rgb(120, 200, 120) } else { Color32::from_rgb(20, 120, 40) }
}

fn node_ui(ui: &mut egui::Ui, n: &TreeNode, salt: &str) {
    let mut text = RichText::new(node_text(n)).monospace();
    if n.on_chosen_line {
        text = text.strong().color(chosen_colour(ui));
    }
    let issues = |ui: &mut egui::Ui| {
        for i in &n.issues {
            ui.colored_label(ui.visuals().error_fg_color, format!("! {i}"));
        }
    };
    if n.children.is_empty() {
        ui.label(text);
        ui.indent((salt, "issues", &n.path), issues);
        return;
    }
    egui::CollapsingHeader::new(text)
        .id_salt((salt, &n.path))
        .default_open(n.path.is_empty() || n.on_chosen_line)
        .show(ui, |ui| {
            issues(ui);
            for c in &n.children {
                node_ui(ui, c, salt);
            }
        });
}

/// A trace's text (collapsed until opened), the span of the node hovered in the aligned trees (`node`)
/// highlighted.
fn trace_text_ui(ui: &mut egui::Ui, title: &str, text: &str, salt: &str, node: Option<&[String]>) {
    egui::CollapsingHeader::new(title).id_salt((salt, "text")).default_open(false).show(ui, |ui| {
        egui::ScrollArea::both().id_salt((salt, "scroll")).max_height(240.0).show(ui, |ui| {
            let span = node.and_then(|p| crate::mav::trace::node_span(text, p));
            let Some(span) = span else {
                ui.add(egui::Label::new(RichText::new(text).monospace().small()).extend());
                return;
            };
            let font = egui::TextStyle::Small.resolve(ui.style());
            let font = egui::FontId::monospace(font.size);
            let plain = egui::TextFormat {
                font_id: font.clone(),
                color: ui.visuals().text_color(),
                ..Default::default()
            };
            let lit = egui::TextFormat {
                background: ui.visuals().selection.bg_fill,
                color: ui.visuals().strong_text_color(),
                ..plain.clone()
            };
            let mut job = egui::text::LayoutJob::default();
            job.append(&text[..span.start], 0.0, plain.clone());
            job.append(&text[span.clone()], 0.0, lit);
            job.append(&text[span.end..], 0.0, plain);
            let r = ui.add(egui::Label::new(job).extend());
            // Bring the highlighted node into view.
            let lines_before = text[..span.start].matches('\n').count() as f32;
            let total = text.matches('\n').count().max(1) as f32;
            let y = r.rect.top() + r.rect.height() * lines_before / total;
            ui.scroll_to_rect(
                egui::Rect::from_min_size(egui::pos2(r.rect.left(), y), egui::vec2(1.0, 20.0)),
                None,
            );
        });
    });
}

fn explicit_ui(ui: &mut egui::Ui, r: &InternalReport, node: Option<&[String]>) {
    ui.label(RichText::new("Explicit minimax").strong());
    ui.label(format!(
        "Plays {} ({} for the side to move), line {}; {} model calls",
        r.explicit.choice.as_deref().unwrap_or("nothing"),
        percent(r.explicit.value),
        r.explicit.tree.chosen_line().join(" "),
        r.explicit.model_calls
    ));
    node_ui(ui, &r.explicit.tree, "internal_explicit");
    trace_text_ui(ui, "Trace text (what the model imitates)", &r.explicit.trace, "internal_explicit", node);
}

fn model_trace_ui(ui: &mut egui::Ui, m: &ModelTraceReport, node: Option<&[String]>) {
    ui.label(RichText::new("The model's own trace").strong());
    let how = match m.decoding {
        TraceDecoding::Free => "Free decoding: every move and state is the model's",
        TraceDecoding::Rules => {
            "Rules decoding: moves legal and states by the rules; values and choices the model's"
        }
    };
    ui.weak(how).on_hover_text(m.decoding.describe());
    if let Some(c) = &m.comparison {
        let text = format!(
            "Plays {}{}",
            c.model_choice.as_deref().unwrap_or("nothing"),
            if c.same_choice { " (the same move)" } else { " (a different move)" }
        );
        ui.label(text);
    }
    if m.truncated {
        let cut = if m.decoding == TraceDecoding::Rules { " (cut at the last node boundary)" } else { "" };
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("Ran out of context after {} tokens{cut}", m.tokens),
        );
    }
    if m.repeats_avoided > 0 {
        ui.label(format!(
            "Decoding kept the model from listing a move twice on one line {} time(s)",
            m.repeats_avoided
        ))
        .on_hover_text("Greedy decoding with one guard: a move already in a list is not written again there");
    }
    if let Some(e) = &m.parse_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("The trace cannot be read: {e}"));
    }
    if let Some(t) = &m.tree {
        node_ui(ui, t, "internal_model");
    }
    ui.label(format!("{} issue(s)", m.issues.len()));
    if let Some(c) = &m.comparison
        && !c.differences.is_empty()
    {
        egui::CollapsingHeader::new(format!("Differs from the explicit search ({})", c.differences.len()))
            .id_salt("internal_differences")
            .default_open(true)
            .show(ui, |ui| {
                for d in &c.differences {
                    ui.label(d);
                }
            });
    }
    trace_text_ui(ui, "Text the model wrote", &m.written, "internal_model", node);
}

/// What a hovered or clicked row of the aligned trees asks for.
#[derive(Debug, Default)]
pub struct LineInput {
    /// The line under the pointer (moves from the root), if any.
    pub hovered: Option<Vec<String>>,
    /// The line clicked, to be played from the board position.
    pub clicked: Option<Vec<String>>,
    /// The node under the pointer (its path, the root's empty), whatever the position: its lines are
    /// highlighted in the trace texts.
    pub node: Option<Vec<String>>,
}

fn side_text(s: Option<&Side>) -> String {
    match s {
        None => "—".to_owned(),
        Some(s) => match &s.choice {
            Some(c) => format!("{} → {c}", percent(s.value)),
            None => percent(s.value),
        },
    }
}

/// The two trees aligned node by node: one row per node, each side's backed-up value and choice (green on
/// its chosen line), and where they part. Rows can be hovered (their line) and clicked when `playable`
/// (the report is for the board position).
fn aligned_ui(ui: &mut egui::Ui, a: &AlignedNode, playable: bool, input: &mut LineInput) {
    let marks = a.mark_count();
    let title = format!("Aligned trees: {} node(s), {marks} place(s) where they part", a.rows().len());
    let header = egui::CollapsingHeader::new(RichText::new(title).strong()).id_salt("internal_aligned");
    header.default_open(true).show(ui, |ui| {
        egui::ScrollArea::horizontal().id_salt("internal_aligned_scroll").show(ui, |ui| {
            let grid = egui::Grid::new("internal_aligned_grid").num_columns(3).striped(true);
            grid.spacing([10.0, 2.0]).show(ui, |ui| {
                for (h, hint) in [
                    ("Node", "Each node of either tree, and where the trees part there (hover for the words); hover a move to preview its line, click to play it"),
                    ("Search", "The explicit minimax: backed-up value → its choice"),
                    ("Model", "The model's trace: backed-up value → its choice"),
                ] {
                    ui.strong(h).on_hover_text(hint);
                }
                ui.end_row();
                for (depth, n) in a.rows() {
                    aligned_row_ui(ui, depth, n, playable, input);
                    ui.end_row();
                }
            });
        });
    });
}

fn aligned_row_ui(ui: &mut egui::Ui, depth: usize, n: &AlignedNode, playable: bool, input: &mut LineInput) {
    let name = n.action().map_or("root".to_owned(), str::to_owned);
    let indent = "  ".repeat(depth);
    ui.vertical(|ui| {
        let text = RichText::new(format!("{indent}{name}")).monospace();
        let r = if playable && !n.path.is_empty() {
            ui.add(egui::Button::new(text).frame(false))
                .on_hover_text("The board previews this line; click to play it")
        } else {
            ui.label(text)
        };
        if r.hovered() {
            input.node = Some(n.path.clone());
            if playable && !n.path.is_empty() {
                input.hovered = Some(n.path.clone());
            }
        }
        if r.clicked() {
            input.clicked = Some(n.path.clone());
        }
        if !n.marks.is_empty() {
            let tags: Vec<String> = n.marks.iter().map(Mark::tag).collect();
            let words: Vec<String> = n.marks.iter().map(Mark::describe).collect();
            let tag = RichText::new(format!("{indent}{}", tags.join(", ")))
                .small()
                .color(ui.visuals().warn_fg_color);
            ui.add(egui::Label::new(tag).extend()).on_hover_text(words.join("\n"));
        }
    });
    for side in [n.explicit.as_ref(), n.model.as_ref()] {
        let mut t = RichText::new(side_text(side)).monospace();
        if side.is_some_and(|s| s.on_chosen_line) {
            t = t.color(chosen_colour(ui));
        }
        ui.label(t);
    }
}

fn report_ui(ui: &mut egui::Ui, position: &str, r: &InternalReport, input: &mut LineInput) {
    if r.root != position {
        ui.weak(format!("For another position: {}", r.root));
    }
    match &r.model {
        ModelSide::Written(m) => {
            if let Some(c) = &m.comparison {
                ui.label(format!(
                    "The search plays {}, the model plays {}{}",
                    c.explicit_choice.as_deref().unwrap_or("nothing"),
                    c.model_choice.as_deref().unwrap_or("nothing"),
                    if c.same_choice { " (the same move)" } else { "" }
                ));
            }
            if let Some(a) = &m.aligned {
                aligned_ui(ui, a, r.root == position, input);
            }
            ui.columns(2, |cols| {
                let node = input.node.as_deref();
                explicit_ui(&mut cols[0], r, node);
                model_trace_ui(&mut cols[1], m, node);
            });
        }
        ModelSide::Unsupported { why } => {
            explicit_ui(ui, r, None);
            ui.add(egui::Label::new(RichText::new(format!("No model trace: {why}.")).weak()).wrap());
        }
        ModelSide::Failed { why } => {
            explicit_ui(ui, r, None);
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("The model could not write its trace: {why}"),
            );
        }
    }
}

/// Breadth, depth, the trace's decoding and *Run* (enabled when `ready` and not `running`); what was asked
/// for when *Run* was clicked. `salt` keeps the two boards' settings apart.
pub fn internal_controls_ui(
    ui: &mut egui::Ui,
    salt: &str,
    ready: bool,
    running: bool,
) -> Option<(usize, u32, TraceDecoding)> {
    let mut asked = None;
    let id = ui.make_persistent_id(("internal_search_bd", salt));
    let (mut breadth, mut depth, mut decoding) =
        ui.data_mut(|d| *d.get_temp_mut_or(id, (2usize, 1u32, TraceDecoding::Free)));
    ui.horizontal(|ui| {
        let label = ui.label("Breadth").on_hover_text("b: the best moves expanded at each node");
        ui.add(egui::DragValue::new(&mut breadth).range(1..=MAX_BREADTH)).labelled_by(label.id);
        let label =
            ui.label("Depth").on_hover_text("d: plies expanded below the position (0 = the model alone)");
        ui.add(egui::DragValue::new(&mut depth).range(0..=MAX_DEPTH)).labelled_by(label.id);
        let run = ui
            .add_enabled(ready && !running, egui::Button::new("Run"))
            .on_hover_text("Minimax over the model from the board position (paper §4)");
        if run.clicked() {
            asked = Some((breadth, depth, decoding));
        }
        if running {
            ui.spinner();
            ui.label("Searching...");
        }
    });
    ui.horizontal(|ui| {
        ui.label("Model's trace").on_hover_text("How a trace-writing model writes its own trace");
        for d in TraceDecoding::ALL {
            let text = match d {
                TraceDecoding::Free => "Free decoding",
                TraceDecoding::Rules => "Rules decoding",
            };
            ui.selectable_value(&mut decoding, d, text).on_hover_text(d.describe());
        }
    });
    ui.data_mut(|d| d.insert_temp(id, (breadth, depth, decoding)));
    asked
}

/// The last run's report for the board at `position` (its text), its error, or what a run does; the
/// aligned trees' rows hovered or clicked go to `input`.
pub fn internal_result_ui(
    ui: &mut egui::Ui,
    position: &str,
    result: Option<&Result<InternalReport, crate::app::game_link::LinkError>>,
    input: &mut LineInput,
) {
    match result {
        None => {
            ui.weak(
                "Run minimax over the model: each node is one model call, b moves expanded, d plies deep.",
            );
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
        }
        Some(Ok(r)) => report_ui(ui, position, r, input),
    }
}

/// The panel: controls, then the last report.
pub fn internal_search_panel_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let internal = &state.analysis.internal;
    let ready = matches!(state.analysis.model, ModelStatus::Ready(_));
    let mut out = Vec::new();
    if let Some((breadth, depth, decoding)) = internal_controls_ui(ui, "chess", ready, internal.running) {
        out.push(Command::Analysis(AnalysisCommand::RunInternalSearch { breadth, depth, decoding }));
    }
    let mut input = LineInput::default();
    internal_result_ui(ui, &state.current().to_text(), internal.result.as_ref(), &mut input);
    line_commands(input, state.view.pv_hover.as_ref(), &mut out);
    out
}

/// The commands for what the aligned trees' rows asked: play the clicked line (move by move from the board
/// position), preview the hovered one (or end this panel's preview when nothing is hovered).
pub fn line_commands(
    input: LineInput,
    current: Option<&crate::app::pv_preview::PvHover>,
    out: &mut Vec<Command>,
) {
    if let Some(line) = input.clicked {
        out.push(Command::View(ViewCommand::PreviewLine(None)));
        for m in line {
            out.push(Command::Doc(DocCommand::PlayMove(BoardMove::Notation(m))));
        }
        return;
    }
    let mine = current.and_then(|h| h.line.clone());
    if input.hovered != mine {
        out.push(Command::View(ViewCommand::PreviewLine(input.hovered)));
    }
}
