"""Training throughput: `python -m mavtrain.bench --config CONFIG --data DATA [--steps N]`.

Runs full optimiser steps (forward, backward, AdamW, EMA) of the config's model on its data,
alternating fp32 and bf16 step by step so that both see the same machine load, and prints the
median tokens/s and examples/s of each precision. Writes nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

from . import data as D
from .models import ModelConfig, build_model, count_parameters
from .tasks import TASKS
from .train import EMA, autocast_ctx, load_config, machine_description, make_optimizer, pick_device


def bench(config: dict, data_dir: str, steps: int, device: str = "auto", warmup: int = 2) -> dict:
    t = config["train"]
    dev = pick_device(device)
    torch.manual_seed(t["seed"])
    meta = D.read_meta(data_dir)
    mcfg = ModelConfig.from_dict(config["model"])
    task = TASKS[config["format"]](data_dir, meta, t, mcfg, limit=t["limit_train_examples"])
    model = build_model(config["format"], mcfg).to(dev)
    opt = make_optimizer(model, t)
    ema = EMA(model, t["ema_decay"])
    times: dict = {"fp32": [], "bf16": []}
    counts: dict = {"fp32": [], "bf16": []}
    micro = 0
    for i in range(warmup + steps):
        for prec in ("fp32", "bf16"):
            idx = task.train_indices(t["batch_size"], t["seed"], micro)
            micro += 1
            batch = task.batch("train", idx, dev)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            with autocast_ctx(dev, prec):
                loss, _, c = task.loss(model, batch)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            ema.update(model, micro)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[prec].append(dt)
                counts[prec].append(c)
    out = {"config": config["name"], "parameters": count_parameters(model), "device": str(dev), "machine": machine_description(dev), "batch_size": t["batch_size"], "steps_per_precision": steps}
    for prec in ("fp32", "bf16"):
        out[prec] = {
            "tokens_per_s_median": statistics.median(c["tokens"] / s for c, s in zip(counts[prec], times[prec])),
            "examples_per_s_median": statistics.median(c["examples"] / s for c, s in zip(counts[prec], times[prec])),
            "step_s_median": statistics.median(times[prec]),
        }
    out["bf16_speedup"] = out["fp32"]["step_s_median"] / out["bf16"]["step_s_median"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavtrain.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per precision (after 2 warm-up steps)")
    ap.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's choice, one per core)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        cfg = load_config(args.config)
        if args.batch_size:
            cfg["train"]["batch_size"] = args.batch_size
        res = bench(cfg, args.data, args.steps, args.device)
    except (D.DataError, ValueError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
