//! Internal-search examples (paper §4): linearized minimax traces over labelled search trees, written by
//! the protocol's trace writer ([`write_trace`]), never formatted here.
//!
//! A labelled position whose best moves' positions are labelled too (in its split, see
//! [`SearchIndex`]) roots traces of breadth 2 to the render's largest breadth (3 unless asked) and depth
//! 1–2, as far as the labels reach. The trace's
//! node calls use `%FEN` and `%top_all` with the 64 MAV buckets: the prompt `mavboard analyse --internal`
//! gives a model, so a model trained on these examples can be asked for its trace there. Values are the
//! labels' win probabilities (Lichess formula for centipawns, 1 or 0 for mates) as buckets; each node's
//! best action is its best-valued move, so a leaf's value is its best move's and an inner node's the best
//! of its children's values seen from its side: the minimax over the labels, in buckets.
//!
//! The paper subsampled its trees "to match the parameters while fitting into context size": a shape
//! whose trace is longer than the token budget is left out.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::record::Split;
use super::render::{LmExample, RenderError};
use super::search_index::SearchIndex;
use super::tree::MAX_SEARCH_DEPTH;
use crate::game::chess::ChessState;
use crate::mav::buckets::Buckets;
use crate::mav::command::{StateFormat, TopK};
use crate::mav::tokenizer::Tokenizer;
use crate::mav::trace::{TraceConfig, write_trace};

/// The (breadth, depth) shapes a root can give with the default largest breadth, smallest first.
pub const SEARCH_SHAPES: [(u32, u32); 4] = [(2, 1), (3, 1), (2, 2), (3, 2)];

/// The (breadth, depth) shapes of breadth 2 to `max_breadth` and depth 1 to [`MAX_SEARCH_DEPTH`]: depth 1
/// first, then depth 2, each by breadth (so [`super::render::DEFAULT_SEARCH_MAX_BREADTH`] gives
/// [`SEARCH_SHAPES`], in that order).
pub fn search_shapes(max_breadth: u32) -> Vec<(u32, u32)> {
    (1..=MAX_SEARCH_DEPTH).flat_map(|d| (2..=max_breadth).map(move |b| (b, d))).collect()
}

/// The trace parameters of one shape (`%FEN`, `%top_all`, 64 buckets).
pub fn trace_config(breadth: u32, depth: u32) -> TraceConfig {
    TraceConfig { breadth, depth, state_format: StateFormat::Fen, top: TopK::All, buckets: Buckets::mav() }
}

/// The tokens a trainer sees for an example: prompt, target and `<eos>`.
pub fn example_tokens(tokenizer: &Tokenizer, ex: &LmExample) -> usize {
    tokenizer.encode(&ex.prompt).len() + tokenizer.encode(&ex.target).len() + 1
}

/// One trace of [`search_examples`].
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The example.
    pub example: LmExample,
    /// Its tokens (prompt + target + `<eos>`).
    pub tokens: usize,
    /// Its (breadth, depth).
    pub shape: (u32, u32),
}

/// What [`search_examples`] wrote for one root, and what it left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchRender {
    /// The traces written.
    pub examples: Vec<Trace>,
    /// Shapes whose labels were all there but whose trace exceeded the token budget, with its tokens.
    pub too_long: Vec<((u32, u32), usize)>,
}

/// Where a search trace is rooted: the position, the split it belongs to, and the kind of source it came
/// from (written beside each example).
#[derive(Debug, Clone, Copy)]
pub struct TraceRoot<'a> {
    /// The root position.
    pub state: &'a ChessState,
    /// Its train/validation split.
    pub split: Split,
    /// The example's source kind.
    pub source: &'static str,
}

/// The limits of [`search_examples`]: the shapes to try and the longest trace.
#[derive(Debug, Clone, Copy)]
pub struct TraceLimits<'a> {
    /// The (breadth, depth) shapes a root may give ([`search_shapes`]).
    pub shapes: &'a [(u32, u32)],
    /// The longest trace, in tokens (prompt + target + `<eos>`).
    pub max_tokens: usize,
    /// The most traces written for the root.
    pub count: usize,
}

/// Up to `limits.count` traces rooted at `root`, one per shape of `limits.shapes` the labels allow, shapes
/// drawn in random order from `rng`, each at most `limits.max_tokens` long. A shape needs at least
/// `breadth` legal moves at the root.
pub fn search_examples(
    index: &SearchIndex,
    root: TraceRoot<'_>,
    tokenizer: &Tokenizer,
    limits: TraceLimits<'_>,
    rng: &mut ChaCha8Rng,
) -> Result<SearchRender, RenderError> {
    let TraceRoot { state: root, split, source } = root;
    let TraceLimits { shapes, max_tokens, count: limit } = limits;
    let mut out = SearchRender::default();
    let moves = index.moves_of(root).unwrap_or(0);
    let mut shapes = shapes.to_vec();
    shapes.shuffle(rng);
    for (breadth, depth) in shapes {
        if out.examples.len() >= limit {
            break;
        }
        if moves < breadth as usize {
            continue;
        }
        let Some(tree) = index.tree(root, split, breadth, depth) else { continue };
        let example = write_trace(&tree, &trace_config(breadth, depth))
            .map_err(|e| RenderError::Label { fen: root.fen(), reason: format!("its trace: {e}") })?;
        let ex = LmExample { prompt: example.prompt(), target: example.response(), kind: "search", source };
        let tokens = example_tokens(tokenizer, &ex);
        if tokens > max_tokens {
            out.too_long.push(((breadth, depth), tokens));
            continue;
        }
        out.examples.push(Trace { example: ex, tokens, shape: (breadth, depth) });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::datagen::record::{LabelRecord, MoveLabel};
    use crate::datagen::render::DEFAULT_SEARCH_MAX_BREADTH;
    use crate::datagen::score::LabelScore;
    use crate::game::GameState;
    use crate::game::fen::ModeChoice;
    use crate::mav::trace::parse_trace;

    /// Labels `state` with every move at −20·(its index) cp, in `split`.
    fn record(state: &ChessState, split: Split) -> LabelRecord {
        let moves: Vec<MoveLabel> = state
            .legal_actions()
            .into_iter()
            .enumerate()
            .map(|(i, a)| MoveLabel { uci: state.action_to_text(a), score: LabelScore::Cp(-20 * i as i32) })
            .collect();
        LabelRecord {
            game: crate::datagen::record::LabelGame::Chess,
            fen: state.fen(),
            chess960: false,
            best: moves[0].uci.clone(),
            moves,
            depth: 1,
            nodes: 1,
            source: "t".into(),
            ply: 0,
            split,
            search_path: Vec::new(),
        }
    }

    /// Indexes `root` and its tree of `breadth` × `depth` (the first moves are the best).
    fn index_tree(index: &mut SearchIndex, s: &ChessState, breadth: usize, depth: u32) {
        index.add(&record(s, Split::Train)).expect("label");
        if depth == 0 {
            return;
        }
        for a in s.legal_actions().into_iter().take(breadth) {
            index_tree(index, &s.play(a).expect("legal"), breadth, depth - 1);
        }
    }

    /// `fen` as a standard chess position.
    fn position(fen: &str) -> ChessState {
        ChessState::from_fen_mode(fen, ModeChoice::Standard).expect("fen")
    }

    /// An index holding `root`'s tree of `breadth` × `depth`.
    fn tree_index(root: &ChessState, breadth: usize, depth: u32) -> SearchIndex {
        let mut index = SearchIndex::new();
        index_tree(&mut index, root, breadth, depth);
        index
    }

    /// The traces of `root` (a book position of `split`) within `limits`.
    fn traces(
        index: &SearchIndex,
        root: &ChessState,
        split: Split,
        limits: TraceLimits<'_>,
        rng: &mut ChaCha8Rng,
    ) -> SearchRender {
        let root = TraceRoot { state: root, split, source: "book" };
        search_examples(index, root, &Tokenizer::new(), limits, rng).expect("ok")
    }

    #[test]
    fn shapes_follow_the_labels_and_the_token_budget() {
        let root = position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let tok = Tokenizer::new();
        let index = tree_index(&root, 2, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let all = |max_tokens, count| TraceLimits { shapes: &SEARCH_SHAPES, max_tokens, count };
        let r = traces(&index, &root, Split::Train, all(100_000, 4), &mut rng);
        assert_eq!(r.examples.len(), 1, "only breadth 2, depth 1 is labelled");
        let Trace { example: ex, tokens, shape } = &r.examples[0];
        assert_eq!(*shape, (2, 1));
        assert_eq!(ex.kind, "search");
        assert!(ex.prompt.starts_with("Minimax breadth=2 depth=1\nEvaluation for node: <root>\n"));
        assert!(ex.prompt.contains("%FEN") && ex.prompt.contains("%top_all"), "{}", ex.prompt);
        assert_eq!(*tokens, example_tokens(&tok, ex));
        let text = format!("{}{}", ex.prompt, ex.target);
        let parsed = parse_trace::<ChessState>(&text, Buckets::mav()).expect("parses");
        assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
        // A budget below its length leaves it out, counted.
        let r = traces(&index, &root, Split::Train, all(tokens - 1, 4), &mut rng);
        assert!(r.examples.is_empty());
        assert_eq!(r.too_long, [((2, 1), *tokens)]);
        // The full depth-2 tree gives all four shapes, in an order drawn from the seed, up to the limit.
        let index = tree_index(&root, 3, 2);
        let shapes = |seed, limit| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            traces(&index, &root, Split::Train, all(100_000, limit), &mut rng)
                .examples
                .into_iter()
                .map(|t| t.example.prompt.lines().next().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        };
        let first = shapes(1, 4);
        assert_eq!(first.len(), 4);
        assert_eq!(first, shapes(1, 4));
        assert_eq!(shapes(1, 2), first[..2]);
        assert!(first.contains(&"Minimax breadth=3 depth=2".to_owned()));
        // Nothing in the other split.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(traces(&index, &root, Split::Val, all(100_000, 4), &mut rng).examples.is_empty());
    }

    #[test]
    fn a_larger_breadth_adds_its_shapes_and_a_breadth_four_tree_gives_them_all() {
        assert_eq!(search_shapes(DEFAULT_SEARCH_MAX_BREADTH), SEARCH_SHAPES);
        let four = search_shapes(4);
        assert_eq!(four, [(2, 1), (3, 1), (4, 1), (2, 2), (3, 2), (4, 2)]);
        let root = position("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
        let limits = TraceLimits { shapes: &four, max_tokens: 100_000, count: four.len() };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let r = traces(&tree_index(&root, 4, 2), &root, Split::Train, limits, &mut rng);
        let mut got: Vec<_> = r.examples.iter().map(|t| t.shape).collect();
        got.sort_by_key(|&(b, d)| (d, b));
        assert_eq!(got, four);
        for t in &r.examples {
            let text = format!("{}{}", t.example.prompt, t.example.target);
            let parsed = parse_trace::<ChessState>(&text, Buckets::mav()).expect("parses");
            assert!(parsed.issues.is_empty(), "{:?}: {:?}", t.shape, parsed.issues);
            assert!(
                t.example.prompt.starts_with(&format!("Minimax breadth={} depth={}\n", t.shape.0, t.shape.1))
            );
        }
        // A breadth-3 tree gives no breadth-4 shape.
        let r = traces(&tree_index(&root, 3, 2), &root, Split::Train, limits, &mut rng);
        assert_eq!(r.examples.len(), 4);
        assert!(r.examples.iter().all(|t| t.shape.0 <= 3));
    }
}
