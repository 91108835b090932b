//! Play against the model: the dialog that sets up a game (side, chooser, time per move) and the bar
//! over the board while one is played (players, whose move, resign, stop).

use eframe::egui;

use crate::app::board_game::player_name;
use crate::app::command::Command;
use crate::app::command::ViewCommand;
use crate::app::line::MoveHistory;
use crate::app::play::{Chooser, PlayCommand, PlaySetup};
use crate::game::{GameState, Player};

use crate::app::state::AppState;

/// The names of the two sides in the game on the board: White/Black, or the Connect Four / Hex players.
fn side_names(doc: &crate::app::document::Document) -> [(Player, String); 2] {
    [Player::First, Player::Second].map(|p| {
        let name = match &doc.board_game {
            Some(g) => player_name(g.current().kind(), p).to_owned(),
            None if p == Player::First => "White".to_owned(),
            None => "Black".to_owned(),
        };
        (p, name)
    })
}

/// The dialog's body: each change is remembered at once; *Start* begins the game.
pub fn play_dialog_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let before = state.settings.play;
    let mut setup: PlaySetup = before;
    let chess = state.doc.board_game.is_none();
    ui.label("You play");
    ui.horizontal(|ui| {
        for (player, name) in side_names(&state.doc) {
            ui.radio_value(&mut setup.human, player, name);
        }
    });
    ui.separator();
    ui.label("The other side is played by");
    for chooser in Chooser::all() {
        let enabled = chess || !chooser.chess_only();
        ui.add_enabled_ui(enabled, |ui| ui.radio_value(&mut setup.chooser, chooser, chooser.label()))
            .response
            .on_disabled_hover_text("A UCI engine plays chess only.");
    }
    match setup.chooser {
        Chooser::Model(_) => {
            ui.weak(
                "One model call per move: the best value of every legal move, as the values panel shows.",
            );
        }
        Chooser::Mcts => {
            ui.horizontal(|ui| {
                let label = ui.label("Simulations per move");
                ui.add(egui::DragValue::new(&mut setup.simulations).range(0..=1_000_000).speed(10))
                    .labelled_by(label.id);
            });
            ui.weak("0: only the time per move limits the search.");
        }
        Chooser::Uci => {
            let engine =
                state.settings.uci_engine.path.as_ref().map_or_else(
                    || "Stockfish (found on this system)".to_owned(),
                    |p| p.display().to_string(),
                );
            ui.weak(format!("Engine: {engine}; set another in the UCI engine panel."));
        }
    }
    if matches!(setup.chooser, Chooser::Mcts | Chooser::Uci) {
        ui.horizontal(|ui| {
            let label = ui.label("Time per move (ms)");
            ui.add(egui::DragValue::new(&mut setup.movetime_ms).range(50..=600_000).speed(50))
                .labelled_by(label.id);
        });
    }
    if setup != before {
        out.push(Command::Play(PlayCommand::Setup(setup)));
    }
    ui.separator();
    ui.horizontal(|ui| {
        let usable = chess || !setup.chooser.chess_only();
        if ui.add_enabled(usable, egui::Button::new("Start the game")).clicked() {
            out.push(Command::Play(PlayCommand::Start(setup)));
        }
        if ui.button("Cancel").clicked() {
            out.push(Command::View(ViewCommand::ShowDialog(None)));
        }
    });
    out
}

/// Whose move it is on the board, whether the board shows the line's end, and whether the game is over.
fn board_turn(doc: &crate::app::document::Document) -> (Player, bool, bool) {
    match &doc.board_game {
        Some(g) => (g.current().to_move(), g.cursor() == g.moves().len(), g.current().outcome().is_some()),
        None => {
            let current = doc.line.current();
            (current.to_move(), doc.line.cursor() == doc.line.moves().len(), current.outcome().is_some())
        }
    }
}

/// The bar over the board while a game against the model is played.
pub fn play_bar_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let Some(game) = &state.play.game else { return out };
    let names = side_names(&state.doc);
    let human = game.setup.human;
    let side_of = |p: Player| names.iter().find(|(q, _)| *q == p).map_or("", |(_, n)| n.as_str());
    let chooser_side = if human == Player::First { Player::Second } else { Player::First };
    let (to_move, at_end, over) = board_turn(&state.doc);
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("You ({}) against {} ({})", side_of(human), game.opponent, side_of(chooser_side)));
        ui.separator();
        let status = match &game.ended {
            Some((result, how)) => format!("Game over: {result} ({how})"),
            None if over => "Game over".to_owned(),
            None if !at_end => "Looking back: go to the last move to go on".to_owned(),
            None if to_move == human => "Your move".to_owned(),
            None => format!("{} is thinking…", game.opponent),
        };
        ui.label(status);
        ui.separator();
        if game.ended.is_none() && !over && ui.button("Resign").clicked() {
            out.push(Command::Play(PlayCommand::Resign));
        }
        if ui.button("New game").on_hover_text("Another game with the same choices").clicked() {
            out.push(Command::Play(PlayCommand::Start(game.setup)));
        }
        if ui.button("Stop playing").on_hover_text("Keep the game on the board for analysis").clicked() {
            out.push(Command::Play(PlayCommand::Stop));
        }
    });
    out
}
