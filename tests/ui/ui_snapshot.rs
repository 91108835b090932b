//! Pixel snapshots of the main layout, rendered with wgpu (headless: Mesa's lavapipe Vulkan driver is
//! enough). Where no wgpu adapter exists at all the test says so and skips; the interaction tests in
//! `ui_board.rs` and `ui_setup.rs` need no renderer.
//!
//! Update the images after an intended change with `UPDATE_SNAPSHOTS=1 cargo test --test ui ui_snapshot`.

use crate::ui_common;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::wgpu::WgpuTestRenderer;
use mavboard::app::settings::{Settings, ThemeChoice};
use mavboard::shell::MavboardApp;
use shakmaty::Square;
use ui_common::{click_square, step_until};

fn renderer() -> Option<WgpuTestRenderer> {
    // egui_kittest panics when wgpu finds no adapter; turn that into a skip with a clear message.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(WgpuTestRenderer::new);
    std::panic::set_hook(previous);
    match r {
        Ok(r) => Some(r),
        Err(_) => {
            println!(
                "SKIPPED: no wgpu adapter here (install a Vulkan driver, e.g. `apt-get install mesa-vulkan-drivers`, \
                 to run the snapshot tests)"
            );
            None
        }
    }
}

fn harness(settings: Settings, renderer: WgpuTestRenderer) -> Harness<'static, MavboardApp> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1100.0, 720.0))
        .with_max_steps(32)
        .renderer(renderer)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), MavboardApp::with_settings(settings));
    h.run();
    h
}

fn play_opening(h: &mut Harness<'static, MavboardApp>) {
    for (a, b) in [
        (Square::E2, Square::E4),
        (Square::E7, Square::E5),
        (Square::G1, Square::F3),
        (Square::B8, Square::C6),
    ] {
        click_square(h, a);
        click_square(h, b);
    }
}

#[test]
fn main_layout_dark() {
    let Some(r) = renderer() else { return };
    // The real app: engine and the shipped model, so the analysis panel and the candidate arrows show.
    let mut h = Harness::builder()
        .with_size(egui::vec2(1440.0, 880.0))
        .with_max_steps(32)
        .renderer(r)
        .build_ui_state(
            |ui, app: &mut MavboardApp| app.frame_ui(ui),
            MavboardApp::with_engine(Settings::default(), std::sync::Arc::new(|| {})),
        );
    let wait = std::time::Duration::from_secs(60);
    let valued = |app: &MavboardApp| {
        !app.state.analysis.evaluating && !mavboard::ui::values_panel::current_rows(&app.state).is_empty()
    };
    assert!(step_until(&mut h, wait, valued));
    play_opening(&mut h);
    // Back one move: the played move Nc6 shows as an arrow; select the knight to show its targets.
    h.key_press(egui::Key::ArrowLeft);
    assert!(step_until(&mut h, wait, valued));
    click_square(&mut h, Square::B8);
    assert_eq!(h.state().ui.board.selected(), Some(Square::B8));
    h.remove_cursor();
    let _ = h.try_run();
    h.snapshot("main_layout_dark");
}

#[test]
fn main_layout_light_flipped() {
    let Some(r) = renderer() else { return };
    let settings = Settings { theme: ThemeChoice::Light, flipped: true, ..Settings::default() };
    let mut h = harness(settings, r);
    play_opening(&mut h);
    h.remove_cursor();
    h.run();
    h.snapshot("main_layout_light_flipped");
}

#[test]
fn board_with_candidate_arrows() {
    use mavboard::game::GameState;
    use mavboard::game::chess::ChessState;
    use mavboard::ui::arrows::{Arrow, ArrowStyle, CandidateMove, candidate_arrows};
    use mavboard::ui::board::{BoardInteraction, BoardView, board_ui};
    use mavboard::ui::pieces::PieceTextures;

    let Some(r) = renderer() else { return };
    let state = ChessState::startpos();
    let mv = |uci: &str| state.parse_action(uci).expect("legal at the start");
    let candidates = [
        CandidateMove { mv: mv("e2e4"), win_probability: 0.56, visits: 400 },
        CandidateMove { mv: mv("d2d4"), win_probability: 0.54, visits: 310 },
        CandidateMove { mv: mv("g1f3"), win_probability: 0.51, visits: 120 },
        CandidateMove { mv: mv("f2f3"), win_probability: 0.22, visits: 6 },
    ];
    let mut arrows = candidate_arrows(&candidates, state.castling_mode(), 8);
    arrows.push(Arrow {
        from: Square::C2,
        to: Square::C4,
        win_probability: None,
        weight: 1.0,
        style: ArrowStyle::Played,
    });
    assert_eq!(arrows.len(), 5);
    let mut h = Harness::builder().with_size(egui::vec2(480.0, 480.0)).renderer(r).build_ui_state(
        move |ui, (interaction, pieces): &mut (BoardInteraction, PieceTextures)| {
            let view = BoardView {
                heat: &[],
                state: &state,
                flipped: false,
                last_move: None,
                arrows: &arrows,
                show_coordinates: true,
                show_legal_moves: true,
            };
            board_ui(ui, &view, interaction, pieces);
        },
        (BoardInteraction::default(), PieceTextures::default()),
    );
    h.run();
    h.snapshot("board_candidate_arrows");
}

fn board_harness(
    fen: &str,
    renderer: WgpuTestRenderer,
) -> Harness<'static, (mavboard::ui::board::BoardInteraction, mavboard::ui::pieces::PieceTextures)> {
    use mavboard::game::chess::ChessState;
    use mavboard::ui::board::{BoardInteraction, BoardView, board_ui};
    use mavboard::ui::pieces::PieceTextures;

    let state = ChessState::from_fen(fen).expect("test FEN");
    let mut h = Harness::builder().with_size(egui::vec2(400.0, 400.0)).renderer(renderer).build_ui_state(
        move |ui, (interaction, pieces): &mut (BoardInteraction, PieceTextures)| {
            let view = BoardView {
                heat: &[],
                state: &state,
                flipped: false,
                last_move: None,
                arrows: &[],
                show_coordinates: true,
                show_legal_moves: true,
            };
            board_ui(ui, &view, interaction, pieces);
        },
        (BoardInteraction::default(), PieceTextures::default()),
    );
    h.run();
    h
}

#[test]
fn board_check() {
    let Some(r) = renderer() else { return };
    // Fool's mate: the white king is in check (mated).
    let mut h = board_harness("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", r);
    h.snapshot("board_check");
}

#[test]
fn board_promotion_picker() {
    use mavboard::ui::board::square_center;

    let Some(r) = renderer() else { return };
    let mut h = board_harness("8/1P6/8/8/8/8/k7/4K3 w - - 0 1", r);
    for sq in [Square::B7, Square::B8] {
        let rect = h.state().0.last_rect().expect("drawn");
        let p = square_center(rect, sq, false);
        h.hover_at(p);
        h.drag_at(p);
        h.drop_at(p);
        h.run();
    }
    assert!(h.state().0.promotion_open());
    h.snapshot("board_promotion_picker");
}

/// A Connect Four or Hex board with the solver's values: the values are exact (Connect Four late in a
/// game, Hex 4×4 with few empty cells), so the picture does not depend on timing once they are all in.
fn board_game_snapshot(choice: mavboard::app::board_game::GameChoice, moves: &[&str], name: &str) {
    use mavboard::app::command::{Command, DocCommand};
    let Some(r) = renderer() else { return };
    let settings = Settings { game: choice, ..Settings::default() };
    // Not `harness`: its `run` would wait for the solver's spinner to stop on the empty board.
    let mut h = Harness::builder()
        .with_size(egui::vec2(1100.0, 720.0))
        .with_max_steps(32)
        .renderer(r)
        .build_ui_state(|ui, app: &mut MavboardApp| app.frame_ui(ui), MavboardApp::with_settings(settings));
    h.step();
    for m in moves {
        h.state_mut().state.apply(Command::Doc(DocCommand::PlayMove(
            mavboard::app::command::BoardMove::Notation((*m).to_owned()),
        )));
    }
    let done = step_until(&mut h, std::time::Duration::from_secs(60), |app| {
        app.state.board_analysis.oracle.report.as_ref().is_some_and(|r| r.done)
    });
    assert!(done, "{name}: the solver finished");
    h.remove_cursor();
    h.run_steps(3);
    // The panel shows the solve time ("0.0 s"); a slower machine may write another digit there.
    h.snapshot_options(name, &egui_kittest::SnapshotOptions::new().max_failed_pixels(150));
}

#[test]
fn connect_four_board_with_solver_values() {
    let moves = ["4", "4", "3", "5", "3", "3", "5", "4", "2", "6", "6"];
    board_game_snapshot(mavboard::app::board_game::GameChoice::ConnectFour, &moves, "connect_four_solver");
}

#[test]
fn hex_board_with_solver_values() {
    let choice = mavboard::app::board_game::GameChoice::Hex { size: 4, swap: false };
    board_game_snapshot(choice, &["b2", "c2", "b3", "c3", "a4"], "hex_solver");
}
