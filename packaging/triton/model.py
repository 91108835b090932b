# SPDX-License-Identifier: GPL-3.0-or-later
"""A Triton Python-backend model that runs the repository's 1/model.onnx on ONNX Runtime (CPU).

`packaging/triton/serve.py` puts it beside the model.onnx of the repository that `mavboard package triton`
wrote, whose config.pbtxt then names the Python backend (the Triton that PyPI's nvidia-pytriton bundles
ships no ONNX Runtime backend). The inputs and outputs are the config's; Triton's dynamic batcher hands
`execute` a list of requests, and those whose inputs have the same shapes (the same padded length) run as
one ONNX Runtime call, their rows put together, the outputs split back. MAVBOARD_SERVE_DELAY_MS, when set,
adds that many milliseconds before every answer (to test a client's timeout), and MAVBOARD_SERVE_THREADS
caps ONNX Runtime's threads.
"""

import json
import os
import time
from pathlib import Path

import numpy as np
import onnxruntime
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        path = Path(args["model_repository"]) / args["model_version"] / "model.onnx"
        options = onnxruntime.SessionOptions()
        threads = int(os.environ.get("MAVBOARD_SERVE_THREADS", "0"))
        if threads > 0:
            options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i["name"] for i in config["input"]]
        self.outputs = [o["name"] for o in config["output"]]
        graph_inputs = {i.name for i in self.session.get_inputs()}
        missing = [n for n in self.inputs if n not in graph_inputs]
        if missing:
            raise pb_utils.TritonModelException(f"config.pbtxt names inputs {missing} that {path} lacks")
        self.delay = float(os.environ.get("MAVBOARD_SERVE_DELAY_MS", "0")) / 1000.0

    def execute(self, requests):
        if self.delay > 0:
            time.sleep(self.delay)
        responses = [None] * len(requests)
        # Requests of equal input shapes run together.
        groups = {}
        for k, request in enumerate(requests):
            feeds = {}
            for name in self.inputs:
                tensor = pb_utils.get_input_tensor_by_name(request, name)
                if tensor is None:
                    responses[k] = error(f"the request has no input {name}")
                    break
                feeds[name] = tensor.as_numpy()
            if responses[k] is None:
                wanted = tuple(request.requested_output_names()) or tuple(self.outputs)
                key = (tuple((n, feeds[n].shape) for n in self.inputs), wanted)
                groups.setdefault(key, []).append((k, feeds))
        for (_, wanted), members in groups.items():
            unknown = [n for n in wanted if n not in self.outputs]
            if unknown:
                for k, _ in members:
                    responses[k] = error(f"unknown outputs {unknown}; the model has {self.outputs}")
                continue
            feeds = {n: np.concatenate([f[n] for _, f in members], axis=0) for n in self.inputs}
            try:
                results = self.session.run(list(wanted), feeds)
            except Exception as e:  # ONNX Runtime's errors (a wrong dtype or shape)
                for k, _ in members:
                    responses[k] = error(f"ONNX Runtime: {e}")
                continue
            start = 0
            for k, f in members:
                rows = f[self.inputs[0]].shape[0]
                tensors = [pb_utils.Tensor(n, r[start : start + rows]) for n, r in zip(wanted, results)]
                responses[k] = pb_utils.InferenceResponse(output_tensors=tensors)
                start += rows
        return responses


def error(message):
    return pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(message))
