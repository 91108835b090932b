# SPDX-License-Identifier: GPL-3.0-or-later
"""An MLServer runtime that runs a mavboard package's model.onnx on ONNX Runtime.

Each request's inputs are decoded as NumPy arrays and fed to the session; the outputs the request names
(all of the graph's when it names none) are returned as tensors. The session runs on a thread of the event
loop's executor, so concurrent requests overlap. MAVBOARD_SERVE_DELAY_MS, when set, adds that many
milliseconds before every answer (to measure how a client hides network latency).
"""

import asyncio
import os

import onnxruntime
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.errors import MLServerError
from mlserver.types import InferenceRequest, InferenceResponse
from mlserver.utils import get_model_uri


class OnnxModel(MLModel):
    """A model.onnx in one ONNX Runtime session."""

    async def load(self) -> bool:
        path = await get_model_uri(self._settings)
        options = onnxruntime.SessionOptions()
        threads = int(os.environ.get("MAVBOARD_SERVE_THREADS", "0"))
        if threads > 0:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self._output_names = [o.name for o in self._session.get_outputs()]
        self._delay = float(os.environ.get("MAVBOARD_SERVE_DELAY_MS", "0")) / 1000.0
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        feeds = {i.name: NumpyCodec.decode_input(i) for i in payload.inputs}
        wanted = [o.name for o in payload.outputs] if payload.outputs else self._output_names
        unknown = [n for n in wanted if n not in self._output_names]
        if unknown:
            raise MLServerError(f"unknown outputs {unknown}; the model has {self._output_names}", status_code=400)
        loop = asyncio.get_running_loop()
        try:
            results = await loop.run_in_executor(None, self._session.run, wanted, feeds)
        except Exception as e:  # ONNX Runtime's errors (a wrong input name, dtype or shape)
            raise MLServerError(f"ONNX Runtime: {e}", status_code=400) from e
        if self._delay > 0:
            await asyncio.sleep(self._delay)
        outputs = [NumpyCodec.encode_output(name, value) for name, value in zip(wanted, results)]
        return InferenceResponse(model_name=self.name, model_version=self.version, outputs=outputs)
