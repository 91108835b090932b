"""Distillation (--distill-from): a GELU package's model retrained in the Llama block learns to compute
what the package computes, its shared weights start as the package's, and the run says where it came from."""

import copy
import json
import os

import pytest
import torch

from conftest import TOY_MODEL, toy_config
from mavtrain.distill import DistillError, load_teacher, package_mlp, student_init
from mavtrain.export import export
from mavtrain.models import ModelConfig, build_model
from mavtrain.train import normalise_config, read_log, train


def swiglu_config(**train_overrides) -> dict:
    cfg = toy_config("mav-lm", **train_overrides)
    cfg["model"] = {**TOY_MODEL, "mlp": "swiglu"}
    return normalise_config(cfg)


@pytest.fixture(scope="module")
def gelu_package(trained_runs, tmp_path_factory):
    run, _ = trained_runs["mav-lm"]
    pkg = str(tmp_path_factory.mktemp("gelu-pkg"))
    export(run, pkg)
    return pkg


def test_the_package_block_is_read_from_its_graph(gelu_package, data_dir, tmp_path):
    with open(os.path.join(gelu_package, "mav.json")) as f:
        vocab = json.load(f)["vocab_size"]
    cfg = ModelConfig.from_dict({**TOY_MODEL, "vocab_size": vocab, "mlp": "swiglu"})
    assert package_mlp(gelu_package, cfg, vocab) == ("gelu", TOY_MODEL["d_ff"])
    # a swiglu package of another width is read as such
    run = str(tmp_path / "swiglu-run")
    config = swiglu_config(max_steps=2)
    config["model"]["d_ff"] = 48
    train(config, data_dir, run, device="cpu")
    pkg = str(tmp_path / "swiglu-pkg")
    export(run, pkg)
    assert package_mlp(pkg, cfg, vocab) == ("swiglu", 48)
    with pytest.raises(DistillError, match="no model.onnx"):
        package_mlp(str(tmp_path), cfg, vocab)
    with pytest.raises(DistillError, match="mav.json cannot be read"):
        load_teacher(str(tmp_path), "mav-lm", cfg)


def test_the_student_starts_with_the_teachers_shared_weights(gelu_package):
    with open(os.path.join(gelu_package, "mav.json")) as f:
        vocab = json.load(f)["vocab_size"]
    cfg = ModelConfig.from_dict({**TOY_MODEL, "vocab_size": vocab, "mlp": "swiglu"})
    teacher, meta = load_teacher(gelu_package, "mav-lm", cfg)
    assert meta["name"] == "toy-mav-lm" and teacher.cfg.mlp == "gelu"
    student = build_model("mav-lm", cfg)
    copied = set(student_init(student, teacher))
    tsd, ssd = teacher.state_dict(), student.state_dict()
    for name in ("embed.weight", "norm.weight", "blocks.0.attn.qkv.weight", "blocks.1.norm2.weight"):
        assert name in copied and torch.equal(ssd[name], tsd[name])
    # the MLPs differ in kind: only the gate is seeded (from fc1), fc1 and fc2 stay fresh
    assert "blocks.0.fc1.weight" not in copied and not torch.equal(ssd["blocks.0.fc1.weight"], tsd["blocks.0.fc1.weight"])
    assert torch.allclose(ssd["blocks.0.gate.weight"], tsd["blocks.0.fc1.weight"] * 1.702)
    with pytest.raises(DistillError, match="mav-lm"):
        load_teacher(gelu_package, "mav-encoder", cfg)


def test_distillation_learns_the_packages_function_and_records_it(gelu_package, data_dir, tmp_path):
    run = str(tmp_path / "distil")
    config = swiglu_config(max_steps=40, eval_every=20, warmup_steps=2)
    summary = train(copy.deepcopy(config), data_dir, run, device="cpu", distill_from=gelu_package)
    log = read_log(run)
    losses = [e["loss"] for e in log if "loss" in e]
    # KL + MLP error falls to well under half of where the fresh MLPs started
    assert losses[-1] < 0.5 * losses[0], losses
    teacher_eval = [e for e in log if "teacher_val_loss" in e]
    assert len(teacher_eval) == 1 and teacher_eval[0]["step"] == 0
    # the student's language-model loss ends near the teacher's on the same batches
    assert summary["val_loss"] < teacher_eval[0]["teacher_val_loss"] + 0.5, (summary, teacher_eval)
    with open(os.path.join(run, "run_info.json")) as f:
        info = json.load(f)
    assert info["init_from"]["distilled_from"]["name"] == "toy-mav-lm"
    assert info["init_from"]["distilled_from"]["mlp"] == "gelu"
    pkg = str(tmp_path / "distil-pkg")
    export(run, pkg)
    with open(os.path.join(pkg, "MODEL_CARD.md")) as f:
        card = f.read()
    assert "Distilled: trained to compute what the package `toy-mav-lm` computes (gelu MLP of 64" in card, card
    assert "The package distilled from, on the same validation batches: val_loss" in card
    assert "Validation (EMA weights, step 40)" in card and "not logged" not in card
    # a resume must be given the package again: its weights are not in the checkpoint
    with pytest.raises(ValueError, match="resume it with --distill-from"):
        train(copy.deepcopy({**config, "train": {**config["train"], "max_steps": 41}}), data_dir, run, device="cpu")
    # and a run that was not one cannot be resumed as one
    plain = str(tmp_path / "plain")
    train(toy_config("mav-lm", max_steps=2), data_dir, plain, device="cpu")
    with pytest.raises(ValueError, match="not a distillation"):
        train(toy_config("mav-lm", max_steps=3), data_dir, plain, device="cpu", distill_from=gelu_package)
    with pytest.raises(ValueError, match="give one"):
        train(copy.deepcopy(config), data_dir, str(tmp_path / "both"), device="cpu", init_from=gelu_package, distill_from=gelu_package)
