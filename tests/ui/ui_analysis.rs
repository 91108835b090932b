//! The analysis panels through the real app window and the real engine: the shipped model's action values
//! for the board position, the max/mean scoring switch reordering them, a search whose visits appear, the
//! engine following the board, and a model that cannot be loaded.

use crate::ui_common;

use std::path::PathBuf;
use std::time::Duration;

use egui_kittest::kittest::Queryable;
use mavboard::app::analysis::ModelStatus;
use mavboard::app::command::Command;
use mavboard::app::command::{AnalysisCommand, DocCommand, FileCommand, ViewCommand};
use mavboard::app::settings::{SearchSettings, Settings};
use mavboard::game::GameState;
use mavboard::mav::scoring::Scoring;
use mavboard::ui::values_panel::current_rows;
use shakmaty::Square;
use ui_common::{app_with_model, click_square, step_until};

const WAIT: Duration = Duration::from_secs(60);

fn has_values(app: &mavboard::shell::MavboardApp) -> bool {
    !current_rows(&app.state).is_empty()
}

#[test]
fn shipped_model_values_every_legal_move_of_the_board_position() {
    let mut h = app_with_model(Settings::default());
    assert!(
        step_until(&mut h, WAIT, has_values),
        "the model's values arrive: {:?}",
        h.state().state.analysis.model
    );
    assert!(matches!(h.state().state.analysis.model, ModelStatus::Ready(_)));
    let rows = current_rows(&h.state().state);
    assert_eq!(rows.len(), 20, "every legal move of the start position");
    for r in &rows {
        let sum: f64 = r.distribution.iter().sum();
        assert_eq!(r.distribution.len(), 64);
        assert!((sum - 1.0).abs() < 1e-4, "{} sums to {sum}", r.san);
        assert!(r.values.iter().all(|v| (0.0..=1.0).contains(v)));
    }
    assert!(h.get_all_by_label_contains("Model: mav-enc-tiny").next().is_some());
    h.get_by_label("Nf3");
    // Ordered best first by the chosen scoring (mean by default).
    assert!(rows.windows(2).all(|w| w[0].values[0] >= w[1].values[0]));

    // Playing a move: the engine follows the board and values the new position.
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    assert!(step_until(&mut h, WAIT, |app| { current_rows(&app.state).iter().any(|r| r.san == "e5") }));
    let rows = current_rows(&h.state().state);
    assert_eq!(rows.len(), h.state().state.current().legal_actions().len());
}

#[test]
fn switching_scoring_reorders_moves_where_max_and_mean_disagree() {
    let mut h = app_with_model(Settings::default());
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadFen(fen.into())));
    assert!(step_until(&mut h, WAIT, |app| current_rows(&app.state).iter().any(|r| r.san == "Bb5")));
    let rows = current_rows(&h.state().state);
    let (a, b) = {
        // Two moves that the scorings order differently.
        let mut pair = None;
        for x in &rows {
            for y in &rows {
                if x.ranks[0] < y.ranks[0] && x.ranks[1] > y.ranks[1] {
                    pair = Some((x.san.clone(), y.san.clone()));
                }
            }
        }
        pair.expect("the shipped model's max and mean disagree somewhere in this position")
    };
    let y_of = |h: &egui_kittest::Harness<'_, mavboard::shell::MavboardApp>, san: &str| {
        h.get_all_by_label(san).next().expect("the move is listed").rect().center().y
    };
    assert!(y_of(&h, &a) < y_of(&h, &b), "{a} above {b} under mean scoring");
    assert!(h.get_all_by_label("≠").next().is_some(), "disagreements are marked");
    h.get_by_label("Max").click();
    h.step();
    h.step();
    assert_eq!(h.state().state.settings.scoring, Scoring::Max);
    assert!(y_of(&h, &a) > y_of(&h, &b), "{b} above {a} under max scoring");
}

/// A rule beyond the paper's two through the same door: the panel's button ranks the moves by the 0.25
/// quantile, its column shows it, and the rows are in its order on screen.
#[test]
fn choosing_the_quantile_rule_ranks_the_values_panel_by_it() {
    let mut h = app_with_model(Settings::default());
    assert!(step_until(&mut h, WAIT, has_values), "the model's values arrive");
    assert!(h.query_by_label("Q0.25 %").is_none(), "max and mean are shown by default");
    h.get_by_label("Q0.25").click();
    h.step();
    h.step();
    let rule = Scoring::quantile(0.25).expect("a quantile");
    assert_eq!(h.state().state.settings.scoring, rule);
    assert_eq!(h.state().state.settings.scoring_rules(), [rule, Scoring::Max]);
    h.get_by_label("Q0.25 %");
    h.get_by_label("Max %");
    assert!(h.query_by_label("Mean %").is_none());
    assert!(h.get_all_by_label_contains("Scoring: quantile:0.25").next().is_some(), "the status bar says so");
    let rows = current_rows(&h.state().state);
    assert_eq!(rows.len(), 20);
    for r in &rows {
        assert!((r.values[0] - rule.of_probs(&r.distribution)).abs() < 1e-12, "{}", r.san);
    }
    assert!(rows.windows(2).all(|w| w[0].values[0] >= w[1].values[0]), "best first by the quantile");
    assert_eq!(rows.iter().map(|r| r.ranks[0]).collect::<Vec<_>>(), (1..=20).collect::<Vec<_>>());
    let y_of = |san: &str| h.get_all_by_label(san).next().expect("listed").rect().center().y;
    let ys: Vec<f32> = rows.iter().take(6).map(|r| y_of(&r.san)).collect();
    assert!(ys.windows(2).all(|w| w[0] < w[1]), "listed on screen in the quantile's order: {ys:?}");
    // The rule beside it is chosen in its own box; the same rule twice falls back to its tie-breaker.
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::SetCompareScoring(Scoring::ALL[3])));
    h.step();
    h.get_by_label("Mean−1sd %");
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::SetCompareScoring(rule)));
    h.step();
    assert_eq!(h.state().state.settings.scoring_rules(), [rule, Scoring::Mean]);
}

#[test]
fn a_short_search_shows_visits_and_stops_at_its_budget() {
    let settings = Settings {
        search: SearchSettings { simulations: 60, ..SearchSettings::default() },
        ..Settings::default()
    };
    let mut h = app_with_model(settings);
    assert!(step_until(&mut h, WAIT, has_values));
    h.get_by_label("Search").click();
    h.step();
    h.step();
    // (No check that it is still searching here: a fast machine may have finished 60 simulations already;
    // the visits below show that the search ran.)
    assert!(step_until(&mut h, WAIT, |app| !app.state.analysis.searching), "the search ends at its budget");
    let report = h.state().state.analysis.report.clone().expect("a report");
    assert!(report.snapshot.totals.root_visits >= 60, "{} visits", report.snapshot.totals.root_visits);
    let visited: u32 = report.snapshot.moves.iter().map(|m| m.visits).sum();
    assert!(visited >= 59);
    assert_eq!(h.get_all_by_label("Visits").count(), 2, "both tables show visits");
    h.get_by_label_contains("Best ");
    // The values panel shows the visit counts beside the values.
    assert!(current_rows(&h.state().state).iter().any(|r| r.visits > 1));
}

/// The app with the shipped model, its values in, and a search without a budget started with Space.
fn open_ended_search() -> egui_kittest::Harness<'static, mavboard::shell::MavboardApp> {
    let settings = Settings {
        search: SearchSettings { simulations: 0, ..SearchSettings::default() },
        ..Settings::default()
    };
    let mut h = app_with_model(settings);
    assert!(step_until(&mut h, WAIT, has_values));
    h.key_press(eframe::egui::Key::Space);
    h.step();
    h
}

#[test]
fn space_starts_and_stops_an_open_ended_search() {
    let mut h = open_ended_search();
    assert!(h.state().state.analysis.searching);
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.report.as_ref().is_some_and(|r| r.snapshot.totals.root_visits > 20)
    }));
    h.key_press(eframe::egui::Key::Space);
    h.step();
    assert!(step_until(&mut h, WAIT, |app| !app.state.analysis.searching));
    // The panel says "stopped" at once; the engine's last report (with the visits it made before it read the
    // stop) may still be on its way. Once the engine has answered the stop, nothing more may arrive.
    assert!(step_until(&mut h, WAIT, |app| app.state.engine.as_ref().is_some_and(|e| !e.searching())));
    let visits = h.state().state.analysis.report.as_ref().map(|r| r.snapshot.totals.root_visits);
    // Nothing runs any more: the count stays.
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(h.state().state.analysis.report.as_ref().map(|r| r.snapshot.totals.root_visits), visits);
}

/// Changing the scoring rule while a search runs starts the search again under the new rule: its reports
/// then say so (the rule values the search's leaves).
#[test]
fn a_running_search_follows_a_new_scoring_rule() {
    let mut h = open_ended_search();
    let scoring_of =
        |app: &mavboard::shell::MavboardApp| app.state.analysis.report.as_ref().map(|r| r.snapshot.scoring);
    assert!(step_until(&mut h, WAIT, |app| scoring_of(app) == Some(Scoring::Mean)));
    h.get_by_label("Max").click();
    h.step();
    assert_eq!(h.state().state.settings.scoring, Scoring::Max);
    assert!(h.state().state.analysis.searching, "the search goes on");
    assert!(
        step_until(&mut h, WAIT, |app| scoring_of(app) == Some(Scoring::Max)),
        "the running search's reports name the new rule"
    );
    h.key_press(eframe::egui::Key::Space);
    h.step();
    assert!(step_until(&mut h, WAIT, |app| app.state.engine.as_ref().is_some_and(|e| !e.searching())));
}

#[test]
fn a_model_folder_that_is_not_a_package_is_reported_and_the_board_still_works() {
    let settings = Settings { model_dir: Some(PathBuf::from("/nonexistent/model")), ..Settings::default() };
    let mut h = app_with_model(settings);
    h.step();
    match &h.state().state.analysis.model {
        ModelStatus::Failed(text) => assert!(text.contains("/nonexistent/model"), "{text}"),
        other => panic!("expected a failed model, got {other:?}"),
    }
    assert!(h.get_all_by_label_contains("cannot be used").next().is_some());
    let model_errors = |app: &mavboard::shell::MavboardApp| {
        app.state.view.messages.items().iter().filter(|m| m.text.contains("/nonexistent/model")).count()
    };
    assert_eq!(model_errors(h.state()), 1, "the failure is a toast");
    click_square(&mut h, Square::E2);
    click_square(&mut h, Square::E4);
    assert_eq!(ui_common::sans(&h), ["e4"]);
    // Loading the shipped default from the menu command recovers, and the error goes with its cause.
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::LoadDefaultModel));
    assert!(step_until(&mut h, WAIT, has_values));
    assert!(current_rows(&h.state().state).iter().any(|r| r.san == "e5"));
    assert_eq!(model_errors(h.state()), 0, "the toast about the failed model is gone once a model is ready");
    h.step();
    assert!(h.query_by_label_contains("cannot be used").is_none());
}

#[test]
fn review_game_fills_the_graph_lists_mistakes_and_annotates_the_game() {
    use mavboard::ui::eval_graph::{graph_points, mistakes};
    let mut h = app_with_model(Settings::default());
    h.state_mut()
        .state
        .apply(Command::Doc(DocCommand::LoadPasted("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0".into())));
    assert!(step_until(&mut h, WAIT, has_values));
    h.get_by_label("Review game").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.reviewing.is_none() && app.state.analysis.game_review.is_some()
    }));
    let (positions, points) = graph_points(&h.state().state);
    assert_eq!(positions.len(), 8);
    assert!(points.iter().all(|p| p.values[0].is_some()), "every position valued: {points:?}");
    // After the mate White has won, by the rules, under both rules.
    assert_eq!(points[7].values, [Some(1.0), Some(1.0)]);
    assert!(points.iter().all(|p| p.values[1].is_some_and(|v| (0.0..=1.0).contains(&v))));
    let reviewed = h.state().state.analysis.game_review.clone().expect("reviewed");
    assert_eq!(reviewed.review.moves.len(), 7);
    // The mate is valued by the rules: never a mistake.
    assert_eq!(reviewed.review.moves[6].loss, 0.0);
    h.run_steps(2);
    assert!(h.query_by_label_contains("Accuracy: White").is_some(), "accuracy shown");
    // Every listed mistake links into the list.
    for m in mistakes(&h.state().state.doc, &reviewed) {
        assert!(h.get_all_by_label(&m.label).next().is_some(), "{m:?} is listed");
    }
    h.get_by_label("Annotate game").click();
    h.run_steps(2);
    let pgn = h.state().state.doc.line.to_pgn();
    // Every move but the mate (a model knows no mate distances, so none is written for it).
    assert_eq!(pgn.matches("[%eval").count(), 6, "{pgn}");
    assert!(pgn.contains("mavboard review"), "{pgn}");
    assert!(h.state().state.doc.line.is_modified());
    // A second annotation is refused (the button is disabled).
    h.get_by_label("Annotate game").click();
    h.run_steps(2);
    assert_eq!(h.state().state.doc.line.to_pgn(), pgn);
    // The values panel shows the board's position again after the review.
    assert!(step_until(&mut h, WAIT, has_values));

    // Loading a model (here the same package again) forgets the values: a graph never mixes two models.
    h.state_mut().state.apply(Command::Analysis(AnalysisCommand::LoadDefaultModel));
    h.step();
    assert!(h.state().state.analysis.evals.is_empty(), "forgotten at the load");
    assert!(step_until(&mut h, WAIT, |app| matches!(app.state.analysis.model, ModelStatus::Ready(_))));
    assert!(step_until(&mut h, WAIT, has_values));
    let (_, points) = graph_points(&h.state().state);
    let valued = points[..7].iter().filter(|p| p.values[1].is_some()).count();
    assert!(valued <= 1, "only the board position is valued again: {points:?}");
    // The mate stays won by the rules.
    assert_eq!(points[7].values, [Some(1.0), Some(1.0)]);
}

#[test]
fn review_all_games_fills_the_game_list_attaches_reviews_and_exports_every_game() {
    let mut h = app_with_model(Settings::default());
    let pasted = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                  [White \"C\"]\n[Black \"D\"]\n\n1. e4 e4 *\n\n\
                  [White \"E\"]\n[Black \"F\"]\n\n{Kept} 1. d4 d5 2. c4 e6 *\n";
    h.state_mut().state.apply(Command::Doc(DocCommand::LoadPasted(pasted.into())));
    assert!(step_until(&mut h, WAIT, has_values));
    h.state_mut()
        .state
        .apply(Command::View(ViewCommand::ShowDialog(Some(mavboard::app::state::Dialog::GameList))));
    h.run_steps(2);
    h.get_by_label("Review all games").click();
    h.step();
    assert!(step_until(&mut h, WAIT, |app| {
        app.state.analysis.file_review.as_ref().is_some_and(|f| !f.running())
    }));
    let review = h.state().state.analysis.file_review.clone().expect("a file review");
    assert_eq!(review.progress(), (2, 2), "both readable games reviewed, the broken one skipped");
    for n in [1, 3] {
        assert!(review.summary(n).is_some_and(|s| s.is_ok()), "game {n} reviewed");
    }
    h.run_steps(2);
    assert!(h.query_by_label_contains("2 of 2 games reviewed").is_some(), "the list says so");
    assert!(h.query_by_label("Accuracy").is_some(), "accuracy column");
    // Opening game 3 from the list shows its review at once (no new model calls needed).
    h.get_by_label("3").click();
    h.run_steps(2);
    let state = &h.state().state;
    let attached = state.analysis.game_review.as_ref().expect("the file review's game 3 is attached");
    assert_eq!(attached.stamp, state.doc.line.stamp());
    assert_eq!(attached.review.moves.len(), 4);
    // Export writes all three games: the reviewed ones annotated, the broken one copied through.
    let dir = std::env::temp_dir().join(format!("mavboard-file-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("reviewed.pgn");
    h.state_mut().state.apply(Command::File(FileCommand::ExportReviewPath(out.clone())));
    let text = std::fs::read_to_string(&out).expect("exported");
    let games = mavboard::pgn::reader::read_all(&text);
    assert_eq!(games.len(), 3, "{text}");
    assert_eq!(text.matches("mavboard review").count(), 2, "{text}");
    // The broken game is copied as far as it was read (its offending move included).
    assert!(text.contains("[White \"C\"]\n[Black \"D\"]\n\n1. e4 e4") && text.contains("{Kept}"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
