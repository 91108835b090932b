//! One labelled position, as stored (one JSON object per line).

use serde::{Deserialize, Serialize};

use crate::uci::ScoreValue;

/// Which part of the data set a position belongs to (decided by its hash, so never both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Training data.
    Train,
    /// Validation data.
    Val,
}

/// One legal move and the engine's score after it, from the point of view of the side to move in the
/// labelled position. Stored as `{"uci":"e2e4","cp":31}` or `{"uci":"d1h5","mate":3}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveLabel {
    /// The move in UCI notation (Chess960 castling as king-takes-rook, `e1h1`).
    pub uci: String,
    /// Its score.
    #[serde(flatten)]
    pub score: ScoreValue,
}

/// A labelled position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRecord {
    /// The position (en-passant square only when a capture is legal; Chess960 castling in X-FEN or
    /// Shredder-FEN as shakmaty writes it).
    pub fen: String,
    /// Whether this is a Chess960 position (castling moves are then written king-takes-rook).
    pub chess960: bool,
    /// Every legal move with its score, best first (the engine's MultiPV order).
    pub moves: Vec<MoveLabel>,
    /// The engine's `bestmove`.
    pub best: String,
    /// The depth the engine reached.
    pub depth: u32,
    /// The nodes it searched.
    pub nodes: u64,
    /// Which position source the seed came from (e.g. `2moves_v1`).
    pub source: String,
    /// Plies played from the seed position (0 = the seed itself).
    pub ply: u32,
    /// Train or validation.
    pub split: Split,
    /// For a position labelled as a node of a search tree (`datagen labels --search-share`), the moves
    /// from the tree's root to it (UCI); empty for the positions of a continuation chain, and left out of
    /// the JSON then, so files without search trees read and write as before. The tree's root is a chain
    /// position; every node of a tree is in the root's split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search_path: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_layout() {
        let r = LabelRecord {
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            chess960: false,
            moves: vec![
                MoveLabel { uci: "e7e5".into(), score: ScoreValue::Cp(-25) },
                MoveLabel { uci: "f7f6".into(), score: ScoreValue::Mate(-7) },
            ],
            best: "e7e5".into(),
            depth: 6,
            nodes: 4321,
            source: "2moves_v1".into(),
            ply: 1,
            split: Split::Val,
            search_path: Vec::new(),
        };
        let json = serde_json::to_string(&r).expect("serializes");
        assert!(json.contains(r#""moves":[{"uci":"e7e5","cp":-25},{"uci":"f7f6","mate":-7}]"#), "{json}");
        assert!(json.contains(r#""split":"val""#) && json.contains(r#""chess960":false"#), "{json}");
        let back: LabelRecord = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, r);
        let bad = json.replace(r#""cp":-25"#, r#""pawns":-25"#);
        assert!(serde_json::from_str::<LabelRecord>(&bad).is_err());
        assert!(!json.contains("search_path"), "an empty path is left out: {json}");
        let node = LabelRecord { search_path: vec!["e7e5".into(), "g1f3".into()], ..r };
        let json = serde_json::to_string(&node).expect("serializes");
        assert!(json.ends_with(r#""search_path":["e7e5","g1f3"]}"#), "{json}");
        assert_eq!(serde_json::from_str::<LabelRecord>(&json).expect("parses"), node);
    }
}
