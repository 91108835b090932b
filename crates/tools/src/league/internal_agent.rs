//! Agents that plan before they move (paper §4): `minimax:B:D` plays the choice of the explicit minimax over
//! the model's values; `internal:B:D[:free|rules]` plays the `Playing` move of the trace the model writes
//! itself (a trace-writing `mav-lm` only), free or rules-constrained. Where a trace names no legal move (a
//! free trace's slip, or any trace the context cut before its choice) the agent plays the explicit search's
//! choice instead and says why in the move's note (and counts it).

use std::path::PathBuf;

use super::LeagueError;
use super::agent::{Agent, Choice, GameView};
use super::model_agent::SharedEvaluator;
use crate::game::GameKind;
use crate::inference::complete::{TraceModel, open_trace_model_for};
use crate::inference::completer::TraceDecoding;
use crate::inference::evaluator::Scoring;
use crate::inference::onnx::SessionOptions;
use crate::mav::buckets::Buckets;
use crate::mav::command::StateFormat;
use crate::mav::state::MavState;
use crate::search::internal::{InternalConfig, ModelSide, explicit_search, run_internal};

/// The search's configuration for a position of `kind` (its state lines as the shipped models read them).
fn config(
    kind: GameKind,
    breadth: u32,
    depth: u32,
    buckets: Buckets,
    decoding: TraceDecoding,
) -> InternalConfig {
    InternalConfig {
        breadth: breadth as usize,
        depth,
        scoring: Scoring::Mean,
        state_format: match kind {
            GameKind::Chess | GameKind::Chess960 => StateFormat::Fen,
            GameKind::ConnectFour | GameKind::Hex => StateFormat::State,
        },
        buckets,
        decoding,
    }
}

/// The explicit minimax over the league's shared model.
pub struct MinimaxAgent<G: MavState> {
    label: String,
    breadth: u32,
    depth: u32,
    buckets: Buckets,
    model: SharedEvaluator<G>,
}

impl<G: MavState> MinimaxAgent<G> {
    /// An agent named `label` searching `breadth` × `depth` over `model`, whose values have `buckets`.
    pub fn new(label: String, breadth: u32, depth: u32, buckets: Buckets, model: SharedEvaluator<G>) -> Self {
        MinimaxAgent { label, breadth, depth, buckets, model }
    }
}

impl<G: MavState> Agent<G> for MinimaxAgent<G> {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        Ok(())
    }

    fn choose(&mut self, game: &GameView<'_, G>) -> Result<Choice<G>, LeagueError> {
        let fail = |why: String| LeagueError::Agent { agent: self.label.clone(), why };
        let cfg = config(game.state.kind(), self.breadth, self.depth, self.buckets, TraceDecoding::Free);
        let mut model = self.model.borrow_mut();
        let search = explicit_search(&mut **model, game.state.clone(), &cfg)
            .map_err(|e| fail(format!("the minimax failed: {e}")))?;
        let text = search.choice.ok_or_else(|| fail("the minimax chose no move".into()))?;
        let action =
            game.state.parse_action(&text).map_err(|e| fail(format!("the minimax chose {text}: {e}")))?;
        let note =
            search.value.map(|v| format!("minimax {:.1}%, {} model calls", 100.0 * v, search.model_calls));
        Ok(Choice { action, note })
    }
}

/// The model's own trace, opened on its own session when the first move is asked for.
pub struct InternalAgent<G: MavState> {
    label: String,
    breadth: u32,
    depth: u32,
    decoding: TraceDecoding,
    dir: PathBuf,
    session: SessionOptions,
    model: Option<(TraceModel<G>, Buckets)>,
    /// Moves where the trace named no legal move and the explicit choice was played, over the agent's life.
    pub fallbacks: u64,
}

impl<G: MavState> InternalAgent<G> {
    /// An agent named `label` asking the package in `dir` for `breadth` × `depth` traces decoded as
    /// `decoding`.
    pub fn new(
        label: String,
        breadth: u32,
        depth: u32,
        decoding: TraceDecoding,
        dir: PathBuf,
        session: SessionOptions,
    ) -> Self {
        InternalAgent { label, breadth, depth, decoding, dir, session, model: None, fallbacks: 0 }
    }

    fn fail(&self, why: String) -> LeagueError {
        LeagueError::Agent { agent: self.label.clone(), why }
    }

    /// The trace writer, opened for `kind` the first time; a package that writes no trace is refused.
    fn model(&mut self, kind: GameKind) -> Result<&mut (TraceModel<G>, Buckets), LeagueError> {
        if self.model.is_none() {
            let (model, package) = open_trace_model_for::<G>(&self.dir, &self.session, kind)
                .map_err(|source| LeagueError::Model { dir: self.dir.clone(), source: Box::new(source) })?;
            if let TraceModel::ValuesOnly(_, why) = &model {
                return Err(self.fail(format!("{why}; play it as minimax:{}:{}", self.breadth, self.depth)));
            }
            let buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(u32::MAX))
                .map_err(|e| self.fail(format!("mav.json num_buckets: {e}")))?;
            self.model = Some((model, buckets));
        }
        self.model.as_mut().ok_or_else(|| LeagueError::Settings("the trace writer did not open".into()))
    }
}

impl<G: MavState> Agent<G> for InternalAgent<G> {
    fn label(&self) -> &str {
        &self.label
    }

    fn new_game(&mut self) -> Result<(), LeagueError> {
        Ok(())
    }

    fn choose(&mut self, game: &GameView<'_, G>) -> Result<Choice<G>, LeagueError> {
        let (breadth, depth, decoding) = (self.breadth, self.depth, self.decoding);
        let (model, buckets) = self.model(game.state.kind())?;
        let cfg = config(game.state.kind(), breadth, depth, *buckets, decoding);
        let report = run_internal(model, game.state.clone(), &cfg)
            .map_err(|e| self.fail(format!("the internal search failed: {e}")))?;
        let written = match &report.model {
            ModelSide::Written(m) => Some(m),
            ModelSide::Failed { why } | ModelSide::Unsupported { why } => {
                return Err(self.fail(format!("the model wrote no trace: {why}")));
            }
        };
        let own = written
            .and_then(|m| m.comparison.as_ref())
            .and_then(|c| c.model_choice.as_deref())
            .and_then(|t| game.state.parse_action(t).ok());
        let issues = written.map_or(0, |m| m.issues.len());
        if let Some(action) = own {
            let note = format!("{decoding} trace, {issues} issue(s)");
            return Ok(Choice { action, note: Some(note) });
        }
        self.fallbacks += 1;
        let text = report.explicit.choice.clone().ok_or_else(|| self.fail("no move was chosen".into()))?;
        let action = game
            .state
            .parse_action(&text)
            .map_err(|e| self.fail(format!("the minimax chose {text}: {e}")))?;
        let why = if written.is_some_and(|m| m.truncated) {
            "ran out of context before its choice"
        } else {
            "named no legal move"
        };
        let note = format!("{decoding} trace {why} ({issues} issue(s)); the explicit choice played");
        Ok(Choice { action, note: Some(note) })
    }
}
