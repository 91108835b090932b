//! The soak workload: a timed cycle of the app's own commands, repeated for as long as a soak test runs
//! (`mavboard soak`, hidden; `packaging/soak.sh` runs it for an hour under Xvfb and samples the process).
//!
//! One cycle opens a large PGN file, opens games of it and steps through them, reviews one game with the
//! model and one with a UCI engine as the judge, starts and stops MAV-MCTS several times and the UCI panel
//! beside it, opens the *Inside* panel and changes what it shows, switches to another model package and back
//! to the default one, and plays a game against the model. Each step is a [`Command`] a panel could have
//! returned, or a choice made when it is due from what the app shows then ([`Action`]): which game of the
//! list to open, which legal move the user plays. A question about unsaved changes is answered *Discard*
//! as soon as it is open, so the workload never stops at a dialog. Nothing here touches a window:
//! `crate::shell` asks [`Soak::due`] once a frame and applies what it returns like any panel's commands.

use std::path::PathBuf;
use std::time::Duration;

use super::command::{AnalysisCommand, Command, FileCommand, Navigate};
use super::command::{BoardMove, DocCommand};
use super::inside::InsideCommand;
use super::line::MoveHistory;
use super::messages::Level;
use super::play::{Chooser, PlayCommand, PlaySetup};
use super::state::AppState;
use super::uci_panel::UciCommand;
use super::uci_review::{ReviewSettings, Reviewer};
use super::unsaved::UnsavedAnswer;
use crate::game::{GameState, Player};

/// What the workload runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakConfig {
    /// The PGN file opened at the start of every cycle (a large one: the soak is about memory).
    pub pgn: PathBuf,
    /// The UCI engine that judges one review per cycle and runs beside the model (Stockfish).
    pub uci_engine: PathBuf,
    /// The UCI judge's depth per position.
    pub uci_depth: u32,
    /// The model package switched to once per cycle (the default one comes back after it); `None` reloads
    /// the default one instead.
    pub other_model: Option<PathBuf>,
}

/// What a step exercises (the kinds of work the soak must cover).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKind {
    /// Open the large PGN file (indexed in the background, replacing the list before it).
    OpenFile,
    /// Open a game of the list.
    OpenGame,
    /// Step through the game (forward, back, start, end, to a move).
    Navigate,
    /// Review the game with the model as the judge.
    ModelReview,
    /// Review the game with the UCI engine as the judge.
    UciReview,
    /// Start or stop MAV-MCTS.
    Search,
    /// Start or stop the UCI engine beside the model.
    UciPanel,
    /// Open the *Inside* panel, change what it shows, close it.
    Inside,
    /// Load another model package, or the default one.
    SwitchModel,
    /// Start, play, resign or stop a game against the model.
    Play,
}

/// What a step does when it is due.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Apply this command.
    Command(Command),
    /// Open a game of the list: game `1 + pick % n`, where `n` is the number of games listed so far (games
    /// that do not read are skipped to the next one that does). Nothing while no list is shown.
    OpenGame {
        /// Chooses the game.
        pick: u64,
    },
    /// In a game against the model, when it is the user's move: the legal move `pick % n` of the `n` legal
    /// moves. Nothing otherwise.
    UserMove {
        /// Chooses the move.
        pick: u64,
    },
}

/// One step of a cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// When it is due, from the start of its cycle.
    pub at: Duration,
    /// What it exercises.
    pub kind: StepKind,
    /// What it does.
    pub action: Action,
}

/// How long one cycle lasts; the next one starts then.
pub const CYCLE: Duration = Duration::from_secs(180);

/// A small deterministic mixer, so that each round opens other games and plays other moves.
fn mix(round: u64, salt: u64) -> u64 {
    let mut x = round.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 29)
}

/// The steps of cycle `round` (from 0), sorted by time. Rounds differ in the games opened, the moves
/// played and how the model chooses its moves in the game against it.
pub fn cycle(config: &SoakConfig, round: u64) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut at = |secs: f64, kind: StepKind, action: Action| {
        steps.push(Step { at: Duration::from_secs_f64(secs), kind, action });
    };
    let cmd = |c: Command| Action::Command(c);
    let nav = |n: Navigate| Action::Command(DocCommand::Navigate(n).into());
    let review = |reviewer: Reviewer, depth: u32| {
        Action::Command(AnalysisCommand::SetReviewSettings(ReviewSettings { reviewer, depth }).into())
    };

    // The file, and a first game stepped through move by move.
    at(0.0, StepKind::OpenFile, cmd(FileCommand::OpenPath(config.pgn.clone()).into()));
    at(0.5, StepKind::UciPanel, cmd(Command::Uci(UciCommand::SetPath(Some(config.uci_engine.clone())))));
    at(12.0, StepKind::OpenGame, Action::OpenGame { pick: mix(round, 1) });
    for i in 0..12 {
        at(13.0 + 0.4 * f64::from(i), StepKind::Navigate, nav(Navigate::Forward));
    }
    at(18.0, StepKind::Navigate, nav(Navigate::End));
    for i in 0..6 {
        at(18.5 + 0.4 * f64::from(i), StepKind::Navigate, nav(Navigate::Back));
    }
    at(21.0, StepKind::Navigate, nav(Navigate::Start));
    at(21.5, StepKind::Navigate, nav(Navigate::To(usize::try_from(mix(round, 2) % 40).unwrap_or(0))));

    // Its review by the model.
    at(22.0, StepKind::ModelReview, review(Reviewer::Model, config.uci_depth));
    at(22.1, StepKind::ModelReview, cmd(AnalysisCommand::ReviewLine.into()));

    // Another game, reviewed by the UCI engine (the model's view beside it).
    at(40.0, StepKind::OpenGame, Action::OpenGame { pick: mix(round, 3) });
    at(40.5, StepKind::Navigate, nav(Navigate::End));
    at(41.0, StepKind::UciReview, review(Reviewer::Uci, config.uci_depth));
    at(41.1, StepKind::UciReview, cmd(AnalysisCommand::ReviewLine.into()));
    at(75.0, StepKind::UciReview, review(Reviewer::Model, config.uci_depth));

    // MAV-MCTS, started and stopped, on several positions; the UCI engine beside it for a while.
    at(76.0, StepKind::UciPanel, cmd(Command::Uci(UciCommand::Start)));
    for i in 0..4 {
        let t = 77.0 + 5.0 * f64::from(i);
        at(t, StepKind::Search, cmd(AnalysisCommand::StartSearch.into()));
        at(t + 3.5, StepKind::Search, cmd(AnalysisCommand::StopSearch.into()));
        at(t + 4.0, StepKind::Navigate, nav(Navigate::Back));
    }
    at(97.0, StepKind::UciPanel, cmd(Command::Uci(UciCommand::Stop)));

    // The Inside panel: open, look around, switch the models under it, close.
    let inside = |c: InsideCommand| Action::Command(AnalysisCommand::Inside(c).into());
    at(98.0, StepKind::Inside, inside(InsideCommand::Enable(true)));
    at(100.0, StepKind::Inside, inside(InsideCommand::Layer(0)));
    at(101.0, StepKind::Inside, inside(InsideCommand::Head(Some(0))));
    at(102.0, StepKind::Inside, inside(InsideCommand::Query(Some("e4".to_owned()))));
    at(103.0, StepKind::Inside, inside(InsideCommand::Head(None)));
    at(104.0, StepKind::Inside, inside(InsideCommand::DepthLayer(Some(0))));
    at(105.0, StepKind::Inside, inside(InsideCommand::ScaleHead { layer: 0, head: 0, value: 0.0 }));
    at(107.0, StepKind::Inside, inside(InsideCommand::ResetHeads));
    at(108.0, StepKind::Inside, inside(InsideCommand::DepthLayer(None)));
    at(108.5, StepKind::Inside, inside(InsideCommand::Query(None)));
    let other = match &config.other_model {
        Some(dir) => AnalysisCommand::LoadModel(dir.clone()),
        None => AnalysisCommand::LoadDefaultModel,
    };
    at(110.0, StepKind::SwitchModel, cmd(other.into()));
    at(118.0, StepKind::SwitchModel, cmd(AnalysisCommand::LoadDefaultModel.into()));
    at(124.0, StepKind::Inside, inside(InsideCommand::Enable(false)));

    // A game against the model: the model alone or MCTS over it, the user's moves chosen at random.
    let chooser = if round.is_multiple_of(2) {
        Chooser::Model(crate::mav::scoring::Scoring::Mean)
    } else {
        Chooser::Mcts
    };
    let setup = PlaySetup { human: Player::First, chooser, simulations: 64, movetime_ms: 400 };
    at(126.0, StepKind::Play, cmd(Command::Play(PlayCommand::Start(setup))));
    for i in 0..40u32 {
        let pick = mix(round, 100 + u64::from(i));
        at(127.0 + f64::from(i), StepKind::Play, Action::UserMove { pick });
    }
    at(168.0, StepKind::Play, cmd(Command::Play(PlayCommand::Resign)));
    at(170.0, StepKind::Play, cmd(Command::Play(PlayCommand::Stop)));
    steps.sort_by_key(|s| s.at);
    steps
}

/// The workload as it runs: which cycle, which step is next, and what it has noticed.
#[derive(Debug, Clone)]
pub struct Soak {
    config: SoakConfig,
    round: u64,
    steps: Vec<Step>,
    next: usize,
    /// The newest error message already reported by [`Soak::new_errors`].
    seen_message: Option<u64>,
}

impl Soak {
    /// The workload over `config`, before its first step.
    pub fn new(config: SoakConfig) -> Soak {
        let steps = cycle(&config, 0);
        Soak { config, round: 0, steps, next: 0, seen_message: None }
    }

    /// The cycle running now (from 0).
    pub fn round(&self) -> u64 {
        self.round
    }

    /// The commands due at `elapsed` (time since the workload started) for the app as it is in `state`:
    /// every step whose time has come and that applies now, and *Discard* when the question about
    /// unsaved changes is open. Call once a frame and apply what it returns.
    pub fn due(&mut self, elapsed: Duration, state: &AppState) -> Vec<Command> {
        let mut out = Vec::new();
        if state.files.unsaved.is_some() {
            out.push(FileCommand::AnswerUnsaved(UnsavedAnswer::Discard).into());
            // The held command runs once the question is answered; the steps wait a frame.
            return out;
        }
        let cycle_start = CYCLE.saturating_mul(u32::try_from(self.round).unwrap_or(u32::MAX));
        let in_cycle = elapsed.saturating_sub(cycle_start);
        while let Some(step) = self.steps.get(self.next) {
            if step.at > in_cycle {
                break;
            }
            out.extend(resolve(&step.action, state));
            self.next += 1;
        }
        if self.next >= self.steps.len() && in_cycle >= CYCLE {
            self.round += 1;
            self.steps = cycle(&self.config, self.round);
            self.next = 0;
        }
        out
    }

    /// The error messages the app showed since the last call (their texts), for the soak's log.
    pub fn new_errors(&mut self, state: &AppState) -> Vec<String> {
        let seen = self.seen_message;
        let new: Vec<_> = state
            .view
            .messages
            .items()
            .iter()
            .filter(|m| m.level == Level::Error && seen.is_none_or(|s| m.id > s))
            .collect();
        if let Some(last) = new.iter().map(|m| m.id).max() {
            self.seen_message = Some(last);
        }
        new.into_iter().map(|m| m.text.clone()).collect()
    }
}

/// One line on what the app is doing, for the soak's log (so that a run shows that its steps did their
/// work): the model, the game list, the review, the search, the *Inside* panel, the game against the model.
pub fn describe(state: &AppState) -> String {
    let a = &state.analysis;
    let model = a.model.info().map_or("none", |i| i.name.as_str());
    let games = state.files.games.as_ref().map_or(0, |l| l.entries.len());
    let review = match (&a.reviewing, &a.game_review) {
        (Some((done, of)), _) => format!("running {done}/{of}"),
        (None, Some(r)) => format!("{} moves ({})", r.review.moves.len(), r.review.method),
        (None, None) => "none".to_owned(),
    };
    let inside = match (a.inside.enabled, &a.inside.view, &a.inside.error) {
        (false, ..) => "off".to_owned(),
        (true, _, Some(e)) => format!("error: {e}"),
        (true, Some(v), None) => format!("{} layers", v.clean.num_layers()),
        (true, None, None) => "waiting".to_owned(),
    };
    let play = match &state.play.game {
        Some(g) => format!(
            "{} plies{}",
            state.doc.line.moves().len(),
            g.ended.as_ref().map_or(String::new(), |(r, how)| format!(", {r} {how}"))
        ),
        None => "none".to_owned(),
    };
    format!(
        "model {model}; games listed {games}; review {review}; searching {}; evals kept {}; inside {inside}; \
         uci panel {}; play {play}; messages {}",
        a.searching,
        a.evals.len(),
        if state.uci.running { "running" } else { "stopped" },
        state.view.messages.items().len(),
    )
}

/// The command an action gives for the app as it is now, if any.
fn resolve(action: &Action, state: &AppState) -> Option<Command> {
    match action {
        Action::Command(c) => Some(c.clone()),
        Action::OpenGame { pick } => {
            let list = state.files.games.as_ref()?;
            let n = u64::try_from(list.entries.len()).ok().filter(|&n| n > 0)?;
            let start = usize::try_from(pick % n).ok()?;
            // The chosen game, or the next one that reads.
            let entries = &list.entries;
            let entry = entries[start..].iter().chain(&entries[..start]).find(|e| e.game.is_ok())?;
            Some(FileCommand::OpenGame(entry.number()).into())
        }
        Action::UserMove { pick } => {
            let game = state.play.game.as_ref()?;
            if game.ended.is_some() || state.doc.board_game.is_some() {
                return None;
            }
            let line = &state.doc.line;
            let here = line.current();
            if line.cursor() != line.moves().len() || here.to_move() != game.setup.human {
                return None;
            }
            let moves = here.legal_actions();
            let n = u64::try_from(moves.len()).ok().filter(|&n| n > 0)?;
            let mv = moves.get(usize::try_from(pick % n).ok()?)?;
            Some(DocCommand::PlayMove(BoardMove::Notation(here.action_to_text(*mv))).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::app::settings::Settings;

    fn config(pgn: PathBuf) -> SoakConfig {
        SoakConfig {
            pgn,
            uci_engine: PathBuf::from("/usr/games/stockfish"),
            uci_depth: 6,
            other_model: Some(PathBuf::from("assets/models/mav-tiny")),
        }
    }

    #[test]
    fn a_cycle_covers_every_kind_of_work_in_order_and_within_its_time() {
        let all = [
            StepKind::OpenFile,
            StepKind::OpenGame,
            StepKind::Navigate,
            StepKind::ModelReview,
            StepKind::UciReview,
            StepKind::Search,
            StepKind::UciPanel,
            StepKind::Inside,
            StepKind::SwitchModel,
            StepKind::Play,
        ];
        for round in 0..4 {
            let steps = cycle(&config(PathBuf::from("big.pgn")), round);
            let kinds: BTreeSet<_> = steps.iter().map(|s| s.kind).collect();
            assert_eq!(kinds, all.into_iter().collect(), "round {round}");
            assert!(steps.windows(2).all(|w| w[0].at <= w[1].at));
            assert!(steps.last().is_some_and(|s| s.at < CYCLE));
            // Both judges, both models, searches that are stopped, a game that ends.
            let has = |c: Command| steps.iter().any(|s| s.action == Action::Command(c.clone()));
            assert!(has(AnalysisCommand::LoadDefaultModel.into()));
            assert!(has(AnalysisCommand::LoadModel(PathBuf::from("assets/models/mav-tiny")).into()));
            assert!(has(AnalysisCommand::ReviewLine.into()));
            let starts =
                steps.iter().filter(|s| s.action == Action::Command(AnalysisCommand::StartSearch.into()));
            let stops =
                steps.iter().filter(|s| s.action == Action::Command(AnalysisCommand::StopSearch.into()));
            assert_eq!(starts.count(), stops.count());
            assert!(has(Command::Play(PlayCommand::Stop)));
            assert!(has(AnalysisCommand::Inside(InsideCommand::Enable(false)).into()));
        }
        // Rounds differ in what they pick.
        let picks = |round| {
            cycle(&config(PathBuf::from("big.pgn")), round)
                .into_iter()
                .filter_map(|s| match s.action {
                    Action::OpenGame { pick } => Some(pick),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_ne!(picks(0), picks(1));
    }

    #[test]
    fn two_cycles_apply_headless_with_no_error_but_the_broken_game_and_end_their_games() {
        let dir = std::env::temp_dir().join(format!("mavboard-soak-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let pgn = dir.join("games.pgn");
        let game = |white: &str| {
            format!(
                "[Event \"soak\"]\n[White \"{white}\"]\n[Black \"b\"]\n[Result \"*\"]\n\n\
                 1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 *\n\n"
            )
        };
        let text: String = ["a", "b", "c"].iter().map(|w| game(w)).collect::<String>() + "1. e4 Ke7 Qxx *\n";
        std::fs::write(&pgn, text).expect("write");
        let mut state = AppState::new(Settings::default());
        let mut soak = Soak::new(config(pgn));
        let mut played = 0;
        let mut opened = BTreeSet::new();
        let step = Duration::from_millis(100);
        let mut t = Duration::ZERO;
        while t < CYCLE.saturating_mul(2) + step {
            // The background read of the file, as the frame polls it.
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while state.files.loading.is_some() && std::time::Instant::now() < deadline {
                state.poll_loading();
                std::thread::sleep(Duration::from_millis(1));
            }
            for command in soak.due(t, &state) {
                match &command {
                    Command::Doc(DocCommand::PlayMove(_)) => played += 1,
                    Command::File(FileCommand::OpenGame(n)) => {
                        opened.insert(*n);
                    }
                    _ => {}
                }
                state.apply(command);
            }
            // Stand-in for the model: the chooser's side passes its turn by playing the first legal move.
            if let Some(game) = state.play.game.as_ref()
                && game.ended.is_none()
                && state.current().to_move() != game.setup.human
                && let Some(&mv) = state.current().legal_actions().first()
            {
                let text = state.current().action_to_text(mv);
                state.apply(DocCommand::PlayMove(BoardMove::Notation(text)).into());
            }
            t += step;
        }
        assert_eq!(soak.round(), 2);
        // The one message: the file's broken game, once per opening of the file.
        let errors = soak.new_errors(&state);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().all(|e| e.contains("1 of 4 games could not be read")), "{errors:?}");
        assert!(soak.new_errors(&state).is_empty());
        assert!(played >= 10, "the user played {played} moves");
        assert!(state.play.game.is_none());
        assert!(!opened.is_empty() && opened.iter().all(|&n| n <= 3), "{opened:?}");
        assert!(state.files.unsaved.is_none());
        assert!(describe(&state).contains("games listed 4"), "{}", describe(&state));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
