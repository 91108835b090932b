//! Search trees in a labels run (paper §4, internal search): which chain positions become tree roots, which
//! moves a tree expands, and labelling a tree's nodes.
//!
//! A chain position is a root when its hash, mixed with the run seed, falls in the `search_share` of
//! hashes ([`is_search_root`]): a pure function of the position and the seed, so the choice does not depend
//! on threads, chain order or resumption, and a position met twice is chosen both times or neither. A root
//! gets the positions after its `breadth` best moves labelled (best by the labels' win probability, equal
//! values in the engine's order: [`search_order`]), and for depth 2 the positions after *their* `breadth`
//! best moves. Finished games are not labelled (a trace values them by their result). Tree nodes are
//! ordinary records, written after their chain, depth first, each with its move path from the root
//! ([`LabelRecord::search_path`]) and the **root's split**, so a tree never straddles train and
//! validation (a node first written elsewhere keeps the record it got there, and `datagen render` leaves
//! such a node out of a tree whose root is in the other split).
//!
//! The order of [`search_order`] is the one `datagen render` lists the moves of a trace in, so the children
//! labelled here are exactly the children the trace format expands (its expansion takes the best buckets,
//! equal buckets in listing order).

use std::collections::HashMap;

use super::DatagenError;
use super::label::{Label, Labeler};
use super::record::{LabelRecord, MoveLabel};
use super::sample::mix64;
use crate::game::GameState;
use crate::game::chess::ChessState;

/// The most moves a tree expands per node.
pub const MAX_SEARCH_BREADTH: u32 = 5;
/// The most plies a tree reaches below its root.
pub const MAX_SEARCH_DEPTH: u32 = 2;

/// The indices of `moves`, best win probability first; equal values keep their order.
pub fn search_order(moves: &[MoveLabel]) -> Vec<usize> {
    let wp: Vec<f64> = moves.iter().map(|m| m.score.win_probability()).collect();
    let mut idx: Vec<usize> = (0..moves.len()).collect();
    idx.sort_by(|&a, &b| wp[b].total_cmp(&wp[a]));
    idx
}

/// Whether the position with `hash` roots a search tree in a run with `seed` labelling a `share` of
/// positions as roots.
pub fn is_search_root(hash: u64, seed: u64, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    // Salted apart from the train/validation split, so roots are not correlated with either split.
    let u = (mix64(hash ^ mix64(seed ^ 0x7EEE_5EA2_C400_0002)) >> 11) as f64 / (1u64 << 53) as f64;
    u < share
}

/// Labels `state`, or takes its label from `cache` (positions already labelled in the same chain).
pub fn cached_label<L: Labeler>(
    labeler: &mut L,
    state: &ChessState,
    cache: &mut HashMap<u64, Label>,
) -> Result<Label, DatagenError> {
    let hash = state.hash64();
    if let Some(l) = cache.get(&hash) {
        return Ok(l.clone());
    }
    let label = labeler.label(state)?;
    cache.insert(hash, label.clone());
    Ok(label)
}

/// Labels the search tree below `root` (whose record is `root_record`): every unfinished position after one
/// of the `breadth` best moves, `depth` plies deep, depth first. Returns the nodes with their hashes (the
/// root itself is not among them).
pub fn label_tree<L: Labeler>(
    labeler: &mut L,
    root: &ChessState,
    root_record: &LabelRecord,
    breadth: u32,
    depth: u32,
    cache: &mut HashMap<u64, Label>,
) -> Result<Vec<(u64, LabelRecord)>, DatagenError> {
    let mut walk = TreeWalk { labeler, root: root_record, breadth, path: Vec::new(), cache, out: Vec::new() };
    walk.expand(root, &root_record.moves, depth)?;
    Ok(walk.out)
}

/// The state of one [`label_tree`] walk: what stays the same from node to node, and what it gathers.
struct TreeWalk<'a, L: Labeler> {
    /// Labels the positions not in `cache`.
    labeler: &'a mut L,
    /// The root's record (source, ply, split and castling mode of every node).
    root: &'a LabelRecord,
    /// How many of each position's best moves are followed.
    breadth: u32,
    /// The moves from the root to the node being expanded.
    path: Vec<String>,
    /// Labels of the chain's positions, by hash.
    cache: &'a mut HashMap<u64, Label>,
    /// The nodes labelled so far, with their hashes.
    out: Vec<(u64, LabelRecord)>,
}

impl<L: Labeler> TreeWalk<'_, L> {
    /// Labels the children of `state` (whose labelled moves are `moves`) after its `breadth` best moves,
    /// and theirs, `left` plies deep.
    fn expand(&mut self, state: &ChessState, moves: &[MoveLabel], left: u32) -> Result<(), DatagenError> {
        if left == 0 {
            return Ok(());
        }
        for i in search_order(moves).into_iter().take(self.breadth as usize) {
            let uci = &moves[i].uci;
            let unplayable = |e: crate::game::ActionError| DatagenError::BadLabel {
                fen: state.fen(),
                reason: format!("its labelled move {uci} cannot be played: {e}"),
            };
            let action = state.parse_action(uci).map_err(unplayable)?;
            let child = state.play(action).map_err(unplayable)?;
            if child.outcome().is_some() || child.legal_actions().is_empty() {
                continue;
            }
            let label = cached_label(self.labeler, &child, self.cache)?;
            self.path.push(uci.clone());
            let root = self.root;
            let record = LabelRecord {
                game: crate::datagen::record::LabelGame::Chess,
                fen: child.fen(),
                chess960: root.chess960,
                moves: label.moves,
                best: label.best,
                depth: label.depth,
                nodes: label.nodes,
                source: root.source.clone(),
                ply: root.ply + self.path.len() as u32,
                split: root.split,
                search_path: self.path.clone(),
            };
            let child_moves = record.moves.clone();
            self.out.push((child.hash64(), record));
            self.expand(&child, &child_moves, left - 1)?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::Split;
    use crate::datagen::score::LabelScore;
    use crate::game::fen::ModeChoice;

    /// Scores every legal move by its index (the first move best) and counts its calls.
    struct Indexed {
        calls: usize,
    }

    impl Labeler for Indexed {
        fn name(&self) -> String {
            "indexed".into()
        }
        fn label(&mut self, state: &ChessState) -> Result<Label, DatagenError> {
            self.calls += 1;
            let moves: Vec<MoveLabel> = state
                .legal_actions()
                .into_iter()
                .enumerate()
                .map(|(i, a)| MoveLabel { uci: state.action_to_text(a), score: LabelScore::Cp(-(i as i32)) })
                .collect();
            Ok(Label { best: moves[0].uci.clone(), moves, depth: 1, nodes: 1 })
        }
    }

    fn m(uci: &str, score: LabelScore) -> MoveLabel {
        MoveLabel { uci: uci.into(), score }
    }

    #[test]
    fn order_is_by_win_probability_and_stable() {
        let moves = [
            m("a2a3", LabelScore::Cp(10)),
            m("b2b3", LabelScore::Mate(2)),
            m("c2c3", LabelScore::Cp(10)),
            m("d2d3", LabelScore::Mate(-1)),
            m("e2e4", LabelScore::Mate(5)),
        ];
        assert_eq!(search_order(&moves), [1, 4, 0, 2, 3]);
    }

    #[test]
    fn roots_are_a_seeded_share_of_hashes() {
        let roots =
            |seed| (0..20_000u64).filter(|h| is_search_root(mix64(*h), seed, 0.1)).collect::<Vec<_>>();
        let a = roots(1);
        assert!((1700..2300).contains(&a.len()), "{} of 20000", a.len());
        assert_eq!(a, roots(1));
        assert_ne!(a, roots(2));
        assert!(!is_search_root(5, 1, 0.0));
        assert!(is_search_root(5, 1, 1.0));
    }

    #[test]
    fn a_depth_two_tree_labels_the_best_moves_depth_first_in_the_root_split() {
        let root = ChessState::from_fen_mode(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            ModeChoice::Standard,
        )
        .expect("fen");
        let mut labeler = Indexed { calls: 0 };
        let mut cache = HashMap::new();
        let label = cached_label(&mut labeler, &root, &mut cache).expect("label");
        let record = LabelRecord {
            game: crate::datagen::record::LabelGame::Chess,
            fen: root.fen(),
            chess960: false,
            moves: label.moves.clone(),
            best: label.best,
            depth: 1,
            nodes: 1,
            source: "t".into(),
            ply: 3,
            split: Split::Val,
            search_path: Vec::new(),
        };
        let nodes = label_tree(&mut labeler, &root, &record, 2, 2, &mut cache).expect("tree");
        let paths: Vec<Vec<String>> = nodes.iter().map(|(_, r)| r.search_path.clone()).collect();
        let (a, b) = (&label.moves[0].uci, &label.moves[1].uci);
        assert_eq!(paths.len(), 6);
        assert_eq!(paths[0], std::slice::from_ref(a));
        assert_eq!(paths[3], std::slice::from_ref(b));
        assert_eq!(paths[1][0], *a);
        assert_eq!(paths[5][0], *b);
        for (hash, r) in &nodes {
            assert_eq!(r.split, Split::Val);
            assert_eq!(r.ply, 3 + r.search_path.len() as u32);
            let s = ChessState::from_fen_mode(&r.fen, ModeChoice::Standard).expect("node fen");
            assert_eq!(s.hash64(), *hash);
        }
        // Root + 6 nodes labelled once each; a second tree comes from the cache.
        assert_eq!(labeler.calls, 7);
        label_tree(&mut labeler, &root, &record, 2, 2, &mut cache).expect("tree");
        assert_eq!(labeler.calls, 7);
    }

    #[test]
    fn finished_games_are_not_labelled() {
        // White to move: Ra8 is mate; the tree keeps only unfinished children.
        let root = ChessState::from_fen_mode("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", ModeChoice::Standard)
            .expect("fen");
        let mut labeler = Indexed { calls: 0 };
        let mut cache = HashMap::new();
        let mut label = labeler.label(&root).expect("label");
        let mate = label.moves.iter().position(|m| m.uci == "a1a8").expect("a1a8 is legal");
        label.moves[mate].score = LabelScore::Mate(1);
        let record = LabelRecord {
            game: crate::datagen::record::LabelGame::Chess,
            fen: root.fen(),
            chess960: false,
            moves: label.moves,
            best: "a1a8".into(),
            depth: 1,
            nodes: 1,
            source: "t".into(),
            ply: 0,
            split: Split::Train,
            search_path: Vec::new(),
        };
        let nodes = label_tree(&mut labeler, &root, &record, 3, 1, &mut cache).expect("tree");
        assert_eq!(nodes.len(), 2, "{:?}", nodes.iter().map(|n| &n.1.search_path).collect::<Vec<_>>());
        assert!(nodes.iter().all(|(_, r)| r.search_path[0] != "a1a8"));
    }
}
