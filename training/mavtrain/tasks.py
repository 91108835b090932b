"""Per-format data loading, batching and losses (the parts of training that differ by format).

Every task's `loss(model, batch, norm=None)` returns the batch's mean loss. With `norm` (the global
micro-batch's denominators: the sum over all ranks and chunks of `loss_norm`), it returns instead this
batch's *share* of the global mean: its loss sum divided by the global count. The shares of all
batches of a micro-batch add up to the loss one device would compute on the whole micro-batch, which is
what makes data-parallel training (mavtrain.train) the same computation as training on one device,
also for the token- and move-weighted means whose counts differ from rank to rank.
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from . import data as D
from . import pack as P
from .models import ModelConfig


def hl_gauss_targets(wp: torch.Tensor, num_buckets: int, sigma_ratio: float) -> torch.Tensor:
    """HL-Gauss soft targets (Imani & White 2018; Farebrother et al. 2024).

    A normal distribution centred at the win probability `wp` with standard deviation
    sigma_ratio / K (sigma_ratio bucket widths), integrated over each bucket [i/K, (i+1)/K) and
    renormalised over [0, 1]. wp [...] -> probabilities [..., K].
    """
    sigma = sigma_ratio / num_buckets
    edges = torch.linspace(0.0, 1.0, num_buckets + 1, device=wp.device, dtype=torch.float32)
    z = (edges - wp.unsqueeze(-1).float()) / (sigma * math.sqrt(2.0))
    cdf = 0.5 * (1.0 + torch.erf(z))
    mass = cdf[..., 1:] - cdf[..., :-1]
    return mass / (cdf[..., -1:] - cdf[..., :1]).clamp_min(1e-12)


class LMTask:
    """mav-lm: next-token prediction, loss only on the target ids and the final <eos>."""

    prefix = "lm"

    def __init__(self, data_dir, meta, tcfg, mcfg: ModelConfig, limit=None):
        self.tokenizer = D.load_tokenizer(data_dir, meta)
        self.ids = D.special_ids(self.tokenizer, meta["num_buckets"])
        mcfg.vocab_size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        self.ctx = mcfg.context_length
        self.train = self._load(data_dir, "train", limit)
        self.val = self._load(data_dir, "val", None, required=False)
        mix = tcfg.get("kind_mix")
        self.mix = D.check_kind_mix(mix, self.train.kinds) if mix is not None else None
        self.groups = self.train.kind_groups() if self.mix else None

    def _load(self, data_dir, split, limit, required=True):
        path = D.split_path(data_dir, self.prefix, split)
        packed = os.path.join(data_dir, f"{self.prefix}_{split}{P.PACK_SUFFIX}")
        if path is None and os.path.exists(packed):
            return P.load_lm_pack(packed, self.ctx, limit)
        if path is None:
            if required:
                raise D.DataError(f"no {self.prefix}_{split}.jsonl[.zst] or .pack in {data_dir}; render it with mavboard")
            return None
        return D.load_lm_split(path, self.tokenizer, self.ids["eos"], self.ctx, limit)

    def train_indices(self, batch_size: int, seed: int, micro_step: int) -> np.ndarray:
        """Training examples of micro-batch `micro_step`: uniform, or one kind per batch under `train.kind_mix`."""
        if self.mix is None:
            return D.batch_indices(len(self.train), batch_size, seed, micro_step)
        return D.mixed_batch_indices(self.groups, self.mix, batch_size, seed, micro_step)

    def data_summary(self) -> dict:
        out = {}
        for name, d in (("train", self.train), ("val", self.val)):
            if d is None:
                continue
            out[name] = {
                "examples": len(d),
                "tokens": d.num_tokens,
                "kinds": d.kinds,
                "skipped_too_long": d.skipped_too_long,
                "skipped_empty_target": d.skipped_empty,
            }
        return out

    @property
    def internal_search(self) -> bool:
        return self.train.kinds.get("search", 0) > 0

    def token_chunks(self, split, idx, max_tokens: int) -> list:
        """`idx` sorted by sequence length (ties keep their order) and cut into runs whose padded size
        (examples × the longest) is at most `max_tokens`; an example longer than that is a run of its own
        (`train.chunk_tokens`)."""
        d = self.train if split == "train" else self.val
        idx = np.asarray(idx)
        lens = d.offsets[idx + 1] - d.offsets[idx]
        order = np.argsort(lens, kind="stable")
        parts, start = [], 0
        for k in range(1, len(order) + 1):
            if k == len(order) or (k - start + 1) * int(lens[order[k]]) > max_tokens:
                parts.append(idx[order[start:k]])
                start = k
        return parts

    def batch(self, split, idx, device):
        d = self.train if split == "train" else self.val
        inp, lab = D.lm_batch(d, idx, self.ids["pad"])
        return torch.from_numpy(inp).to(device), torch.from_numpy(lab).to(device)

    def loss_norm(self, batch) -> dict:
        """Denominator of the loss: the target tokens (target + `<eos>`) of the batch."""
        return {"loss_tokens": (batch[1] != -100).sum()}

    def loss(self, model, batch, norm=None):
        """Mean cross-entropy per target token (or this batch's share of the global mean, see the module docstring)."""
        inp, lab = batch
        logits = model(inp)
        n = (lab != -100).sum()
        denom = n.clamp_min(1) if norm is None else norm["loss_tokens"].clamp_min(1)
        loss = F.cross_entropy(logits.float().flatten(0, 1), lab.flatten(), ignore_index=-100, reduction="sum") / denom
        with torch.no_grad():
            acc = ((logits.argmax(-1) == lab) & (lab != -100)).sum().float() / denom
        real = int((inp != self.ids["pad"]).sum()) + inp.shape[0]  # real input tokens (+1 last per seq)
        return loss, {"loss": loss.detach(), "token_acc": acc}, {"examples": inp.shape[0], "tokens": real, "loss_tokens": int(n)}


class EncoderTask:
    """mav-encoder: value distribution at every move position + softmax over moves for `best`."""

    prefix = "enc"

    def __init__(self, data_dir, meta, tcfg, mcfg: ModelConfig, limit=None):
        self.tokenizer = D.load_tokenizer(data_dir, meta)
        self.K = meta["num_buckets"]
        self.ids = D.special_ids(self.tokenizer, self.K)
        mcfg.vocab_size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        mcfg.num_buckets = self.K
        self.max_len = mcfg.context_length
        self.value_loss = tcfg.get("value_loss", "hl_gauss")
        if self.value_loss not in ("hl_gauss", "bucket_ce"):
            raise ValueError(f"train.value_loss must be 'hl_gauss' or 'bucket_ce', not {self.value_loss!r}")
        self.sigma_ratio = float(tcfg.get("hl_gauss_sigma", 0.75))
        self.best_weight = float(tcfg.get("best_loss_weight", 1.0))
        self.train = self._load(data_dir, "train", limit, mcfg.vocab_size)
        self.val = self._load(data_dir, "val", None, mcfg.vocab_size, required=False)

    def _load(self, data_dir, split, limit, vocab, required=True):
        path = D.split_path(data_dir, self.prefix, split)
        packed = os.path.join(data_dir, f"{self.prefix}_{split}{P.PACK_SUFFIX}")
        if path is None and os.path.exists(packed):
            d = P.load_enc_pack(packed, self.K, self.max_len, limit)
        elif path is None:
            if required:
                raise D.DataError(f"no {self.prefix}_{split}.jsonl[.zst] (or .pack) in {data_dir}; render it with mavboard")
            return None
        else:
            d = D.load_enc_split(path, self.K, self.max_len, limit)
        path = path or packed
        if d.ids:
            hi = max(int(x.max()) for x in d.ids)
            if hi >= vocab:
                raise D.DataError(f"{path}: token id {hi} is outside the tokenizer's {vocab} ids")
        return d

    def data_summary(self) -> dict:
        return {
            name: {"examples": len(d), "tokens": d.num_tokens, "moves": int(sum(len(m) for m in d.move_pos)), "skipped_too_long": d.skipped_too_long}
            for name, d in (("train", self.train), ("val", self.val))
            if d is not None
        }

    internal_search = False

    def train_indices(self, batch_size: int, seed: int, micro_step: int) -> np.ndarray:
        """Training examples of micro-batch `micro_step` (uniform: these records have one kind)."""
        return D.batch_indices(len(self.train), batch_size, seed, micro_step)

    def batch(self, split, idx, device):
        d = self.train if split == "train" else self.val
        return tuple(torch.from_numpy(a).to(device) for a in D.enc_batch(d, idx, self.ids["pad"]))

    def loss_norm(self, batch) -> dict:
        """Denominators of the loss: candidate moves (value loss) and examples (best-move loss)."""
        return {"moves": batch[3].sum(), "examples": torch.tensor(batch[0].shape[0])}

    def loss(self, model, batch, norm=None):
        """Value loss per move + weighted best-move loss per example (or this batch's share of the global means)."""
        inp, att, mpos, mmask, bk, wp, best = batch
        vlog, blog = model(inp, att)
        K = vlog.shape[-1]
        vl = vlog.float().gather(1, mpos.unsqueeze(-1).expand(-1, -1, K))  # [B, M, K]
        bl = blog.float().gather(1, mpos).masked_fill(~mmask, -1e9)  # [B, M]
        logp = F.log_softmax(vl, dim=-1)
        if self.value_loss == "hl_gauss":
            tgt = hl_gauss_targets(wp, K, self.sigma_ratio)
            per_move = -(tgt * logp).sum(-1)
        else:
            per_move = -logp.gather(-1, bk.unsqueeze(-1)).squeeze(-1)
        nm = mmask.sum().clamp_min(1)
        if norm is None:
            v_loss = (per_move * mmask).sum() / nm
            b_loss = F.cross_entropy(bl, best)
        else:
            nm = norm["moves"].clamp_min(1)
            v_loss = (per_move * mmask).sum() / nm
            b_loss = F.cross_entropy(bl, best, reduction="sum") / norm["examples"]
        loss = v_loss + self.best_weight * b_loss
        with torch.no_grad():
            bucket_acc = ((vl.argmax(-1) == bk) & mmask).sum().float() / nm
            hits = (bl.argmax(-1) == best).float()
            best_acc = hits.mean() if norm is None else hits.sum() / norm["examples"]
        stats = {"loss": loss.detach(), "value_loss": v_loss.detach(), "best_loss": b_loss.detach(), "bucket_acc": bucket_acc, "best_acc": best_acc}
        return loss, stats, {"examples": inp.shape[0], "tokens": int(att.sum()), "moves": int(mmask.sum().clamp_min(1))}


class ActionValueTask:
    """action-value: cross-entropy on the 128-bucket index of each (state, action) pair (Ruoss et al.)."""

    prefix = "av"

    def __init__(self, data_dir, meta, tcfg, mcfg: ModelConfig, limit=None):
        for key in ("av_state_vocab_size", "av_action_vocab_size", "av_num_buckets"):
            if key not in meta:
                raise D.DataError(f"meta.json lacks {key!r}; re-render the data with mavboard")
        mcfg.vocab_size = int(meta["av_state_vocab_size"])
        mcfg.av_action_vocab_size = int(meta["av_action_vocab_size"])
        mcfg.num_buckets = int(meta["av_num_buckets"])
        mcfg.context_length = D.AV_STATE_LEN + 1
        self.mcfg = mcfg
        self.train = self._load(data_dir, "train", limit)
        self.val = self._load(data_dir, "val", None, required=False)

    def _load(self, data_dir, split, limit, required=True):
        path = D.split_path(data_dir, self.prefix, split)
        if path is None:
            if required:
                raise D.DataError(f"no {self.prefix}_{split}.jsonl[.zst] in {data_dir}; render it with mavboard")
            return None
        m = self.mcfg
        return D.load_av_split(path, m.vocab_size, m.av_action_vocab_size, m.num_buckets, limit)

    def data_summary(self) -> dict:
        return {
            name: {"positions": int(d.states.shape[0]), "examples": len(d), "tokens": len(d) * (D.AV_STATE_LEN + 1)}
            for name, d in (("train", self.train), ("val", self.val))
            if d is not None
        }

    internal_search = False

    def train_indices(self, batch_size: int, seed: int, micro_step: int) -> np.ndarray:
        """Training examples of micro-batch `micro_step` (uniform: these records have one kind)."""
        return D.batch_indices(len(self.train), batch_size, seed, micro_step)

    def batch(self, split, idx, device):
        d = self.train if split == "train" else self.val
        inp, bk = D.av_batch(d, idx)
        return torch.from_numpy(inp).to(device), torch.from_numpy(bk).to(device)

    def loss_norm(self, batch) -> dict:
        """Denominator of the loss: the examples of the batch."""
        return {"examples": torch.tensor(batch[0].shape[0])}

    def loss(self, model, batch, norm=None):
        """Mean cross-entropy per example (or this batch's share of the global mean)."""
        inp, bk = batch
        logits = model(inp).float()
        with torch.no_grad():
            hits = (logits.argmax(-1) == bk).float()
        if norm is None:
            loss = F.cross_entropy(logits, bk)
            acc = hits.mean()
        else:
            loss = F.cross_entropy(logits, bk, reduction="sum") / norm["examples"]
            acc = hits.sum() / norm["examples"]
        return loss, {"loss": loss.detach(), "bucket_acc": acc}, {"examples": inp.shape[0], "tokens": inp.numel()}


TASKS = {"mav-lm": LMTask, "mav-encoder": EncoderTask, "action-value": ActionValueTask}
