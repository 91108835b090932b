"""Export: package files, mav.json keys, ONNX input/output layout, ORT-vs-torch checks."""

import json
import os

import numpy as np
import onnx
import pytest

from conftest import FORMATS
from mavtrain.export import ExportError, export

COMMON_KEYS = {"format", "format_version", "name", "games", "num_buckets", "vocab_size", "context_length", "num_layers", "num_heads", "head_dim", "d_model", "internal_search", "parameters", "training", "created"}
KEYS = {
    "mav-lm": COMMON_KEYS | {"value_token_ids", "pad_token_id", "eos_token_id"},
    "mav-encoder": COMMON_KEYS | {"value_token_ids", "pad_token_id"},
    "action-value": COMMON_KEYS | {"av_state_length", "av_action_vocab_size"},
}


def _io(path):
    m = onnx.load(path)
    shape = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    ins = {v.name: (v.type.tensor_type.elem_type, shape(v)) for v in m.graph.input}
    outs = {v.name: (v.type.tensor_type.elem_type, shape(v)) for v in m.graph.output}
    return m, ins, outs


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_package(trained_runs, tmp_path, fmt):
    run, summary = trained_runs[fmt]
    out = str(tmp_path / "pkg")
    res = export(run, out)
    assert res["diffs"] and all(v <= 1e-4 for v in res["diffs"].values())
    files = set(os.listdir(out))
    expected = {"model.onnx", "mav.json", "MODEL_CARD.md"} | ({"tokenizer.json"} if fmt != "action-value" else set())
    assert files == expected
    with open(os.path.join(out, "mav.json")) as f:
        mav = json.load(f)
    assert set(mav) == KEYS[fmt]
    assert mav["format"] == fmt and mav["format_version"] == 1
    assert set(mav["training"]) == {"data", "examples", "tokens", "steps", "wall_time_s", "device", "machine"}
    assert mav["training"]["steps"] == 10
    assert mav["training"]["tokens"] == summary["tokens_seen"]
    assert mav["parameters"] == summary["parameters"]
    model, ins, outs = _io(os.path.join(out, "model.onnx"))
    assert model.opset_import[0].version >= 17
    INT64, FLOAT = onnx.TensorProto.INT64, onnx.TensorProto.FLOAT
    if fmt == "mav-lm":
        L, H, hd = mav["num_layers"], mav["num_heads"], mav["head_dim"]
        assert ins["input_ids"] == (INT64, ["batch", "seq"])
        assert ins["attention_mask"] == (INT64, ["batch", "total"])
        assert ins["position_ids"] == (INT64, ["batch", "seq"])
        for i in range(L):
            for kv in ("key", "value"):
                assert ins[f"past_key_values.{i}.{kv}"] == (FLOAT, ["batch", H, "past", hd])
                assert outs[f"present.{i}.{kv}"] == (FLOAT, ["batch", H, "total", hd])
        assert outs["logits"] == (FLOAT, ["batch", "seq", mav["vocab_size"]])
        assert len(ins) == 3 + 2 * L and len(outs) == 1 + 2 * L
        assert mav["internal_search"] is True
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
        assert mav["value_token_ids"] == [tok.token_to_id(f"<ctrl{k}>") for k in range(64)]
        assert mav["eos_token_id"] == tok.token_to_id("<eos>") and mav["pad_token_id"] == 0
        assert set(res["diffs"]) == {"full_sequence", "incremental_3_steps", "left_padded_batch"}
    elif fmt == "mav-encoder":
        assert ins == {"input_ids": (INT64, ["batch", "seq"]), "attention_mask": (INT64, ["batch", "seq"])}
        assert outs == {"value_logits": (FLOAT, ["batch", "seq", 64]), "best_logits": (FLOAT, ["batch", "seq"])}
    else:
        assert ins == {"input_ids": (INT64, ["batch", 78])}
        assert outs == {"logits": (FLOAT, ["batch", 128])}
        assert mav["av_state_length"] == 77 and mav["av_action_vocab_size"] == 1968 and mav["num_buckets"] == 128
    card = open(os.path.join(out, "MODEL_CARD.md")).read()
    assert f"Steps: 10" in card and "Export check" in card


def test_export_fails_when_onnx_and_torch_disagree(trained_runs, tmp_path):
    run, _ = trained_runs["mav-lm"]
    out = tmp_path / "pkg"
    with pytest.raises(ExportError, match="disagrees"):
        export(run, str(out), tolerance=1e-12)
    assert not (out / "mav.json").exists() and not (out / "model.onnx").exists()


def test_export_of_a_missing_run_is_a_clear_error(tmp_path):
    with pytest.raises(ExportError, match="train it first"):
        export(str(tmp_path), str(tmp_path / "pkg"))
