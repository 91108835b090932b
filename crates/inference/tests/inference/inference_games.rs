//! The mav-encoder and mav-lm evaluators are generic over the game, and a package is only used for the
//! games its mav.json lists: chess-only packages (copies of the shipped ones whose mav.json lists chess
//! only) refuse Connect Four and Hex at load time (naming the game and the package's games) and, if
//! reached, at evaluate time; never garbage. The shipped packages themselves value all four games.

use crate::package_copy;

use std::path::{Path, PathBuf};

use mavboard_inference::game::chess::ChessState;
use mavboard_inference::game::connect_four::ConnectFourState;
use mavboard_inference::game::hex::HexState;
use mavboard_inference::game::{GameKind, GameState};
use mavboard_inference::inference::encoder::EncoderEvaluator;
use mavboard_inference::inference::evaluator::{EvalError, EvalRequest, Evaluator};
use mavboard_inference::inference::lm::MavLmEvaluator;
use mavboard_inference::inference::onnx::SessionOptions;
use mavboard_inference::inference::{LoadError, load_evaluator_for};
use mavboard_inference::mav::state::MavState;
use mavboard_inference::model::ModelPackage;

fn asset(name: &str) -> PathBuf {
    mavboard_inference::checkout_dir().join("assets/models").join(name)
}

/// A chess-only copy of a shipped package: the same model and tokenizer, its mav.json listing chess and
/// Chess960 only (the shipped packages know Connect Four and Hex too).
fn chess_only(name: &str) -> PathBuf {
    package_copy::with_games(&asset(name), &["chess", "chess960"])
}

fn encoder_package() -> PathBuf {
    chess_only("mav-enc-tiny")
}

fn lm_package() -> PathBuf {
    chess_only("mav-tiny")
}

#[test]
fn the_shipped_packages_value_connect_four_and_hex() {
    for name in ["mav-enc-tiny", "mav-tiny"] {
        let dir = asset(name);
        let mavboard_inference::inference::LoadedModel { evaluator: mut e, .. } =
            load_evaluator_for::<ConnectFourState>(&dir, &SessionOptions::default(), GameKind::ConnectFour)
                .expect("loads for Connect Four");
        let r = e.evaluate(&[EvalRequest::values(ConnectFourState::default())]).remove(0).expect("evaluates");
        assert_eq!(r.moves.len(), 7, "{name}");
        let mavboard_inference::inference::LoadedModel { evaluator: mut e, .. } =
            load_evaluator_for::<HexState>(&dir, &SessionOptions::default(), GameKind::Hex)
                .expect("loads for Hex");
        let states = hex_states();
        let r = e.evaluate(&[EvalRequest::values(states[1])]).remove(0).expect("evaluates");
        assert_eq!(r.moves.len(), 48, "{name}: every empty cell of 7x7 after one stone");
    }
}

/// Loading `dir` for `game` fails with the wrong-game error, which names the game and the package's games.
fn refused_at_load<S: MavState>(dir: &Path, game: GameKind) {
    match load_evaluator_for::<S>(dir, &SessionOptions::default(), game) {
        Err(e @ LoadError::WrongGame { .. }) => {
            let text = e.to_string();
            assert!(text.contains(game.name()), "{text}");
            assert!(text.contains("chess, chess960"), "{text}");
        }
        Err(other) => panic!("expected a wrong-game error, got {other}"),
        Ok(_) => panic!("a chess-only package loaded for {}", game.name()),
    }
}

/// Evaluating `states` on a chess-only evaluator answers each with an `Unsupported` error naming the
/// state's game and the package's games.
fn refused_at_evaluate<S: MavState>(evaluator: &mut dyn Evaluator<S>, states: Vec<S>) {
    let requests: Vec<_> = states.into_iter().map(EvalRequest::values).collect();
    let results = evaluator.evaluate(&requests);
    assert_eq!(results.len(), requests.len());
    for (r, req) in results.iter().zip(&requests) {
        match r {
            Err(e @ EvalError::Unsupported { .. }) => {
                let text = e.to_string();
                assert!(text.contains(req.state.kind().name()), "{text}");
                assert!(text.contains("chess, chess960"), "{text}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

fn connect_four_states() -> Vec<ConnectFourState> {
    let start = ConnectFourState::default();
    let mid = ConnectFourState::from_moves("4453").expect("legal moves");
    vec![start, mid]
}

fn hex_states() -> Vec<HexState> {
    let start = HexState::new(7).expect("7x7");
    let one = start.play(start.parse_action("d4").expect("d4")).expect("legal");
    vec![start, one]
}

#[test]
fn chess_only_packages_are_refused_for_connect_four_and_hex_at_load() {
    for dir in [encoder_package(), lm_package()] {
        refused_at_load::<ConnectFourState>(&dir, GameKind::ConnectFour);
        refused_at_load::<HexState>(&dir, GameKind::Hex);
    }
}

#[test]
fn the_generic_loader_opens_a_package_for_its_own_game() {
    for dir in [encoder_package(), lm_package()] {
        let mavboard_inference::inference::LoadedModel { evaluator: mut e, package, .. } =
            load_evaluator_for::<ChessState>(&dir, &SessionOptions::default(), GameKind::Chess)
                .expect("a chess package loads for chess");
        assert!(package.manifest.games.contains(&GameKind::Chess));
        let r = e.evaluate(&[EvalRequest::values(ChessState::startpos())]).remove(0).expect("evaluates");
        assert_eq!(r.moves.len(), 20);
    }
}

#[test]
fn the_encoder_refuses_other_games_at_evaluate() {
    let package = ModelPackage::open(&encoder_package()).expect("package");
    let mut e = EncoderEvaluator::open(&package, &SessionOptions::default()).expect("opens");
    assert_eq!(e.games(), [GameKind::Chess, GameKind::Chess960]);
    refused_at_evaluate::<ConnectFourState>(&mut e, connect_four_states());
    refused_at_evaluate::<HexState>(&mut e, hex_states());
    // The same evaluator still values chess.
    let r = Evaluator::<ChessState>::evaluate(&mut e, &[EvalRequest::values(ChessState::startpos())]);
    assert_eq!(r[0].as_ref().expect("chess evaluates").moves.len(), 20);
}

#[test]
fn the_lm_refuses_other_games_at_evaluate() {
    let package = ModelPackage::open(&lm_package()).expect("package");
    let mut e = MavLmEvaluator::open(&package, &SessionOptions::default()).expect("opens");
    assert_eq!(e.games(), [GameKind::Chess, GameKind::Chess960]);
    refused_at_evaluate::<ConnectFourState>(&mut e, connect_four_states());
    refused_at_evaluate::<HexState>(&mut e, hex_states());
}

#[test]
fn an_action_value_package_is_chess_only_even_if_its_manifest_lists_another_game() {
    let fixture = mavboard_inference::checkout_dir().join("tests/fixtures/models/av-fixture");
    // As shipped (games: chess) it is refused for Connect Four like any chess-only package.
    let e =
        load_evaluator_for::<ConnectFourState>(&fixture, &SessionOptions::default(), GameKind::ConnectFour)
            .expect_err("refused");
    assert!(matches!(e, LoadError::WrongGame { game: "connect_four", .. }), "{e}");
    // A copy that claims Connect Four too is still refused: the format itself is chess's.
    let dir = std::env::temp_dir().join(format!("mavboard-av-c4-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for entry in std::fs::read_dir(&fixture).expect("fixture") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
    }
    let manifest = std::fs::read_to_string(fixture.join("mav.json")).expect("mav.json");
    let mut json: serde_json::Value = serde_json::from_str(&manifest).expect("json");
    json["games"] = serde_json::json!(["chess", "connect_four"]);
    std::fs::write(dir.join("mav.json"), json.to_string()).expect("write");
    let refused =
        load_evaluator_for::<ConnectFourState>(&dir, &SessionOptions::default(), GameKind::ConnectFour)
            .expect_err("refused");
    let chess = load_evaluator_for::<ChessState>(&dir, &SessionOptions::default(), GameKind::Chess);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(matches!(refused, LoadError::FormatNotForGame { game: "connect_four", .. }), "{refused}");
    assert!(refused.to_string().contains("action-value"), "{refused}");
    assert!(chess.is_ok(), "the same package opens for chess: {:?}", chess.err().map(|e| e.to_string()));
}
