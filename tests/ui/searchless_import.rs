//! The published searchless-chess models (Ruoss et al. 2024) in mavboard: their tokenization and action
//! ids exactly, and an imported checkpoint giving their outputs.
//!
//! The fixtures in tests/fixtures/searchless/ were made with the authors' own code (run from a temporary
//! folder, never committed): `actions.txt` is their 1968 moves in action order (utils.py),
//! `reference-tokens.tsv` one hash per standard-chess game of tests/fixtures/pgn over every main-line
//! position's token ids (tokenizer.py) and legal action ids, `tiny/` an orbax checkpoint of their
//! transformer with random weights (2 layers, width 32, 4 heads) saved by their checkpoint manager, and
//! `tiny-reference.{json,f32}` their predictor's bucket log-probabilities for every legal move of 116
//! positions (one with 218 legal moves).
//!
//! The conversion needs the importer's Python packages (`./packaging/dev.sh import-deps`, which
//! `./packaging/dev.sh test` runs): without them these tests skip with a message, unless
//! MAVBOARD_REQUIRE_IMPORT=1 (set by dev.sh test and so by CI), where they fail.

use crate::common;

use crate::ui_common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{mavboard_command, temp_dir};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::inference::evaluator::{EvalRequest, TopK};
use mavboard::inference::load_evaluator;
use mavboard::mav::searchless::{ActionOrder, searchless_moves, tokenize_fen};
use mavboard::pgn::PgnReader;
use mavboard::ui::values_panel::current_rows;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/searchless")
}

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The hash the reference generator computes for a game: every main-line position's 77 token ids, then its
/// legal moves' action ids sorted (u16 little-endian), then 0xff.
fn game_hash(line: &[ChessState], index: &HashMap<String, u32>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for state in line {
        let ids = tokenize_fen(&state.fen()).expect("a game position tokenizes");
        let bytes: Vec<u8> = ids.iter().map(|&i| u8::try_from(i).expect("small id")).collect();
        h = fnv(h, &bytes);
        // The move generator's moves, as python-chess lists them: mavboard's rules end a game at the 50-move
        // mark (no moves from there), python-chess leaves that to a claim.
        let mut acts: Vec<u32> = shakmaty::Position::legal_moves(state.position())
            .into_iter()
            .map(|a| *index.get(&state.action_to_text(a)).expect("every legal move has an action id"))
            .collect();
        acts.sort_unstable();
        let mut bytes: Vec<u8> =
            acts.iter().flat_map(|&a| u16::try_from(a).expect("< 1968").to_le_bytes()).collect();
        bytes.push(0xff);
        h = fnv(h, &bytes);
    }
    h
}

#[test]
fn action_ids_are_the_authors() {
    let text = std::fs::read_to_string(fixtures().join("actions.txt")).expect("actions.txt");
    let theirs: Vec<&str> = text.lines().collect();
    assert_eq!(theirs.len(), 1968);
    assert_eq!(searchless_moves(), theirs, "the action order differs from the authors' utils.py");
}

#[test]
fn token_and_action_ids_match_the_reference_tokenizer_on_every_fixture_game() {
    let text = std::fs::read_to_string(fixtures().join("reference-tokens.tsv")).expect("reference");
    let mut by_file: HashMap<&str, Vec<(usize, &str, &str)>> = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "bad reference line {line}");
        by_file.entry(f[0]).or_default().push((f[1].parse().expect("plies"), f[2], f[3]));
    }
    let index = ActionOrder::Searchless.index();
    let (mut games, mut positions) = (0usize, 0usize);
    for (file, refs) in &by_file {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn").join(file);
        let reader = std::io::BufReader::new(std::fs::File::open(&path).expect("fixture"));
        let mut ours: HashMap<(usize, String), Vec<ChessState>> = HashMap::new();
        for game in PgnReader::new(reader).flatten() {
            let Ok(line) = game.mainline_positions() else { continue };
            let line: Vec<ChessState> = line.into_iter().map(|(_, s)| s).collect();
            let Some(last) = line.last() else { continue };
            ours.insert((line.len() - 1, last.fen()), line);
        }
        for (plies, fen, hash) in refs {
            let line = ours
                .get(&(*plies, (*fen).to_owned()))
                .unwrap_or_else(|| panic!("{file}: no game of {plies} plies ending in {fen}"));
            assert_eq!(
                format!("{:016x}", game_hash(line, &index)),
                *hash,
                "{file}: the game ending in {fen} tokenizes differently from the authors' tokenizer"
            );
            games += 1;
            positions += line.len();
        }
    }
    assert!(games > 1500 && positions > 100_000, "only {games} games, {positions} positions");
    println!("{games} games, {positions} positions: token and action ids as the authors'");
}

/// A Python with the importer's packages, or None (skip) when they are missing outside dev.sh/CI.
fn importer_ready() -> bool {
    let candidates = mavboard::model::import::find_python();
    for py in candidates {
        let ok = Command::new(&py)
            .args(["-c", "import orbax.checkpoint, onnx, numpy"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return true;
        }
    }
    if std::env::var("MAVBOARD_REQUIRE_IMPORT").is_ok_and(|v| v == "1") {
        panic!("the importer's Python packages are missing: run ./packaging/dev.sh import-deps");
    }
    println!("skipped: the importer's Python packages are missing (./packaging/dev.sh import-deps)");
    false
}

fn import(checkpoint: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "import",
        "searchless",
        checkpoint.to_str().expect("utf-8 path"),
        "-o",
        out.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    mavboard_in_repo(&args)
}

/// Values every reference position with the package and returns the largest difference of a bucket
/// log-probability from the reference, and the moves compared. A state-value package values a move whose
/// successor the rules end from its result, not by the model (the authors' engine asks the model even
/// then): such moves are checked to be that result and left out of the comparison.
fn max_difference(package: &Path, reference: &Path) -> (f64, usize) {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference.with_extension("json")).expect("json"))
            .expect("reference json");
    let bytes = std::fs::read(reference.with_extension("f32")).expect("f32");
    let rows: Vec<f32> =
        bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        load_evaluator(package, &Default::default()).expect("the package opens");
    let mut row = 0usize;
    let mut worst = 0f64;
    let mut moves_checked = 0usize;
    let positions = meta["positions"].as_array().expect("positions");
    for pos in positions {
        let fen = pos["fen"].as_str().expect("fen");
        let state = ChessState::from_fen(fen).expect("reference FEN");
        let mut req = EvalRequest::values(state.clone());
        req.top_k = TopK::All;
        let result = eval.evaluate(&[req]).pop().expect("one result").expect("evaluates");
        let by_text: HashMap<&str, &[f64]> = result
            .moves
            .iter()
            .map(|m| (m.text.as_str(), m.dist.as_ref().expect("valued").probs()))
            .collect();
        let moves = pos["moves"].as_array().expect("moves");
        assert_eq!(by_text.len(), moves.len(), "{fen}: legal move count");
        for m in moves {
            let text = m.as_str().expect("uci");
            let probs = by_text.get(text).unwrap_or_else(|| panic!("{fen}: no value for {text}"));
            let action = state.parse_action(text).expect("a legal reference move");
            if let Some(outcome) = state.play(action).expect("legal").outcome()
                && meta["kind"] == "sv"
            {
                let want = mavboard::inference::state_value::decided(
                    mavboard::mav::buckets::Buckets::new(128).expect("128 buckets"),
                    &outcome,
                    state.to_move(),
                )
                .expect("a distribution");
                assert_eq!(*probs, want.probs(), "{fen} {text}: valued from its result {outcome:?}");
                row += 1;
                continue;
            }
            for (k, p) in probs.iter().enumerate() {
                let d = (p.ln() - f64::from(rows[row * 128 + k])).abs();
                worst = worst.max(d);
            }
            row += 1;
            moves_checked += 1;
        }
    }
    assert_eq!(row * 128, rows.len(), "every reference row was compared");
    (worst, moves_checked)
}

#[test]
fn tiny_checkpoint_converts_to_the_authors_outputs() {
    if !importer_ready() {
        return;
    }
    let dir = temp_dir("searchless", "tiny");
    let out = dir.join("pkg");
    let o = import(&fixtures().join("tiny"), &out, &["--heads", "4"]);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("2 layers, width 32, 4 heads, 128 buckets"), "{stdout}");
    let manifest = std::fs::read_to_string(out.join("mav.json")).expect("mav.json");
    assert!(manifest.contains("\"av_action_order\": \"searchless\""), "{manifest}");
    assert!(manifest.contains("CC-BY-4.0"), "{manifest}");
    let created: serde_json::Value = serde_json::from_str(&manifest).expect("mav.json is JSON");
    let created = created["created"].as_str().expect("a creation date");
    assert!(
        created.len() == 10 && created.as_bytes()[4] == b'-' && created.as_bytes()[7] == b'-',
        "{created}"
    );
    assert!(out.join("MODEL_CARD.md").is_file());
    let (worst, moves) = max_difference(&out, &fixtures().join("tiny-reference"));
    println!("{moves} moves × 128 buckets: max |Δ log p| = {worst:.2e}");
    assert!(moves > 3000);
    assert!(worst <= 1e-4, "max |Δ log p| = {worst}");
    // The converted package is a package: `analyse` runs on it.
    let a = mavboard_in_repo(&["analyse", "--model", out.to_str().expect("utf-8"), "--k", "3"]);
    assert!(a.status.success(), "analyse failed: {}", String::from_utf8_lossy(&a.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The authors' state-value predictor (their `9M_state_value` checkpoint's configuration, random weights):
/// recognised from the folder's name, written as a `state-value` package, and every legal move valued as
/// their `StateValueEngine` values it (the successor's distribution, flipped), in one batch per position.
#[test]
fn tiny_state_value_checkpoint_converts_to_the_authors_outputs() {
    if !importer_ready() {
        return;
    }
    let dir = temp_dir("searchless", "tiny-sv");
    let out = dir.join("pkg");
    let o = import(&fixtures().join("tiny_state_value"), &out, &["--heads", "4"]);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("state-value model, 2 layers, width 32, 4 heads, 128 buckets"), "{stdout}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("mav.json")).expect("mav.json"))
            .expect("json");
    assert_eq!(manifest["format"], "state-value");
    assert_eq!(manifest["context_length"], 77);
    assert!(manifest.get("inspection").is_none(), "a state-value package has no inspection graph");
    let card = std::fs::read_to_string(out.join("MODEL_CARD.md")).expect("card");
    assert!(card.contains("77.5 %"), "{card}");
    let (worst, moves) = max_difference(&out, &fixtures().join("tiny_state_value-reference"));
    println!("{moves} moves × 128 buckets: max |Δ log p| = {worst:.2e}");
    assert!(moves > 3000);
    assert!(worst <= 1e-4, "max |Δ log p| = {worst}");
    // The package is a package: `analyse` runs on it. Under another folder name, --kind says the kind
    // (the weights of the two value predictors have the same shapes).
    let a = mavboard_in_repo(&["analyse", "--model", out.to_str().expect("utf-8"), "--k", "3"]);
    assert!(a.status.success(), "analyse failed: {}", String::from_utf8_lossy(&a.stderr));
    let renamed = dir.join("renamed");
    copy_dir(&fixtures().join("tiny_state_value"), &renamed);
    let sv = dir.join("pkg-kind");
    let o = import(&renamed, &sv, &["--heads", "4", "--kind", "sv"]);
    assert!(o.status.success(), "import --kind sv failed: {}", String::from_utf8_lossy(&o.stderr));
    let (worst_kind, _) = max_difference(&sv, &fixtures().join("tiny_state_value-reference"));
    assert!(worst_kind <= 1e-4, "--kind sv: max |Δ log p| = {worst_kind}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The authors' behavioural-cloning predictor (their `9M_behavioral_cloning` configuration, random weights):
/// recognised from its head of 1968 actions, written as a `behavioral-cloning` package, and every legal
/// move given the probability their `BCEngine` gives it (the legal actions' log-probabilities renormalised).
/// The package has no values: `analyse` prints probabilities, and a search stops at its root.
#[test]
fn tiny_behavioural_cloning_checkpoint_converts_to_the_authors_outputs() {
    if !importer_ready() {
        return;
    }
    let dir = temp_dir("searchless", "tiny-bc");
    let out = dir.join("pkg");
    let o = import(&fixtures().join("tiny_behavioral_cloning"), &out, &["--heads", "4"]);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("behavioral-cloning model, 2 layers, width 32, 4 heads, a policy over 1968 actions"),
        "{stdout}"
    );
    assert!(stdout.contains("most likely by the policy"), "{stdout}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("mav.json")).expect("mav.json"))
            .expect("json");
    assert_eq!(manifest["format"], "behavioral-cloning");
    assert_eq!(
        (manifest["num_buckets"].as_u64(), manifest["av_action_vocab_size"].as_u64()),
        (Some(0), Some(1968))
    );
    let card = std::fs::read_to_string(out.join("MODEL_CARD.md")).expect("card");
    assert!(card.contains("65.7 %"), "{card}");
    // Every position's legal moves against the authors' BCEngine log-probabilities.
    let (worst, at, agree, positions) =
        policy_difference(&out, &fixtures().join("tiny_behavioral_cloning-reference"));
    println!("{at} moves of {positions} positions: max |Δ log p| = {worst:.2e}; same argmax in {agree}");
    // The same most likely move everywhere (one near-tie may fall the other way on another CPU).
    assert!(at > 3000 && positions >= 100 && agree + 1 >= positions, "{agree} of {positions}");
    assert!(worst <= 1e-4, "max |Δ log p| = {worst}");
    // `analyse` prints probabilities and says there are no values; a search stops at its root.
    let a = mavboard_in_repo(&["analyse", "--model", out.to_str().expect("utf-8")]);
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(a.status.success(), "analyse failed: {}", String::from_utf8_lossy(&a.stderr));
    assert!(text.contains("prob %") && text.contains("no win probabilities"), "{text}");
    // AlphaZero's split: the action-value package's values, this policy as the search's prior. Every root
    // move's prior is the policy (as `analyse` lists it) with the ε = 0.1 uniform share.
    let av = dir.join("av");
    let o = import(&fixtures().join("tiny"), &av, &["--heads", "4"]);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let json = |args: &[&str]| -> serde_json::Value {
        let o = mavboard_in_repo(args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    let model = out.to_str().expect("utf-8");
    let av_dir = av.to_str().expect("utf-8");
    let policy = json(&["analyse", "--model", model, "--json"]);
    let searched = json(&["analyse", "--model", av_dir, "--sims", "24", "--policy", model, "--json"]);
    let roots = searched["search"]["moves"].as_array().expect("root moves");
    assert_eq!(roots.len(), 20);
    for m in roots {
        let mv = m["action"].as_str().expect("move");
        let p = policy["moves"].as_array().expect("moves").iter().find(|x| x["move"] == mv).expect("listed");
        let want = 0.9 * p["probability"].as_f64().expect("p") + 0.1 / 20.0;
        assert!((m["prior"].as_f64().expect("prior") - want).abs() < 1e-5, "{mv}: {m} vs {want}");
    }
    let totals = &searched["search"]["totals"];
    assert!(totals["simulations"].as_u64() >= Some(16), "values are backed up below the root: {totals}");
    // `eval --puzzles` takes it as an agent: the policy's most likely move.
    let csv = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/puzzles/lichess-puzzles-dev.csv");
    let model = out.to_str().expect("utf-8");
    let csv = csv.to_str().expect("utf-8");
    let e =
        mavboard_in_repo(&["eval", "--model", model, "--puzzles", csv, "--limit", "5", "--scoring", "mean"]);
    let text = String::from_utf8_lossy(&e.stdout);
    assert!(e.status.success(), "eval failed: {text}{}", String::from_utf8_lossy(&e.stderr));
    assert!(text.contains("puzzles: 5") && text.contains("plays its most likely move"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A behavioural-cloning package's move probabilities against the authors' `BCEngine` log-probabilities in
/// `reference` (.json, .f32): the largest |Δ log p|, the moves compared, the positions whose most likely
/// move is theirs, and the positions.
fn policy_difference(package: &Path, reference: &Path) -> (f64, usize, usize, usize) {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference.with_extension("json")).expect("json"))
            .expect("reference json");
    let bytes = std::fs::read(reference.with_extension("f32")).expect("f32");
    let theirs: Vec<f32> =
        bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        load_evaluator(package, &Default::default()).expect("the package opens");
    let (mut at, mut worst, mut agree) = (0usize, 0f64, 0usize);
    let positions = meta["positions"].as_array().expect("positions");
    for pos in positions {
        let fen = pos["fen"].as_str().expect("fen");
        let state = ChessState::from_fen(fen).expect("reference FEN");
        let result =
            eval.evaluate(&[EvalRequest::values(state)]).pop().expect("one result").expect("evaluates");
        assert!(!result.has_values() && result.moves.iter().all(|m| m.dist.is_none()), "{fen}: no values");
        let policy = result.best_action.clone().expect("the policy");
        assert!(
            (policy.iter().sum::<f64>() - 1.0).abs() < 1e-9,
            "{fen}: a distribution over the legal moves"
        );
        assert!(policy.windows(2).all(|w| w[0] >= w[1]), "{fen}: most likely first");
        let ours: HashMap<&str, f64> =
            result.moves.iter().map(|m| m.text.as_str()).zip(policy.iter().copied()).collect();
        let moves = pos["moves"].as_array().expect("moves");
        assert_eq!(ours.len(), moves.len(), "{fen}: legal move count");
        let mut their_best = (f32::NEG_INFINITY, "");
        for m in moves {
            let text = m.as_str().expect("uci");
            let p = ours.get(text).unwrap_or_else(|| panic!("{fen}: no probability for {text}"));
            worst = worst.max((p.ln() - f64::from(theirs[at])).abs());
            if theirs[at] > their_best.0 {
                their_best = (theirs[at], text);
            }
            at += 1;
        }
        agree += usize::from(result.moves[0].text == their_best.1);
    }
    assert_eq!(at, theirs.len(), "every reference probability was compared");
    (worst, at, agree, positions.len())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn an_imported_package_analyses_in_the_app_with_its_128_buckets() {
    if !importer_ready() {
        return;
    }
    let dir = temp_dir("searchless", "app");
    // The action-value and the state-value predictor: the panel is the same for both.
    for (folder, name) in [("tiny", "searchless-tiny"), ("tiny_state_value", "searchless-tiny_state_value")] {
        let out = dir.join(folder);
        let o = import(&fixtures().join(folder), &out, &["--heads", "4"]);
        assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
        let settings =
            mavboard::app::settings::Settings { model_dir: Some(out.clone()), ..Default::default() };
        let mut h = ui_common::app_with_model(settings);
        let arrived = ui_common::step_until(&mut h, std::time::Duration::from_secs(60), |app| {
            !current_rows(&app.state).is_empty()
        });
        assert!(
            arrived,
            "{folder}: the imported model's values arrive: {:?}",
            h.state().state.analysis.model
        );
        let rows = current_rows(&h.state().state);
        assert_eq!(rows.len(), 20, "{folder}: every legal move of the start position");
        for r in &rows {
            assert_eq!(r.distribution.len(), 128, "{}: the searchless buckets, shown as such", r.san);
            assert!((r.distribution.iter().sum::<f64>() - 1.0).abs() < 1e-4);
        }
        use egui_kittest::kittest::Queryable;
        assert!(h.get_all_by_label_contains(&format!("Model: {name}")).next().is_some(), "{folder}");
        drop(h);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The behavioural-cloning package in the app: the panel shows each move's probability, most likely first,
/// says that the model gives no values, and the same package as model B beside the action-value one is
/// compared by its probabilities (ranks and best move, no value gap).
#[test]
fn a_behavioural_cloning_package_shows_probabilities_alone_and_beside_a_value_model() {
    if !importer_ready() {
        return;
    }
    use egui_kittest::kittest::Queryable;
    let dir = temp_dir("searchless", "app-bc");
    let (bc, av) = (dir.join("bc"), dir.join("av"));
    for (folder, out) in [("tiny_behavioral_cloning", &bc), ("tiny", &av)] {
        let o = import(&fixtures().join(folder), out, &["--heads", "4"]);
        assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    let settings = mavboard::app::settings::Settings { model_dir: Some(bc.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let arrived = ui_common::step_until(&mut h, std::time::Duration::from_secs(60), |app| {
        !current_rows(&app.state).is_empty()
    });
    assert!(arrived, "the policy arrives: {:?}", h.state().state.analysis.model);
    let rows = current_rows(&h.state().state);
    assert_eq!(rows.len(), 20, "every legal move of the start position");
    let probs: Vec<f64> = rows.iter().map(|r| r.probability.expect("a probability")).collect();
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-4, "{probs:?}");
    assert!(probs.windows(2).all(|w| w[0] >= w[1]), "most likely first: {probs:?}");
    assert!(
        rows.iter().all(|r| r.distribution.is_empty() && r.values.iter().all(|v| Some(*v) == r.probability))
    );
    h.run();
    h.get_by_label("Prob %");
    h.get_by_label_contains("no values — max and mean scoring do not apply");
    drop(h);

    // The action-value package as A, the policy as B.
    let settings = mavboard::app::settings::Settings { model_dir: Some(av.clone()), ..Default::default() };
    let mut h = ui_common::app_with_model(settings);
    let wait = std::time::Duration::from_secs(60);
    assert!(ui_common::step_until(&mut h, wait, |app| !current_rows(&app.state).is_empty()), "A's values");
    h.state_mut().state.apply(mavboard::app::command::Command::Compare(
        mavboard::app::compare_model::CompareCommand::Open(bc.clone()),
    ));
    let compared = |app: &mavboard::shell::MavboardApp| {
        let s = &app.state;
        matches!(s.compare.answer_for(s.current()), Some(Ok(_)))
    };
    assert!(
        ui_common::step_until(&mut h, wait, compared),
        "B's policy arrives: {:?}",
        h.state().state.compare
    );
    h.run();
    h.get_by_label("B prob %");
    let state = &h.state().state;
    let answer = match state.compare.answer_for(state.current()) {
        Some(Ok(a)) => a.clone(),
        other => panic!("no answer: {other:?}"),
    };
    let c = answer.compare(&current_rows(state), mavboard::mav::scoring::Scoring::Mean, 0.0);
    assert!(c.a_values && !c.b_values);
    assert_eq!(c.moves.len(), 20);
    assert!(c.moves.iter().all(|m| m.gap.is_none() && m.a.is_some() && m.b.is_some()), "no value gap");
    // With a zero margin only the best moves are marked: a value and a probability are not set apart.
    let marked: Vec<&str> = c.moves.iter().filter(|m| m.disagree).map(|m| m.text.as_str()).collect();
    assert_eq!(marked.is_empty(), !c.best_differs, "{marked:?}");
    assert!(marked.len() <= 2, "{marked:?}");
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The published 9M shape (or any other checkpoint) checked the same way, when a checkpoint and its
/// reference outputs are named by MAVBOARD_SEARCHLESS_CHECK=CHECKPOINT_DIR:REFERENCE_PREFIX (made with the
/// authors' code, as the fixture was). Skipped otherwise.
#[test]
fn external_checkpoint_converts_to_its_reference_outputs() {
    let Ok(spec) = std::env::var("MAVBOARD_SEARCHLESS_CHECK") else {
        println!("skipped: MAVBOARD_SEARCHLESS_CHECK=CHECKPOINT_DIR:REFERENCE_PREFIX is not set");
        return;
    };
    let (ckpt, reference) = spec.split_once(':').expect("CHECKPOINT_DIR:REFERENCE_PREFIX");
    assert!(importer_ready(), "the importer's Python packages are needed");
    let dir = temp_dir("searchless", "external");
    let out = dir.join("pkg");
    let o = import(Path::new(ckpt), &out, &[]);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    println!("{}", String::from_utf8_lossy(&o.stdout));
    let meta = std::fs::read_to_string(Path::new(reference).with_extension("json")).expect("reference json");
    let worst = if meta.contains("\"kind\": \"bc\"") {
        let (worst, moves, agree, positions) = policy_difference(&out, Path::new(reference));
        println!("{ckpt}: {moves} moves: max |Δ log p| = {worst:.2e}; same argmax in {agree} of {positions}");
        worst
    } else {
        let (worst, moves) = max_difference(&out, Path::new(reference));
        println!("{ckpt}: {moves} moves × 128 buckets: max |Δ log p| = {worst:.2e}");
        worst
    };
    assert!(worst <= 1e-4, "max |Δ log p| = {worst}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes a changed copy of the tiny checkpoint's parameters with orbax: `edit` is Python acting on the
/// flat dict `p` (module path → {name: array}).
fn edited_checkpoint(dir: &Path, folder: &str, edit: &str) -> Option<PathBuf> {
    let out = dir.join(folder);
    let script = format!(
        "import sys, numpy as np, orbax.checkpoint as ocp, warnings\n\
         warnings.simplefilter('ignore')\n\
         p = ocp.PyTreeCheckpointer().restore(sys.argv[1])\n\
         p = {{k: {{n: np.asarray(a) for n, a in v.items()}} for k, v in p.items()}}\n\
         {edit}\n\
         ocp.PyTreeCheckpointer().save(sys.argv[2], p)\n"
    );
    for py in mavboard::model::import::find_python() {
        let Ok(o) = Command::new(&py)
            .arg("-c")
            .arg(&script)
            .arg(fixtures().join("tiny/1000/params"))
            .arg(out.join("1000/params"))
            .output()
        else {
            continue;
        };
        if o.status.success() {
            return Some(out);
        }
    }
    None
}

#[test]
fn wrong_checkpoints_are_named_errors() {
    if !importer_ready() {
        return;
    }
    let dir = temp_dir("searchless", "wrong");
    let cases: [(&str, &str, &str); 4] = [
        ("missing-layer", "del p['linear_4']", "no 'linear_4/w' (layer 1 MLP up)"),
        (
            "other-vocab",
            "p['embed']['embeddings'] = p['embed']['embeddings'][:1000]",
            "1000 rows, expected 1968",
        ),
        (
            "other-head",
            "p['linear_6'] = {'w': np.zeros((32, 1000), np.float32), 'b': np.zeros(1000, np.float32)}",
            "1000 outputs, expected 128 return buckets (action-value, state-value) or 1968 actions",
        ),
        ("no-positions", "del p['embed_1']", "no learned positional embeddings"),
    ];
    for (folder, edit, want) in cases {
        let ckpt = edited_checkpoint(&dir, folder, edit).expect("orbax writes the edited checkpoint");
        let out = dir.join(format!("{folder}-pkg"));
        let o = import(&ckpt, &out, &["--heads", "4"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{folder}: the import should fail");
        assert!(err.contains(want), "{folder}: expected '{want}' in: {err}");
        assert!(!out.exists(), "{folder}: a failed import must leave no package");
    }
    // A kind the head contradicts: a value head called behavioural cloning, and the other way round.
    for (ckpt, kind) in [(fixtures().join("tiny"), "bc"), (fixtures().join("tiny_behavioral_cloning"), "av")]
    {
        let o = import(&ckpt, &dir.join(format!("kind-{kind}")), &["--heads", "4", "--kind", kind]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(&format!("--kind {kind} does not fit")), "{err}");
    }
    // Not a checkpoint at all, and a step that is not there.
    let o = import(&dir.join("nothing-here"), &dir.join("x"), &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a folder"));
    let o = import(&fixtures().join("tiny"), &dir.join("y"), &["--step", "5", "--heads", "4"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("step 5 is not in"), "{o:?}");
    // A shape that is not published needs --heads.
    let o = import(&fixtures().join("tiny"), &dir.join("z"), &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("pass --heads"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mavboard` with `args`, run from the repository root (the importer's paths are relative to it).
fn mavboard_in_repo(args: &[&str]) -> std::process::Output {
    mavboard_command().args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("mavboard runs")
}
