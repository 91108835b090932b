"""mav-lm as a standard architecture: Hugging Face Llama and GPT-NeoX folders <-> mavboard's decoder-with-past
ONNX graph.

A `mav-lm` model whose blocks are Llama's (RMSNorm, rotary positions with the half-rotation, bias-free
q/k/v/o projections, a gated SiLU MLP, optionally tied embeddings) is exactly a `LlamaForCausalLM`, the
architecture transformers, vLLM and llama.cpp load natively; one in mavtrain's own GELU block is written
exactly as a `GPTNeoXForCausalLM` (`hf_neox.py`, which this file imports when it needs it: run as a script,
it must lie beside this one), and GPT-NeoX folders import too. This file, which needs only numpy and onnx,
converts both ways:

* `folder_to_graph`: a Hugging Face model folder (config.json, model.safetensors or its shards) -> the
  ONNX graph mavboard runs (inputs `input_ids`, `attention_mask`, `position_ids`,
  `past_key_values.N.key/value`; outputs `logits`, `present.N.key/value`: the layout optimum gives a
  decoder with past). The weights keep their Hugging Face names and layout as initializers, and the graph
  records its architecture in its metadata (`mav.architecture`), so that
* `graph_to_folder` can write the folder back (config.json, model.safetensors, generation_config.json;
  the caller adds the tokenizer files).

* `package_to_folder`: a whole `mav-lm` package -> the folder, tokenizer and generation config included.

Run as a script it is the Python step of `mavboard import hf` (which checks the tokenizer and writes
mav.json around the graph) and of `mavboard package export-hf` (`python -m mavtrain.export_hf` in the
training tree):

    python hf_llama.py import HF_FOLDER OUT.onnx [--vocab N]
    python hf_llama.py export PACKAGE OUT_FOLDER

It prints one JSON object on stdout (what it found or wrote); input it refuses is `error: ...` on stderr
with exit status 2.

Grouped-query attention (fewer key/value heads than query heads) is written as plain multi-head attention
with each key/value head's weights repeated for its group: the same arithmetic, a larger cache.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys

import numpy as np

OPSET = 17
MASK_VALUE = -1e9
ARCH_KEY = "mav.architecture"
# safetensors dtype names -> numpy
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}


class ConvertError(Exception):
    """Input that cannot be converted, with the reason a user can act on."""


# --- safetensors -------------------------------------------------------------------------------------------


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """Every tensor of one .safetensors file as float32 (F32, F16 and BF16 are read)."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ConvertError(f"{path}: not a safetensors file (shorter than its header)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100_000_000:
            raise ConvertError(f"{path}: not a safetensors file (header length {n})")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise ConvertError(f"{path}: not a safetensors file (header: {e})") from e
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (start, end) = spec["dtype"], spec["shape"], spec["data_offsets"]
        buf = data[start:end]
        if dtype == "BF16":
            bits = np.frombuffer(buf, dtype=np.uint16).astype(np.uint32) << 16
            arr = bits.view(np.float32)
        elif dtype in _DTYPES:
            arr = np.frombuffer(buf, dtype=_DTYPES[dtype])
        else:
            raise ConvertError(f"{path}: tensor {name} has dtype {dtype}, which the importer does not read")
        expected = int(np.prod(shape)) if shape else 1
        if arr.size != expected:
            raise ConvertError(f"{path}: tensor {name} holds {arr.size} values, its shape {shape} says {expected}")
        out[name] = arr.reshape(shape).astype(np.float32)
    return out


def write_safetensors(path: str, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> None:
    """Writes float32 tensors (sorted by name) as one .safetensors file, atomically."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    blobs = []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_folder_weights(folder: str) -> dict[str, np.ndarray]:
    """The weights of a model folder: model.safetensors, or the shards its index names."""
    single = os.path.join(folder, "model.safetensors")
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.isfile(single):
        return read_safetensors(single)
    if os.path.isfile(index):
        with open(index) as f:
            shards = sorted(set(json.load(f).get("weight_map", {}).values()))
        out: dict[str, np.ndarray] = {}
        for s in shards:
            out.update(read_safetensors(os.path.join(folder, s)))
        return out
    if any(n.endswith(".bin") for n in os.listdir(folder)):
        raise ConvertError(f"{folder} holds PyTorch .bin weights only; save the model with "
                           "save_pretrained(..., safe_serialization=True) to get model.safetensors")
    raise ConvertError(f"{folder} has no model.safetensors (nor model.safetensors.index.json)")


# --- the architecture --------------------------------------------------------------------------------------


def read_config(folder: str) -> dict:
    """The architecture of a Hugging Face Llama folder, checked; refuses what the graph does not compute."""
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):
        raise ConvertError(f"{folder} has no config.json: is it a Hugging Face model folder?")
    with open(path) as f:
        c = json.load(f)
    archs = c.get("architectures") or []
    if c.get("model_type") == "gpt_neox" and (not archs or "GPTNeoXForCausalLM" in archs):
        return read_neox_config(c)
    if c.get("model_type", "llama") != "llama" or (archs and "LlamaForCausalLM" not in archs):
        raise ConvertError(f"config.json says model_type {c.get('model_type')!r} ({', '.join(archs) or 'no architecture'}); "
                           "mav-lm imports LlamaForCausalLM and GPTNeoXForCausalLM models")
    heads = int(c["num_attention_heads"])
    width = int(c["hidden_size"])
    head_dim = int(c.get("head_dim") or width // heads)
    if head_dim * heads != width:
        raise ConvertError(f"head_dim {head_dim} x {heads} heads is not hidden_size {width}; mav-lm needs them equal")
    if c.get("hidden_act", "silu") != "silu":
        raise ConvertError(f"hidden_act {c['hidden_act']!r}: the Llama MLP mav-lm reads is gated SiLU")
    # transformers 5 writes `rope_parameters` ({rope_theta, rope_type}); 4 wrote `rope_theta` and `rope_scaling`
    rope = c.get("rope_parameters") or {}
    scaling = c.get("rope_scaling") or {}
    for kind in (rope.get("rope_type", "default"), scaling.get("rope_type", scaling.get("type", "default"))):
        if kind != "default":
            raise ConvertError(f"rotary scaling {kind!r} (rope_parameters / rope_scaling): mav-lm computes "
                               "plain rotary positions only")
    for bias in ("attention_bias", "mlp_bias"):
        if c.get(bias):
            raise ConvertError(f"{bias} is true: mav-lm's Llama graph has bias-free projections")
    return {
        "family": "llama",
        "layers": int(c["num_hidden_layers"]),
        "heads": heads,
        "kv_heads": int(c.get("num_key_value_heads") or heads),
        "head_dim": head_dim,
        "width": width,
        "intermediate": int(c["intermediate_size"]),
        "vocab": int(c["vocab_size"]),
        "context": int(c.get("max_position_embeddings") or 2048),
        "rope_theta": float(rope.get("rope_theta", c.get("rope_theta", 10000.0))),
        "rms_norm_eps": float(c.get("rms_norm_eps", 1e-6)),
        "tie_embeddings": bool(c.get("tie_word_embeddings", False)),
        "bos_token_id": c.get("bos_token_id"),
        "eos_token_id": c.get("eos_token_id"),
        "pad_token_id": c.get("pad_token_id"),
    }


def _layer_names(i: int) -> dict[str, str]:
    p = f"model.layers.{i}."
    return {
        "norm1": p + "input_layernorm.weight", "q": p + "self_attn.q_proj.weight",
        "k": p + "self_attn.k_proj.weight", "v": p + "self_attn.v_proj.weight",
        "o": p + "self_attn.o_proj.weight", "norm2": p + "post_attention_layernorm.weight",
        "gate": p + "mlp.gate_proj.weight", "up": p + "mlp.up_proj.weight", "down": p + "mlp.down_proj.weight",
    }


# GPT-NeoX's activations by config name: the exact GELU, and the tanh approximation under its three names
NEOX_ACTS = {"gelu": "erf", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh"}


def read_neox_config(c: dict) -> dict:
    """The architecture of a `GPTNeoXForCausalLM` config.json, checked (LayerNorm with biases, a fused
    query/key/value projection laid out head by head, rotary positions over the whole head, a GELU MLP)."""
    heads, width = int(c["num_attention_heads"]), int(c["hidden_size"])
    if width % heads:
        raise ConvertError(f"hidden_size {width} does not divide into {heads} heads")
    rope = c.get("rope_parameters") or {}
    scaling = c.get("rope_scaling") or {}
    for kind in (rope.get("rope_type", "default"), scaling.get("rope_type", scaling.get("type", "default"))):
        if kind != "default":
            raise ConvertError(f"rotary scaling {kind!r}: mav-lm computes plain rotary positions only")
    partial = float(rope.get("partial_rotary_factor", c.get("rotary_pct", 1.0)))
    if partial != 1.0:
        raise ConvertError(f"rotary positions over {partial:g} of each head (partial_rotary_factor / rotary_pct): "
                           "mav-lm's graph rotates whole heads")
    act = c.get("hidden_act", "gelu")
    if act not in NEOX_ACTS:
        raise ConvertError(f"hidden_act {act!r}: mav-lm's GPT-NeoX graph computes {', '.join(NEOX_ACTS)}")
    return {
        "family": "gpt_neox",
        "layers": int(c["num_hidden_layers"]),
        "heads": heads,
        "kv_heads": heads,
        "head_dim": width // heads,
        "width": width,
        "intermediate": int(c["intermediate_size"]),
        "vocab": int(c["vocab_size"]),
        "context": int(c.get("max_position_embeddings") or 2048),
        "rope_theta": float(rope.get("rope_theta", c.get("rotary_emb_base", c.get("rope_theta", 10000.0)))),
        "layer_norm_eps": float(c.get("layer_norm_eps", 1e-5)),
        "parallel_residual": bool(c.get("use_parallel_residual", True)),
        "attention_bias": bool(c.get("attention_bias", True)),
        "activation": act,
        "tie_embeddings": bool(c.get("tie_word_embeddings", False)),
        "bos_token_id": c.get("bos_token_id"),
        "eos_token_id": c.get("eos_token_id"),
        "pad_token_id": c.get("pad_token_id"),
    }


def _neox_layer_names(i: int, bias: bool) -> dict[str, str]:
    p = f"gpt_neox.layers.{i}."
    names = {"norm1": p + "input_layernorm.weight", "norm1_b": p + "input_layernorm.bias",
             "norm2": p + "post_attention_layernorm.weight", "norm2_b": p + "post_attention_layernorm.bias",
             "qkv": p + "attention.query_key_value.weight", "o": p + "attention.dense.weight",
             "up": p + "mlp.dense_h_to_4h.weight", "up_b": p + "mlp.dense_h_to_4h.bias",
             "down": p + "mlp.dense_4h_to_h.weight", "down_b": p + "mlp.dense_4h_to_h.bias"}
    if bias:
        names.update(qkv_b=p + "attention.query_key_value.bias", o_b=p + "attention.dense.bias")
    return names


def neox_head_name(w: dict, tie: bool) -> str:
    """The output head's tensor: `embed_out.weight` (transformers 4's name, which vLLM reads), or
    `lm_head.weight`, or the embedding when tied."""
    if tie:
        return "gpt_neox.embed_in.weight"
    for name in ("embed_out.weight", "lm_head.weight"):
        if name in w:
            return name
    raise ConvertError("the weights have no output head (embed_out.weight or lm_head.weight) and "
                       "tie_word_embeddings is false")


def _take(w: dict[str, np.ndarray], name: str, shape: tuple) -> np.ndarray:
    """Tensor `name` of the weights, checked to have the shape the config says."""
    if name not in w:
        raise ConvertError(f"the weights have no tensor {name}")
    if tuple(w[name].shape) != shape:
        raise ConvertError(f"tensor {name} has shape {list(w[name].shape)}, the config says {list(shape)}")
    return w[name]


def checked_neox_weights(w: dict[str, np.ndarray], cfg: dict) -> dict[str, np.ndarray]:
    """The GPT-NeoX weights the graph reads, shapes checked."""
    d, v, ff = cfg["width"], cfg["vocab"], cfg["intermediate"]

    def take(name: str, shape: tuple) -> np.ndarray:
        return _take(w, name, shape)

    out = {n: take(n, (v, d)) for n in {"gpt_neox.embed_in.weight", neox_head_name(w, cfg["tie_embeddings"])}}
    for n in ("gpt_neox.final_layer_norm.weight", "gpt_neox.final_layer_norm.bias"):
        out[n] = take(n, (d,))
    shapes = {"norm1": (d,), "norm1_b": (d,), "norm2": (d,), "norm2_b": (d,), "qkv": (3 * d, d), "qkv_b": (3 * d,),
              "o": (d, d), "o_b": (d,), "up": (ff, d), "up_b": (ff,), "down": (d, ff), "down_b": (d,)}
    for i in range(cfg["layers"]):
        for key, name in _neox_layer_names(i, cfg["attention_bias"]).items():
            out[name] = take(name, shapes[key])
    return out


def checked_weights(w: dict[str, np.ndarray], cfg: dict) -> dict[str, np.ndarray]:
    """The weights the graph reads, shapes checked, key/value heads repeated to the query heads."""
    d, hd, v, ff = cfg["width"], cfg["head_dim"], cfg["vocab"], cfg["intermediate"]
    h, kvh = cfg["heads"], cfg["kv_heads"]
    if h % kvh != 0:
        raise ConvertError(f"{h} attention heads do not divide into {kvh} key/value heads")

    def take(name: str, shape: tuple) -> np.ndarray:
        return _take(w, name, shape)

    out = {"model.embed_tokens.weight": take("model.embed_tokens.weight", (v, d)),
           "model.norm.weight": take("model.norm.weight", (d,))}
    if not cfg["tie_embeddings"]:
        out["lm_head.weight"] = take("lm_head.weight", (v, d))
    for i in range(cfg["layers"]):
        n = _layer_names(i)
        out[n["norm1"]] = take(n["norm1"], (d,))
        out[n["norm2"]] = take(n["norm2"], (d,))
        out[n["q"]] = take(n["q"], (h * hd, d))
        out[n["o"]] = take(n["o"], (d, h * hd))
        for kv in ("k", "v"):
            t = take(n[kv], (kvh * hd, d))
            if kvh != h:
                t = np.repeat(t.reshape(kvh, hd, d), h // kvh, axis=0).reshape(h * hd, d)
            out[n[kv]] = t
        out[n["gate"]] = take(n["gate"], (ff, d))
        out[n["up"]] = take(n["up"], (ff, d))
        out[n["down"]] = take(n["down"], (d, ff))
    return out


def io_names(layers: int) -> tuple[list[str], list[str]]:
    """The graph's input and output names (the decoder-with-past layout mavboard's decoder feeds)."""
    past = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids"] + past, ["logits"] + present


# --- the ONNX graph ----------------------------------------------------------------------------------------


class _Graph:
    """A small builder: nodes, initializers, unique names."""

    def __init__(self):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name: str, array) -> str:
        self.inits.append(self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs) -> str:
        self.n += 1
        out = f"{kind.lower()}_{self.n}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], name=f"{kind}_{self.n}", **attrs))
        return out

    def op_to(self, kind: str, output: str, *inputs: str, **attrs) -> str:
        self.n += 1
        self.nodes.append(self.helper.make_node(kind, list(inputs), [output], name=f"{kind}_{self.n}", **attrs))
        return output


def build_graph(weights: dict[str, np.ndarray], cfg: dict):
    """The decoder-with-past ONNX model computing `LlamaForCausalLM` with these (checked) weights."""
    import onnx
    from onnx import TensorProto, helper

    g = _Graph()
    d, h, hd, v = cfg["width"], cfg["heads"], cfg["head_dim"], cfg["vocab"]
    layers = cfg["layers"]
    for name, a in weights.items():
        g.const(name, a.astype(np.float32))
    inputs, outputs = io_names(layers)
    neox = cfg["family"] == "gpt_neox"
    eps = None if neox else g.const("rms_norm_eps", np.array(cfg["rms_norm_eps"], dtype=np.float32))
    two = None if neox else g.const("two", np.array(2.0, dtype=np.float32))
    inv_freq = 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.int64).astype(np.float32) / hd))
    g.const("rope.inv_freq", inv_freq.astype(np.float32))
    g.const("scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    g.const("zero_f", np.array(0.0, dtype=np.float32))
    g.const("mask_value", np.array(MASK_VALUE, dtype=np.float32))
    if not neox:
        g.const("heads_shape", np.array([0, 0, h, hd], dtype=np.int64))
    g.const("width_shape", np.array([0, 0, h * hd], dtype=np.int64))
    g.const("axis0", np.array([0], dtype=np.int64))
    g.const("axis1", np.array([1], dtype=np.int64))
    g.const("axis_last", np.array([-1], dtype=np.int64))
    g.const("i0", np.array(0, dtype=np.int64))
    g.const("i1", np.array(1, dtype=np.int64))
    g.const("i2", np.array(2, dtype=np.int64))
    g.const("half", np.array([hd // 2, hd // 2], dtype=np.int64))

    def weight_t(name: str) -> str:
        return g.op("Transpose", name, perm=[1, 0])

    def rms(x: str, w: str) -> str:
        var = g.op("ReduceMean", g.op("Pow", x, two), axes=[-1], keepdims=1)
        return g.op("Mul", g.op("Div", x, g.op("Sqrt", g.op("Add", var, eps))), w)

    # rotary tables from the positions: [B, 1, S, hd]
    pos = g.op("Cast", "position_ids", to=TensorProto.FLOAT)
    freqs = g.op("Mul", g.op("Unsqueeze", pos, "axis_last"), "rope.inv_freq")
    emb = g.op("Concat", freqs, freqs, axis=-1)
    cos = g.op("Unsqueeze", g.op("Cos", emb), "axis1")
    sin = g.op("Unsqueeze", g.op("Sin", emb), "axis1")

    # the mask: query i (at cache index P + i) sees key j <= P + i that is not padding
    past_len = g.op("Gather", g.op("Shape", "past_key_values.0.key"), "i2", axis=0)
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), "i1", axis=0)
    total = g.op("Gather", g.op("Shape", "attention_mask"), "i1", axis=0)
    q_idx = g.op("Add", g.op("Range", "i0", seq_len, "i1"), past_len)
    k_idx = g.op("Range", "i0", total, "i1")
    causal = g.op("LessOrEqual", g.op("Unsqueeze", k_idx, "axis0"), g.op("Unsqueeze", q_idx, "axis1"))
    real = g.op("Unsqueeze", g.op("Cast", "attention_mask", to=TensorProto.BOOL), np_axes(g, [1, 2]))
    keep = g.op("And", causal, real)  # [B, 1, S, T]
    mask = g.op("Where", keep, "zero_f", "mask_value")

    def rotate(x: str) -> str:
        a, b = split2(g, x)
        return g.op("Add", g.op("Mul", x, cos), g.op("Mul", g.op("Concat", g.op("Neg", b), a, axis=-1), sin))

    def heads(x: str) -> str:  # [B, S, H*hd] -> [B, H, S, hd]
        return g.op("Transpose", g.op("Reshape", x, "heads_shape"), perm=[0, 2, 1, 3])

    if neox:
        x = neox_layers(g, cfg, mask, rotate)
        final = g.op("LayerNormalization", x, "gpt_neox.final_layer_norm.weight", "gpt_neox.final_layer_norm.bias",
                     axis=-1, epsilon=cfg["layer_norm_eps"])
        head = cfg["head"]
    else:
        x = g.op("Gather", "model.embed_tokens.weight", "input_ids", axis=0)
        for i in range(layers):
            n = _layer_names(i)
            a = rms(x, n["norm1"])
            q = rotate(heads(g.op("MatMul", a, weight_t(n["q"]))))
            k = rotate(heads(g.op("MatMul", a, weight_t(n["k"]))))
            val = heads(g.op("MatMul", a, weight_t(n["v"])))
            k_all = g.op_to("Concat", f"present.{i}.key", f"past_key_values.{i}.key", k, axis=2)
            v_all = g.op_to("Concat", f"present.{i}.value", f"past_key_values.{i}.value", val, axis=2)
            scores = g.op("Add", g.op("Mul", g.op("MatMul", q, g.op("Transpose", k_all, perm=[0, 1, 3, 2])), "scale"), mask)
            att = g.op("MatMul", g.op("Softmax", scores, axis=-1), v_all)
            att = g.op("Reshape", g.op("Transpose", att, perm=[0, 2, 1, 3]), "width_shape")
            x = g.op("Add", x, g.op("MatMul", att, weight_t(n["o"])))
            m = rms(x, n["norm2"])
            gate = g.op("MatMul", m, weight_t(n["gate"]))
            up = g.op("MatMul", m, weight_t(n["up"]))
            act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
            x = g.op("Add", x, g.op("MatMul", act, weight_t(n["down"])))
        final = rms(x, "model.norm.weight")
        head = "model.embed_tokens.weight" if cfg["tie_embeddings"] else "lm_head.weight"
    g.op_to("MatMul", "logits", final, weight_t(head))

    b, s, p, t = "batch", "seq", "past", "total"
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [b, s]),
           helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [b, t]),
           helper.make_tensor_value_info("position_ids", TensorProto.INT64, [b, s])]
    ins += [helper.make_tensor_value_info(nm, TensorProto.FLOAT, [b, h, p, hd]) for nm in inputs[3:]]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [b, s, v])]
    outs += [helper.make_tensor_value_info(nm, TensorProto.FLOAT, [b, h, t, hd]) for nm in outputs[1:]]
    graph = helper.make_graph(g.nodes, "mav_lm_gpt_neox" if neox else "mav_lm_llama", ins, outs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mavboard")
    model.ir_version = 8
    keys = ("family", "layers", "heads", "kv_heads", "head_dim", "width", "intermediate", "vocab", "context",
            "rope_theta", "tie_embeddings")
    keys += NEOX_ARCH_KEYS if neox else ("rms_norm_eps",)
    arch = {k: cfg[k] for k in keys}
    helper.set_model_props(model, {ARCH_KEY: json.dumps(arch)})
    if sum(a.nbytes for a in weights.values()) < 1_900_000_000:
        # the checker refuses an in-memory model past protobuf's 2 GB; larger ones are saved with external
        # data (save_graph) and checked by ONNX Runtime when mavboard opens them
        onnx.checker.check_model(model)
    return model


NEOX_ARCH_KEYS = ("layer_norm_eps", "parallel_residual", "attention_bias", "activation", "head")


def neox_layers(g: _Graph, cfg: dict, mask: str, rotate) -> str:
    """GPT-NeoX's embedding and blocks (LayerNorm, the fused query/key/value projection laid out head by
    head, biases, GELU, sequential or parallel residuals) on the graph's shared constants; the residual
    stream after the last block."""
    h, hd = cfg["heads"], cfg["head_dim"]
    g.const("neox.qkv_shape", np.array([0, 0, h, 3 * hd], dtype=np.int64))
    g.const("neox.thirds", np.array([hd, hd, hd], dtype=np.int64))
    half, one = g.const("neox.half", np.array(0.5, dtype=np.float32)), g.const("neox.one", np.array(1.0, dtype=np.float32))
    exact = NEOX_ACTS[cfg["activation"]] == "erf"
    if exact:
        inv_sqrt2 = g.const("neox.inv_sqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    else:
        tanh_scale = g.const("neox.tanh_scale", np.array(math.sqrt(2.0 / math.pi), dtype=np.float32))
        cubic = g.const("neox.cubic", np.array(0.044715, dtype=np.float32))
        three = g.const("neox.three", np.array(3.0, dtype=np.float32))

    def linear(x: str, w: str, b: str | None) -> str:
        y = g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0]))
        return g.op("Add", y, b) if b else y

    def norm(x: str, w: str, b: str) -> str:
        return g.op("LayerNormalization", x, w, b, axis=-1, epsilon=cfg["layer_norm_eps"])

    def gelu(x: str) -> str:
        if exact:
            inner = g.op("Erf", g.op("Mul", x, inv_sqrt2))
        else:
            poly = g.op("Add", x, g.op("Mul", cubic, g.op("Pow", x, three)))
            inner = g.op("Tanh", g.op("Mul", tanh_scale, poly))
        return g.op("Mul", g.op("Mul", half, x), g.op("Add", one, inner))

    x = g.op("Gather", "gpt_neox.embed_in.weight", "input_ids", axis=0)
    for i in range(cfg["layers"]):
        n = _neox_layer_names(i, cfg["attention_bias"])
        qkv = linear(norm(x, n["norm1"], n["norm1_b"]), n["qkv"], n.get("qkv_b"))
        qkv = g.op("Transpose", g.op("Reshape", qkv, "neox.qkv_shape"), perm=[0, 2, 1, 3])  # [B, H, S, 3 hd]
        g.n += 1
        q, k, val = (f"split_{g.n}_{c}" for c in "qkv")
        g.nodes.append(g.helper.make_node("Split", [qkv, "neox.thirds"], [q, k, val], name=f"Split_{g.n}", axis=-1))
        q, k = rotate(q), rotate(k)
        k_all = g.op_to("Concat", f"present.{i}.key", f"past_key_values.{i}.key", k, axis=2)
        v_all = g.op_to("Concat", f"present.{i}.value", f"past_key_values.{i}.value", val, axis=2)
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, g.op("Transpose", k_all, perm=[0, 1, 3, 2])), "scale"), mask)
        att = g.op("MatMul", g.op("Softmax", scores, axis=-1), v_all)
        att = linear(g.op("Reshape", g.op("Transpose", att, perm=[0, 2, 1, 3]), "width_shape"), n["o"], n.get("o_b"))
        mlp_in = x if cfg["parallel_residual"] else g.op("Add", x, att)
        mlp = linear(gelu(linear(norm(mlp_in, n["norm2"], n["norm2_b"]), n["up"], n["up_b"])), n["down"], n["down_b"])
        x = g.op("Add", g.op("Add", x, att), mlp) if cfg["parallel_residual"] else g.op("Add", mlp_in, mlp)
    return x


def np_axes(g: _Graph, axes: list[int]) -> str:
    name = "axes_" + "_".join(str(a) for a in axes)
    if not any(i.name == name for i in g.inits):
        g.const(name, np.array(axes, dtype=np.int64))
    return name


def split2(g: _Graph, x: str) -> tuple[str, str]:
    g.n += 1
    a, b = f"split_{g.n}_a", f"split_{g.n}_b"
    g.nodes.append(g.helper.make_node("Split", [x, "half"], [a, b], name=f"Split_{g.n}", axis=-1))
    return a, b


def save_graph(model, path: str) -> None:
    """Saves the model atomically (weights inline below 2 GB, else beside it as PATH.data)."""
    import onnx

    tmp = path + ".part"
    large = sum(i.ByteSize() for i in model.graph.initializer) > 1_900_000_000
    if large:
        onnx.save_model(model, tmp, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".data")
    else:
        onnx.save_model(model, tmp)
    os.replace(tmp, path)


def folder_to_graph(folder: str, out: str, vocab: int | None = None) -> dict:
    """Converts a Hugging Face Llama or GPT-NeoX folder into the ONNX graph at `out`; returns what it found.

    `vocab`: the tokenizer's size, where the weights have more rows (a vocabulary padded for speed): the
    rows past it are dropped (no tokenizer id reaches them). Fewer rows than the tokenizer is an error."""
    cfg = read_config(folder)
    weights = read_folder_weights(folder)
    rows = cfg["vocab"]
    if vocab is not None and vocab != rows:
        if vocab > rows:
            raise ConvertError(f"the tokenizer has {vocab} tokens but the model only {rows} rows of embeddings")
        for name in ("model.embed_tokens.weight", "lm_head.weight", "gpt_neox.embed_in.weight", "embed_out.weight"):
            if name in weights and weights[name].shape[0] == rows:
                weights[name] = weights[name][:vocab]
        cfg["vocab"] = vocab
    if cfg["family"] == "gpt_neox":
        cfg["head"] = neox_head_name(weights, cfg["tie_embeddings"])
        checked = checked_neox_weights(weights, cfg)
    else:
        checked = checked_weights(weights, cfg)
    save_graph(build_graph(checked, cfg), out)
    params = sum(int(a.size) for a in weights.values() if a.ndim > 0)
    return dict(cfg, parameters=params, dropped_rows=rows - cfg["vocab"])


# --- back to a folder --------------------------------------------------------------------------------------


def graph_architecture(model) -> dict | None:
    """The architecture a graph written by `build_graph` records; None for any other graph."""
    for p in model.metadata_props:
        if p.key == ARCH_KEY:
            return json.loads(p.value)
    return None


def graph_to_folder(onnx_path: str, out: str, token_ids: dict[str, int | None], context: int = 2048) -> dict:
    """Writes the Hugging Face folder (config.json, model.safetensors, generation_config.json) of a graph:
    one written by `build_graph` goes back to its own architecture (Llama or GPT-NeoX); one mavtrain
    exported in its own GELU block becomes an exact `GPTNeoXForCausalLM` (`gelu_graph_to_neox`).
    `token_ids`: bos/eos/pad ids; `context`: the package's context length. Returns the config written."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(onnx_path)
    arch = graph_architecture(model)
    if arch is None:
        config, tensors = gelu_graph_to_neox(model, onnx_path, context)
    else:
        names = set(checked_names(arch))
        tensors = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer if i.name in names}
        missing = names - set(tensors)
        if missing:
            raise ConvertError(f"{onnx_path} lacks the weights {sorted(missing)[:3]}")
        config = llama_config(arch) if arch.get("family") == "llama" else neox_config(arch)
    config.update({"use_cache": True, "torch_dtype": "float32", **token_ids})
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "config.json"), config)
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    gen = {"do_sample": False, **{k: v for k, v in token_ids.items()}}
    write_json(os.path.join(out, "generation_config.json"), gen)
    return config


def _shape_config(arch: dict, cls: str, model_type: str) -> dict:
    """The config.json fields every architecture has: its class and its shape."""
    return {
        "architectures": [cls], "model_type": model_type,
        "hidden_size": arch["width"], "intermediate_size": arch["intermediate"],
        "num_hidden_layers": arch["layers"], "num_attention_heads": arch["heads"],
        "vocab_size": arch["vocab"], "max_position_embeddings": arch["context"],
    }


def llama_config(arch: dict) -> dict:
    """config.json of a Llama graph's architecture."""
    return {
        **_shape_config(arch, "LlamaForCausalLM", "llama"),
        # a grouped-query model was written with its key/value heads repeated: it comes back as multi-head
        "num_key_value_heads": arch["heads"], "head_dim": arch["head_dim"],
        # both spellings: transformers 4 and llama.cpp's converter read rope_theta, transformers 5 rope_parameters
        "rope_theta": arch["rope_theta"], "rope_scaling": None,
        "rope_parameters": {"rope_theta": arch["rope_theta"], "rope_type": "default"},
        "rms_norm_eps": arch["rms_norm_eps"],
        "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "attention_dropout": 0.0,
        "tie_word_embeddings": arch["tie_embeddings"], "initializer_range": 0.02, "pretraining_tp": 1,
    }


def neox_config(arch: dict) -> dict:
    """config.json of a GPT-NeoX architecture (rotary positions over whole heads)."""
    return {
        **_shape_config(arch, "GPTNeoXForCausalLM", "gpt_neox"),
        # transformers 5 reads rope_parameters; transformers 4, vLLM and llama.cpp's converter rotary_pct and
        # rotary_emb_base
        "rope_parameters": {"rope_theta": arch["rope_theta"], "partial_rotary_factor": 1.0, "rope_type": "default"},
        "rotary_pct": 1.0, "rotary_emb_base": arch["rope_theta"],
        "layer_norm_eps": arch["layer_norm_eps"], "use_parallel_residual": arch["parallel_residual"],
        "attention_bias": arch["attention_bias"], "hidden_act": arch["activation"],
        "tie_word_embeddings": arch["tie_embeddings"], "attention_dropout": 0.0, "hidden_dropout": 0.0,
        "initializer_range": 0.02,
    }


def gelu_graph_to_neox(model, onnx_path: str, context: int) -> tuple[dict, dict[str, np.ndarray]]:
    """A graph mavtrain exported in its own block (RMSNorm, GELU MLP) as GPT-NeoX's config and tensors
    (`hf_neox`: the residual stream in a wider zero-mean basis, where LayerNorm is RMSNorm)."""
    try:
        from .hf_neox import NeoxError, graph_weights, neox_weights
    except ImportError:  # run as a script: mavboard writes hf_neox.py beside this file
        from hf_neox import NeoxError, graph_weights, neox_weights

    past = [i for i in model.graph.input if i.name.startswith("past_key_values.") and i.name.endswith(".key")]
    dims = [d.dim_value for d in past[0].type.tensor_type.shape.dim] if past else []
    if len(dims) != 4 or not dims[1] or not dims[3]:
        raise ConvertError(f"{onnx_path} is not a mav-lm decoder graph (no past_key_values inputs of fixed heads)")
    layers, heads, head_dim = len(past), dims[1], dims[3]
    try:
        weights = graph_weights(model, layers)
        tensors, facts = neox_weights(weights, layers, heads, head_dim)
    except NeoxError as e:
        raise ConvertError(f"{onnx_path} is neither a standard-architecture graph (it records no {ARCH_KEY}) "
                           f"nor mavtrain's own GELU block: {e}") from e
    arch = {"layers": layers, "heads": facts["heads"], "width": facts["width"], "intermediate": facts["intermediate"],
            "vocab": tensors["embed_out.weight"].shape[0], "context": context, "rope_theta": facts["rope_theta"],
            "layer_norm_eps": facts["layer_norm_eps"], "parallel_residual": False, "attention_bias": True,
            "activation": "gelu", "tie_embeddings": False}
    return neox_config(arch), tensors


def checked_names(arch: dict) -> list[str]:
    if arch.get("family") == "gpt_neox":
        names = ["gpt_neox.embed_in.weight", arch["head"], "gpt_neox.final_layer_norm.weight",
                 "gpt_neox.final_layer_norm.bias"]
        for i in range(arch["layers"]):
            names += list(_neox_layer_names(i, arch["attention_bias"]).values())
        return list(dict.fromkeys(names))
    names = ["model.embed_tokens.weight", "model.norm.weight"]
    if not arch["tie_embeddings"]:
        names.append("lm_head.weight")
    for i in range(arch["layers"]):
        names += list(_layer_names(i).values())
    return names


def write_json(path: str, value) -> None:
    tmp = path + ".part"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int32 values are written as ten-byte varints, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, value) -> bytes:
    """One protobuf field: bytes/str length-delimited, float fixed32, bool/int varint."""
    if isinstance(value, (bytes, str)):
        data = value.encode() if isinstance(value, str) else value
        return _varint(number << 3 | 2) + _varint(len(data)) + data
    if isinstance(value, float):
        return _varint(number << 3 | 5) + struct.pack("<f", value)
    return _varint(number << 3) + _varint(int(value))


def sentencepiece_model(vocab: dict[str, int]) -> bytes:
    """A SentencePiece `tokenizer.model` (its ModelProto, serialised) whose pieces are exactly `vocab`, in id
    order: the space token written `▁` as SentencePiece writes spaces, `<unk>` the unknown piece, `<pad>`,
    `<eos>` and `<sep>` control pieces. llama.cpp's converter reads this file to build a GGUF's vocabulary
    (it refuses mavboard's word-level tokenizer.json, whose pre-tokenizer it does not know); mavboard sends
    token ids, so the map from ids to text is what has to be exact. Scores fall with the id."""
    special = {"<pad>", "<eos>", "<sep>"}
    pieces = b""
    for token, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        kind = 2 if token == "<unk>" else 3 if token in special else 1  # UNKNOWN, CONTROL, NORMAL
        pieces += _field(1, _field(1, token.replace(" ", "\u2581")) + _field(2, -float(i)) + _field(3, kind))
    trainer = (_field(3, 2) + _field(4, len(vocab)) + _field(35, False) + _field(40, vocab.get("<unk>", 0))
               + _field(41, -1) + _field(42, vocab.get("<eos>", -1)) + _field(43, vocab.get("<pad>", -1))
               + _field(45, "<unk>") + _field(47, "<eos>") + _field(48, "<pad>"))
    normalizer = _field(1, "identity") + _field(3, False) + _field(4, False) + _field(5, True)
    return pieces + _field(2, trainer) + _field(3, normalizer)


def package_to_folder(package: str, out: str) -> dict:
    """Writes a `mav-lm` package as a Hugging Face folder at `out` (which must not exist or be empty):
    config.json, model.safetensors, generation_config.json, the tokenizer as tokenizer.json +
    tokenizer_config.json (`PreTrainedTokenizerFast`, no chat template) and as a SentencePiece
    tokenizer.model (for llama.cpp's converter: `sentencepiece_model`), and the package's mav.json (the MAV
    facts no Hugging Face file holds). Written beside `out` and renamed into place. Returns config.json."""
    import shutil

    manifest_path = os.path.join(package, "mav.json")
    if not os.path.isfile(manifest_path):
        raise ConvertError(f"{package} has no mav.json: is it a mavboard model package?")
    with open(manifest_path) as f:
        manifest = json.load(f)
    if manifest.get("format") != "mav-lm":
        raise ConvertError(f"{package} is a {manifest.get('format')!r} package; only mav-lm (a language model) "
                           "becomes a Hugging Face causal language model")
    if manifest.get("remote"):
        raise ConvertError(f"{package} is served by a remote server and holds no weights to export")
    if os.path.exists(out) and os.listdir(out):
        raise ConvertError(f"{out} already exists and is not empty; choose another folder or remove it")
    ids = {"bos_token_id": None, "eos_token_id": manifest.get("eos_token_id"),
           "pad_token_id": manifest.get("pad_token_id")}
    tmp = out.rstrip("/") + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        config = graph_to_folder(os.path.join(package, "model.onnx"), tmp, ids,
                                 int(manifest.get("context_length") or 2048))
        shutil.copyfile(os.path.join(package, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
        with open(os.path.join(package, "tokenizer.json")) as f:
            vocab = json.load(f)["model"]["vocab"]
        with open(os.path.join(tmp, "tokenizer.model"), "wb") as f:
            f.write(sentencepiece_model(vocab))
        write_json(os.path.join(tmp, "tokenizer_config.json"), {
            "tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<pad>", "eos_token": "<eos>",
            "unk_token": "<unk>", "sep_token": "<sep>", "model_max_length": manifest.get("context_length"),
            "clean_up_tokenization_spaces": False,
        })
        shutil.copyfile(manifest_path, os.path.join(tmp, "mav.json"))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if os.path.exists(out):
        os.rmdir(out)
    os.replace(tmp, out)
    return config


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="a Hugging Face folder -> the ONNX graph")
    imp.add_argument("folder", help="a Hugging Face model folder (config.json, model.safetensors)")
    imp.add_argument("out", help="the ONNX graph to write")
    imp.add_argument("--vocab", type=int, help="the tokenizer's size (extra embedding rows are dropped)")
    exp = sub.add_parser("export", help="a mav-lm package -> a Hugging Face folder")
    exp.add_argument("package", help="the mav-lm package folder")
    exp.add_argument("out", help="the folder to write")
    a = ap.parse_args(argv)
    try:
        if a.command == "import":
            found = folder_to_graph(a.folder, a.out, a.vocab)
            found["folder"] = os.path.abspath(a.folder)
        else:
            found = package_to_folder(a.package, a.out)
    except ConvertError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (KeyError, ValueError, TypeError) as e:
        # a config.json or safetensors header without a field the format requires, or with a value of the
        # wrong kind: named for the user rather than as a traceback
        where = a.folder if a.command == "import" else a.package
        print(f"error: {where} is malformed: {type(e).__name__} {e} (a field missing or of the wrong kind in "
              "config.json, mav.json or a safetensors header)", file=sys.stderr)
        return 2
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
