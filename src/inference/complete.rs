//! Free text completion: a model continues a prompt with whatever it writes, greedily, until it ends the
//! text or runs out of context. Internal search (paper §4) asks a model this way to write its own minimax
//! trace; the protocol's trace parser judges the text afterwards.

use super::evaluator::EvalError;

/// What a model wrote after a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The text written after the prompt (without the end-of-sequence token).
    pub text: String,
    /// Tokens written.
    pub tokens: usize,
    /// The model hit its context length before ending the text.
    pub truncated: bool,
}

/// A model that continues a text prompt (a `mav-lm`, or a scripted stand-in in tests).
pub trait Completer {
    /// Continues `prompt` greedily until the model ends the text or the context is full.
    fn complete(&mut self, prompt: &str) -> Result<Completion, EvalError>;
}

/// A model package opened for internal search.
pub enum TraceModel {
    /// A `mav-lm` trained on internal-search traces: one session gives the explicit search's values and
    /// writes the model's own trace.
    Writer(Box<super::lm::MavLmEvaluator>),
    /// Any other package: values for the explicit search only; the text says why it writes no trace.
    ValuesOnly(Box<dyn super::evaluator::Evaluator<crate::game::chess::ChessState> + Send>, String),
}

impl std::fmt::Debug for TraceModel {
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
    match (manifest.internal_search, manifest.format) {
        (true, crate::model::ModelFormat::MavLm) => None,
        (true, _) => Some(format!(
            "{name} ({format}) says it was trained for internal search, but only a mav-lm package writes text; \
             the explicit minimax uses its values"
        )),
        (false, _) => Some(format!(
            "{name} ({format}) was not trained on internal-search traces (mav.json internal_search: false), so it \
             cannot write its own trace: that needs a mav-lm package trained with trace examples \
             (internal_search: true). The explicit minimax is the trace such a model imitates"
        )),
    }
}

/// Opens the package in `dir` for internal search: a trace writer when its mav.json says it was trained
/// for it, else its evaluator alone.
pub fn open_trace_model(
    dir: &std::path::Path,
    options: &super::onnx::SessionOptions,
) -> Result<(TraceModel, crate::model::ModelPackage), super::LoadError> {
    let package = crate::model::ModelPackage::open(dir)?;
    match no_trace_explanation(&package.manifest) {
        None => {
            let lm = super::lm::MavLmEvaluator::open(&package, options)?;
            Ok((TraceModel::Writer(Box::new(lm)), package))
        }
        Some(why) => {
            let (e, package) = super::load_evaluator(dir, options)?;
            Ok((TraceModel::ValuesOnly(e, why), package))
        }
    }
}
