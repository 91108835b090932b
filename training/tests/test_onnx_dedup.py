"""The tied-weight pass stores a transposed duplicate once and leaves the graph's outputs unchanged."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from mavtrain.onnx_dedup import share_transposed_initializers


def _graph(embed: np.ndarray, head: np.ndarray) -> onnx.ModelProto:
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [2])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, embed.shape[0]])
    nodes = [
        helper.make_node("Gather", ["embed", "ids"], ["h"]),
        helper.make_node("MatMul", ["h", "head"], ["logits"]),
    ]
    inits = [numpy_helper.from_array(embed, "embed"), numpy_helper.from_array(head, "head")]
    g = helper.make_graph(nodes, "tied", [ids], [out], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what opset 17 exports carry; newer IR versions outrun some ONNX Runtime builds
    return model


def _run(model: onnx.ModelProto) -> np.ndarray:
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"ids": np.array([1, 4], dtype=np.int64)})[0]


def test_transposed_copy_is_shared_and_outputs_are_equal():
    rng = np.random.default_rng(0)
    embed = rng.standard_normal((6, 3)).astype(np.float32)
    model = _graph(embed, embed.T.copy())
    before = _run(model)
    shared = share_transposed_initializers(model)
    assert len(shared) == 1
    assert len(model.graph.initializer) == 1
    onnx.checker.check_model(model)
    assert np.array_equal(_run(model), before)


def test_different_weights_are_left_alone():
    rng = np.random.default_rng(1)
    embed = rng.standard_normal((6, 3)).astype(np.float32)
    head = embed.T.copy()
    head[0, 0] += 1e-3
    model = _graph(embed, head)
    assert share_transposed_initializers(model) == []
    assert len(model.graph.initializer) == 2
