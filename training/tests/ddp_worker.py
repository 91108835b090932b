"""Worker of test_distributed.py, run on every rank by `torchrun`: `ddp_worker.py JOBS.json`.

JOBS.json lists training jobs run one after the other by every rank: {"config", "data", "run",
"kill_after" (optional), "bug" (optional), "cli" (optional)}. A `bug` swaps in a deliberately wrong
gradient reduction, so the test can show that its tolerance catches one:

* "sum": the ranks' gradients are summed instead of averaged (each loss scaled by world², so DDP's
  mean is world times the true gradient);
* "local_mean": each rank normalises its loss by its own token count (the mean of per-rank means),
  not by the global batch's.

"cli" runs the job through `mavtrain.train.main` (a config file and command-line flags) instead.
"""

import json
import os
import sys

import torch

torch.set_num_threads(1)

from mavtrain import train as T  # noqa: E402


def local_mean_norm(parts, device, info):
    """The "local_mean" bug: this rank's own counts times the world size as denominators, so that the
    step follows the mean of the ranks' per-rank means, not the global batch's mean."""
    keys = list(parts[0])
    return {k: (sum(p[k] for p in parts) * info.world).to(device=device, dtype=torch.float32) for k in keys}


def run(job: dict) -> None:
    """Train one job on this rank, with its bug patched in for the job only."""
    saved = (T.loss_scale, T.global_loss_norm)
    if job.get("bug") == "sum":
        T.loss_scale = lambda world: float(world * world)
    elif job.get("bug") == "local_mean":
        T.global_loss_norm = local_mean_norm
    elif job.get("bug"):
        raise ValueError(job["bug"])
    try:
        if job.get("cli"):
            path = job["run"] + ".config.json"
            if T.dist_from_env().main:
                with open(path, "w") as f:
                    json.dump(job["config"], f)
            torch.distributed.barrier()
            rc = T.main(["--config", path, "--data", job["data"], "--run-dir", job["run"], "--device", "cpu", *job["cli"]])
            if rc != 0:
                raise SystemExit(rc)
        else:
            T.train(job["config"], job["data"], job["run"], device="cpu", _kill_after_step=job.get("kill_after"), device_batch=job.get("device_batch"))
    finally:
        T.loss_scale, T.global_loss_norm = saved


def main() -> None:
    """Run every job of the JOBS.json named on the command line, then leave the process group."""
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    # the group is set up by the first train() call; the CLI job (main) leaves it, so it runs last
    jobs.sort(key=lambda j: bool(j.get("cli")))
    for job in jobs:
        if job.get("cli") and not torch.distributed.is_initialized():
            T.setup_distributed(T.dist_from_env(), "cpu")
        run(job)
    T.shutdown_distributed()
    print(f"rank {os.environ.get('RANK')}: {len(jobs)} jobs done", flush=True)


if __name__ == "__main__":
    main()
