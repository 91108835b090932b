"""mavtrain's own block (RMSNorm, a GELU MLP) written exactly as a GPT-NeoX model (`GPTNeoXForCausalLM`).

No Llama block computes a GELU MLP, but GPT-NeoX's block does (rotary positions with the half rotation, an
exact `gelu` MLP, sequential residuals with `use_parallel_residual: false`). What differs is the norm:
GPT-NeoX's LayerNorm subtracts the mean of the hidden state, RMSNorm does not. So the residual stream is
moved into a wider space where its mean is always zero, and there the two norms agree:

* `Q` (width D x d, D > d) has orthonormal columns that each sum to zero. The wide residual is `y = Q x`:
  `|y| = |x|` and `mean(y) = 0`, so LayerNorm(y) with weight `sqrt(d / D)`, bias 0 and epsilon `eps d / D`
  is exactly `Q RMSNorm(x)` (without the RMSNorm's weight). `Q` is sparse: blocks of 4 wide coordinates
  holding 3 of the model's, as the Haar vectors (1,-1,0,0)/sqrt2, (0,0,1,-1)/sqrt2, (1,1,-1,-1)/2
  (D = 4d/3), or, where that is not a whole number of heads, blocks of 2 holding 1, (1,-1)/sqrt2 (D = 2d).
  A dense `Q` (a Householder reflection, one head wider) computes the same in exact arithmetic but lost a
  factor of 4 in float32 (mav-tiny in ONNX Runtime: 1.4e-4 from the float64 logits, against 3.8e-5 with
  this one): the residual's mean, large in these models, then cancels across every coordinate.
* Every matrix that reads a normalised state takes the RMSNorm weight and `Q^T` into it
  (`W diag(g) Q^T`); every matrix that writes into the residual stream, the embedding included, is
  multiplied by `Q`. The LM head keeps its own matrix (`embed_out`, untied: the final norm's weight is in it).
* GPT-NeoX ties its width to its heads (`hidden_size = heads x head_size`), so the extra width is extra
  heads, all silent: zero query, key and value weights (they attend uniformly to nothing) and zero columns
  in the output projection. mav-tiny (d 192, 6 heads of 32) becomes width 256 with 8 heads.
* The fused query/key/value matrix is reordered from mavtrain's (q, k, v) x heads to GPT-NeoX's
  heads x (q, k, v). The biases GPT-NeoX's layers have are written as zeros.

This file needs numpy only; `graph_weights` reads the weights out of a graph mavtrain exported (onnx).
"""

from __future__ import annotations

import math

import numpy as np


class NeoxError(Exception):
    """A graph that is not mavtrain's GELU block, with the reason."""


def block_size(d: int, head_dim: int) -> int:
    """4 where 3 divides d and 4d/3 is whole heads, else 2 (see `zero_mean_basis`)."""
    return 4 if d % 3 == 0 and (4 * d // 3) % head_dim == 0 else 2


def zero_mean_basis(d: int, block: int) -> np.ndarray:
    """`Q`: (d * block / (block - 1)) x d, orthonormal columns each summing to zero, in Haar blocks
    (float64)."""
    if block not in (2, 4) or d % (block - 1):
        raise NeoxError(f"no zero-mean basis in blocks of {block} for width {d}")
    q = np.zeros((d * block // (block - 1), d))
    h = 1.0 / math.sqrt(2.0)
    for b in range(d // (block - 1)):
        r, c = block * b, (block - 1) * b
        q[r, c], q[r + 1, c] = h, -h
        if block == 4:
            q[r + 2, c + 1], q[r + 3, c + 1] = h, -h
            q[r:r + 2, c + 2], q[r + 2:r + 4, c + 2] = 0.5, -0.5
    return q


def graph_weights(model, layers: int) -> dict:
    """The weights of a `mav-lm` graph exported by mavtrain in its GELU block, by what each MatMul node is
    called (`/blocks.N/attn/qkv`, `/blocks.N/attn/proj`, `/blocks.N/fc1`, `/blocks.N/fc2`, `/lm_head`),
    as PyTorch's layout ([out, in]); the norms' epsilon and the rotary base from the graph's constants."""
    from onnx import numpy_helper

    inits = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in model.graph.initializer}
    made = {o: n for n in model.graph.node for o in n.output}
    out: dict = {}
    for n in model.graph.node:
        if n.op_type != "MatMul" or len(n.input) != 2 or n.input[1] not in inits:
            continue
        parts = n.name.strip("/").split("/")
        if parts[0] == "lm_head":
            out["head"] = inits[n.input[1]].T
        elif parts[0].startswith("blocks.") and parts[-1] == "MatMul":
            key = {"attn/qkv": "qkv", "attn/proj": "proj", "fc1": "fc1", "fc2": "fc2"}.get("/".join(parts[1:-1]))
            if key is None:
                raise NeoxError(f"the graph has a matrix {n.name} that mavtrain's GELU block does not have")
            out[f"{parts[0].split('.')[1]}.{key}"] = inits[n.input[1]].T
    gathers = [n for n in model.graph.node if n.op_type == "Gather" and "input_ids" in n.input]
    if len(gathers) != 1:
        raise NeoxError("the graph does not read its input ids through one embedding table")
    table = gathers[0].input[0]
    if table in inits:
        out["embed"] = inits[table]
    elif table in made and made[table].op_type == "Transpose" and made[table].input[0] in inits:
        out["embed"] = inits[made[table].input[0]].T  # tied: the LM head's matrix, transposed
    else:
        raise NeoxError("the graph's embedding table is neither a weight nor the LM head's transposed")
    for i in range(layers):
        for norm in ("norm1", "norm2"):
            name = f"lm.blocks.{i}.{norm}.weight"
            if name not in inits:
                raise NeoxError(f"the graph has no {name}: it is not mavtrain's block")
            out[f"{i}.{norm}"] = inits[name]
        for key in ("qkv", "proj", "fc1", "fc2"):
            if f"{i}.{key}" not in out:
                raise NeoxError(f"the graph has no /blocks.{i}/{key} matrix: it is not mavtrain's GELU block")
    if "lm.norm.weight" not in inits or "head" not in out:
        raise NeoxError("the graph has no final norm or LM head named as mavtrain writes them")
    out["norm"] = inits["lm.norm.weight"]
    erf = sum(1 for n in model.graph.node if n.op_type == "Erf")
    if erf != layers:
        raise NeoxError(f"the graph computes {erf} exact GELUs (Erf) for {layers} blocks; GPT-NeoX's `gelu` is exact")
    out["eps"], out["rope_theta"] = _constants(model)
    return out


def _constants(model) -> tuple[float, float]:
    """The norms' epsilon (one value for every norm) and the rotary base (from the inverse frequencies)."""
    from onnx import numpy_helper

    eps, inv = set(), []
    for n in model.graph.node:
        if n.op_type != "Constant" or not n.attribute or not n.attribute[0].HasField("t"):
            continue
        v = numpy_helper.to_array(n.attribute[0].t)
        scope = n.name.strip("/").split("/")[0]
        if v.dtype.kind == "f" and v.size == 1 and "/norm" in "/" + n.name.strip("/") and 0 < float(v) < 1e-2:
            eps.add(float(f"{float(v):.6g}"))  # the float32 constant, as it was written (1e-05)
        if scope == "rotary" and v.dtype.kind == "f" and v.ndim == 1 and v.size > 1:
            inv.append(v.astype(np.float64))
    if len(eps) != 1:
        raise NeoxError(f"cannot tell the norms' epsilon from the graph (found {sorted(eps)})")
    if len(inv) != 1:
        raise NeoxError("cannot tell the rotary base from the graph (no single table of inverse frequencies)")
    half = inv[0].size
    base = float(inv[0][1]) ** (-half) if half > 1 else 10000.0
    if abs(base - round(base)) < 1e-3 * base:
        base = float(round(base))
    head_dim = 2 * half
    want = 1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    if np.max(np.abs(want.astype(np.float32) - inv[0])) > 1e-6:
        raise NeoxError(f"the graph's rotary frequencies are not those of base {base}")
    return eps.pop(), base


def neox_weights(w: dict, layers: int, heads: int, head_dim: int) -> tuple[dict[str, np.ndarray], dict]:
    """GPT-NeoX's tensors (Hugging Face names, float32) and the shape facts for its config."""
    d = w["embed"].shape[1]
    if heads * head_dim != d:
        raise NeoxError(f"{heads} heads of {head_dim} are not the model's width {d}")
    q = zero_mean_basis(d, block_size(d, head_dim))
    wide = q.shape[0]
    wide_heads = wide // head_dim
    f32 = np.float32
    t: dict[str, np.ndarray] = {"gpt_neox.embed_in.weight": (w["embed"] @ q.T).astype(f32)}
    ln = np.full(wide, math.sqrt(d / wide))
    for i in range(layers):
        p = f"gpt_neox.layers.{i}."
        qkv = w[f"{i}.qkv"] @ np.diag(w[f"{i}.norm1"]) @ q.T  # [3d, D], rows (q|k|v, head, j)
        fused = np.zeros((wide_heads, 3, head_dim, wide))
        fused[:heads] = qkv.reshape(3, heads, head_dim, wide).transpose(1, 0, 2, 3)
        proj = np.zeros((wide, wide))
        proj[:, :d] = q @ w[f"{i}.proj"]
        for name, value in (("input_layernorm.weight", ln), ("input_layernorm.bias", np.zeros(wide)),
                            ("post_attention_layernorm.weight", ln), ("post_attention_layernorm.bias", np.zeros(wide)),
                            ("attention.query_key_value.weight", fused.reshape(3 * wide, wide)),
                            ("attention.query_key_value.bias", np.zeros(3 * wide)),
                            ("attention.dense.weight", proj), ("attention.dense.bias", np.zeros(wide)),
                            ("mlp.dense_h_to_4h.weight", w[f"{i}.fc1"] @ np.diag(w[f"{i}.norm2"]) @ q.T),
                            ("mlp.dense_h_to_4h.bias", np.zeros(w[f"{i}.fc1"].shape[0])),
                            ("mlp.dense_4h_to_h.weight", q @ w[f"{i}.fc2"]),
                            ("mlp.dense_4h_to_h.bias", np.zeros(wide))):
            t[p + name] = value.astype(f32)
    t["gpt_neox.final_layer_norm.weight"] = ln.astype(f32)
    t["gpt_neox.final_layer_norm.bias"] = np.zeros(wide, dtype=f32)
    t["embed_out.weight"] = (w["head"] @ np.diag(w["norm"]) @ q.T).astype(f32)
    facts = {"width": wide, "heads": wide_heads, "head_dim": head_dim, "intermediate": w["0.fc1"].shape[0],
             "layer_norm_eps": w["eps"] * d / wide, "rope_theta": w["rope_theta"], "model_width": d}
    return t, facts
