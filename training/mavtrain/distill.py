"""Distillation: train a model to compute what a shipped package computes, in another block.

`python -m mavtrain.train --config configs/mav-lm-tiny-llama-distill.json --data DATA --run RUN
--distill-from ../assets/models/mav-tiny` retrains a package's model in the Llama block (`"mlp":
"swiglu"`, which LLM engines load) from the package itself. No SwiGLU MLP computes a GELU MLP exactly
(a product of a SiLU and a linear form has no linear part, GELU has), so the weights cannot be carried
over one for one; what can be carried is

- every weight outside the MLPs (embeddings, norms, attention): copied from the package, as it is;
- each block's MLP: trained on the data's own tokens to give what the package's MLP gives on the same
  input (a local loss: the teacher's MLP applied to the student's normalised residual stream, mean
  squared error over the target's mean square, one term per block);
- the whole model: the package's next-token distribution (Kullback-Leibler divergence, teacher to
  student, at every position the language-model loss counts), so that the value buckets' distributions
  are learnt, not only their most likely bucket.

The loss is the mean KL divergence per target token plus `mlp_weight` times the mean of the blocks'
relative MLP errors; the logged `ce` is the plain language-model loss, comparable with the package's.
The teacher's architecture is read from its graph (MLP kind and width) and its weights are checked end
to end against ONNX Runtime by `mavtrain.warmstart`.
"""

from __future__ import annotations

import json
import os

import torch
import torch.nn.functional as F

from .models import ModelConfig, build_model
from .warmstart import WarmStartError, _initializers, load_package_weights

# SiLU(1.702 x) / 1.702 is the sigmoid approximation of GELU (Hendrycks & Gimpel 2016): a student gate
# starts as the teacher's first MLP matrix at this scale, so each gate opens where a GELU unit does
GELU_SIGMOID_SCALE = 1.702


class DistillError(Exception):
    """The package cannot teach this model (another format or shape, or its weights do not check)."""


def package_mlp(package_dir: str, cfg: ModelConfig, vocab: int) -> tuple[str, int]:
    """The MLP kind ("gelu" or "swiglu") and width of the package's blocks, read from its graph: the
    matrices with one side `d_model` and the other neither `d_model`, the fused attention's `3 d_model`
    nor the package's vocabulary `vocab`, two per block (GELU) or three (SwiGLU)."""
    path = os.path.join(package_dir, "model.onnx")
    if not os.path.exists(path):
        raise DistillError(f"{package_dir} has no model.onnx; --distill-from takes a model package folder")
    d = cfg.d_model
    widths = []
    for arr in _initializers(path).values():
        if arr.ndim != 2 or d not in arr.shape or min(arr.shape) < 2:
            continue
        other = arr.shape[1] if arr.shape[0] == d else arr.shape[0]
        if other not in (d, 3 * d, vocab):
            widths.append(int(other))
    if not widths or len(set(widths)) != 1:
        raise DistillError(f"{path}: cannot tell the width of its MLPs (matrix sides {sorted(set(widths))})")
    per_block = len(widths) / cfg.num_layers
    kinds = {2.0: "gelu", 3.0: "swiglu"}
    if per_block not in kinds:
        raise DistillError(f"{path}: {len(widths)} MLP matrices for {cfg.num_layers} blocks, neither 2 (GELU) nor 3 (SwiGLU) a block")
    return kinds[per_block], widths[0]


def load_teacher(package_dir: str, fmt: str, cfg: ModelConfig) -> tuple[torch.nn.Module, dict]:
    """The package's model in PyTorch (eval mode, no gradients) and its mav.json, for a student of
    `cfg` (same format, width, depth, heads and vocabulary; the MLP may differ)."""
    if fmt != "mav-lm":
        raise DistillError(f"distillation trains mav-lm models; the config trains {fmt!r}")
    try:
        with open(os.path.join(package_dir, "mav.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise DistillError(f"{package_dir}/mav.json cannot be read ({e}); --distill-from takes a model package folder") from e
    mlp, d_ff = package_mlp(package_dir, cfg, int(meta.get("vocab_size", 0)))
    tcfg = ModelConfig.from_dict({**cfg.to_dict(), "mlp": mlp, "d_ff": d_ff})
    try:
        weights = load_package_weights(package_dir, fmt, tcfg)
    except WarmStartError as e:
        raise DistillError(str(e)) from e
    teacher = build_model(fmt, tcfg)
    teacher.load_state_dict(weights)
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    if int(meta.get("vocab_size", 0)) != cfg.vocab_size:
        raise DistillError(
            f"{package_dir} has a vocabulary of {meta.get('vocab_size')} tokens, the data {cfg.vocab_size}: "
            "distil on data rendered with the package's tokenizer"
        )
    return teacher, meta


def student_init(student: torch.nn.Module, teacher: torch.nn.Module) -> list[str]:
    """Copy the teacher's weights that the student has in the same shape (everything but a different
    MLP); a SwiGLU student's gates start as the teacher's first MLP matrix (scaled, rows cycled when
    the widths differ). Returns the names copied."""
    tsd = teacher.state_dict()
    copied = []
    with torch.no_grad():
        for name, p in student.named_parameters():
            t = tsd.get(name)
            if t is not None and t.shape == p.shape and (".fc1." not in name and ".fc2." not in name or teacher.cfg.mlp == student.cfg.mlp):
                p.copy_(t)
                copied.append(name)
            elif name.endswith(".gate.weight"):
                fc1 = tsd[name.replace(".gate.", ".fc1.")]
                rows = torch.arange(p.shape[0]) % fc1.shape[0]
                p.copy_(fc1[rows] * GELU_SIGMOID_SCALE)
    return copied


class MLPTaps:
    """Forward hooks on each block's `norm2` (the MLP's input) and `fc2` (its output)."""

    def __init__(self, model: torch.nn.Module):
        self.inputs: list = [None] * len(model.blocks)
        self.outputs: list = [None] * len(model.blocks)
        self.handles = []
        for i, blk in enumerate(model.blocks):
            self.handles.append(blk.norm2.register_forward_hook(self._keep(self.inputs, i)))
            self.handles.append(blk.fc2.register_forward_hook(self._keep(self.outputs, i)))

    @staticmethod
    def _keep(store, i):
        def hook(_module, _args, out):
            store[i] = out

        return hook



class Distiller:
    """The distillation loss over an `LMTask`'s batches (same signature as `LMTask.loss`)."""

    def __init__(self, task, student: torch.nn.Module, teacher: torch.nn.Module, mlp_weight: float):
        self.task = task
        self.teacher = teacher
        self.mlp_weight = float(mlp_weight)
        self.taps = MLPTaps(student)

    def loss(self, model, batch, norm=None):
        inp, lab = batch
        logits = model(inp)
        keep = lab != -100
        n = keep.sum()
        denom = n.clamp_min(1) if norm is None else norm["loss_tokens"].clamp_min(1)
        with torch.no_grad():
            t_logits = self.teacher(inp).float()
        s_logp = F.log_softmax(logits.float(), dim=-1)
        t_logp = F.log_softmax(t_logits, dim=-1)
        kl_tok = (t_logp.exp() * (t_logp - s_logp)).sum(-1)
        kl = (kl_tok * keep).sum() / denom
        # the blocks' MLPs against the teacher's on the same inputs, over the real (non-pad) tokens
        real = (inp != self.task.ids["pad"]).unsqueeze(-1)
        mlp_terms = []
        for tblk, h, out in zip(self.teacher.blocks, self.taps.inputs, self.taps.outputs):
            with torch.no_grad():
                target = tblk.mlp(h.detach()).float()
                scale = ((target**2) * real).sum().clamp_min(1e-12)
            mlp_terms.append((((out.float() - target) ** 2) * real).sum() / scale)
        mlp = torch.stack(mlp_terms).mean()
        share = 1.0 if norm is None else float(n) / float(denom)
        loss = kl + self.mlp_weight * mlp * share
        with torch.no_grad():
            ce = F.cross_entropy(logits.float().flatten(0, 1), lab.flatten(), ignore_index=-100, reduction="sum") / denom
            acc = ((logits.argmax(-1) == lab) & keep).sum().float() / denom
        real_tokens = int((inp != self.task.ids["pad"]).sum()) + inp.shape[0]
        stats = {"loss": loss.detach(), "kl": kl.detach(), "mlp_rel_err": mlp.detach(), "ce": ce, "token_acc": acc}
        return loss, stats, {"examples": inp.shape[0], "tokens": real_tokens, "loss_tokens": int(n)}


def describe(package_dir: str, meta: dict, teacher: torch.nn.Module) -> dict:
    """What run_info.json records of the teacher."""
    c = teacher.cfg
    return {
        "package": os.path.abspath(package_dir),
        "name": meta.get("name"),
        "mlp": c.mlp,
        "d_ff": c.d_ff,
        "parameters": int(meta.get("parameters", 0)),
        "training": meta.get("training"),
    }
