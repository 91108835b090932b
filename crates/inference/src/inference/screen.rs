//! What every evaluator checks around its model, in one place: the package's tokenizer and games at
//! load, each request before the model runs ([`screen_one_pass`]: the requests a one-pass model answers
//! without running, and the moves it values otherwise), and the shape of what the model gave back
//! ([`expect_shape`]).

use super::evaluator::{DecodeMode, EvalAnswer, EvalError, EvalRequest, EvalResult};
use crate::game::{GameKind, GameState};
use crate::mav::tokenizer::Tokenizer;
use crate::model::bounded_read::{MAX_TOKENIZER_BYTES, read_text};
use crate::model::{ModelError, ModelPackage};

/// Checks that the package's tokenizer.json has mavboard's vocabulary (the one its protocol module
/// writes) or a prefix of it (a package trained before later games appended their tokens), and returns
/// the tokenizer over exactly the package's tokens.
pub fn check_tokenizer(package: &ModelPackage) -> Result<Tokenizer, ModelError> {
    let path = package.tokenizer_path();
    let text = read_text(&path, MAX_TOKENIZER_BYTES, "tokenizer.json")?;
    let theirs: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ModelError::Manifest { path: path.clone(), reason: format!("tokenizer.json: {e}") })?;
    let tokenizer = Tokenizer::matching(&theirs).map_err(|found| ModelError::Mismatch {
        dir: package.dir.clone(),
        field: "tokenizer.json vocabulary".into(),
        expected: format!(
            "mavboard's {} tokens or a prefix of them (export it with `mavboard mav tokenizer`)",
            Tokenizer::new().vocab_size()
        ),
        found: format!("{found} tokens that differ"),
    })?;
    if package.manifest.vocab_size != tokenizer.vocab_size()
        && package.manifest.format.capabilities().generates_text
    {
        return Err(ModelError::Mismatch {
            dir: package.dir.clone(),
            field: "mav.json vocab_size".into(),
            expected: tokenizer.vocab_size().to_string(),
            found: package.manifest.vocab_size.to_string(),
        });
    }
    Ok(tokenizer)
}

/// The games of a package, comma-separated, for messages.
pub fn game_names(games: &[GameKind]) -> String {
    if games.is_empty() {
        return "no game".to_owned();
    }
    games.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ")
}

/// The evaluate-time check of a loaded model: a position of `game` is only put to a model whose mav.json
/// `games` lists it; otherwise the error names the game and the model's games.
pub fn check_game(games: &[GameKind], game: GameKind) -> Result<(), EvalError> {
    if games.contains(&game) {
        return Ok(());
    }
    Err(EvalError::Unsupported {
        what: format!("evaluate a {} position", game.name()),
        why: format!("the model was trained on {} only (mav.json games)", game_names(games)),
    })
}

/// What screening made of one request to a one-pass model (an encoder or an action-value model, which
/// value the legal moves the rules give in one call).
#[derive(Debug)]
pub enum Screened<S: GameState> {
    /// Answered without the model: a request it cannot serve, a position of another game, or a position
    /// without legal moves (its outcome, no moves).
    Answered(EvalAnswer<S>),
    /// The model is needed for these legal moves.
    Moves(Vec<S::Action>),
}

/// Screens `request` for a one-pass model of format `format` (its name, for messages) trained on
/// `games`: free decoding and next states are [`EvalError::Unsupported`] naming what can do them, a
/// position of a game not in `games` is refused by [`check_game`], and a finished position is answered
/// with its outcome.
pub fn screen_one_pass<S: GameState>(
    request: &EvalRequest<S>,
    format: &str,
    games: &[GameKind],
) -> Screened<S> {
    if request.mode == DecodeMode::Free || request.want_next_state {
        let writers = crate::model::ModelFormat::names_with(|c| c.generates_text);
        return Screened::Answered(Err(EvalError::Unsupported {
            what: "decode freely or predict states".into(),
            why: format!(
                "a {format} model only values the legal moves the rules give; use a {writers} package for free \
                 decoding and world-model features"
            ),
        }));
    }
    if let Err(e) = check_game(games, request.state.kind()) {
        return Screened::Answered(Err(e));
    }
    let moves = request.state.legal_actions();
    if moves.is_empty() {
        return Screened::Answered(Ok(EvalResult::values(Vec::new(), request.state.outcome())));
    }
    Screened::Moves(moves)
}

/// Checks that the model's output `name` has shape `expected`; otherwise the one error every evaluator
/// gives for it, naming the output and both shapes (a model or server that answers a batch with the wrong
/// shape must never be read out of bounds).
pub fn expect_shape(name: &str, found: &[usize], expected: &[usize]) -> Result<(), EvalError> {
    if found == expected {
        return Ok(());
    }
    Err(EvalError::Backend(format!(
        "the model's output {name} has shape {found:?}, expected {expected:?}: the model (or its server) does \
         not match its package"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessState;
    use crate::game::connect_four::ConnectFourState;

    fn request<S: GameState>(state: S) -> EvalRequest<S> {
        EvalRequest::values(state)
    }

    #[test]
    fn screening_answers_what_needs_no_model_and_passes_the_legal_moves_on() {
        let start = ChessState::startpos();
        match screen_one_pass(&request(start.clone()), "mav-encoder", &[GameKind::Chess]) {
            Screened::Moves(m) => assert_eq!(m.len(), 20),
            Screened::Answered(a) => panic!("the start position needs the model: {a:?}"),
        }
        let mut free = request(start.clone());
        free.mode = DecodeMode::Free;
        let Screened::Answered(Err(EvalError::Unsupported { why, .. })) =
            screen_one_pass(&free, "action-value", &[GameKind::Chess])
        else {
            panic!("free decoding is refused");
        };
        assert!(why.contains("action-value") && why.contains("mav-lm"), "{why}");
        let four = ConnectFourState::default();
        assert!(matches!(
            screen_one_pass(&request(four), "mav-encoder", &[GameKind::Chess]),
            Screened::Answered(Err(EvalError::Unsupported { .. }))
        ));
        let mate = ChessState::from_fen("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1").expect("a legal mate");
        let Screened::Answered(Ok(r)) = screen_one_pass(&request(mate), "mav-encoder", &[GameKind::Chess])
        else {
            panic!("a mate is answered without the model");
        };
        assert!(r.moves.is_empty());
    }

    #[test]
    fn a_wrong_shape_names_the_output_and_both_shapes() {
        assert!(expect_shape("logits", &[20, 128], &[20, 128]).is_ok());
        let Err(EvalError::Backend(m)) = expect_shape("logits", &[19, 128], &[20, 128]) else {
            panic!("a wrong shape is an error");
        };
        assert!(m.contains("logits") && m.contains("[19, 128]") && m.contains("[20, 128]"), "{m}");
    }
}
