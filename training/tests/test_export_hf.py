"""mav-lm as a standard architecture: a swiglu run exports through the Llama graph, and the package goes to a
Hugging Face folder (mavtrain.export_hf) and back (hf_llama.folder_to_graph) with the same logits; a GELU run
goes to an exact GPT-NeoX folder (hf_neox) and back; where transformers is installed, its LlamaForCausalLM and
GPTNeoXForCausalLM compute those logits too."""

import json
import os

import numpy as np
import pytest

from conftest import TOY_MODEL, toy_config
from mavtrain.export import export
from mavtrain.export_hf import export_hf
from mavtrain.hf_llama import ConvertError, folder_to_graph


@pytest.fixture(scope="module")
def swiglu_package(data_dir, tmp_path_factory):
    from mavtrain.train import train

    cfg = toy_config("mav-lm")
    cfg["model"] = dict(TOY_MODEL, mlp="swiglu")
    run = str(tmp_path_factory.mktemp("run-swiglu"))
    train(cfg, data_dir, run, device="cpu")
    out = str(tmp_path_factory.mktemp("pkg-swiglu") / "pkg")
    res = export(run, out)
    assert set(res["diffs"]) == {"full_sequence", "incremental_3_steps", "left_padded_batch"}
    assert all(v <= 1e-4 for v in res["diffs"].values()), res["diffs"]
    return out


def _logits(onnx_path, ids, layers, heads, head_dim):
    import onnxruntime as ort

    s = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "position_ids": np.arange(ids.shape[1])[None]}
    for i in range(layers):
        for kv in ("key", "value"):
            feed[f"past_key_values.{i}.{kv}"] = np.zeros((1, heads, 0, head_dim), np.float32)
    return s.run(["logits"], feed)[0]


def test_a_swiglu_package_goes_to_a_hf_folder_and_back(swiglu_package, tmp_path):
    folder = str(tmp_path / "hf")
    config = export_hf(swiglu_package, folder)
    assert config["architectures"] == ["LlamaForCausalLM"] and config["hidden_act"] == "silu"
    assert set(os.listdir(folder)) == {"config.json", "model.safetensors", "generation_config.json",
                                       "tokenizer.json", "tokenizer_config.json", "tokenizer.model", "mav.json"}
    mav = json.load(open(os.path.join(swiglu_package, "mav.json")))
    back = str(tmp_path / "back.onnx")
    found = folder_to_graph(folder, back)
    assert found["layers"] == mav["num_layers"] and found["vocab"] == mav["vocab_size"]
    ids = np.random.default_rng(0).integers(0, mav["vocab_size"], size=(1, 17))
    shape = (mav["num_layers"], mav["num_heads"], mav["head_dim"])
    ours = _logits(os.path.join(swiglu_package, "model.onnx"), ids, *shape)
    assert np.abs(_logits(back, ids, *shape) - ours).max() == 0.0
    transformers = pytest.importorskip("transformers")
    import torch

    model = transformers.LlamaForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        theirs = model(torch.from_numpy(ids)).logits.numpy()
    assert np.abs(theirs - ours).max() <= 1e-4
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    assert tok("<mav game=chess>\n", add_special_tokens=False)["input_ids"][0] == tok.convert_tokens_to_ids("<mav")


def test_a_gelu_package_goes_to_a_gpt_neox_folder_and_back(trained_runs, tmp_path):
    from mavtrain.hf_neox import block_size, zero_mean_basis

    run, _ = trained_runs["mav-lm"]
    pkg = str(tmp_path / "pkg")
    export(run, pkg)
    mav = json.load(open(os.path.join(pkg, "mav.json")))
    folder = str(tmp_path / "hf")
    config = export_hf(pkg, folder)
    d, hd = mav["d_model"], mav["head_dim"]
    wide = zero_mean_basis(d, block_size(d, hd)).shape[0]
    assert config["architectures"] == ["GPTNeoXForCausalLM"] and config["hidden_act"] == "gelu"
    assert config["hidden_size"] == wide > d and config["num_attention_heads"] == wide // hd
    back = str(tmp_path / "back.onnx")
    found = folder_to_graph(folder, back)
    assert found["family"] == "gpt_neox" and found["vocab"] == mav["vocab_size"]
    ids = np.random.default_rng(0).integers(0, mav["vocab_size"], size=(1, 17))
    ours = _logits(os.path.join(pkg, "model.onnx"), ids, mav["num_layers"], mav["num_heads"], hd)
    assert np.abs(_logits(back, ids, mav["num_layers"], wide // hd, hd) - ours).max() <= 1e-4
    transformers = pytest.importorskip("transformers")
    import torch

    model = transformers.GPTNeoXForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        theirs = model(torch.from_numpy(ids)).logits.numpy()
    assert np.abs(theirs - ours).max() <= 1e-4


def test_the_zero_mean_basis_is_orthonormal_and_sums_to_zero():
    from mavtrain.hf_neox import block_size, zero_mean_basis

    for d, hd in ((192, 32), (64, 16), (40, 8), (30, 10)):
        q = zero_mean_basis(d, block_size(d, hd))
        assert q.shape[0] % hd == 0 and q.shape[0] > d
        assert np.abs(q.T @ q - np.eye(d)).max() < 1e-12 and np.abs(q.sum(axis=0)).max() < 1e-12
    assert block_size(192, 32) == 4 and block_size(40, 8) == 2  # 4 * 40 / 3 is not whole


def test_a_graph_that_is_not_mavtrains_block_is_refused_by_name(swiglu_package, tmp_path):
    import onnx

    model = onnx.load(os.path.join(swiglu_package, "model.onnx"))
    del model.metadata_props[:]  # a Llama graph that no longer says so: neither kind
    pkg = tmp_path / "pkg"
    os.makedirs(pkg)
    for name in ("mav.json", "tokenizer.json"):
        with open(os.path.join(swiglu_package, name), "rb") as f, open(pkg / name, "wb") as g:
            g.write(f.read())
    onnx.save(model, str(pkg / "model.onnx"))
    with pytest.raises(ConvertError, match="nor mavtrain's own GELU block"):
        export_hf(str(pkg), str(tmp_path / "hf"))
    assert not os.path.exists(tmp_path / "hf")


def test_the_sentencepiece_model_holds_the_vocabulary_in_id_order(swiglu_package, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    folder = str(tmp_path / "hf")
    export_hf(swiglu_package, folder)
    vocab = json.load(open(os.path.join(folder, "tokenizer.json")))["model"]["vocab"]
    sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "tokenizer.model"))
    assert sp.vocab_size() == len(vocab)
    for token, i in vocab.items():
        assert sp.id_to_piece(i) == token.replace(" ", "\u2581")
    assert sp.unk_id() == vocab["<unk>"] and sp.eos_id() == vocab["<eos>"] and sp.pad_id() == vocab["<pad>"]
    assert sp.is_control(vocab["<eos>"]) and not sp.is_control(vocab["<ctrl0>"])


def test_half_precision_folders_read_as_their_float32_values(tmp_path):
    transformers = pytest.importorskip("transformers")
    import torch

    from mavtrain.hf_llama import read_folder_weights

    config = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, tie_word_embeddings=False)
    model = transformers.LlamaForCausalLM(config)
    for dtype in (torch.bfloat16, torch.float16):
        folder = tmp_path / str(dtype)
        model.to(dtype).save_pretrained(folder, safe_serialization=True)
        ours = read_folder_weights(str(folder))
        theirs = {k: v.float().numpy() for k, v in model.state_dict().items()}
        assert set(ours) == set(theirs)
        for name, a in theirs.items():
            assert ours[name].dtype == np.float32 and np.array_equal(ours[name], a), name
