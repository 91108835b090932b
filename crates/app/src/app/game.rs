//! The game being analysed: a PGN game tree (variations, comments, NAGs, headers) with a cursor.
//!
//! The board follows one line of the tree at a time: the path from the start to the selected move, then on
//! through first continuations. [`GameDoc`] implements [`MoveHistory`] over that line, so navigation, the
//! engine glue and the board need not know about variations; the move tree panel selects nodes anywhere.

use shakmaty::Move;

use super::game_review::DocStamp;
use super::line::{LineMove, MoveHistory};
use crate::game::chess::ChessState;
use crate::game::{ActionError, GameState};
use crate::pgn::{GameTree, Nag, NodeId, TreeError, WriteOptions, game_to_string};
use crate::review::error::ReviewError;
use crate::review::report::GameReview;

/// A game tree, the line the board follows through it, and the cursor on that line.
#[derive(Debug, Clone)]
pub struct GameDoc {
    tree: GameTree,
    /// `nodes[i]` is the node of the line's move i + 1.
    nodes: Vec<NodeId>,
    moves: Vec<LineMove>,
    /// `states[i]` is the position after i moves of the line; `states[0]` is the start.
    states: Vec<ChessState>,
    cursor: usize,
    modified: bool,
    /// Counts the changes to the game's content (moves added, comments, NAGs, headers, annotations).
    revision: u64,
    /// This document's identity and move-structure version (see [`GameDoc::stamp`]).
    stamp: DocStamp,
}

/// The Seven Tag Roster of a new game, in the standard's order, with its placeholders.
pub const SEVEN_TAG_ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Identities of documents, so a review of one game is never shown on another.
static NEXT_DOC: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Default for GameDoc {
    fn default() -> Self {
        GameDoc::new(ChessState::startpos())
    }
}

impl GameDoc {
    /// An empty game from `start`, with the Seven Tag Roster the PGN export format asks of every game
    /// (`?` where unknown), then `Variant`/`SetUp`/`FEN` when it does not start from the start position.
    pub fn new(start: ChessState) -> GameDoc {
        let mut headers: Vec<(String, String)> =
            SEVEN_TAG_ROSTER.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
        if start != ChessState::startpos() {
            if start.castling_mode() == shakmaty::CastlingMode::Chess960 {
                headers.push(("Variant".to_owned(), "Chess960".to_owned()));
            }
            headers.push(("SetUp".to_owned(), "1".to_owned()));
            headers.push(("FEN".to_owned(), start.to_text()));
        }
        GameDoc::from_tree(GameTree::from_start(headers, start))
    }

    /// A game read from PGN, with the cursor at its start.
    pub fn from_tree(tree: GameTree) -> GameDoc {
        let mut doc = GameDoc {
            states: vec![tree.start().clone()],
            tree,
            nodes: Vec::new(),
            moves: Vec::new(),
            cursor: 0,
            modified: false,
            revision: 0,
            stamp: DocStamp {
                doc: NEXT_DOC.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                structure: 0,
            },
        };
        doc.select(NodeId::ROOT);
        doc
    }

    /// The game tree.
    pub fn tree(&self) -> &GameTree {
        &self.tree
    }

    /// Whether the game changed since it was opened or saved.
    pub fn is_modified(&self) -> bool {
        self.modified
    }

    /// Which document this is and the version of its move structure: a review made for one stamp applies
    /// to the document as long as the stamp is unchanged (new moves keep it; deleting or reordering moves
    /// bumps it).
    pub fn stamp(&self) -> DocStamp {
        self.stamp
    }

    /// Writes a review into the game (NAGs on classified moves, `[%eval]` and the best move in comments,
    /// a summary before the first move), exactly as `mavboard annotate` does.
    pub fn annotate(&mut self, review: &GameReview, model: &str) -> Result<(), ReviewError> {
        crate::review::annotate::annotate(&mut self.tree, review, model)?;
        self.changed();
        Ok(())
    }

    /// Sets a header (the players' names of a game played in the app, its `Result`).
    pub fn set_header(&mut self, name: &str, value: &str) {
        if self.tree.header(name) != Some(value) {
            self.tree.set_header(name, value);
            self.changed();
        }
    }

    /// Ends the game with `result` (`1-0`, `0-1`, `1/2-1/2`): the `Result` header and the termination
    /// written after the moves. Text that is no result is ignored.
    pub fn set_result(&mut self, result: &str) {
        let Ok(outcome) = result.parse::<shakmaty::Outcome>() else { return };
        if self.tree.result() != outcome {
            self.tree.set_result(outcome);
            self.changed();
        }
        self.set_header("Result", result);
    }

    /// Marks the game as saved.
    pub fn mark_saved(&mut self) {
        self.modified = false;
    }

    /// Marks the game as changed and not saved (a game brought back from the crash journal).
    pub fn mark_unsaved(&mut self) {
        self.changed();
    }

    /// How many changes the game's content has had since it was created or read (moves added, comments,
    /// NAGs, headers, annotations, variations reordered or deleted): a different number, a different game
    /// text. Navigation does not count.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Records a change of the game's content.
    fn changed(&mut self) {
        self.modified = true;
        self.revision += 1;
    }

    /// The node at the cursor (the root before the first move).
    pub fn current_node(&self) -> NodeId {
        self.cursor.checked_sub(1).and_then(|i| self.nodes.get(i).copied()).unwrap_or(NodeId::ROOT)
    }

    /// The last `n` positions of the line before the current one, oldest first (what a model that reads
    /// history is shown beside the current position).
    pub fn states_before(&self, n: usize) -> &[ChessState] {
        let cursor = self.cursor.min(self.states.len());
        &self.states[cursor.saturating_sub(n)..cursor]
    }

    /// The nodes of the line the board follows.
    pub fn line_nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// Puts the cursor on `id`; the line becomes the path to it and its first continuations. Unknown
    /// nodes select the start.
    pub fn select(&mut self, id: NodeId) {
        let mut path = self.tree.path_to(id).unwrap_or_default();
        let at = path.len();
        let mut next = id;
        while let Some(&child) = self.tree.node(next).and_then(|n| n.children().first()) {
            path.push(child);
            next = child;
        }
        self.nodes.clear();
        self.moves.clear();
        self.states.truncate(1);
        let start = self.tree.start().clone();
        let first_ply = first_ply(&start);
        let mut here = start;
        for (i, &node) in path.iter().enumerate() {
            // The board cannot show null moves: the line ends before one.
            let Some((mv, san)) = self.tree.node(node).and_then(|n| Some((n.mv()?, n.san_text()?))) else {
                break;
            };
            let Ok(after) = here.play(mv) else { break };
            self.nodes.push(node);
            self.moves.push(LineMove { mv, san, ply: first_ply + i as u32 });
            self.states.push(after.clone());
            here = after;
        }
        self.cursor = at.min(self.nodes.len());
    }

    /// Whether the cursor's next move has alternatives (a fork the ↑/↓ keys choose at).
    pub fn at_fork(&self) -> bool {
        self.tree.node(self.current_node()).is_some_and(|n| n.children().len() > 1)
    }

    /// At a fork, makes the next (`down`) or previous variation the line's continuation; the cursor stays.
    /// Returns whether the line changed.
    pub fn switch_variation(&mut self, down: bool) -> bool {
        let here = self.current_node();
        let Some(children) = self.tree.node(here).map(|n| n.children().to_vec()) else { return false };
        if children.len() < 2 {
            return false;
        }
        let next = self.nodes.get(self.cursor).copied();
        let i = next.and_then(|n| children.iter().position(|&c| c == n)).unwrap_or(0);
        let j = if down { (i + 1) % children.len() } else { (i + children.len() - 1) % children.len() };
        let cursor = self.cursor;
        self.select(children[j]);
        self.cursor = cursor;
        true
    }

    /// Moves the variation of `id` one place up (to the main line if it was the first variation).
    pub fn promote(&mut self, id: NodeId) -> Result<(), TreeError> {
        self.tree.promote(id)?;
        self.edited();
        Ok(())
    }

    /// Makes the line through `id` the main line.
    pub fn make_mainline(&mut self, id: NodeId) -> Result<(), TreeError> {
        self.tree.promote_to_mainline(id)?;
        self.edited();
        Ok(())
    }

    /// Deletes `id` and everything after it; the cursor goes to its parent if it was inside.
    pub fn delete(&mut self, id: NodeId) -> Result<(), TreeError> {
        let parent = self.tree.node(id).and_then(|n| n.parent()).ok_or(TreeError::RootHasNoMove)?;
        let current = self.current_node();
        let inside = self.tree.path_to(current).map(|p| p.contains(&id)).unwrap_or(false);
        self.tree.delete(id)?;
        self.changed();
        self.stamp.structure += 1;
        self.select(if inside { parent } else { current });
        Ok(())
    }

    /// Replaces the comment after the move of `id` (empty text removes it).
    pub fn set_comment(&mut self, id: NodeId, text: &str) -> Result<(), TreeError> {
        self.tree.set_comment(id, text)?;
        self.changed();
        Ok(())
    }

    /// Replaces the NAGs of `id`.
    pub fn set_nags(&mut self, id: NodeId, nags: Vec<Nag>) -> Result<(), TreeError> {
        self.tree.set_nags(id, nags)?;
        self.changed();
        Ok(())
    }

    /// The game as PGN text.
    pub fn to_pgn(&self) -> String {
        game_to_string(&self.tree, &WriteOptions::default())
    }

    /// After a change of variation order: the same node stays selected on its (new) line.
    fn edited(&mut self) {
        self.changed();
        self.stamp.structure += 1;
        let current = self.current_node();
        self.select(current);
    }
}

/// The ply number of the first move from `start` (1 for White's first move of a game).
pub fn first_ply(start: &ChessState) -> u32 {
    use shakmaty::Position;
    let pos = start.position();
    (pos.fullmoves().get() - 1) * 2 + if pos.turn().is_white() { 1 } else { 2 }
}

impl MoveHistory for GameDoc {
    fn start(&self) -> &ChessState {
        self.tree.start()
    }

    fn current(&self) -> &ChessState {
        &self.states[self.cursor]
    }

    fn cursor(&self) -> usize {
        self.cursor
    }

    fn moves(&self) -> &[LineMove] {
        &self.moves
    }

    fn go_to(&mut self, index: usize) {
        self.cursor = index.min(self.moves.len());
    }

    fn play(&mut self, mv: Move) -> Result<(), ActionError> {
        // Check legality with the rules first: their error is the one the user sees.
        self.current().play(mv)?;
        let here = self.current_node();
        let existing = self.tree.node(here).is_some_and(|n| {
            n.children().iter().any(|&c| self.tree.node(c).and_then(|n| n.mv()) == Some(mv))
        });
        let child = self.tree.add_move(here, mv).map_err(|e| ActionError::Illegal { text: e.to_string() })?;
        if !existing {
            self.changed();
        }
        if self.nodes.get(self.cursor) == Some(&child) {
            self.cursor += 1;
        } else {
            self.select(child);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::reader::read_all;

    fn doc(pgn: &str) -> GameDoc {
        let tree = read_all(pgn).into_iter().next().expect("one game").expect("parses");
        GameDoc::from_tree(tree)
    }

    fn mv(doc: &GameDoc, uci: &str) -> Move {
        doc.current().parse_action(uci).expect("legal")
    }

    fn sans(doc: &GameDoc) -> Vec<&str> {
        doc.moves().iter().map(|m| m.san.as_str()).collect()
    }

    #[test]
    fn a_new_game_has_the_seven_tag_roster_and_short_lines() {
        let mut d = GameDoc::default();
        // A long game: knights out and back, 40 moves.
        for i in 0..80 {
            let m = ["g1f3", "g8f6", "f3g1", "f6g8"][i % 4];
            d.play(mv(&d, m)).expect("legal");
        }
        let pgn = d.to_pgn();
        let tags: Vec<&str> = pgn.lines().take(7).collect();
        assert_eq!(
            tags,
            [
                "[Event \"?\"]",
                "[Site \"?\"]",
                "[Date \"????.??.??\"]",
                "[Round \"?\"]",
                "[White \"?\"]",
                "[Black \"?\"]",
                "[Result \"*\"]"
            ]
        );
        assert!(pgn.lines().all(|l| l.chars().count() < 80), "{pgn}");
        assert!(pgn.lines().count() > 10, "the movetext wraps: {pgn}");
        // A set-up position adds SetUp and FEN after the roster.
        let fen = "8/8/8/4k3/8/8/8/4K2R w K - 0 1";
        let d = GameDoc::new(ChessState::from_fen(fen).expect("FEN"));
        assert!(d.to_pgn().contains(&format!("[Result \"*\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]")));
    }

    #[test]
    fn the_line_follows_the_main_line_and_a_new_move_makes_a_variation() {
        let mut d = doc("1. e4 e5 2. Nf3 (2. Bc4 Nf6) 2... Nc6 *");
        assert_eq!(sans(&d), ["e4", "e5", "Nf3", "Nc6"]);
        assert_eq!(d.cursor(), 0);
        d.go_to(2);
        assert!(d.at_fork());
        // Playing the main move only advances.
        let nf3 = mv(&d, "g1f3");
        d.play(nf3).expect("legal");
        assert_eq!((d.cursor(), sans(&d)), (3, vec!["e4", "e5", "Nf3", "Nc6"]));
        assert!(!d.is_modified());
        // A new move at a fork becomes a variation and the line follows it.
        d.go_to(2);
        let d4 = mv(&d, "d2d4");
        d.play(d4).expect("legal");
        assert_eq!(sans(&d), ["e4", "e5", "d4"]);
        assert!(d.is_modified());
        assert_eq!(d.tree().node(NodeId::ROOT).map(|n| n.children().len()), Some(1));
        assert!(d.to_pgn().contains("(2. d4)"), "{}", d.to_pgn());
    }

    #[test]
    fn switching_variations_at_a_fork_keeps_the_cursor() {
        let mut d = doc("1. e4 e5 2. Nf3 (2. Bc4 Nf6) (2. f4) 2... Nc6 *");
        d.go_to(2);
        assert!(d.switch_variation(true));
        assert_eq!((d.cursor(), sans(&d)), (2, vec!["e4", "e5", "Bc4", "Nf6"]));
        assert!(d.switch_variation(true));
        assert_eq!(sans(&d), ["e4", "e5", "f4"]);
        assert!(d.switch_variation(true));
        assert_eq!(sans(&d), ["e4", "e5", "Nf3", "Nc6"]);
        assert!(d.switch_variation(false));
        assert_eq!(sans(&d), ["e4", "e5", "f4"]);
        d.go_to(1);
        assert!(!d.switch_variation(true));
    }

    #[test]
    fn promote_delete_and_annotate() {
        let mut d = doc("1. e4 e5 2. Nf3 (2. Bc4 Nf6) 2... Nc6 *");
        d.go_to(2);
        d.switch_variation(true);
        d.go_to(3);
        let bc4 = d.current_node();
        d.make_mainline(bc4).expect("promote");
        assert!(
            d.to_pgn().contains("2. Bc4 ( 2. Nf3 Nc6 ) 2... Nf6")
                || d.to_pgn().contains("2. Bc4 (2. Nf3 Nc6) 2... Nf6"),
            "{}",
            d.to_pgn()
        );
        assert_eq!(d.current_node(), bc4);
        d.set_comment(bc4, "the Bishop's Opening").expect("comment");
        d.set_nags(bc4, vec![Nag(1)]).expect("nag");
        let pgn = d.to_pgn();
        assert!(pgn.contains("Bc4!") || pgn.contains("Bc4 $1"), "{pgn}");
        assert!(pgn.contains("{ the Bishop's Opening }") || pgn.contains("{the Bishop's Opening}"), "{pgn}");
        d.delete(bc4).expect("delete");
        assert_eq!(sans(&d), ["e4", "e5", "Nf3", "Nc6"]);
        assert_eq!(d.cursor(), 2);
    }

    #[test]
    fn a_fen_start_is_kept_in_the_headers() {
        let start = ChessState::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").expect("fen");
        let mut d = GameDoc::new(start);
        let m = mv(&d, "a1a8");
        d.play(m).expect("mate");
        let pgn = d.to_pgn();
        assert!(pgn.contains("[FEN \"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\"]"), "{pgn}");
        assert!(pgn.contains("Ra8#"), "{pgn}");
        let again = doc(&pgn);
        assert_eq!(sans(&again), ["Ra8#"]);
    }
}
