//! The narrow interface between a text model's decoding and a server that continues text
//! ([`Continuer`]): a sequence of token ids in, the greedy continuation with the log-probabilities listed at
//! each position out. A file of its own, so that the decoder (`lm::cursor`) and the server client
//! (`remote::openai`) both depend on it and not on each other.

use super::remote_error::RemoteError;

/// One position of a server's continuation: the token it wrote and the log-probabilities it listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The token written.
    pub token: u32,
    /// `(token, log-probability)` of the listed tokens.
    pub top: Vec<(u32, f32)>,
}

/// Something that continues a token sequence greedily and says what it saw at each position (an LLM
/// engine's completions API).
pub trait Continuer: Sync {
    /// Up to `max_tokens` tokens greedily after `ids`, fewer where the text ends (`<eos>`); at least one.
    fn continue_greedy(&self, ids: &[u32], max_tokens: usize) -> Result<Vec<Step>, RemoteError>;
}
