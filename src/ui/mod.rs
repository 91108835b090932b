//! Panels (egui). Each `*_ui` function reads the app state and returns [`Command`]s; none of them
//! changes the state directly.

pub mod analysis_panel;
pub mod arrows;
pub mod board;
pub mod board_game_panel;
pub mod connect_four_board;
pub mod dialogs;
pub mod distribution;
pub mod eval_graph;
pub mod heatmap_gpu;
pub mod hex_board;
pub mod inside_panel;
pub mod internal_search_panel;
pub mod journal_dialog;
pub mod menu;
pub mod model_panel;
pub mod move_input;
pub mod move_tree;
pub mod moves_panel;
pub mod panes;
pub mod pieces;
pub mod play;
pub mod search_panel;
pub mod sections;
pub mod setup_panel;
pub mod shortcuts;
pub mod status_bar;
pub mod toasts;
pub mod tree_explorer;
pub mod uci_panel;
pub mod unsaved_dialog;
pub mod values_panel;
pub mod wdl_bar;

use eframe::egui;

use crate::app::command::Command;
use crate::app::command::{AnalysisCommand, BoardMove, DocCommand, ViewCommand};
use crate::app::line::MoveHistory;
use crate::app::state::AppState;
use arrows::{Arrow, ArrowStyle, move_squares};
use board::{BoardInteraction, BoardOutput, BoardView, board_ui};
use pieces::PieceTextures;

/// State that belongs to the widgets only: text being typed, the board interaction, cached textures.
#[derive(Default)]
pub struct UiState {
    /// Selection, drag and promotion on the board.
    pub board: BoardInteraction,
    /// Rasterized pieces.
    pub pieces: PieceTextures,
    /// The FEN field of the setup panel.
    pub fen_input: String,
    /// The Chess960 number field.
    pub chess960_input: String,
    /// The text of the paste dialog.
    pub paste_input: String,
    /// The path field of the open/save-by-path dialog.
    pub path_input: String,
    /// The dialog shown last frame (to reset its fields when another one opens).
    pub shown_dialog: Option<crate::app::state::Dialog>,
    /// The game list's filter.
    pub game_filter: String,
    /// The comment being edited.
    pub comment_input: String,
    /// Arrows supplied by analysis panels (candidate moves); drawn with the played move.
    pub candidate_arrows: Vec<Arrow>,
    /// The FEN the board drew last frame (the game's position, or a previewed PV's end).
    pub shown_position: Option<String>,
    /// The analysis panel's tabs and panes.
    pub panes: panes::Panes,
}

/// The arrows to draw: the next move of the line (when looking back at a played game) in the played
/// style, then the candidates.
pub fn board_arrows(state: &AppState, candidates: &[Arrow]) -> Vec<Arrow> {
    let mut arrows = Vec::new();
    if let Some(next) = state.doc.line.moves().get(state.doc.line.cursor())
        && let Some((from, to)) = move_squares(next.mv, state.current().castling_mode())
    {
        arrows.push(Arrow { from, to, win_probability: None, weight: 1.0, style: ArrowStyle::Played });
    }
    arrows.extend_from_slice(candidates);
    arrows
}

/// The marker over the board's top edge while a PV is previewed.
fn pv_preview_marker(ctx: &egui::Context, board: egui::Rect, line: &str) {
    egui::Area::new(egui::Id::unique("mavboard_pv_preview"))
        .fixed_pos(board.left_top() + egui::vec2(8.0, 8.0))
        .order(egui::Order::Foreground)
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(board.width() - 32.0);
                let color = ui.visuals().warn_fg_color;
                ui.label(egui::RichText::new(format!("Preview: {line}")).strong().color(color));
                ui.weak("The game is unchanged; move the pointer away to return.");
            });
        });
}

/// The whole window: menu, status bar, side panels, the board, messages and dialogs.
pub fn root_ui(ui: &mut egui::Ui, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = shortcuts::shortcuts_ui(ui.ctx());
    egui::Panel::top("menu_bar").show(ui, |ui| out.extend(menu::menu_bar_ui(ui, state)));
    if state.play.game.is_some() {
        egui::Panel::top("play_bar").show(ui, |ui| out.extend(play::play_bar_ui(ui, state)));
    }
    egui::Panel::bottom("status_bar").show(ui, |ui| out.extend(status_bar::status_bar_ui(ui, state)));
    if let Some(game) = &state.doc.board_game {
        // Connect Four or Hex: the chess-only keys (search, flip) do nothing here.
        out.retain(|c| {
            !matches!(c, Command::Analysis(AnalysisCommand::ToggleSearch) | Command::View(ViewCommand::Flip))
        });
        egui::Panel::right("board_game_panel")
            .resizable(true)
            .default_size(330.0)
            .min_size(240.0)
            .show(ui, |ui| out.extend(board_game_panel::board_game_panel_ui(ui, state, game)));
        egui::CentralPanel::default().show(ui, |ui| {
            out.extend(board_game_panel::board_game_board_ui(ui, state, game));
        });
        out.extend(windows_ui(ui.ctx(), state, ui_state));
        return out;
    }
    if state.settings.show_setup_panel {
        egui::Panel::left("setup_panel")
            .resizable(true)
            .default_size(220.0)
            .min_size(180.0)
            .show(ui, |ui| out.extend(setup_panel::setup_panel_ui(ui, state, ui_state)));
    }
    if state.settings.show_analysis_panel {
        egui::Panel::right("analysis_panel")
            .resizable(true)
            .default_size(370.0)
            .min_size(260.0)
            .show(ui, |ui| out.extend(analysis_panel::analysis_panel_ui(ui, state, &mut ui_state.panes)));
    }
    if state.settings.show_moves_panel {
        egui::Panel::right("moves_panel")
            .resizable(true)
            .default_size(200.0)
            .min_size(150.0)
            .show(ui, |ui| out.extend(moves_panel::moves_panel_ui(ui, state)));
    }
    egui::CentralPanel::default().show(ui, |ui| out.extend(chess_board_ui(ui, state, ui_state)));
    if ui.ctx().input(|i| !i.raw.hovered_files.is_empty()) {
        egui::Area::new(egui::Id::unique("mavboard_drop_hint"))
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .order(egui::Order::Foreground)
            .show(ui.ctx(), |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| ui.heading("Drop a .pgn file to open it"));
            });
    }
    out.extend(windows_ui(ui.ctx(), state, ui_state));
    out
}

/// What floats over every game's screen: the messages' toasts and the dialogs.
fn windows_ui(ctx: &egui::Context, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = toasts::toasts_ui(ctx, &state.view);
    out.extend(dialogs::dialogs_ui(ctx, state, ui_state));
    out.extend(unsaved_dialog::unsaved_dialog_ui(ctx, state));
    out.extend(journal_dialog::journal_dialog_ui(ctx, state));
    out
}

/// The chess board in the middle: the position (or a previewed line), its arrows and the *Inside* heat,
/// and the move the user made on it.
fn chess_board_ui(ui: &mut egui::Ui, state: &AppState, ui_state: &mut UiState) -> Vec<Command> {
    let mut out = Vec::new();
    if let Some(e) = ui_state.pieces.error() {
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!("Piece images could not be drawn ({e}); showing letters."),
        );
    }
    let mut candidates = ui_state.candidate_arrows.clone();
    if state.settings.show_analysis_panel {
        candidates.extend(analysis_panel::analysis_arrows(state));
    }
    let preview = state
        .settings
        .show_analysis_panel
        .then(|| {
            crate::app::pv_preview::current_preview(
                state.view.pv_hover.as_ref(),
                state.current(),
                state.analysis.report.as_ref().map(|r| &r.snapshot),
            )
        })
        .flatten();
    let arrows = if preview.is_some() { Vec::new() } else { board_arrows(state, &candidates) };
    let heat = if preview.is_some() { Vec::new() } else { inside_panel::board_heat(state) };
    let view = BoardView {
        heat: &heat,
        state: preview.as_ref().map_or(state.current(), |p| &p.after),
        flipped: state.settings.flipped,
        last_move: preview
            .as_ref()
            .map_or(state.doc.line.last_move().map(|m| m.mv), |p| p.moves.last().copied()),
        arrows: &arrows,
        show_coordinates: state.settings.show_coordinates,
        show_legal_moves: state.settings.show_legal_moves,
    };
    ui_state.shown_position = Some(view.state.fen());
    match board_ui(ui, &view, &mut ui_state.board, &mut ui_state.pieces) {
        // A previewed line is only looked at: moves go to the game's own position.
        _ if preview.is_some() => {}
        Some(BoardOutput::Move(mv)) => out.push(Command::Doc(DocCommand::PlayMove(BoardMove::Chess(mv)))),
        Some(BoardOutput::Rejected(attempt)) => out.push(Command::Doc(DocCommand::RejectMove { attempt })),
        None => {}
    }
    if let (Some(p), Some(rect)) = (&preview, ui_state.board.last_rect()) {
        pv_preview_marker(ui.ctx(), rect, &p.text);
    }
    out
}
