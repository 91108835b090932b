//! What the panels ask for. Panels return commands; the app applies them at the end of the frame.

use std::path::PathBuf;

use shakmaty::Move;

use super::settings::SearchSettings;
pub use super::view::ViewCommand;
use crate::mav::scoring::Scoring;

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

/// A move for the game on the board.
#[derive(Debug, Clone, PartialEq)]
pub enum BoardMove {
    /// A chess move, as the board or an engine gives it.
    Chess(Move),
    /// A move in the notation of the game on the board: UCI for chess, `4` for Connect Four, `c5` or
    /// `swap` for Hex.
    Notation(String),
}

/// A command for the game on the board (any game): moves, navigation, loading a position, editing the
/// tree, copying.
#[derive(Debug, Clone, PartialEq)]
pub enum DocCommand {
    /// Play a move at the cursor of the game on the board (any game).
    PlayMove(BoardMove),
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
    /// A new game of the kind on the board: chess from the standard start position, or Connect Four / Hex
    /// from the empty board.
    NewGame,
    /// Chess960 start position by Scharnagl number.
    NewChess960(u32),
    /// Copy the current FEN to the clipboard.
    CopyFen,
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
    /// Writes the finished review into the game (NAGs, `[%eval]`, best moves), as `mavboard annotate`.
    AnnotateGame,
    /// Copy the game on the board to the clipboard: chess as PGN, Connect Four as its move string, Hex
    /// as SGF.
    CopyRecord,
    /// Put this game on the board: chess (the analysis board) or a new Connect Four or Hex game.
    SetGame(super::board_game::GameChoice),
}

/// A command for files: open, save, export, the game list, the unsaved-changes question.
#[derive(Debug, Clone, PartialEq)]
pub enum FileCommand {
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
    /// Open game `n` (from 1) of the game list.
    OpenGame(usize),
    /// Answer the question about unsaved changes (Save, Discard, Cancel).
    AnswerUnsaved(UnsavedAnswer),
    /// Answer the offer of a crash journal left by an app that did not close properly (Restore, Discard).
    AnswerJournal(JournalAnswer),
}

/// The user's answer to the question about unsaved changes (see [`super::unsaved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save the game, then go on.
    Save,
    /// Go on without saving.
    Discard,
    /// Keep the game and do nothing.
    Cancel,
}

/// The answer to the offer of a journal left by an app that did not close properly (see [`super::journal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalAnswer {
    /// Put its games back on the board (marked unsaved).
    Restore,
    /// Remove the journal.
    Discard,
}

/// A command for the model: loading it, its runtime, search, reviews, internal search, the tree explorer,
/// the selected move.
#[derive(Debug, Clone, PartialEq)]
pub enum AnalysisCommand {
    /// Change the rule that scores value distributions (ranks moves, drives searches and reviews).
    SetScoring(Scoring),
    /// Change the rule shown beside it (the values panel's second column, the eval graph's second line).
    SetCompareScoring(Scoring),
    /// Review every game of the open file (the game list), one after another.
    ReviewFile,
    /// Stop the file review (finished games keep their reviews).
    StopFileReview,
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
    /// Load the model package in this folder (and remember it).
    LoadModel(PathBuf),
    /// Choose a model package folder with the system dialog.
    ChooseModelFolder,
    /// Evaluate every position of the line (game review and eval graph).
    ReviewLine,
    /// Go back to the shipped default model.
    LoadDefaultModel,
    /// Run internal search (explicit minimax, and the model's own trace when it writes one) on the board
    /// position.
    RunInternalSearch {
        /// b: children per expanded node.
        breadth: usize,
        /// d: plies below the root.
        depth: u32,
        /// How the model decodes its own trace.
        decoding: crate::inference::completer::TraceDecoding,
    },
    /// Run the model on this device with this many threads (0: automatic), reloading it.
    SetModelRuntime {
        /// Auto, CPU, CUDA or CoreML.
        device: crate::inference::device::Device,
        /// ONNX Runtime threads; 0 chooses from the cores.
        threads: usize,
    },
    /// Expand or collapse this node of the search tree explorer (moves in UCI from the root).
    ToggleTreeNode(Vec<String>),
    /// Start or stop the model's MCTS on the Connect Four / Hex board.
    BoardSearch(super::board_model::BoardSearchRequest),
    /// Change who judges a game review (the model or a UCI engine, and its depth).
    SetReviewSettings(super::uci_review::ReviewSettings),
    /// A change in the *Inside* panel.
    Inside(super::inside::InsideCommand),
}

/// A change the user asked for, addressed to the feature that owns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// See [`DocCommand`].
    Doc(DocCommand),
    /// See [`FileCommand`].
    File(FileCommand),
    /// See [`ViewCommand`].
    View(ViewCommand),
    /// See [`AnalysisCommand`].
    Analysis(AnalysisCommand),
    /// Something for the UCI engine panel (start, stop, its settings).
    Uci(super::uci_panel::UciCommand),
    /// Something for model B, the second model beside the loaded one (open, close, its margin).
    Compare(super::compare_model::CompareCommand),
    /// Something for the game against the model (its choices, start, resign, stop).
    Play(super::play::PlayCommand),
}

impl From<DocCommand> for Command {
    fn from(c: DocCommand) -> Command {
        Command::Doc(c)
    }
}

impl From<FileCommand> for Command {
    fn from(c: FileCommand) -> Command {
        Command::File(c)
    }
}

impl From<ViewCommand> for Command {
    fn from(c: ViewCommand) -> Command {
        Command::View(c)
    }
}

impl From<AnalysisCommand> for Command {
    fn from(c: AnalysisCommand) -> Command {
        Command::Analysis(c)
    }
}
