//! `mavboard analyse`: the model's view of one position (every move's value distribution, max vs mean
//! scoring), optionally followed by an MCTS search or an internal search, or set beside a second model's
//! view (`--compare`). Chess (`--fen`), Connect Four and Hex (`--game` with `--moves`).

use std::path::PathBuf;

use anyhow::Context;
use mavboard::eval::compare::ranks;
use mavboard::game::GameKind;
use mavboard::game::connect_four::ConnectFourState;
use mavboard::game::hex::HexState;
use mavboard::inference::evaluator::{DecodeMode, EvalRequest, EvalResult, Evaluator, Scoring, TopK};
use mavboard::inference::onnx::SessionOptions;
use mavboard::inference::policy_value::PolicyAndValue;
use mavboard::inference::{LoadedModel, load_evaluator, load_evaluator_for};
use mavboard::mav::state::MavState;
use mavboard::model::package::default_package_dir;
use mavboard::search::mcts::driver::RunLimits;
use mavboard::search::mcts::params::{MctsParams, PriorSource, VirtualCounts, WorldModel};
use mavboard::search::mcts::search::Mcts;
use mavboard::search::mcts::snapshot::MctsSnapshot;

use super::choice::{DecodeArg, WorldArg};
use super::position::{Position, PositionArgs};

/// Arguments of `mavboard analyse`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    position: PositionArgs,
    /// The model package folder [default: the shipped mav-enc-tiny].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Moves to list: a number or `all`.
    #[arg(long, default_value = "all")]
    k: String,
    /// Also run MAV-MCTS with this many simulations.
    #[arg(long)]
    sims: Option<u64>,
    /// MCTS batch size b.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// With --sims: where the search's prior comes from — `values` (the paper's Eq. 1) or `policy` (the
    /// model's best-action probabilities, or --policy's).
    #[arg(long, default_value_t = PriorSource::Values)]
    prior: PriorSource,
    /// With --sims: a policy package (e.g. a behavioral-cloning import) whose move probabilities are the
    /// search's prior, while --model gives the values it backs up (AlphaZero's split); implies --prior
    /// policy.
    #[arg(long, value_name = "DIR")]
    policy: Option<PathBuf>,
    /// MCTS world model: `rules` (the rules play the moves) or `learned` (the model predicts the next
    /// state, its moves and the end of the game; a `mav-lm` package is needed).
    #[arg(long, value_enum, default_value_t = WorldArg::Rules)]
    world: WorldArg,
    /// MCTS virtual counts: `fixed:N` or `dynamic:NMAX,NMIN` [default: the paper's dynamic counts for the
    /// budget, n_max 8/16/32 and n_min 2].
    #[arg(long = "virtual")]
    virtual_counts: Option<String>,
    /// The scoring rule that ranks the moves and drives the search's prior and values: max, mean,
    /// quantile:Q (0 < Q < 1) or mean-sd:L (the mean less L standard deviations).
    #[arg(long, default_value_t = Scoring::Mean)]
    scoring: Scoring,
    /// Text models: `constrained` (the rules give the moves) or `free` (the model writes everything; its
    /// output and hallucinations are printed).
    #[arg(long = "mode", alias = "decode", value_enum, default_value_t = DecodeArg::Constrained)]
    decode: DecodeArg,
    /// ONNX Runtime library to use.
    #[arg(long)]
    ort_lib: Option<PathBuf>,
    /// Internal search (paper §4) with breadth b and depth d, e.g. `2,1`: the explicit minimax over the
    /// model (its trace, tree and choice) and, when the package was trained for it, the model's own trace.
    #[arg(long, value_name = "b,d")]
    internal: Option<String>,
    /// How a trace-writing model decodes its trace with --internal: `on` keeps it from listing a move twice
    /// on one line (moves of one token: chess, Connect Four; small models loop otherwise), `off` is plain
    /// greedy decoding.
    #[arg(long, value_enum, default_value_t = super::internal::RepeatGuard::On)]
    repeat_guard: super::internal::RepeatGuard,
    /// How a trace-writing model writes its trace with --internal: `free` (it writes every move and state:
    /// its world model shows) or `rules` (every move legal where it stands, states by the rules; the values,
    /// backups and choices stay the model's).
    #[arg(long, default_value_t = mavboard::inference::completer::TraceDecoding::Free)]
    trace_decoding: mavboard::inference::completer::TraceDecoding,
    /// A second model package to set beside the first: each move's value under --scoring from both, their
    /// ranks, and a mark where they disagree (best move, or values more than --margin apart).
    #[arg(long, value_name = "DIR")]
    compare: Option<PathBuf>,
    /// With --compare: the largest gap between the two models' values of a move, in percentage points of
    /// win probability, that is not marked.
    #[arg(long, default_value_t = 100.0 * mavboard::eval::compare::DEFAULT_MARGIN)]
    margin: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `mavboard analyse`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let position = args.position.position()?;
    let dir = match &args.model {
        Some(d) => d.clone(),
        None => default_package_dir()?,
    };
    let options = SessionOptions { ort_lib: args.ort_lib.clone(), ..SessionOptions::default() };
    match position {
        Position::Chess(state) => analyse(state, GameKind::Chess, &dir, &options, &args, load_evaluator),
        Position::ConnectFour(state) => {
            analyse(state, GameKind::ConnectFour, &dir, &options, &args, |dir, options| {
                load_evaluator_for::<ConnectFourState>(dir, options, GameKind::ConnectFour)
            })
        }
        Position::Hex(state) => analyse(state, GameKind::Hex, &dir, &options, &args, |dir, options| {
            load_evaluator_for::<HexState>(dir, options, GameKind::Hex)
        }),
    }
}

/// Opens a model package as an evaluator of one game's positions.
type Opener<S> =
    fn(&std::path::Path, &SessionOptions) -> Result<LoadedModel<S>, mavboard::inference::LoadError>;

fn analyse<S: MavState>(
    state: S,
    game: GameKind,
    dir: &std::path::Path,
    options: &SessionOptions,
    args: &Args,
    open: Opener<S>,
) -> anyhow::Result<()> {
    let top_k = if args.k == "all" {
        TopK::All
    } else {
        TopK::Count(args.k.parse().with_context(|| format!("--k {} is neither a number nor `all`", args.k))?)
    };
    let scoring = args.scoring;
    let mode = DecodeMode::from(args.decode);
    if let Some(spec) = &args.internal {
        let request = super::internal::InternalRequest {
            spec,
            scoring,
            repeat_guard: args.repeat_guard,
            decoding: args.trace_decoding,
            json: args.json,
        };
        return super::internal::run(state, game, dir, options, request);
    }
    let mut request = EvalRequest::values(state.clone());
    request.top_k = top_k;
    request.want_best_action = true;
    request.mode = mode;
    anyhow::ensure!(
        args.sims.is_some() || (args.policy.is_none() && args.prior == PriorSource::Values),
        "--prior and --policy set the prior of a search: give --sims too"
    );
    if let Some(other) = &args.compare {
        anyhow::ensure!(
            args.sims.is_none() && mode == DecodeMode::Constrained && top_k == TopK::All,
            "--compare sets two models' values of every move side by side; run --sims, --mode free or --k \
             without it"
        );
        anyhow::ensure!(
            args.margin.is_finite() && (0.0..=100.0).contains(&args.margin),
            "--margin {} must be a number of percentage points from 0 to 100",
            args.margin
        );
        let a = value_moves(dir, options, open, &request).context("model A (--model)")?;
        let b = value_moves(other, options, open, &request).context("model B (--compare)")?;
        return print_comparison(&state, &a, &b, scoring, args.margin / 100.0, args.json);
    }
    let LoadedModel { mut evaluator, package, .. } = open(dir, options)?;
    let result = evaluator
        .evaluate(std::slice::from_ref(&request))
        .pop()
        .context("the evaluator returned no result")??;
    if !result.has_values() && result.terminal.is_none() {
        return print_policy(&state, &package.manifest.name, &result, args.json);
    }
    let scored = Scored::of(&result, scoring);
    let snapshot = match args.sims {
        Some(n) => Some(search(&state, n, args, evaluator, open, options)?),
        None => None,
    };
    if args.json {
        return print_json(&state, &package.manifest.name, &result, &scored, snapshot);
    }
    outln!("position  {}", state.to_text());
    outln!("model     {} ({}, {})", package.manifest.name, package.manifest.format.name(), dir.display());
    if let Some(o) = result.terminal {
        outln!("the game is over: {o} ({:?})", o.reason());
        return Ok(());
    }
    print_table(&result, &scored);
    if mode == DecodeMode::Free {
        outln!("\nthe model wrote:\n{}", result.raw_text);
        if result.hallucinations.is_empty() {
            outln!("(no hallucinations)");
        }
        for h in &result.hallucinations {
            outln!("hallucination: {} — {}", h.kind, h.detail);
        }
    }
    if let Some(s) = snapshot {
        print_search(&s);
    }
    Ok(())
}

/// Every move's value and rank under each rule shown: the paper's two, and the chosen one when it is
/// another; the chosen one orders the table.
struct Scored {
    rules: Vec<Scoring>,
    /// Per rule, every move's value (NaN where the move has none).
    values: Vec<Vec<f64>>,
    /// Per rule, every move's rank.
    ranks: Vec<Vec<usize>>,
    /// The chosen rule's index.
    chosen: usize,
}

impl Scored {
    fn of<S: MavState>(result: &EvalResult<S>, scoring: Scoring) -> Scored {
        let mut rules = vec![Scoring::Max, Scoring::Mean];
        if !rules.contains(&scoring) {
            rules.push(scoring);
        }
        let values: Vec<Vec<f64>> = rules
            .iter()
            .map(|r| result.moves.iter().map(|m| m.value(*r).unwrap_or(f64::NAN)).collect())
            .collect();
        let ranks: Vec<Vec<usize>> = values.iter().map(|v| ranks(v)).collect();
        let chosen = rules.iter().position(|&r| r == scoring).unwrap_or(1);
        Scored { rules, values, ranks, chosen }
    }
}

/// `--sims N`: MCTS from `state` on the model (the value side) and, with `--policy`, another model's prior.
fn search<S: MavState>(
    state: &S,
    n: u64,
    args: &Args,
    mut evaluator: Box<dyn Evaluator<S> + Send>,
    open: Opener<S>,
    options: &SessionOptions,
) -> anyhow::Result<MctsSnapshot> {
    let world_model = WorldModel::from(args.world);
    let virtual_counts = match args.virtual_counts.as_deref() {
        None => VirtualCounts::paper_dynamic(n),
        Some(text) => parse_virtual(text)?,
    };
    let prior_source = if args.policy.is_some() { PriorSource::Policy } else { args.prior };
    let params = MctsParams {
        scoring: args.scoring,
        world_model,
        virtual_counts,
        prior_source,
        ..MctsParams::default()
    };
    let mut mcts = Mcts::new(state.clone(), state.ply(), params)?;
    let limits = RunLimits { simulations: n, batch_size: args.batch.max(1) };
    match &args.policy {
        Some(p) => {
            let policy =
                open(p, options).with_context(|| format!("the policy (--policy {})", p.display()))?;
            let mut both = PolicyAndValue { value: evaluator, policy: policy.evaluator };
            mcts.run(&mut both, limits)?;
        }
        None => mcts.run(evaluator.as_mut(), limits)?,
    }
    Ok(mcts.snapshot())
}

/// `--json`: the position, every move's values, ranks and distribution, and the search.
fn print_json<S: MavState>(
    state: &S,
    model: &str,
    result: &EvalResult<S>,
    scored: &Scored,
    snapshot: Option<MctsSnapshot>,
) -> anyhow::Result<()> {
    let rules = &scored.rules;
    let moves: Vec<_> = result
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let by_rule = |v: &[Vec<f64>]| -> serde_json::Map<String, serde_json::Value> {
                rules.iter().zip(v).map(|(r, v)| (r.to_string(), serde_json::json!(v[i]))).collect()
            };
            let rank_by_rule: serde_json::Map<String, serde_json::Value> =
                rules.iter().zip(&scored.ranks).map(|(r, k)| (r.to_string(), serde_json::json!(k[i]))).collect();
            serde_json::json!({
                "move": m.text, "values": by_rule(&scored.values), "ranks": rank_by_rule,
                "best_prob": result.best_action.as_ref().map(|b| b[i]), "distribution": m.dist.as_ref().map(|d| d.probs()),
            })
        })
        .collect();
    let out = serde_json::json!({
        "fen": state.to_text(), "model": model, "terminal": result.terminal.map(|o| o.result_str()),
        "moves": moves, "search": snapshot, "raw_text": result.raw_text,
        "hallucinations": result.hallucinations.iter().map(|h| serde_json::json!({"kind": h.kind, "detail": h.detail})).collect::<Vec<_>>(),
    });
    outln!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The moves' table: values, then ranks, one column per rule (with the default rules, `move max % mean %
/// rank max rank mean`), the model's best-move probability, and `≠` where the rules rank a move differently.
fn print_table<S: MavState>(result: &EvalResult<S>, scored: &Scored) {
    let Scored { rules, values, ranks, chosen } = scored;
    let value_heads: Vec<String> = rules.iter().map(|r| format!("{r} %")).collect();
    let rank_heads: Vec<String> = rules.iter().map(|r| format!("rank {r}")).collect();
    let mut head = format!("\n{:<8}", "move");
    for h in value_heads.iter().chain(&rank_heads) {
        head.push_str(&format!(" {h:>7}"));
    }
    outln!("{head} {:>7}", "best %");
    let mut order: Vec<usize> = (0..result.moves.len()).collect();
    order.sort_by_key(|&i| ranks[*chosen][i]);
    for i in order {
        let best = result.best_action.as_ref().map_or(String::from("-"), |b| format!("{:.1}", 100.0 * b[i]));
        let flag = if ranks.iter().any(|k| k[i] != ranks[*chosen][i]) { "  ≠" } else { "" };
        let mut line = format!("{:<8}", result.moves[i].text);
        for (v, h) in values.iter().zip(&value_heads) {
            line.push_str(&format!(" {:>w$.1}", 100.0 * v[i], w = h.chars().count().max(7)));
        }
        for (k, h) in ranks.iter().zip(&rank_heads) {
            line.push_str(&format!(" {:>w$}", k[i], w = h.chars().count().max(7)));
        }
        outln!("{line} {best:>7}{flag}");
    }
    let names: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
    outln!("(ordered by {} scoring; ≠: {} rank the move differently)", rules[*chosen], names.join(", "));
}

/// The search's summary and its most visited moves.
fn print_search(s: &MctsSnapshot) {
    outln!(
        "\nMCTS {} simulations, {} model calls: best {} value {}",
        s.totals.stats.simulations,
        s.totals.stats.model_calls,
        s.best.as_deref().unwrap_or("-"),
        s.value.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v))
    );
    outln!("{:<8} {:>7} {:>7} {:>7} {:>7}  pv", "move", "visits", "share%", "Q %", "prior%");
    let mut moves = s.moves.clone();
    moves.sort_by_key(|m| std::cmp::Reverse(m.visits));
    for m in moves.iter().take(12) {
        outln!(
            "{:<8} {:>7} {:>7.1} {:>7} {:>7.1}  {}",
            m.action,
            m.visits,
            100.0 * m.visit_share,
            m.q.map_or("-".into(), |q| format!("{:.1}", 100.0 * q)),
            100.0 * m.prior,
            m.pv.join(" ")
        );
    }
}

/// A model's answer to `request`, with its package (for the comparison's headings).
struct Valued<S: MavState> {
    package: mavboard::model::ModelPackage,
    result: mavboard::inference::evaluator::EvalResult<S>,
}

/// Opens the package in `dir` and values `request`'s moves.
fn value_moves<S: MavState>(
    dir: &std::path::Path,
    options: &SessionOptions,
    open: Opener<S>,
    request: &EvalRequest<S>,
) -> anyhow::Result<Valued<S>> {
    let LoadedModel { mut evaluator, package, .. } = open(dir, options)?;
    let result = evaluator
        .evaluate(std::slice::from_ref(request))
        .pop()
        .context("the evaluator returned no result")??;
    Ok(Valued { package, result })
}

/// Prints two models' values of every move side by side (see [`mavboard::eval::compare`]).
fn print_comparison<S: MavState>(
    state: &S,
    a: &Valued<S>,
    b: &Valued<S>,
    scoring: Scoring,
    margin: f64,
    json: bool,
) -> anyhow::Result<()> {
    let c = mavboard::eval::compare::compare(&a.result, &b.result, scoring, margin);
    let about = |v: &Valued<S>| {
        serde_json::json!({
            "model": v.package.manifest.name,
            "format": v.package.manifest.format.name(),
            "dir": v.package.dir.display().to_string(),
        })
    };
    if json {
        let out = serde_json::json!({
            "fen": state.to_text(),
            "terminal": a.result.terminal.map(|o| o.result_str()),
            "a": about(a),
            "b": about(b),
            "comparison": c,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("position  {}", state.to_text());
    for (label, v) in [("model A", a), ("model B", b)] {
        let m = &v.package.manifest;
        outln!("{label}   {} ({}, {})", m.name, m.format.name(), v.package.dir.display());
    }
    if let Some(o) = a.result.terminal {
        outln!("the game is over: {o} ({:?})", o.reason());
        return Ok(());
    }
    // A policy (no values) shows its probabilities: `A prob %`.
    let head = |who: &str, values: bool| if values { format!("{who} %") } else { format!("{who} prob %") };
    outln!(
        "\n{:<8} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "move",
        head("A", c.a_values),
        head("B", c.b_values),
        "B−A",
        "rank A",
        "rank B"
    );
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}", 100.0 * v));
    let rank = |r: Option<usize>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
    for m in &c.moves {
        outln!(
            "{:<8} {:>9} {:>9} {:>7} {:>7} {:>7}{}",
            m.text,
            pct(m.a),
            pct(m.b),
            m.gap.map_or_else(|| "-".to_owned(), |g| format!("{:+.1}", 100.0 * g)),
            rank(m.rank_a),
            rank(m.rank_b),
            if m.disagree { "  ≠" } else { "" }
        );
    }
    outln!(
        "({scoring} scoring; ≠: the best move of one model only, a move one model did not value, or values more \
         than {:.1} points apart)",
        100.0 * margin
    );
    let best = |m: &Option<String>| m.clone().unwrap_or_else(|| "-".to_owned());
    outln!(
        "best move: A {}, B {}{}",
        best(&c.best_a),
        best(&c.best_b),
        if c.best_differs { " — they differ" } else { " — they agree" }
    );
    Ok(())
}

/// Reads `fixed:N` or `dynamic:NMAX,NMIN`.
fn parse_virtual(text: &str) -> anyhow::Result<VirtualCounts> {
    let bad =
        || anyhow::anyhow!("--virtual must be fixed:N or dynamic:NMAX,NMIN (e.g. dynamic:8,2), not '{text}'");
    let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
    match kind {
        "fixed" => Ok(VirtualCounts::Fixed(rest.trim().parse().map_err(|_| bad())?)),
        "dynamic" => {
            let (a, b) = rest.split_once(',').ok_or_else(bad)?;
            let (n_max, n_min) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            Ok(VirtualCounts::Dynamic { n_max, n_min })
        }
        _ => Err(bad()),
    }
}

/// The table of a model that gives a policy and no values (behavioural cloning): each move's probability,
/// most likely first.
fn print_policy<S: MavState>(
    state: &S,
    model: &str,
    result: &mavboard::inference::evaluator::EvalResult<S>,
    json: bool,
) -> anyhow::Result<()> {
    let probs = result.ranking_scores(Scoring::Mean);
    let mut order: Vec<usize> = (0..result.moves.len()).collect();
    order.sort_by(|&a, &b| probs[b].unwrap_or(0.0).total_cmp(&probs[a].unwrap_or(0.0)));
    if json {
        let moves: Vec<_> = order
            .iter()
            .map(|&i| serde_json::json!({"move": result.moves[i].text, "probability": probs[i]}))
            .collect();
        let out = serde_json::json!({
            "fen": state.to_text(), "model": model, "values": false, "moves": moves,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("position  {}", state.to_text());
    outln!("model     {model} (a policy: move probabilities, no values)");
    outln!("\n{:<8} {:>7}", "move", "prob %");
    for i in order {
        let p = probs[i].map_or_else(|| "-".to_owned(), |p| format!("{:.1}", 100.0 * p));
        outln!("{:<8} {p:>7}", result.moves[i].text);
    }
    outln!(
        "(most likely first; this model gives no win probabilities, so max and mean scoring do not apply)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_counts_are_read_or_refused_with_the_syntax() {
        assert_eq!(parse_virtual("fixed:3").expect("fixed"), VirtualCounts::Fixed(3));
        assert_eq!(
            parse_virtual("dynamic:8,2").expect("dynamic"),
            VirtualCounts::Dynamic { n_max: 8, n_min: 2 }
        );
        for bad in ["fixed", "fixed:x", "dynamic:8", "other:1"] {
            let e = parse_virtual(bad).expect_err(bad).to_string();
            assert!(e.contains("fixed:N or dynamic:NMAX,NMIN"), "{e}");
        }
    }
}
