# SPDX-License-Identifier: GPL-3.0-or-later
"""Serves a mavboard package with Triton Inference Server over the Open Inference Protocol (KServe v2).

    python serve.py PACKAGE [--port 8000] [--grpc-port P] [--metrics-port P] [--name NAME] [--dir DIR]
                    [--max-batch 64] [--mavboard BIN]

Runs `mavboard package triton` to write the package's Triton model repository (config.pbtxt with the
graph's exact inputs and outputs, 1/model.onnx), then serves that repository with the tritonserver binary
that PyPI's nvidia-pytriton wheel bundles. That build ships one backend, Python, and no ONNX Runtime
backend, so the config's `backend: "onnxruntime"` line becomes `backend: "python"` and packaging/triton/
model.py, which runs the same model.onnx on ONNX Runtime, goes beside the graph; the rest of the config
(names, types, dims, max_batch_size, dynamic batching) is served as mavboard wrote it. The model is served
under the name of the package's mav.json (or --name), loaded explicitly, so that Triton's repository API
can unload and load it again. Runs in the virtual environment made by `./packaging/dev.sh serve-triton`
(nvidia-pytriton, onnxruntime); replaces itself with tritonserver, so that killing this process (or its
process group) stops the server and its Python-backend stub.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def find_mavboard(given):
    if given:
        return Path(given)
    for profile in ("release", "debug"):
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        candidate = target / profile / "mavboard"
        if candidate.is_file():
            return candidate
    found = shutil.which("mavboard")
    if found:
        return Path(found)
    sys.exit("serve-triton: no mavboard binary (build it with cargo build, or pass --mavboard BIN)")


def triton_dist():
    """The tritonserver folder and bundled libraries of the nvidia-pytriton wheel."""
    try:
        import pytriton
    except ImportError:
        sys.exit("serve-triton: nvidia-pytriton is not installed here (./packaging/dev.sh serve-triton installs it)")
    module = Path(pytriton.__file__).resolve().parent
    return module / "tritonserver", module.parent / "nvidia_pytriton.libs"


def python_libdir():
    """The folder of this interpreter's libpython, which the Python-backend stub links against."""
    libdir = sysconfig.get_config_var("LIBDIR")
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    if libdir and name and (Path(libdir) / name).exists():
        return libdir
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    sys.exit(
        f"serve-triton: Triton's Python backend needs libpython{minor}.so, which this Python ({sys.executable}) "
        f"does not have; on Debian/Ubuntu: apt-get install libpython{minor}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package", type=Path, help="a model package folder (model.onnx, mav.json)")
    ap.add_argument("--host", default="127.0.0.1", help="the address the REST API listens on")
    ap.add_argument("--port", type=int, default=8000, help="the REST port")
    ap.add_argument("--grpc-port", type=int, default=None, help="the gRPC port (default: REST port + 1)")
    ap.add_argument("--metrics-port", type=int, default=None, help="the metrics port (default: REST port + 2)")
    ap.add_argument("--name", default=None, help="the served model's name (default: mav.json name)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the repository (default: a temp dir)")
    ap.add_argument("--max-batch", type=int, default=64, help="Triton's max_batch_size (rows per request)")
    ap.add_argument("--mavboard", default=None, help="the mavboard binary that writes the repository")
    args = ap.parse_args()

    package = args.package.resolve()
    onnx = package / "model.onnx"
    manifest = package / "mav.json"
    if not onnx.is_file() or not manifest.is_file():
        sys.exit(f"serve-triton: {package} is not a local model package (it needs model.onnx and mav.json)")
    own = json.loads(manifest.read_text())["name"]
    name = args.name or own
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        sys.exit(f"serve-triton: {name!r} is not a model name (letters, digits, '.', '_', '-')")
    dist, libs = triton_dist()
    libdir = python_libdir()
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    stub = dist / "python_backend_stubs" / minor / "triton_python_backend_stub"
    if not stub.is_file():
        sys.exit(f"serve-triton: nvidia-pytriton has no Python-backend stub for Python {minor} ({stub})")

    work = args.dir.resolve() if args.dir else Path(tempfile.mkdtemp(prefix="mavboard-triton-"))
    repo = work / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    # The repository as mavboard writes it.
    bin_ = find_mavboard(args.mavboard)
    cmd = [str(bin_), "package", "triton", str(package), "--out", str(repo), "--max-batch", str(args.max_batch)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"serve-triton: {' '.join(cmd)} failed:\n{done.stdout}")
    model = repo / own
    config = (model / "config.pbtxt").read_text()
    if 'backend: "onnxruntime"' not in config or f'name: "{own}"' not in config:
        sys.exit(f"serve-triton: {model / 'config.pbtxt'} is not the config this script knows:\n{config}")
    config = config.replace('backend: "onnxruntime"', 'backend: "python"', 1)
    if name != own:
        config = config.replace(f'name: "{own}"', f'name: "{name}"', 1)
        model = model.rename(repo / name)
    config += "instance_group [ { kind: KIND_CPU count: 1 } ]\n"
    (model / "config.pbtxt").write_text(config)
    shutil.copy(HERE / "model.py", model / "1" / "model.py")

    # The backend folder Triton loads from: the wheel's Python backend with the stub for this Python.
    backends = work / "backends"
    shutil.rmtree(backends, ignore_errors=True)
    shutil.copytree(dist / "backends", backends, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(stub, backends / "python" / "triton_python_backend_stub")

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in [str(libs), libdir, env.get("LD_LIBRARY_PATH", "")] if p)
    # The stub's embedded Python finds this virtual environment (numpy, onnxruntime) through the `python3`
    # first on PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    grpc = args.grpc_port if args.grpc_port is not None else args.port + 1
    metrics = args.metrics_port if args.metrics_port is not None else args.port + 2
    # Shared-memory regions of the Python backend (in /dev/shm), named after this server's port and process
    # id (tritonserver keeps this process's id), so that whoever kills the server can remove them
    # (tests/cli/remote_triton_server.rs does).
    shm_prefix = f"mavboard_triton_{args.port}_{os.getpid()}_"
    tritonserver = dist / "bin" / "tritonserver"
    argv = [
        str(tritonserver),
        f"--model-repository={repo}",
        f"--backend-directory={backends}",
        f"--cache-directory={dist / 'caches'}",
        "--model-control-mode=explicit",
        f"--load-model={name}",
        f"--http-address={args.host}",
        f"--http-port={args.port}",
        f"--grpc-address={args.host}",
        f"--grpc-port={grpc}",
        f"--metrics-address={args.host}",
        f"--metrics-port={metrics}",
        "--allow-metrics=true",
        "--allow-gpu-metrics=false",
        "--exit-timeout-secs=5",
        f"--backend-config=python,shm-region-prefix-name={shm_prefix}",
    ]
    print(f"serve-triton: {name} from {onnx} on http://{args.host}:{args.port} (repository {repo})", flush=True)
    os.execve(str(tritonserver), argv, env)


if __name__ == "__main__":
    main()
