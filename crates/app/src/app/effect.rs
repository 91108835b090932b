//! What the app asks of the window, as values: the app changes its state and lists the effects that need
//! the window (the clipboard, closing it); the shell carries them out after the frame's commands. So the
//! app never holds egui's context, and a test reads the effects a command had.

use std::time::Duration;

/// One thing for the window to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Put this text on the clipboard.
    CopyText(String),
    /// Close the window (the user agreed to drop unsaved changes, or they were saved).
    CloseWindow,
    /// Keep the window open: its close was held for the question about unsaved changes.
    CancelClose,
    /// Draw the window again after this time even without an event (a clock runs out).
    RepaintAfter(Duration),
}
