//! What a model that continues text offers ([`Completer`]) and what it gives back ([`Completion`]): the
//! narrow interface that internal search and trace completion ask, below the models that implement it.

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
    /// Greedy picks that would have listed a move twice on one line and were replaced by the next most
    /// likely token (the repeat guard of trace decoding; 0 without it).
    pub repeats_avoided: usize,
}

/// A model that continues a text prompt (a `mav-lm`, or a scripted stand-in in tests).
pub trait Completer {
    /// Continues `prompt` greedily until the model ends the text or the context is full.
    fn complete(&mut self, prompt: &str) -> Result<Completion, EvalError>;
}
