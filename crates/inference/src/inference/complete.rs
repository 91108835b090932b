//! Free text completion: a model continues a prompt with whatever it writes, greedily, until it ends the
//! text or runs out of context. Internal search (paper §4) asks a model this way to write its own minimax
//! trace; the protocol's trace parser judges the text afterwards.

pub use super::completer::{Completer, Completion};

/// A model package opened for internal search over `S` positions (chess unless said otherwise).
pub enum TraceModel<S = crate::game::chess::ChessState> {
    /// A `mav-lm` trained on internal-search traces: one session gives the explicit search's values and
    /// writes the model's own trace.
    Writer(Box<super::lm::MavLmEvaluator>),
    /// Any other package: values for the explicit search only; the text says why it writes no trace.
    ValuesOnly(Box<dyn super::evaluator::Evaluator<S> + Send>, String),
}

impl<S> std::fmt::Debug for TraceModel<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceModel::Writer(_) => f.write_str("TraceModel::Writer"),
            TraceModel::ValuesOnly(_, why) => f.debug_tuple("TraceModel::ValuesOnly").field(why).finish(),
        }
    }
}

/// Why a package writes no internal-search trace, for the user (`None` when it can write one).
pub fn no_trace_explanation(manifest: &crate::model::Manifest) -> Option<String> {
    let (name, format) = (&manifest.name, manifest.format.name());
    match (manifest.internal_search, manifest.format.capabilities().writes_traces) {
        (true, true) => None,
        (true, false) => Some(format!(
            "{name} ({format}) says it was trained for internal search, but only a {} package writes text; \
             the explicit minimax uses its values",
            crate::model::ModelFormat::names_with(|c| c.writes_traces)
        )),
        (false, _) => Some(format!(
            "{name} ({format}) was not trained on internal-search traces (mav.json internal_search: false), so it \
             cannot write its own trace: that needs a mav-lm package trained with trace examples \
             (internal_search: true). The explicit minimax is the trace such a model imitates"
        )),
    }
}

/// Opens the package in `dir` for internal search over `game` positions held in `S`: a trace writer when its
/// mav.json says it was trained for it, else its evaluator alone. A package whose `games` does not list
/// `game` (for chess: chess or Chess960) is refused, naming its games.
pub fn open_trace_model_for<S: crate::mav::state::MavState>(
    dir: &std::path::Path,
    options: &super::onnx::SessionOptions,
    game: crate::game::GameKind,
) -> Result<(TraceModel<S>, crate::model::ModelPackage), super::LoadError> {
    use crate::game::GameKind;
    let accepted = match game {
        GameKind::Chess | GameKind::Chess960 => vec![GameKind::Chess, GameKind::Chess960],
        other => vec![other],
    };
    let package = super::load::open_for(dir, &accepted)?;
    match no_trace_explanation(&package.manifest) {
        None => {
            let lm = super::lm::MavLmEvaluator::load(&package, options)?;
            Ok((TraceModel::Writer(Box::new(lm)), package))
        }
        Some(why) => {
            let (e, _) = super::load::build::<S>(&package, options, game)?;
            Ok((TraceModel::ValuesOnly(e, why), package))
        }
    }
}

/// Opens the package in `dir` for internal search of chess positions (see [`open_trace_model_for`]).
pub fn open_trace_model(
    dir: &std::path::Path,
    options: &super::onnx::SessionOptions,
) -> Result<(TraceModel, crate::model::ModelPackage), super::LoadError> {
    open_trace_model_for(dir, options, crate::game::GameKind::Chess)
}
