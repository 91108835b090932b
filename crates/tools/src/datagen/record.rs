//! One labelled position, as stored (one JSON object per line).

use serde::{Deserialize, Serialize};

use super::score::LabelScore;
use crate::game::GameKind;

/// Which part of the data set a position belongs to (decided by its hash, so never both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Training data.
    Train,
    /// Validation data.
    Val,
}

/// The game of a label. Absent from the JSON for chess (and Chess960, told apart by
/// [`LabelRecord::chess960`]), so chess labels read and write exactly as before games were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelGame {
    /// Chess or Chess960.
    #[default]
    Chess,
    /// Connect Four (7 × 6).
    ConnectFour,
    /// Hex (any size the rules take; the size is in the `%state` string).
    Hex,
}

impl LabelGame {
    /// Whether this is chess (the default, left out of the JSON).
    pub fn is_chess(&self) -> bool {
        *self == LabelGame::Chess
    }

    /// The game's name as the MAV header writes it (`chess` for Chess960 too).
    pub fn name(self) -> &'static str {
        match self {
            LabelGame::Chess => GameKind::Chess.name(),
            LabelGame::ConnectFour => GameKind::ConnectFour.name(),
            LabelGame::Hex => GameKind::Hex.name(),
        }
    }
}

/// One legal move and its score, from the point of view of the side to move in the labelled position.
/// Stored as `{"uci":"e2e4","cp":31}`, `{"uci":"d1h5","mate":3}`, `{"uci":"4","exact":{…}}` or
/// `{"uci":"c5","mcts":{…}}` (see [`LabelScore`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoveLabel {
    /// The move in the game's notation: UCI for chess (Chess960 castling as king-takes-rook, `e1h1`),
    /// the column `1`–`7` for Connect Four, the cell (`c5`) or `swap` for Hex.
    pub uci: String,
    /// Its score.
    #[serde(flatten)]
    pub score: LabelScore,
}

/// A labelled position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelRecord {
    /// The game (chess when absent).
    #[serde(default, skip_serializing_if = "LabelGame::is_chess")]
    pub game: LabelGame,
    /// The position: for chess its FEN (en-passant square only when a capture is legal; Chess960
    /// castling in X-FEN or Shredder-FEN as shakmaty writes it), for Connect Four and Hex its MAV
    /// `%state` string (which holds the side to move, and for Hex the board size and the swap rule).
    pub fen: String,
    /// Whether this is a Chess960 position (castling moves are then written king-takes-rook).
    pub chess960: bool,
    /// Every legal move with its score, best first (the engine's MultiPV order).
    pub moves: Vec<MoveLabel>,
    /// The engine's `bestmove` (the solver's best move for Connect Four and Hex).
    pub best: String,
    /// The depth the engine reached (0 for the solvers).
    pub depth: u32,
    /// The nodes it searched (the solver's positions searched; for a Hex MCTS label, its playouts).
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
    use crate::datagen::score::ExactResult;

    #[test]
    fn json_round_trip_and_layout() {
        let r = LabelRecord {
            game: LabelGame::Chess,
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            chess960: false,
            moves: vec![
                MoveLabel { uci: "e7e5".into(), score: LabelScore::Cp(-25) },
                MoveLabel { uci: "f7f6".into(), score: LabelScore::Mate(-7) },
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
        assert!(!json.contains("\"game\""), "chess records are written as before: {json}");
    }

    #[test]
    fn game_records_say_their_game_and_old_ones_read_as_chess() {
        let old = r#"{"fen":"8/8/8/8/8/8/k7/K7 w - - 0 1","chess960":false,"moves":[{"uci":"a1b1","cp":0}],
            "best":"a1b1","depth":6,"nodes":10,"source":"t","ply":0,"split":"train"}"#;
        let r: LabelRecord = serde_json::from_str(old).expect("an old chess record reads");
        assert_eq!(r.game, LabelGame::Chess);
        let c4 = LabelRecord {
            game: LabelGame::ConnectFour,
            moves: vec![MoveLabel {
                uci: "4".into(),
                score: LabelScore::Exact { result: ExactResult::Win, plies: Some(3) },
            }],
            ..r
        };
        let json = serde_json::to_string(&c4).expect("serializes");
        assert!(json.starts_with(r#"{"game":"connect_four","#), "{json}");
        assert!(json.contains(r#"{"uci":"4","exact":{"result":"win","plies":3}}"#), "{json}");
        assert_eq!(serde_json::from_str::<LabelRecord>(&json).expect("parses"), c4);
    }
}
