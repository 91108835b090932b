//! Play against the model: the user takes one side of a new game (chess, Connect Four or Hex) and a
//! *chooser* moves for the other — the model alone (the best move under max or mean scoring, one model
//! call), MAV-MCTS over the model (N simulations or a time per move, whichever ends first), or a UCI engine
//! (chess). The game is a normal document: the board, the panels and the review work on it as on any game,
//! and it is saved as PGN with the players' names.
//!
//! This module decides; it never talks to an engine. Each frame the app describes the board as a [`Turn`]
//! (whose move, the model's newest report, whether a search for the model's move has ended) and
//! [`PlayGame::step`] answers with an [`Action`]: wait, play this move, start a search, start the UCI
//! engine. The glue ([`super::engine_link`], [`super::board_model`]) carries the action out.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::{GoLimits, SearchReport};
use crate::game::Player;
use crate::mav::scoring::Scoring;

/// Who chooses the model side's moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "SavedChooser")]
pub enum Chooser {
    /// The model alone: the move with the best value under this scoring rule.
    Model(Scoring),
    /// MAV-MCTS over the model.
    Mcts,
    /// A UCI engine (chess only): the first move of its best line after the time per move.
    Uci,
}

impl Default for Chooser {
    fn default() -> Self {
        Chooser::Model(Scoring::Mean)
    }
}

/// How a chooser is read back from saved settings: today's form, and the two model choosers of settings
/// written before the scoring rules were opened (`ModelMax`, `ModelMean`).
#[derive(Deserialize)]
enum SavedChooser {
    Model(Scoring),
    ModelMax,
    ModelMean,
    Mcts,
    Uci,
}

impl From<SavedChooser> for Chooser {
    fn from(s: SavedChooser) -> Chooser {
        match s {
            SavedChooser::Model(scoring) => Chooser::Model(scoring),
            SavedChooser::ModelMax => Chooser::Model(Scoring::Max),
            SavedChooser::ModelMean => Chooser::Model(Scoring::Mean),
            SavedChooser::Mcts => Chooser::Mcts,
            SavedChooser::Uci => Chooser::Uci,
        }
    }
}

impl Chooser {
    /// Every chooser, in the order the dialog lists them: the model alone under each rule of
    /// [`Scoring::ALL`], MCTS, UCI.
    pub fn all() -> Vec<Chooser> {
        Scoring::ALL.into_iter().map(Chooser::Model).chain([Chooser::Mcts, Chooser::Uci]).collect()
    }

    /// The dialog's label.
    pub fn label(self) -> String {
        match self {
            Chooser::Model(s) => format!("The model alone, {s} scoring"),
            Chooser::Mcts => "MAV-MCTS over the model".to_owned(),
            Chooser::Uci => "A UCI engine (chess)".to_owned(),
        }
    }

    /// A short name for the player's name in the game (`mav-enc-tiny (mean scoring)`).
    pub fn short(self) -> String {
        match self {
            Chooser::Model(s) => format!("{s} scoring"),
            Chooser::Mcts => "MCTS".to_owned(),
            Chooser::Uci => "UCI".to_owned(),
        }
    }

    /// Whether it plays only chess.
    pub fn chess_only(self) -> bool {
        self == Chooser::Uci
    }
}

/// The choices of the *Play against the model* dialog (saved with the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlaySetup {
    /// The user's side: the first player (White in chess) or the second.
    pub human: Player,
    /// Who moves for the other side.
    pub chooser: Chooser,
    /// MCTS: simulations per move (0: only the time limit).
    pub simulations: u64,
    /// MCTS and UCI: time per move in milliseconds (MCTS stops at whichever limit comes first).
    pub movetime_ms: u64,
}

impl Default for PlaySetup {
    fn default() -> Self {
        PlaySetup {
            human: Player::First,
            chooser: Chooser::Model(Scoring::Mean),
            simulations: 200,
            movetime_ms: 2000,
        }
    }
}

impl PlaySetup {
    /// The MCTS limits of one move.
    pub fn limits(&self) -> GoLimits {
        GoLimits {
            simulations: (self.simulations > 0).then_some(self.simulations),
            movetime: Some(Duration::from_millis(self.movetime_ms.max(1))),
            ..GoLimits::default()
        }
    }

    /// The chooser's name as a player: the model's name and how it chooses, or the UCI engine's.
    pub fn opponent_name(&self, model: &str, uci_engine: &str) -> String {
        match self.chooser {
            Chooser::Uci => uci_engine.to_owned(),
            Chooser::Mcts if self.simulations > 0 => {
                format!("{model} (MCTS, {} simulations or {} ms)", self.simulations, self.movetime_ms)
            }
            Chooser::Mcts => format!("{model} (MCTS, {} ms)", self.movetime_ms),
            c => format!("{model} ({})", c.short()),
        }
    }
}

/// What the play bar and the dialog ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum PlayCommand {
    /// Remember the dialog's choices.
    Setup(PlaySetup),
    /// Start a new game against the chooser with these choices (chess: from the standard start; Connect
    /// Four and Hex: a new game of the game on the board).
    Start(PlaySetup),
    /// The user resigns: the chooser's side wins, and the game ends.
    Resign,
    /// Stop playing (the game stays on the board as it is, for analysis).
    Stop,
}

/// The board as the chooser sees it this frame.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The position on the board, in the game's text notation (the engine's root text).
    pub root: &'a str,
    /// Who moves.
    pub to_move: Player,
    /// The game has ended.
    pub over: bool,
    /// The board shows the line's last position (the user is not looking back).
    pub at_end: bool,
    /// The model's newest report (a one-call evaluation or a search), for whatever root it has.
    pub report: Option<&'a SearchReport>,
    /// The root of the last search (not a one-call evaluation) that ended.
    pub finished_search: Option<&'a str>,
    /// The UCI engine's best move for this position, when its lines belong to it.
    pub uci_best: Option<&'a str>,
    /// The UCI engine is running.
    pub uci_running: bool,
}

/// What the glue is to do for the chooser this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Nothing (the user's move, the game is over, or the chooser is still thinking).
    Wait,
    /// Play this move (in the game's notation: UCI for chess).
    Play(String),
    /// Start a search of the board position with these limits; its end is reported through
    /// [`Turn::finished_search`].
    Search(GoLimits),
    /// Start the UCI engine (it then follows the board).
    StartUci,
}

/// The chooser's work on the position it is to move in.
#[derive(Debug, Clone)]
struct Thinking {
    root: String,
    since: Instant,
    asked: bool,
}

/// A game against the chooser.
#[derive(Debug, Clone)]
pub struct PlayGame {
    /// The choices it was started with.
    pub setup: PlaySetup,
    /// The chooser's name as a player.
    pub opponent: String,
    /// The result once the game ended (`1-0`, `0-1`, `1/2-1/2`) and how (`checkmate`, `resigned`).
    pub ended: Option<(String, String)>,
    thinking: Option<Thinking>,
}

impl PlayGame {
    /// A game with `setup` against the player called `opponent`.
    pub fn new(setup: PlaySetup, opponent: String) -> PlayGame {
        PlayGame { setup, opponent, ended: None, thinking: None }
    }

    /// Whether the chooser is to move in `turn` (and the game goes on).
    pub fn chooser_to_move(&self, turn: &Turn) -> bool {
        self.ended.is_none() && !turn.over && turn.to_move != self.setup.human
    }

    /// How long the chooser has been thinking on the board position, when it is.
    pub fn thinking_for(&self, now: Instant) -> Option<Duration> {
        self.thinking.as_ref().map(|t| now.saturating_duration_since(t.since))
    }

    /// The chooser's next step on `turn` at time `now`.
    pub fn step(&mut self, turn: &Turn, now: Instant) -> Action {
        if !self.chooser_to_move(turn) || !turn.at_end {
            self.thinking = None;
            return Action::Wait;
        }
        if self.thinking.as_ref().is_none_or(|t| t.root != turn.root) {
            self.thinking = Some(Thinking { root: turn.root.to_owned(), since: now, asked: false });
        }
        let Some(thinking) = self.thinking.as_mut() else { return Action::Wait };
        let report = turn.report.filter(|r| r.snapshot.root == turn.root);
        match self.setup.chooser {
            Chooser::Model(scoring) => {
                report.and_then(|r| best_by_value(r, scoring)).map_or(Action::Wait, Action::Play)
            }
            Chooser::Mcts if !thinking.asked => {
                thinking.asked = true;
                Action::Search(self.setup.limits())
            }
            Chooser::Mcts => match (report, turn.finished_search) {
                (Some(r), Some(root)) if root == turn.root => r
                    .snapshot
                    .best
                    .clone()
                    .or_else(|| best_by_value(r, Scoring::Mean))
                    .map_or(Action::Wait, Action::Play),
                _ => Action::Wait,
            },
            Chooser::Uci if !turn.uci_running => {
                if thinking.asked {
                    Action::Wait
                } else {
                    thinking.asked = true;
                    Action::StartUci
                }
            }
            Chooser::Uci => {
                let waited = now.saturating_duration_since(thinking.since);
                match turn.uci_best {
                    Some(best) if waited >= Duration::from_millis(self.setup.movetime_ms) => {
                        Action::Play(best.to_owned())
                    }
                    _ => Action::Wait,
                }
            }
        }
    }

    /// Ends the game with `result` and how it ended.
    pub fn end(&mut self, result: &str, how: &str) {
        self.thinking = None;
        self.ended = Some((result.to_owned(), how.to_owned()));
    }

    /// The result of the user resigning: the chooser's side wins.
    pub fn resign_result(&self) -> &'static str {
        match self.setup.human {
            Player::First => "0-1",
            Player::Second => "1-0",
        }
    }
}

/// The valued move with the best value under `scoring` (from its distribution; the search's own value when
/// none was kept); ties go to the rule's tie-breaker, then to the first listed.
pub fn best_by_value(report: &SearchReport, scoring: Scoring) -> Option<String> {
    let mut best: Option<(f64, f64, &str)> = None;
    for m in &report.snapshot.moves {
        let Some(value) = m.value_or_model(scoring) else { continue };
        let tie = m.value(scoring.tie_breaker()).unwrap_or(value);
        let better = best.is_none_or(|(a, b, _)| value > a || (value == a && tie > b));
        if better {
            best = Some((value, tie, &m.action));
        }
    }
    best.map(|(_, _, action)| action.to_owned())
}

/// Which document a game against the chooser is played in: the chess document (its identity), or the
/// Connect Four / Hex game of this choice on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayDocument {
    /// The chess document with this identity ([`super::game_review::DocStamp::doc`]).
    Chess(u64),
    /// The Connect Four or Hex game on the board.
    Board(super::board_game::GameChoice),
}

/// The play state of the app: the dialog's choices live in the settings, this is the running game.
#[derive(Debug, Clone, Default)]
pub struct PlayState {
    /// The game against the chooser, while one is played.
    pub game: Option<PlayGame>,
    /// The document it is played in; another game put on the board ends it.
    pub document: Option<PlayDocument>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::mcts::{MctsSnapshot, MctsStats, MoveStats, NodeStatus, Totals};

    fn stats(action: &str, distribution: &[f64], visits: u32) -> MoveStats {
        MoveStats {
            action: action.into(),
            visits,
            visit_share: 0.0,
            q: None,
            prior: 0.1,
            model: Some(Scoring::Mean.of_probs(distribution)),
            distribution: Some(distribution.to_vec()),
            policy: None,
            virtual_count: 0,
            status: NodeStatus::Expanded,
            hallucinations: 0,
            pv: vec![action.into()],
            pv_result: None,
        }
    }

    fn report(root: &str, moves: Vec<MoveStats>, best: Option<&str>) -> SearchReport {
        let snapshot = MctsSnapshot {
            root: root.into(),
            to_move: Player::Second,
            root_ply: 1,
            scoring: crate::inference::evaluator::Scoring::Mean,
            best: best.map(str::to_owned),
            value: None,
            pv: Vec::new(),
            pv_result: None,
            root_outcome: None,
            moves,
            totals: Totals { stats: MctsStats::default(), root_visits: 0, tree_size: 1, in_flight: 0 },
            lc0_style: false,
        };
        SearchReport {
            snapshot,
            elapsed: Duration::ZERO,
            simulations: 1,
            cache_hits: 0,
            cache_used: 0,
            cache_capacity: 0,
        }
    }

    fn turn<'a>(root: &'a str, to_move: Player, report: Option<&'a SearchReport>) -> Turn<'a> {
        Turn {
            root,
            to_move,
            over: false,
            at_end: true,
            report,
            finished_search: None,
            uci_best: None,
            uci_running: false,
        }
    }

    fn game(chooser: Chooser) -> PlayGame {
        PlayGame::new(PlaySetup { chooser, ..PlaySetup::default() }, "model".into())
    }

    #[test]
    fn max_and_mean_scoring_pick_their_own_best_move() {
        // a has the higher mode (0.875), b the higher expectation (0.625 > 0.575) and the narrower
        // distribution: the max chooser plays a, the others b.
        let r = report(
            "p",
            vec![stats("a", &[0.4, 0.0, 0.0, 0.6], 0), stats("b", &[0.0, 0.0, 1.0, 0.0], 0)],
            None,
        );
        let t = turn("p", Player::Second, Some(&r));
        let now = Instant::now();
        assert_eq!(game(Chooser::Model(Scoring::Max)).step(&t, now), Action::Play("a".into()));
        assert_eq!(game(Chooser::Model(Scoring::Mean)).step(&t, now), Action::Play("b".into()));
        for rule in [Scoring::ALL[2], Scoring::ALL[3]] {
            assert_eq!(game(Chooser::Model(rule)).step(&t, now), Action::Play("b".into()), "{rule}");
        }
    }

    #[test]
    fn choosers_read_back_from_old_and_new_settings() {
        for (text, chooser) in [
            ("\"ModelMax\"", Chooser::Model(Scoring::Max)),
            ("\"ModelMean\"", Chooser::Model(Scoring::Mean)),
            ("\"Mcts\"", Chooser::Mcts),
            ("{\"Model\":\"quantile:0.25\"}", Chooser::Model(Scoring::ALL[2])),
        ] {
            assert_eq!(serde_json::from_str::<Chooser>(text).expect(text), chooser, "{text}");
        }
        for c in Chooser::all() {
            let text = serde_json::to_string(&c).expect("writes");
            assert_eq!(serde_json::from_str::<Chooser>(&text).expect("reads"), c, "{text}");
        }
        assert_eq!(Chooser::all().len(), Scoring::ALL.len() + 2);
        assert!(serde_json::from_str::<Chooser>("{\"Model\":\"median\"}").is_err());
    }

    #[test]
    fn waits_on_the_users_move_an_old_report_and_a_look_back() {
        let now = Instant::now();
        let mut g = game(Chooser::Model(Scoring::Mean));
        let r = report("p", vec![stats("a", &[0.4, 0.0, 0.0, 0.6], 0)], None);
        // The user (first player by default) is to move.
        assert_eq!(g.step(&turn("p", Player::First, Some(&r)), now), Action::Wait);
        // A report of another position.
        assert_eq!(g.step(&turn("q", Player::Second, Some(&r)), now), Action::Wait);
        // Looking back at an earlier position of the line.
        let back = Turn { at_end: false, ..turn("p", Player::Second, Some(&r)) };
        assert_eq!(g.step(&back, now), Action::Wait);
        // The game is over.
        let over = Turn { over: true, ..turn("p", Player::Second, Some(&r)) };
        assert_eq!(g.step(&over, now), Action::Wait);
        // No value yet.
        assert_eq!(g.step(&turn("p", Player::Second, None), now), Action::Wait);
        assert_eq!(g.step(&turn("p", Player::Second, Some(&r)), now), Action::Play("a".into()));
        g.end("1-0", "resigned");
        assert_eq!(g.step(&turn("p", Player::Second, Some(&r)), now), Action::Wait);
    }

    #[test]
    fn mcts_asks_once_then_plays_the_searchs_move_when_it_ended_on_this_position() {
        let now = Instant::now();
        let setup =
            PlaySetup { chooser: Chooser::Mcts, simulations: 50, movetime_ms: 700, ..PlaySetup::default() };
        let mut g = PlayGame::new(setup, "m".into());
        let evaluated = report("p", vec![stats("a", &[0.0, 1.0], 0), stats("b", &[1.0, 0.0], 0)], None);
        let t = turn("p", Player::Second, Some(&evaluated));
        let Action::Search(limits) = g.step(&t, now) else { panic!("a search first") };
        assert_eq!(limits.simulations, Some(50));
        assert_eq!(limits.movetime, Some(Duration::from_millis(700)));
        // Asked once; the one-call evaluation does not decide.
        assert_eq!(g.step(&t, now), Action::Wait);
        // A search that ended on another root does not either.
        let searched = report("p", vec![stats("a", &[0.0, 1.0], 3), stats("b", &[1.0, 0.0], 40)], Some("b"));
        let other = Turn { finished_search: Some("q"), ..turn("p", Player::Second, Some(&searched)) };
        assert_eq!(g.step(&other, now), Action::Wait);
        let done = Turn { finished_search: Some("p"), ..turn("p", Player::Second, Some(&searched)) };
        assert_eq!(g.step(&done, now), Action::Play("b".into()));
        // Time only: no simulation limit.
        let timed = PlaySetup { chooser: Chooser::Mcts, simulations: 0, ..PlaySetup::default() };
        assert_eq!(timed.limits().simulations, None);
    }

    #[test]
    fn uci_starts_the_engine_once_and_plays_its_line_after_the_time_per_move() {
        let start = Instant::now();
        let setup = PlaySetup { chooser: Chooser::Uci, movetime_ms: 500, ..PlaySetup::default() };
        let mut g = PlayGame::new(setup, "Stockfish".into());
        let t = turn("p", Player::Second, None);
        assert_eq!(g.step(&t, start), Action::StartUci);
        assert_eq!(g.step(&t, start), Action::Wait);
        let running = Turn { uci_running: true, uci_best: Some("e7e5"), ..t };
        assert_eq!(g.step(&running, start + Duration::from_millis(100)), Action::Wait);
        assert_eq!(g.step(&running, start + Duration::from_millis(600)), Action::Play("e7e5".into()));
    }

    #[test]
    fn names_and_resignation() {
        let s = PlaySetup::default();
        assert_eq!(s.opponent_name("mav-enc-tiny", "Stockfish"), "mav-enc-tiny (mean scoring)");
        let mcts = PlaySetup { chooser: Chooser::Mcts, ..s };
        assert!(mcts.opponent_name("m", "x").contains("200 simulations"));
        assert_eq!(
            PlaySetup { chooser: Chooser::Uci, ..s }.opponent_name("m", "Stockfish 15.1"),
            "Stockfish 15.1"
        );
        assert_eq!(game(Chooser::Model(Scoring::Max)).resign_result(), "0-1");
        let black = PlayGame::new(PlaySetup { human: Player::Second, ..s }, "m".into());
        assert_eq!(black.resign_result(), "1-0");
    }
}
