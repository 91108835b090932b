"""The searchless importer's inspection graph (`import_searchless.py --inspect`), on the tiny fixture
checkpoint: the lens at the last layer is the plain graph's output, attention rows sum to 1, head scales of
1 change nothing and removing a layer's heads changes the values.

The importer runs in its own environment (.venv-import/, `./packaging/dev.sh import-deps`: orbax); the test
is skipped where that environment is missing."""

import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON = os.path.join(ROOT, ".venv-import", "bin", "python")
SCRIPT = os.path.join(ROOT, "training", "searchless", "import_searchless.py")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "searchless", "tiny")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    if not os.path.exists(PYTHON) or subprocess.run([PYTHON, "-c", "import orbax.checkpoint, onnx"], capture_output=True).returncode != 0:
        pytest.skip(".venv-import/ with orbax is missing (./packaging/dev.sh import-deps)")
    d = tmp_path_factory.mktemp("av")
    out = subprocess.run(
        [PYTHON, SCRIPT, FIXTURE, str(d / "model.onnx"), "--heads", "4", "--inspect", str(d / "inspect.onnx")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    # no second copy of the weights: the graph reads model.onnx's bytes
    assert os.path.getsize(d / "inspect.onnx") < os.path.getsize(d / "model.onnx") / 10
    return str(d / "model.onnx"), str(d / "inspect.onnx")


def _ids():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.integers(0, 31, (3, 77)), rng.integers(0, 1968, (3, 1))], 1).astype(np.int64)


def test_inspection_graph_matches_the_plain_graph(graphs):
    from mavtrain.export import _session

    plain, inspect = graphs
    ids = _ids()
    (ref,) = _session(plain).run(None, {"input_ids": ids})
    sess = _session(inspect)
    ones = np.ones((2, 4), np.float32)
    logits, attention, residual, lens = sess.run(None, {"input_ids": ids, "head_scale": ones})
    assert attention.shape == (3, 2, 4, 79, 79)
    assert residual.shape == (3, 3, 79, 32)
    assert lens.shape == (3, 2, 128)
    assert np.abs(logits - ref).max() <= 1e-5
    assert np.abs(lens[:, -1] - ref).max() <= 1e-5
    assert np.abs(lens[:, 0] - ref).max() > 1e-3
    assert np.abs(attention.sum(-1) - 1).max() < 1e-5
    for layer in range(2):
        scale = ones.copy()
        scale[layer] = 0
        off = sess.run(None, {"input_ids": ids, "head_scale": scale})
        assert np.abs(off[0] - ref).max() > 1e-3
        assert np.array_equal(off[2][:, : layer + 1], residual[:, : layer + 1])
