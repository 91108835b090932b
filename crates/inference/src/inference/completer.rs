//! What a model that continues text offers ([`Completer`]) and what it gives back ([`Completion`]): the
//! narrow interface that internal search and trace completion ask, below the models that implement it.

use super::evaluator::EvalError;

/// How a model writes its internal-search trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceDecoding {
    /// Greedy and unmasked: the model writes every move and state itself (its world model shows, with
    /// its mistakes). The reference, and the default.
    #[default]
    Free,
    /// Rules-constrained: every move the trace names is legal where it stands and the rules write the
    /// states; the values, backups and choices stay the model's (see `inference::lm::trace_rules`).
    Rules,
}

impl TraceDecoding {
    /// Every decoding, free first.
    pub const ALL: [TraceDecoding; 2] = [TraceDecoding::Free, TraceDecoding::Rules];

    /// The name used on the command line and in reports: `free` or `rules`.
    pub fn name(self) -> &'static str {
        match self {
            TraceDecoding::Free => "free",
            TraceDecoding::Rules => "rules",
        }
    }

    /// What it means, for tooltips and reports.
    pub fn describe(self) -> &'static str {
        match self {
            TraceDecoding::Free => {
                "free decoding: the model writes every move and state (its world model shows)"
            }
            TraceDecoding::Rules => {
                "rules-constrained decoding: moves legal and states by the rules; values and choices the model's"
            }
        }
    }
}

/// A trace decoding's name that is neither `free` nor `rules`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trace decoding {0:?}: write free or rules")]
pub struct UnknownTraceDecoding(pub String);

impl std::str::FromStr for TraceDecoding {
    type Err = UnknownTraceDecoding;

    fn from_str(s: &str) -> Result<TraceDecoding, UnknownTraceDecoding> {
        TraceDecoding::ALL
            .into_iter()
            .find(|d| d.name() == s.trim())
            .ok_or_else(|| UnknownTraceDecoding(s.to_owned()))
    }
}

impl std::fmt::Display for TraceDecoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// How it was decoded.
    pub decoding: TraceDecoding,
}

/// A model that continues a text prompt (a `mav-lm`, or a scripted stand-in in tests).
pub trait Completer {
    /// Continues `prompt` greedily until the model ends the text or the context is full.
    fn complete(&mut self, prompt: &str) -> Result<Completion, EvalError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodings_read_their_own_names_and_refuse_others() {
        for d in TraceDecoding::ALL {
            assert_eq!(d.to_string().parse::<TraceDecoding>(), Ok(d));
        }
        let err = "greedy".parse::<TraceDecoding>().expect_err("unknown");
        assert!(err.to_string().contains("free or rules"), "{err}");
        assert_eq!(TraceDecoding::default(), TraceDecoding::Free);
    }
}
