//! Hex game records as SGF in the HexGui / benzene dialect, read and written.
//!
//! What we follow (HexGui's `SgfReader`/`SgfWriter` and `HexPoint`, benzene's `swap-pieces`):
//! - the root node holds `FF[4]`, `GM[11]` (11 = Hex; any other game is refused) and `SZ[n]` (square
//!   boards only; `SZ[n:n]` is accepted), plus any other root properties (`PB`, `PW`, `RE`, `AP`, …),
//!   which are kept and written back;
//! - each move node holds `B[c5]` (the first player, Black) or `W[c5]` (the second, White), cells named
//!   by column letter and row number; Black moves first and the colours alternate;
//! - the swap is `W[swap-pieces]` (HexGui also reads `swap`, and so do we), with benzene's meaning: the
//!   Black stone is replaced by a White stone on the mirrored cell and Black moves next; a record with a
//!   swap is a game with the swap rule ([`HexRecord::swap_rule`]); SGF has no property for the rule, so a
//!   swap-rule game without a swap reads as one without the rule;
//! - `B[resign]` / `W[resign]` ends the game with that player's resignation;
//! - variations (`(` inside a game) are allowed; the main line (the first variation at each fork) is read.
//!
//! Not supported, with an error that says so: setup stones (`AB`, `AW`, `AE`), `swap-sides`,
//! non-square boards, moves after the game ended. Errors give the line and column.

use super::{Cell, HexAction, HexState, PositionError};
use crate::game::{GameState, Player};

/// Why an SGF text cannot be read as a Hex game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfError {
    /// The text is not SGF where it should be.
    #[error("line {line}, column {column}: expected {expected}, found {found}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// A well-formed property with a value a Hex game cannot have.
    #[error("line {line}, column {column}: {reason}")]
    Content {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

/// Why moves do not make a Hex record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The board size cannot be played.
    #[error(transparent)]
    Size(#[from] PositionError),
    /// A move cannot be played where it stands.
    #[error("move {number}: {reason}")]
    Move {
        /// The move's number, from 1.
        number: usize,
        /// Why it cannot be played.
        reason: crate::game::ActionError,
    },
}

/// A Hex game read from (or to be written as) SGF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HexRecord {
    /// The board size.
    pub size: u32,
    /// Whether the swap rule is played.
    pub swap_rule: bool,
    /// The moves from the empty board.
    pub moves: Vec<HexAction>,
    /// The player who resigned after the last move, if any.
    pub resigned: Option<Player>,
    /// Root properties other than `FF`, `GM` and `SZ`, in file order (name, value).
    pub properties: Vec<(String, String)>,
}

impl HexRecord {
    /// A record of `moves` played from the empty board, checked.
    pub fn new(size: u32, swap_rule: bool, moves: &[HexAction]) -> Result<HexRecord, RecordError> {
        let mut s = HexState::new(size)?.with_swap(swap_rule);
        for (i, &m) in moves.iter().enumerate() {
            s = s.play(m).map_err(|reason| RecordError::Move { number: i + 1, reason })?;
        }
        Ok(HexRecord { size, swap_rule, moves: moves.to_vec(), resigned: None, properties: Vec::new() })
    }

    /// The position after the last move.
    pub fn end(&self) -> Result<HexState, PositionError> {
        let mut s = HexState::new(self.size)?.with_swap(self.swap_rule);
        for &m in &self.moves {
            // Every move was checked when the record was built.
            if let Ok(next) = s.play(m) {
                s = next;
            }
        }
        Ok(s)
    }

    /// The result: `1-0`, `0-1` or `None` while the game goes on.
    pub fn result(&self) -> Option<&'static str> {
        if let Some(p) = self.resigned {
            return Some(if p == Player::First { "0-1" } else { "1-0" });
        }
        self.end().ok().and_then(|s| s.outcome()).map(|o| o.result_str())
    }

    /// The game as SGF, one line per node after the root.
    pub fn to_sgf(&self) -> String {
        let mut s = format!("(;FF[4]GM[11]SZ[{}]", self.size);
        for (k, v) in &self.properties {
            s.push_str(&format!("{k}[{}]", escape(v)));
        }
        let mut state = HexState::new(self.size).ok().map(|s| s.with_swap(self.swap_rule));
        for &m in &self.moves {
            let colour = match state.map(|s| s.to_move()) {
                Some(Player::Second) => 'W',
                _ => 'B',
            };
            let value = match m {
                HexAction::Place(c) => c.to_string(),
                HexAction::Swap => "swap-pieces".to_owned(),
            };
            s.push_str(&format!("\n;{colour}[{value}]"));
            state = state.and_then(|st| st.play(m).ok());
        }
        if let Some(p) = self.resigned {
            s.push_str(if p == Player::First { "\n;B[resign]" } else { "\n;W[resign]" });
        }
        s.push_str(")\n");
        s
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace(']', "\\]")
}

/// Where errors about the game as a whole or its root node point: the text's first character.
const ROOT_POS: usize = 1;

/// One node's properties: (name, values, position of the name).
type Node = Vec<(String, Vec<String>, usize)>;

/// A move as read: colour (`B` or `W`), value (trimmed, lower case) and position of the property.
type RawMove = (char, String, usize);

struct Reader<'a> {
    chars: Vec<char>,
    pos: usize,
    _text: &'a str,
}

impl Reader<'_> {
    fn at(&self, pos: usize) -> (usize, usize) {
        let before = &self.chars[..pos.min(self.chars.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let column = before.iter().rev().take_while(|&&c| c != '\n').count() + 1;
        (line, column)
    }

    fn syntax(&self, expected: &str) -> SgfError {
        let (line, column) = self.at(self.pos);
        let found = match self.chars.get(self.pos) {
            None => "the end of the text".to_owned(),
            Some(c) => format!("'{c}'"),
        };
        SgfError::Syntax { line, column, expected: expected.to_owned(), found }
    }

    fn content(&self, pos: usize, reason: String) -> SgfError {
        let (line, column) = self.at(pos);
        SgfError::Content { line, column, reason }
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), SgfError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(what))
        }
    }

    /// One node's properties: (name, values, position of the name).
    fn node(&mut self) -> Result<Node, SgfError> {
        self.expect(';', "';' to start a node")?;
        let mut props = Vec::new();
        while let Some(c) = self.peek() {
            if !c.is_ascii_uppercase() {
                break;
            }
            let start = self.pos;
            while self.chars.get(self.pos).is_some_and(|c| c.is_ascii_uppercase()) {
                self.pos += 1;
            }
            let name: String = self.chars[start..self.pos].iter().collect();
            let mut values = Vec::new();
            while self.peek() == Some('[') {
                self.pos += 1;
                let mut v = String::new();
                loop {
                    match self.chars.get(self.pos) {
                        None => return Err(self.syntax(&format!("']' to close the value of {name}"))),
                        Some('\\') => {
                            if let Some(&c) = self.chars.get(self.pos + 1) {
                                v.push(c);
                            }
                            self.pos += 2;
                        }
                        Some(']') => {
                            self.pos += 1;
                            break;
                        }
                        Some(&c) => {
                            v.push(c);
                            self.pos += 1;
                        }
                    }
                }
                values.push(v);
            }
            if values.is_empty() {
                return Err(self.syntax(&format!("'[' with a value after the property name {name}")));
            }
            props.push((name, values, start));
        }
        Ok(props)
    }

    /// The main line after the game's `(`: nodes, and at a fork the first variation (the others are
    /// skipped).
    fn main_line(&mut self) -> Result<Vec<Node>, SgfError> {
        let mut nodes = Vec::new();
        let mut depth = 1usize;
        loop {
            match self.peek() {
                Some(';') => nodes.push(self.node()?),
                Some('(') => {
                    self.pos += 1;
                    depth += 1;
                }
                Some(')') => {
                    self.pos += 1;
                    depth -= 1;
                    if depth == 0 {
                        return Ok(nodes);
                    }
                    self.skip_siblings()?;
                }
                _ => return Err(self.syntax("';' (a node), '(' or ')'")),
            }
        }
    }

    /// At the end of the first variation: skips its siblings up to the enclosing `)`.
    fn skip_siblings(&mut self) -> Result<(), SgfError> {
        let mut level = 0usize;
        loop {
            match self.peek() {
                Some('(') => {
                    level += 1;
                    self.pos += 1;
                }
                Some(')') if level == 0 => return Ok(()),
                Some(')') => {
                    level -= 1;
                    self.pos += 1;
                }
                Some(';') => {
                    self.node()?;
                }
                _ => return Err(self.syntax("a node, '(' or ')'")),
            }
        }
    }

    /// The root node's board size and its properties other than `FF`, `GM`, `SZ` and moves.
    fn root(&self, root: &Node) -> Result<(u32, Vec<(String, String)>), SgfError> {
        let mut size = None;
        let mut properties = Vec::new();
        for (name, values, at) in root {
            let v = values[0].trim();
            match name.as_str() {
                "GM" if v != "11" => {
                    return Err(self.content(*at, format!("GM[{v}] is not Hex; a Hex record has GM[11]")));
                }
                "GM" | "FF" => {}
                "SZ" => size = Some(self.size(v, *at)?),
                "B" | "W" => {}
                _ => properties.push((name.clone(), values[0].clone())),
            }
        }
        let Some(size) = size else {
            return Err(self.content(
                ROOT_POS,
                "the root node has no SZ property (the board size, e.g. SZ[7])".to_owned(),
            ));
        };
        Ok((size, properties))
    }

    /// The board size of `SZ[v]` (the property at `at`): square, 1 to 13.
    fn size(&self, v: &str, at: usize) -> Result<u32, SgfError> {
        let (a, b) = v.split_once(':').unwrap_or((v, v));
        let n = match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            (Ok(a), Ok(b)) if a == b => a,
            (Ok(_), Ok(_)) => {
                return Err(self.content(at, format!("SZ[{v}]: only square Hex boards are supported")));
            }
            _ => return Err(self.content(at, format!("SZ[{v}] is not a board size such as SZ[7]"))),
        };
        if HexState::new(n).is_err() {
            return Err(self.content(at, format!("SZ[{v}]: board sizes are 1 to 13")));
        }
        Ok(n)
    }

    /// The `B` and `W` moves of all nodes in order; setup stones are an error.
    fn moves(&self, nodes: &[Node]) -> Result<Vec<RawMove>, SgfError> {
        let mut moves = Vec::new();
        for node in nodes {
            for (name, values, at) in node {
                match name.as_str() {
                    "B" | "W" => {
                        let colour = if name == "B" { 'B' } else { 'W' };
                        moves.push((colour, values[0].trim().to_ascii_lowercase(), *at));
                    }
                    "AB" | "AW" | "AE" => {
                        return Err(self.content(
                            *at,
                            format!("setup stones ({name}) are not supported; record the game as moves"),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(moves)
    }

    /// Plays `moves` from `state` into `record` (its moves and resignation), checking each.
    fn play(&self, mut state: HexState, record: &mut HexRecord, moves: Vec<RawMove>) -> Result<(), SgfError> {
        for (colour, v, at) in moves {
            let n = record.moves.len() + 1;
            if record.resigned.is_some() {
                return Err(self.content(at, format!("move {n} comes after a resignation")));
            }
            let mover = if colour == 'B' { Player::First } else { Player::Second };
            if v == "resign" {
                record.resigned = Some(mover);
                continue;
            }
            if let Some(o) = state.outcome() {
                return Err(
                    self.content(at, format!("move {n}: the game is already over ({})", o.result_str()))
                );
            }
            if mover != state.to_move() {
                let want = if state.to_move() == Player::First { "B" } else { "W" };
                return Err(
                    self.content(at, format!("move {n}: {colour}[{v}] is out of turn; {want} is to move"))
                );
            }
            let action = self.action(&state, &v, at, n)?;
            state = state.play(action).map_err(|e| self.content(at, format!("move {n}: {e}")))?;
            record.moves.push(action);
        }
        Ok(())
    }

    /// The action of move `n`'s value `v` (at `at`) in `state`: the swap or a cell of the board.
    fn action(&self, state: &HexState, v: &str, at: usize, n: usize) -> Result<HexAction, SgfError> {
        match v {
            "swap-pieces" | "swap" => Ok(HexAction::Swap),
            "swap-sides" => {
                Err(self.content(at, "swap-sides is not supported; write the swap as swap-pieces".to_owned()))
            }
            _ => match Cell::parse(v) {
                Some(c) if state.contains(c) => Ok(HexAction::Place(c)),
                _ => {
                    let size = state.size();
                    Err(self.content(
                        at,
                        format!(
                            "move {n}: '{v}' is not a cell of the {size}×{size} board (a1 to {}{size})",
                            char::from(b'a' + size as u8 - 1)
                        ),
                    ))
                }
            },
        }
    }
}

/// Reads the first game of an SGF text (HexGui / benzene dialect, see the module documentation).
pub fn read_sgf(text: &str) -> Result<HexRecord, SgfError> {
    let mut r = Reader { chars: text.chars().collect(), pos: 0, _text: text };
    r.expect('(', "'(' to start the game")?;
    let nodes = r.main_line()?;
    let Some(root) = nodes.first() else {
        return Err(r.content(ROOT_POS, "the game has no root node".to_owned()));
    };
    let (size, properties) = r.root(root)?;
    // First pass: is there a swap?
    let moves = r.moves(&nodes)?;
    let swap_rule = moves.iter().any(|(_, v, _)| v == "swap-pieces" || v == "swap");
    let state = HexState::new(size).map_err(|e| r.content(ROOT_POS, e.to_string()))?.with_swap(swap_rule);
    let mut record = HexRecord { size, swap_rule, moves: Vec::new(), resigned: None, properties };
    r.play(state, &mut record, moves)?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &str = "(;FF[4]AP[HexGui:0.9.GIT]GM[11]SZ[5]PB[alice]PW[bob]\n;B[c3];W[swap-pieces]\n;B[b3];W[d2]\n;B[b4]C[a comment\\] with a bracket];W[resign])\n";

    #[test]
    fn reads_a_hexgui_game_with_swap_and_resignation() {
        let rec = read_sgf(GAME).expect("reads");
        assert_eq!(rec.size, 5);
        assert!(rec.swap_rule);
        let names: Vec<String> = rec.moves.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["c3", "swap", "b3", "d2", "b4"]);
        assert_eq!(rec.resigned, Some(Player::Second));
        assert_eq!(rec.result(), Some("1-0"));
        assert!(rec.properties.contains(&("PB".to_owned(), "alice".to_owned())));
        let end = rec.end().expect("size");
        // The swap put White on c3 mirrored, which is c3 itself.
        assert_eq!(end.owner(Cell::parse("c3").expect("cell")), Some(Player::Second));
        assert_eq!(end.owner(Cell::parse("b4").expect("cell")), Some(Player::First));
    }

    #[test]
    fn round_trips_and_follows_the_main_line() {
        let rec = read_sgf(GAME).expect("reads");
        let again = read_sgf(&rec.to_sgf()).expect("reads what it writes");
        assert_eq!(again, rec);
        assert!(rec.to_sgf().contains("W[swap-pieces]"));
        let variations = "(;FF[4]GM[11]SZ[7];B[d4](;W[c5];B[e3])(;W[e3];B[c5]))";
        let r = read_sgf(variations).expect("reads");
        let names: Vec<String> = r.moves.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["d4", "c5", "e3"]);
        assert!(!r.swap_rule);
        let m = HexRecord::new(7, false, &r.moves).expect("legal");
        assert_eq!(read_sgf(&m.to_sgf()).expect("reads").moves, r.moves);
    }

    #[test]
    fn a_won_game_has_its_result() {
        // Black walks down column a: a1 … a3 on 3×3 joins the top and the bottom.
        let rec = read_sgf("(;FF[4]GM[11]SZ[3];B[a1];W[b1];B[a2];W[b2];B[a3])").expect("reads");
        assert_eq!(rec.result(), Some("1-0"));
        let e = read_sgf("(;FF[4]GM[11]SZ[3];B[a1];W[b1];B[a2];W[b2];B[a3];W[c3])").expect_err("over");
        assert!(e.to_string().contains("already over"), "{e}");
    }

    #[test]
    fn errors_give_the_place_and_the_fix() {
        let cases = [
            ("", "line 1, column 1: expected '(' to start the game"),
            ("(;FF[4]GM[1]SZ[7])", "GM[1] is not Hex"),
            ("(;FF[4]GM[11])", "no SZ property"),
            ("(;FF[4]GM[11]SZ[7:9])", "only square"),
            ("(;FF[4]GM[11]SZ[20])", "1 to 13"),
            ("(;FF[4]GM[11]SZ[5]\n;B[f1])", "line 2, column 2: move 1: 'f1' is not a cell of the 5×5 board"),
            ("(;FF[4]GM[11]SZ[5];W[a1])", "out of turn; B is to move"),
            ("(;FF[4]GM[11]SZ[5];B[a1];W[a1])", "not a legal move"),
            ("(;FF[4]GM[11]SZ[5];B[a1];W[b1];B[swap-pieces])", "not a legal move"),
            ("(;FF[4]GM[11]SZ[5];B[a1];W[swap-sides])", "swap-sides is not supported"),
            ("(;FF[4]GM[11]SZ[5];AB[a1])", "setup stones"),
            ("(;FF[4]GM[11]SZ[5];B[a1", "']' to close the value of B"),
            ("(;FF[4]GM[11]SZ[5];B[a1];W[resign];B[c3])", "after a resignation"),
            ("(;FF[4]GM[11]SZ[5] x)", "expected ';' (a node), '(' or ')', found 'x'"),
        ];
        for (text, want) in cases {
            let e = read_sgf(text).expect_err(text);
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
