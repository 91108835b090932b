"""Writes an int8 copy of an ONNX graph with ONNX Runtime's own quantization tooling: dynamic quantization
(activations quantized at run time, per batch), weights as signed 8-bit integers with one scale per output
channel. Only the matrix products with constant weights are quantized (the embedding tables stay float:
quantizing them too doubled the largest value change on the shipped model), and the weights use 7 of the 8
bits (`reduce_range`): on x86 CPUs without VNNI, ONNX Runtime's u8×s8 kernels can saturate with the full
range, which on the shipped model moved a move's win probability by 8 points instead of 1.3. Run by `mavboard package quantize` (which copies the rest of the package around it); usable alone:

    python quantize_onnx.py IN.onnx OUT.onnx

On success it prints one JSON object on stdout (sizes and the operators quantized); on failure it prints
`error: ...` on stderr and exits with status 2.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("error: usage: quantize_onnx.py IN.onnx OUT.onnx", file=sys.stderr)
        return 2
    src, dst = argv
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        print(f"error: the Python step cannot import {e.name}: install its packages with "
              "`./packaging/dev.sh import-deps` (onnx and onnxruntime, training/searchless/requirements.txt)",
              file=sys.stderr)
        return 2
    if not os.path.isfile(src):
        print(f"error: {src} is not a file", file=sys.stderr)
        return 2
    try:
        model = onnx.load(src, load_external_data=False)
    except Exception as e:  # a file onnx cannot read at all
        print(f"error: {src} is not an ONNX graph onnx can read: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    before = {}
    for n in model.graph.node:
        before[n.op_type] = before.get(n.op_type, 0) + 1
    large = os.path.getsize(src) + sum(
        os.path.getsize(os.path.join(os.path.dirname(src), f))
        for f in os.listdir(os.path.dirname(src) or ".") if f.endswith(".onnx.data")) > 1_800_000_000
    with tempfile.TemporaryDirectory() as tmp:
        # The tooling writes scratch files beside its input: give it a copy, so the package is never touched.
        work = os.path.join(tmp, "in")
        os.mkdir(work)
        folder = os.path.dirname(src) or "."
        for f in os.listdir(folder):
            if f == os.path.basename(src) or f.endswith(".onnx.data"):
                shutil.copyfile(os.path.join(folder, f), os.path.join(work, f))
        out = os.path.join(tmp, os.path.basename(dst))
        try:
            quantize_dynamic(os.path.join(work, os.path.basename(src)), out, per_channel=True,
                             weight_type=QuantType.QInt8, use_external_data_format=large,
                             op_types_to_quantize=["MatMul"], extra_options={"MatMulConstBOnly": True},
                             reduce_range=True)
        except Exception as e:  # the tooling's own reason
            print(f"error: ONNX Runtime's quantization failed on {src}: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
        q = onnx.load(out, load_external_data=False)
        after = {}
        for n in q.graph.node:
            after[n.op_type] = after.get(n.op_type, 0) + 1
        shutil.rmtree(work)
        for f in os.listdir(tmp):
            target = os.path.join(os.path.dirname(dst), f)
            os.replace(os.path.join(tmp, f), target + ".partial")
            os.replace(target + ".partial", target)
    int8_ops = {k: v for k, v in after.items() if k in ("MatMulInteger", "DynamicQuantizeLinear",
                                                          "DynamicQuantizeMatMul", "ConvInteger")}
    print(json.dumps({"bytes_in": os.path.getsize(src), "bytes_out": os.path.getsize(dst),
                      "nodes_in": sum(before.values()), "nodes_out": sum(after.values()),
                      "int8_ops": int8_ops}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
