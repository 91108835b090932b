"""Checks a mav-lm package against llama.cpp: the package goes to a Hugging Face folder (mavboard's
`package export-hf` step), llama.cpp's own converter makes a GGUF of it, llama.cpp's server loads it, and on
the fixture prompts (tests/fixtures/hf/tiny_llama-reference.json: mavboard's MAV examples and a trace) the
server's greedy continuation and log-probabilities are compared with the package's ONNX graph.

    python training/hf/check_llama_cpp.py --package PKG --llama-cpp LLAMA_CPP_DIR [--tokens 24] [--gguf-out F]

LLAMA_CPP_DIR is a llama.cpp source tree with `build/bin/llama-server` built (for instance the
`vendor/llama.cpp` of the llama-cpp-python sdist from PyPI, built with CMake from PyPI:
`cmake -S . -B build -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF && cmake --build build --target llama-server`),
or the converter's folder dev.sh keeps (.llama/convert) with `--server .llama/bin/llama-server`. The
converter runs through `convert_gguf.py` (beside this file), which converts Llama folders as the converter
does alone and lets it read the GPT-NeoX folders mavtrain's GELU block exports as.
Needs numpy, onnx and onnxruntime (.venv-import) and, for the converter, torch, transformers and
sentencepiece (training/.venv with `pip install transformers sentencepiece`): PYTHON names the interpreter
that runs the converter (default: this one).

The server runs with flash attention off and a float32 cache (`-fa off --cache-type-k f32 --cache-type-v
f32`): with llama.cpp's defaults (flash attention on, a float16 cache) its log-probabilities differ from the
graph's by about 1e-3. The prompts are sent as token ids, as mavboard sends them. Exit status 1 when a
continuation differs or a log-probability differs by more than --tolerance.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "tests", "fixtures", "hf", "tiny_llama-reference.json")
sys.path.insert(0, os.path.join(HERE, "..", "mavtrain"))
from hf_llama import package_to_folder  # noqa: E402


def onnx_logprobs(session, mav, ids):
    a = np.array([ids])
    feed = {"input_ids": a, "attention_mask": np.ones_like(a), "position_ids": np.arange(len(ids))[None]}
    for i in range(mav["num_layers"]):
        for kv in ("key", "value"):
            feed[f"past_key_values.{i}.{kv}"] = np.zeros((1, mav["num_heads"], 0, mav["head_dim"]), np.float32)
    logits = session.run(["logits"], feed)[0][0, -1].astype(np.float64)
    m = logits.max()
    return logits - m - np.log(np.exp(logits - m).sum())


def onnx_greedy(session, mav, prompt, n):
    ids, out, lps = list(prompt), [], []
    for _ in range(n):
        lp = onnx_logprobs(session, mav, ids)
        t = int(lp.argmax())
        out.append(t)
        lps.append(lp)
        ids.append(t)
    return out, lps


def server_greedy(port, prompt, n, top):
    body = json.dumps({"prompt": prompt, "n_predict": n, "temperature": 0, "top_k": 1, "n_probs": top,
                       "post_sampling_probs": False, "return_tokens": True, "cache_prompt": False}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", body, {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        answer = json.load(r)
    return answer["tokens"], [c["top_logprobs"] for c in answer["completion_probabilities"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--llama-cpp", required=True)
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--top", type=int, default=10, help="log-probabilities compared per generated token")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--port", type=int, default=8766)
    ap.add_argument("--server", help="llama.cpp's server (default: LLAMA_CPP_DIR/build/bin/llama-server)")
    ap.add_argument("--gguf-out", help="keep the converter's GGUF here (tests/fixtures/hf/tiny_llama.gguf is made so)")
    a = ap.parse_args()
    with open(REFERENCE) as f:
        prompts = [ids[: len(ids) // 2] for ids in json.load(f)["ids"]]
    with open(os.path.join(a.package, "mav.json")) as f:
        mav = json.load(f)
    session = ort.InferenceSession(os.path.join(a.package, "model.onnx"), providers=["CPUExecutionProvider"])
    with tempfile.TemporaryDirectory() as tmp:
        folder, gguf = os.path.join(tmp, "hf"), os.path.join(tmp, "model.gguf")
        package_to_folder(a.package, folder)
        python = os.environ.get("PYTHON", sys.executable)
        env = dict(os.environ, PYTHONPATH=os.path.join(a.llama_cpp, "gguf-py"))
        subprocess.run([python, os.path.join(HERE, "convert_gguf.py"), "--llama-cpp", a.llama_cpp, folder,
                        "--outfile", gguf, "--outtype", "f32"], check=True, env=env, capture_output=True)
        binary = a.server or os.path.join(a.llama_cpp, "build", "bin", "llama-server")
        server = subprocess.Popen([binary, "-m", gguf, "--port",
                                   str(a.port), "-c", str(mav["context_length"]), "-t", "1", "-fa", "off",
                                   "--cache-type-k", "f32", "--cache-type-v", "f32"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if a.gguf_out:
            shutil.copyfile(gguf, a.gguf_out)
        try:
            for _ in range(100):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{a.port}/health", timeout=1) as r:
                        if r.status == 200:
                            break
                except OSError:
                    time.sleep(0.2)
            same, worst, compared = 0, 0.0, 0
            for prompt in prompts:
                ours, lps = onnx_greedy(session, mav, prompt, a.tokens)
                theirs, tops = server_greedy(a.port, prompt, a.tokens, a.top)
                same += ours == theirs
                agree = next((i for i in range(min(len(ours), len(theirs))) if ours[i] != theirs[i]), len(ours))
                for lp, top in zip(lps[: agree + 1], tops[: agree + 1]):
                    for t in top:
                        worst = max(worst, abs(t["logprob"] - lp[t["id"]]))
                        compared += 1
        finally:
            server.terminate()
            server.wait()
    print(f"llama.cpp server on the GGUF: the same greedy continuation ({a.tokens} tokens) in {same} of "
          f"{len(prompts)} prompts; max |Δ log p| {worst:.2e} over {compared} log-probabilities")
    return 0 if same == len(prompts) and worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
