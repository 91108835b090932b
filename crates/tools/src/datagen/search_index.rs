//! The labels of a render, indexed by position, for assembling search trees (paper §4) out of them.
//!
//! A search tree is linked by position, not by record: a node's label is whichever record holds its
//! position (by Zobrist hash), so a node that the labels run found already written elsewhere (and so did
//! not write again) is still found, and a tree node can root a smaller tree of its own. A node counts only
//! when its record is in the root's split, so no tree straddles train and validation.
//!
//! Each position keeps its moves in the order of [`search_order`] (best win probability first, equal
//! values in the label's order) with their 64-bucket values; that is the order traces list them in, so
//! the trace format's expansion (best buckets, equal buckets in listing order) takes exactly the moves
//! the labels run expanded. About 10 bytes per move are held: some 300 bytes per position.

use std::collections::HashMap;

use super::record::{LabelRecord, Split};
use super::render::{RenderError, label_state};
use super::tree::search_order;
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::mav::buckets::Buckets;
use crate::mav::trace::{NodeEval, SearchNode};

/// One indexed position: its split and its moves with their buckets, in listing order.
#[derive(Debug, Clone)]
struct Entry {
    split: Split,
    moves: Box<[(shakmaty::Move, u8)]>,
}

/// Labels by position (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    entries: HashMap<u64, Entry>,
}

impl SearchIndex {
    /// An empty index.
    pub fn new() -> SearchIndex {
        SearchIndex::default()
    }

    /// Positions indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Indexes a label. The first label of a position wins (render reads label folders in the order
    /// given); a label whose position or moves do not parse is an error and is left out.
    pub fn add(&mut self, rec: &LabelRecord) -> Result<(), RenderError> {
        let state = label_state(rec)?;
        let hash = state.hash64();
        if self.entries.contains_key(&hash) {
            return Ok(());
        }
        let buckets = Buckets::mav();
        let bad = |reason: String| RenderError::Label { fen: rec.fen.clone(), reason };
        let moves = search_order(&rec.moves)
            .into_iter()
            .map(|i| {
                let m = &rec.moves[i];
                let action = state.parse_action(&m.uci).map_err(|e| bad(e.to_string()))?;
                let b = buckets.bucket_of(m.score.win_probability()).map_err(|e| bad(e.to_string()))?;
                Ok((action, u8::try_from(b).map_err(|_| bad(format!("bucket {b} out of range")))?))
            })
            .collect::<Result<Box<[_]>, RenderError>>()?;
        self.entries.insert(hash, Entry { split: rec.split, moves });
        Ok(())
    }

    /// The number of legal moves labelled for `state`, if it is indexed.
    pub fn moves_of(&self, state: &ChessState) -> Option<usize> {
        self.entries.get(&state.hash64()).map(|e| e.moves.len())
    }

    /// The minimax tree below `root` with `breadth` children per node, `depth` plies deep, every value
    /// from the labels: `None` unless every unfinished node of it is labelled in `split`. Finished games
    /// are leaves without an evaluation (a trace values them by their result). Each node lists its moves
    /// best first with its best-valued move as the best action.
    pub fn tree(
        &self,
        root: &ChessState,
        split: Split,
        breadth: u32,
        depth: u32,
    ) -> Option<SearchNode<ChessState>> {
        if root.outcome().is_some() {
            return Some(SearchNode {
                state: root.clone(),
                eval: NodeEval { values: Vec::new(), best: None },
                children: Vec::new(),
            });
        }
        let entry = self.entries.get(&root.hash64()).filter(|e| e.split == split)?;
        let values: Vec<(shakmaty::Move, u32)> =
            entry.moves.iter().map(|&(a, b)| (a, u32::from(b))).collect();
        let eval = NodeEval { best: values.first().map(|v| v.0), values };
        let mut children = Vec::new();
        if depth > 0 {
            for a in crate::mav::trace::expansion(&eval.values, breadth) {
                let next = root.play(a).ok()?;
                children.push((a, self.tree(&next, split, breadth, depth - 1)?));
            }
        }
        Some(SearchNode { state: root.clone(), eval, children })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::MoveLabel;
    use crate::datagen::score::LabelScore;
    use crate::game::fen::ModeChoice;

    /// A label of `fen` where the moves in `scores` get those centipawns and the others -300.
    fn label(fen: &str, scores: &[(&str, i32)], split: Split) -> LabelRecord {
        let s = ChessState::from_fen_mode(fen, ModeChoice::Standard).expect("fen");
        let moves: Vec<MoveLabel> = s
            .legal_actions()
            .into_iter()
            .map(|a| {
                let uci = s.action_to_text(a);
                let cp = scores.iter().find(|(m, _)| *m == uci).map_or(-300, |x| x.1);
                MoveLabel { uci, score: LabelScore::Cp(cp) }
            })
            .collect();
        LabelRecord {
            game: crate::datagen::record::LabelGame::Chess,
            fen: s.fen(),
            chess960: false,
            best: moves[0].uci.clone(),
            moves,
            depth: 1,
            nodes: 1,
            source: "t".into(),
            ply: 0,
            split,
            search_path: Vec::new(),
        }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const D4: &str = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";

    #[test]
    fn a_tree_needs_every_expanded_child_in_the_root_split() {
        let mut index = SearchIndex::new();
        index.add(&label(START, &[("e2e4", 40), ("d2d4", 35)], Split::Train)).expect("root");
        index.add(&label(E4, &[], Split::Train)).expect("e4");
        let root = ChessState::from_fen_mode(START, ModeChoice::Standard).expect("fen");
        assert!(index.tree(&root, Split::Train, 1, 1).is_some());
        assert!(index.tree(&root, Split::Train, 2, 1).is_none(), "d4 is not labelled");
        index.add(&label(D4, &[], Split::Val)).expect("d4");
        assert!(index.tree(&root, Split::Train, 2, 1).is_none(), "d4 is in the other split");
        assert!(index.tree(&root, Split::Val, 1, 0).is_none(), "the root is in train");
        let mut index2 = index.clone();
        index2.entries.retain(|_, e| e.split == Split::Train);
        index2.add(&label(D4, &[], Split::Train)).expect("d4");
        let tree = index2.tree(&root, Split::Train, 2, 1).expect("both children");
        let kids: Vec<String> = tree.children.iter().map(|(a, _)| root.action_to_text(*a)).collect();
        assert_eq!(kids, ["e2e4", "d2d4"]);
        assert_eq!(tree.eval.best.map(|a| root.action_to_text(a)).as_deref(), Some("e2e4"));
        assert!(tree.eval.values.windows(2).all(|w| w[0].1 >= w[1].1), "listed best first");
        assert_eq!(index2.moves_of(&root), Some(20));
        assert!(tree.children.iter().all(|(_, c)| c.children.is_empty() && c.eval.values.len() == 20));
    }

    #[test]
    fn the_first_label_of_a_position_wins_and_bad_labels_are_refused() {
        let mut index = SearchIndex::new();
        index.add(&label(START, &[("e2e4", 40)], Split::Train)).expect("first");
        index.add(&label(START, &[("d2d4", 900)], Split::Val)).expect("second");
        let root = ChessState::from_fen_mode(START, ModeChoice::Standard).expect("fen");
        let tree = index.tree(&root, Split::Train, 1, 0).expect("indexed in train");
        assert_eq!(tree.eval.best.map(|a| root.action_to_text(a)).as_deref(), Some("e2e4"));
        assert_eq!(index.len(), 1);
        let mut bad = label(E4, &[], Split::Train);
        bad.moves[0].uci = "e2e4".into();
        assert!(index.add(&bad).is_err());
        assert_eq!(index.len(), 1);
    }
}
