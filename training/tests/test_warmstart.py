"""Warm start (--init-from): a package's ONNX weights come back into PyTorch, a grown vocabulary keeps
the old rows, and a package of another shape is refused."""

import copy
import json
import os
import shutil

import pytest
import torch

from conftest import toy_config
from mavtrain.export import export
from mavtrain.models import ModelConfig, build_model
from mavtrain.train import train
from mavtrain.warmstart import WarmStartError, load_package_weights


@pytest.mark.parametrize("fmt", ["mav-lm", "mav-encoder"])
def test_package_weights_round_trip(trained_runs, tmp_path, fmt):
    run, _ = trained_runs[fmt]
    pkg = str(tmp_path / "pkg")
    export(run, pkg)
    ck = torch.load(os.path.join(run, "checkpoint.pt"), map_location="cpu", weights_only=False)
    cfg = ModelConfig.from_dict(ck["model_config"])
    exported = build_model(fmt, cfg)
    exported.load_state_dict({k: v.float() for k, v in ck["ema"].items()})
    # the same vocabulary: every parameter is the exported one
    same = load_package_weights(pkg, fmt, cfg)
    for name, p in exported.named_parameters():
        assert torch.equal(same[name], p.detach()), name
    # a vocabulary grown by 5 tokens: old rows copied, new rows initialised, other weights unchanged
    grown_cfg = ModelConfig.from_dict({**cfg.to_dict(), "vocab_size": cfg.vocab_size + 5})
    grown = load_package_weights(pkg, fmt, grown_cfg)
    assert grown["embed.weight"].shape == (cfg.vocab_size + 5, cfg.d_model)
    assert torch.equal(grown["embed.weight"][: cfg.vocab_size], exported.embed.weight.detach())
    assert grown["embed.weight"][cfg.vocab_size :].abs().sum() > 0
    assert torch.equal(grown["blocks.0.fc1.weight"], exported.blocks[0].fc1.weight.detach())
    # another width is refused with the reason
    with pytest.raises(WarmStartError, match="d_model"):
        load_package_weights(pkg, fmt, ModelConfig.from_dict({**cfg.to_dict(), "d_model": 64, "num_heads": 2}))
    # a smaller vocabulary cannot hold the package's tokens
    with pytest.raises(WarmStartError, match="extend"):
        load_package_weights(pkg, fmt, ModelConfig.from_dict({**cfg.to_dict(), "vocab_size": cfg.vocab_size - 1}))


def test_weights_that_do_not_reproduce_the_logits_are_refused(trained_runs, tmp_path):
    import onnx

    run, _ = trained_runs["mav-encoder"]
    pkg = str(tmp_path / "pkg")
    export(run, pkg)
    path = os.path.join(pkg, "model.onnx")
    m = onnx.load(path)
    # a wrong format name in mav.json is named
    with open(os.path.join(pkg, "mav.json")) as f:
        meta = json.load(f)
    bad = str(tmp_path / "bad")
    shutil.copytree(pkg, bad)
    with open(os.path.join(bad, "mav.json"), "w") as f:
        json.dump({**meta, "format": "mav-lm"}, f)
    ck = torch.load(os.path.join(run, "checkpoint.pt"), map_location="cpu", weights_only=False)
    cfg = ModelConfig.from_dict(ck["model_config"])
    with pytest.raises(WarmStartError, match="mav-lm"):
        load_package_weights(bad, "mav-encoder", cfg)
    # a graph whose computation differs from the model's (an extra Neg on the value logits)
    out = m.graph.output[0].name
    for node in m.graph.node:
        for i, o in enumerate(node.output):
            if o == out:
                node.output[i] = out + "_raw"
    m.graph.node.append(onnx.helper.make_node("Neg", [out + "_raw"], [out]))
    onnx.save(m, path)
    with pytest.raises(WarmStartError, match="do not reproduce"):
        load_package_weights(pkg, "mav-encoder", cfg)


def test_train_init_from_records_the_package(trained_runs, data_dir, tmp_path):
    run, _ = trained_runs["mav-lm"]
    pkg = str(tmp_path / "pkg")
    export(run, pkg)
    config = toy_config("mav-lm", max_steps=2)
    fine = str(tmp_path / "fine")
    train(copy.deepcopy(config), data_dir, fine, device="cpu", init_from=pkg)
    with open(os.path.join(fine, "run_info.json")) as f:
        info = json.load(f)
    assert info["init_from"]["name"] == "toy-mav-lm" and info["init_from"]["training"]["steps"] == 10
    card_pkg = str(tmp_path / "fine-pkg")
    export(fine, card_pkg)
    with open(os.path.join(card_pkg, "MODEL_CARD.md")) as f:
        card = f.read()
    assert "Fine-tuned: started from the package `toy-mav-lm`" in card
    # The same data: the vocabulary is not extended, and the card says so.
    assert ", unchanged), itself trained 10 steps" in card, card
