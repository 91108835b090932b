"""The two commands as a user runs them (subprocesses)."""

import json
import os
import subprocess
import sys

from conftest import toy_config

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args):
    env = dict(os.environ, PYTHONPATH=HERE)
    return subprocess.run([sys.executable, "-m", *args], cwd=HERE, env=env, capture_output=True, text=True, timeout=300)


def test_train_then_export_from_the_command_line(data_dir, tmp_path):
    cfg = toy_config("mav-lm", max_steps=4, checkpoint_every=2, eval_every=2)
    cfg_path = tmp_path / "toy.json"
    cfg_path.write_text(json.dumps(cfg))
    run = str(tmp_path / "run")
    r = _run("mavtrain.train", "--config", str(cfg_path), "--data", data_dir, "--run", run, "--device", "cpu", "--threads", "1", "--seed", "77")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout[r.stdout.index("{\n") :])["steps"] == 4
    with open(os.path.join(run, "config.json")) as f:
        assert json.load(f)["train"]["seed"] == 77
    # running it again resumes the finished run and extends it
    r = _run("mavtrain.train", "--config", str(cfg_path), "--data", data_dir, "--run", run, "--max-steps", "6", "--threads", "1", "--seed", "77")
    assert r.returncode == 0, r.stderr
    assert "resuming" in r.stdout
    out = str(tmp_path / "pkg")
    r = _run("mavtrain.export", "--run", run, "--out", out, "--name", "cli-toy")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "mav.json")) as f:
        mav = json.load(f)
    assert mav["name"] == "cli-toy" and mav["training"]["steps"] == 6


def test_missing_data_dir_is_a_clear_error(tmp_path):
    r = _run("mavtrain.train", "--config", os.path.join(HERE, "configs", "mav-lm-tiny.json"), "--data", str(tmp_path / "nope"), "--run", str(tmp_path / "run"))
    assert r.returncode == 2
    assert "meta.json not found" in r.stderr and "mavboard datagen render" in r.stderr
