//! The system file dialog (rfd over the xdg-desktop-portal), polled from the UI thread without
//! blocking it: rfd runs the dialog on its own thread and wakes the UI when it is answered.
//!
//! When no portal answers (a bare X session, no desktop), rfd returns no file; the app then says so and
//! offers drag-and-drop and a path field.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// Open, save, or choose a model folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileDialogKind {
    /// Choose a PGN file to open.
    Open,
    /// Choose where to save the line as PGN.
    Save,
    /// Choose a model package folder (model.onnx + mav.json).
    ModelFolder,
    /// Choose the package folder of model B, to compare with the loaded one.
    CompareFolder,
    /// Choose where to write the open file's games with their reviews.
    ExportReview,
}

/// Wakes the UI (requests a repaint) when the dialog answers.
struct RepaintWaker(Arc<dyn Fn() + Send + Sync>);

impl Wake for RepaintWaker {
    fn wake(self: Arc<Self>) {
        (self.0)();
    }
}

type DialogFuture = Pin<Box<dyn Future<Output = Option<rfd::FileHandle>>>>;

/// A file dialog that is open.
pub struct PendingFileDialog {
    kind: FileDialogKind,
    future: DialogFuture,
    waker: Waker,
}

impl std::fmt::Debug for PendingFileDialog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingFileDialog").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl PendingFileDialog {
    /// Opens the system dialog. `repaint` is called (from another thread) when it is answered.
    pub fn start(kind: FileDialogKind, repaint: Arc<dyn Fn() + Send + Sync>) -> PendingFileDialog {
        let dialog =
            rfd::AsyncFileDialog::new().add_filter("PGN game", &["pgn"]).add_filter("All files", &["*"]);
        let future: DialogFuture = match kind {
            FileDialogKind::ModelFolder => {
                Box::pin(rfd::AsyncFileDialog::new().set_title("Choose a model package folder").pick_folder())
            }
            FileDialogKind::CompareFolder => Box::pin(
                rfd::AsyncFileDialog::new()
                    .set_title("Choose the model package to compare with")
                    .pick_folder(),
            ),
            FileDialogKind::Open => Box::pin(dialog.set_title("Open PGN").pick_file()),
            FileDialogKind::Save => {
                Box::pin(dialog.set_title("Save line as PGN").set_file_name("analysis.pgn").save_file())
            }
            FileDialogKind::ExportReview => Box::pin(
                dialog
                    .set_title("Export the reviewed games as PGN")
                    .set_file_name("reviewed.pgn")
                    .save_file(),
            ),
        };
        PendingFileDialog { kind, future, waker: Waker::from(Arc::new(RepaintWaker(repaint))) }
    }

    /// Open or save.
    pub fn kind(&self) -> FileDialogKind {
        self.kind
    }

    /// `Ready(Some(path))` when a file was chosen, `Ready(None)` when the dialog was cancelled or no
    /// portal answered, `Pending` while it is open.
    pub fn poll(&mut self) -> Poll<Option<PathBuf>> {
        let mut cx = Context::from_waker(&self.waker);
        self.future.as_mut().poll(&mut cx).map(|h| h.map(|h| h.path().to_path_buf()))
    }
}
