//! `mavboard mav`: render examples, export the tokenizer, parse model output.

use std::path::PathBuf;

use anyhow::{Context, bail};
use mavboard::game::chess::ChessState;
use mavboard::game::{GameKind, GameState};
use mavboard::mav::buckets::Buckets;
use mavboard::mav::command::{Layout, StateFormat};
use mavboard::mav::example::{Example, ExampleSpec, MoveOrder, MoveValue, render_example};
use mavboard::mav::response::{ParsedResponse, parse_example_text, parse_response};
use mavboard::mav::sample::{random_examples, random_traces};
use mavboard::mav::state::MavState;
use mavboard::mav::tokenizer::Tokenizer;

use super::choice::GameArg;

/// Arguments of `mavboard mav`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Render one MAV example (prompt + response) from a position, move values and a best move.
    Example(ExampleArgs),
    /// Write the vocabulary as a Hugging Face tokenizer.json.
    Tokenizer {
        /// Output file.
        #[arg(short = 'o', long, default_value = "tokenizer.json")]
        output: PathBuf,
    },
    /// Parse a model output tolerantly and report hallucinations.
    Parse(ParseArgs),
    /// Tokenize text from standard input; prints one JSON object with `text` and `ids`.
    Encode,
    /// Write synthetic examples and internal-search traces (random legal play, random values; for format
    /// and tokenizer checks, not for training) as JSON lines with `text`, `prompt`, `response` and `ids`.
    Sample {
        /// How many examples.
        #[arg(long, default_value_t = 100)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output file (JSON lines).
        #[arg(short = 'o', long, default_value = "examples.jsonl")]
        output: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct ExampleArgs {
    /// Game: chess or chess960.
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::Chess)]
    game: GameArg,
    /// FEN of the previous position (with --action).
    #[arg(long)]
    prev_fen: Option<String>,
    /// The move played in the previous position (UCI).
    #[arg(long)]
    action: Option<String>,
    /// FEN of the current position (optional with --prev-fen/--action; then it must agree).
    #[arg(long)]
    fen: Option<String>,
    /// The header commands, e.g. "%prev_FEN %prev_action %FEN %state %top_5 %best_action %FEN".
    #[arg(long)]
    commands: String,
    /// Move values: "d7b6=28,f6f5=33" (integers are buckets, numbers with a dot are win probabilities).
    #[arg(long, default_value = "")]
    values: String,
    /// The best move (UCI).
    #[arg(long)]
    best: Option<String>,
    /// Seed of the random move order on the %top_k line.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Keep the order of --values instead of shuffling.
    #[arg(long)]
    keep_order: bool,
    /// Number of value buckets.
    #[arg(long, default_value_t = 64)]
    buckets: u32,
    /// Print one JSON object (text, prompt, response, ids) instead of the text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ParseArgs {
    /// The file: either a whole example (starting with the `<mav …>` header and its input lines) or,
    /// with --fen, only the model's output lines.
    file: PathBuf,
    /// The true current position, when the file holds only output lines.
    #[arg(long)]
    fen: Option<String>,
    /// Game: chess or chess960 (with --fen).
    #[arg(long, value_enum, ignore_case = true, default_value_t = GameArg::Chess)]
    game: GameArg,
    /// The header commands the output answers (with --fen).
    #[arg(long, default_value = "%FEN %top_all %best_action %FEN")]
    commands: String,
    /// Number of value buckets.
    #[arg(long, default_value_t = 64)]
    buckets: u32,
}

/// Runs `mavboard mav`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Sub::Example(a) => example(a),
        Sub::Tokenizer { output } => {
            let t = Tokenizer::new();
            std::fs::write(&output, t.to_hf_json())
                .with_context(|| format!("cannot write {}", output.display()))?;
            outln!(
                "wrote {} ({} tokens; <pad>={}, <eos>={}, <unk>={}, <sep>={})",
                output.display(),
                t.vocab_size(),
                t.pad_id(),
                t.eos_id(),
                t.unk_id(),
                t.sep_id()
            );
            Ok(())
        }
        Sub::Parse(a) => parse(a),
        Sub::Encode => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read standard input")?;
            outln!("{}", serde_json::json!({ "text": text, "ids": Tokenizer::new().encode(&text) }));
            Ok(())
        }
        Sub::Sample { count, seed, output } => {
            let t = Tokenizer::new();
            let mut s = String::new();
            for e in random_examples(count, seed).iter().chain(&random_traces(count / 10, seed)) {
                s.push_str(&json_line(&t, e));
                s.push('\n');
            }
            std::fs::write(&output, s).with_context(|| format!("cannot write {}", output.display()))?;
            outln!("wrote {count} examples and {} traces to {}", count / 10, output.display());
            Ok(())
        }
    }
}

fn json_line(t: &Tokenizer, e: &Example) -> String {
    let text = e.text();
    serde_json::json!({ "text": text, "prompt": e.prompt(), "response": e.response(), "ids": t.encode(&text) })
        .to_string()
}

fn read_fen(game: GameKind, fen: &str, what: &str) -> anyhow::Result<ChessState> {
    ChessState::from_mav_text(game, StateFormat::Fen, fen)
        .with_context(|| format!("{what}: give a legal position in FEN, e.g. the start position"))
}

fn example(a: ExampleArgs) -> anyhow::Result<()> {
    let game = a.game.kind();
    let buckets = Buckets::new(a.buckets)?;
    let layout = Layout::from_command_list(game, &a.commands).context("--commands")?;
    let previous = match (&a.prev_fen, &a.action) {
        (Some(f), Some(m)) => {
            let prev = read_fen(game, f, "--prev-fen")?;
            let action = prev.parse_action(m).context("--action")?;
            Some((prev, action))
        }
        (None, None) => None,
        _ => bail!("--prev-fen and --action go together"),
    };
    let state = match (&a.fen, &previous) {
        (Some(f), _) => read_fen(game, f, "--fen")?,
        (None, Some((p, m))) => p.play(*m).context("--action")?,
        (None, None) => bail!("give --fen, or --prev-fen with --action"),
    };
    let mut values = Vec::new();
    for item in a.values.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (m, v) =
            item.split_once('=').with_context(|| format!("--values: '{item}' should be MOVE=VALUE"))?;
        let action = state.parse_action(m).with_context(|| format!("--values: move '{m}'"))?;
        let value = if v.contains('.') {
            MoveValue::WinProb(
                v.parse().with_context(|| format!("--values: '{v}' is not a win probability"))?,
            )
        } else {
            MoveValue::Bucket(v.parse().with_context(|| format!("--values: '{v}' is not a bucket number"))?)
        };
        values.push((action, value));
    }
    let best = a.best.as_deref().map(|b| state.parse_action(b).context("--best")).transpose()?;
    let spec = ExampleSpec {
        layout: &layout,
        previous: previous.as_ref().map(|(p, m)| (p, *m)),
        state: &state,
        values: &values,
        best,
        order: if a.keep_order { MoveOrder::AsGiven } else { MoveOrder::Shuffled(a.seed) },
        buckets,
    };
    let ex = render_example(&spec)?;
    if a.json {
        outln!("{}", json_line(&Tokenizer::new(), &ex));
    } else {
        outln!("{}", ex.text());
    }
    Ok(())
}

fn parse(a: ParseArgs) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
    let buckets = Buckets::new(a.buckets)?;
    let (state, parsed): (ChessState, ParsedResponse<ChessState>) = if text.starts_with("<mav ") {
        if a.fen.is_some() {
            bail!("{} starts with a header, so its prompt gives the position: drop --fen", a.file.display());
        }
        let (_, state, parsed) = parse_example_text::<ChessState>(&text, buckets)
            .with_context(|| format!("the prompt in {} is not usable", a.file.display()))?;
        (state, parsed)
    } else {
        let fen =
            a.fen.as_deref().context("the file has no `<mav …>` header: give the position with --fen")?;
        let game = a.game.kind();
        let state = read_fen(game, fen, "--fen")?;
        let layout = Layout::from_command_list(game, &a.commands).context("--commands")?;
        let parsed = parse_response(&layout, &state, buckets, &text, 1);
        (state, parsed)
    };
    let n = parsed.hallucinations.len();
    outln!(
        "read: {} state line(s), {} valued legal move(s), best action: {}",
        parsed.states.len(),
        parsed.top.len(),
        parsed.best.map_or("none".to_owned(), |m| state.action_to_text(m))
    );
    if let Some(r) = &parsed.declared_result {
        outln!("declared result: {r}");
    }
    if n == 0 {
        outln!("no hallucinations");
    } else {
        outln!("{n} hallucination(s):");
        for h in &parsed.hallucinations {
            outln!("  {h}");
        }
    }
    Ok(())
}
