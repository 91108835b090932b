//! The adjudication rules: when a game ends other than by the rules of chess, and with what result.

/// How chess games end by the rules.
pub const CHESS_ENDS: &str =
    "checkmate, stalemate, insufficient material, the fifty-move rule, threefold repetition";

/// How games are ended besides checkmate, stalemate, insufficient material, the fifty-move rule and
/// threefold repetition (which always apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rules {
    /// A game still going after this many plies (from the opening position) is adjudicated.
    pub max_plies: u32,
    /// Evaluation rules, when a full-strength Stockfish evaluates every position; `None`: no evaluation,
    /// and a game reaching `max_plies` is a draw.
    pub eval: Option<EvalRules>,
}

/// Adjudication on the evaluation of full-strength Stockfish at a fixed depth after every ply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvalRules {
    /// The adjudicator's depth.
    pub depth: u32,
    /// Resignation: a side whose evaluation is at or below −`resign_cp` …
    pub resign_cp: i32,
    /// … for this many consecutive plies loses.
    pub resign_plies: u32,
    /// At `max_plies`, a side at or above this evaluation wins; otherwise the game is drawn.
    pub max_plies_win_cp: i32,
}

impl Default for Rules {
    fn default() -> Self {
        Rules { max_plies: 200, eval: Some(EvalRules::default()) }
    }
}

impl Default for EvalRules {
    fn default() -> Self {
        EvalRules { depth: 10, resign_cp: 800, resign_plies: 6, max_plies_win_cp: 300 }
    }
}

impl Rules {
    /// The rules of a chess league in words, for `--help`, the output and the results' README.
    pub fn describe(&self) -> String {
        self.describe_with(CHESS_ENDS)
    }

    /// The rules in words, `ends` saying how the game's own rules end a game.
    pub fn describe_with(&self, ends: &str) -> String {
        let mut s = format!("games end by the rules ({ends})");
        match self.eval {
            Some(e) => s.push_str(&format!(
                "; full-strength Stockfish evaluates every position at depth {d}: a side at or below −{r:.2} \
                 pawns (or getting mated) for {n} consecutive plies loses; a game reaching {m} plies is won by a \
                 side at or above +{w:.2} pawns and drawn otherwise",
                d = e.depth,
                r = f64::from(e.resign_cp) / 100.0,
                n = e.resign_plies,
                m = self.max_plies,
                w = f64::from(e.max_plies_win_cp) / 100.0,
            )),
            None => s.push_str(&format!("; a game reaching {} plies is drawn (no evaluation)", self.max_plies)),
        }
        s
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), super::LeagueError> {
        let bad = |w: &str| Err(super::LeagueError::Settings(w.to_owned()));
        if self.max_plies == 0 {
            return bad("--max-plies must be at least 1");
        }
        if let Some(e) = self.eval {
            if e.resign_cp <= 0 || e.max_plies_win_cp < 0 {
                return bad(
                    "the resignation threshold must be positive and the max-plies threshold not negative",
                );
            }
            if e.resign_plies == 0 || e.depth == 0 {
                return bad("--resign-plies and --adjudicate-depth must be at least 1");
            }
        }
        Ok(())
    }
}

/// Counts consecutive plies beyond the resignation threshold for each side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResignCounter {
    white_lost: u32,
    black_lost: u32,
}

impl ResignCounter {
    /// Adds one ply's evaluation (White's side, centipawns); returns the winner (`true` = White) once a side
    /// has been lost long enough. A missing evaluation resets both counts.
    pub fn push(&mut self, rules: &EvalRules, eval_white: Option<i32>) -> Option<bool> {
        match eval_white {
            Some(cp) if cp <= -rules.resign_cp => {
                self.white_lost += 1;
                self.black_lost = 0;
            }
            Some(cp) if cp >= rules.resign_cp => {
                self.black_lost += 1;
                self.white_lost = 0;
            }
            _ => *self = ResignCounter::default(),
        }
        if self.white_lost >= rules.resign_plies {
            Some(false)
        } else if self.black_lost >= rules.resign_plies {
            Some(true)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resignation_needs_consecutive_plies() {
        let r = EvalRules { resign_plies: 3, resign_cp: 500, ..EvalRules::default() };
        let mut c = ResignCounter::default();
        assert_eq!(c.push(&r, Some(600)), None);
        assert_eq!(c.push(&r, Some(700)), None);
        assert_eq!(c.push(&r, Some(100)), None, "a dip resets the count");
        assert_eq!(c.push(&r, Some(600)), None);
        assert_eq!(c.push(&r, Some(600)), None);
        assert_eq!(c.push(&r, Some(500)), Some(true));
        let mut c = ResignCounter::default();
        for _ in 0..2 {
            assert_eq!(c.push(&r, Some(-90_000)), None);
        }
        assert_eq!(c.push(&r, Some(-90_000)), Some(false));
        let mut c = ResignCounter::default();
        c.push(&r, Some(-900));
        c.push(&r, Some(-900));
        assert_eq!(c.push(&r, None), None);
        assert_eq!(c.push(&r, Some(-900)), None, "no score resets too");
    }

    #[test]
    fn description_states_the_thresholds() {
        let text = Rules::default().describe();
        assert!(
            text.contains("−8.00 pawns")
                && text.contains("6 consecutive plies")
                && text.contains("200 plies"),
            "{text}"
        );
        assert!(Rules { max_plies: 10, eval: None }.describe().contains("10 plies is drawn"));
        assert!(Rules { max_plies: 0, eval: None }.validate().is_err());
    }
}
