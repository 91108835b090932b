"""training/gpu_round_lm.sh end to end on the CPU: a packed text data dir in, a toy Llama-block run fitted to a
few seconds, exported with the ONNX Runtime check, and the results split into parts that unpack to a package."""

import glob
import json
import os
import subprocess
import sys
import tarfile

from conftest import toy_config
from mavtrain import pack as P

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _round(tmp_path, data, config):
    cfg_path = tmp_path / "config.json"
    cfg_path.write_text(json.dumps(config))
    env = dict(os.environ)
    env.update(
        DATA=str(data),
        OUT=str(tmp_path / "out"),
        WORK=str(tmp_path / "work"),
        BUDGET="6",
        BATCH="4",
        POLL="1",
        CONFIG=str(cfg_path),
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
    )
    return subprocess.run(["bash", "training/gpu_round_lm.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_the_text_round_trains_exports_and_packs_its_results(data_dir, tmp_path):
    packed = tmp_path / "packed"
    P.pack_dir(data_dir, str(packed), enc=False, lm=True)
    cfg = toy_config("mav-lm", max_steps=100000, kind_mix={"mav": 0.6, "search": 0.4}, chunk_tokens=256)
    cfg["model"].update(context_length=512, mlp="swiglu", tie_embeddings=True)
    r = _round(tmp_path, packed, cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "training:" in r.stdout and "exit status 0" in r.stdout
    parts = sorted(glob.glob(str(tmp_path / "out" / "round.tar.part-*")))
    assert parts
    whole = tmp_path / "round.tar"
    with open(whole, "wb") as f:
        for p in parts:
            with open(p, "rb") as part:
                f.write(part.read())
    with tarfile.open(whole) as t:
        t.extractall(tmp_path / "back", filter="data")
    back = tmp_path / "back"
    manifest = json.loads((back / "pkg-lm" / "mav.json").read_text())
    assert manifest["format"] == "mav-lm" and manifest["name"] == "mav-tiny" and manifest["internal_search"]
    assert manifest["context_length"] == 512
    assert (back / "pkg-lm" / "model.onnx").exists() and (back / "lm.log").exists()
    assert not glob.glob(str(back / "lm" / "checkpoint.pt")), "the optimiser's checkpoint stays on the machine"
    summary = json.loads((back / "lm" / "summary.json").read_text())
    assert summary["steps"] > 60, summary  # fitted to the budget after the 60 calibration steps


def test_a_failed_run_still_sends_its_logs_and_exits_with_1(data_dir, tmp_path):
    packed = tmp_path / "packed"
    P.pack_dir(data_dir, str(packed), enc=False, lm=True)
    cfg = toy_config("mav-lm")
    cfg["train"]["kind_mix"] = {"mav": 0.5, "no-such-kind": 0.5}
    r = _round(tmp_path, packed, cfg)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "the training or the export failed" in r.stdout
    assert glob.glob(str(tmp_path / "out" / "round.tar.part-*"))
