//! The status bar: side to move or result, variant, file, and the latest note.

use std::time::SystemTime;

use eframe::egui;

use crate::app::analysis::ModelStatus;
use crate::app::command::AnalysisCommand;
use crate::app::command::Command;
use crate::app::server_health::ServerHealth;
use crate::app::state::AppState;
use crate::game::{GameKind, GameState, Outcome, Player};

/// Describes the game state at the board position, e.g. `White to move` or `checkmate: Black wins`.
pub fn position_summary(state: &crate::game::chess::ChessState) -> String {
    let side = |p: Player| if p == Player::First { "White" } else { "Black" };
    match state.outcome() {
        Some(Outcome::Win { winner, reason }) => format!("{}: {} wins", reason.words(), side(winner)),
        Some(Outcome::Draw { reason }) => format!("Draw by {}", reason.words()),
        None => format!("{} to move", side(state.to_move())),
    }
}

/// The status bar.
pub fn status_bar_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    ui.horizontal(|ui| {
        if let Some(game) = &state.doc.board_game {
            board_game_status_ui(ui, state, game);
            return;
        }
        let current = state.current();
        ui.strong(position_summary(current));
        ui.separator();
        ui.label(match current.kind() {
            GameKind::Chess => "Chess",
            GameKind::Chess960 => "Chess960",
            GameKind::ConnectFour => "Connect Four",
            GameKind::Hex => "Hex",
        });
        ui.separator();
        ui.label(format!("Scoring: {}", state.settings.scoring));
        ui.separator();
        out.extend(model_status_ui(ui, &state.analysis));
        if state.analysis.searching {
            ui.separator();
            let done = state.analysis.report.as_ref().map_or(0, |r| r.simulations);
            let budget = state.settings.search.simulations;
            if budget > 0 {
                ui.add(
                    egui::ProgressBar::new((done as f32 / budget as f32).min(1.0))
                        .desired_width(120.0)
                        .text(format!("{done}/{budget} sims")),
                );
            } else {
                ui.spinner();
                ui.label(format!("{done} sims"));
            }
        }
        if let Some(text) = plans_text(state) {
            ui.separator();
            ui.label(text).on_hover_text(
                "The moves MAV-MCTS (external search) and internal search chose for this position, side by side",
            );
        }
        files_status_ui(ui, state);
    });
    out
}

/// What the searches run from the board position chose: MAV-MCTS (when it searched, not only valued),
/// the explicit minimax and the model's own trace (internal search), and whether they agree; `None` when
/// neither search has run from this position.
pub fn plans_text(state: &AppState) -> Option<String> {
    let here = state.current().to_text();
    let mcts = state
        .analysis
        .report
        .as_ref()
        .filter(|r| r.snapshot.root == here && r.snapshot.totals.root_visits > 1)
        .and_then(|r| r.snapshot.best.clone());
    let internal = match &state.analysis.internal.result {
        Some(Ok(r)) if r.root == here => Some(r),
        _ => None,
    };
    plans_summary(mcts.as_deref(), internal)
}

/// The words of [`plans_text`] from what each search chose.
pub fn plans_summary(
    mcts: Option<&str>,
    internal: Option<&crate::search::internal::InternalReport>,
) -> Option<String> {
    let mut parts: Vec<(&str, String)> = Vec::new();
    if let Some(m) = mcts {
        parts.push(("MCTS", m.to_owned()));
    }
    if let Some(r) = internal {
        if let Some(c) = &r.explicit.choice {
            parts.push(("minimax", c.clone()));
        }
        if let crate::search::internal::ModelSide::Written(m) = &r.model
            && let Some(c) = m.comparison.as_ref().and_then(|c| c.model_choice.clone())
        {
            parts.push(("model's trace", c));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut text = parts.iter().map(|(who, m)| format!("{who} {m}")).collect::<Vec<_>>().join(" · ");
    if parts.len() > 1 {
        let agree = parts.iter().all(|(_, m)| *m == parts[0].1);
        text.push_str(if agree { " (agree)" } else { " (differ)" });
    }
    Some(text)
}

/// Connect Four or Hex: the game and the solver (the side panel says whose move it is).
fn board_game_status_ui(ui: &mut egui::Ui, state: &AppState, game: &crate::app::board_game::BoardGame) {
    ui.strong(game.choice.label());
    ui.separator();
    match &state.board_analysis.oracle.report {
        _ if !state.settings.show_oracle => ui.label("Solver off"),
        Some(r) if !r.done => {
            ui.spinner();
            ui.label(format!("Solver: {}/{} moves", r.moves.len(), r.legal))
        }
        Some(_) => ui.label("Solver: done"),
        None => ui.label("Solver: starting"),
    };
}

/// The model: its name, the server of a remote package (with *Reconnect*), the device; or that it loads
/// or failed.
fn model_status_ui(ui: &mut egui::Ui, analysis: &crate::app::analysis::AnalysisState) -> Vec<Command> {
    let mut out = Vec::new();
    match &analysis.model {
        ModelStatus::Ready(i) => {
            ui.label(format!("Model: {}", i.name));
            if let Some(server) = &i.served_by {
                if let ServerHealth::Unreachable { error, .. } = &analysis.server {
                    let last = analysis.server.last_good_text(SystemTime::now());
                    ui.colored_label(ui.visuals().error_fg_color, format!("{server}: server unreachable"))
                        .on_hover_text(format!("{error} ({last}). Reconnect loads the package again."));
                } else {
                    ui.label(format!("served by {server}")).on_hover_text(format!(
                        "A remote package: the weights live on the server, {} batches go out at once. If the \
                         server went away, evaluations fail with a message; Reconnect loads the package again.",
                        i.workers
                    ));
                }
                if ui.small_button("Reconnect").clicked() {
                    out.push(Command::Analysis(AnalysisCommand::LoadModel(i.dir.clone())));
                }
            }
            if let Some(d) = &analysis.device {
                let text = format!("on {}", d.provider);
                match &d.notice {
                    // A remote package's notice is about the connection (a token in clear, a vocabulary
                    // left unchecked): said as it is.
                    Some(n) if i.served_by.is_some() => {
                        ui.colored_label(ui.visuals().warn_fg_color, format!("{text}: {n}"));
                    }
                    Some(n) => {
                        ui.colored_label(ui.visuals().warn_fg_color, format!("{text} (fallback)"))
                            .on_hover_text(n.as_str());
                    }
                    None => {
                        ui.label(text);
                    }
                }
            }
        }
        ModelStatus::Loading(i) => {
            ui.spinner();
            ui.label(format!("Loading {}", i.name));
        }
        ModelStatus::Failed(_) => {
            ui.colored_label(ui.visuals().error_fg_color, "No model");
        }
        ModelStatus::None => {}
    }
    out
}

/// The current file, a file being read, a file dialog that is open, and the status note.
fn files_status_ui(ui: &mut egui::Ui, state: &AppState) {
    if let Some(path) = &state.doc.current_file {
        ui.separator();
        ui.label(path.display().to_string());
    }
    if let Some(load) = &state.files.loading {
        ui.separator();
        let name = load
            .path()
            .file_name()
            .map_or_else(|| load.path().display().to_string(), |n| n.to_string_lossy().into_owned());
        ui.add(
            egui::ProgressBar::new(load.fraction())
                .desired_width(140.0)
                .text(format!("{} games", load.games())),
        )
        .on_hover_text(format!("Reading {}", load.path().display()));
        ui.label(format!("Opening {name}..."));
    }
    if state.files.file_dialog.is_some() {
        ui.separator();
        ui.spinner();
        ui.label("Waiting for the file dialog...");
    }
    if let Some(note) = &state.view.status_note {
        ui.separator();
        ui.label(note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::internal::{InternalConfig, InternalReport, ModelSide, explicit_search};

    fn report() -> InternalReport {
        let config = InternalConfig {
            breadth: 2,
            depth: 1,
            scoring: crate::mav::scoring::Scoring::Mean,
            state_format: crate::mav::command::StateFormat::Fen,
            buckets: crate::mav::buckets::Buckets::mav(),
            decoding: Default::default(),
        };
        let root = crate::game::chess::ChessState::startpos();
        let mut e = crate::search::mock::HashEvaluator::new(5);
        let explicit = explicit_search(&mut e, root.clone(), &config).expect("runs");
        InternalReport {
            root: root.to_text(),
            breadth: 2,
            depth: 1,
            scoring: config.scoring,
            explicit,
            model: ModelSide::Unsupported { why: "values only".into() },
        }
    }

    #[test]
    fn the_searches_choices_side_by_side() {
        assert_eq!(plans_summary(None, None), None);
        let r = report();
        let minimax = r.explicit.choice.clone().expect("a choice");
        assert_eq!(plans_summary(None, Some(&r)), Some(format!("minimax {minimax}")));
        assert_eq!(
            plans_summary(Some(&minimax), Some(&r)),
            Some(format!("MCTS {minimax} · minimax {minimax} (agree)"))
        );
        let other = if minimax == "e2e4" { "d2d4" } else { "e2e4" };
        assert_eq!(
            plans_summary(Some(other), Some(&r)),
            Some(format!("MCTS {other} · minimax {minimax} (differ)"))
        );
        assert_eq!(plans_summary(Some(other), None), Some(format!("MCTS {other}")));
    }
}
