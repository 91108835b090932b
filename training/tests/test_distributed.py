"""Data-parallel training (torchrun, gloo on CPU, 2 processes) is the same computation as one process.

2 ranks x batch B (config batch_size 2B, the global micro-batch) must give the weights, EMA weights and
optimiser moments of 1 process x batch 2B after N steps, within float tolerance; a gradient *sum*
instead of a mean, or per-rank token means instead of the global one, must break that tolerance; a
checkpoint written by 2 ranks resumes in 1 process and the other way round. fp32, so the tolerance can
be tight: the only differences are the order of float additions (all-reduce, smaller matmuls); one
bf16 run checks autocast under DDP with a looser tolerance (see its test).

Run with `-s` to see the measured differences. One `torchrun` launch (2 CPU processes) runs every
2-rank job; on the 2-core development machine the file takes about 25 s.
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import FORMATS, toy_config
from mavtrain.models import ModelConfig, build_model
from mavtrain.train import read_log, train

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 8
# measured (2026-11-26, 2-core CPU, fp32): the 2-rank runs differ from the 1-process runs by at most
# 7e-7 (mav-lm), 5e-6 (mav-encoder), 1.3e-6 (action-value) relative, over weights, EMA and Adam moments;
# a gradient sum instead of the mean by 3.0 (the second moment quadruples), per-rank token means by 0.5
TOL = 1e-4
TOL_BF16 = 3e-2


def _cfg(fmt, **over):
    base = {"max_steps": STEPS, "checkpoint_every": 4, "eval_every": 4, "precision": "fp32", "warmup_steps": 2}
    if fmt == "mav-lm":
        base["grad_accum"] = 2  # exercises DDP's no_sync accumulation
    if fmt != "mav-encoder":
        # no clipping: a clipped gradient (these clip at every step) has the same norm whatever its
        # scale, and Adam's step is scale-free too, so a gradient of the wrong scale would go unseen;
        # Adam's moments show it (the encoder run keeps the clip, which DDP must also get right)
        base["grad_clip"] = 0.0
    base.update(over)
    return toy_config(fmt, **base)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(jobs, tmp_path, nproc=2):
    spec = tmp_path / "jobs.json"
    spec.write_text(json.dumps(jobs))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.path.join(HERE, "tests")]), OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(nproc),
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{_free_port()}", "--max-restarts", "0",
        os.path.join(HERE, "tests", "ddp_worker.py"), str(spec),
    ]
    r = subprocess.run(cmd, cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    return r


def _ck(run):
    return torch.load(os.path.join(run, "checkpoint.pt"), weights_only=False)


# The encoder's best-move bias shifts every candidate's logit alike, and the softmax over candidates
# ignores such a shift: its true gradient is 0, the computed one float noise (~1e-9) that Adam scales
# up to full-size steps. So it follows a different random walk in every run, and carries no signal.
NO_GRADIENT = {"best_head.bias"}


def _param_names(ck):
    """Parameter names in the optimiser's order (mavtrain.train.make_optimizer: matrices, then the rest)."""
    model = build_model(ck["format"], ModelConfig.from_dict(ck["model_config"]))
    named = list(model.named_parameters())
    return [n for n, p in named if p.dim() >= 2] + [n for n, p in named if p.dim() < 2]


def _tensors(ck):
    """Every float tensor of a checkpoint that training changes: weights, EMA, Adam's two moments."""
    out = {f"model.{k}": v for k, v in ck["model"].items() if k not in NO_GRADIENT}
    out.update({f"ema.{k}": v for k, v in ck["ema"].items() if k not in NO_GRADIENT})
    names = _param_names(ck)
    for pid, st in ck["optimizer"]["state"].items():
        if names[pid] not in NO_GRADIENT:
            for k in ("exp_avg", "exp_avg_sq"):
                out[f"opt.{names[pid]}.{k}"] = st[k]
    return out


def rel_diff(a, b) -> float:
    """Largest |a - b| of any tensor, relative to that tensor's largest |b|."""
    ta, tb = _tensors(a), _tensors(b)
    assert ta.keys() == tb.keys()
    return max(float((ta[k].double() - tb[k].double()).abs().max() / tb[k].double().abs().max().clamp_min(1e-30)) for k in ta)


@pytest.fixture(scope="module")
def ddp_runs(data_dir, tmp_path_factory):
    """The 1-process reference runs, then one `torchrun` launch of 2 ranks running every 2-rank job."""
    tmp = tmp_path_factory.mktemp("ddp")
    one, jobs = {}, []
    for fmt in FORMATS:
        one[fmt] = str(tmp / f"one-{fmt}")
        train(_cfg(fmt), data_dir, one[fmt], device="cpu")
        jobs.append({"config": _cfg(fmt), "data": data_dir, "run": str(tmp / f"two-{fmt}")})
    # bf16 autocast (the configs' default): the reference runs the ranks' halves as chunks (see below)
    one["bf16"] = str(tmp / "one-bf16")
    train(_cfg("mav-lm", precision="bf16"), data_dir, one["bf16"], device="cpu", device_batch=2)
    jobs.append({"config": _cfg("mav-lm", precision="bf16"), "data": data_dir, "run": str(tmp / "two-bf16")})
    lm = _cfg("mav-lm")
    jobs.append({"config": lm, "data": data_dir, "run": str(tmp / "bug-sum"), "bug": "sum"})
    jobs.append({"config": lm, "data": data_dir, "run": str(tmp / "bug-local-mean"), "bug": "local_mean"})
    # killed in one process after step 6 (checkpoint: step 4), resumed by 2 ranks
    train(lm, data_dir, str(tmp / "one-then-two"), device="cpu", _kill_after_step=6)
    jobs.append({"config": lm, "data": data_dir, "run": str(tmp / "one-then-two")})
    # killed under 2 ranks, resumed below by one process
    jobs.append({"config": lm, "data": data_dir, "run": str(tmp / "two-then-one"), "kill_after": 6})
    # 2 ranks, one example per forward pass (device_batch), through the command line
    jobs.append({"config": _cfg("mav-encoder"), "data": data_dir, "run": str(tmp / "cli-enc"), "cli": ["--device-batch", "1"]})
    r = _torchrun(jobs, tmp)
    assert _ck(str(tmp / "two-then-one"))["step"] == 4
    train(lm, data_dir, str(tmp / "two-then-one"), device="cpu")
    return {"one": one, "tmp": tmp, "stdout": r.stdout}


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_ranks_equal_one_process_with_twice_the_batch(ddp_runs, fmt):
    a, b = _ck(str(ddp_runs["tmp"] / f"two-{fmt}")), _ck(ddp_runs["one"][fmt])
    assert a["step"] == b["step"] == STEPS
    assert a["seen"] == b["seen"]  # the ranks' examples and tokens add up to the global batch's
    d = rel_diff(a, b)
    print(f"{fmt}: 2 ranks vs 1 process, max relative difference {d:.2e}")
    assert d < TOL, d
    la = [e["loss"] for e in read_log(str(ddp_runs["tmp"] / f"two-{fmt}")) if "loss" in e]
    lb = [e["loss"] for e in read_log(ddp_runs["one"][fmt]) if "loss" in e]
    assert la == pytest.approx(lb, rel=TOL)
    with open(os.path.join(ddp_runs["tmp"], f"two-{fmt}", "run_info.json")) as f:
        info = json.load(f)
    assert info["world_size"] == 2 and "x 2 ranks" in info["device"]


def test_two_ranks_equal_one_process_under_bf16_autocast(ddp_runs):
    """bf16 matmuls round differently at different batch shapes: one process alone, whole batches of 4
    against chunks of 2, ends ~6e-2 apart after these 8 steps (Adam turns the rounding of near-zero
    gradients into full steps). So the bf16 reference is one process running each rank's half as a
    chunk (`device_batch`), the same shapes: then only the order of the gradient additions differs,
    and its last-bit differences still flip bf16 roundings from step 2 on (measured: 3.5e-3). A wrong
    reduction moves the moments by 0.5-3 (see below), far outside this tolerance."""
    d = rel_diff(_ck(str(ddp_runs["tmp"] / "two-bf16")), _ck(ddp_runs["one"]["bf16"]))
    print(f"bf16: 2 ranks vs 1 process in chunks of a rank's share, max relative difference {d:.2e}")
    assert d < TOL_BF16, d


def test_a_wrong_gradient_reduction_breaks_the_tolerance(ddp_runs):
    ref = _ck(ddp_runs["one"]["mav-lm"])
    summed = rel_diff(_ck(str(ddp_runs["tmp"] / "bug-sum")), ref)
    local = rel_diff(_ck(str(ddp_runs["tmp"] / "bug-local-mean")), ref)
    print(f"gradient sum: {summed:.2e}; per-rank token means: {local:.2e}")
    assert summed > 100 * TOL and local > 10 * TOL, (summed, local)


def test_checkpoints_resume_under_another_world_size(ddp_runs):
    ref = _ck(ddp_runs["one"]["mav-lm"])
    for name in ("one-then-two", "two-then-one"):
        run = str(ddp_runs["tmp"] / name)
        ck = _ck(run)
        assert ck["step"] == STEPS and ck["seen"] == ref["seen"], name
        assert rel_diff(ck, ref) < TOL, name
        steps = [e["step"] for e in read_log(run) if "loss" in e]
        assert steps == list(range(1, STEPS + 1)), name


def test_command_line_under_torchrun_with_a_device_batch(ddp_runs):
    a, b = _ck(str(ddp_runs["tmp"] / "cli-enc")), _ck(ddp_runs["one"]["mav-encoder"])
    assert rel_diff(a, b) < TOL
    assert ddp_runs["stdout"].count('"steps": 8') == 1, "only rank 0 prints the summary"
    assert os.path.exists(ddp_runs["tmp"] / "cli-enc" / "summary.json")


def test_device_batch_in_one_process_matches_whole_batches(data_dir, tmp_path):
    whole, chunked = str(tmp_path / "whole"), str(tmp_path / "chunked")
    cfg = _cfg("mav-lm", max_steps=4)
    train(cfg, data_dir, whole, device="cpu")
    train(cfg, data_dir, chunked, device="cpu", device_batch=1)
    assert rel_diff(_ck(chunked), _ck(whole)) < TOL


def test_token_chunks_give_the_same_step_with_less_padding(data_dir, tmp_path):
    from mavtrain import data as D
    from mavtrain.tasks import LMTask
    from mavtrain.train import normalise_config

    cfg = normalise_config(_cfg("mav-lm"))
    task = LMTask(data_dir, D.read_meta(data_dir), cfg["train"], ModelConfig.from_dict(cfg["model"]))
    idx = task.train_indices(16, 1234, 0)
    lens = lambda ix: task.train.offsets[ix + 1] - task.train.offsets[ix]  # noqa: E731
    padded = lambda parts: sum(len(p) * int(lens(p).max()) - int(lens(p).sum()) for p in parts)  # noqa: E731
    longest = int(lens(idx).max())
    # a budget the whole batch fits in: one pass, as without chunks
    (one,) = task.token_chunks("train", idx, 16 * longest)
    assert sorted(one.tolist()) == sorted(idx.tolist()) and (lens(one)[:-1] <= lens(one)[1:]).all()
    # a smaller one: runs of similar length, each within the budget (or one example), all examples once
    budget = 4 * longest
    parts = task.token_chunks("train", idx, budget)
    assert len(parts) > 1 and sorted(np.concatenate(parts).tolist()) == sorted(idx.tolist())
    assert all(len(p) == 1 or len(p) * int(lens(p).max()) <= budget for p in parts)
    before, after = padded([idx]), padded(parts)
    print(f"padded positions of a 16-example batch: {before} in one pass, {after} in {len(parts)} runs of <= {budget} tokens")
    assert after < before
    assert [len(p) for p in task.token_chunks("train", idx, 1)] == [1] * 16
    # the same step: chunked runs end where whole batches do
    whole, chunked = str(tmp_path / "whole"), str(tmp_path / "chunked")
    train(_cfg("mav-lm", max_steps=4), data_dir, whole, device="cpu")
    train(_cfg("mav-lm", max_steps=4, chunk_tokens=budget), data_dir, chunked, device="cpu")
    assert rel_diff(_ck(chunked), _ck(whole)) < TOL
    assert _ck(chunked)["seen"] == _ck(whole)["seen"]
    for bad in (0, 1.5, True, "8"):
        with pytest.raises(ValueError, match="chunk_tokens"):
            normalise_config(_cfg("mav-lm", chunk_tokens=bad))
    with pytest.raises(ValueError, match="chunk_tokens"):
        normalise_config(_cfg("mav-encoder", chunk_tokens=4096))


def test_the_documented_torchrun_command_reaches_mavtrain_intact():
    """torchrun's parser abbreviates options it does not know: `--run` would become its `--run-path`.
    Every mavtrain.train option, spelled as the README does under torchrun, must reach the script."""
    from torch.distributed.run import get_args_parser

    ours = ["--config", "c.json", "--data", "d", "--run-dir", "r", "--threads", "1", "--device", "cuda", "--precision", "bf16",
            "--max-steps", "5", "--batch-size", "8", "--seed", "3", "--limit", "9", "--init-from", "p", "--device-batch", "4"]
    args = get_args_parser().parse_args(["--standalone", "--nproc-per-node", "8", "-m", "mavtrain.train", *ours])
    assert args.module and args.training_script == "mavtrain.train"
    assert args.training_script_args == ours
    with pytest.raises(SystemExit):  # the reason for --run-dir
        get_args_parser().parse_args(["--standalone", "-m", "mavtrain.train", "--run", "r"])
