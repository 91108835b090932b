"""Train a model: `python -m mavtrain.train --config configs/mav-lm-tiny.json --data DATA --run RUN`.

The format (mav-lm, mav-encoder, action-value) comes from the config. Re-running the same command
on a run dir that holds a checkpoint resumes it: same weights, EMA, optimiser state, step and data
order (see mavtrain.data), so a killed run ends in the same state as an uninterrupted one.

The same command runs data parallel under `torchrun` (one node or many; see training/README.md):
`train.batch_size` is the *global* micro-batch, each rank trains on its contiguous share of the same
deterministic batch (a function of seed and micro-step, as on one device), each rank's loss is its
share of the global batch's mean so that DDP's gradient average equals the one-device gradient, and
rank 0 alone logs, evaluates, checkpoints and writes the run dir. A run is therefore the same
computation (up to float rounding) on any number of ranks, and a checkpoint written by one world size
resumes under another.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import socket
import sys
import time
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as tdist
from torch.nn.parallel import DistributedDataParallel

from . import data as D
from .models import FORMATS, ModelConfig, build_model, count_parameters
from .tasks import TASKS
from .distill import Distiller, DistillError, describe, load_teacher, student_init
from .warmstart import WarmStartError, load_package_weights
from .run_log import RunLog, read_log  # noqa: F401 (read_log: the run log's reader, also imported from here)

# --time-budget: the steps (counted from the start or resume) whose pace sets max_steps, and the share
# of the budget planned for steps (the rest covers evaluations, checkpoints and the final evaluation)
BUDGET_CALIBRATION = (10, 60)
BUDGET_SAFETY = 0.92

TRAIN_DEFAULTS = {
    "batch_size": 32,
    "grad_accum": 1,
    "lr": 1e-3,
    "min_lr_ratio": 0.1,
    "warmup_steps": 100,
    "max_steps": 1000,
    "weight_decay": 0.1,
    "betas": [0.9, 0.95],
    "grad_clip": 1.0,
    "ema_decay": 0.99,
    "precision": "bf16",
    "seed": 1234,
    "log_every": 10,
    "eval_every": 500,
    "eval_batches": 20,
    "checkpoint_every": 200,
    "limit_train_examples": None,
    # mav-lm only: share of batches per example kind, e.g. {"mav": 0.6, "search": 0.4} (the paper's mix);
    # null samples examples uniformly
    "kind_mix": None,
    # mav-lm only: run each micro-batch in forward passes of examples of similar length, each holding at most
    # this many tokens with its padding (so that one long trace pads its own chunk, not the whole batch, and
    # a batch of short examples stays one pass); the same step as one pass. null: one pass
    "chunk_tokens": None,
    # with --distill-from only: the weight of the blocks' MLP errors next to the KL divergence (mavtrain.distill)
    "distill_mlp_weight": 1.0,
}
ENCODER_KEYS = {"value_loss", "hl_gauss_sigma", "best_loss_weight"}


# ---------------------------------------------------------------------------------------------
# config


def load_config(path: str) -> dict:
    """Read a config file and resolve it with `normalise_config`."""
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    return normalise_config(cfg, source=path)


def normalise_config(cfg: dict, source: str = "config") -> dict:
    """Check a config and fill in the train defaults; errors name `source` and the bad key."""
    fmt = cfg.get("format")
    if fmt not in FORMATS:
        raise ValueError(f"{source}: 'format' must be one of {FORMATS}, got {fmt!r}")
    train = dict(TRAIN_DEFAULTS)
    unknown = set(cfg.get("train", {})) - set(TRAIN_DEFAULTS) - ENCODER_KEYS
    if unknown:
        raise ValueError(f"{source}: unknown train keys {sorted(unknown)}; valid: {sorted(set(TRAIN_DEFAULTS) | ENCODER_KEYS)}")
    train.update(cfg.get("train", {}))
    if train["precision"] not in ("bf16", "fp32"):
        raise ValueError(f"{source}: train.precision must be 'bf16' or 'fp32'")
    if train["kind_mix"] is not None and (fmt != "mav-lm" or not isinstance(train["kind_mix"], dict)):
        raise ValueError(f"{source}: train.kind_mix is an object of kind -> weight, for mav-lm configs only")
    ct = train["chunk_tokens"]
    if ct is not None and (not isinstance(ct, int) or isinstance(ct, bool) or ct < 1 or fmt != "mav-lm"):
        raise ValueError(f"{source}: train.chunk_tokens is null or a whole number of tokens, for mav-lm configs only")
    ModelConfig.from_dict(cfg.get("model", {}))  # validates keys
    return {"format": fmt, "name": cfg.get("name", fmt), "model": dict(cfg.get("model", {})), "train": train}


# ---------------------------------------------------------------------------------------------
# machinery


def pick_device(requested: str = "auto") -> torch.device:
    """auto (CUDA when torch sees a GPU, else CPU), cpu, cuda or cuda:N."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("--device cuda asked for, but torch sees no CUDA GPU; use --device cpu or auto")
    return torch.device(requested)


def machine_description(device: torch.device) -> str:
    """The GPU's name, or the CPU model and core count."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} logical cores"


# ---------------------------------------------------------------------------------------------
# data parallel (torchrun)


@dataclass
class DistInfo:
    """This process's place in a `torchrun` job; world 1 is plain single-process training."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """Rank 0: the one process that logs, evaluates, checkpoints and writes the run dir."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        """More than one rank: gradients and counts are all-reduced."""
        return self.world > 1


def dist_from_env() -> DistInfo:
    """The rank, world size and local rank that `torchrun` sets (RANK, WORLD_SIZE, LOCAL_RANK).

    Without them (a plain `python -m mavtrain.train`) this is rank 0 of a world of 1.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", str(rank)))
    if world < 1 or not 0 <= rank < world:
        raise RuntimeError(f"bad torchrun environment: RANK={rank} WORLD_SIZE={world}")
    return DistInfo(rank=rank, world=world, local_rank=local)


def setup_distributed(info: DistInfo, requested: str = "auto") -> torch.device:
    """This rank's device, joining the process group first when the world has more than one rank.

    On CUDA each rank takes GPU LOCAL_RANK of its node and the NCCL backend; on CPU the gloo
    backend. The rendezvous (MASTER_ADDR, MASTER_PORT) comes from torchrun's environment. Calling it
    again in the same process reuses the group (the tests train several runs per process).
    """
    if not info.active:
        return pick_device(requested)
    if requested.startswith("cuda:"):
        raise ValueError(f"--device {requested}: under torchrun each rank takes GPU LOCAL_RANK; use --device cuda or auto")
    if requested in ("auto", "cuda") and torch.cuda.is_available():
        dev = torch.device("cuda", info.local_rank)
        torch.cuda.set_device(dev)
    else:
        dev = pick_device(requested)
        if dev.type == "cuda":
            raise RuntimeError("--device cuda asked for, but torch sees no CUDA GPU")
    backend = "nccl" if dev.type == "cuda" else "gloo"
    if tdist.is_initialized():
        if tdist.get_world_size() != info.world or tdist.get_backend() != backend:
            raise RuntimeError(f"a process group of {tdist.get_world_size()} ranks ({tdist.get_backend()}) is already set up; this run needs {info.world} ({backend})")
    else:
        # rank 0 evaluates and writes checkpoints while the others wait in the next all-reduce
        tdist.init_process_group(backend=backend, timeout=timedelta(minutes=30))
    return dev


def shutdown_distributed() -> None:
    """Leave the process group (end of `main`); a no-op in a single process."""
    if tdist.is_available() and tdist.is_initialized():
        tdist.destroy_process_group()


def rank_share(idx: np.ndarray, info: DistInfo) -> np.ndarray:
    """The contiguous part of a global micro-batch's example indices that rank `info.rank` trains on."""
    if len(idx) % info.world:
        raise ValueError(f"train.batch_size {len(idx)} (the global micro-batch) is not divisible by the {info.world} ranks; pick a multiple")
    share = len(idx) // info.world
    return idx[info.rank * share : (info.rank + 1) * share]


def loss_scale(world: int) -> float:
    """Factor on each rank's loss (its share of the global batch's mean) before backward.

    DDP divides the sum of the ranks' gradients by the world size; the gradient of the global mean is
    that sum itself, so every rank scales its loss by the world size.
    """
    return float(world)


def autocast_ctx(device: torch.device, precision: str):
    """bf16 autocast for precision "bf16" (on a CUDA GPU only if it supports bf16), else no autocast."""
    if precision == "bf16":
        if device.type == "cuda" and not torch.cuda.is_bf16_supported():
            return contextlib.nullcontext()
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def lr_at(step: int, t: dict) -> float:
    """Linear warm-up to lr, then cosine decay to lr * min_lr_ratio at max_steps."""
    lr, warm, total = t["lr"], t["warmup_steps"], t["max_steps"]
    if warm > 0 and step < warm:
        return lr * (step + 1) / warm
    progress = min(1.0, (step - warm) / max(1, total - warm))
    floor = lr * t["min_lr_ratio"]
    return floor + (lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


class EMA:
    """Polyak/EMA weights (decay 0.99 in Ruoss et al. 2024, App. B.3), with the usual warm-up
    min(decay, (1+n)/(10+n)) so early averages are not dominated by the initialisation."""

    def __init__(self, model: torch.nn.Module, decay: float):
        self.decay = decay
        self.shadow = {k: v.detach().clone().float() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model: torch.nn.Module, num_updates: int) -> None:
        """Blend the model's current weights in (after optimiser step `num_updates`)."""
        d = min(self.decay, (1.0 + num_updates) / (10.0 + num_updates))
        for k, v in model.state_dict().items():
            if v.dtype.is_floating_point:
                self.shadow[k].mul_(d).add_(v.detach().float(), alpha=1.0 - d)
            else:
                self.shadow[k].copy_(v)

    def state_dict(self):
        """The averaged weights (fp32), keyed like the model's state dict."""
        return self.shadow

    def load_state_dict(self, sd):
        """Copy averaged weights from a checkpoint."""
        for k in self.shadow:
            self.shadow[k].copy_(sd[k])


def make_optimizer(model, t):
    """AdamW with weight decay on matrices (and embeddings) only; tied weights appear once."""
    decay, no_decay = [], []
    for p in {id(p): p for p in model.parameters()}.values():
        (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": t["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=t["lr"], betas=tuple(t["betas"]))


def atomic_save(obj, path: str) -> None:
    """torch.save to a temporary file, then rename it over `path` (a kill never leaves half a file)."""
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


@torch.no_grad()
def evaluate(task, model, t, device) -> dict:
    """Mean of the per-batch stats over the first eval_batches batches of the val split (in order)."""
    d = task.val
    if d is None or len(d) == 0:
        return {}
    was_training = model.training
    model.eval()
    bs = t["batch_size"]
    sums: dict = {}
    weight = 0
    for b in range(min(t["eval_batches"], math.ceil(len(d) / bs))):
        idx = np.arange(b * bs, min(len(d), (b + 1) * bs))
        with autocast_ctx(device, t["precision"]):
            _, stats, counts = task.loss(model, task.batch("val", idx, device))
        w = counts.get("loss_tokens", counts.get("moves", counts["examples"]))
        weight += w
        for k, v in stats.items():
            sums[k] = sums.get(k, 0.0) + float(v) * w
    model.train(was_training)
    return {f"val_{k}": v / max(1, weight) for k, v in sums.items()}


# ---------------------------------------------------------------------------------------------
# training


def train(
    config: dict,
    data_dir: str,
    run_dir: str,
    device: str = "auto",
    _kill_after_step: int | None = None,
    init_from: str | None = None,
    device_batch: int | None = None,
    time_budget_s: float | None = None,
    distill_from: str | None = None,
) -> dict:
    """Train (or resume) a run; returns the summary written to run_dir/summary.json.

    `init_from` (a model package folder) starts a new run from that package's weights (fine-tuning, see
    mavtrain.warmstart); a resumed run ignores it, its checkpoint holds the weights.

    `distill_from` (a mav-lm package folder) trains the config's model to compute what that package
    computes (mavtrain.distill): the weights they share start as the package's, the loss is the KL
    divergence to its next-token distributions plus the blocks' MLP errors. A resumed distillation needs
    the same package again (its weights are not in the checkpoint).

    Under `torchrun` (WORLD_SIZE > 1) the ranks train data parallel (see the module docstring); ranks
    other than 0 write nothing and return {}. `device_batch` caps the examples one forward pass holds
    on a device: a rank's share of a micro-batch is then run in chunks with their gradients summed, which
    saves memory without changing the result (beyond float rounding). World size and `device_batch`
    are not part of the run: a checkpoint resumes under any of them.

    `time_budget_s` fits the run to a wall-clock budget (a lent GPU for a few minutes): after
    `BUDGET_CALIBRATION` steps it measures the time per step and sets `max_steps` so that the run, with its
    evaluations and checkpoints, ends within `BUDGET_SAFETY` of the budget, the cosine schedule complete. The
    chosen `max_steps` is logged; a later resume passes it as `--max-steps`.

    `_kill_after_step` is for tests only: it returns right after that step *without* writing a
    checkpoint, as if the process had been killed there.
    """
    dist = dist_from_env()
    t = config["train"]
    fmt = config["format"]
    if t["batch_size"] % dist.world:
        raise ValueError(f"train.batch_size {t['batch_size']} (the global micro-batch) is not divisible by the {dist.world} ranks; pick a multiple")
    if device_batch is not None and device_batch < 1:
        raise ValueError(f"--device-batch must be at least 1, not {device_batch}")
    dev = setup_distributed(dist, device)

    os.makedirs(run_dir, exist_ok=True)
    ckpt_path = os.path.join(run_dir, "checkpoint.pt")
    cfg_path = os.path.join(run_dir, "config.json")
    resuming = os.path.exists(ckpt_path)
    if resuming:
        with open(cfg_path, encoding="utf-8") as f:
            saved = json.load(f)
        if {**saved, "train": {**saved["train"], "max_steps": None}} != {**config, "train": {**config["train"], "max_steps": None}}:
            raise ValueError(
                f"{run_dir} holds a run with a different config (see its config.json); resume it with the "
                "same config (only max_steps may change) or pick a new --run dir"
            )
    if dist.active:
        # every rank has read config.json before rank 0 rewrites it, and all agree on resuming
        views: list = [None] * dist.world
        tdist.all_gather_object(views, (resuming, socket.gethostname(), machine_description(dev)))
        if len({v[0] for v in views}) > 1:
            raise RuntimeError(
                f"only some ranks see {ckpt_path}: the run dir must be on a filesystem that every node shares"
            )
    if dist.main:
        with open(cfg_path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)

    torch.manual_seed(t["seed"])
    meta = D.read_meta(data_dir)
    mcfg = ModelConfig.from_dict(config["model"])
    task = TASKS[fmt](data_dir, meta, t, mcfg, limit=t["limit_train_examples"])
    model = build_model(fmt, mcfg)
    warm = None
    say = print if dist.main else (lambda *a, **k: None)
    if init_from and distill_from:
        raise ValueError("--init-from and --distill-from both start from a package; give one")
    teacher = None
    if distill_from:
        teacher, teacher_meta = load_teacher(distill_from, fmt, mcfg)
        if not resuming:
            copied = student_init(model, teacher)
            say(f"distilling from {distill_from} ({teacher_meta.get('name')}, {teacher.cfg.mlp} MLP of {teacher.cfg.d_ff}): "
                f"{len(copied)} of {len(list(model.parameters()))} weights copied", flush=True)
        warm = {"distilled_from": describe(distill_from, teacher_meta, teacher)}
    if init_from and not resuming:
        model.load_state_dict(load_package_weights(init_from, fmt, mcfg))
        with open(os.path.join(init_from, "mav.json"), encoding="utf-8") as f:
            pkg = json.load(f)
        warm = {"package": os.path.abspath(init_from), "name": pkg.get("name"), "games": pkg.get("games"), "vocab_size": pkg.get("vocab_size"), "training": pkg.get("training")}
        say(f"initialised from {init_from} ({pkg.get('name')}, vocabulary {pkg.get('vocab_size')} -> {mcfg.vocab_size})", flush=True)
    elif init_from:
        say(f"resuming: --init-from {init_from} is not used, the checkpoint holds the weights", flush=True)
    model = model.to(dev)
    opt = make_optimizer(model, t)
    ema = EMA(model, t["ema_decay"]) if dist.main else None  # only rank 0 evaluates and saves
    n_params = count_parameters(model)

    step = 0
    wall = 0.0
    seen = {"examples": 0, "tokens": 0}
    if resuming:
        ck = torch.load(ckpt_path, map_location="cpu", weights_only=False)  # load_state_dict moves to dev
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        if ema is not None:
            ema.load_state_dict(ck["ema"])
        step, wall, seen = ck["step"], ck["wall_time_s"], ck["seen"]
        torch.set_rng_state(ck["torch_rng"])
        del ck
        say(f"resuming {run_dir} at step {step}", flush=True)
    log = RunLog(os.path.join(run_dir, "log.jsonl"), step if resuming else None, enabled=dist.main)

    precision = t["precision"]
    if precision == "bf16" and dev.type == "cuda" and not torch.cuda.is_bf16_supported():
        precision = "fp32"  # autocast_ctx falls back to fp32 on such a GPU
        say("this GPU has no bf16: training in fp32", flush=True)
    info_path = os.path.join(run_dir, "run_info.json")
    if dist.main:
        if resuming and os.path.exists(info_path):
            with open(info_path, encoding="utf-8") as f:
                before = json.load(f).get("init_from")
            if teacher is None and before and "distilled_from" in before:
                raise ValueError(f"{run_dir} is a distillation from {before['distilled_from']['package']}: resume it with --distill-from")
            if teacher is not None and not (before and "distilled_from" in before):
                raise ValueError(f"{run_dir} is not a distillation: resume it without --distill-from")
            warm = before
        if dist.active:
            hosts = {v[1] for v in views}
            names = sorted({v[2] for v in views})
            where = f" on {len(hosts)} nodes" if len(hosts) > 1 else ""
            device_desc = f"{dev.type} x {dist.world} ranks (DDP{where})"
            machine = f"{dist.world} x {names[0]}" if len(names) == 1 else "; ".join(names)
        else:
            device_desc, machine = str(dev), machine_description(dev)
        with open(info_path, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "format": fmt,
                    "data_dir": os.path.abspath(data_dir),
                    "meta": meta,
                    "model": mcfg.to_dict(),
                    "parameters": n_params,
                    "device": device_desc,
                    "machine": machine,
                    "precision": precision,
                    "world_size": dist.world,
                    "device_batch": device_batch,
                    "data": task.data_summary(),
                    "internal_search": task.internal_search,
                    "torch": torch.__version__,
                    "init_from": warm,
                },
                f,
                indent=2,
            )
    if not resuming:
        ranks = f" x {dist.world} ranks" if dist.active else ""
        say(f"{config['name']}: {fmt}, {n_params:,} parameters, {len(task.train):,} training examples, device {dev}{ranks}", flush=True)

    def checkpoint():
        atomic_save(
            {"model": model.state_dict(), "optimizer": opt.state_dict(), "ema": ema.state_dict(), "step": step, "wall_time_s": wall, "seen": seen, "torch_rng": torch.get_rng_state(), "model_config": mcfg.to_dict(), "format": fmt},
            ckpt_path,
        )

    # the plain loop (one process, whole micro-batches) is the one single-device runs always had;
    # the sharded loop normalises every chunk's loss by the global micro-batch's counts
    chunk_tokens = t["chunk_tokens"]
    sharded = dist.active or device_batch is not None or chunk_tokens is not None
    net = model
    if dist.active:
        net = DistributedDataParallel(model, device_ids=[dev.index] if dev.type == "cuda" else None, broadcast_buffers=False)
    accum = t["grad_accum"]
    loss_fn = task.loss
    if teacher is not None:
        teacher = teacher.to(dev)
        loss_fn = Distiller(task, model, teacher, t["distill_mlp_weight"]).loss
        if dist.main and not resuming:
            ev = {f"teacher_{k}": v for k, v in evaluate(task, teacher, t, dev).items()}
            if ev:
                log.write({"step": 0, **ev})
    model.train()
    win = {"t": time.perf_counter(), "examples": 0, "tokens": 0, "loss": 0.0, "steps": 0}
    budget = {"start": time.perf_counter(), "first": step + BUDGET_CALIBRATION[0], "last": step + BUDGET_CALIBRATION[1], "t": None}
    while step < t["max_steps"]:
        t0 = time.perf_counter()
        lr = lr_at(step, t)
        for g in opt.param_groups:
            g["lr"] = lr
        step_loss = 0.0
        if sharded:
            totals = torch.zeros(3, dtype=torch.float64, device=dev)  # loss share, examples, tokens
        for micro in range(accum):
            idx = task.train_indices(t["batch_size"], t["seed"], step * accum + micro)
            if not sharded:
                batch = task.batch("train", idx, dev)
                with autocast_ctx(dev, t["precision"]):
                    loss, stats, counts = loss_fn(model, batch)
                (loss / accum).backward()
                step_loss += float(stats["loss"]) / accum
                win["examples"] += counts["examples"]
                win["tokens"] += counts["tokens"]
                seen["examples"] += counts["examples"]
                seen["tokens"] += counts["tokens"]
                continue
            mine = rank_share(idx, dist)
            parts = [mine] if chunk_tokens is None else task.token_chunks("train", mine, chunk_tokens)
            size = device_batch or len(mine)
            batches = [task.batch("train", p[i : i + size], dev) for p in parts for i in range(0, len(p), size)]
            norm = global_loss_norm([task.loss_norm(b) for b in batches], dev, dist)
            for j, batch in enumerate(batches):
                last = micro == accum - 1 and j == len(batches) - 1
                sync = contextlib.nullcontext() if last or not dist.active else net.no_sync()
                with sync:
                    with autocast_ctx(dev, t["precision"]):
                        loss, stats, counts = loss_fn(net, batch, norm)
                    (loss * (loss_scale(dist.world) / accum)).backward()
                totals[0] += stats["loss"].detach().double() / accum
                totals[1] += counts["examples"]
                totals[2] += counts["tokens"]
        if sharded:
            if dist.active:
                tdist.all_reduce(totals)
            step_loss, n_ex, n_tok = totals.tolist()
            for key, n in (("examples", int(n_ex)), ("tokens", int(n_tok))):
                win[key] += n
                seen[key] += n
        if t["grad_clip"]:
            torch.nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        if ema is not None:
            ema.update(model, step)
        wall += time.perf_counter() - t0
        if time_budget_s is not None and step == budget["first"]:
            budget["t"] = time.perf_counter()
        if time_budget_s is not None and step == budget["last"]:
            t["max_steps"] = fit_to_budget(budget, step, time_budget_s, dev, dist)
            log.write({"step": step, "time_budget_s": time_budget_s, "max_steps": t["max_steps"]})
        win["loss"] += step_loss
        win["steps"] += 1
        if not math.isfinite(step_loss):
            raise FloatingPointError(f"loss is {step_loss} at step {step}; lower train.lr or check the data")
        if step % t["log_every"] == 0 or step == t["max_steps"]:
            dt = time.perf_counter() - win["t"]
            log.write({"step": step, "loss": win["loss"] / win["steps"], "lr": lr, "tokens_per_s": win["tokens"] / dt, "examples_per_s": win["examples"] / dt, "wall_time_s": wall})
            win = {"t": time.perf_counter(), "examples": 0, "tokens": 0, "loss": 0.0, "steps": 0}
        if _kill_after_step is not None and step >= _kill_after_step:
            return {}
        if dist.main and step % t["eval_every"] == 0 and step < t["max_steps"]:
            ev = eval_with_ema(task, model, ema, t, dev)
            if ev:
                log.write({"step": step, **ev})
        if dist.main and (step % t["checkpoint_every"] == 0 or step == t["max_steps"]):
            checkpoint()
            win["t"] = time.perf_counter()

    if not dist.main:
        tdist.barrier()  # leave together with rank 0, once its checkpoint and summary are written
        return {}
    ev = eval_with_ema(task, model, ema, t, dev)
    if ev:
        log.write({"step": step, "final": True, **ev})
    train_logs = [e for e in read_log(run_dir) if "loss" in e]
    summary = {
        "name": config["name"],
        "format": fmt,
        "steps": step,
        "wall_time_s": wall,
        "examples_seen": seen["examples"],
        "tokens_seen": seen["tokens"],
        "parameters": n_params,
        "final_train_loss": train_logs[-1]["loss"] if train_logs else None,
        "mean_tokens_per_s": seen["tokens"] / wall if wall > 0 else None,
        "mean_examples_per_s": seen["examples"] / wall if wall > 0 else None,
        **ev,
    }
    with open(os.path.join(run_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    if dist.active:
        tdist.barrier()
    return summary


def fit_to_budget(budget: dict, step: int, time_budget_s: float, dev: torch.device, info: DistInfo) -> int:
    """The `max_steps` that ends a run within its time budget, from the steps timed since calibration began
    (rank 0's answer on every rank, so that all ranks stop at the same step)."""
    now = time.perf_counter()
    per_step = (now - budget["t"]) / (budget["last"] - budget["first"])
    left = time_budget_s * BUDGET_SAFETY - (now - budget["start"])
    steps = torch.tensor([step + max(1, int(left / per_step))], dtype=torch.int64, device=dev)
    if info.active:
        tdist.broadcast(steps, src=0)
    return int(steps.item())


def global_loss_norm(parts: list[dict], device: torch.device, info: DistInfo) -> dict:
    """The loss denominators of the global micro-batch: each chunk's `task.loss_norm`, summed over this
    rank's chunks and (one all-reduce) over all ranks; fp32 scalars keyed like `loss_norm`."""
    keys = list(parts[0])
    total = torch.stack([sum(p[k] for p in parts).to(device=device, dtype=torch.float64) for k in keys])
    if info.active:
        tdist.all_reduce(total)
    return dict(zip(keys, total.float()))


def eval_with_ema(task, model, ema, t, dev) -> dict:
    """Validation with the EMA weights (the weights that get exported)."""
    if task.val is None:
        return {}
    live = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict({k: v.to(live[k].dtype) for k, v in ema.state_dict().items()})
    try:
        return evaluate(task, model, t, dev)
    finally:
        model.load_state_dict(live)


def main(argv=None) -> int:
    """The command line (see the module docstring); returns the exit status (2 on a reported error)."""
    ap = argparse.ArgumentParser(prog="python -m mavtrain.train", description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, help="configs/<format>-<size>.json")
    ap.add_argument("--data", required=True, help="data dir written by `mavboard datagen render`")
    # --run-dir: under torchrun, whose own parser would read `--run` as an abbreviation of its --run-path
    ap.add_argument("--run", "--run-dir", dest="run", required=True, help="run dir (created; an existing one with a checkpoint is resumed); spell it --run-dir under torchrun")
    ap.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's choice, one per core)")
    ap.add_argument("--device", default="auto", help="auto (CUDA when available), cpu, cuda, cuda:N")
    ap.add_argument("--precision", choices=["bf16", "fp32"], help="override train.precision")
    ap.add_argument("--max-steps", type=int, help="override train.max_steps")
    ap.add_argument("--batch-size", type=int, help="override train.batch_size")
    ap.add_argument("--seed", type=int, help="override train.seed (another run of the same config)")
    ap.add_argument("--limit", type=int, help="use only the first N training records")
    ap.add_argument("--init-from", help="model package folder to start from (fine-tuning; its vocabulary may be extended by the data's)")
    ap.add_argument("--distill-from", help="mav-lm package folder whose model the config's model learns to compute (mavtrain.distill: another block, the same function)")
    ap.add_argument("--time-budget", type=float, help="seconds: set max_steps after the first 60 steps so that the run ends within this wall-clock time")
    ap.add_argument("--device-batch", type=int, help="at most N examples per forward pass on a device (a rank's share runs in chunks; same result, less memory)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        cfg = load_config(args.config)
        for key, val in (("precision", args.precision), ("max_steps", args.max_steps), ("batch_size", args.batch_size), ("seed", args.seed), ("limit_train_examples", args.limit)):
            if val is not None:
                cfg["train"][key] = val
        summary = train(cfg, args.data, args.run, args.device, init_from=args.init_from, device_batch=args.device_batch, time_budget_s=args.time_budget, distill_from=args.distill_from)
    except (D.DataError, WarmStartError, DistillError, ValueError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        shutdown_distributed()
    if summary:  # ranks other than 0 return {}
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
