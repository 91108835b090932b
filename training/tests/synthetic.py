"""TEST-ONLY synthetic data dirs shaped like the output of `mavboard datagen render`.

The prompts and targets are random words, not MAV text: training never formats MAV text (mavboard
does), so the tests only need data with the contract's *shape* (files, keys, id ranges). Nothing
here may be used to train a model that ships.
"""

from __future__ import annotations

import json
import os

import numpy as np

K = 64
AV_K = 128
AV_STATE_VOCAB = 32
AV_ACTIONS = 1968
WORDS = [f"w{i}" for i in range(40)]


def write_tokenizer(path: str) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    for k in range(K):
        vocab[f"<ctrl{k}>"] = len(vocab)
    for w in WORDS:
        vocab[w] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(path)
    return vocab


def _write_jsonl(path: str, records) -> None:
    text = "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")
    if path.endswith(".zst"):
        import zstandard

        text = zstandard.ZstdCompressor().compress(text)
    with open(path, "wb") as f:
        f.write(text)


def lm_records(rng, n, search_every=4, prompt_words=(3, 30)):
    out = []
    for i in range(n):
        p = " ".join(rng.choice(WORDS, size=rng.integers(*prompt_words)))
        t = " ".join(list(rng.choice(WORDS, size=rng.integers(1, 6))) + [f"<ctrl{rng.integers(0, K)}>"])
        kind = "search" if search_every and i % search_every == 0 else "mav"
        out.append({"prompt": p, "target": t, "kind": kind, "source": "game"})
    return out


def enc_records(rng, n, vocab_size, state_len=(4, 12), num_moves=(1, 7)):
    out = []
    for _ in range(n):
        state = rng.integers(3 + K, vocab_size, size=rng.integers(*state_len)).tolist()
        moves = int(rng.integers(*num_moves))
        ids = state + [1] + rng.integers(3 + K, vocab_size, size=moves).tolist()
        move_pos = list(range(len(state) + 1, len(ids)))
        wp = rng.random(moves).round(4).tolist()
        buckets = [min(K - 1, int(w * K)) for w in wp]
        out.append({"ids": ids, "move_pos": move_pos, "buckets": buckets, "wp": wp, "best": int(np.argmax(wp))})
    return out


def av_records(rng, n):
    out = []
    for _ in range(n):
        moves = int(rng.integers(1, 8))
        out.append(
            {
                "state_ids": rng.integers(0, AV_STATE_VOCAB, size=77).tolist(),
                "action_ids": rng.integers(0, AV_ACTIONS, size=moves).tolist(),
                "buckets": rng.integers(0, AV_K, size=moves).tolist(),
            }
        )
    return out


def make_data_dir(path: str, n_train: int = 64, n_val: int = 16, seed: int = 0, search_every: int = 4, prompt_words=(3, 30), state_len=(4, 12), num_moves=(1, 7)) -> str:
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    vocab = write_tokenizer(os.path.join(path, "tokenizer.json"))
    meta = {
        "num_buckets": K,
        "av_num_buckets": AV_K,
        "tokenizer": "tokenizer.json",
        "av_state_vocab_size": AV_STATE_VOCAB,
        "av_action_vocab_size": AV_ACTIONS,
        "games": ["chess"],
        "source": {"synthetic": "test-only random data from training/tests/synthetic.py"},
    }
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta, f)
    # train splits compressed, val splits plain: both file forms get exercised
    _write_jsonl(os.path.join(path, "lm_train.jsonl.zst"), lm_records(rng, n_train, search_every, prompt_words))
    _write_jsonl(os.path.join(path, "lm_val.jsonl"), lm_records(rng, n_val, search_every, prompt_words))
    _write_jsonl(os.path.join(path, "enc_train.jsonl.zst"), enc_records(rng, n_train, len(vocab), state_len, num_moves))
    _write_jsonl(os.path.join(path, "enc_val.jsonl"), enc_records(rng, n_val, len(vocab), state_len, num_moves))
    _write_jsonl(os.path.join(path, "av_train.jsonl.zst"), av_records(rng, n_train))
    _write_jsonl(os.path.join(path, "av_val.jsonl"), av_records(rng, n_val))
    return path


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="write a TEST-ONLY synthetic data dir")
    ap.add_argument("out")
    ap.add_argument("--train", type=int, default=2000)
    ap.add_argument("--val", type=int, default=200)
    ap.add_argument(
        "--long",
        action="store_true",
        help="longer sequences for throughput measurements: LM prompts of 150-350 tokens, "
        "encoder inputs of 60-70 state tokens + 20-40 moves",
    )
    a = ap.parse_args()
    if a.long:
        make_data_dir(a.out, a.train, a.val, prompt_words=(150, 350), state_len=(60, 71), num_moves=(20, 41))
    else:
        make_data_dir(a.out, a.train, a.val)
    print(f"wrote {a.out}")
