"""The inspection graph (mavtrain.inspect_export): the logit lens at the last layer is the model's output,
attention rows sum to 1, head scales of 1 change nothing and 0 removes a head, and a package gains
inspect.onnx and its mav.json entry with model.onnx left byte-identical."""

import hashlib
import json
import os

import numpy as np
import pytest
import torch

from mavtrain.export import ExportError, _session, export_onnx
from mavtrain.inspect_export import CARD_HEADING, InspectEncoder, add_inspection, check_inspect, export_inspect_onnx, weights_checksum
from mavtrain.models import MavEncoder, ModelConfig

CFG = ModelConfig.from_dict({"d_model": 32, "num_layers": 3, "num_heads": 4, "d_ff": 64, "context_length": 64, "vocab_size": 50, "num_buckets": 16})


def _model(seed=0):
    torch.manual_seed(seed)
    m = MavEncoder(CFG)
    with torch.no_grad():
        for p in m.parameters():  # larger than the init so that removing heads visibly moves the values
            p.copy_(torch.randn(p.shape) * 0.3)
    return m.eval()


def _batch():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, CFG.vocab_size, size=(2, 20)).astype(np.int64)
    att = np.ones((2, 20), np.int64)
    att[1, 12:] = 0
    ids[1, 12:] = 0
    return ids, att


def _run(sess, ids, att, scale):
    return sess.run(None, {"input_ids": ids, "attention_mask": att, "head_scale": scale.astype(np.float32)})


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inspect")
    model = _model()
    export_onnx("mav-encoder", model, CFG, str(d / "model.onnx"))
    export_inspect_onnx(model, CFG, str(d / "inspect.onnx"))
    return model, str(d / "model.onnx"), str(d / "inspect.onnx")


def test_lens_at_last_layer_is_the_pytorch_output(graphs):
    model, _, inspect_path = graphs
    ids, att = _batch()
    value, best, attention, residual, lens = _run(_session(inspect_path), ids, att, np.ones((3, 4)))
    with torch.no_grad():
        tv, tb = model(torch.from_numpy(ids), torch.from_numpy(att))
    real = att.astype(bool)
    assert np.abs(lens[:, -1][real] - tv.numpy()[real]).max() <= 1e-5
    assert np.abs(value[real] - tv.numpy()[real]).max() <= 1e-5
    assert np.abs(best[real] - tb.numpy()[real]).max() <= 1e-5
    # earlier layers read something else
    assert np.abs(lens[:, 0][real] - tv.numpy()[real]).max() > 1e-3
    assert attention.shape == (2, 3, 4, 20, 20)
    assert residual.shape == (2, 4, 20, 32)
    assert lens.shape == (2, 3, 20, 16)


def test_check_against_model_onnx_and_attention_rows(graphs):
    model, model_path, inspect_path = graphs
    diffs = check_inspect(model, CFG, inspect_path, model_path, np.random.default_rng(0))
    for k, v in diffs.items():
        assert v <= (1e-4 if k == "vs_pytorch" else 1e-5), (k, v)
    ids, att = _batch()
    _, _, attention, _, _ = _run(_session(inspect_path), ids, att, np.ones((3, 4)))
    sums = attention.sum(-1)
    assert np.abs(sums - 1).max() < 1e-5
    # padding keys get no attention
    assert attention[1, :, :, :12, 12:].max() < 1e-6


def test_head_scale(graphs):
    model, _, inspect_path = graphs
    sess = _session(inspect_path)
    ids, att = _batch()
    ones = _run(sess, ids, att, np.ones((3, 4)))
    ref = _run(sess, ids, att, np.ones((3, 4)))
    assert all(np.array_equal(a, b) for a, b in zip(ones, ref))
    real = att.astype(bool)
    for layer in range(3):
        scale = np.ones((3, 4))
        scale[layer] = 0
        off = _run(sess, ids, att, scale)
        assert np.abs(off[0][real] - ones[0][real]).max() > 1e-3, f"removing layer {layer}'s heads changed nothing"
        # the residual stream before the layer is untouched, after it changed
        assert np.array_equal(off[3][:, : layer + 1], ones[3][:, : layer + 1])
        assert np.abs(off[3][:, layer + 1] - ones[3][:, layer + 1]).max() > 1e-3
    # one head off equals PyTorch with that head's output zeroed by the same wrapper
    scale = np.ones((3, 4), np.float32)
    scale[1, 2] = 0
    off = _run(sess, ids, att, scale)
    with torch.no_grad():
        tv = InspectEncoder(model)(torch.from_numpy(ids), torch.from_numpy(att), torch.from_numpy(scale))[0].numpy()
    assert np.abs(off[0] - tv).max() <= 1e-4


def _package(tmp_path, graphs):
    model, model_path, _ = graphs
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    with open(model_path, "rb") as f:
        (pkg / "model.onnx").write_bytes(f.read())
    meta = {"format": "mav-encoder", "format_version": 1, "name": "toy", "games": ["chess"], "num_buckets": 16, "vocab_size": 50, "context_length": 64, "num_layers": 3, "num_heads": 4, "head_dim": 8, "d_model": 32}
    (pkg / "mav.json").write_text(json.dumps(meta, indent=2) + "\n")
    (pkg / "MODEL_CARD.md").write_text("# toy\n\n## Model\n\nA toy.\n\n## Use and limits\n\nNone.\n")
    return pkg


def test_add_inspection_writes_the_package(tmp_path, graphs):
    pkg = _package(tmp_path, graphs)
    before = hashlib.sha256((pkg / "model.onnx").read_bytes()).hexdigest()
    res = add_inspection(str(pkg), d_ff=64)
    assert res["bytes"] == os.path.getsize(pkg / "inspect.onnx")
    assert hashlib.sha256((pkg / "model.onnx").read_bytes()).hexdigest() == before
    meta = json.loads((pkg / "mav.json").read_text())
    assert meta["inspection"]["file"] == "inspect.onnx"
    assert meta["inspection"]["weights"] == {"file": "model.onnx", "bytes": os.path.getsize(pkg / "model.onnx"), "checksum": weights_checksum(str(pkg / "model.onnx"))}
    assert meta["name"] == "toy" and meta["d_model"] == 32
    # the graph stores no second copy of the weights, and runs as the standalone one does
    standalone = tmp_path / "standalone"
    export_inspect_onnx(_model(), CFG, str(standalone))
    assert os.path.getsize(pkg / "inspect.onnx") < os.path.getsize(standalone) / 3
    ids, att = _batch()
    got = _run(_session(str(pkg / "inspect.onnx")), ids, att, np.ones((3, 4)))
    ref = _run(_session(str(standalone)), ids, att, np.ones((3, 4)))
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    card = (pkg / "MODEL_CARD.md").read_text()
    assert card.count(CARD_HEADING) == 1 and card.index(CARD_HEADING) < card.index("## Use and limits")
    add_inspection(str(pkg), d_ff=64)  # again: the section is replaced, not added
    card = (pkg / "MODEL_CARD.md").read_text()
    assert card.count(CARD_HEADING) == 1 and card.count("## Use and limits") == 1
    assert not [p for p in os.listdir(pkg) if p not in {"model.onnx", "inspect.onnx", "mav.json", "MODEL_CARD.md"}]


def test_add_inspection_refuses_other_formats_and_wrong_shapes(tmp_path, graphs):
    pkg = _package(tmp_path, graphs)
    meta = json.loads((pkg / "mav.json").read_text())
    with pytest.raises(Exception, match="d_ff|shape|parameter"):
        add_inspection(str(pkg), d_ff=96)  # another MLP width: the weights do not fit
    assert not (pkg / "inspect.onnx").exists()
    meta["format"] = "mav-lm"
    (pkg / "mav.json").write_text(json.dumps(meta))
    with pytest.raises(ExportError, match="mav-encoder"):
        add_inspection(str(pkg), d_ff=64)


def test_standalone_graph_keeps_its_weights(tmp_path, graphs):
    pkg = _package(tmp_path, graphs)
    add_inspection(str(pkg), d_ff=64, standalone=True)
    meta = json.loads((pkg / "mav.json").read_text())
    assert "weights" not in meta["inspection"]
    assert os.path.getsize(pkg / "inspect.onnx") > os.path.getsize(pkg / "model.onnx") / 2


def test_weights_checksum(tmp_path):
    data = bytes(range(256)) * 3 + b"\x07\x01"  # not a multiple of 8: the tail is zero-padded
    (tmp_path / "f").write_bytes(data)
    padded = data + b"\0" * (-len(data) % 8)
    expected = sum(int.from_bytes(padded[i : i + 8], "little") * (2 * (i // 8) + 1) for i in range(0, len(padded), 8)) % 2**64
    assert weights_checksum(str(tmp_path / "f")) == f"{expected:016x}"
    (tmp_path / "g").write_bytes(bytes([1, 0, 0, 0, 0, 0, 0, 0, 2]))
    assert weights_checksum(str(tmp_path / "g")) == "0000000000000007"  # the value mavboard's own test pins
