//! [`Engine`]: the handle that starts the engine thread and talks to it.

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::api::{Command, EngineConfig, EngineError, Event, Repaint};
use super::controller::Controller;

/// A running engine: one thread that owns the search, plus the inference workers it starts. Commands go in
/// with [`Engine::send`]; events come out of [`Engine::events`]. Dropping the handle ends the thread.
pub struct Engine {
    commands: Sender<Command>,
    events: Receiver<Event>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts the engine thread, searching from the standard start position, with no evaluator yet (send
    /// [`Command::LoadEvaluator`]). `repaint` is called after every event.
    pub fn start(config: EngineConfig, repaint: Repaint) -> Result<Engine, EngineError> {
        if config.batch_size == 0 {
            return Err(EngineError::Config("the batch size must be at least 1".into()));
        }
        let (commands, command_rx) = unbounded();
        let (event_tx, events) = unbounded();
        let controller = Controller::new(command_rx, event_tx, repaint, config);
        let thread = std::thread::Builder::new()
            .name("mavboard-engine".into())
            .spawn(move || controller.run())
            .map_err(|e| EngineError::Thread(format!("could not start it: {e}")))?;
        Ok(Engine { commands, events, thread: Some(thread) })
    }

    /// Sends a command; fails only if the engine thread has ended.
    pub fn send(&self, command: Command) -> Result<(), EngineError> {
        self.commands.send(command).map_err(|_| EngineError::Thread("it has ended".into()))
    }

    /// The events, in the order they happened.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Quit);
        if let Some(thread) = self.thread.take() {
            // The thread hands slow workers to a separate thread, so this returns promptly.
            let _ = thread.join();
        }
    }
}
