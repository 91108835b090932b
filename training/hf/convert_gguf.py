"""llama.cpp's own converter (`convert_hf_to_gguf.py`) for the folders `mavboard package export-hf` writes.

    python training/hf/convert_gguf.py --llama-cpp DIR FOLDER --outfile OUT.gguf --outtype f32

DIR holds llama.cpp's `convert_hf_to_gguf.py`, `conversion/` and `gguf-py/` (dev.sh keeps them in
.llama/convert/); every argument after it goes to the converter unchanged. A `LlamaForCausalLM` folder is
converted exactly as the converter does alone. For a `GPTNeoXForCausalLM` folder (what mavtrain's GELU
block exports as: `mavtrain/hf_neox.py`) three things of the converter's GPT-NeoX class are set first,
nothing else:

* the vocabulary is read from the folder's SentencePiece `tokenizer.model` (the converter's reader for
  Llama folders): its GPT-NeoX class reads only byte-level BPE tokenizers, whose pre-tokenizer it must
  recognise, and refuses mavboard's word-level vocabulary;
* `rotary_pct` is taken from `rope_parameters.partial_rotary_factor` when transformers 5 (which the
  converter loads the config with) has moved it there;
* the rotary base is written into the GGUF (the class leaves it out, and llama.cpp then assumes 10,000).

Needs the converter's Python packages (torch, transformers, sentencepiece: dev.sh's .venv-convert).
"""

from __future__ import annotations

import argparse
import os
import sys


def patch_gpt_neox() -> None:
    """Registers the converter's GPT-NeoX class with the three settings above."""
    import conversion.gptneox as gptneox
    from conversion.base import ModelBase, ModelType

    class MavGPTNeoX(gptneox.GPTNeoXModel):
        model_arch = gptneox.GPTNeoXModel.model_arch

        def set_vocab(self):
            self._set_vocab_sentencepiece()

        def set_gguf_parameters(self):
            rope = self.hparams.get("rope_parameters") or {}
            self.hparams.setdefault("rotary_pct", rope.get("partial_rotary_factor", 1.0))
            super().set_gguf_parameters()
            base = rope.get("rope_theta", self.hparams.get("rotary_emb_base", 10000.0))
            self.gguf_writer.add_rope_freq_base(float(base))

    ModelBase._model_classes[ModelType.TEXT]["GPTNeoXForCausalLM"] = MavGPTNeoX


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-cpp", required=True, help="the folder with convert_hf_to_gguf.py, conversion/, gguf-py/")
    a, rest = ap.parse_known_args()
    root = os.path.abspath(a.llama_cpp)
    if not os.path.isfile(os.path.join(root, "convert_hf_to_gguf.py")):
        print(f"error: {root} has no convert_hf_to_gguf.py (llama.cpp's converter)", file=sys.stderr)
        return 2
    sys.path[:0] = [root, os.path.join(root, "gguf-py")]
    import convert_hf_to_gguf

    patch_gpt_neox()
    sys.argv = [os.path.join(root, "convert_hf_to_gguf.py"), *rest]
    convert_hf_to_gguf.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
