//! How a game against the model ([`crate::app::play`]) meets the app: starting and ending it, and, once a
//! frame, describing the board to the chooser and carrying out its answer (a move, a search request for
//! the engine glue, starting the UCI engine).

use std::time::Instant;

use super::AppState;
use crate::app::analysis::EngineRequest;
use crate::app::board_game::BoardGame;
use crate::app::command::Command;
use crate::app::command::{BoardMove, DocCommand};
use crate::app::game::GameDoc;
use crate::app::line::MoveHistory;
use crate::app::play::{Action, PlayCommand, PlayDocument, PlayGame, PlaySetup, Turn};
use crate::app::uci_panel::UciCommand;
use crate::game::{GameState, Player};

/// The user's name as a player: the login name when the system has one.
fn user_name() -> String {
    ["USER", "USERNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|n| n.trim().to_owned())
        .find(|n| !n.is_empty())
        .unwrap_or_else(|| "You".to_owned())
}

impl AppState {
    /// The name of the model the chooser uses (the chess model, or the Connect Four / Hex board's).
    fn play_model_name(&self) -> String {
        use crate::app::board_model::BoardModelStatus;
        if self.doc.board_game.is_some() {
            return match &self.board_analysis.model.view.status {
                BoardModelStatus::Loading(n) | BoardModelStatus::Ready(n) => n.clone(),
                _ => "the model".to_owned(),
            };
        }
        self.analysis.model.info().map_or_else(|| "the model".to_owned(), |i| i.name.clone())
    }

    /// The UCI engine's name for the game's header.
    fn uci_engine_name(&self) -> String {
        if let Some(name) = &self.uci.snapshot.engine {
            return name.clone();
        }
        self.settings
            .uci_engine
            .path
            .as_ref()
            .and_then(|p| p.file_name())
            .map_or_else(|| "Stockfish".to_owned(), |n| n.to_string_lossy().into_owned())
    }

    /// Applies a command of the play dialog or bar.
    pub(super) fn apply_play(&mut self, command: PlayCommand) {
        match command {
            PlayCommand::Setup(setup) => self.settings.play = setup,
            PlayCommand::Start(setup) => self.start_play(setup),
            PlayCommand::Resign => {
                let Some(game) = self.play.game.as_mut() else { return };
                if game.ended.is_some() {
                    return;
                }
                let result = game.resign_result();
                game.end(result, "resigned");
                if self.doc.board_game.is_none() {
                    self.doc.line.set_result(result);
                    self.doc.line.set_header("Termination", "resigned");
                }
                self.view.status_note = Some(format!("You resigned: {result}"));
            }
            PlayCommand::Stop => self.play.game = None,
        }
    }

    fn start_play(&mut self, setup: PlaySetup) {
        self.settings.play = setup;
        self.view.dialog = None;
        if self.doc.board_game.is_some() && setup.chooser.chess_only() {
            self.view.messages.error(
                "A UCI engine plays chess only: choose the model alone or MCTS for Connect Four and Hex \
                 (Game > Play against the model).",
            );
            return;
        }
        if self.analysis.searching {
            self.analysis.requests.push(EngineRequest::StopSearch);
        }
        let opponent = setup.opponent_name(&self.play_model_name(), &self.uci_engine_name());
        let me = user_name();
        if self.doc.board_game.is_some() {
            self.apply_now(Command::Doc(DocCommand::NewGame));
        } else {
            let mut doc = GameDoc::default();
            let (white, black) = match setup.human {
                Player::First => (me.clone(), opponent.clone()),
                Player::Second => (opponent.clone(), me.clone()),
            };
            doc.set_header("Event", "Game against the model");
            doc.set_header("Site", "mavboard");
            doc.set_header("Date", &crate::league::record::utc_date());
            doc.set_header("White", &white);
            doc.set_header("Black", &black);
            // A new game is not a change to save until a move is played.
            doc.mark_saved();
            self.doc.line = doc;
            self.doc.position_generation += 1;
            self.doc.players = Some((white, black));
            self.doc.current_file = None;
            self.doc.opened_game = None;
        }
        self.settings.flipped = setup.human == Player::Second;
        self.play.game = Some(PlayGame::new(setup, opponent));
        self.play.document = Some(self.play_document());
        self.view.status_note = None;
    }

    /// The document on the board, as a game against the chooser is tied to it.
    fn play_document(&self) -> PlayDocument {
        match &self.doc.board_game {
            Some(_) => PlayDocument::Board(self.settings.game),
            None => PlayDocument::Chess(self.doc.line.stamp().doc),
        }
    }

    /// Once a frame, after the engine glue: lets the chooser move when it is its turn. Returns the
    /// commands to apply (its move, starting the UCI engine). Another game put on the board (a file, a
    /// FEN, another game kind) ends the game against the chooser.
    pub fn play_frame(&mut self, now: Instant) -> Vec<Command> {
        if self.play.game.is_some() && self.play.document != Some(self.play_document()) {
            self.play.game = None;
            self.view.status_note =
                Some("The game against the model ended: another game is on the board".to_owned());
        }
        let Some(mut game) = self.play.game.take() else { return Vec::new() };
        let out = match &self.doc.board_game {
            Some(board) => self.board_play_step(&mut game, board.clone(), now),
            None => self.chess_play_step(&mut game, now),
        };
        self.play.game = Some(game);
        out
    }

    fn chess_play_step(&mut self, game: &mut PlayGame, now: Instant) -> Vec<Command> {
        let current = self.doc.line.current().clone();
        let root = current.to_text();
        let outcome = current.outcome();
        if let Some(o) = outcome
            && game.ended.is_none()
            && self.doc.line.cursor() == self.doc.line.moves().len()
        {
            game.end(o.result_str(), o.reason().words());
            self.doc.line.set_result(o.result_str());
        }
        let uci_lines = self.uci.lines_for(&current, &self.settings.uci_engine);
        let uci_best = uci_lines.and_then(|s| s.lines.lines.first()).and_then(|l| l.pv.first());
        let turn = Turn {
            root: &root,
            to_move: current.to_move(),
            over: outcome.is_some(),
            at_end: self.doc.line.cursor() == self.doc.line.moves().len(),
            report: self.analysis.report.as_ref(),
            finished_search: self.analysis.finished_search.as_deref(),
            uci_best: uci_best.map(String::as_str),
            uci_running: self.uci.running,
        };
        match game.step(&turn, now) {
            Action::Wait => Vec::new(),
            Action::Play(text) => match current.parse_action(&text) {
                Ok(mv) => vec![Command::Doc(DocCommand::PlayMove(BoardMove::Chess(mv)))],
                Err(e) => {
                    game.end("*", "stopped");
                    self.view.messages.error(format!(
                        "The chooser's move {text} cannot be played here ({e}); the game against it stopped."
                    ));
                    Vec::new()
                }
            },
            Action::Search(limits) => {
                self.analysis.requests.push(EngineRequest::PlaySearch(limits));
                Vec::new()
            }
            // Once running, the engine follows the board (see the shell).
            Action::StartUci => vec![Command::Uci(UciCommand::Start)],
        }
    }

    fn board_play_step(&mut self, game: &mut PlayGame, board: BoardGame, now: Instant) -> Vec<Command> {
        let current = board.current();
        let root = current.text();
        let outcome = current.outcome();
        if let Some(o) = outcome
            && game.ended.is_none()
            && board.cursor() == board.moves().len()
        {
            game.end(o.result_str(), o.reason().words());
        }
        let view = &self.board_analysis.model.view;
        let turn = Turn {
            root: &root,
            to_move: current.to_move(),
            over: outcome.is_some(),
            at_end: board.cursor() == board.moves().len(),
            report: view.report.as_ref(),
            finished_search: view.finished_search.as_deref(),
            uci_best: None,
            uci_running: false,
        };
        match game.step(&turn, now) {
            Action::Wait | Action::StartUci => Vec::new(),
            Action::Play(text) => vec![Command::Doc(DocCommand::PlayMove(BoardMove::Notation(text)))],
            Action::Search(limits) => {
                self.board_analysis.model.play_limits = Some(limits);
                self.board_analysis.model.request = Some(crate::app::board_model::BoardSearchRequest::Start);
                Vec::new()
            }
        }
    }
}
