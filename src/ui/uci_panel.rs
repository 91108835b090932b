//! The UCI engine panel: Stockfish (or any UCI engine) beside the model, with its MultiPV lines (score,
//! depth, principal variation in SAN) for the board position, updating as it thinks; start/stop, the
//! engine's path, the number of lines and threads.

use eframe::egui::{self, RichText};

use crate::app::analysis::pv_san;
use crate::app::command::Command;
use crate::app::state::AppState;
use crate::app::uci_panel::{MAX_LINES, UciCommand};
use crate::game::chess::ChessState;
use crate::uci::{Bound, Score, ScoreValue};

/// A score as White sees it: `+0.35` pawns, `#3` (White mates in 3), `#-3` (Black mates in 3); a bound is
/// marked `≥`/`≤` (flipped with the point of view). Engines report from the side to move.
pub fn score_text(score: Score, white_to_move: bool) -> String {
    let sign = if white_to_move { 1 } else { -1 };
    let value = match score.value {
        ScoreValue::Cp(cp) => format!("{:+.2}", f64::from(cp * sign) / 100.0),
        ScoreValue::Mate(0) => if white_to_move { "#-0" } else { "#0" }.to_owned(),
        ScoreValue::Mate(m) => format!("#{}", m * sign),
    };
    let bound = match (score.bound, white_to_move) {
        (Bound::Exact, _) => "",
        (Bound::Lower, true) | (Bound::Upper, false) => "≥",
        (Bound::Upper, true) | (Bound::Lower, false) => "≤",
    };
    format!("{bound}{value}")
}

/// A principal variation in SAN with move numbers, e.g. `1. e4 e5 2. Nf3` or `3... Nc6 4. Bb5`.
pub fn pv_text(state: &ChessState, pv: &[String]) -> String {
    use shakmaty::Position;
    let pos = state.position();
    let mut number = pos.fullmoves().get();
    let mut white = pos.turn().is_white();
    let mut out = String::new();
    for (i, san) in pv_san(state, pv).iter().enumerate() {
        if !out.is_empty() {
            out.push(' ');
        }
        if white {
            out.push_str(&format!("{number}. "));
        } else if i == 0 {
            out.push_str(&format!("{number}... "));
        }
        out.push_str(san);
        if !white {
            number += 1;
        }
        white = !white;
    }
    out
}

fn path_field_id() -> egui::Id {
    egui::Id::unique("mavboard_uci_path_field")
}

/// The engine settings row: path field, lines and threads.
fn settings_ui(ui: &mut egui::Ui, settings: &crate::app::settings::Settings, out: &mut Vec<Command>) {
    let settings = &settings.uci_engine;
    let saved = settings.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let mut text = ui.data(|d| d.get_temp::<String>(path_field_id())).unwrap_or_else(|| saved.clone());
    ui.horizontal(|ui| {
        let l = ui.label("Engine path");
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut text)
                    .hint_text("stockfish on PATH or /usr/games/stockfish")
                    .desired_width(170.0),
            )
            .labelled_by(l.id);
        let entered = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui.button("Use").on_hover_text("Use this engine binary").clicked() || entered) && text != saved {
            out.push(Command::Uci(UciCommand::SetPath(Some(text.trim().into()))));
        }
        if ui.button("Find").on_hover_text("Find Stockfish on PATH or at /usr/games/stockfish").clicked() {
            text.clear();
            out.push(Command::Uci(UciCommand::SetPath(None)));
        }
    });
    ui.data_mut(|d| d.insert_temp(path_field_id(), text));
    ui.horizontal(|ui| {
        let mut multipv = settings.multipv;
        let l = ui.label("Lines");
        if ui.add(egui::DragValue::new(&mut multipv).range(1..=MAX_LINES)).labelled_by(l.id).changed() {
            out.push(Command::Uci(UciCommand::SetMultiPv(multipv)));
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let mut threads = settings.threads;
        let l = ui.label("Threads");
        if ui.add(egui::DragValue::new(&mut threads).range(1..=cores.max(1))).labelled_by(l.id).changed() {
            out.push(Command::Uci(UciCommand::SetThreads(threads)));
        }
    });
}

/// The UCI engine panel.
pub fn uci_panel_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let panel = &state.uci;
    settings_ui(ui, &state.settings, &mut out);
    ui.horizontal(|ui| {
        if panel.running {
            if ui.button("Stop").clicked() {
                out.push(Command::Uci(UciCommand::Stop));
            }
        } else if ui.button("Start").on_hover_text("Analyse the board position with the engine").clicked() {
            out.push(Command::Uci(UciCommand::Start));
        }
        if let Some(name) = &panel.snapshot.engine {
            ui.label(name);
        }
        if panel.running && panel.snapshot.searching {
            ui.spinner();
        }
    });
    if let Some(e) = panel.error.as_ref().or(panel.snapshot.error.as_ref()) {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    let here = state.current();
    let Some(snapshot) = panel.lines_for(here, &state.settings.uci_engine) else {
        if panel.running && panel.error.is_none() && panel.snapshot.error.is_none() {
            ui.label("Starting…");
        }
        return out;
    };
    let lines = &snapshot.lines;
    let mut stats = Vec::new();
    if let Some(d) = lines.depth {
        stats.push(format!("depth {d}"));
    }
    if let Some(n) = lines.nodes {
        stats.push(format!("{:.1}M nodes", n as f64 / 1e6));
    }
    if let Some(nps) = lines.nps {
        stats.push(format!("{:.0}k nodes/s", nps as f64 / 1e3));
    }
    if !stats.is_empty() {
        ui.label(RichText::new(stats.join(" · ")).weak());
    }
    if lines.lines.is_empty() && !snapshot.searching {
        ui.label("No lines: the game is over here.");
    }
    let white = {
        use shakmaty::Position;
        here.position().turn().is_white()
    };
    egui::Grid::new("uci_lines").num_columns(3).striped(true).spacing([8.0, 2.0]).show(ui, |ui| {
        for line in &lines.lines {
            ui.label(RichText::new(score_text(line.score, white)).monospace().strong());
            ui.label(RichText::new(line.depth.map_or_else(String::new, |d| format!("d{d}"))).weak())
                .on_hover_text(format!(
                    "line {} · depth {} · selective depth {}",
                    line.multipv,
                    line.depth.map_or("?".into(), |d| d.to_string()),
                    line.seldepth.map_or("?".into(), |d| d.to_string())
                ));
            ui.add(egui::Label::new(RichText::new(pv_text(here, &line.pv)).monospace()).truncate());
            ui.end_row();
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;

    fn exact(value: ScoreValue) -> Score {
        Score { value, bound: Bound::Exact }
    }

    #[test]
    fn scores_read_from_whites_side() {
        assert_eq!(score_text(exact(ScoreValue::Cp(35)), true), "+0.35");
        assert_eq!(score_text(exact(ScoreValue::Cp(35)), false), "-0.35");
        assert_eq!(score_text(exact(ScoreValue::Mate(3)), false), "#-3");
        assert_eq!(score_text(exact(ScoreValue::Mate(-2)), true), "#-2");
        assert_eq!(score_text(Score { value: ScoreValue::Cp(-10), bound: Bound::Lower }, false), "≤+0.10");
    }

    #[test]
    fn pv_text_numbers_the_moves_and_stops_at_an_illegal_one() {
        let start = ChessState::startpos();
        let pv: Vec<String> = ["e2e4", "e7e5", "g1f3"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(pv_text(&start, &pv), "1. e4 e5 2. Nf3");
        let after = start.play(start.parse_action("e2e4").expect("legal")).expect("played");
        let pv: Vec<String> = ["e7e5", "g1f3", "a1a8"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(pv_text(&after, &pv), "1... e5 2. Nf3");
    }
}
