"""Export a run as a mavboard model package:
`python -m mavtrain.export --run RUN_DIR --out PACKAGE_DIR`.

Writes model.onnx, tokenizer.json (copied from the data dir; none for action-value), mav.json and
MODEL_CARD.md. The exported weights are the run's EMA (Polyak) weights from its last checkpoint.
Before writing the package the ONNX graph is run with ONNX Runtime (CPU) and compared with
PyTorch; the export fails when any logit differs by more than --tolerance (default 1e-4).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import torch

from . import data as D
from .models import ModelConfig, build_model, count_parameters
from .run_log import read_log

OPSET = 17


class ExportError(Exception):
    """The run cannot be exported, or the ONNX graph disagrees with PyTorch."""


# ---------------------------------------------------------------------------------------------
# graph wrappers


class _LMWithPast(torch.nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask, position_ids, *past_flat):
        past = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(len(past_flat) // 2)]
        logits, presents = self.lm.forward_with_past(input_ids, attention_mask, position_ids, past)
        out = [logits]
        for k, v in presents:
            out += [k, v]
        return tuple(out)


def lm_io_names(num_layers: int):
    past = [f"past_key_values.{i}.{kv}" for i in range(num_layers) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(num_layers) for kv in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids"] + past, ["logits"] + present


def llama_config(cfg: ModelConfig) -> dict:
    """The architecture of a swiglu `MavLM` in `hf_llama`'s terms."""
    return {"family": "llama", "layers": cfg.num_layers, "heads": cfg.num_heads, "kv_heads": cfg.num_heads,
            "head_dim": cfg.head_dim, "width": cfg.d_model, "intermediate": cfg.d_ff, "vocab": cfg.vocab_size,
            "context": cfg.context_length, "rope_theta": float(cfg.rope_base), "rms_norm_eps": float(cfg.norm_eps),
            "tie_embeddings": bool(cfg.tie_embeddings)}


def llama_weights(model: torch.nn.Module, cfg: ModelConfig) -> dict:
    """A swiglu `MavLM`'s weights under their Hugging Face Llama names (the fused qkv split in three)."""
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    d = cfg.d_model
    out = {"model.embed_tokens.weight": sd["embed.weight"], "model.norm.weight": sd["norm.weight"]}
    if not cfg.tie_embeddings:
        out["lm_head.weight"] = sd["lm_head.weight"]
    for i in range(cfg.num_layers):
        b, p = f"blocks.{i}.", f"model.layers.{i}."
        qkv = sd[b + "attn.qkv.weight"]
        out.update({
            p + "input_layernorm.weight": sd[b + "norm1.weight"],
            p + "self_attn.q_proj.weight": qkv[:d], p + "self_attn.k_proj.weight": qkv[d:2 * d],
            p + "self_attn.v_proj.weight": qkv[2 * d:], p + "self_attn.o_proj.weight": sd[b + "attn.proj.weight"],
            p + "post_attention_layernorm.weight": sd[b + "norm2.weight"],
            p + "mlp.gate_proj.weight": sd[b + "gate.weight"], p + "mlp.up_proj.weight": sd[b + "fc1.weight"],
            p + "mlp.down_proj.weight": sd[b + "fc2.weight"],
        })
    return out


def export_onnx(fmt: str, model: torch.nn.Module, cfg: ModelConfig, path: str) -> None:
    with warnings.catch_warnings():
        # the TorchScript exporter (dynamo=False) is deprecated but is the one that keeps
        # dynamic_axes and the decoder-with-past layout; it is checked against ORT below
        warnings.simplefilter("ignore")
        _export_onnx(fmt, model, cfg, path)


def _export_onnx(fmt: str, model: torch.nn.Module, cfg: ModelConfig, path: str) -> None:
    model.eval()
    kw = dict(opset_version=OPSET, dynamo=False, do_constant_folding=True)
    if fmt == "mav-lm" and cfg.mlp == "swiglu":
        # a Llama block: the standard-architecture graph, weights under their Hugging Face names, so that
        # `mavtrain.export_hf` can write the package as a LlamaForCausalLM folder
        from .hf_llama import build_graph, save_graph

        save_graph(build_graph(llama_weights(model, cfg), llama_config(cfg)), path)
        return
    with torch.no_grad():
        if fmt == "mav-lm":
            inputs, outputs = lm_io_names(cfg.num_layers)
            b, s, p = 2, 3, 2
            ids = torch.ones(b, s, dtype=torch.int64)
            att = torch.ones(b, p + s, dtype=torch.int64)
            pos = torch.arange(p, p + s, dtype=torch.int64).unsqueeze(0).expand(b, s).contiguous()
            past = [torch.zeros(b, cfg.num_heads, p, cfg.head_dim) for _ in range(2 * cfg.num_layers)]
            axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}, "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
            for n in inputs[3:]:
                axes[n] = {0: "batch", 2: "past"}
            for n in outputs[1:]:
                axes[n] = {0: "batch", 2: "total"}
            torch.onnx.export(_LMWithPast(model), (ids, att, pos, *past), path, input_names=inputs, output_names=outputs, dynamic_axes=axes, **kw)
        elif fmt == "mav-encoder":
            ids = torch.ones(2, 5, dtype=torch.int64)
            att = torch.ones(2, 5, dtype=torch.int64)
            axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "value_logits": {0: "batch", 1: "seq"}, "best_logits": {0: "batch", 1: "seq"}}
            torch.onnx.export(model, (ids, att), path, input_names=["input_ids", "attention_mask"], output_names=["value_logits", "best_logits"], dynamic_axes=axes, **kw)
        else:
            ids = torch.zeros(2, D.AV_STATE_LEN + 1, dtype=torch.int64)
            torch.onnx.export(model, (ids,), path, input_names=["input_ids"], output_names=["logits"], dynamic_axes={"input_ids": {0: "batch"}, "logits": {0: "batch"}}, **kw)
    import onnx

    from .onnx_dedup import share_transposed_initializers

    graph = onnx.load(path)
    if share_transposed_initializers(graph):
        onnx.save(graph, path)
    onnx.checker.check_model(onnx.load(path))


# ---------------------------------------------------------------------------------------------
# ONNX Runtime vs PyTorch


def _session(path: str):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def _maxdiff(a, b) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ExportError(f"shape mismatch between ONNX {a.shape} and PyTorch {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ExportError("non-finite logits in the export check")
    return float(np.abs(a - b).max())


def check_lm(model, cfg: ModelConfig, path: str, rng: np.random.Generator) -> dict:
    sess = _session(path)
    L, H, hd, V = cfg.num_layers, cfg.num_heads, cfg.head_dim, cfg.vocab_size
    inputs, _ = lm_io_names(L)

    def run(ids, att, pos, past):
        feed = {"input_ids": ids, "attention_mask": att, "position_ids": pos}
        for name, t in zip(inputs[3:], past):
            feed[name] = t
        out = sess.run(None, feed)
        return out[0], out[1:]

    def empty_past(b):
        return [np.zeros((b, H, 0, hd), dtype=np.float32) for _ in range(2 * L)]

    def torch_logits(ids):
        with torch.no_grad():
            return model(torch.from_numpy(ids)).numpy()

    T = min(24, cfg.context_length)
    seq = rng.integers(0, V, size=(1, T), dtype=np.int64)
    ref = torch_logits(seq)
    diffs = {}

    # 1. full sequence, empty past
    logits, present = run(seq, np.ones((1, T), np.int64), np.arange(T, dtype=np.int64)[None], empty_past(1))
    diffs["full_sequence"] = _maxdiff(logits, ref)
    if present[0].shape != (1, H, T, hd):
        raise ExportError(f"present.0.key has shape {present[0].shape}, expected {(1, H, T, hd)}")

    # 2. prompt, then 3 single-token steps with the cache
    P = T - 3
    logits, past = run(seq[:, :P], np.ones((1, P), np.int64), np.arange(P, dtype=np.int64)[None], empty_past(1))
    d = _maxdiff(logits, ref[:, :P])
    for i in range(P, T):
        logits, past = run(seq[:, i : i + 1], np.ones((1, i + 1), np.int64), np.array([[i]], np.int64), past)
        d = max(d, _maxdiff(logits, ref[:, i : i + 1]))
    diffs["incremental_3_steps"] = d

    # 3. left-padded batch of two lengths (+ one decoding step on it)
    lens = [T - 2, T // 2]
    seqs = [rng.integers(0, V, size=(n + 1,), dtype=np.int64) for n in lens]
    W = max(lens)
    ids = np.zeros((2, W), np.int64)
    att = np.zeros((2, W), np.int64)
    for r, (n, s) in enumerate(zip(lens, seqs)):
        ids[r, W - n :] = s[:n]
        att[r, W - n :] = 1
    pos = np.clip(np.cumsum(att, axis=1) - 1, 0, None)
    logits, past = run(ids, att, pos, empty_past(2))
    d = 0.0
    for r, (n, s) in enumerate(zip(lens, seqs)):
        d = max(d, _maxdiff(logits[r, W - n :], torch_logits(s[None, :n])[0]))
    step_ids = np.array([[s[n]] for n, s in zip(lens, seqs)], np.int64)
    att2 = np.concatenate([att, np.ones((2, 1), np.int64)], axis=1)
    pos2 = np.array([[n] for n in lens], np.int64)
    logits, _ = run(step_ids, att2, pos2, past)
    for r, (n, s) in enumerate(zip(lens, seqs)):
        d = max(d, _maxdiff(logits[r], torch_logits(s[None, : n + 1])[0, -1:]))
    diffs["left_padded_batch"] = d
    return diffs


def check_encoder(model, cfg: ModelConfig, path: str, rng: np.random.Generator) -> dict:
    sess = _session(path)
    lens = [min(20, cfg.context_length), min(11, cfg.context_length)]
    W = max(lens)
    seqs = [rng.integers(0, cfg.vocab_size, size=(n,), dtype=np.int64) for n in lens]
    ids = np.zeros((2, W), np.int64)
    att = np.zeros((2, W), np.int64)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = s
        att[r, : len(s)] = 1
    v, b = sess.run(None, {"input_ids": ids, "attention_mask": att})
    with torch.no_grad():
        tv, tb = model(torch.from_numpy(ids), torch.from_numpy(att))
    diffs = {"padded_batch": max(_maxdiff(v, tv.numpy()), _maxdiff(b, tb.numpy()))}
    d = 0.0
    for r, s in enumerate(seqs):
        with torch.no_grad():
            sv, sb = model(torch.from_numpy(s[None]), torch.ones((1, len(s)), dtype=torch.int64))
        n = len(s)
        d = max(d, _maxdiff(v[r, :n], sv.numpy()[0]), _maxdiff(b[r, :n], sb.numpy()[0]))
    diffs["padded_vs_single"] = d
    return diffs


def check_av(model, cfg: ModelConfig, path: str, rng: np.random.Generator) -> dict:
    sess = _session(path)
    B = 5
    ids = np.concatenate(
        [rng.integers(0, cfg.vocab_size, size=(B, D.AV_STATE_LEN)), rng.integers(0, cfg.av_action_vocab_size, size=(B, 1))], axis=1
    ).astype(np.int64)
    (out,) = sess.run(None, {"input_ids": ids})
    with torch.no_grad():
        ref = model(torch.from_numpy(ids)).numpy()
    (one,) = sess.run(None, {"input_ids": ids[:1]})
    return {"batch_5": _maxdiff(out, ref), "batch_1": _maxdiff(one, ref[:1])}


CHECKS = {"mav-lm": check_lm, "mav-encoder": check_encoder, "action-value": check_av}


# ---------------------------------------------------------------------------------------------
# package


def load_run(run_dir: str):
    ck_path = os.path.join(run_dir, "checkpoint.pt")
    info_path = os.path.join(run_dir, "run_info.json")
    if not os.path.exists(ck_path) or not os.path.exists(info_path):
        raise ExportError(f"{run_dir} has no checkpoint.pt/run_info.json; train it first with `python -m mavtrain.train`")
    ck = torch.load(ck_path, map_location="cpu", weights_only=False)
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    with open(os.path.join(run_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    cfg = ModelConfig.from_dict(ck["model_config"])
    model = build_model(ck["format"], cfg)
    model.load_state_dict({k: v.float() for k, v in ck["ema"].items()})
    model.eval()
    return ck, info, config, cfg, model


def build_mav_json(fmt, name, cfg: ModelConfig, info, ck, tokenizer) -> dict:
    meta = info["meta"]
    games = list(meta.get("games", []))
    if fmt == "action-value":
        # the 1968-action vocabulary of Ruoss et al. is chess's (UCI moves); the AV split is chess only
        games = ["chess"]
    m = {"format": fmt, "format_version": 1, "name": name, "games": games}
    if fmt == "action-value":
        m["num_buckets"] = cfg.num_buckets
    else:
        ids = D.special_ids(tokenizer, meta["num_buckets"])
        m["num_buckets"] = meta["num_buckets"]
        m["value_token_ids"] = ids["values"]
        m["pad_token_id"] = ids["pad"]
        if fmt == "mav-lm":
            m["eos_token_id"] = ids["eos"]
    m.update(
        {
            "vocab_size": cfg.vocab_size,
            "context_length": cfg.context_length,
            "num_layers": cfg.num_layers,
            "num_heads": cfg.num_heads,
            "head_dim": cfg.head_dim,
            "d_model": cfg.d_model,
            "internal_search": bool(info.get("internal_search", False)),
        }
    )
    if fmt == "action-value":
        m["av_state_length"] = D.AV_STATE_LEN
        m["av_action_vocab_size"] = cfg.av_action_vocab_size
    m["parameters"] = int(info["parameters"])
    m["training"] = {
        "data": os.path.basename(os.path.normpath(info["data_dir"])),
        "examples": int(info["data"]["train"]["examples"]),
        "tokens": int(ck["seen"]["tokens"]),
        "steps": int(ck["step"]),
        "wall_time_s": round(float(ck["wall_time_s"]), 3),
        "device": f"{info['device']} ({info['precision']})",
        "machine": info["machine"],
    }
    m["created"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return m


def _fmt(v) -> str:
    if v is None:
        return "not logged"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def model_card(m: dict, info: dict, config: dict, log: list[dict], diffs: dict, tolerance: float) -> str:
    evals = [e for e in log if any(k.startswith("val_") for k in e)]
    trains = [e for e in log if "loss" in e]
    last_eval = evals[-1] if evals else {}
    tps = [e["tokens_per_s"] for e in trains]
    eps = [e["examples_per_s"] for e in trains]
    tr = m["training"]
    meta = info["meta"]
    lines = [
        f"# {m['name']}",
        "",
        f"A `{m['format']}` model package for mavboard, trained with mavboard's `training/` pipeline (mavtrain).",
        "Every number below was logged by the training run or measured by the export; none is estimated.",
        "",
        "## Model",
        "",
        f"- Format: `{m['format']}` (format_version {m['format_version']})",
        f"- Parameters: {m['parameters']:,}",
        f"- Layers {m['num_layers']}, heads {m['num_heads']}, head_dim {m['head_dim']}, d_model {m['d_model']}, "
        f"context length {m['context_length']}, vocabulary {m['vocab_size']}",
        f"- Value buckets: {m['num_buckets']}",
        f"- Games: {', '.join(m['games']) or 'none listed'}",
        f"- Internal search examples in training: {'yes' if m['internal_search'] else 'no'}",
        "",
        "## Data",
        "",
        f"- Data dir: `{tr['data']}`",
        f"- Source (from meta.json): `{json.dumps(meta.get('source', {}), sort_keys=True)}`",
    ]
    for split, s in info["data"].items():
        lines.append(f"- {split}: " + ", ".join(f"{k} {json.dumps(v) if isinstance(v, dict) else v}" for k, v in s.items()))
    warm = info.get("init_from")
    taught = (warm or {}).get("distilled_from")
    if taught:
        tt = taught.get("training") or {}
        lines.append(
            f"- Distilled: trained to compute what the package `{taught.get('name')}` computes ({taught.get('mlp')} MLP of "
            f"{taught.get('d_ff')}, {taught.get('parameters'):,} parameters; itself trained {tt.get('steps')} steps on "
            f"{tt.get('tokens')} tokens of `{tt.get('data')}` in {tt.get('wall_time_s')} s on {tt.get('device')}): the loss is the "
            "KL divergence to its next-token distributions plus the blocks' MLP errors against its MLPs (mavtrain.distill); "
            "the weights outside the MLPs started as its own. The compute below is the distillation's alone."
        )
    elif warm:
        wt = warm.get("training") or {}
        lines.append(
            f"- Fine-tuned: started from the package `{warm.get('name')}` (games {', '.join(warm.get('games') or [])}; "
            f"vocabulary {warm.get('vocab_size')}"
            + (f", extended to {m['vocab_size']}" if warm.get("vocab_size") != m["vocab_size"] else ", unchanged")
            + f"), itself trained {wt.get('steps')} steps on "
            f"{wt.get('tokens')} tokens of `{wt.get('data')}` in {wt.get('wall_time_s')} s on {wt.get('device')}, {wt.get('machine')}. "
            "The compute below is the fine-tuning's alone."
        )
    lines += [
        "",
        "## Compute",
        "",
        f"- Device: {tr['device']}; machine: {tr['machine']}",
        f"- Steps: {tr['steps']}, batch size {config['train']['batch_size']} x {config['train']['grad_accum']} accumulation",
        f"- Tokens processed: {tr['tokens']:,}; wall time {tr['wall_time_s']:.1f} s",
        f"- Throughput (logged windows): tokens/s median {_fmt(float(np.median(tps)) if tps else None)}, "
        f"examples/s median {_fmt(float(np.median(eps)) if eps else None)}",
        f"- Optimiser: AdamW lr {config['train']['lr']}, warm-up {config['train']['warmup_steps']} steps then cosine to "
        f"{config['train']['min_lr_ratio']} x lr; EMA decay {config['train']['ema_decay']} (exported weights)",
        "",
        "## Metrics",
        "",
        f"- Final logged training loss: {_fmt(trains[-1]['loss'] if trains else None)} (step {trains[-1]['step'] if trains else '-'})",
    ]
    teacher_eval = next((e for e in log if any(k.startswith("teacher_val_") for k in e)), None)
    if last_eval:
        lines.append(f"- Validation (EMA weights, step {last_eval['step']}): " + ", ".join(f"{k} {_fmt(v)}" for k, v in last_eval.items() if k.startswith("val_")))
    else:
        lines.append("- Validation: not logged (no val split)")
    if teacher_eval:
        lines.append("- The package distilled from, on the same validation batches: "
                     + ", ".join(f"{k[len('teacher_'):]} {_fmt(v)}" for k, v in teacher_eval.items() if k.startswith("teacher_val_")))
    lines += [
        "",
        "## Export check (ONNX Runtime CPU vs PyTorch, max abs logit difference)",
        "",
        *[f"- {k}: {v:.3g}" for k, v in diffs.items()],
        f"- Tolerance: {tolerance:g}; opset {OPSET}",
        "",
        "## Use and limits",
        "",
        "Load the folder with mavboard. The model only knows positions like those in its data; values are",
        "model estimates, not engine evaluations. License of the weights follows the training data's sources.",
        "",
    ]
    return "\n".join(lines)


def export(run_dir: str, out_dir: str, name: str | None = None, data_dir: str | None = None, tolerance: float = 1e-4, seed: int = 0) -> dict:
    ck, info, config, cfg, model = load_run(run_dir)
    fmt = ck["format"]
    tokenizer = None
    tok_src = None
    if fmt != "action-value":
        ddir = data_dir or info["data_dir"]
        tok_src = os.path.join(ddir, info["meta"].get("tokenizer", "tokenizer.json"))
        if not os.path.exists(tok_src):
            raise ExportError(f"{tok_src} not found; pass --data with the data dir the run was trained on")
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(tok_src)
        if tokenizer.get_vocab_size(with_added_tokens=True) != cfg.vocab_size:
            raise ExportError(f"{tok_src} has {tokenizer.get_vocab_size()} tokens but the model has {cfg.vocab_size}; wrong data dir?")
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        onnx_tmp = os.path.join(tmp, "model.onnx")
        export_onnx(fmt, model, cfg, onnx_tmp)
        diffs = CHECKS[fmt](model, cfg, onnx_tmp, np.random.default_rng(seed))
        for k, v in diffs.items():
            print(f"check {k}: max abs diff {v:.3g}", flush=True)
        bad = {k: v for k, v in diffs.items() if not v <= tolerance}
        if bad:
            raise ExportError(f"ONNX Runtime disagrees with PyTorch beyond {tolerance:g}: {bad}; the package was not written")
        os.replace(onnx_tmp, os.path.join(out_dir, "model.onnx"))
    if tok_src:
        shutil.copyfile(tok_src, os.path.join(out_dir, "tokenizer.json"))
    m = build_mav_json(fmt, name or config["name"], cfg, info, ck, tokenizer)
    if count_parameters(model) != m["parameters"]:
        raise ExportError("parameter count of the checkpoint differs from run_info.json")
    with open(os.path.join(out_dir, "mav.json"), "w", encoding="utf-8") as f:
        json.dump(m, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write(model_card(m, info, config, read_log(run_dir), diffs, tolerance))
    return {"mav": m, "diffs": diffs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavtrain.export", description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, help="run dir written by mavtrain.train")
    ap.add_argument("--out", required=True, help="package dir to write (e.g. assets/models/<name>)")
    ap.add_argument("--name", help="model name in mav.json (default: the config's name)")
    ap.add_argument("--data", help="data dir holding tokenizer.json (default: the one the run recorded)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max abs ONNX-vs-PyTorch logit difference")
    args = ap.parse_args(argv)
    try:
        res = export(args.run, args.out, args.name, args.data, args.tolerance)
    except (ExportError, D.DataError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res["diffs"], indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
