"""Converts a searchless-chess action-value, state-value or behavioural-cloning checkpoint (Ruoss et al. 2024)
into mavboard's ONNX graph.

Run by `mavboard import searchless` (which writes mav.json and the model card around the graph); usable
alone:

    python import_searchless.py CHECKPOINT_DIR OUT.onnx [--step N] [--ema] [--heads H] [--kind av|sv|bc]

CHECKPOINT_DIR is what the authors' `checkpoints/download.sh` unpacks (e.g. `checkpoints/9M`): an orbax
CheckpointManager folder with one folder per step, each holding `params`, `params_ema` (and `opt_state`).
A step folder or its `params` folder is accepted too. The parameters are read with orbax, the library the
authors' own loader uses; nothing else of theirs is needed.

The kind of predictor is read from the head and the folder's name: a head of 1968 outputs is behavioural
cloning (a policy over their 1968 actions), a folder named like `9M_state_value` (their download.sh) holds a
state-value model, any other 128-bucket head an action-value model; `--kind` decides where the name does not
say (the two value predictors have the same shapes).

The graph reproduces their transformer (`transformer_decoder` with the configuration their engines use):
input `input_ids` [N, 78] int64 for action-value (the 77 FEN tokens and the action id, both in their
vocabulary) or [N, 77] for state-value and behavioural cloning (the FEN tokens alone, as their
`StateValueEngine` and `BCEngine` feed it), a zero
(BOS) token put in front as their right shift does, token embeddings times sqrt(width) plus the first 79
(78) of their learned positions, pre-LN blocks with bidirectional multi-head attention (no causal mask, no
QK-norm) and a SwiGLU MLP, a final LayerNorm, and a linear head read at the last position; output
`logits` [N, 128] holds the log-probabilities of the return buckets (log-softmax, as theirs), or for
behavioural cloning [N, 1968] the log-probabilities of the actions (their `BCEngine` renormalises the legal
ones; so does mavboard).

`--inspect INSPECT.onnx` also writes the inspection graph of an action-value model (the other kinds have
none; the option is then ignored) (the same weights; mavboard's
`inference::inspect` reads such graphs): an extra input `head_scale` [layers, heads] (float) multiplies each
head's output before the output projection (1 unchanged, 0 removed), and extra outputs `attention`
[N, layers, heads, 79, 79] (query, key; position 0 is the zero BOS token, then the 78 inputs), `residual`
[N, layers + 1, 79, width] (after the embedding and after each layer) and `lens_logits` [N, layers, 128]:
the final LayerNorm and head (log-softmax) applied at the last position after each layer, whose last
layer is `logits`. Every query position is computed in every layer (the plain graph skips all but the
last query in the last layer).

On success the script prints one JSON object on stdout (the configuration found); on failure it prints
`error: ...` on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings

NUM_ACTIONS = 1968
SEQ_LEN = 79  # BOS + 77 state tokens + the action
RETURN_BUCKETS = 128
# (layers, width) -> heads, for the published models (src/engines/constants.py of the authors' code).
# The kinds of predictor: the input length (state tokens, plus the action for action-value).
KINDS = {"av": 78, "sv": 77, "bc": 77}
PUBLISHED = {(8, 256): ("9M", 8), (8, 1024): ("136M", 8), (16, 1024): ("270M", 8), (4, 64): ("local", 4)}


class CheckpointError(Exception):
    """A checkpoint that is not a searchless action-value checkpoint."""


def fail(msg: str) -> None:
    raise CheckpointError(msg)


def find_params_dir(path: str, step: int | None, ema: bool) -> tuple[str, int | None]:
    """The folder holding the parameter tree, and its step (None when given a params folder directly)."""
    which = "params_ema" if ema else "params"
    if not os.path.isdir(path):
        fail(f"'{path}' is not a folder; expected the checkpoint folder unpacked by download.sh "
             "(e.g. checkpoints/9M)")
    if os.path.exists(os.path.join(path, "_METADATA")) or os.path.exists(os.path.join(path, "checkpoint")):
        return path, None
    if os.path.isdir(os.path.join(path, which)):
        base = os.path.basename(os.path.normpath(path))
        return os.path.join(path, which), int(base) if base.isdigit() else None
    steps = sorted(int(d) for d in os.listdir(path) if d.isdigit() and os.path.isdir(os.path.join(path, d)))
    if not steps:
        fail(f"'{path}' has no step folders (numbered folders with a '{which}' folder inside); expected an "
             "orbax CheckpointManager folder such as checkpoints/9M/ with 6400000/params")
    if step is None:
        step = steps[-1]
    elif step not in steps:
        fail(f"step {step} is not in '{path}'; the steps there are {', '.join(map(str, steps))}")
    params = os.path.join(path, str(step), which)
    if not os.path.isdir(params):
        fail(f"'{os.path.join(path, str(step))}' has no '{which}' folder")
    return params, step


def restore(params_dir: str) -> dict:
    try:
        import numpy as np
        import orbax.checkpoint as ocp
    except ImportError as e:  # the Python environment is not set up
        fail(f"the Python step cannot import {e.name}: install the importer's packages with "
             "`./packaging/dev.sh import-deps` (or pip install -r training/searchless/requirements.txt)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ocp.PyTreeCheckpointer().restore(os.path.abspath(params_dir))
        except Exception as e:  # orbax raises many kinds; all mean the same to the user
            fail(f"orbax could not read the checkpoint at '{params_dir}': {type(e).__name__}: {e}")
    flat = {}

    def walk(prefix: str, node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}/{k}" if prefix else str(k), v)
        else:
            flat[prefix] = np.asarray(node, dtype=np.float32)

    walk("", tree)
    return flat


def suffix(name: str, i: int) -> str:
    return name if i == 0 else f"{name}_{i}"


def shape_of(p: dict, key: str, want: tuple, what: str) -> "np.ndarray":
    if key not in p:
        near = sorted(k for k in p if k.split("/")[0].rsplit("_", 1)[0] == key.split("/")[0].rsplit("_", 1)[0])
        fail(f"the checkpoint has no '{key}' ({what}); found {', '.join(near[:6]) or 'nothing like it'}")
    a = p[key]
    if tuple(a.shape) != want:
        fail(f"'{key}' ({what}) has shape {list(a.shape)}, expected {list(want)}")
    return a


def read_config(p: dict, heads: int | None, source_name: str, kind: str | None = None) -> dict:
    if kind is not None and kind not in KINDS:
        fail(f"--kind {kind} is not a kind this importer converts; use av (action-value), sv (state-value) "
             "or bc (behavioural cloning)")
    if "embed/embeddings" not in p:
        fail("the checkpoint has no 'embed/embeddings' (token embeddings); found "
             f"{', '.join(sorted(p)[:8]) or 'no arrays'}: this is not a searchless-chess transformer")
    vocab, width = p["embed/embeddings"].shape
    if vocab != NUM_ACTIONS:
        fail(f"the token embedding has {vocab} rows, expected {NUM_ACTIONS} (the searchless vocabulary: the "
             "1968 actions, whose first ids the FEN characters share)")
    if "embed_1/embeddings" not in p:
        fail("the checkpoint has no learned positional embeddings ('embed_1/embeddings' [79, width]); "
             "the published models use learned positions (sinusoidal positions are not supported)")
    shape_of(p, "embed_1/embeddings", (SEQ_LEN, width), "learned positions over 77 + 2 tokens")
    layers = 0
    while any(k.startswith(suffix("multi_head_dot_product_attention", layers) + "/") for k in p):
        layers += 1
    if layers == 0:
        fail("the checkpoint has no attention layers ('multi_head_dot_product_attention/...')")
    if any("/layer_norm" in k for k in p if k.startswith("multi_head_dot_product_attention")):
        fail("the attention layers have QK layer norms (apply_qk_layernorm=True); the published models do "
             "not, and this importer does not convert them")
    ffn = 4 * width
    for i in range(layers):
        att = suffix("multi_head_dot_product_attention", i)
        for j in range(4):
            shape_of(p, f"{suffix(att + '/linear', j)}/w", (width, width), f"layer {i} attention projection {j}")
        for j in range(2):
            ln = suffix("layer_norm", 2 * i + j)
            shape_of(p, f"{ln}/scale", (width,), f"layer {i} layer norm {j}")
            shape_of(p, f"{ln}/offset", (width,), f"layer {i} layer norm {j}")
        shape_of(p, f"{suffix('linear', 3 * i)}/w", (width, ffn), f"layer {i} MLP gate")
        shape_of(p, f"{suffix('linear', 3 * i + 1)}/w", (width, ffn), f"layer {i} MLP up")
        shape_of(p, f"{suffix('linear', 3 * i + 2)}/w", (ffn, width), f"layer {i} MLP down")
    final_ln = suffix("layer_norm", 2 * layers)
    shape_of(p, f"{final_ln}/scale", (width,), "final layer norm")
    head = suffix("linear", 3 * layers)
    if f"{head}/w" not in p:
        fail(f"the checkpoint has no output head '{head}/w' after its {layers} layers")
    out = p[f"{head}/w"].shape[1]
    if out not in (RETURN_BUCKETS, NUM_ACTIONS):
        fail(f"the output head has {out} outputs, expected {RETURN_BUCKETS} return buckets (action-value, "
             f"state-value) or {NUM_ACTIONS} actions (behavioural cloning)")
    if kind is None:
        # The head decides behavioural cloning; the folder's name tells the two value predictors apart.
        kind = "bc" if out == NUM_ACTIONS else "sv" if "state_value" in source_name else "av"
    if (kind == "bc") != (out == NUM_ACTIONS):
        fail(f"--kind {kind} does not fit the checkpoint: its output head has {out} outputs, and a "
             f"behavioural-cloning head has {NUM_ACTIONS} (one per action), a value head {RETURN_BUCKETS}")
    shape_of(p, f"{head}/b", (out,), "output bias")
    used = {"embed/embeddings", "embed_1/embeddings", f"{final_ln}/scale", f"{final_ln}/offset",
            f"{head}/w", f"{head}/b"}
    for i in range(layers):
        att = suffix("multi_head_dot_product_attention", i)
        used |= {f"{suffix(att + '/linear', j)}/w" for j in range(4)}
        used |= {f"{suffix('layer_norm', 2 * i + j)}/{s}" for j in range(2) for s in ("scale", "offset")}
        used |= {f"{suffix('linear', 3 * i + j)}/w" for j in range(3)}
    extra = sorted(set(p) - used)
    if extra:
        fail(f"the checkpoint has parameters this architecture does not use: {', '.join(extra[:6])}")
    name, known_heads = PUBLISHED.get((layers, width), (None, None))
    if heads is None:
        heads = known_heads
    if heads is None:
        fail(f"the head count cannot be read from the weights ({layers} layers of width {width} is not a "
             "published configuration); pass --heads")
    if width % heads:
        fail(f"--heads {heads} does not divide the width {width}")
    params = sum(int(a.size) for a in p.values())
    return {"layers": layers, "width": width, "heads": heads, "ffn": ffn, "buckets": out, "vocab": vocab,
            "positions": KINDS[kind] + 1, "inputs": KINDS[kind], "kind": kind, "published": name,
            "parameters": params}


def build_onnx(p: dict, cfg: dict, path: str, inspect: bool = False) -> None:
    """Writes the action-value graph (`inspect`: the inspection graph, see the module documentation)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    L, D, H = cfg["layers"], cfg["width"], cfg["heads"]
    dh = D // H
    seq = cfg["positions"]  # the zero start token and the inputs
    inits, nodes = [], []
    counter = [0]

    def const(name: str, arr) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], **attrs) -> str:
        counter[0] += 1
        out = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def layer_norm(x: str, ln: str) -> str:
        return node("LayerNormalization", [x, const(f"{ln}.scale", p[f"{ln}/scale"]),
                                           const(f"{ln}.offset", p[f"{ln}/offset"])], axis=-1, epsilon=1e-5)

    heads_shape = const("heads_shape", np.array([0, 0, H, dh], dtype=np.int64))
    width_shape = const("width_shape", np.array([0, 0, D], dtype=np.int64))
    last = const("last_index", np.array([seq - 1], dtype=np.int64))

    # Right shift: a zero token in front of the inputs (the training-time target token is dropped).
    pads = const("bos_pads", np.array([0, 1, 0, 0], dtype=np.int64))
    ids = node("Pad", ["input_ids", pads, const("bos_value", np.array(0, dtype=np.int64))])
    emb = p["embed/embeddings"] * np.float32(math.sqrt(D))  # their embeddings *= sqrt(embedding_dim)
    h = node("Gather", [const("embed.embeddings_scaled", emb.astype(np.float32)), ids], axis=0)
    # Their learned positions are a table of 79 rows; a sequence uses its first rows.
    h = node("Add", [h, const("embed_1.embeddings", p["embed_1/embeddings"][:seq])])
    scale = const("attn_scale", np.array(1.0 / math.sqrt(dh), dtype=np.float32))
    attention, residual, lens = [], [h], []
    head_axes = const("head_axes", np.array([1, H, 1, 1], dtype=np.int64)) if inspect else None

    def read_out(x: str) -> str:
        """Final LayerNorm and head at the last position -> [N, buckets] log-probabilities."""
        y = layer_norm(node("Gather", [x, last], axis=1), suffix("layer_norm", 2 * L))
        head = suffix("linear", 3 * L)
        logits = node("Add", [node("MatMul", [y, const("head.w", p[f"{head}/w"])]), const("head.b", p[f"{head}/b"])])
        return node("LogSoftmax", [node("Squeeze", [logits, const("squeeze_axis", np.array([1], dtype=np.int64))])], axis=-1)

    for i in range(L):
        att = suffix("multi_head_dot_product_attention", i)
        w = [p[f"{suffix(att + '/linear', j)}/w"] for j in range(4)]
        x = layer_norm(h, suffix("layer_norm", 2 * i))
        q_in = x
        if i == L - 1 and not inspect:
            # Only the last position is read: the last layer needs every key and value but one query.
            q_in = node("Gather", [x, last], axis=1)
            h = node("Gather", [h, last], axis=1)
        q = node("Transpose", [node("Reshape", [node("MatMul", [q_in, const(f"{att}.q", w[0])]), heads_shape])],
                 perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [node("MatMul", [x, const(f"{att}.k", w[1])]), heads_shape])],
                 perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [node("MatMul", [x, const(f"{att}.v", w[2])]), heads_shape])],
                 perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k]), scale])
        probs = node("Softmax", [scores], axis=-1)
        heads_out = node("MatMul", [probs, v])
        if inspect:
            layer_scale = node("Gather", ["head_scale", const(f"layer_{i}", np.array(i, dtype=np.int64))], axis=0)
            heads_out = node("Mul", [heads_out, node("Reshape", [layer_scale, head_axes])])
            attention.append(node("Unsqueeze", [probs, const(f"axis1_{i}", np.array([1], dtype=np.int64))]))
        ctx = node("Reshape", [node("Transpose", [heads_out], perm=[0, 2, 1, 3]), width_shape])
        h = node("Add", [h, node("MatMul", [ctx, const(f"{att}.o", w[3])])])
        x = layer_norm(h, suffix("layer_norm", 2 * i + 1))
        gate = node("MatMul", [x, const(f"mlp{i}.gate", p[f"{suffix('linear', 3 * i)}/w"])])
        up = node("MatMul", [x, const(f"mlp{i}.up", p[f"{suffix('linear', 3 * i + 1)}/w"])])
        silu = node("Mul", [gate, node("Sigmoid", [gate])])
        down = node("MatMul", [node("Mul", [silu, up]), const(f"mlp{i}.down", p[f"{suffix('linear', 3 * i + 2)}/w"])])
        h = node("Add", [h, down])
        if inspect:
            residual.append(h)
            lens.append(read_out(h))
    if inspect:
        # the same read-out as the plain graph's, after every layer; the last one is `logits`
        nodes.append(helper.make_node("Identity", [lens[-1]], ["logits"]))
        nodes.append(helper.make_node("Concat", attention, ["attention"], axis=1))
        unsq = [node("Unsqueeze", [r, const(f"axis1_r{j}", np.array([1], dtype=np.int64))]) for j, r in enumerate(residual)]
        nodes.append(helper.make_node("Concat", unsq, ["residual"], axis=1))
        unsq = [node("Unsqueeze", [x, const(f"axis1_l{j}", np.array([1], dtype=np.int64))]) for j, x in enumerate(lens)]
        nodes.append(helper.make_node("Concat", unsq, ["lens_logits"], axis=1))
        graph = helper.make_graph(
            nodes, "searchless_action_value_inspect",
            [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", seq - 1]),
             helper.make_tensor_value_info("head_scale", TensorProto.FLOAT, [L, H])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", cfg["buckets"]]),
             helper.make_tensor_value_info("attention", TensorProto.FLOAT, ["batch", L, H, seq, seq]),
             helper.make_tensor_value_info("residual", TensorProto.FLOAT, ["batch", L + 1, seq, D]),
             helper.make_tensor_value_info("lens_logits", TensorProto.FLOAT, ["batch", L, cfg["buckets"]])],
            _unique(inits))
        _save(helper, onnx, graph, path, inits)
        return
    x = layer_norm(h, suffix("layer_norm", 2 * L))
    head = suffix("linear", 3 * L)
    logits = node("Add", [node("MatMul", [x, const("head.w", p[f"{head}/w"])]), const("head.b", p[f"{head}/b"])])
    flat = node("Squeeze", [logits, const("squeeze_axis", np.array([1], dtype=np.int64))])
    nodes.append(helper.make_node("LogSoftmax", [flat], ["logits"], axis=-1))
    graph = helper.make_graph(
        nodes, {"sv": "searchless_state_value", "bc": "searchless_behavioral_cloning"}.get(
            cfg["kind"], "searchless_action_value"),
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", seq - 1])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", cfg["buckets"]])],
        inits)
    _save(helper, onnx, graph, path, inits)


def _unique(inits: list) -> list:
    """Initializers by name, each once (the inspection graph's read-out adds the same head each layer)."""
    seen, out = set(), []
    for t in inits:
        if t.name not in seen:
            seen.add(t.name)
            out.append(t)
    return out


def _save(helper, onnx, graph, path: str, inits: list) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="mavboard")
    model.ir_version = 8
    onnx.checker.check_model(model)
    tmp = path + ".partial"
    large = sum(t.ByteSize() for t in inits) > 1_800_000_000
    if large:
        onnx.save_model(model, tmp, save_as_external_data=True, location=os.path.basename(path) + ".data")
    else:
        onnx.save_model(model, tmp)
    os.replace(tmp, path)


def share_weights(graph_path: str, model_path: str, min_bytes: int = 1024) -> None:
    """Rewrites the inspection graph so that it stores no second copy of the weights: each initializer of at
    least `min_bytes` reads the same tensor of the plain graph, as ONNX external data pointing at its bytes
    inside the plain graph's file (or at the plain graph's own external data file, for a large model)."""
    import onnx

    plain = onnx.load(model_path, load_external_data=False)
    by_name = {t.name: t for t in plain.graph.initializer}
    with open(model_path, "rb") as f:
        blob = f.read()
    graph = onnx.load(graph_path)
    for t in graph.graph.initializer:
        src = by_name.get(t.name)
        if src is None or len(t.raw_data) < min_bytes:
            continue
        if src.data_location == onnx.TensorProto.EXTERNAL:
            entries = [(e.key, e.value) for e in src.external_data]
        else:
            offset = blob.find(t.raw_data)
            if offset < 0 or src.raw_data != t.raw_data:
                continue
            entries = [("location", os.path.basename(model_path)), ("offset", str(offset)), ("length", str(len(t.raw_data)))]
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in entries:
            e = t.external_data.add()
            e.key, e.value = key, value
    tmp = graph_path + ".partial"
    onnx.save_model(graph, tmp)
    os.replace(tmp, graph_path)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--step", type=int)
    ap.add_argument("--ema", action="store_true", help="read params_ema instead of params")
    ap.add_argument("--heads", type=int)
    ap.add_argument("--inspect", metavar="INSPECT.onnx", help="also write the inspection graph there")
    ap.add_argument("--kind", choices=["av", "sv", "bc"],
                    help="the kind of predictor, where the folder's name does not say it")
    a = ap.parse_args(argv)
    try:
        params_dir, step = find_params_dir(a.checkpoint, a.step, a.ema)
        p = restore(params_dir)
        cfg = read_config(p, a.heads, os.path.basename(os.path.normpath(a.checkpoint)), a.kind)
        build_onnx(p, cfg, a.out)
        if a.inspect and cfg["kind"] == "av":
            build_onnx(p, cfg, a.inspect, inspect=True)
            share_weights(a.inspect, a.out)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cfg.update({"step": step, "params": "params_ema" if a.ema else "params",
                "checkpoint": os.path.abspath(a.checkpoint)})
    print(json.dumps(cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
