"""Makes the Hugging Face fixture of `mavboard import hf` and its reference outputs, with transformers.

    python training/hf/make_fixture.py --tokenizer TOKENIZER.json --examples EXAMPLES.jsonl \
        --out tests/fixtures/hf/tiny_llama --reference tests/fixtures/hf/tiny_llama-reference

TOKENIZER.json is mavboard's vocabulary (`mavboard mav tokenizer -o TOKENIZER.json`) and EXAMPLES.jsonl MAV
examples and traces as mavboard writes them (`mavboard mav sample --count 40 --seed 3 -o EXAMPLES.jsonl`).
The model is a `LlamaForCausalLM` built by transformers with random weights (seeded; rotary base 1000, not the default; a wide initialisation
so that its logits are far from uniform, and random norm weights), saved with `save_pretrained` as any
model trained in transformers would be, with the tokenizer saved by `PreTrainedTokenizerFast`.

The reference is what transformers computes for the examples that fit `--max-tokens`, one row per token
position: the logits of the value tokens `<ctrl0>`..`<ctrl{K-1}>`, the logit of the next token of the text
(the end token after the last), the log-sum-exp of every logit, and the most likely id. PREFIX.json holds the
texts, their ids and the row layout; PREFIX.f32 the rows (little-endian float32).

With `--from-folder DIR` no model is built: the reference is what transformers computes with the model
saved in DIR (any causal LM it loads, e.g. a folder `mavboard package export-hf` wrote), and `--out` is not
written.

Needs torch and transformers (training/.venv with `pip install transformers`); run from anywhere, nothing
of it is imported by mavboard.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--out", help="the folder to write the built model to (not with --from-folder)")
    ap.add_argument("--from-folder", help="compute the reference with the model saved in this folder instead")
    ap.add_argument("--reference", required=True, help="the reference files' prefix (PREFIX.json, PREFIX.f32)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ff", type=int, default=64)
    ap.add_argument("--rope-theta", type=float, default=1000.0, help="not the default, so that it is read")
    ap.add_argument("--buckets", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--count", type=int, default=6, help="MAV examples")
    ap.add_argument("--traces", type=int, default=1, help="internal-search traces")
    a = ap.parse_args()

    with open(a.tokenizer) as f:
        vocab = json.load(f)["model"]["vocab"]
    tok = PreTrainedTokenizerFast(tokenizer_file=a.tokenizer, pad_token="<pad>", eos_token="<eos>",
                                  unk_token="<unk>", sep_token="<sep>")
    if a.from_folder:
        model = AutoModelForCausalLM.from_pretrained(a.from_folder, dtype=torch.float32).eval()
        source = a.from_folder
    elif a.out:
        model, source = build(a, vocab, tok), a.out
    else:
        raise SystemExit("give --out (build a model) or --from-folder (use a saved one)")
    reference(a, model, source, vocab, tok)


def build(a, vocab: dict, tok):
    """The random Llama fixture, saved to `a.out` with the tokenizer."""
    torch.manual_seed(a.seed)
    config = LlamaConfig(
        vocab_size=len(vocab), hidden_size=a.width, intermediate_size=a.ff, num_hidden_layers=a.layers,
        num_attention_heads=a.heads, num_key_value_heads=a.kv_heads, max_position_embeddings=1024,
        rms_norm_eps=1e-5, rope_theta=a.rope_theta, tie_word_embeddings=True, initializer_range=0.2,
        pad_token_id=vocab["<pad>"], eos_token_id=vocab["<eos>"], bos_token_id=None,
    )
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
    model.save_pretrained(a.out, safe_serialization=True)
    tok.save_pretrained(a.out)
    return model


def reference(a, model, source: str, vocab: dict, tok) -> None:
    """The reference rows of the examples that fit, written to PREFIX.json and PREFIX.f32."""
    value_ids = [vocab[f"<ctrl{i}>"] for i in range(a.buckets)]
    texts, ids, traces = [], [], 0
    with open(a.examples) as f:
        for line in f:
            ex = json.loads(line)
            t = tok(ex["text"], add_special_tokens=False)["input_ids"]
            if ex["ids"] != t:
                raise SystemExit(f"transformers tokenizes an example differently from mavboard: {ex['text'][:80]!r}")
            trace = ex["text"].startswith("Minimax") or "\nMinimax" in ex["text"]
            if len(t) > a.max_tokens or (trace and traces == a.traces) or (not trace and len(texts) - traces == a.count):
                continue
            texts.append(ex["text"])
            ids.append(t)
            traces += trace
    rows = []
    with torch.no_grad():
        for t in ids:
            logits = model(torch.tensor([t])).logits[0].double()
            nxt = t[1:] + [vocab["<eos>"]]
            for i in range(len(t)):
                row = logits[i]
                rows.append([*row[value_ids].tolist(), row[nxt[i]].item(), torch.logsumexp(row, 0).item(),
                             float(int(row.argmax()))])
    meta = {
        "made_with": f"transformers {__import__('transformers').__version__}, torch {torch.__version__}",
        "model": os.path.basename(os.path.normpath(source)), "seed": a.seed,
        "row": f"{a.buckets} value-token logits, the next token's logit, log-sum-exp, argmax id",
        "value_token_ids": value_ids, "texts": texts, "ids": ids,
    }
    with open(a.reference + ".json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    np.asarray(rows, dtype="<f4").tofile(a.reference + ".f32")
    print(f"{len(texts)} texts, {len(rows)} rows; model {source}")


if __name__ == "__main__":
    main()
