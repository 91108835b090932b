"""The three model families mavboard loads.

All three share one pre-norm transformer block (RMSNorm, multi-head attention, GELU MLP).

* `MavLM`: decoder-only, RoPE positions driven by explicit `position_ids`, optional tied
  embeddings. `forward` is the training path (causal, no cache); `forward_with_past` is the
  graph exported to ONNX (Hugging Face optimum's decoder-with-past layout).
* `MavEncoder`: bidirectional over a padded sequence, RoPE with positions 0..T-1; a value head
  (K logits) and a best-action head (1 logit) at every position.
* `ActionValue`: Ruoss et al. (2024)'s action-value predictor scaled down: 77 state tokens + 1
  action token, learned positional embeddings, no causal mask, K=128 logits read at the last
  (action) position.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F

MASK_VALUE = -1e9
MLPS = ("gelu", "swiglu")  # additive attention mask; finite so fully masked (padding) rows never give NaN


@dataclass
class ModelConfig:
    """Architecture hyper-parameters (the `model` object of a config file)."""

    d_model: int = 192
    num_layers: int = 6
    num_heads: int = 6
    d_ff: int = 768
    context_length: int = 1024
    vocab_size: int = 0  # filled from the data (tokenizer or meta.json)
    tie_embeddings: bool = True
    rope_base: float = 10000.0
    num_buckets: int = 64  # encoder value head / action-value output size
    av_action_vocab_size: int = 1968
    norm_eps: float = 1e-5
    # the MLP of every block: "gelu" (fc2(gelu(fc1 x)), the first mav models) or "swiglu" (Llama's gated
    # SiLU, fc2(silu(gate x) * fc1 x)): with "swiglu" a mav-lm is exactly a Hugging Face LlamaForCausalLM
    # (mavtrain.export_hf), which LLM engines load
    mlp: str = "gelu"

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown model config keys {sorted(unknown)}; valid keys: {sorted(names)}")
        cfg = cls(**d)
        if cfg.d_model % cfg.num_heads != 0:
            raise ValueError(f"d_model {cfg.d_model} is not divisible by num_heads {cfg.num_heads}")
        if cfg.head_dim % 2 != 0:
            raise ValueError(f"head_dim {cfg.head_dim} must be even for RoPE")
        if cfg.mlp not in MLPS:
            raise ValueError(f"mlp {cfg.mlp!r}: choose one of {', '.join(MLPS)}")
        return cfg

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)


class Rotary(nn.Module):
    """cos/sin tables computed from integer positions (so exported graphs take position_ids)."""

    def __init__(self, head_dim: int, base: float):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, position_ids: torch.Tensor):
        # position_ids [B, S] -> cos, sin [B, 1, S, head_dim]
        freqs = position_ids.to(torch.float32).unsqueeze(-1) * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x * cos + rot * sin).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.h = cfg.num_heads
        self.hd = cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x, rope=None, mask=None, causal=False, past_k=None, past_v=None):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.h, self.hd).permute(2, 0, 3, 1, 4).unbind(0)
        if rope is not None:
            cos, sin = rope
            q = apply_rope(q, cos, sin)
            k = apply_rope(k, cos, sin)
        if past_k is not None:
            k = torch.cat((past_k.to(k.dtype), k), dim=2)
            v = torch.cat((past_v.to(v.dtype), v), dim=2)
        out_dtype = q.dtype
        if q.device.type == "cpu" and q.dtype == torch.bfloat16:
            # PyTorch's CPU attention kernels are several times slower in bf16 than in fp32
            # (measured on the dev machine), so under CPU autocast attention runs in fp32
            q, k_, v_ = q.float(), k.float(), v.float()
        else:
            k_, v_ = k, v
        if mask is not None:
            out = F.scaled_dot_product_attention(q, k_, v_, attn_mask=mask.to(q.dtype))
        else:
            out = F.scaled_dot_product_attention(q, k_, v_, is_causal=causal)
        out = out.to(out_dtype).transpose(1, 2).reshape(b, s, d)
        return self.proj(out), k, v


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.norm1 = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.norm2 = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)
        self.gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=False) if cfg.mlp == "swiglu" else None

    def forward(self, x, rope=None, mask=None, causal=False, past_k=None, past_v=None):
        a, k, v = self.attn(self.norm1(x), rope, mask, causal, past_k, past_v)
        x = x + a
        return x + self.mlp(self.norm2(x)), k, v

    def mlp(self, h: torch.Tensor) -> torch.Tensor:
        """What the MLP adds to the residual stream from its (normalised) input `h`."""
        if self.gate is not None:
            return self.fc2(F.silu(self.gate(h)) * self.fc1(h))
        return self.fc2(F.gelu(self.fc1(h)))


def init_weights(module: nn.Module, num_layers: int) -> None:
    """GPT-2 style init: N(0, 0.02), residual output projections scaled by 1/sqrt(2L)."""
    for name, p in module.named_parameters():
        if p.dim() >= 2:
            std = 0.02
            if name.endswith("attn.proj.weight") or name.endswith("fc2.weight"):
                std = 0.02 / math.sqrt(2 * num_layers)
            nn.init.normal_(p, mean=0.0, std=std)


def count_parameters(model: nn.Module) -> int:
    """Distinct parameters (tied weights counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[B, S] 0/1 -> additive [B, 1, 1, S]."""
    keep = attention_mask.to(torch.float32)
    return ((1.0 - keep) * MASK_VALUE).unsqueeze(1).unsqueeze(1)


class MavLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_base)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        init_weights(self, cfg.num_layers)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.embed.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Training path: right-padded batch, causal attention, positions 0..T-1."""
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0).expand(b, s)
        rope = self.rotary(pos)
        x = self.embed(input_ids)
        for blk in self.blocks:
            x, _, _ = blk(x, rope, causal=True)
        return self.lm_head(self.norm(x))

    def forward_with_past(self, input_ids, attention_mask, position_ids, past):
        """Inference path (exported): `past` is a list of (key, value) [B, H, P, hd] per layer.

        attention_mask [B, P+S] marks real tokens (1) and padding (0); query i of this call sits
        at cache index P+i and sees keys j <= P+i that are not padding.
        Returns logits [B, S, V] and the list of present (key, value) [B, H, P+S, hd].
        """
        s = input_ids.shape[1]
        p = past[0][0].shape[2]
        kv_len = attention_mask.shape[1]
        q_idx = torch.arange(s, device=input_ids.device) + p
        k_idx = torch.arange(kv_len, device=input_ids.device)
        causal = (k_idx.unsqueeze(0) <= q_idx.unsqueeze(1)).to(torch.float32)  # [S, K]
        keep = causal.unsqueeze(0).unsqueeze(0) * attention_mask.to(torch.float32).unsqueeze(1).unsqueeze(1)
        mask = (1.0 - keep) * MASK_VALUE  # [B, 1, S, K]
        rope = self.rotary(position_ids)
        x = self.embed(input_ids)
        presents = []
        for blk, (pk, pv) in zip(self.blocks, past):
            x, k, v = blk(x, rope, mask=mask, past_k=pk, past_v=pv)
            presents.append((k, v))
        return self.lm_head(self.norm(x)), presents


class MavEncoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_base)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.value_head = nn.Linear(cfg.d_model, cfg.num_buckets)
        self.best_head = nn.Linear(cfg.d_model, 1)
        init_weights(self, cfg.num_layers)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        """-> value_logits [B, S, K], best_logits [B, S]."""
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0).expand(b, s)
        rope = self.rotary(pos)
        mask = padding_mask(attention_mask)
        x = self.embed(input_ids)
        for blk in self.blocks:
            x, _, _ = blk(x, rope, mask=mask)
        h = self.norm(x)
        return self.value_head(h), self.best_head(h).squeeze(-1)


class ActionValue(nn.Module):
    STATE_LEN = 77

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.state_embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.action_embed = nn.Embedding(cfg.av_action_vocab_size, cfg.d_model)
        self.pos_embed = nn.Parameter(torch.zeros(self.STATE_LEN + 1, cfg.d_model))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.head = nn.Linear(cfg.d_model, cfg.num_buckets)
        init_weights(self, cfg.num_layers)
        nn.init.normal_(self.pos_embed, std=0.02)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """input_ids [B, 78] (77 state ids, then the action id) -> logits [B, K]."""
        s = self.state_embed(input_ids[:, : self.STATE_LEN])
        a = self.action_embed(input_ids[:, self.STATE_LEN :])
        x = torch.cat((s, a), dim=1) + self.pos_embed
        for blk in self.blocks:
            x, _, _ = blk(x)
        return self.head(self.norm(x[:, -1]))


FORMATS = ("mav-lm", "mav-encoder", "action-value")


def build_model(fmt: str, cfg: ModelConfig) -> nn.Module:
    if fmt == "mav-lm":
        return MavLM(cfg)
    if fmt == "mav-encoder":
        return MavEncoder(cfg)
    if fmt == "action-value":
        return ActionValue(cfg)
    raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
