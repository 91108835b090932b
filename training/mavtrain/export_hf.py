"""Writes a `mav-lm` package as a Hugging Face model folder that transformers, vLLM and llama.cpp's converter
load: `python -m mavtrain.export_hf --package DIR -o OUT`.

The folder holds config.json (`LlamaForCausalLM`), model.safetensors (float32), the tokenizer as
tokenizer.json + tokenizer_config.json (`PreTrainedTokenizerFast`, no chat template), a generation config
for greedy decoding without a chat format, and the package's mav.json (the MAV facts no Hugging Face file
has: games, value buckets and their tokens), which `mavboard import hf` reads back.

Only packages whose graph is a standard architecture export: those written by `mavboard import hf` and those
trained with `"mlp": "swiglu"` (mavtrain's Llama block). Needs numpy and onnx only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

from .hf_llama import ConvertError, graph_to_folder, write_json


def export_hf(package: str, out: str) -> dict:
    """Writes the folder; returns its config.json."""
    manifest_path = os.path.join(package, "mav.json")
    if not os.path.isfile(manifest_path):
        raise ConvertError(f"{package} has no mav.json: is it a mavboard model package?")
    with open(manifest_path) as f:
        manifest = json.load(f)
    if manifest.get("format") != "mav-lm":
        raise ConvertError(f"{package} is a {manifest.get('format')!r} package; only mav-lm (a language model) "
                           "becomes a Hugging Face causal language model")
    if manifest.get("remote"):
        raise ConvertError(f"{package} is served by a remote server and holds no weights to export")
    if os.path.exists(out) and os.listdir(out):
        raise ConvertError(f"{out} already exists and is not empty; choose another folder or remove it")
    ids = {"bos_token_id": None, "eos_token_id": manifest.get("eos_token_id"),
           "pad_token_id": manifest.get("pad_token_id")}
    tmp = out.rstrip("/") + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    config = graph_to_folder(os.path.join(package, "model.onnx"), tmp, ids)
    shutil.copyfile(os.path.join(package, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
    write_json(os.path.join(tmp, "tokenizer_config.json"), {
        "tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<pad>", "eos_token": "<eos>",
        "unk_token": "<unk>", "sep_token": "<sep>", "model_max_length": manifest.get("context_length"),
        "clean_up_tokenization_spaces": False,
    })
    shutil.copyfile(manifest_path, os.path.join(tmp, "mav.json"))
    if os.path.exists(out):
        os.rmdir(out)
    os.replace(tmp, out)
    return config


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavtrain.export_hf", description=__doc__.split("\n")[0])
    ap.add_argument("--package", required=True, help="the mav-lm package folder")
    ap.add_argument("-o", "--out", required=True, help="the Hugging Face folder to write")
    a = ap.parse_args(argv)
    try:
        config = export_hf(a.package, a.out)
    except ConvertError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {a.out}: LlamaForCausalLM, {config['num_hidden_layers']} layers, width {config['hidden_size']}, "
          f"{config['num_attention_heads']} heads, vocabulary {config['vocab_size']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
