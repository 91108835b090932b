//! The game tree of one PGN game: headers, start position, and an arena of move nodes with variations,
//! comments and NAGs.

use pgn_reader::Nag;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, EnPassantMode, FromSetup, Move, Outcome, Position};

use super::comment::{Comment, CommentError};
use super::variant::{StartError, start_position};
use crate::game::chess::ChessState;

/// Index of a node in a [`GameTree`]'s arena. The root (the start position, no move) is [`NodeId::ROOT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// The root node: the start position, before any move.
    pub const ROOT: NodeId = NodeId(0);

    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A move as it appears in the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRecord {
    /// The move token as read, parsed (it prints as `Nf3+`, `O-O`, `--`, or `g1f3` for UCI movetext;
    /// spelling variants such as `0-0` or `Z0` print in their standard form); for moves added through
    /// [`GameTree::add_move`], proper SAN with check suffix.
    pub san: SanPlus,
    /// The move, or `None` for a null move (`--`, `Z0`).
    pub mv: Option<Move>,
}

/// One node of the tree: the move that leads to it plus its annotations and continuations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    parent: Option<NodeId>,
    record: Option<MoveRecord>,
    comments_before: Vec<Comment>,
    comments_after: Vec<Comment>,
    nags: Vec<Nag>,
    children: Vec<NodeId>,
    removed: bool,
}

impl Node {
    fn new(parent: Option<NodeId>, record: Option<MoveRecord>) -> Node {
        Node {
            parent,
            record,
            comments_before: Vec::new(),
            comments_after: Vec::new(),
            nags: Vec::new(),
            children: Vec::new(),
            removed: false,
        }
    }

    /// The parent node (`None` for the root).
    pub fn parent(&self) -> Option<NodeId> {
        self.parent
    }

    /// The move leading to this node (`None` for the root).
    pub fn record(&self) -> Option<&MoveRecord> {
        self.record.as_ref()
    }

    /// The move leading here (`None` for the root and for null moves).
    pub fn mv(&self) -> Option<Move> {
        self.record.as_ref().and_then(|r| r.mv)
    }

    /// The move token as read (`None` for the root).
    pub fn san(&self) -> Option<SanPlus> {
        self.record.as_ref().map(|r| r.san)
    }

    /// The move token as text (`None` for the root).
    pub fn san_text(&self) -> Option<String> {
        self.san().map(|s| s.to_string())
    }

    /// Whether the move leading here is a null move.
    pub fn is_null_move(&self) -> bool {
        self.record.as_ref().is_some_and(|r| r.mv.is_none())
    }

    /// Comments written before the move (at the start of a variation).
    pub fn comments_before(&self) -> &[Comment] {
        &self.comments_before
    }

    /// Comments written after the move. On the root: the comments before the first move (game comment).
    pub fn comments_after(&self) -> &[Comment] {
        &self.comments_after
    }

    /// Numeric annotation glyphs after the move (`!` is `$1`, `?` is `$2`, ...).
    pub fn nags(&self) -> &[Nag] {
        &self.nags
    }

    /// The continuations in order: the first is the main line, the others are variations.
    pub fn children(&self) -> &[NodeId] {
        &self.children
    }

    pub(crate) fn comments_before_mut(&mut self) -> &mut Vec<Comment> {
        &mut self.comments_before
    }

    pub(crate) fn comments_after_mut(&mut self) -> &mut Vec<Comment> {
        &mut self.comments_after
    }

    pub(crate) fn nags_mut(&mut self) -> &mut Vec<Nag> {
        &mut self.nags
    }
}

/// Why an operation on a [`GameTree`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// The node id is not (or no longer) in this tree.
    #[error("node {0} is not in this game tree (it was deleted or belongs to another tree)")]
    NoSuchNode(usize),
    /// The operation needs a move node but got the root.
    #[error("the root node has no move; pick a move node")]
    RootHasNoMove,
    /// The move is not legal in the node's position.
    #[error("{uci} is not a legal move in the position {fen}")]
    IllegalMove {
        /// The move in UCI notation.
        uci: String,
        /// The position.
        fen: String,
    },
    /// A null move was played while the side to move is in check.
    #[error("a null move is not possible while in check (position {fen})")]
    NullMoveInCheck {
        /// The position.
        fen: String,
    },
    /// The comment text is not storable.
    #[error(transparent)]
    Comment(#[from] CommentError),
    /// The start headers are invalid.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// One game: headers in file order, the start position, the move tree and the result.
///
/// Two trees compare equal when headers, start position, result and the move trees (moves, comments,
/// NAGs, order of variations) are equal; arena layout and the kept source text do not matter.
#[derive(Debug, Clone)]
pub struct GameTree {
    headers: Vec<(String, String)>,
    start: ChessState,
    nodes: Vec<Node>,
    result: Outcome,
    source: Option<String>,
    leading: Option<String>,
    additions: Vec<(NodeId, Addition)>,
}

/// An annotation appended to a game that kept its source (see [`GameTree::append_comment`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addition {
    /// A comment appended after the node's existing comments.
    Comment(Comment),
    /// A NAG appended after the node's existing NAGs.
    Nag(Nag),
}

impl Default for GameTree {
    fn default() -> Self {
        GameTree::new()
    }
}

impl GameTree {
    /// An empty game from the standard start position, with no headers and result `*`.
    pub fn new() -> GameTree {
        GameTree::from_start(Vec::new(), ChessState::startpos())
    }

    /// An empty game with the given headers; the start position comes from their `Variant` and `FEN`.
    pub fn with_headers(headers: Vec<(String, String)>) -> Result<GameTree, TreeError> {
        let variant = find_header(&headers, "Variant");
        let fen = find_header(&headers, "FEN");
        let start = start_position(variant, fen)?;
        Ok(GameTree::from_start(headers, start))
    }

    /// An empty game from `start` with the given headers, taken as they are (no `FEN` header is read or
    /// written: the caller keeps them consistent).
    pub fn from_start(headers: Vec<(String, String)>, start: ChessState) -> GameTree {
        GameTree {
            headers,
            start,
            nodes: vec![Node::new(None, None)],
            result: Outcome::Unknown,
            source: None,
            leading: None,
            additions: Vec::new(),
        }
    }

    // ----- headers, start, result, source -----

    /// All headers in file order (names may repeat if the file repeats them).
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The value of the first header called `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// Sets a header (replacing the first one of that name, else appending). Does not change the start
    /// position; use [`GameTree::with_headers`] for a new game from a FEN.
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.source = None;
        match self.headers.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value.to_owned(),
            None => self.headers.push((name.to_owned(), value.to_owned())),
        }
    }

    /// The start position (standard or Chess960 castling, from the headers).
    pub fn start(&self) -> &ChessState {
        &self.start
    }

    /// The game termination written after the moves (`1-0`, `0-1`, `1/2-1/2` or `*`).
    pub fn result(&self) -> Outcome {
        self.result
    }

    /// Sets the game termination (does not touch the `Result` header).
    pub fn set_result(&mut self, result: Outcome) {
        self.source = None;
        self.result = result;
    }

    /// The exact text the game was read from, kept while the tree is unmodified or only annotated through
    /// [`GameTree::append_comment`] / [`GameTree::append_nag`] (every other edit drops it).
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The annotations appended since reading, in order, while the source is kept.
    pub fn additions(&self) -> &[(NodeId, Addition)] {
        if self.source.is_some() { &self.additions } else { &[] }
    }

    /// What stood in the file between the previous game and this one (blank lines, a byte-order mark,
    /// `%` escape lines), kept with the source so that [`write_games`](super::writer::write_games)
    /// reproduces a whole unmodified file.
    pub fn leading_text(&self) -> Option<&str> {
        self.source.as_ref().and(self.leading.as_deref())
    }

    pub(crate) fn set_source(&mut self, source: Option<String>, leading: Option<String>) {
        self.source = source;
        self.leading = leading;
        self.additions.clear();
    }

    // ----- nodes -----

    /// The node with this id, if it is in the tree.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index()).filter(|n| !n.removed)
    }

    fn node_mut(&mut self, id: NodeId) -> Result<&mut Node, TreeError> {
        match self.nodes.get_mut(id.index()) {
            Some(n) if !n.removed => Ok(n),
            _ => Err(TreeError::NoSuchNode(id.index())),
        }
    }

    fn get(&self, id: NodeId) -> Result<&Node, TreeError> {
        self.node(id).ok_or(TreeError::NoSuchNode(id.index()))
    }

    /// The root node (start position).
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// Number of live move nodes (excluding the root).
    pub fn move_count(&self) -> usize {
        self.nodes.iter().skip(1).filter(|n| !n.removed).count()
    }

    /// The main line: the first child of the root, its first child, and so on (root excluded).
    pub fn mainline(&self) -> Mainline<'_> {
        Mainline { tree: self, at: NodeId::ROOT }
    }

    /// The node ids from the root's first child to `id` (empty for the root).
    pub fn path_to(&self, id: NodeId) -> Result<Vec<NodeId>, TreeError> {
        let mut path = Vec::new();
        let mut at = id;
        while let Some(parent) = self.get(at)?.parent {
            path.push(at);
            at = parent;
        }
        path.reverse();
        Ok(path)
    }

    /// Whether `id` lies on the main line (the root does).
    pub fn is_mainline(&self, id: NodeId) -> Result<bool, TreeError> {
        let mut at = id;
        while let Some(parent) = self.get(at)?.parent {
            if self.get(parent)?.children.first() != Some(&at) {
                return Ok(false);
            }
            at = parent;
        }
        Ok(true)
    }

    /// The position after the move of `id` (the start position for the root).
    pub fn position_at(&self, id: NodeId) -> Result<ChessState, TreeError> {
        let mut pos = self.start.position().clone();
        for step in self.path_to(id)? {
            let mv = self.get(step)?.mv();
            pos = play(pos, mv, self.start.castling_mode())?;
        }
        Ok(ChessState::new(pos, self.start.castling_mode()))
    }

    /// The positions along the main line: the start position, then the position after each move.
    pub fn mainline_positions(&self) -> Result<Vec<(NodeId, ChessState)>, TreeError> {
        let mode = self.start.castling_mode();
        let mut out = vec![(NodeId::ROOT, self.start.clone())];
        let mut pos = self.start.position().clone();
        for id in self.mainline() {
            pos = play(pos, self.get(id)?.mv(), mode)?;
            out.push((id, ChessState::new(pos.clone(), mode)));
        }
        Ok(out)
    }

    // ----- building and editing -----

    /// Appends a child with the given move record without checking legality (for the reader, which has
    /// already checked it).
    pub(crate) fn push_child(&mut self, parent: NodeId, record: MoveRecord) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(Node::new(Some(parent), Some(record)));
        self.nodes[parent.index()].children.push(id);
        id
    }

    pub(crate) fn node_mut_unchecked(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }

    /// Plays `mv` after `parent`: returns the existing child with that move, or adds it as a new last
    /// variation (the main line if `parent` had no continuation).
    pub fn add_move(&mut self, parent: NodeId, mv: Move) -> Result<NodeId, TreeError> {
        let pos = self.position_at(parent)?;
        if let Some(&existing) =
            self.get(parent)?.children.iter().find(|c| self.nodes[c.index()].mv() == Some(mv))
        {
            return Ok(existing);
        }
        if !pos.position().is_legal(mv) {
            return Err(TreeError::IllegalMove {
                uci: mv.to_uci(pos.castling_mode()).to_string(),
                fen: pos.fen(),
            });
        }
        let san = SanPlus::from_move(pos.position().clone(), mv);
        self.source = None;
        Ok(self.push_child(parent, MoveRecord { san, mv: Some(mv) }))
    }

    /// Adds a null move after `parent` (or returns the existing one); refused while in check.
    pub fn add_null_move(&mut self, parent: NodeId) -> Result<NodeId, TreeError> {
        let pos = self.position_at(parent)?;
        if let Some(&existing) =
            self.get(parent)?.children.iter().find(|c| self.nodes[c.index()].is_null_move())
        {
            return Ok(existing);
        }
        if pos.position().is_check() {
            return Err(TreeError::NullMoveInCheck { fen: pos.fen() });
        }
        self.source = None;
        Ok(self.push_child(
            parent,
            MoveRecord { san: SanPlus { san: shakmaty::san::San::Null, suffix: None }, mv: None },
        ))
    }

    /// Moves the variation starting at `id` one place up among its siblings (to the main line if it was
    /// the first variation). Does nothing for a node that already is the first child.
    pub fn promote(&mut self, id: NodeId) -> Result<(), TreeError> {
        let parent = self.get(id)?.parent.ok_or(TreeError::RootHasNoMove)?;
        let siblings = &mut self.node_mut(parent)?.children;
        if let Some(i) = siblings.iter().position(|&c| c == id)
            && i > 0
        {
            siblings.swap(i, i - 1);
            self.source = None;
        }
        Ok(())
    }

    /// Makes `id` the main continuation at every level from the root down to it.
    pub fn promote_to_mainline(&mut self, id: NodeId) -> Result<(), TreeError> {
        for step in self.path_to(id)? {
            let parent = self.get(step)?.parent.ok_or(TreeError::RootHasNoMove)?;
            let siblings = &mut self.node_mut(parent)?.children;
            if let Some(i) = siblings.iter().position(|&c| c == step)
                && i > 0
            {
                let moved = siblings.remove(i);
                siblings.insert(0, moved);
                self.source = None;
            }
        }
        Ok(())
    }

    /// Deletes the node `id` and everything after it (the whole variation from that move on).
    pub fn delete(&mut self, id: NodeId) -> Result<(), TreeError> {
        let parent = self.get(id)?.parent.ok_or(TreeError::RootHasNoMove)?;
        self.node_mut(parent)?.children.retain(|&c| c != id);
        let mut stack = vec![id];
        while let Some(at) = stack.pop() {
            let node = &mut self.nodes[at.index()];
            node.removed = true;
            stack.extend(node.children.iter().copied());
        }
        self.source = None;
        Ok(())
    }

    /// Appends a comment after the existing comments of `id` (on the root: before the first move).
    /// Unlike the replacing setters this keeps the source, so the writer can insert just the new text
    /// into the original bytes (for game review).
    pub fn append_comment(&mut self, id: NodeId, comment: Comment) -> Result<(), TreeError> {
        self.node_mut(id)?.comments_after.push(comment.clone());
        if self.source.is_some() {
            self.additions.push((id, Addition::Comment(comment)));
        }
        Ok(())
    }

    /// Appends a NAG after the existing NAGs of `id`, keeping the source (see [`GameTree::append_comment`]).
    pub fn append_nag(&mut self, id: NodeId, nag: Nag) -> Result<(), TreeError> {
        self.node_mut(id)?.nags.push(nag);
        if self.source.is_some() {
            self.additions.push((id, Addition::Nag(nag)));
        }
        Ok(())
    }

    /// Replaces the comments after the move of `id` by one comment (or none when `text` is empty).
    pub fn set_comment(&mut self, id: NodeId, text: &str) -> Result<(), TreeError> {
        let comments = if text.is_empty() { Vec::new() } else { vec![Comment::new(text)?] };
        self.set_comments_after(id, comments)
    }

    /// Replaces all comments after the move of `id`.
    pub fn set_comments_after(&mut self, id: NodeId, comments: Vec<Comment>) -> Result<(), TreeError> {
        self.node_mut(id)?.comments_after = comments;
        self.source = None;
        Ok(())
    }

    /// Replaces all comments before the move of `id`.
    pub fn set_comments_before(&mut self, id: NodeId, comments: Vec<Comment>) -> Result<(), TreeError> {
        self.node_mut(id)?.comments_before = comments;
        self.source = None;
        Ok(())
    }

    /// Replaces the NAGs of `id`.
    pub fn set_nags(&mut self, id: NodeId, nags: Vec<Nag>) -> Result<(), TreeError> {
        self.node_mut(id)?.nags = nags;
        self.source = None;
        Ok(())
    }

    fn same_subtree(&self, a: NodeId, other: &GameTree, b: NodeId) -> bool {
        let (x, y) = (&self.nodes[a.index()], &other.nodes[b.index()]);
        x.record == y.record
            && x.comments_before == y.comments_before
            && x.comments_after == y.comments_after
            && x.nags == y.nags
            && x.children.len() == y.children.len()
            && x.children.iter().zip(&y.children).all(|(&ca, &cb)| self.same_subtree(ca, other, cb))
    }
}

impl PartialEq for GameTree {
    fn eq(&self, other: &GameTree) -> bool {
        self.headers == other.headers
            && self.start == other.start
            && self.result == other.result
            && self.same_subtree(NodeId::ROOT, other, NodeId::ROOT)
    }
}

impl Eq for GameTree {}

/// The position after `mv` (`None` = a null move) from `pos`, which must be legal there.
pub(crate) fn play(pos: Chess, mv: Option<Move>, mode: shakmaty::CastlingMode) -> Result<Chess, TreeError> {
    match mv {
        Some(m) => {
            if !pos.is_legal(m) {
                let fen = shakmaty::fen::Fen::from_position(&pos, EnPassantMode::Legal).to_string();
                return Err(TreeError::IllegalMove { uci: m.to_uci(mode).to_string(), fen });
            }
            let mut next = pos;
            next.play_unchecked(m);
            Ok(next)
        }
        None => null_move(pos, mode),
    }
}

/// The position after a null move: the other side to move, clocks advanced, no en passant.
pub(crate) fn null_move(pos: Chess, mode: shakmaty::CastlingMode) -> Result<Chess, TreeError> {
    let fen = || shakmaty::fen::Fen::from_position(&pos, EnPassantMode::Legal).to_string();
    if pos.is_check() {
        return Err(TreeError::NullMoveInCheck { fen: fen() });
    }
    let mut setup = pos.to_setup(EnPassantMode::Legal);
    if setup.turn == Color::Black {
        setup.fullmoves = setup.fullmoves.saturating_add(1);
    }
    setup.halfmoves = setup.halfmoves.saturating_add(1);
    setup.swap_turn();
    Chess::from_setup(setup, mode).map_err(|_| TreeError::NullMoveInCheck { fen: fen() })
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Iterator over the main line's node ids (root excluded); see [`GameTree::mainline`].
#[derive(Debug, Clone)]
pub struct Mainline<'a> {
    tree: &'a GameTree,
    at: NodeId,
}

impl Iterator for Mainline<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        let next = *self.tree.node(self.at)?.children.first()?;
        self.at = next;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;

    fn uci(tree: &GameTree, at: NodeId, text: &str) -> Move {
        tree.position_at(at).expect("node").parse_action(text).expect("legal")
    }

    #[test]
    fn edit_operations() {
        let mut t = GameTree::new();
        let e4 = t.add_move(NodeId::ROOT, uci(&t, NodeId::ROOT, "e2e4")).expect("legal");
        let e5 = t.add_move(e4, uci(&t, e4, "e7e5")).expect("legal");
        let c5 = t.add_move(e4, uci(&t, e4, "c7c5")).expect("legal");
        assert_eq!(t.add_move(e4, uci(&t, e4, "c7c5")).expect("exists"), c5);
        assert_eq!(t.node(c5).and_then(Node::san_text).as_deref(), Some("c5"));
        assert_eq!(t.mainline().collect::<Vec<_>>(), vec![e4, e5]);
        assert!(!t.is_mainline(c5).expect("node"));
        t.promote(c5).expect("node");
        assert_eq!(t.mainline().collect::<Vec<_>>(), vec![e4, c5]);
        t.set_comment(c5, "Sicilian").expect("node");
        t.set_nags(c5, vec![Nag::GOOD_MOVE]).expect("node");
        assert_eq!(t.node(c5).map(|n| n.comments_after()[0].raw()), Some("Sicilian"));
        assert!(t.set_comment(c5, "bad } brace").is_err());
        t.delete(c5).expect("node");
        assert!(t.node(c5).is_none());
        assert_eq!(t.mainline().collect::<Vec<_>>(), vec![e4, e5]);
        assert_eq!(t.move_count(), 2);
        let f3 = t.add_move(e5, uci(&t, e5, "g1f3")).expect("legal");
        t.promote_to_mainline(f3).expect("node");
        let fen = t.position_at(f3).expect("node").fen();
        assert_eq!(fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
        let null = t.add_null_move(f3).expect("not in check");
        assert_eq!(
            t.position_at(null).expect("node").fen(),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        );
        let bad = t.position_at(NodeId::ROOT).expect("root").parse_action("e2e4").expect("legal");
        assert!(matches!(t.add_move(e4, bad), Err(TreeError::IllegalMove { .. })));
    }
}
