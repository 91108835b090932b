//! Remote evaluation against a real MLServer (Open Inference Protocol, KServe v2 REST) on 127.0.0.1,
//! serving the shipped packages' model.onnx through our runtime (`packaging/mlserver/`): remote and local
//! results agree within 1e-5 per bucket (mav-encoder and action-value), a 400-simulation MAV-MCTS runs
//! remotely, killing the server in the middle of a search gives failed evaluations and a search that ends
//! (and once restarted on the same port the same evaluator works again), and a server with another model's
//! signature is a named error. In the app, a remote package analyses the board with its server named in
//! the status bar, and when the server is gone its Reconnect says so without freezing the board.
//!
//! The server comes from `.venv-serve/` (`./packaging/dev.sh test` installs it and sets
//! MAVBOARD_REQUIRE_SERVE=1, so in CI these tests run; outside dev.sh, without the venv, they skip with a
//! message). Each test starts its own server on random free ports and kills it (its process group) when
//! done; every wait is bounded.

use crate::common;

use crate::mlserver_common;
use crate::ui_common;

use std::time::{Duration, Instant};

use common::chess;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::{GameKind, GameState};
use mavboard::inference::evaluator::{EvalRequest, EvalResult, Evaluator};
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::remote::RemoteError;
use mavboard::inference::{LoadError, load_evaluator, load_evaluator_for};
use mavboard::search::mcts::{Mcts, MctsParams, RunLimits};
use mlserver_common::{
    Server, asset, line, remote_package, requests, root, search_through_a_kill, serve_python,
};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Every move's distribution and the best-action distribution agree within 1e-5 per bucket.
fn assert_close<S: GameState>(local: &EvalResult<S>, remote: &EvalResult<S>, what: &str) -> f64 {
    assert_eq!(local.moves.len(), remote.moves.len(), "{what}: move count");
    let mut worst = 0.0f64;
    for (l, r) in local.moves.iter().zip(&remote.moves) {
        assert_eq!(l.text, r.text, "{what}: move order");
        assert_eq!(
            l.dist.as_ref().expect("valued").probs().len(),
            r.dist.as_ref().expect("valued").probs().len(),
            "{what}: bucket count"
        );
        for (a, b) in
            l.dist.as_ref().expect("valued").probs().iter().zip(r.dist.as_ref().expect("valued").probs())
        {
            worst = worst.max((a - b).abs());
        }
    }
    let (lb, rb) = (local.best_action.as_ref().expect("asked"), remote.best_action.as_ref().expect("asked"));
    for (a, b) in lb.iter().zip(rb) {
        worst = worst.max((a - b).abs());
    }
    assert!(worst <= 1e-5, "{what}: remote and local differ by {worst:e} in a bucket");
    worst
}

#[test]
fn remote_results_match_local_and_mcts_runs_remotely() {
    let Some(python) = serve_python() else { return };
    let package = asset("mav-enc-tiny");
    let server = Server::start(&python, &package, "mav-enc-tiny");
    let remote = remote_package(&package, "match", &server.endpoint(), "mav-enc-tiny", 4);
    let options = SessionOptions::default();

    // Chess: one batch of 12 positions, split into 4 concurrent requests.
    let mavboard::inference::LoadedModel { evaluator: mut local, .. } =
        load_evaluator(&package, &options).expect("local opens");
    let (mut far, pkg, status) = {
        let mavboard::inference::LoadedModel { evaluator: e, package: p, device: s } =
            mavboard::inference::load::load_evaluator(&remote, &options)
                .unwrap_or_else(|e| panic!("remote opens: {e}\n{}", server.log()));
        (e, p, s)
    };
    assert!(pkg.manifest.remote.is_some());
    assert_eq!(status.provider, mavboard::inference::device::Provider::Remote);
    let states = line(chess(START), 12);
    let reqs = requests(&states);
    let (l, r) = (local.evaluate(&reqs), far.evaluate(&reqs));
    let mut worst = 0.0f64;
    for (i, (l, r)) in l.iter().zip(&r).enumerate() {
        let (l, r) = (l.as_ref().expect("local evaluates"), r.as_ref().expect("remote evaluates"));
        worst = worst.max(assert_close(l, r, &format!("chess position {i}")));
    }
    // One position alone (one request) gives the same as in the batch.
    let alone = far.evaluate(&reqs[5..6]).remove(0).expect("remote evaluates");
    assert_close(l[5].as_ref().expect("local"), &alone, "chess position 5 alone");

    // Connect Four through the same package and loader.
    let mavboard::inference::LoadedModel { evaluator: mut local4, .. } =
        load_evaluator_for::<ConnectFourState>(&package, &options, GameKind::ConnectFour).expect("local c4");
    let mavboard::inference::LoadedModel { evaluator: mut far4, .. } =
        load_evaluator_for::<ConnectFourState>(&remote, &options, GameKind::ConnectFour).expect("remote c4");
    let reqs4 = requests(&line(ConnectFourState::default(), 6));
    for (i, (l, r)) in local4.evaluate(&reqs4).iter().zip(&far4.evaluate(&reqs4)).enumerate() {
        let (l, r) = (l.as_ref().expect("local evaluates"), r.as_ref().expect("remote evaluates"));
        worst = worst.max(assert_close(l, r, &format!("connect four position {i}")));
    }
    eprintln!("largest remote/local difference per bucket: {worst:e}");

    // A 400-simulation MAV-MCTS with batches of 8 over the remote model.
    let mut mcts = Mcts::new(chess(START), 0, MctsParams::default()).expect("valid params");
    let start = Instant::now();
    mcts.run(far.as_mut(), RunLimits { simulations: 400, batch_size: 8 }).expect("remote search runs");
    mcts.check_consistency().expect("consistent tree");
    let stats = mcts.stats();
    eprintln!("400 simulations remotely in {:?}: {stats:?}", start.elapsed());
    assert!(stats.simulations >= 400, "{stats:?}");
    assert_eq!(stats.failed, 0, "{stats:?}");
    let snap = mcts.snapshot();
    assert!(!snap.moves.is_empty());
}

#[test]
fn killing_the_server_mid_search_fails_evaluations_and_a_restart_recovers() {
    let Some(python) = serve_python() else { return };
    let package = asset("mav-enc-tiny");
    let mut server = Server::start(&python, &package, "mav-enc-tiny");
    let remote = remote_package(&package, "kill", &server.endpoint(), "mav-enc-tiny", 4);
    let mavboard::inference::LoadedModel { evaluator: far, .. } =
        load_evaluator(&remote, &SessionOptions::default()).expect("remote opens");
    let mut e = search_through_a_kill(far, || server.kill());

    // The server restarts on the same port: the same evaluator works again (new connections).
    let ports = server.ports;
    let mut restarted = Server::spawn(&python, &package, "mav-enc-tiny", ports);
    restarted.wait_ready("mav-enc-tiny").unwrap_or_else(|why| panic!("restart: {why}"));
    let again = e.evaluate(&[EvalRequest::values(chess(START))]).remove(0);
    assert_eq!(again.expect("evaluates after the restart").moves.len(), 20);
}

#[test]
fn a_server_with_another_models_signature_is_a_named_error() {
    let Some(python) = serve_python() else { return };
    // The shipped mav-lm's graph (input_ids, attention_mask, position_ids, KV cache → logits, present.*)
    // served where a mav-encoder package expects value_logits and best_logits.
    let server = Server::start(&python, &asset("mav-tiny"), "not-an-encoder");
    let remote = remote_package(&asset("mav-enc-tiny"), "wrong", &server.endpoint(), "not-an-encoder", 2);
    match load_evaluator(&remote, &SessionOptions::default()) {
        Err(LoadError::Remote { error, .. }) if matches!(*error, RemoteError::Signature { .. }) => {
            let msg = error.to_string();
            assert!(msg.contains("ONNX output value_logits") && msg.contains("expected to exist"), "{msg}");
            assert!(msg.contains("logits"), "{msg}");
        }
        Err(e) => panic!("expected a signature error, got {e}"),
        Ok(_) => panic!("a server with another model's signature was accepted"),
    }
}

#[test]
fn remote_action_value_matches_local() {
    let Some(python) = serve_python() else { return };
    let package = root().join("tests/fixtures/models/av-fixture");
    let server = Server::start(&python, &package, "av-fixture");
    let remote = remote_package(&package, "av", &server.endpoint(), "av-fixture", 3);
    let options = SessionOptions::default();
    let mavboard::inference::LoadedModel { evaluator: mut local, .. } =
        load_evaluator(&package, &options).expect("local opens");
    let mavboard::inference::LoadedModel { evaluator: mut far, .. } =
        load_evaluator(&remote, &options).unwrap_or_else(|e| panic!("remote opens: {e}\n{}", server.log()));
    let reqs: Vec<_> = line(chess(START), 5).into_iter().map(EvalRequest::values).collect();
    for (i, (l, r)) in local.evaluate(&reqs).iter().zip(&far.evaluate(&reqs)).enumerate() {
        let (l, r) = (l.as_ref().expect("local evaluates"), r.as_ref().expect("remote evaluates"));
        assert_eq!(l.moves.len(), r.moves.len(), "position {i}");
        for (a, b) in l.moves.iter().zip(&r.moves) {
            assert_eq!(a.text, b.text, "position {i}");
            let worst = a
                .dist
                .as_ref()
                .expect("valued")
                .probs()
                .iter()
                .zip(b.dist.as_ref().expect("valued").probs())
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(worst <= 1e-5, "position {i} move {}: {worst:e}", a.text);
        }
    }
}

#[test]
fn the_app_analyses_with_a_remote_package_and_reconnect_reports_a_dead_server() {
    use egui_kittest::kittest::Queryable;
    let Some(python) = serve_python() else { return };
    let package = asset("mav-enc-tiny");
    let mut server = Server::start(&python, &package, "mav-enc-tiny");
    let remote = remote_package(&package, "app", &server.endpoint(), "mav-enc-tiny", 4);
    let settings =
        mavboard::app::settings::Settings { model_dir: Some(remote.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let arrived = ui_common::step_until(&mut h, Duration::from_secs(120), |app| {
        !mavboard::ui::values_panel::current_rows(&app.state).is_empty()
    });
    assert!(arrived, "the remote model's values arrive: {:?}", h.state().state.analysis.model);
    assert_eq!(mavboard::ui::values_panel::current_rows(&h.state().state).len(), 20);
    let info = h.state().state.analysis.model.info().cloned().expect("model info");
    assert_eq!(info.workers, 4, "one batch out per in-flight request the package allows");
    let served = format!("served by {} · mav-enc-tiny", server.endpoint());
    assert!(h.get_all_by_label_contains(&served).next().is_some(), "the status bar names the server");

    // The server goes away; Reconnect loads the package again and says why it cannot.
    server.kill();
    h.get_by_label("Reconnect").click();
    let failed = ui_common::step_until(&mut h, Duration::from_secs(60), |app| {
        matches!(app.state.analysis.model, mavboard::app::analysis::ModelStatus::Failed(_))
    });
    assert!(failed, "a dead server is a failed load: {:?}", h.state().state.analysis.model);
    let mavboard::app::analysis::ModelStatus::Failed(why) = &h.state().state.analysis.model else {
        unreachable!()
    };
    assert!(why.contains("connection refused"), "{why}");
    // The board still answers: a move is played.
    ui_common::click_square(&mut h, shakmaty::Square::E2);
    ui_common::click_square(&mut h, shakmaty::Square::E4);
    assert!(
        ui_common::board_fen(&h).starts_with("rnbqkbnr/pppppppp/8/8/4P3/"),
        "{}",
        ui_common::board_fen(&h)
    );
    drop(h);
    let _ = std::fs::remove_dir_all(&remote);
}

#[test]
fn a_server_that_goes_away_is_shown_at_once_and_reconnect_recovers() {
    use egui_kittest::kittest::Queryable;
    use mavboard::app::server_health::ServerHealth;
    let Some(python) = serve_python() else { return };
    let package = asset("mav-enc-tiny");
    let mut server = Server::start(&python, &package, "mav-enc-tiny");
    let remote = remote_package(&package, "gone", &server.endpoint(), "mav-enc-tiny", 2);
    let settings =
        mavboard::app::settings::Settings { model_dir: Some(remote.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let arrived = ui_common::step_until(&mut h, Duration::from_secs(120), |app| {
        !mavboard::ui::values_panel::current_rows(&app.state).is_empty()
    });
    assert!(arrived, "the remote model's values arrive: {:?}", h.state().state.analysis.model);
    assert!(matches!(h.state().state.analysis.server, ServerHealth::Answering { .. }));

    // The server is stopped and a move played: the refused connection reaches the user at once.
    server.kill();
    ui_common::click_square(&mut h, shakmaty::Square::E2);
    ui_common::click_square(&mut h, shakmaty::Square::E4);
    let shown = ui_common::step_until(&mut h, Duration::from_secs(5), |app| {
        matches!(app.state.analysis.server, ServerHealth::Unreachable { .. })
    });
    assert!(shown, "the server shows as unreachable: {:?}", h.state().state.analysis.server);
    let ServerHealth::Unreachable { error, last_good, .. } = &h.state().state.analysis.server else {
        unreachable!()
    };
    assert!(error.contains("connection refused"), "{error}");
    assert!(last_good.is_some(), "the last good answer's time is kept");
    assert!(h.get_all_by_label_contains("server unreachable").next().is_some(), "the status bar says so");
    assert!(
        h.get_all_by_label_contains("No values: the model server").next().is_some(),
        "the values panel says why there are no values"
    );

    // The server comes back on the same port; Reconnect retries and the next good answer clears it.
    let mut restarted = Server::spawn(&python, &package, "mav-enc-tiny", server.ports);
    restarted.wait_ready("mav-enc-tiny").unwrap_or_else(|why| panic!("restart: {why}"));
    h.get_by_label("Reconnect").click();
    let back = ui_common::step_until(&mut h, Duration::from_secs(120), |app| {
        matches!(app.state.analysis.server, ServerHealth::Answering { .. })
            && !mavboard::ui::values_panel::current_rows(&app.state).is_empty()
    });
    assert!(back, "values again after Reconnect: {:?}", h.state().state.analysis.server);
    assert_eq!(mavboard::ui::values_panel::current_rows(&h.state().state).len(), 20, "Black's 20 replies");
    drop(h);
    let _ = std::fs::remove_dir_all(&remote);
}
