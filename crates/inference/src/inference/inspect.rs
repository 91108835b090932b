//! Model inspection: what a `mav-encoder` or `action-value` model looks at and how its values form, layer
//! by layer.
//!
//! A package may carry an *inspection graph* beside `model.onnx` (mav.json `inspection`, see
//! [`InspectionSpec`]; written by `python -m mavtrain.inspect_export` for a `mav-encoder`, by `mavboard
//! import searchless` for an `action-value` package): the same weights, with the attention probabilities of
//! every layer and head, the residual stream after every layer and the *logit lens* (the package's own
//! final norm and value head applied after every layer) as outputs, and an input `head_scale` [layers,
//! heads] that multiplies each head's output (1 = unchanged, 0 = removed).
//!
//! [`Inspector`] opens that graph on demand (never for search: the engine keeps using `model.onnx`) and
//! runs one position at a time. An [`Inspection`] holds every legal move's value distribution at every
//! depth ([`MoveLens`]; at the last layer it is the model's own output), the attention maps, and what each
//! input token stands for ([`TokenRole`]).
//!
//! - `mav-encoder`: one sequence holds every move. Its input is the `%state` tokens without spaces (the side
//!   to move, `||`, then the board's cells row by row from the first row, each row from the first column —
//!   chess a1 b1 … h8, Connect Four from the bottom row, Hex row 1 to N — then the rest of the state),
//!   `<sep>`, and the candidate moves (see [`crate::mav::encoder_input`]); each move is read at its token.
//! - `action-value` (chess only): one sequence per legal move, all run as one batch: the zero start token
//!   (BOS) the graph puts in front, the 77 FEN tokens ([`searchless_token_roles`]) and the move's action
//!   token, where its values are read. The attention maps and residual stream kept are those of one
//!   sequence, the move the model values highest ([`Inspection::attention_move`]; another move's with
//!   [`Inspector::inspect_move`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ndarray::{Array2, Array3, Array4, ArrayD, ArrayView3, ArrayViewD, Axis, Ix2, Ix3, Ix4, Ix5, s};
use ort::session::{Session, SessionInputValue, SessionOutputs};
use ort::value::Tensor;

use super::device::{DeviceError, DeviceStatus, session_builder};
use super::onnx::session::{SessionError, SessionOptions, graph_signature};
use super::ort_lib;
use crate::game::GameKind;
use crate::mav::buckets::{BucketError, Buckets, ValueDistribution};
use crate::mav::encoder_input::{EncoderInput, EncoderInputError, encoder_input};
use crate::mav::searchless::{ALPHABET, STATE_LEN, tokenize_fen};
use crate::mav::state::MavState;
use crate::mav::tokenizer::Tokenizer;
use crate::model::manifest::{InspectionSpec, read_inspection};
use crate::model::{ModelError, ModelFormat, ModelPackage};

/// Why a package cannot be inspected, or a position not inspected with it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InspectError {
    /// The package's mav.json declares no inspection graph.
    #[error(
        "model package {dir}: it has no inspection graph (mav.json has no `inspection` entry); write one with \
         `python -m mavtrain.inspect_export --package {dir}`",
        dir = .dir.display()
    )]
    NotDeclared {
        /// The package folder.
        dir: PathBuf,
    },
    /// Inspection graphs are written for `mav-encoder` and `action-value` packages only.
    #[error(
        "model package {dir}: inspection needs a mav-encoder or action-value package, this one is {format}",
        dir = .dir.display()
    )]
    Format {
        /// The package folder.
        dir: PathBuf,
        /// The package's format.
        format: &'static str,
    },
    /// The package itself is unusable.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// ONNX Runtime or the device could not be used.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// ONNX Runtime could not open the inspection graph, or it lacks an input or output.
    #[error("inspection graph {path}: {reason}", path = .path.display())]
    Graph {
        /// The graph file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The position's game is not one the model was trained on.
    #[error("the model was trained on {games}, not {game}")]
    WrongGame {
        /// The position's game.
        game: &'static str,
        /// The model's games.
        games: String,
    },
    /// The position cannot be written in the model's vocabulary.
    #[error("the position cannot be encoded: {0}")]
    Input(#[from] EncoderInputError),
    /// The position or one of its moves cannot be written as the action-value format's input.
    #[error("the position cannot be written as the action-value input: {0}")]
    ActionValueInput(String),
    /// A move asked for is not one of the position's legal moves.
    #[error("{0} is not a legal move of the position")]
    NoSuchMove(String),
    /// The game is over: there are no moves to value.
    #[error("the position has no legal moves; there is nothing to inspect")]
    NoMoves,
    /// The input is longer than the model's context.
    #[error("the position needs {needed} tokens, the model's context is {context}")]
    ContextTooLong {
        /// Tokens needed.
        needed: usize,
        /// The model's context length.
        context: usize,
    },
    /// A layer or head outside the model.
    #[error(
        "layer {layer} head {head} is outside the model's {layers} layers x {heads} heads (both count from 0)"
    )]
    HeadOutOfRange {
        /// The layer asked for.
        layer: usize,
        /// The head asked for.
        head: usize,
        /// The model's layers.
        layers: usize,
        /// The model's heads per layer.
        heads: usize,
    },
    /// A query token outside the input.
    #[error("token {token} is outside the input's {len} tokens")]
    TokenOutOfRange {
        /// The token asked for.
        token: usize,
        /// The input's length.
        len: usize,
    },
    /// ONNX Runtime failed while running the graph.
    #[error("ONNX Runtime: {0}")]
    Run(String),
    /// An output has the wrong shape or invalid values.
    #[error("the inspection graph's output {name}: {reason}")]
    Output {
        /// The output's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// One multiplier per attention head: 1 leaves a head as trained, 0 removes its output.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadScale {
    layers: usize,
    heads: usize,
    values: Vec<f32>,
}

impl HeadScale {
    /// Every head unchanged (the model as trained).
    pub fn ones(layers: usize, heads: usize) -> HeadScale {
        HeadScale { layers, heads, values: vec![1.0; layers * heads] }
    }

    /// Every head unchanged except `layer`/`head`, which is removed.
    pub fn without_head(
        layers: usize,
        heads: usize,
        layer: usize,
        head: usize,
    ) -> Result<HeadScale, InspectError> {
        let mut s = HeadScale::ones(layers, heads);
        s.set(layer, head, 0.0)?;
        Ok(s)
    }

    /// Every head unchanged except those of `layer`, which are all removed.
    pub fn without_layer(layers: usize, heads: usize, layer: usize) -> Result<HeadScale, InspectError> {
        let mut s = HeadScale::ones(layers, heads);
        for head in 0..heads {
            s.set(layer, head, 0.0)?;
        }
        Ok(s)
    }

    /// Sets one head's multiplier.
    pub fn set(&mut self, layer: usize, head: usize, value: f32) -> Result<(), InspectError> {
        let i = self.index(layer, head)?;
        self.values[i] = value;
        Ok(())
    }

    /// One head's multiplier, `None` outside the model.
    pub fn get(&self, layer: usize, head: usize) -> Option<f32> {
        self.index(layer, head).ok().map(|i| self.values[i])
    }

    /// The number of layers.
    pub fn layers(&self) -> usize {
        self.layers
    }

    /// The number of heads per layer.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// The heads whose multiplier is not 1, as (layer, head, multiplier).
    pub fn changed(&self) -> Vec<(usize, usize, f32)> {
        (0..self.values.len())
            .filter(|&i| self.values[i] != 1.0)
            .map(|i| (i / self.heads, i % self.heads, self.values[i]))
            .collect()
    }

    fn index(&self, layer: usize, head: usize) -> Result<usize, InspectError> {
        if layer >= self.layers || head >= self.heads {
            return Err(InspectError::HeadOutOfRange { layer, head, layers: self.layers, heads: self.heads });
        }
        Ok(layer * self.heads + head)
    }
}

/// A cell of the board that an input token describes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoardCell {
    /// Column from 0 (chess file a = 0; Connect Four column 1 = 0; Hex column a = 0).
    pub col: u32,
    /// Row from 0 (chess rank 1 = 0; Connect Four bottom row = 0; Hex row 1 = 0).
    pub row: u32,
    /// Its usual name: `e4` (chess), `c5` (Hex), `4/2` (Connect Four: column/row from 1).
    pub name: String,
}

impl BoardCell {
    fn new(kind: GameKind, col: u32, row: u32) -> BoardCell {
        let name = match kind {
            GameKind::ConnectFour => format!("{}/{}", col + 1, row + 1),
            GameKind::Chess | GameKind::Chess960 | GameKind::Hex => {
                format!("{}{}", char::from(b'a' + (col as u8)), row + 1)
            }
        };
        BoardCell { col, row, name }
    }
}

/// What one input token stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TokenRole {
    /// The side to move.
    SideToMove,
    /// One cell of the board (its piece or stone, or `.`).
    Cell(BoardCell),
    /// The rest of the state: delimiters, castling rights, en passant, clocks, the swap flag.
    StateInfo,
    /// `<sep>` between the state and the moves.
    Separator,
    /// A token of candidate move `i` (an index into [`Inspection::moves`]). The action-value format's one
    /// action token is the move whose sequence the inspection describes ([`Inspection::attention_move`];
    /// [`searchless_token_roles`] writes it as move 0).
    Move(usize),
    /// The space token between two multi-token moves (Hex).
    MoveSpace,
    /// The start token in front of the input: the action-value format's zero BOS token (no text of the
    /// position; attention often rests on it).
    Start,
}

/// One input token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputToken {
    /// Its id.
    pub id: u32,
    /// Its text in the vocabulary.
    pub text: String,
    /// What it stands for.
    pub role: TokenRole,
}

/// The board's width and height as the `%state` string writes it.
fn board_shape<S: MavState>(state: &S) -> (u32, u32) {
    match state.kind() {
        GameKind::Chess | GameKind::Chess960 => (8, 8),
        GameKind::ConnectFour => (7, 6),
        GameKind::Hex => {
            // side, `||`, N×N cells, `|0||`: N from the number of words
            let cells = state.mav_state().split(' ').count().saturating_sub(3);
            let n = (cells as f64).sqrt().round() as u32;
            (n, n)
        }
    }
}

/// What each token of the encoder input `input` for `state` stands for (see the module documentation).
pub fn encoder_token_roles<S: MavState>(
    state: &S,
    input: &EncoderInput,
    tokenizer: &Tokenizer,
) -> Vec<TokenRole> {
    let kind = state.kind();
    let (w, h) = board_shape(state);
    let cells = (w * h) as usize;
    let sep = input.ids.iter().position(|&id| id == tokenizer.sep_id()).unwrap_or(input.ids.len());
    let mut roles = Vec::with_capacity(input.ids.len());
    for i in 0..sep {
        roles.push(match i {
            0 => TokenRole::SideToMove,
            i if (2..2 + cells).contains(&i) => {
                let c = (i - 2) as u32;
                TokenRole::Cell(BoardCell::new(kind, c % w, c / w))
            }
            _ => TokenRole::StateInfo,
        });
    }
    let mut move_index = 0;
    for (i, &id) in input.ids.iter().enumerate().skip(sep) {
        if i == sep {
            roles.push(TokenRole::Separator);
        } else if id == tokenizer.space_id() {
            roles.push(TokenRole::MoveSpace);
        } else {
            roles.push(TokenRole::Move(move_index));
            if input.move_positions.get(move_index) == Some(&i) {
                move_index += 1;
            }
        }
    }
    roles
}

/// What each of the action-value format's 78 input tokens stands for: the side to move, the 64 squares
/// from a8 to h8, a7 to h7, … a1 to h1 (FEN order, never flipped), castling, en passant and the clocks,
/// then the action, written as move 0 (see [`crate::mav::searchless`]). The inspection graph puts its BOS
/// token ([`TokenRole::Start`]) in front of these.
pub fn searchless_token_roles() -> Vec<TokenRole> {
    let mut roles = Vec::with_capacity(crate::mav::searchless::STATE_LEN + 1);
    roles.push(TokenRole::SideToMove);
    for i in 0..64u32 {
        roles.push(TokenRole::Cell(BoardCell::new(GameKind::Chess, i % 8, 7 - i / 8)));
    }
    while roles.len() < crate::mav::searchless::STATE_LEN {
        roles.push(TokenRole::StateInfo);
    }
    roles.push(TokenRole::Move(0));
    roles
}

/// One legal move's values through the depth of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveLens {
    /// The move as the model writes it (UCI in chess).
    pub text: String,
    /// The input token its values are read at (its last token). In an action-value inspection every move
    /// has its own sequence, read at its action token, the last: the same index for every move, which in
    /// [`Inspection::tokens`] stands for [`Inspection::attention_move`].
    pub token: usize,
    /// Its value distribution read after each layer (the logit lens); the last is the model's output.
    pub layers: Vec<ValueDistribution>,
    /// The model's value distribution for it, under the head scale (a `mav-encoder` graph's
    /// `value_logits`; an action-value package's last layer of the lens, which is its `logits`).
    pub value: ValueDistribution,
    /// The best-action logit at its token; NaN for an action-value package, whose format has no policy
    /// head.
    pub best_logit: f32,
}

/// Everything one inspection run gives for one position.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The position's game.
    pub game: GameKind,
    /// The input tokens and what each stands for (of the sequence of [`Inspection::attention_move`] for an
    /// action-value package: its BOS token, the 77 FEN tokens and that move's action token).
    pub tokens: Vec<InputToken>,
    /// Every legal move's values, in the rules' move order.
    pub moves: Vec<MoveLens>,
    /// Attention probabilities [layers, heads, query token, key token]; every row sums to 1. For an
    /// action-value package, those of one move's sequence: [`Inspection::attention_move`].
    pub attention: Array4<f32>,
    /// The residual stream [layers + 1, token, d_model]: after the embedding, then after each layer (for
    /// an action-value package, of the sequence of [`Inspection::attention_move`]).
    pub residual: Array3<f32>,
    /// For an action-value package, which runs one sequence per legal move, the move (an index into
    /// [`Inspection::moves`]) whose sequence `tokens`, `attention` and `residual` describe: the one the
    /// model values highest by mean value (the first of equals), or the one asked for with
    /// [`Inspector::inspect_move`]. `None` for a `mav-encoder`, whose one sequence holds every move.
    pub attention_move: Option<usize>,
    /// The head multipliers the run used.
    pub head_scale: HeadScale,
    /// Time inside ONNX Runtime's `Session::run`.
    pub run_time: Duration,
}

impl Inspection {
    /// The attention of `layer`/`head` from the query token `query` to every token.
    pub fn attention_row(&self, layer: usize, head: usize, query: usize) -> Result<Vec<f32>, InspectError> {
        let (layers, heads, len, _) = self.attention.dim();
        if layer >= layers || head >= heads {
            return Err(InspectError::HeadOutOfRange { layer, head, layers, heads });
        }
        if query >= len {
            return Err(InspectError::TokenOutOfRange { token: query, len });
        }
        Ok(self.attention.slice(s![layer, head, query, ..]).to_vec())
    }

    /// The attention of `layer`/`head` from `query` to each board cell's token, in board order.
    pub fn board_attention(
        &self,
        layer: usize,
        head: usize,
        query: usize,
    ) -> Result<Vec<(BoardCell, f32)>, InspectError> {
        let row = self.attention_row(layer, head, query)?;
        Ok(self
            .tokens
            .iter()
            .zip(row)
            .filter_map(|(t, p)| match &t.role {
                TokenRole::Cell(c) => Some((c.clone(), p)),
                _ => None,
            })
            .collect())
    }

    /// The token of the board cell named `name` (`e4`).
    pub fn cell_token(&self, name: &str) -> Option<usize> {
        self.tokens.iter().position(|t| matches!(&t.role, TokenRole::Cell(c) if c.name == name))
    }

    /// The index in [`Inspection::moves`] of the move written `text`.
    pub fn move_index(&self, text: &str) -> Option<usize> {
        self.moves.iter().position(|m| m.text == text)
    }

    /// The number of layers.
    pub fn num_layers(&self) -> usize {
        self.attention.dim().0
    }

    /// The number of heads per layer.
    pub fn num_heads(&self) -> usize {
        self.attention.dim().1
    }
}

/// A package's inspection graph in an ONNX Runtime session.
#[derive(Debug)]
pub struct Inspector {
    session: Session,
    status: DeviceStatus,
    spec: InspectionSpec,
    path: PathBuf,
    layout: Layout,
    buckets: Buckets,
    layers: usize,
    heads: usize,
    d_model: usize,
    context: usize,
    games: Vec<GameKind>,
}

/// How a package's input is written and its graph's outputs read.
#[derive(Debug)]
enum Layout {
    /// `mav-encoder`: one sequence (the state, `<sep>`, every move), each move read at its token.
    Encoder(Tokenizer),
    /// `action-value`: one sequence per legal move (BOS, 77 FEN tokens, the action), read at the action;
    /// the package's action ids by move text.
    ActionValue(HashMap<String, u32>),
}

/// The action-value inspection graph's sequence: the BOS token, the 77 FEN tokens and the action.
const AV_SEQ: usize = STATE_LEN + 2;

fn output(name: &str, reason: impl std::fmt::Display) -> InspectError {
    InspectError::Output { name: name.to_owned(), reason: reason.to_string() }
}

/// An action-value sequence's inputs: the position's 77 FEN tokens and each move's action id.
fn action_value_input<S: MavState>(
    state: &S,
    actions: &HashMap<String, u32>,
    texts: &[String],
) -> Result<(Vec<u32>, Vec<u32>), InspectError> {
    let fen = state.mav_fen().ok_or_else(|| {
        InspectError::ActionValueInput(format!("a {} position has no FEN", state.kind().name()))
    })?;
    let state_ids = tokenize_fen(&fen).map_err(|e| InspectError::ActionValueInput(e.to_string()))?;
    if state_ids.len() != STATE_LEN {
        let got = state_ids.len();
        return Err(InspectError::ActionValueInput(format!("{got} state tokens, not {STATE_LEN}")));
    }
    let action_ids = texts
        .iter()
        .map(|t| {
            actions
                .get(t)
                .copied()
                .ok_or_else(|| InspectError::ActionValueInput(format!("the move {t} has no action id")))
        })
        .collect::<Result<Vec<u32>, _>>()?;
    Ok((state_ids, action_ids))
}

/// Every move's lens from the action-value logit lens `[N, layers, K]` (output `name`): its distribution
/// after each layer, the last layer's as its value.
fn action_value_moves(
    lens: &ArrayView3<'_, f32>,
    texts: Vec<String>,
    buckets: Buckets,
    name: &str,
) -> Result<Vec<MoveLens>, InspectError> {
    let l = lens.dim().1;
    let dist = |logits: Vec<f32>| {
        ValueDistribution::from_logits(buckets, &logits).map_err(|e: BucketError| output(name, e))
    };
    let mut out_moves = Vec::with_capacity(texts.len());
    for (i, text) in texts.into_iter().enumerate() {
        let layers =
            (0..l).map(|layer| dist(lens.slice(s![i, layer, ..]).to_vec())).collect::<Result<Vec<_>, _>>()?;
        let value = layers.last().cloned().ok_or_else(|| output(name, "the model has no layers"))?;
        out_moves.push(MoveLens { text, token: AV_SEQ - 1, layers, value, best_logit: f32::NAN });
    }
    Ok(out_moves)
}

/// The move with the highest mean value (the first of equals).
fn best_by_mean_value(moves: &[MoveLens]) -> usize {
    (0..moves.len()).fold(0, |best, i| {
        if moves[i].value.mean_value() > moves[best].value.mean_value() { i } else { best }
    })
}

/// An action-value sequence's tokens: BOS, the FEN's state tokens, then move `pick`'s action.
fn action_value_tokens(state_ids: &[u32], action_id: u32, action_text: &str, pick: usize) -> Vec<InputToken> {
    let mut tokens = Vec::with_capacity(AV_SEQ);
    tokens.push(InputToken { id: 0, text: "<bos>".into(), role: TokenRole::Start });
    for (j, role) in searchless_token_roles().into_iter().enumerate() {
        tokens.push(match state_ids.get(j) {
            Some(&id) => InputToken {
                id,
                text: ALPHABET.get(id as usize).map_or('?', |&c| char::from(c)).to_string(),
                role,
            },
            None => InputToken { id: action_id, text: action_text.to_owned(), role: TokenRole::Move(pick) },
        });
    }
    tokens
}

/// The run's output `name`, read in place.
fn output_view<'a>(got: &'a SessionOutputs<'_>, name: &str) -> Result<ArrayViewD<'a, f32>, InspectError> {
    let v = got.get(name).ok_or_else(|| output(name, "missing from the run's outputs"))?;
    v.try_extract_array::<f32>().map_err(|e| output(name, e))
}

/// A file of the package folder named in mav.json, refusing names that leave the folder.
fn package_file(dir: &Path, file: &str, field: &str) -> Result<PathBuf, InspectError> {
    let name = Path::new(file);
    let plain = name.components().count() == 1
        && matches!(name.components().next(), Some(std::path::Component::Normal(_)));
    if !plain {
        return Err(ModelError::Mismatch {
            dir: dir.to_path_buf(),
            field: format!("mav.json {field}"),
            expected: "a file name in the package folder".into(),
            found: file.to_owned(),
        }
        .into());
    }
    let path = dir.join(name);
    if !path.is_file() {
        return Err(InspectError::Graph { path, reason: "the file is missing".into() });
    }
    Ok(path)
}

/// Checks that the file a shared-weights graph reads is the one it was written against.
fn check_shared_weights(dir: &Path, spec: &InspectionSpec) -> Result<(), InspectError> {
    let Some(w) = &spec.weights else {
        return Ok(());
    };
    let path = package_file(dir, &w.file, "inspection.weights.file")?;
    let changed = |found: String| {
        InspectError::Model(ModelError::Mismatch {
            dir: dir.to_path_buf(),
            field: format!("{} (the weights {} reads)", w.file, spec.file),
            expected: format!(
                "the file the inspection graph was written against ({} bytes, checksum {}); write the graph again \
                 with `python -m mavtrain.inspect_export --package {}`",
                w.bytes,
                w.checksum,
                dir.display()
            ),
            found,
        })
    };
    let bytes = std::fs::metadata(&path)
        .map_err(|e| ModelError::Io { path: path.clone(), reason: e.to_string() })?
        .len();
    if bytes != w.bytes {
        return Err(changed(format!("{bytes} bytes")));
    }
    let sum = crate::model::checksum::weights_checksum(&path)
        .map_err(|e| ModelError::Io { path: path.clone(), reason: e.to_string() })?;
    if sum != w.checksum {
        return Err(changed(format!("checksum {sum}")));
    }
    Ok(())
}

impl Inspector {
    /// Opens the package's inspection graph (mav.json `inspection`) and checks its inputs and outputs.
    pub fn open(package: &ModelPackage, options: &SessionOptions) -> Result<Inspector, InspectError> {
        let dir = &package.dir;
        let m = &package.manifest;
        let layout = match m.format {
            ModelFormat::MavEncoder => Layout::Encoder(super::screen::check_tokenizer(package)?),
            ModelFormat::ActionValue => Layout::ActionValue(super::action_value::checked_actions(package)?),
            ModelFormat::MavLm
            | ModelFormat::StateValue
            | ModelFormat::BehavioralCloning
            | ModelFormat::Lc0 => {
                return Err(InspectError::Format { dir: dir.clone(), format: m.format.name() });
            }
        };
        let spec = read_inspection(dir)?.ok_or_else(|| InspectError::NotDeclared { dir: dir.clone() })?;
        let path = package_file(dir, &spec.file, "inspection.file")?;
        check_shared_weights(dir, &spec)?;
        let buckets = package.buckets()?;
        let runtime = ort_lib::init(options.ort_lib.as_deref()).map_err(SessionError::from)?;
        let (mut builder, status) = session_builder(runtime, options.device, options.threads)
            .map_err(|e: DeviceError| InspectError::Session(e.into()))?;
        let session = builder
            .commit_from_file(&path)
            .map_err(|e| InspectError::Graph { path: path.clone(), reason: e.to_string() })?;
        let sig = graph_signature(&session);
        let maps = [spec.attention.as_str(), spec.residual.as_str(), spec.lens_logits.as_str()];
        let (inputs, outputs): (Vec<&str>, Vec<&str>) = match layout {
            Layout::Encoder(_) => (
                vec!["input_ids", "attention_mask", spec.head_scale.as_str()],
                [["value_logits", "best_logits"].as_slice(), &maps].concat(),
            ),
            Layout::ActionValue(_) => (vec!["input_ids", spec.head_scale.as_str()], maps.to_vec()),
        };
        for name in inputs {
            if !sig.inputs.iter().any(|t| t.name == name) {
                return Err(InspectError::Graph { path, reason: format!("it has no input {name}") });
            }
        }
        for name in outputs {
            if !sig.outputs.iter().any(|t| t.name == name) {
                return Err(InspectError::Graph { path, reason: format!("it has no output {name}") });
            }
        }
        Ok(Inspector {
            session,
            status,
            spec,
            path,
            layout,
            buckets,
            layers: m.num_layers,
            heads: m.num_heads,
            d_model: m.d_model,
            context: m.context_length,
            games: m.games.clone(),
        })
    }

    /// The number of layers.
    pub fn num_layers(&self) -> usize {
        self.layers
    }

    /// The number of heads per layer.
    pub fn num_heads(&self) -> usize {
        self.heads
    }

    /// Every head unchanged, for this model.
    pub fn ones(&self) -> HeadScale {
        HeadScale::ones(self.layers, self.heads)
    }

    /// Where the graph runs.
    pub fn status(&self) -> &DeviceStatus {
        &self.status
    }

    /// The tokenizer of a `mav-encoder` package; `None` for an action-value package, whose input is the
    /// FEN's characters and an action id ([`crate::mav::searchless`]).
    pub fn tokenizer(&self) -> Option<&Tokenizer> {
        match &self.layout {
            Layout::Encoder(t) => Some(t),
            Layout::ActionValue(_) => None,
        }
    }

    /// Runs the inspection graph on `state` with the head multipliers `scale`. For an action-value
    /// package the maps kept are those of the sequence of the move the model values highest (see
    /// [`Inspection::attention_move`]).
    pub fn inspect<S: MavState>(&mut self, state: &S, scale: &HeadScale) -> Result<Inspection, InspectError> {
        self.run_inspection(state, scale, None)
    }

    /// [`Inspector::inspect`], keeping the attention maps and residual stream of the sequence of the move
    /// written `move_text` (UCI in chess) for an action-value package, which runs one sequence per move.
    /// For a `mav-encoder` the one sequence holds every move, so this is [`Inspector::inspect`]; either
    /// way a move that is not legal in `state` is refused ([`InspectError::NoSuchMove`]).
    pub fn inspect_move<S: MavState>(
        &mut self,
        state: &S,
        scale: &HeadScale,
        move_text: &str,
    ) -> Result<Inspection, InspectError> {
        self.run_inspection(state, scale, Some(move_text))
    }

    fn run_inspection<S: MavState>(
        &mut self,
        state: &S,
        scale: &HeadScale,
        maps_of: Option<&str>,
    ) -> Result<Inspection, InspectError> {
        let game = state.kind();
        if !self.games.contains(&game) {
            return Err(InspectError::WrongGame {
                game: game.name(),
                games: self.games.iter().map(|g| g.name()).collect::<Vec<_>>().join(", "),
            });
        }
        if (scale.layers, scale.heads) != (self.layers, self.heads) {
            return Err(InspectError::HeadOutOfRange {
                layer: scale.layers.saturating_sub(1),
                head: scale.heads.saturating_sub(1),
                layers: self.layers,
                heads: self.heads,
            });
        }
        let moves = state.legal_actions();
        if moves.is_empty() {
            return Err(InspectError::NoMoves);
        }
        let texts: Vec<String> = moves.iter().map(|&a| state.action_to_text(a)).collect();
        let asked = match maps_of {
            Some(t) => Some(
                texts.iter().position(|m| m == t).ok_or_else(|| InspectError::NoSuchMove(t.to_owned()))?,
            ),
            None => None,
        };
        match &self.layout {
            Layout::Encoder(_) => self.inspect_encoder(state, scale, &moves, texts),
            Layout::ActionValue(_) => self.inspect_action_value(state, scale, texts, asked),
        }
    }

    /// Runs the session with `feed` and returns the outputs `names` (in that order) and the run's time.
    fn run_graph(
        &mut self,
        feed: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)>,
        names: &[String],
    ) -> Result<(Vec<ArrayD<f32>>, Duration), InspectError> {
        let start = Instant::now();
        let got = self.session.run(feed).map_err(|e| InspectError::Run(e.to_string()))?;
        let run_time = start.elapsed();
        let mut arrays = Vec::with_capacity(names.len());
        for name in names {
            arrays.push(output_view(&got, name)?.to_owned());
        }
        Ok((arrays, run_time))
    }

    fn shape_err(&self, name: &str, got: &[usize], want: String) -> InspectError {
        output(name, format!("shape {got:?}, expected {want} ({})", self.path.display()))
    }

    fn dist(&self, name: &str, logits: Vec<f32>) -> Result<ValueDistribution, InspectError> {
        ValueDistribution::from_logits(self.buckets, &logits).map_err(|e: BucketError| output(name, e))
    }

    fn scale_array(&self, scale: &HeadScale) -> Result<Array2<f32>, InspectError> {
        Array2::from_shape_vec((self.layers, self.heads), scale.values.clone())
            .map_err(|e| InspectError::Run(e.to_string()))
    }

    fn inspect_encoder<S: MavState>(
        &mut self,
        state: &S,
        scale: &HeadScale,
        moves: &[S::Action],
        texts: Vec<String>,
    ) -> Result<Inspection, InspectError> {
        let Layout::Encoder(tokenizer) = &self.layout else {
            return Err(InspectError::Run("not a mav-encoder inspection graph".into()));
        };
        let input = encoder_input(tokenizer, state, moves)?;
        let roles = encoder_token_roles(state, &input, tokenizer);
        let tokens: Vec<InputToken> = input
            .ids
            .iter()
            .zip(roles)
            .map(|(&id, role)| InputToken {
                id,
                text: tokenizer.token_of(id).unwrap_or("<unk>").to_owned(),
                role,
            })
            .collect();
        let len = input.ids.len();
        if len > self.context {
            return Err(InspectError::ContextTooLong { needed: len, context: self.context });
        }
        let ids = Array2::from_shape_vec((1, len), input.ids.iter().map(|&t| i64::from(t)).collect())
            .map_err(|e| InspectError::Run(e.to_string()))?;
        let mask = Array2::<i64>::ones((1, len));
        let scale_arr = self.scale_array(scale)?;
        let run = |e: ort::Error| InspectError::Run(e.to_string());
        let feed: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> = vec![
            ("input_ids".into(), Tensor::from_array(ids).map_err(run)?.into()),
            ("attention_mask".into(), Tensor::from_array(mask).map_err(run)?.into()),
            (self.spec.head_scale.clone().into(), Tensor::from_array(scale_arr).map_err(run)?.into()),
        ];
        let names = [
            "value_logits".to_owned(),
            "best_logits".to_owned(),
            self.spec.attention.clone(),
            self.spec.residual.clone(),
            self.spec.lens_logits.clone(),
        ];
        let (arrays, run_time) = self.run_graph(feed, &names)?;
        let mut it = arrays.into_iter();
        let (Some(values), Some(best), Some(attention), Some(residual), Some(lens)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            return Err(InspectError::Run("fewer outputs than asked".into()));
        };
        let (l, h, k, d) = (self.layers, self.heads, self.buckets.k() as usize, self.d_model);
        let values = values.into_dimensionality::<Ix3>().map_err(|e| output("value_logits", e))?;
        let best = best.into_dimensionality::<Ix2>().map_err(|e| output("best_logits", e))?;
        let attention = attention.into_dimensionality::<Ix5>().map_err(|e| output(&names[2], e))?;
        let residual = residual.into_dimensionality::<Ix4>().map_err(|e| output(&names[3], e))?;
        let lens = lens.into_dimensionality::<Ix4>().map_err(|e| output(&names[4], e))?;
        if values.dim() != (1, len, k) {
            return Err(self.shape_err("value_logits", values.shape(), format!("[1, {len}, {k}]")));
        }
        if best.dim() != (1, len) {
            return Err(self.shape_err("best_logits", best.shape(), format!("[1, {len}]")));
        }
        if attention.dim() != (1, l, h, len, len) {
            return Err(self.shape_err(&names[2], attention.shape(), format!("[1, {l}, {h}, {len}, {len}]")));
        }
        if residual.dim() != (1, l + 1, len, d) {
            return Err(self.shape_err(&names[3], residual.shape(), format!("[1, {}, {len}, {d}]", l + 1)));
        }
        if lens.dim() != (1, l, len, k) {
            return Err(self.shape_err(&names[4], lens.shape(), format!("[1, {l}, {len}, {k}]")));
        }
        let mut out_moves = Vec::with_capacity(moves.len());
        for (text, &p) in texts.into_iter().zip(&input.move_positions) {
            let layers = (0..l)
                .map(|layer| self.dist(&names[4], lens.slice(s![0, layer, p, ..]).to_vec()))
                .collect::<Result<Vec<_>, _>>()?;
            out_moves.push(MoveLens {
                text,
                token: p,
                layers,
                value: self.dist("value_logits", values.slice(s![0, p, ..]).to_vec())?,
                best_logit: best[[0, p]],
            });
        }
        Ok(Inspection {
            game: state.kind(),
            tokens,
            moves: out_moves,
            attention: attention.index_axis_move(Axis(0), 0),
            residual: residual.index_axis_move(Axis(0), 0),
            attention_move: None,
            head_scale: scale.clone(),
            run_time,
        })
    }

    /// Every legal move as its own sequence (BOS, the FEN's 77 tokens, its action), in one batch.
    fn inspect_action_value<S: MavState>(
        &mut self,
        state: &S,
        scale: &HeadScale,
        texts: Vec<String>,
        asked: Option<usize>,
    ) -> Result<Inspection, InspectError> {
        let Layout::ActionValue(actions) = &self.layout else {
            return Err(InspectError::Run("not an action-value inspection graph".into()));
        };
        let (state_ids, action_ids) = action_value_input(state, actions, &texts)?;
        let n = texts.len();
        let ids = Array2::from_shape_fn((n, STATE_LEN + 1), |(r, j)| {
            i64::from(state_ids.get(j).copied().unwrap_or(action_ids[r]))
        });
        let scale_arr = self.scale_array(scale)?;
        let run = |e: ort::Error| InspectError::Run(e.to_string());
        let feed: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> = vec![
            ("input_ids".into(), Tensor::from_array(ids).map_err(run)?.into()),
            (self.spec.head_scale.clone().into(), Tensor::from_array(scale_arr).map_err(run)?.into()),
        ];
        let names = [self.spec.attention.clone(), self.spec.residual.clone(), self.spec.lens_logits.clone()];
        let (l, h, k, d, len) = (self.layers, self.heads, self.buckets.k() as usize, self.d_model, AV_SEQ);
        let (buckets, path) = (self.buckets, self.path.clone());
        let shape_err = |name: &str, got: &[usize], want: String| {
            output(name, format!("shape {got:?}, expected {want} ({})", path.display()))
        };
        let start = Instant::now();
        let got = self.session.run(feed).map_err(run)?;
        let run_time = start.elapsed();
        // read in place: only the kept sequence's maps are copied, not the batch's N
        let attention =
            output_view(&got, &names[0])?.into_dimensionality::<Ix5>().map_err(|e| output(&names[0], e))?;
        let residual =
            output_view(&got, &names[1])?.into_dimensionality::<Ix4>().map_err(|e| output(&names[1], e))?;
        let lens =
            output_view(&got, &names[2])?.into_dimensionality::<Ix3>().map_err(|e| output(&names[2], e))?;
        if attention.dim() != (n, l, h, len, len) {
            let want = format!("[{n}, {l}, {h}, {len}, {len}]");
            return Err(shape_err(&names[0], attention.shape(), want));
        }
        if residual.dim() != (n, l + 1, len, d) {
            return Err(shape_err(&names[1], residual.shape(), format!("[{n}, {}, {len}, {d}]", l + 1)));
        }
        if lens.dim() != (n, l, k) {
            return Err(shape_err(&names[2], lens.shape(), format!("[{n}, {l}, {k}]")));
        }
        let out_moves = action_value_moves(&lens, texts, buckets, &names[2])?;
        let pick = asked.unwrap_or_else(|| best_by_mean_value(&out_moves));
        let attention = attention.index_axis(Axis(0), pick).to_owned();
        let residual = residual.index_axis(Axis(0), pick).to_owned();
        drop(got);
        let tokens = action_value_tokens(&state_ids, action_ids[pick], &out_moves[pick].text, pick);
        Ok(Inspection {
            game: state.kind(),
            tokens,
            moves: out_moves,
            attention,
            residual,
            attention_move: Some(pick),
            head_scale: scale.clone(),
            run_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use shakmaty::{File, Position, Rank, Square};

    /// Every piece type of both colours, castling rights and an en-passant square.
    const ALL_PIECES: &str = "r3k2r/pbq2ppp/1pn1p3/2bpP3/3N4/2N1B3/PPPQ1PPP/R3KB1R w KQkq d6 0 10";

    fn piece_char(state: &ChessState, c: &BoardCell) -> char {
        let sq = Square::from_coords(File::new(c.col), Rank::new(c.row));
        state.position().board().piece_at(sq).map_or('.', |p| p.char())
    }

    #[test]
    fn encoder_tokens_map_to_their_squares() {
        let t = Tokenizer::new();
        let s = ChessState::from_fen(ALL_PIECES).expect("fen");
        let moves = s.legal_actions();
        let input = encoder_input(&t, &s, &moves).expect("encodes");
        let roles = encoder_token_roles(&s, &input, &t);
        assert_eq!(roles.len(), input.ids.len());
        let mut seen = std::collections::HashSet::new();
        let mut kinds = std::collections::HashSet::new();
        for (role, &id) in roles.iter().zip(&input.ids) {
            if let TokenRole::Cell(c) = role {
                let text = t.token_of(id).expect("token");
                let piece = piece_char(&s, c);
                assert_eq!(
                    text,
                    piece.to_string(),
                    "token of {} is {text}, the square holds {piece}",
                    c.name
                );
                kinds.insert(piece);
                assert!(seen.insert(c.name.clone()), "{} mapped twice", c.name);
            }
        }
        assert_eq!(seen.len(), 64);
        assert_eq!(kinds.len(), 13, "every piece type of both colours and the empty square: {kinds:?}");
        assert!(seen.contains("e1") && seen.contains("h8"));
        assert_eq!(roles[0], TokenRole::SideToMove);
        assert_eq!(roles[79], TokenRole::Separator);
        for (i, &p) in input.move_positions.iter().enumerate() {
            assert_eq!(roles[p], TokenRole::Move(i));
            assert_eq!(t.token_of(input.ids[p]), Some(s.action_to_text(moves[i]).as_str()));
        }
    }

    #[test]
    fn searchless_tokens_map_to_their_squares() {
        use crate::mav::searchless::{ALPHABET, STATE_LEN, tokenize_fen};
        let s = ChessState::from_fen(ALL_PIECES).expect("fen");
        let ids = tokenize_fen(ALL_PIECES).expect("tokenizes");
        assert_eq!(ids.len(), STATE_LEN);
        let roles = searchless_token_roles();
        assert_eq!(roles.len(), STATE_LEN + 1);
        let mut kinds = std::collections::HashSet::new();
        let mut seen = std::collections::HashSet::new();
        for (role, &id) in roles.iter().zip(&ids) {
            if let TokenRole::Cell(c) = role {
                let text = char::from(ALPHABET[id as usize]);
                let piece = piece_char(&s, c);
                assert_eq!(text, piece, "token of {} is {text}, the square holds {piece}", c.name);
                kinds.insert(piece);
                seen.insert(c.name.clone());
            }
        }
        assert_eq!((seen.len(), kinds.len()), (64, 13));
        assert_eq!(roles[1], TokenRole::Cell(BoardCell::new(GameKind::Chess, 0, 7)), "a8 first");
        assert_eq!(roles[STATE_LEN], TokenRole::Move(0));
    }

    #[test]
    fn hex_and_connect_four_cells_map_to_their_stones() {
        use crate::game::connect_four::ConnectFourState;
        use crate::game::hex::HexState;
        let t = Tokenizer::new();
        let c4 = ConnectFourState::from_moves("4453").expect("moves");
        let moves = c4.legal_actions();
        let input = encoder_input(&t, &c4, &moves).expect("encodes");
        let roles = encoder_token_roles(&c4, &input, &t);
        let stone = |c: &BoardCell| {
            t.token_of(input.ids[roles.iter().position(|r| r == &TokenRole::Cell(c.clone())).expect("cell")])
        };
        assert_eq!(stone(&BoardCell::new(GameKind::ConnectFour, 3, 0)), Some("x"), "4/1: the first stone");
        assert_eq!(stone(&BoardCell::new(GameKind::ConnectFour, 3, 1)), Some("o"));
        assert_eq!(stone(&BoardCell::new(GameKind::ConnectFour, 4, 0)), Some("x"));
        assert_eq!(stone(&BoardCell::new(GameKind::ConnectFour, 2, 0)), Some("o"));
        assert_eq!(stone(&BoardCell::new(GameKind::ConnectFour, 0, 0)), Some("."));
        let mut hex = HexState::new(7).expect("7x7");
        hex = hex.play(hex.parse_action("c5").expect("c5")).expect("plays");
        let moves = hex.legal_actions();
        let input = encoder_input(&t, &hex, &moves).expect("encodes");
        let roles = encoder_token_roles(&hex, &input, &t);
        let cells: Vec<_> = roles
            .iter()
            .zip(&input.ids)
            .filter_map(|(r, &id)| match r {
                TokenRole::Cell(c) => Some((c.name.clone(), t.token_of(id).unwrap_or("?"))),
                _ => None,
            })
            .collect();
        assert_eq!(cells.len(), 49);
        assert_eq!(cells.iter().filter(|(_, s)| *s != ".").collect::<Vec<_>>(), [&("c5".to_owned(), "x")]);
        let last = input.move_positions.len() - 1;
        assert_eq!(roles[*input.move_positions.last().expect("moves")], TokenRole::Move(last));
        assert!(roles.contains(&TokenRole::MoveSpace));
    }

    #[test]
    fn head_scale_indexes_and_refuses_heads_outside_the_model() {
        let s = HeadScale::without_head(6, 6, 2, 5).expect("in range");
        assert_eq!(s.get(2, 5), Some(0.0));
        assert_eq!(s.get(2, 4), Some(1.0));
        assert_eq!(s.changed(), [(2, 5, 0.0)]);
        assert_eq!(HeadScale::without_layer(6, 6, 1).expect("in range").changed().len(), 6);
        assert!(matches!(HeadScale::without_head(6, 6, 6, 0), Err(InspectError::HeadOutOfRange { .. })));
        assert_eq!(s.get(0, 6), None);
    }
}
