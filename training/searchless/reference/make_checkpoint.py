"""Creates a random-weight searchless action-value (or, with KIND=sv, state-value; KIND=bc, behavioural-cloning) checkpoint with the authors' own code (their transformer,
initialisation and checkpoint manager), reads it back with their loader, and writes their predictor's bucket
log-probabilities for every legal move of >= 100 positions (OUT_REF_PREFIX.json: FENs and moves in their
order; OUT_REF_PREFIX.f32: the rows, little-endian float32, 128 per move).

Run from a folder holding their repository as a package (searchless_chess/src/...), never from this one:
    PYTHONPATH=/tmp/slref python make_checkpoint.py OUT_CKPT_DIR OUT_REF_PREFIX LAYERS WIDTH HEADS [SEED]
NO_REF=1 saves the checkpoint only (for the benchmark shapes); WITH_OPT=1 also saves an optimiser state.
KIND=sv makes a state-value checkpoint (the same transformer; their engines feed it the FEN alone) and writes,
per legal move, their StateValueEngine's `next_log_probs` (the successor's bucket log-probabilities, flipped
to the mover's side), through their own engine class and predict-function wrapper. KIND=bc makes a
behavioural-cloning checkpoint (a head of 1968 actions, as their train.py builds it) and writes, per position,
their BCEngine's `log_probs` (one log-probability per legal move, renormalised over the legal moves), as one
row of as many float32 as the position has legal moves.
The fixture tests/fixtures/searchless/tiny was made with `tiny ... 2 32 4` (seed 7), the 9M-shape check
with `9M ... 8 256 8 11`, tests/fixtures/searchless/tiny_state_value with KIND=sv and `... 2 32 4 5`,
tests/fixtures/searchless/tiny_behavioral_cloning with KIND=bc and `... 2 32 4 9`."""
import json, os, sys, shutil, random
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
import numpy as np
import jax, jax.random as jrandom
import chess, chess.pgn
import optax
from searchless_chess.src import transformer, tokenizer, utils, training_utils
from searchless_chess.src.engines import engine as sl_engine
from searchless_chess.src.engines import neural_engines

KIND = os.environ.get("KIND", "av")

out, ref, L, D, H = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
seed = int(sys.argv[6]) if len(sys.argv) > 6 else 7
cfg = transformer.TransformerConfig(
    vocab_size=utils.NUM_ACTIONS, output_size=utils.NUM_ACTIONS if KIND == "bc" else 128,
    pos_encodings=transformer.PositionalEncodings.LEARNED,
    max_sequence_length=tokenizer.SEQUENCE_LENGTH + 2,
    num_heads=H, num_layers=L, embedding_dim=D,
    apply_post_ln=True, apply_qk_layernorm=False, use_causal_mask=False)
pred = transformer.build_transformer_predictor(config=cfg)
params = pred.initial_params(rng=jrandom.PRNGKey(seed), targets=np.ones((1, 1), dtype=np.uint32))
ema = jax.tree_util.tree_map(lambda x: x * 0.5, params)
opt = optax.adam(1e-4).init(params)
shutil.rmtree(out, ignore_errors=True)
mgr = training_utils.get_checkpoint_manager(ckpt_frequency=1, checkpoint_dir=os.path.abspath(out))
step = 1000
items = dict(params=params, params_ema=ema)
if os.environ.get("WITH_OPT"):
    items["opt_state"] = opt
mgr.save(step, items=items)
mgr.wait_until_finished()
# load back through the authors' loader
loaded = training_utils.load_parameters(params=pred.initial_params(rng=jrandom.PRNGKey(1), targets=np.ones((1, 1), dtype=np.uint32)), checkpoint_dir=os.path.abspath(out), step=-1)
predict = jax.jit(pred.predict)

if os.environ.get("NO_REF"):
    print("saved without reference outputs"); sys.exit(0)
# positions: from the repo's PGN fixtures plus special ones
rng = random.Random(3)
fens = []
for path in [os.path.join(REPO, "tests/fixtures/pgn/twic1599_sample_1MB.pgn"), os.path.join(REPO, "tests/fixtures/pgn/lichess_db_2025-05_sample_1MB.pgn")]:
    with open(path, encoding="utf-8", errors="replace") as f:
        games = 0
        while games < 55:
            g = chess.pgn.read_game(f)
            if g is None: break
            if g.errors or g.headers.get("Variant", "Standard") not in ("Standard", ""): continue
            b = g.board(); plies = []
            for mv in g.mainline_moves():
                b.push(mv); plies.append(b.copy())
            if not plies: continue
            games += 1
            pick = plies[rng.randrange(len(plies))]
            if not pick.is_game_over(): fens.append(pick.fen())
special = ["R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1",  # 218 legal moves
           "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
           "8/1P4k1/8/8/8/8/6p1/4K3 w - - 0 60",  # promotions
           "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # castling both ways
           "7k/8/8/8/8/8/1q6/K7 w - - 10 101",  # one legal move
           "k7/8/1Q6/8/8/8/8/7K b - - 0 1",  # stalemate: left out
           chess.STARTING_FEN]
for s in special:
    b = chess.Board(s)
    if b.legal_moves.count() > 0: fens.append(b.fen())
assert len(fens) >= 100, len(fens)
positions, rows = [], []
for fen in fens:
    b = chess.Board(fen)
    moves = sl_engine.get_ordered_legal_moves(b)
    acts = np.array([[utils.MOVE_TO_ACTION[m.uci()]] for m in moves], dtype=np.int32)
    st = np.stack([tokenizer.tokenize(b.fen()).astype(np.int32)] * len(moves))
    seqs = np.concatenate([st, acts, np.zeros((len(moves), 1), dtype=np.int32)], axis=1)
    if KIND == "bc":
        bc = neural_engines.BCEngine(
            predict_fn=neural_engines.wrap_predict_fn(predictor=pred, params=loaded, batch_size=32))
        lp = np.asarray(bc.analyse(b)["log_probs"])
        assert lp.shape == (len(moves),)
    elif KIND == "sv":
        _, values = utils.get_uniform_buckets_edges_values(128)
        sv = neural_engines.StateValueEngine(
            return_buckets_values=values,
            predict_fn=neural_engines.wrap_predict_fn(predictor=pred, params=loaded, batch_size=32))
        lp = np.asarray(sv.analyse(b)["next_log_probs"])
        assert lp.shape == (len(moves), 128)
    else:
        lp = np.asarray(predict(loaded, None, seqs))[:, -1]
    positions.append({"fen": b.fen(), "moves": [m.uci() for m in moves]})
    rows.append(lp.astype("<f4"))
allrows = np.concatenate(rows)
with open(ref + ".json", "w") as f:
    json.dump({"checkpoint": os.path.basename(out), "layers": L, "width": D, "heads": H, "buckets": 0 if KIND == "bc" else 128,
               "kind": KIND, "positions": positions}, f, indent=0)
allrows.tofile(ref + ".f32")
print("positions", len(positions), "rows", allrows.shape, "max moves", max(len(p["moves"]) for p in positions),
      "logprob range", float(allrows.min()), float(allrows.max()), "std", float(allrows.std()))
