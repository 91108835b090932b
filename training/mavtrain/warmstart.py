"""Warm start: read an exported model package back into PyTorch weights, to fine-tune it.

The shipped packages hold only `model.onnx` (the training checkpoints stay on the machine that trained
them). The TorchScript exporter renames and transposes some weights (a Linear's weight becomes a folded
`onnx::MatMul_N` initializer holding its transpose), so the names in the graph do not say which parameter
they are. This module finds out by exporting a *probe*: a model of the package's architecture whose every
parameter holds distinct random values, exported by the same code (`export.export_onnx`); each parameter
is then the probe initializer equal to it or to its transpose, and the package's initializer of that name
holds its trained value. The loaded weights are checked end to end: ONNX Runtime on the package and PyTorch
on the loaded model must give the same logits (the export checks, tolerance 1e-4), or nothing is returned.

A new vocabulary may only *extend* the package's (same ids for the old tokens, new ones appended, as
mavboard's tokenizer does when a game is added): the embedding rows of the old tokens are copied, the new
rows keep the fresh model's initialisation.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import torch

from .models import ModelConfig, build_model


class WarmStartError(Exception):
    """The package cannot initialise this model (other format or shape, or the weights do not check)."""


ARCH_KEYS = ("d_model", "num_layers", "num_heads")


def package_config(package_dir: str, fmt: str, cfg: ModelConfig) -> tuple[dict, ModelConfig]:
    """The package's mav.json and the model config it was exported from (the run's config with the
    package's vocabulary), after checking that the architecture is the same."""
    path = os.path.join(package_dir, "mav.json")
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise WarmStartError(f"{path} cannot be read ({e}); --init-from takes a model package folder") from e
    if meta.get("format") != fmt:
        raise WarmStartError(f"{package_dir} is a {meta.get('format')!r} package, the config trains {fmt!r}")
    for key in ARCH_KEYS:
        if meta.get(key) != getattr(cfg, key):
            raise WarmStartError(
                f"{package_dir} has {key} = {meta.get(key)}, the config {getattr(cfg, key)}: use the config the package was trained with"
            )
    old_vocab = int(meta.get("vocab_size", 0))
    if old_vocab <= 0 or old_vocab > cfg.vocab_size:
        raise WarmStartError(
            f"{package_dir} has a vocabulary of {old_vocab} tokens, the data {cfg.vocab_size}: the data's tokenizer must extend the package's"
        )
    d = cfg.to_dict()
    d["vocab_size"] = old_vocab
    d["context_length"] = int(meta.get("context_length", cfg.context_length))
    return meta, ModelConfig.from_dict(d)


def _initializers(path: str) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


def _map_parameters(probe: torch.nn.Module, probe_inits: dict[str, np.ndarray]) -> dict[str, tuple[str, bool]]:
    """Parameter name → (initializer name, stored transposed)."""
    mapping = {}
    for name, p in probe.named_parameters():
        a = p.detach().float().numpy()
        found = None
        for init, arr in probe_inits.items():
            if arr.shape == a.shape and np.array_equal(arr, a):
                found = (init, False)
                break
            if a.ndim == 2 and arr.shape == a.T.shape and np.array_equal(arr, a.T):
                found = (init, True)
        if found is None:
            raise WarmStartError(f"parameter {name} is not stored as an initializer of the exported graph")
        mapping[name] = found
    return mapping


def load_package_weights(package_dir: str, fmt: str, cfg: ModelConfig, tolerance: float = 1e-4) -> dict[str, torch.Tensor]:
    """Parameters for a model of `cfg` taken from the package in `package_dir` (checked against ONNX
    Runtime); embedding rows of tokens the package lacks keep a fresh initialisation."""
    from .export import CHECKS, export_onnx

    _, old_cfg = package_config(package_dir, fmt, cfg)
    onnx_path = os.path.join(package_dir, "model.onnx")
    if not os.path.exists(onnx_path):
        raise WarmStartError(f"{onnx_path} not found")
    probe = build_model(fmt, old_cfg)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in probe.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
    with tempfile.TemporaryDirectory() as tmp:
        probe_path = os.path.join(tmp, "probe.onnx")
        export_onnx(fmt, probe, old_cfg, probe_path)
        mapping = _map_parameters(probe, _initializers(probe_path))
    trained = _initializers(onnx_path)
    loaded = build_model(fmt, old_cfg)
    with torch.no_grad():
        for name, p in loaded.named_parameters():
            init, transposed = mapping[name]
            if init not in trained:
                raise WarmStartError(f"{onnx_path} lacks {init} ({name}): was it exported by another version of mavtrain?")
            arr = trained[init].T if transposed else trained[init]
            if tuple(arr.shape) != tuple(p.shape):
                raise WarmStartError(f"{onnx_path}: {init} has shape {arr.shape}, {name} needs {tuple(p.shape)}")
            p.copy_(torch.from_numpy(np.array(arr, dtype=np.float32, copy=True)))
    loaded.eval()
    diffs = CHECKS[fmt](loaded, old_cfg, onnx_path, np.random.default_rng(0))
    bad = {k: v for k, v in diffs.items() if not v <= tolerance}
    if bad:
        raise WarmStartError(f"the weights read from {onnx_path} do not reproduce its logits: {bad}")
    fresh = build_model(fmt, cfg).state_dict()
    out = {}
    for name, value in loaded.state_dict().items():
        target = fresh[name]
        if value.shape == target.shape:
            out[name] = value.clone()
        elif value.dim() == target.dim() and value.shape[1:] == target.shape[1:] and value.shape[0] < target.shape[0]:
            grown = target.clone()
            grown[: value.shape[0]] = value
            out[name] = grown
        else:
            raise WarmStartError(f"{name}: the package's shape {tuple(value.shape)} cannot grow to {tuple(target.shape)}")
    return out
