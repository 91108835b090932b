"""Writes a `mav-lm` package as a Hugging Face model folder that transformers, vLLM and llama.cpp's converter
load: `python -m mavtrain.export_hf --package DIR -o OUT`.

The folder holds config.json (`LlamaForCausalLM`, or `GPTNeoXForCausalLM` for mavtrain's GELU block:
`hf_neox`), model.safetensors (float32), the tokenizer as
tokenizer.json + tokenizer_config.json (`PreTrainedTokenizerFast`, no chat template), a generation config
for greedy decoding without a chat format, and the package's mav.json (the MAV facts no Hugging Face file
has: games, value buckets and their tokens), which `mavboard import hf` reads back.

Packages written by `mavboard import hf` go back to their architecture, those trained with `"mlp": "swiglu"`
(mavtrain's Llama block) become Llama folders and those in mavtrain's GELU block (the shipped mav-tiny)
exact GPT-NeoX folders. Needs numpy and onnx only.
"""

from __future__ import annotations

import argparse
import sys

from .hf_llama import ConvertError, package_to_folder


def export_hf(package: str, out: str) -> dict:
    """Writes the folder; returns its config.json (see `hf_llama.package_to_folder`)."""
    return package_to_folder(package, out)


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
    print(f"wrote {a.out}: {config['architectures'][0]}, {config['num_hidden_layers']} layers, width {config['hidden_size']}, "
          f"{config['num_attention_heads']} heads, vocabulary {config['vocab_size']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
