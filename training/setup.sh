#!/usr/bin/env bash
# Creates training/.venv and installs the pinned requirements. Run from anywhere:
#   bash training/setup.sh
# PYTHON=python3.11 selects the interpreter (CPython 3.11 or newer).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "mavtrain needs Python >= 3.11; set PYTHON=python3.11")'
if [ ! -x "$here/.venv/bin/python" ]; then
  "$py" -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install --upgrade pip
"$here/.venv/bin/python" -m pip install -r "$here/requirements.txt"
"$here/.venv/bin/python" -c 'import torch, onnx, onnxruntime, tokenizers; print("torch", torch.__version__, "cuda" if torch.cuda.is_available() else "cpu", "| onnxruntime", onnxruntime.__version__)'
echo "ready: source $here/.venv/bin/activate && cd $here"
