"""Shared fixtures: a TEST-ONLY synthetic data dir and toy configs for each format."""

import copy

import pytest
import torch

from synthetic import make_data_dir

# the toy models gain nothing from more threads, and one thread keeps the suite quick on shared CPUs
torch.set_num_threads(1)

TOY_MODEL = {"d_model": 32, "num_layers": 2, "num_heads": 2, "d_ff": 64, "context_length": 64}
TOY_TRAIN = {
    "batch_size": 4,
    "max_steps": 10,
    "warmup_steps": 3,
    "log_every": 1,
    "eval_every": 5,
    "eval_batches": 2,
    "checkpoint_every": 5,
    "precision": "bf16",
    "lr": 3e-3,
}
FORMATS = ["mav-lm", "mav-encoder", "action-value"]


def toy_config(fmt: str, **train_overrides) -> dict:
    from mavtrain.train import normalise_config

    train = copy.deepcopy(TOY_TRAIN)
    if fmt == "action-value":
        train["batch_size"] = 8
    train.update(train_overrides)
    return normalise_config({"format": fmt, "name": f"toy-{fmt}", "model": dict(TOY_MODEL), "train": train})


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    return make_data_dir(str(tmp_path_factory.mktemp("synthetic-data")), n_train=48, n_val=12)


@pytest.fixture(scope="session")
def trained_runs(data_dir, tmp_path_factory):
    """One 10-step toy run per format, shared by the training and export tests."""
    from mavtrain.train import train

    runs = {}
    for fmt in FORMATS:
        run = str(tmp_path_factory.mktemp(f"run-{fmt}"))
        summary = train(toy_config(fmt), data_dir, run, device="cpu")
        runs[fmt] = (run, summary)
    return runs
