# SPDX-License-Identifier: GPL-3.0-or-later
"""Serves a mavboard package's model.onnx with MLServer over the Open Inference Protocol (KServe v2).

    python serve.py PACKAGE [--port 8080] [--grpc-port 8081] [--metrics-port 8082] [--name NAME] [--dir DIR]

Writes an MLServer model repository (settings.json, NAME/model-settings.json declaring the graph's inputs
and outputs, read from the ONNX file itself) and runs `mlserver start` on it in this process. The model is
served under the name of the package's mav.json (or --name). Runs in the virtual environment made by
`./packaging/dev.sh serve` (mlserver, onnxruntime).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

DATATYPES = {
    "tensor(int64)": "INT64",
    "tensor(int32)": "INT32",
    "tensor(float)": "FP32",
    "tensor(float16)": "FP16",
    "tensor(double)": "FP64",
    "tensor(bool)": "BOOL",
}


def tensor(t):
    shape = [d if isinstance(d, int) and d >= 0 else -1 for d in t.shape]
    return {"name": t.name, "datatype": DATATYPES.get(t.type, t.type), "shape": shape}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package", type=Path, help="a model package folder (model.onnx, mav.json)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080, help="the REST port")
    ap.add_argument("--grpc-port", type=int, default=None, help="the gRPC port (default: REST port + 1)")
    ap.add_argument("--metrics-port", type=int, default=None, help="the metrics port (default: REST port + 2)")
    ap.add_argument("--name", default=None, help="the served model's name (default: mav.json name)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the repository (default: a temp dir)")
    args = ap.parse_args()

    package = args.package.resolve()
    onnx = package / "model.onnx"
    manifest = package / "mav.json"
    if not onnx.is_file() or not manifest.is_file():
        sys.exit(f"serve: {package} is not a local model package (it needs model.onnx and mav.json)")
    name = args.name or json.loads(manifest.read_text())["name"]

    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    repo = args.dir.resolve() if args.dir else Path(tempfile.mkdtemp(prefix="mavboard-serve-"))
    (repo / name).mkdir(parents=True, exist_ok=True)
    settings = {
        "host": args.host,
        "http_port": args.port,
        "grpc_port": args.grpc_port if args.grpc_port is not None else args.port + 1,
        "metrics_port": args.metrics_port if args.metrics_port is not None else args.port + 2,
        # Inference in the server's own process: today's uvloop crashes MLServer's worker pool at start.
        "parallel_workers": 0,
        "load_models_at_startup": True,
    }
    (repo / "settings.json").write_text(json.dumps(settings, indent=2))
    model_settings = {
        "name": name,
        "implementation": "mav_runtime.OnnxModel",
        "parameters": {"uri": str(onnx)},
        # Declared so that the metadata endpoint lists them: mavboard checks them against the package.
        "inputs": [tensor(t) for t in session.get_inputs()],
        "outputs": [tensor(t) for t in session.get_outputs()],
    }
    (repo / name / "model-settings.json").write_text(json.dumps(model_settings, indent=2))
    del session
    print(f"serve: {name} from {onnx} on http://{args.host}:{args.port} (repository {repo})", flush=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(HERE), env.get("PYTHONPATH", "")] if p)
    mlserver = Path(sys.executable).parent / "mlserver"
    os.execve(str(mlserver), [str(mlserver), "start", str(repo)], env)


if __name__ == "__main__":
    main()
