"""The inspection graph of a `mav-encoder` package: `python -m mavtrain.inspect_export --package DIR`.

Writes `inspect.onnx` beside the package's `model.onnx` and declares it in mav.json (`inspection`). It is
the same model with the same weights (read back from `model.onnx` by `warmstart.load_package_weights`,
so no checkpoint is needed), written with the attention computed explicitly so that its parts can be
seen and changed:

inputs  `input_ids`, `attention_mask` [batch, seq] (int64, as model.onnx), and
        `head_scale` [num_layers, num_heads] (float): every head's output is multiplied by its entry
        before the output projection (1 = unchanged, 0 = the head removed);
outputs `value_logits` [batch, seq, K], `best_logits` [batch, seq] (as model.onnx, under head_scale),
        `attention` [batch, layers, heads, seq, seq]: each head's attention probabilities (query row,
        key column; every row sums to 1, padding keys get 0),
        `residual` [batch, layers + 1, seq, d_model]: the residual stream after the embedding and after
        each layer,
        `lens_logits` [batch, layers, seq, K]: the logit lens, the package's own final norm and value
        head applied to the residual stream after each layer (at the last layer: `value_logits`).

The graph stores no second copy of the weights: each large initializer is ONNX external data pointing at
the bytes of the same tensor inside `model.onnx` (location `model.onnx`, offset, length), so the package
grows by about 0.1 MB instead of the model's size. mav.json records model.onnx's size and a checksum
(`weights`, see `weights_checksum`), which mavboard checks before it opens the graph: a re-exported
model.onnx needs this command run again. `--standalone` writes a graph with its own copy instead.

Before anything is written, ONNX Runtime runs both graphs on a padded batch: with every head scale 1
the inspection graph's `value_logits`, `best_logits` and last-layer `lens_logits` must equal model.onnx's
outputs within --tolerance (default 1e-5), its outputs PyTorch's within 1e-4, and every attention row
must sum to 1. `model.onnx` is never rewritten. Inspection runs only on demand (mavboard's
`inference::inspect`, `mavboard inspect`), never in search.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .export import OPSET, ExportError, _maxdiff, _session
from .models import MavEncoder, ModelConfig, apply_rope, padding_mask

INSPECT_FILE = "inspect.onnx"
INPUTS = ["input_ids", "attention_mask", "head_scale"]
OUTPUTS = ["value_logits", "best_logits", "attention", "residual", "lens_logits"]
CARD_HEADING = "## Inspection graph"


class InspectEncoder(nn.Module):
    """A `MavEncoder` whose forward pass also returns its attention, residual stream and logit lens."""

    def __init__(self, encoder: MavEncoder):
        super().__init__()
        self.enc = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, head_scale: torch.Tensor):
        enc = self.enc
        cfg = enc.cfg
        b, s = input_ids.shape
        h, hd, d = cfg.num_heads, cfg.head_dim, cfg.d_model
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0).expand(b, s)
        cos, sin = enc.rotary(pos)
        mask = padding_mask(attention_mask)  # [B, 1, 1, S]
        x = enc.embed(input_ids)
        residual, attention, lens = [x], [], []
        for layer, blk in enumerate(enc.blocks):
            q, k, v = blk.attn.qkv(blk.norm1(x)).view(b, s, 3, h, hd).permute(2, 0, 3, 1, 4).unbind(0)
            q = apply_rope(q, cos, sin)
            k = apply_rope(k, cos, sin)
            scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + mask
            probs = F.softmax(scores, dim=-1)  # [B, H, S, S]
            out = torch.matmul(probs, v) * head_scale[layer].view(1, h, 1, 1)
            x = x + blk.attn.proj(out.transpose(1, 2).reshape(b, s, d))
            x = x + blk.fc2(F.gelu(blk.fc1(blk.norm2(x))))
            residual.append(x)
            attention.append(probs)
            lens.append(enc.value_head(enc.norm(x)))
        best = enc.best_head(enc.norm(x)).squeeze(-1)
        return lens[-1], best, torch.stack(attention, 1), torch.stack(residual, 1), torch.stack(lens, 1)


def export_inspect_onnx(model: MavEncoder, cfg: ModelConfig, path: str) -> None:
    """Writes the inspection graph of `model` to `path` (dynamic batch and sequence)."""
    import onnx

    from .onnx_dedup import share_transposed_initializers

    wrapper = InspectEncoder(model).eval()
    ids = torch.ones(2, 5, dtype=torch.int64)
    att = torch.ones(2, 5, dtype=torch.int64)
    scale = torch.ones(cfg.num_layers, cfg.num_heads)
    axes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "value_logits": {0: "batch", 1: "seq"},
        "best_logits": {0: "batch", 1: "seq"},
        "attention": {0: "batch", 3: "seq", 4: "seq"},
        "residual": {0: "batch", 2: "seq"},
        "lens_logits": {0: "batch", 2: "seq"},
    }
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated; the graph is checked below
        torch.onnx.export(
            wrapper,
            (ids, att, scale),
            path,
            input_names=INPUTS,
            output_names=OUTPUTS,
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    graph = onnx.load(path)
    if share_transposed_initializers(graph):
        onnx.save(graph, path)
    onnx.checker.check_model(onnx.load(path))


def _padded_batch(cfg: ModelConfig, rng: np.random.Generator):
    lens = [min(24, cfg.context_length), min(13, cfg.context_length)]
    width = max(lens)
    ids = np.zeros((2, width), np.int64)
    att = np.zeros((2, width), np.int64)
    for r, n in enumerate(lens):
        ids[r, :n] = rng.integers(0, cfg.vocab_size, size=(n,))
        att[r, :n] = 1
    return ids, att


def check_inspect(model: MavEncoder, cfg: ModelConfig, inspect_path: str, model_path: str, rng: np.random.Generator) -> dict:
    """Max abs differences of the inspection graph against model.onnx and PyTorch (see the module doc)."""
    ids, att = _padded_batch(cfg, rng)
    ones = np.ones((cfg.num_layers, cfg.num_heads), np.float32)
    value, best, attention, residual, lens = _session(inspect_path).run(None, {"input_ids": ids, "attention_mask": att, "head_scale": ones})
    ref_value, ref_best = _session(model_path).run(None, {"input_ids": ids, "attention_mask": att})
    with torch.no_grad():
        tv, tb, ta, tr, tl = InspectEncoder(model).eval()(torch.from_numpy(ids), torch.from_numpy(att), torch.from_numpy(ones))
    real = att.astype(bool)  # [B, S]: rows of real tokens
    row_sums = attention.sum(-1)  # [B, L, H, S]
    rows = row_sums.transpose(0, 3, 1, 2)[real]  # [real tokens, L, H]
    expected = (cfg.num_layers + 1, cfg.d_model)
    if residual.shape[1:2] + residual.shape[3:] != expected:
        raise ExportError(f"residual has shape {residual.shape}, expected [batch, {expected[0]}, seq, {expected[1]}]")
    mask = real[:, :, None]
    return {
        "value_logits_vs_model_onnx": _maxdiff(value * mask, ref_value * mask),
        "best_logits_vs_model_onnx": _maxdiff(best * real, ref_best * real),
        "lens_last_layer_vs_model_onnx": _maxdiff(lens[:, -1] * mask, ref_value * mask),
        "attention_row_sum_minus_1": float(np.abs(rows - 1.0).max()),
        "vs_pytorch": max(
            _maxdiff(value, tv.numpy()), _maxdiff(best, tb.numpy()), _maxdiff(attention, ta.numpy()), _maxdiff(residual, tr.numpy()), _maxdiff(lens, tl.numpy())
        ),
    }


def weights_checksum(path: str) -> str:
    """The checksum mav.json records for the file the graph reads its weights from: the file padded with
    zeros to a multiple of 8 bytes, read as little-endian u64 words w_i, and sum_i w_i * (2i + 1) mod 2^64,
    as 16 hex digits (mavboard's `inference::inspect::weights_checksum` computes the same)."""
    with open(path, "rb") as f:
        data = f.read()
    data += b"\0" * (-len(data) % 8)
    w = np.frombuffer(data, dtype="<u8")
    odd = np.arange(len(w), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    with np.errstate(over="ignore"):
        total = int(np.sum(w * odd, dtype=np.uint64))
    return f"{total:016x}"


def share_weights(graph_path: str, model_path: str, out_path: str, min_bytes: int = 1024) -> int:
    """Writes `graph_path` to `out_path` with every initializer of at least `min_bytes` that appears, byte
    for byte and once, in `model_path` replaced by external data pointing there; returns how many were."""
    import onnx

    graph = onnx.load(graph_path)
    with open(model_path, "rb") as f:
        blob = f.read()
    location = os.path.basename(model_path)
    shared = 0
    for init in graph.graph.initializer:
        raw = init.raw_data
        if len(raw) < min_bytes:
            continue
        offset = blob.find(raw)
        if offset < 0 or blob.find(raw, offset + 1) >= 0:
            continue
        init.ClearField("raw_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(len(raw)))):
            entry = init.external_data.add()
            entry.key, entry.value = key, value
        shared += 1
    onnx.save(graph, out_path)
    return shared


def _check(diffs: dict, tolerance: float) -> None:
    limits = {k: (1e-4 if k == "vs_pytorch" else tolerance) for k in diffs}
    bad = {k: v for k, v in diffs.items() if not v <= limits[k]}
    if bad:
        raise ExportError(f"the inspection graph disagrees beyond the tolerances {limits}: {bad}; nothing was written")


def inspection_entry(model_path: str | None = None) -> dict:
    """The mav.json `inspection` entry (read by mavboard's `model::manifest::InspectionSpec`); with
    `model_path`, the graph reads its weights from that file and the entry records its size and checksum."""
    entry = {"file": INSPECT_FILE, "head_scale": "head_scale", "attention": "attention", "residual": "residual", "lens_logits": "lens_logits"}
    if model_path is not None:
        entry["weights"] = {"file": os.path.basename(model_path), "bytes": os.path.getsize(model_path), "checksum": weights_checksum(model_path)}
    return entry


def card_section(diffs: dict, size: int, shared: bool = True) -> str:
    return "\n".join(
        [
            CARD_HEADING,
            "",
            f"`{INSPECT_FILE}` ({size / 1e3:.0f} kB, declared in mav.json `inspection`) is this model with the same weights and",
            "extra outputs for `mavboard inspect`: each layer's and head's attention probabilities, the residual stream",
            "after each layer, and the logit lens (the final norm and value head after each layer); an input",
            "`head_scale` [layers, heads] scales each head's output (1 unchanged, 0 removed). It runs only on demand,",
            "never in search. Written by `python -m mavtrain.inspect_export --package assets/models/mav-enc-tiny`",
            "(the weights read back from model.onnx, which is unchanged"
            + ("; the graph stores none of its own: it reads them from model.onnx as ONNX external data, so re-run the command after model.onnx changes" if shared else "")
            + "); its check (ONNX Runtime, padded batch,",
            "max abs difference): " + ", ".join(f"{k} {v:.2g}" for k, v in diffs.items()) + ".",
            "",
        ]
    )


def _update_card(path: str, section: str) -> None:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if CARD_HEADING in text:
        start = text.index(CARD_HEADING)
        nxt = text.find("\n## ", start + len(CARD_HEADING))
        text = text[:start] + section + ("\n" + text[nxt + 1 :] if nxt >= 0 else "")
    else:
        anchor = text.find("\n## Use and limits")
        text = text[: anchor + 1] + section + "\n" + text[anchor + 1 :] if anchor >= 0 else text.rstrip("\n") + "\n\n" + section
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def package_model(package_dir: str, d_ff: int | None = None) -> tuple[MavEncoder, ModelConfig, dict]:
    """The package's mav-encoder in PyTorch, its weights read back from model.onnx (and checked)."""
    from .warmstart import load_package_weights

    with open(os.path.join(package_dir, "mav.json"), encoding="utf-8") as f:
        meta = json.load(f)
    if meta.get("format") != "mav-encoder":
        raise ExportError(f"{package_dir} is a {meta.get('format')!r} package; the inspection graph is written for mav-encoder packages")
    cfg = ModelConfig.from_dict(
        {
            "d_model": meta["d_model"],
            "num_layers": meta["num_layers"],
            "num_heads": meta["num_heads"],
            "d_ff": d_ff or 4 * meta["d_model"],
            "context_length": meta["context_length"],
            "vocab_size": meta["vocab_size"],
            "num_buckets": meta["num_buckets"],
        }
    )
    model = MavEncoder(cfg)
    model.load_state_dict(load_package_weights(package_dir, "mav-encoder", cfg))
    model.eval()
    return model, cfg, meta


def add_inspection(
    package_dir: str, d_ff: int | None = None, tolerance: float = 1e-5, seed: int = 0, card: bool = True, standalone: bool = False
) -> dict:
    """Writes inspect.onnx into the package, adds `inspection` to its mav.json (and a model card section).
    The graph reads its weights from model.onnx unless `standalone`."""
    model, cfg, meta = package_model(package_dir, d_ff)
    model_path = os.path.join(package_dir, "model.onnx")
    with tempfile.TemporaryDirectory(dir=package_dir) as tmp:
        path = os.path.join(tmp, INSPECT_FILE)
        export_inspect_onnx(model, cfg, path)
        diffs = check_inspect(model, cfg, path, model_path, np.random.default_rng(seed))
        _check(diffs, tolerance)
        if not standalone:
            # the shared graph must sit beside model.onnx to find it; it replaces the checked one only if
            # it gives the very same outputs
            shared_path = os.path.join(package_dir, f".{INSPECT_FILE}.tmp")
            try:
                share_weights(path, model_path, shared_path)
                ids, att = _padded_batch(cfg, np.random.default_rng(seed + 1))
                feed = {"input_ids": ids, "attention_mask": att, "head_scale": np.ones((cfg.num_layers, cfg.num_heads), np.float32)}
                same = all(np.array_equal(a, b) for a, b in zip(_session(path).run(None, feed), _session(shared_path).run(None, feed)))
                if not same:
                    raise ExportError("the graph reading its weights from model.onnx gives other outputs; nothing was written")
                os.replace(shared_path, os.path.join(package_dir, INSPECT_FILE))
            finally:
                if os.path.exists(shared_path):
                    os.remove(shared_path)
        else:
            os.replace(path, os.path.join(package_dir, INSPECT_FILE))
    meta["inspection"] = inspection_entry(None if standalone else model_path)
    with open(os.path.join(package_dir, "mav.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    size = os.path.getsize(os.path.join(package_dir, INSPECT_FILE))
    card_path = os.path.join(package_dir, "MODEL_CARD.md")
    if card and os.path.exists(card_path):
        _update_card(card_path, card_section(diffs, size, not standalone))
    return {"diffs": diffs, "bytes": size}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavtrain.inspect_export", description=__doc__.split("\n")[0])
    ap.add_argument("--package", required=True, help="a mav-encoder package folder (model.onnx, mav.json)")
    ap.add_argument("--d-ff", type=int, help="the MLP width (default 4 x d_model, as every shipped config)")
    ap.add_argument("--tolerance", type=float, default=1e-5, help="max abs difference from model.onnx's logits")
    ap.add_argument("--no-card", action="store_true", help="leave MODEL_CARD.md as it is")
    ap.add_argument("--standalone", action="store_true", help="give the graph its own copy of the weights (else it reads model.onnx's)")
    args = ap.parse_args(argv)
    try:
        res = add_inspection(args.package, args.d_ff, args.tolerance, card=not args.no_card, standalone=args.standalone)
    except (ExportError, OSError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # warmstart's WarmStartError and the like: say what failed, no traceback
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res["diffs"], indent=2))
    print(f"wrote {os.path.join(args.package, INSPECT_FILE)} ({res['bytes']} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
