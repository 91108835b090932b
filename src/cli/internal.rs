//! `mavboard analyse --internal b,d`: the explicit minimax over the model with its trace, its tree and its
//! choice, and the model's own trace beside it when the package was trained to write one.

use std::path::Path;

use anyhow::Context;
use mavboard::game::GameKind;
use mavboard::inference::complete::{TraceModel, open_trace_model_for};
use mavboard::inference::completer::TraceDecoding;
use mavboard::inference::evaluator::Scoring;
use mavboard::inference::onnx::SessionOptions;
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::StateFormat;
use mavboard::search::internal::{InternalConfig, InternalReport, ModelSide, run_internal, tree_lines};

/// `--repeat-guard`: how a trace-writing model decodes its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RepeatGuard {
    /// Greedy, but a move already listed on a line is not written there again (the default).
    #[default]
    On,
    /// Plain greedy decoding, as in the paper.
    Off,
}

impl RepeatGuard {
    /// Sets the guard on a trace-writing model (a values-only package writes no trace).
    pub fn apply<S>(self, model: &mut TraceModel<S>) {
        if let TraceModel::Writer(lm) = model {
            lm.set_repeat_guard(self == RepeatGuard::On);
        }
    }
}

/// Reads `b,d` (breadth ≥ 1, depth ≥ 0).
pub fn parse_breadth_depth(text: &str) -> anyhow::Result<(usize, u32)> {
    let (b, d) =
        text.split_once(',').with_context(|| format!("--internal {text}: write it as b,d (e.g. 2,1)"))?;
    let b: usize =
        b.trim().parse().with_context(|| format!("--internal {text}: the breadth {b:?} is no number"))?;
    let d: u32 =
        d.trim().parse().with_context(|| format!("--internal {text}: the depth {d:?} is no number"))?;
    anyhow::ensure!(b >= 1, "--internal {text}: the breadth must be at least 1");
    anyhow::ensure!(d <= 4, "--internal {text}: depths above 4 ask for b^d model calls per level; use 0..=4");
    Ok((b, d))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", 100.0 * v))
}

/// What `analyse --internal` asks for.
#[derive(Debug, Clone, Copy)]
pub struct InternalRequest<'a> {
    /// `b,d` as written.
    pub spec: &'a str,
    /// The explicit search's scoring.
    pub scoring: Scoring,
    /// How a trace-writing model decodes its trace.
    pub repeat_guard: RepeatGuard,
    /// Free or rules-constrained trace decoding.
    pub decoding: TraceDecoding,
    /// Print JSON instead of text.
    pub json: bool,
}

/// Runs the internal search and prints it (text or JSON).
pub fn run<S: mavboard::mav::state::MavState>(
    state: S,
    game: GameKind,
    dir: &Path,
    options: &SessionOptions,
    request: InternalRequest<'_>,
) -> anyhow::Result<()> {
    let InternalRequest { spec, scoring, repeat_guard, decoding, json } = request;
    let (breadth, depth) = parse_breadth_depth(spec)?;
    let (mut model, package) = open_trace_model_for::<S>(dir, options, game)
        .with_context(|| format!("opening the model in {}", dir.display()))?;
    repeat_guard.apply(&mut model);
    let buckets = Buckets::new(u32::try_from(package.manifest.num_buckets).unwrap_or(u32::MAX))
        .context("mav.json num_buckets")?;
    let state_format = match game {
        GameKind::Chess | GameKind::Chess960 => StateFormat::Fen,
        GameKind::ConnectFour | GameKind::Hex => StateFormat::State,
    };
    let config = InternalConfig { breadth, depth, scoring, state_format, buckets, decoding };
    let report = run_internal(&mut model, state, &config)?;
    if json {
        let mut out = serde_json::to_value(&report)?;
        if let Some(o) = out.as_object_mut() {
            o.insert("model_name".into(), serde_json::Value::String(package.manifest.name.clone()));
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print_report(&report, &package.manifest.name, package.manifest.format.name());
    Ok(())
}

fn print_report(r: &InternalReport, name: &str, format: &str) {
    let scoring = r.scoring;
    outln!("position  {}", r.root);
    outln!("model     {name} ({format})");
    outln!(
        "\nExplicit minimax, breadth {} depth {}, {scoring} scoring: {} model calls",
        r.breadth,
        r.depth,
        r.explicit.model_calls
    );
    outln!("\n-- trace (the reference an internal-search model imitates) --\n{}", r.explicit.trace);
    outln!("\n-- tree (* the chosen line) --");
    for l in tree_lines(&r.explicit.tree) {
        outln!("{l}");
    }
    outln!(
        "\nexplicit search plays {} (value {} for the side to move; line {})",
        r.explicit.choice.as_deref().unwrap_or("nothing"),
        pct(r.explicit.value),
        r.explicit.tree.chosen_line().join(" ")
    );
    outln!("\n-- the model's own trace --");
    match &r.model {
        ModelSide::Unsupported { why } => outln!("none: {why}."),
        ModelSide::Failed { why } => outln!("the model could not write its trace: {why}"),
        ModelSide::Written(m) => {
            outln!("({})", m.decoding.describe());
            outln!("{}", m.written);
            if m.truncated {
                match m.decoding {
                    TraceDecoding::Free => {
                        outln!("(the model ran out of context after {} tokens)", m.tokens)
                    }
                    TraceDecoding::Rules => outln!(
                        "(the context ran out after {} tokens: the trace is cut at the last node boundary)",
                        m.tokens
                    ),
                }
            }
            if m.repeats_avoided > 0 {
                outln!(
                    "(decoding kept the model from listing a move twice on one line {} time(s); \
                     --repeat-guard off writes plain greedy text)",
                    m.repeats_avoided
                );
            }
            if let Some(e) = &m.parse_error {
                outln!("the trace cannot be read: {e}");
            }
            if let Some(t) = &m.tree {
                outln!("\n-- the model's tree (* its chosen line, ! its mistakes) --");
                for l in tree_lines(t) {
                    outln!("{l}");
                }
            }
            outln!("\n{} issue(s)", m.issues.len());
            for i in &m.issues {
                outln!("  line {} {}: {}", i.line, i.node, i.text);
            }
            if let Some(c) = &m.comparison {
                outln!(
                    "\nexplicit search plays {}, the model plays {}{}",
                    c.explicit_choice.as_deref().unwrap_or("nothing"),
                    c.model_choice.as_deref().unwrap_or("nothing"),
                    if c.same_choice { " (the same move)" } else { "" }
                );
                for d in &c.differences {
                    outln!("  differs: {d}");
                }
            }
        }
    }
}
