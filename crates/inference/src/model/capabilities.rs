//! What each model format can do, as one table read by the loaders, the remote evaluator, trace completion,
//! inspection and the app. Code asks a format for a capability (as lc0's backends are asked for their
//! attributes) instead of comparing it with a format by name, so a new format is one row here and one
//! loader, and a capability it lacks is refused with the reason this table gives.

use super::manifest::ModelFormat;

/// How a format's requests become rows of one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchShape {
    /// One row per position, generated token by token (a decoder with a KV cache).
    TokensPerPosition,
    /// One row per position: the state and every candidate move in one pass.
    PositionPerRow,
    /// One row per legal move: the state and one move, a value distribution each.
    MovePerRow,
    /// One row per legal move: the state after it, valued for the player to move there.
    SuccessorPerRow,
    /// One row per position: the state alone, a probability for every action.
    StatePerRow,
}

/// What a model format can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Every legal move of a position valued (a policy: scored) in one model call (no token-by-token
    /// generation).
    pub one_pass_values: bool,
    /// Gives each move a value distribution (win probabilities); `false` for a policy alone (behavioural
    /// cloning), whose moves come with probabilities and which neither search backs up nor review reads.
    pub values: bool,
    /// Writes text token by token: needs an end-of-sequence id and a tokenizer whose vocabulary is the
    /// graph's.
    pub generates_text: bool,
    /// Can act as its own world model (writes moves, next states and results itself; free decoding).
    pub world_model: bool,
    /// Writes an internal-search trace when its package was trained for it (`internal_search: true`).
    pub writes_traces: bool,
    /// Reads its input through the package's `tokenizer.json`.
    pub needs_tokenizer: bool,
    /// Has an inspection graph for the *Inside* panel (attention and per-layer values).
    pub inspection: bool,
    /// Can be served by a remote model server (mav.json `remote`).
    pub remote: bool,
    /// How requests become rows.
    pub batch: BatchShape,
}

impl ModelFormat {
    /// Every format, in the order the docs list them.
    pub const ALL: [ModelFormat; 6] = [
        ModelFormat::MavLm,
        ModelFormat::MavEncoder,
        ModelFormat::ActionValue,
        ModelFormat::StateValue,
        ModelFormat::BehavioralCloning,
        ModelFormat::Lc0,
    ];

    /// The format's capabilities: the one table.
    pub const fn capabilities(self) -> Capabilities {
        match self {
            ModelFormat::MavLm => Capabilities {
                one_pass_values: false,
                values: true,
                generates_text: true,
                world_model: true,
                writes_traces: true,
                needs_tokenizer: true,
                inspection: false,
                remote: true,
                batch: BatchShape::TokensPerPosition,
            },
            ModelFormat::MavEncoder => Capabilities {
                one_pass_values: true,
                values: true,
                generates_text: false,
                world_model: false,
                writes_traces: false,
                needs_tokenizer: true,
                inspection: true,
                remote: true,
                batch: BatchShape::PositionPerRow,
            },
            ModelFormat::ActionValue => Capabilities {
                one_pass_values: true,
                values: true,
                generates_text: false,
                world_model: false,
                writes_traces: false,
                needs_tokenizer: false,
                inspection: true,
                remote: true,
                batch: BatchShape::MovePerRow,
            },
            ModelFormat::StateValue => Capabilities {
                one_pass_values: true,
                values: true,
                generates_text: false,
                world_model: false,
                writes_traces: false,
                needs_tokenizer: false,
                inspection: false,
                remote: false,
                batch: BatchShape::SuccessorPerRow,
            },
            ModelFormat::BehavioralCloning => Capabilities {
                one_pass_values: true,
                values: false,
                generates_text: false,
                world_model: false,
                writes_traces: false,
                needs_tokenizer: false,
                inspection: false,
                remote: false,
                batch: BatchShape::StatePerRow,
            },
            ModelFormat::Lc0 => Capabilities {
                one_pass_values: true,
                values: true,
                generates_text: false,
                world_model: false,
                writes_traces: false,
                needs_tokenizer: false,
                inspection: false,
                remote: false,
                batch: BatchShape::SuccessorPerRow,
            },
        }
    }

    /// The formats with a capability, by name, for messages ("mav-encoder or action-value").
    pub fn names_with(has: impl Fn(Capabilities) -> bool) -> String {
        let names: Vec<&str> =
            ModelFormat::ALL.into_iter().filter(|f| has(f.capabilities())).map(ModelFormat::name).collect();
        match names.as_slice() {
            [] => "none".to_owned(),
            [one] => (*one).to_owned(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for f in ModelFormat::ALL {
            let c = f.capabilities();
            // Text generation and one-pass values exclude each other; traces and a world model are written text.
            assert_ne!(c.generates_text, c.one_pass_values, "{}", f.name());
            assert!(!c.writes_traces || c.generates_text, "{}", f.name());
            assert!(!c.world_model || c.generates_text, "{}", f.name());
            assert!(!c.generates_text || c.needs_tokenizer, "{}", f.name());
            assert_eq!(c.batch == BatchShape::TokensPerPosition, c.generates_text, "{}", f.name());
        }
        assert_eq!(ModelFormat::names_with(|c| c.remote), "mav-lm, mav-encoder or action-value");
        assert_eq!(ModelFormat::names_with(|c| c.writes_traces), "mav-lm");
        assert_eq!(ModelFormat::names_with(|c| c.inspection), "mav-encoder or action-value");
        assert_eq!(
            ModelFormat::names_with(|c| c.one_pass_values),
            "mav-encoder, action-value, state-value, behavioral-cloning or lc0"
        );
        assert_eq!(ModelFormat::names_with(|c| !c.values), "behavioral-cloning");
        assert_eq!(ModelFormat::names_with(|c| c.needs_tokenizer), "mav-lm or mav-encoder");
    }
}
