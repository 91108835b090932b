//! [`Engine`]: the handle that starts the engine thread and talks to it.

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::api::{Command, EngineConfig, EngineError, Event, Repaint};
use super::controller::Controller;
use crate::game::chess::ChessState;
use crate::mav::state::MavState;

/// A running engine for `S` positions (chess by default): one thread that owns the search, plus the
/// inference workers it starts. Commands go in with [`Engine::send`]; events come out of
/// [`Engine::events`]. Dropping the handle ends the thread.
pub struct Engine<S: MavState = ChessState> {
    commands: Sender<Command<S>>,
    events: Receiver<Event<S>>,
    thread: Option<JoinHandle<()>>,
}

/// The chess engine (the app's, the UCI server's): [`Engine`] over [`ChessState`].
pub type ChessEngine = Engine<ChessState>;

impl Engine<ChessState> {
    /// Starts a chess engine thread, searching from the standard start position, with no evaluator yet
    /// (send [`Command::LoadEvaluator`]). `repaint` is called after every event.
    pub fn start(config: EngineConfig, repaint: Repaint) -> Result<Engine<ChessState>, EngineError> {
        Engine::start_at(ChessState::startpos(), config, repaint)
    }
}

impl<S: MavState> Engine<S> {
    /// Starts an engine thread for `start`'s game, searching from `start` until a
    /// [`Command::SetPosition`], with no evaluator yet (send [`Command::LoadEvaluator`]). `repaint` is
    /// called after every event.
    pub fn start_at(start: S, config: EngineConfig, repaint: Repaint) -> Result<Engine<S>, EngineError> {
        if config.batch_size == 0 {
            return Err(EngineError::Config("the batch size must be at least 1".into()));
        }
        let (commands, command_rx) = unbounded();
        let (event_tx, events) = unbounded();
        let controller = Controller::new(start, command_rx, event_tx, repaint, config);
        let thread = std::thread::Builder::new()
            .name("mavboard-engine".into())
            .spawn(move || controller.run())
            .map_err(|e| EngineError::Thread(format!("could not start it: {e}")))?;
        Ok(Engine { commands, events, thread: Some(thread) })
    }

    /// Sends a command; fails only if the engine thread has ended.
    pub fn send(&self, command: Command<S>) -> Result<(), EngineError> {
        self.commands.send(command).map_err(|_| EngineError::Thread("it has ended".into()))
    }

    /// The events, in the order they happened.
    pub fn events(&self) -> &Receiver<Event<S>> {
        &self.events
    }
}

impl<S: MavState> Drop for Engine<S> {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Quit);
        if let Some(thread) = self.thread.take() {
            // The thread hands slow workers to a separate thread, so this returns promptly.
            let _ = thread.join();
        }
    }
}
