//! `mavboard inspect`: inside the model for one position — each move's value distribution after every layer
//! (the logit lens), one head's attention from a chosen query token or square, and every move's values with
//! one head switched off beside the clean ones. Runs the package's inspection graph
//! (`mavboard::inference::inspect`) of a mav-encoder (chess (`--fen`), Connect Four and Hex (`--game` with
//! `--moves`)) or an action-value package (chess; one sequence per move: the attention shown is of the
//! best move's sequence, or of the move given as `--query`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use mavboard::inference::evaluator::EvalRequest;
use mavboard::inference::inspect::{HeadScale, Inspection, Inspector, TokenRole};
use mavboard::inference::load_evaluator_for;
use mavboard::inference::onnx::SessionOptions;
use mavboard::mav::state::MavState;
use mavboard::model::ModelPackage;
use mavboard::model::package::default_package_dir;
use serde_json::{Value, json};

use super::position::{Position, PositionArgs};

/// Arguments of `mavboard inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    position: PositionArgs,
    /// The model package folder; it must declare an inspection graph [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// The layer (from 0) whose attention is shown and, with --head, whose head is switched off [default:
    /// the last layer].
    #[arg(long)]
    layer: Option<usize>,
    /// The head (from 0) whose attention is shown; with --layer, the head switched off for the comparison
    /// [default: head 0, nothing switched off].
    #[arg(long)]
    head: Option<usize>,
    /// The query of the attention map: a board cell (`e4`), a move (`e2e4`) or a token index [default: the
    /// token of the model's best move by mean value]. An action-value package runs one sequence per move:
    /// the map is of the best move's sequence, or of the move given here.
    #[arg(long)]
    query: Option<String>,
    /// Also time N inspections and N normal evaluations of the position (model.onnx, with the package's own
    /// evaluator), and print the medians.
    #[arg(long, value_name = "N")]
    timing: Option<usize>,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// Runs `mavboard inspect`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = match &args.model {
        Some(d) => d.clone(),
        None => default_package_dir()?,
    };
    let options = SessionOptions { ort_lib: args.ort_lib.clone(), ..SessionOptions::default() };
    match args.position.position()? {
        Position::Chess(state) => inspect(state, &dir, &options, &args),
        Position::ConnectFour(state) => inspect(state, &dir, &options, &args),
        Position::Hex(state) => inspect(state, &dir, &options, &args),
    }
}

fn role_text(role: &TokenRole) -> String {
    match role {
        TokenRole::SideToMove => "side to move".into(),
        TokenRole::Cell(c) => format!("cell {}", c.name),
        TokenRole::StateInfo => "state".into(),
        TokenRole::Separator => "separator".into(),
        TokenRole::Move(i) => format!("move {i}"),
        TokenRole::MoveSpace => "move separator".into(),
        TokenRole::Start => "start (BOS)".into(),
    }
}

/// The query token: a cell name, a move, or a token index; by default the best move's token.
fn query_token(ins: &Inspection, query: Option<&str>) -> anyhow::Result<usize> {
    let Some(q) = query else {
        let best = (0..ins.moves.len())
            .max_by(|&a, &b| ins.moves[a].value.mean_value().total_cmp(&ins.moves[b].value.mean_value()))
            .context("the position has no moves")?;
        return Ok(ins.moves[best].token);
    };
    if let Some(t) = ins.cell_token(q) {
        return Ok(t);
    }
    if let Some(m) = ins.move_index(q) {
        return Ok(ins.moves[m].token);
    }
    match q.parse::<usize>() {
        Ok(t) if t < ins.tokens.len() => Ok(t),
        Ok(t) => anyhow::bail!("--query {t}: the input has {} tokens", ins.tokens.len()),
        Err(_) => anyhow::bail!("--query {q}: not a board cell, a legal move, nor a token index"),
    }
}

fn median_ms(mut xs: Vec<Duration>) -> f64 {
    xs.sort();
    xs.get(xs.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Median wall times of `n` inspections and `n` normal evaluations (model.onnx) of `state`, in ms.
fn time_both<S: MavState>(
    inspector: &mut Inspector,
    state: &S,
    package: &ModelPackage,
    options: &SessionOptions,
    n: usize,
) -> anyhow::Result<(f64, f64)> {
    let ones = inspector.ones();
    let mavboard::inference::LoadedModel { evaluator: mut eval, .. } =
        load_evaluator_for::<S>(&package.dir, options, state.kind())?;
    let req = EvalRequest::values(state.clone());
    let mut evaluate = || -> anyhow::Result<()> {
        let res = eval.evaluate(std::slice::from_ref(&req)).pop().context("no result")?;
        res?;
        Ok(())
    };
    // one warm-up call each: ONNX Runtime plans its buffers on the first run
    inspector.inspect(state, &ones)?;
    evaluate()?;
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        inspector.inspect(state, &ones)?;
        a.push(t.elapsed());
        let t = Instant::now();
        evaluate()?;
        b.push(t.elapsed());
    }
    Ok((median_ms(a), median_ms(b)))
}

fn inspect<S: MavState>(
    state: S,
    dir: &std::path::Path,
    options: &SessionOptions,
    args: &Args,
) -> anyhow::Result<()> {
    let package = ModelPackage::open(dir)?;
    let mut inspector = Inspector::open(&package, options)?;
    let (layers, heads) = (inspector.num_layers(), inspector.num_heads());
    let start = Instant::now();
    let mut clean = inspector.inspect(&state, &inspector.ones())?;
    let clean_ms = start.elapsed().as_secs_f64() * 1e3;
    // an action-value package keeps one move's sequence: the one of the move asked about, if any
    if let (Some(shown), Some(q)) = (clean.attention_move, args.query.as_deref())
        && clean.move_index(q).is_some_and(|m| m != shown)
    {
        clean = inspector.inspect_move(&state, &inspector.ones(), q)?;
    }
    let layer = args.layer.unwrap_or(layers.saturating_sub(1));
    let head = args.head.unwrap_or(0);
    let ablated = match (args.layer, args.head) {
        (Some(l), Some(h)) => {
            Some(inspector.inspect(&state, &HeadScale::without_head(layers, heads, l, h)?)?)
        }
        (None, None) => None,
        _ => anyhow::bail!("--layer and --head go together to switch a head off (or give neither)"),
    };
    let query = query_token(&clean, args.query.as_deref())?;
    let row = clean.attention_row(layer, head, query)?;
    let board = clean.board_attention(layer, head, query)?;
    let timing = match args.timing {
        Some(n) if n > 0 => Some(time_both(&mut inspector, &state, &package, options, n)?),
        _ => None,
    };
    if args.json {
        let out = json!({
            "model": package.manifest.name,
            "game": clean.game.name(),
            "position": state.mav_fen().unwrap_or_else(|| state.mav_state()),
            "layers": layers,
            "heads": heads,
            "attention_move": clean.attention_move.and_then(|i| clean.moves.get(i)).map(|m| m.text.clone()),
            "tokens": clean.tokens.iter().enumerate().map(|(i, t)| json!({
                "index": i, "text": t.text, "role": role_text(&t.role),
            })).collect::<Vec<_>>(),
            "attention": {
                "layer": layer, "head": head, "query_token": query,
                "query": role_text(&clean.tokens[query].role),
                "query_text": clean.tokens[query].text,
                "to_tokens": row,
                "to_cells": board.iter().map(|(c, p)| json!({ "cell": c.name, "p": p })).collect::<Vec<_>>(),
            },
            "head_off": ablated.as_ref().map(|_| json!({ "layer": layer, "head": head })),
            "moves": moves_json(&clean, ablated.as_ref()),
            "timing": {
                "first_inspection_ms": clean_ms,
                "onnx_run_ms": clean.run_time.as_secs_f64() * 1e3,
                "median_inspection_ms": timing.map(|t| t.0),
                "median_evaluation_ms": timing.map(|t| t.1),
                "runs": args.timing,
            },
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print_text(&clean, ablated.as_ref(), layer, head, query, &board, &package.manifest.name);
    outln!(
        "inspection: {clean_ms:.1} ms (first call; {:.1} ms inside ONNX Runtime)",
        clean.run_time.as_secs_f64() * 1e3
    );
    if let Some((i, e)) = timing {
        outln!(
            "median of {} runs: inspection {i:.2} ms, normal evaluation {e:.2} ms ({:.0} % of a 16.7 ms frame)",
            args.timing.unwrap_or(0),
            i / 16.7 * 100.0
        );
    }
    Ok(())
}

/// Every move's value, its readout after each layer, and its value with the head switched off, as JSON.
fn moves_json(clean: &Inspection, ablated: Option<&Inspection>) -> Vec<Value> {
    clean
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut v = json!({
                "move": m.text,
                "token": m.token,
                "mean": m.value.mean_value(),
                "max": m.value.max_value(),
                "mode_bucket": m.value.mode_bucket(),
                "layers": m.layers.iter().enumerate().map(|(l, d)| json!({
                    "layer": l, "mean": d.mean_value(), "max": d.max_value(), "mode_bucket": d.mode_bucket(),
                    "probs": d.probs(),
                })).collect::<Vec<_>>(),
            });
            if let Some(a) = ablated {
                let d = &a.moves[i].value;
                v["head_off"] =
                    json!({ "mean": d.mean_value(), "max": d.max_value(), "mode_bucket": d.mode_bucket() });
            }
            v
        })
        .collect()
}

fn print_text(
    clean: &Inspection,
    ablated: Option<&Inspection>,
    layer: usize,
    head: usize,
    query: usize,
    board: &[(mavboard::inference::inspect::BoardCell, f32)],
    model: &str,
) {
    outln!(
        "model {model}: {} layers x {} heads, {} tokens",
        clean.num_layers(),
        clean.num_heads(),
        clean.tokens.len()
    );
    let mut order: Vec<usize> = (0..clean.moves.len()).collect();
    order.sort_by(|&a, &b| clean.moves[b].value.mean_value().total_cmp(&clean.moves[a].value.mean_value()));
    let mut header = format!("{:<8}", "move");
    for l in 0..clean.num_layers() {
        header.push_str(&format!(" {:>6}", format!("L{l}")));
    }
    header.push_str(&format!(" {:>6} {:>6}", "max", "mode"));
    if ablated.is_some() {
        header.push_str(&format!("   {:>15} {:>6}", format!("L{layer}H{head} off mean"), "max"));
    }
    outln!("mean value after each layer (logit lens; the last is the model's output):");
    outln!("{header}");
    for &i in &order {
        let m = &clean.moves[i];
        let mut line = format!("{:<8}", m.text);
        for d in &m.layers {
            line.push_str(&format!(" {:>6.3}", d.mean_value()));
        }
        line.push_str(&format!(" {:>6.3} {:>6}", m.value.max_value(), m.value.mode_bucket()));
        if let Some(a) = ablated {
            let d = &a.moves[i].value;
            line.push_str(&format!("   {:>15.3} {:>6.3}", d.mean_value(), d.max_value()));
        }
        outln!("{line}");
    }
    let t = &clean.tokens[query];
    outln!(
        "attention of layer {layer} head {head} from token {query} ('{}', {}), in % per cell:",
        t.text,
        role_text(&t.role)
    );
    let width = board.iter().map(|(c, _)| c.col + 1).max().unwrap_or(0);
    let height = board.iter().map(|(c, _)| c.row + 1).max().unwrap_or(0);
    for row in (0..height).rev() {
        let mut line = format!("{:>3} ", row + 1);
        for col in 0..width {
            let p = board.iter().find(|(c, _)| c.col == col && c.row == row).map_or(0.0, |(_, p)| *p);
            line.push_str(&format!(" {:>5.1}", p * 100.0));
        }
        outln!("{line}");
    }
    let rest: f32 = 1.0 - board.iter().map(|(_, p)| p).sum::<f32>();
    match clean.attention_move.and_then(|i| clean.moves.get(i)) {
        None => {
            outln!("    (the other tokens: side, state fields, separator, moves: {:.1} %)", rest * 100.0)
        }
        Some(m) => outln!(
            "    (the other tokens: start, side, state fields, the action: {:.1} %; the sequence of {}, one of \
             {} the model runs, one per move)",
            rest * 100.0,
            m.text,
            clean.moves.len()
        ),
    }
}
