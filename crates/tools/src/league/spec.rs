//! Agent specifications: what each player of a league is, read from short texts like `mav-max`,
//! `mcts:400` or `stockfish:3`, with a stable label used in the PGN, the results file and the tables.

use std::path::PathBuf;

use super::LeagueError;
use crate::mav::scoring::{Scoring, ScoringError};

/// What kind of player an agent is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// One model call per move; plays the move with the best value under `scoring` (no search).
    Mav {
        /// The scoring rule.
        scoring: Scoring,
    },
    /// MAV-MCTS over the model with this many simulations per move.
    Mcts {
        /// The simulation budget per move.
        simulations: u64,
        /// The scoring of the prior and the backed-up values.
        scoring: Scoring,
    },
    /// Stockfish at a skill level (0..=20, `Skill Level`).
    StockfishSkill {
        /// The level.
        skill: u32,
    },
    /// Stockfish limited to an Elo (`UCI_LimitStrength`, `UCI_Elo`).
    StockfishElo {
        /// The Elo.
        elo: u32,
    },
    /// The Connect Four solver: exact (`None`) or searching this many plies ahead.
    Solver {
        /// The depth limit in plies.
        depth: Option<u32>,
    },
    /// Hex MCTS with random playouts (the paper's plain MCTS baseline).
    Playouts {
        /// Playouts per move.
        playouts: u32,
    },
    /// The explicit minimax over the model's values (internal search's reference), mean scoring.
    Minimax {
        /// Children per expanded node.
        breadth: u32,
        /// Plies expanded below the position.
        depth: u32,
    },
    /// The move of the trace the model writes itself (paper §4): a trace-writing `mav-lm` only.
    Internal {
        /// Children per expanded node, as the prompt asks.
        breadth: u32,
        /// Plies expanded, as the prompt asks.
        depth: u32,
        /// How the trace is decoded.
        decoding: crate::inference::completer::TraceDecoding,
    },
}

/// One agent: its kind and, for model agents, the package to use (`None` = the league's model).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentSpec {
    /// What it is.
    pub kind: AgentKind,
    /// A model package other than the league's default.
    pub model: Option<PathBuf>,
}

impl AgentSpec {
    /// Reads `mav-max`, `mav-mean`, `mav:SCORING` (any rule's text form, e.g. `mav:quantile:0.25`), `mcts:N`,
    /// `mcts-max:N`, `mcts:N:SCORING`, `minimax:B:D`, `internal:B:D[:free|rules]`, `stockfish:SKILL` (also
    /// `sf:SKILL`), `stockfish-elo:ELO`, `solver`, `solver:DEPTH` or `playouts:N`; model agents may end in
    /// `@MODEL_DIR`.
    /// Which game an agent can play is checked when the league builds it.
    pub fn parse(text: &str) -> Result<AgentSpec, LeagueError> {
        let err = |why: &str| LeagueError::UnknownAgent { spec: text.to_owned(), why: why.to_owned() };
        let text_trim = text.trim();
        let (body, model) = match text_trim.split_once('@') {
            Some((b, m)) if !m.is_empty() => (b, Some(PathBuf::from(m))),
            Some(_) => return Err(err("nothing after `@`")),
            None => (text_trim, None),
        };
        let (name, arg) = match body.split_once(':') {
            Some((n, a)) => (n.to_ascii_lowercase(), Some(a)),
            None => (body.to_ascii_lowercase(), None),
        };
        let kind = KindText { text, name, arg }.kind()?;
        if model.is_some() && !kind.uses_model() {
            return Err(err("only model agents take @MODEL_DIR"));
        }
        Ok(AgentSpec { kind, model })
    }

    /// The label: `mav-max`, `mav-mean`, `mav-quantile:0.25`, `mcts-400` (mean), `mcts-max-400`,
    /// `mcts-mean-sd:1-400`, `sf-skill3`, `sf-elo1500`, `solver`,
    /// `solver-d4`, `playouts-1000`, followed by `@` and the model folder's name when the agent has its own
    /// model.
    pub fn label(&self) -> String {
        let base = match &self.kind {
            AgentKind::Mav { scoring } => format!("mav-{scoring}"),
            AgentKind::Mcts { simulations, scoring: Scoring::Mean } => format!("mcts-{simulations}"),
            AgentKind::Mcts { simulations, scoring } => format!("mcts-{scoring}-{simulations}"),
            AgentKind::StockfishSkill { skill } => format!("sf-skill{skill}"),
            AgentKind::StockfishElo { elo } => format!("sf-elo{elo}"),
            AgentKind::Solver { depth: None } => "solver".to_owned(),
            AgentKind::Solver { depth: Some(d) } => format!("solver-d{d}"),
            AgentKind::Playouts { playouts } => format!("playouts-{playouts}"),
            AgentKind::Minimax { breadth, depth } => format!("minimax-{breadth}x{depth}"),
            AgentKind::Internal { breadth, depth, decoding } => {
                format!("internal-{decoding}-{breadth}x{depth}")
            }
        };
        match &self.model {
            Some(dir) => {
                let name = dir
                    .file_name()
                    .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
                format!("{base}@{name}")
            }
            None => base,
        }
    }
}

/// An agent's text without its `@MODEL_DIR`, split at its first colon, for reading the kind.
struct KindText<'a> {
    /// The whole text, for error messages.
    text: &'a str,
    /// The name before the colon, in lower case.
    name: String,
    /// What follows the colon, if there is one.
    arg: Option<&'a str>,
}

impl KindText<'_> {
    /// The error saying why the text is not an agent.
    fn err(&self, why: &str) -> LeagueError {
        LeagueError::UnknownAgent { spec: self.text.to_owned(), why: why.to_owned() }
    }

    /// The number after the colon, `what` naming it in errors.
    fn number(&self, what: &str) -> Result<u64, LeagueError> {
        let a = self.arg.ok_or_else(|| self.err(&format!("give the {what} after a colon")))?;
        a.parse::<u64>().map_err(|_| self.err(&format!("`{a}` is not a {what}")))
    }

    /// The agent's kind.
    fn kind(&self) -> Result<AgentKind, LeagueError> {
        let (name, arg) = (self.name.as_str(), self.arg);
        Ok(match name {
            "mav-max" | "max" if arg.is_none() => AgentKind::Mav { scoring: Scoring::Max },
            "mav-mean" | "mean" if arg.is_none() => AgentKind::Mav { scoring: Scoring::Mean },
            "mav-max" | "mav-mean" | "max" | "mean" => return Err(self.err("MAV agents take no number")),
            "mav" => {
                let rule =
                    arg.ok_or_else(|| self.err("give the scoring after a colon, e.g. mav:quantile:0.25"))?;
                AgentKind::Mav { scoring: rule.parse().map_err(|e: ScoringError| self.err(&e.to_string()))? }
            }
            "mcts" | "mcts-mean" | "mcts-max" => self.mcts()?,
            "stockfish" | "sf" => {
                let skill = self.number("skill level")?;
                if skill > 20 {
                    return Err(self.err("Stockfish's skill levels run from 0 to 20"));
                }
                AgentKind::StockfishSkill { skill: skill as u32 }
            }
            "stockfish-elo" | "sf-elo" => {
                let elo = self.number("Elo")?;
                AgentKind::StockfishElo {
                    elo: u32::try_from(elo).map_err(|_| self.err("that Elo is too large"))?,
                }
            }
            "solver" => self.solver()?,
            "playouts" => {
                let playouts = self.number("number of playouts")?;
                if playouts == 0 {
                    return Err(self.err("MCTS needs at least one playout"));
                }
                AgentKind::Playouts {
                    playouts: u32::try_from(playouts)
                        .map_err(|_| self.err("that many playouts is too many"))?,
                }
            }
            "minimax" | "internal" => self.tree_search()?,
            _ => return Err(self.err("not a known agent")),
        })
    }

    /// `mcts:N`, `mcts-mean:N`, `mcts-max:N` or `mcts:N:SCORING`.
    fn mcts(&self) -> Result<AgentKind, LeagueError> {
        let (count, rule) = match self.arg.and_then(|a| a.split_once(':')) {
            Some((n, r)) if self.name == "mcts" => (Some(n), Some(r)),
            _ => (self.arg, None),
        };
        let a = count.ok_or_else(|| self.err("give the number of simulations after a colon"))?;
        let simulations =
            a.parse::<u64>().map_err(|_| self.err(&format!("`{a}` is not a number of simulations")))?;
        if simulations == 0 {
            return Err(self.err("MCTS needs at least one simulation"));
        }
        let scoring = match (rule, self.name.as_str()) {
            (Some(r), _) => r.parse().map_err(|e: ScoringError| self.err(&e.to_string()))?,
            (None, "mcts-max") => Scoring::Max,
            (None, _) => Scoring::Mean,
        };
        Ok(AgentKind::Mcts { simulations, scoring })
    }

    /// `solver` or `solver:DEPTH`.
    fn solver(&self) -> Result<AgentKind, LeagueError> {
        if self.arg.is_none() {
            return Ok(AgentKind::Solver { depth: None });
        }
        let depth = self.number("depth in plies")?;
        if depth == 0 {
            return Err(self.err("a solver needs a depth of at least 1 ply"));
        }
        Ok(AgentKind::Solver {
            depth: Some(u32::try_from(depth).map_err(|_| self.err("that depth is too large"))?),
        })
    }

    /// `minimax:B:D` or `internal:B:D[:free|rules]`.
    fn tree_search(&self) -> Result<AgentKind, LeagueError> {
        let name = self.name.as_str();
        let parts: Vec<&str> = self.arg.map(|a| a.split(':').collect()).unwrap_or_default();
        let shape = |t: Option<&&str>, what: &str| -> Result<u32, LeagueError> {
            let t = t.ok_or_else(|| self.err(&format!("give the {what}: {name}:B:D, e.g. {name}:2:1")))?;
            t.parse::<u32>().map_err(|_| self.err(&format!("`{t}` is not a {what}")))
        };
        let breadth = shape(parts.first(), "breadth")?;
        let depth = shape(parts.get(1), "depth")?;
        if breadth == 0 {
            return Err(self.err("the breadth must be at least 1"));
        }
        if depth > 4 {
            return Err(self.err("depths above 4 ask for b^d model calls per level; use 0..=4"));
        }
        match (name, parts.get(2)) {
            ("minimax", None) => Ok(AgentKind::Minimax { breadth, depth }),
            ("internal", None) => Ok(AgentKind::Internal { breadth, depth, decoding: Default::default() }),
            ("internal", Some(d)) if parts.len() == 3 => Ok(AgentKind::Internal {
                breadth,
                depth,
                decoding: d.parse().map_err(|e: crate::inference::completer::UnknownTraceDecoding| {
                    self.err(&e.to_string())
                })?,
            }),
            _ => Err(self
                .err(&format!("{name} takes B:D{}", if name == "internal" { "[:free|rules]" } else { "" }))),
        }
    }
}

impl AgentKind {
    /// Whether it plays with a model (and so needs a model package).
    pub fn uses_model(&self) -> bool {
        matches!(
            self,
            AgentKind::Mav { .. }
                | AgentKind::Mcts { .. }
                | AgentKind::Minimax { .. }
                | AgentKind::Internal { .. }
        )
    }

    /// Whether it is Stockfish.
    pub fn is_stockfish(&self) -> bool {
        matches!(self, AgentKind::StockfishSkill { .. } | AgentKind::StockfishElo { .. })
    }

    /// Whether it is a reference player that needs no model (Stockfish, a solver, playout MCTS): the
    /// default anchor of the ratings.
    pub fn is_reference(&self) -> bool {
        !self.uses_model()
    }
}

/// Reads a list of agents and checks that the labels are distinct and that there are at least two.
pub fn parse_agents(texts: &[String]) -> Result<Vec<AgentSpec>, LeagueError> {
    let specs: Vec<AgentSpec> = texts.iter().map(|t| AgentSpec::parse(t)).collect::<Result<_, _>>()?;
    let mut seen = std::collections::HashSet::new();
    for s in &specs {
        if !seen.insert(s.label()) {
            return Err(LeagueError::Settings(format!("the agent {} is listed twice", s.label())));
        }
    }
    if specs.len() < 2 {
        return Err(LeagueError::Settings(format!(
            "a league needs at least two agents, got {}",
            specs.len()
        )));
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_labels() {
        let cases = [
            ("mav-max", "mav-max"),
            ("MAV-MEAN", "mav-mean"),
            ("mcts:100", "mcts-100"),
            ("mcts-max:400", "mcts-max-400"),
            ("stockfish:0", "sf-skill0"),
            ("sf:20", "sf-skill20"),
            ("stockfish-elo:1500", "sf-elo1500"),
            ("mcts:1000@assets/models/mav-tiny", "mcts-1000@mav-tiny"),
            ("solver", "solver"),
            ("solver:6", "solver-d6"),
            ("playouts:1000", "playouts-1000"),
            ("mav:quantile:0.25", "mav-quantile:0.25"),
            ("mav:max", "mav-max"),
            ("mcts:200:mean-sd:1", "mcts-mean-sd:1-200"),
            ("mcts:200:max", "mcts-max-200"),
            ("mav:Quantile:0.1@m/x", "mav-quantile:0.1@x"),
            ("minimax:2:1", "minimax-2x1"),
            ("internal:2:1", "internal-free-2x1"),
            ("internal:3:2:rules", "internal-rules-3x2"),
            ("internal:2:1:free@m/mav-tiny", "internal-free-2x1@mav-tiny"),
        ];
        for (text, label) in cases {
            assert_eq!(AgentSpec::parse(text).expect(text).label(), label, "{text}");
        }
        assert_eq!(
            AgentSpec::parse("mcts:400").expect("parses").kind,
            AgentKind::Mcts { simulations: 400, scoring: Scoring::Mean }
        );
    }

    #[test]
    fn bad_specs_say_what_is_known() {
        for bad in [
            "alphazero",
            "mcts",
            "mcts:x",
            "mcts:0",
            "stockfish:21",
            "stockfish",
            "mav-max:3",
            "sf:1@m",
            "mav-max@",
            "solver:0",
            "solver:x",
            "playouts",
            "playouts:0",
            "solver@m",
            "mav",
            "mav:median",
            "mcts:10:median",
            "mcts-max:10:mean",
            "minimax",
            "minimax:2",
            "minimax:0:1",
            "minimax:2:5",
            "minimax:2:1:rules",
            "internal:2:1:greedy",
            "internal:x:1",
        ] {
            let e = AgentSpec::parse(bad).expect_err(bad);
            assert!(matches!(e, LeagueError::UnknownAgent { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("mcts:N"), "{e}");
        }
        let e = parse_agents(&["mav-max".into(), "max".into()]).expect_err("twice");
        assert!(e.to_string().contains("twice"), "{e}");
        assert!(parse_agents(&["mav-max".into()]).is_err());
    }
}
