//! What the window shows beside the board and the panels: the open dialog, messages, the status note and
//! the board's preview of a search line.

use super::messages::Messages;
use super::pv_preview::PvHover;
use super::settings::{Settings, ThemeChoice};

/// A dialog window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// Paste a FEN or PGN.
    Paste,
    /// Type a path to open or save (when no file dialog is available).
    Path(super::file_dialog::FileDialogKind),
    /// About mavboard, keys and licenses.
    About,
    /// The games of the opened file.
    GameList,
    /// Edit the comment after a move.
    Comment(crate::pgn::NodeId),
    /// Play against the model: side, chooser, time per move.
    Play,
}

/// A command for what is shown: board orientation, theme, panels, dialogs, messages, the PV preview.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewCommand {
    /// Flip the board.
    Flip,
    /// Change the colour theme.
    SetTheme(ThemeChoice),
    /// Show or hide the move list.
    ToggleMovesPanel,
    /// Show or hide the setup panel.
    ToggleSetupPanel,
    /// Show or hide board coordinates.
    ToggleCoordinates,
    /// Show or hide legal-move dots.
    ToggleLegalMoves,
    /// Open or close a dialog window.
    ShowDialog(Option<Dialog>),
    /// Close a message.
    DismissMessage(u64),
    /// Show an error message (input a panel could not accept).
    ShowError(String),
    /// Show or hide the analysis panel.
    ToggleAnalysisPanel,
    /// Keep the analysis panel's arrangement of tabs and panes (the UI's text), or go back to the default
    /// (`None`).
    SetPanelLayout(Option<String>),
    /// Preview this root move's PV on the board (UCI), or end the preview.
    PreviewPv(Option<String>),
    /// Preview this line of moves from the board position (UCI; a node of an internal-search tree), or end
    /// the preview.
    PreviewLine(Option<Vec<String>>),
    /// Turn the solver beside the Connect Four / Hex board on or off.
    ToggleOracle,
}

/// Transient things on screen.
#[derive(Default)]
pub struct ViewState {
    /// Open messages (toasts).
    pub messages: Messages,
    /// The open dialog window, if any.
    pub dialog: Option<Dialog>,
    /// A short note in the status bar (e.g. a rejected move); replaced by the next one.
    pub status_note: Option<String>,
    /// The search panel's root move whose PV the board previews (see [`super::pv_preview`]).
    pub pv_hover: Option<PvHover>,
}

impl ViewState {
    /// Applies a command for what is shown. Board orientation, theme and panels are settings (saved);
    /// `board` is the position text of the board (the root of a PV preview).
    pub fn apply(&mut self, command: ViewCommand, settings: &mut Settings, board: String) {
        match command {
            ViewCommand::Flip => settings.flipped = !settings.flipped,
            ViewCommand::SetTheme(t) => settings.theme = t,
            ViewCommand::ToggleMovesPanel => settings.show_moves_panel ^= true,
            ViewCommand::ToggleSetupPanel => settings.show_setup_panel ^= true,
            ViewCommand::ToggleCoordinates => settings.show_coordinates ^= true,
            ViewCommand::ToggleLegalMoves => settings.show_legal_moves ^= true,
            ViewCommand::ToggleAnalysisPanel => settings.show_analysis_panel ^= true,
            ViewCommand::SetPanelLayout(layout) => settings.panel_layout = layout,
            ViewCommand::ToggleOracle => settings.show_oracle ^= true,
            ViewCommand::ShowDialog(d) => self.dialog = d,
            ViewCommand::DismissMessage(id) => self.messages.dismiss(id),
            ViewCommand::ShowError(text) => {
                self.messages.error(text);
            }
            ViewCommand::PreviewPv(action) => {
                self.pv_hover = action.map(|action| PvHover { root: board, action, line: None });
            }
            ViewCommand::PreviewLine(line) => {
                self.pv_hover = line.filter(|l| !l.is_empty()).map(|l| PvHover {
                    root: board,
                    action: l[0].clone(),
                    line: Some(l),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_commands_change_settings_and_what_is_shown() {
        let mut view = ViewState::default();
        let mut settings = Settings::default();
        let flipped = settings.flipped;
        view.apply(ViewCommand::Flip, &mut settings, String::new());
        assert_eq!(settings.flipped, !flipped);
        view.apply(ViewCommand::ShowError("bad".into()), &mut settings, String::new());
        assert_eq!(view.messages.items().len(), 1);
        let id = view.messages.items()[0].id;
        view.apply(ViewCommand::DismissMessage(id), &mut settings, String::new());
        assert!(view.messages.items().is_empty());
        view.apply(ViewCommand::PreviewPv(Some("e2e4".into())), &mut settings, "root".into());
        assert_eq!(view.pv_hover, Some(PvHover { root: "root".into(), action: "e2e4".into(), line: None }));
        view.apply(ViewCommand::PreviewPv(None), &mut settings, "root".into());
        assert_eq!(view.pv_hover, None);
        let line = vec!["e2e4".to_owned(), "e7e5".to_owned()];
        view.apply(ViewCommand::PreviewLine(Some(line.clone())), &mut settings, "root".into());
        assert_eq!(
            view.pv_hover,
            Some(PvHover { root: "root".into(), action: "e2e4".into(), line: Some(line) })
        );
        view.apply(ViewCommand::PreviewLine(Some(Vec::new())), &mut settings, "root".into());
        assert_eq!(view.pv_hover, None, "an empty line previews nothing");
    }
}
