//! What the panels ask for. Panels return commands; the app applies them at the end of the frame.

use std::path::PathBuf;

use shakmaty::Move;

use super::settings::{ScoringChoice, SearchSettings, ThemeChoice};

/// Where to move in the move list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Navigate {
    /// Before the first move.
    Start,
    /// One move back.
    Back,
    /// One move forward.
    Forward,
    /// After the last move.
    End,
    /// After this many moves.
    To(usize),
}

/// A change the user asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Play a move on the board at the current position.
    PlayMove(Move),
    /// Tell the user that a move they tried is not legal (the board stays as it is).
    RejectMove {
        /// The move as the user tried it, e.g. `e2-e5`.
        attempt: String,
    },
    /// Move through the line.
    Navigate(Navigate),
    /// Set the position from a FEN (an error message on a bad FEN, the board unchanged).
    LoadFen(String),
    /// Load pasted text: a FEN, or else a PGN game.
    LoadPasted(String),
    /// The standard start position.
    NewGame,
    /// Chess960 start position by Scharnagl number.
    NewChess960(u16),
    /// Flip the board.
    Flip,
    /// Change the colour theme.
    SetTheme(ThemeChoice),
    /// Change how value distributions are scored.
    SetScoring(ScoringChoice),
    /// Show or hide the move list.
    ToggleMovesPanel,
    /// Show or hide the setup panel.
    ToggleSetupPanel,
    /// Show or hide board coordinates.
    ToggleCoordinates,
    /// Show or hide legal-move dots.
    ToggleLegalMoves,
    /// Review every game of the open file (the game list), one after another.
    ReviewFile,
    /// Stop the file review (finished games keep their reviews).
    StopFileReview,
    /// Ask where to write the open file's games with their reviews, with the system file dialog.
    ExportReviewDialog,
    /// Write the open file's games with their reviews to this path (atomically).
    ExportReviewPath(PathBuf),
    /// Ask for a PGN file with the system file dialog.
    OpenFileDialog,
    /// Ask where to save the line with the system file dialog.
    SaveFileDialog,
    /// Open a PGN file from a path.
    OpenPath(PathBuf),
    /// Save the line as PGN to a path.
    SavePath(PathBuf),
    /// Open or close a dialog window.
    ShowDialog(Option<super::state::Dialog>),
    /// Close a message.
    DismissMessage(u64),
    /// Show an error message (input a panel could not accept).
    ShowError(String),
    /// Copy the current FEN to the clipboard.
    CopyFen,
    /// Start a search of the board position, or stop the running one (space).
    ToggleSearch,
    /// Start a search of the board position with the search settings.
    StartSearch,
    /// Stop the running search.
    StopSearch,
    /// Change the search settings (used by the next search).
    SetSearchSettings(SearchSettings),
    /// Show this move's distribution (UCI), or the best move's when `None`.
    SelectMove(Option<String>),
    /// The pointer is over this move in a panel (UCI), or over none.
    HoverMove(Option<String>),
    /// Show or hide the analysis panel.
    ToggleAnalysisPanel,
    /// Load the model package in this folder (and remember it).
    LoadModel(PathBuf),
    /// Choose a model package folder with the system dialog.
    ChooseModelFolder,
    /// Put the cursor on this move of the game tree.
    SelectNode(crate::pgn::NodeId),
    /// At a fork, follow the next (`down`) or previous variation.
    SwitchVariation {
        /// Next (true) or previous variation.
        down: bool,
    },
    /// Move this variation one place up.
    PromoteVariation(crate::pgn::NodeId),
    /// Make the line through this move the main line.
    MakeMainline(crate::pgn::NodeId),
    /// Delete this move and everything after it.
    DeleteFrom(crate::pgn::NodeId),
    /// Replace the comment after this move.
    SetComment(crate::pgn::NodeId, String),
    /// Replace the NAGs of this move (numeric annotation glyphs: 1 = !, 2 = ?, 3 = !!, 4 = ??, 5 = !?, 6 = ?!).
    SetNags(crate::pgn::NodeId, Vec<u8>),
    /// Open game `n` (from 1) of the game list.
    OpenGame(usize),
    /// Evaluate every position of the line (game review and eval graph).
    ReviewLine,
    /// Writes the finished review into the game (NAGs, `[%eval]`, best moves), as `mavboard annotate`.
    AnnotateGame,
    /// Copy the game as PGN to the clipboard.
    CopyPgn,
    /// Go back to the shipped default model.
    LoadDefaultModel,
    /// Run internal search (explicit minimax, and the model's own trace when it writes one) on the board
    /// position.
    RunInternalSearch {
        /// b: children per expanded node.
        breadth: usize,
        /// d: plies below the root.
        depth: u32,
    },
    /// Answer the question about unsaved changes (Save, Discard, Cancel).
    AnswerUnsaved(super::unsaved::UnsavedAnswer),
    /// Preview this root move's PV on the board (UCI), or end the preview.
    PreviewPv(Option<String>),
    /// Run the model on this device with this many threads (0: automatic), reloading it.
    SetModelRuntime {
        /// Auto, CPU, CUDA or CoreML.
        device: crate::inference::device::Device,
        /// ONNX Runtime threads; 0 chooses from the cores.
        threads: usize,
    },
    /// Expand or collapse this node of the search tree explorer (moves in UCI from the root).
    ToggleTreeNode(Vec<String>),
    /// Something for the UCI engine panel (start, stop, its settings).
    Uci(super::uci_panel::UciCommand),
    /// Put this game on the board: chess (the analysis board) or a new Connect Four or Hex game.
    SetGame(super::board_game::GameChoice),
    /// Play this move (in the game's notation: `4`, `c5`, `swap`) in the Connect Four or Hex game.
    PlayBoardMove(String),
    /// Start the Connect Four or Hex game again.
    NewBoardGame,
    /// Copy the Connect Four move string or the Hex SGF to the clipboard.
    CopyBoardRecord,
    /// Turn the solver beside the Connect Four / Hex board on or off.
    ToggleOracle,
    /// Start or stop the model's MCTS on the Connect Four / Hex board.
    BoardSearch(super::board_model::BoardSearchRequest),
    /// Something for the game against the model (its choices, start, resign, stop).
    Play(super::play::PlayCommand),
    /// Change who judges a game review (the model or a UCI engine, and its depth).
    SetReviewSettings(super::uci_review::ReviewSettings),
}
