"""Store tied weights once in an exported ONNX graph.

With tied embeddings the TorchScript exporter's constant folding writes the LM head's weight a second
time, as its own transposed copy (``embed.weight`` is [vocab, d], the head's MatMul reads a folded
[d, vocab] initializer). That doubles the largest tensor of a small model. This pass finds every
initializer that is exactly the transpose of another 2-D initializer and replaces it with a
``Transpose`` node over the original: the same arithmetic, bit for bit, and one copy on disk.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def share_transposed_initializers(model: onnx.ModelProto) -> list[tuple[str, str]]:
    """Rewrite `model` in place; returns the (removed, source) pairs that were shared."""
    graph = model.graph
    arrays = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    by_shape: dict[tuple[int, int], list[str]] = {}
    for name, arr in arrays.items():
        if arr.ndim == 2:
            by_shape.setdefault(arr.shape, []).append(name)
    graph_inputs = {i.name for i in graph.input}
    shared: list[tuple[str, str]] = []
    removed: set[str] = set()
    for name, arr in arrays.items():
        if arr.ndim != 2 or arr.shape[0] == arr.shape[1] or name in graph_inputs or name in removed:
            continue
        for other in by_shape.get((arr.shape[1], arr.shape[0]), []):
            if other in removed or other == name:
                continue
            if arrays[other].dtype == arr.dtype and np.array_equal(arrays[other].T, arr):
                shared.append((name, other))
                removed.add(name)
                break
    if not shared:
        return shared
    kept = [i for i in graph.initializer if i.name not in removed]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    # the Transpose nodes go first so every consumer sees its input defined (topological order)
    nodes = [helper.make_node("Transpose", [src], [dst], perm=[1, 0], name=f"shared_T_{dst}") for dst, src in shared]
    rest = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + rest)
    return shared
