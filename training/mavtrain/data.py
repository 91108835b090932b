"""Reading a data dir written by `mavboard datagen render`.

The MAV text format is defined once, in mavboard's Rust code (crates/core/src/mav/). This module never formats
MAV text: it reads the rendered examples and the tokenizer.json that mavboard exported, tokenizes
them, and serves deterministic mini-batches.

Data order: the examples of a split are visited epoch by epoch; epoch `e` uses the permutation
drawn from `numpy.random.default_rng([seed, e])`. Micro-batch number `m` (counted from the start
of training) is therefore a pure function of (seed, m), so a resumed run sees exactly the batches
the uninterrupted run would have seen.

With a kind mix (`train.kind_mix`, e.g. 60 % MAV and 40 % internal-search traces as in the paper),
each micro-batch holds examples of one kind, drawn with the mix's weights from
`default_rng([seed, KIND_SALT, m])`; within a kind the examples follow that kind's own epoch
permutations, indexed by `m` as above (so a kind drawn for a share w of the batches sees a random
share w of each of its epochs). One kind per batch also keeps padding low: traces are several
times longer than MAV examples. This too is a pure function of (seed, m).
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np


class DataError(Exception):
    """A data dir that does not follow the contract; the message names the file and the fix."""


# ---------------------------------------------------------------------------------------------
# files


def read_meta(data_dir: str) -> dict:
    """Load and check `meta.json`."""
    path = os.path.join(data_dir, "meta.json")
    if not os.path.exists(path):
        raise DataError(
            f"{path} not found: point --data at a folder written by `mavboard datagen render`"
        )
    with open(path, encoding="utf-8") as f:
        meta = json.load(f)
    for key in ("num_buckets", "games"):
        if key not in meta:
            raise DataError(f"{path} lacks the key {key!r}; re-render the data with mavboard")
    return meta


def split_path(data_dir: str, prefix: str, split: str) -> str | None:
    """The path of `{prefix}_{split}.jsonl` or `.jsonl.zst`, or None when neither exists."""
    for suffix in (".jsonl", ".jsonl.zst"):
        path = os.path.join(data_dir, f"{prefix}_{split}{suffix}")
        if os.path.exists(path):
            return path
    return None


def iter_jsonl(path: str) -> Iterator[dict]:
    """Yield the JSON objects of a `.jsonl` or zstd-compressed `.jsonl.zst` file."""
    if path.endswith(".zst"):
        import zstandard

        raw = open(path, "rb")
        stream = zstandard.ZstdDecompressor().stream_reader(raw)
        text = io.TextIOWrapper(stream, encoding="utf-8")
    else:
        raw = None
        text = open(path, encoding="utf-8")
    try:
        for lineno, line in enumerate(text, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{lineno}: not valid JSON ({e}); re-render the data") from e
    finally:
        text.close()
        if raw is not None:
            raw.close()


def load_tokenizer(data_dir: str, meta: dict):
    """The HF `tokenizers.Tokenizer` that mavboard exported."""
    from tokenizers import Tokenizer

    path = os.path.join(data_dir, meta.get("tokenizer", "tokenizer.json"))
    if not os.path.exists(path):
        raise DataError(f"{path} not found: `mavboard datagen render` writes it beside meta.json")
    return Tokenizer.from_file(path)


def special_ids(tokenizer, num_buckets: int) -> dict:
    """Ids of `<pad>`, `<eos>`, `<unk>` and the value tokens `<ctrl0>`..`<ctrl{K-1}>`."""
    out = {}
    for name, tok in (("pad", "<pad>"), ("eos", "<eos>"), ("unk", "<unk>")):
        i = tokenizer.token_to_id(tok)
        if i is None:
            raise DataError(f"tokenizer.json has no {tok} token; re-export it with mavboard")
        out[name] = i
    values = []
    for k in range(num_buckets):
        i = tokenizer.token_to_id(f"<ctrl{k}>")
        if i is None:
            raise DataError(
                f"tokenizer.json has no <ctrl{k}> value token but meta.json says "
                f"num_buckets={num_buckets}; re-render data and tokenizer together"
            )
        values.append(i)
    out["values"] = values
    return out


# ---------------------------------------------------------------------------------------------
# batching order


def batch_indices(n: int, batch_size: int, seed: int, micro_step: int) -> np.ndarray:
    """Example indices of micro-batch `micro_step` (see the module docstring)."""
    if n == 0:
        raise DataError("the training split has no usable examples")
    per_epoch = max(1, n // batch_size)  # drop the last partial batch of each epoch
    epoch, within = divmod(micro_step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    if n < batch_size:  # tiny data: repeat the permutation to fill one batch
        perm = np.resize(perm, batch_size)
    return perm[within * batch_size : (within + 1) * batch_size]


KIND_SALT = 0x6B696E64  # "kind": separates the kind draw from the permutations' seeds


def check_kind_mix(mix: dict, kinds: dict) -> dict:
    """The mix's weights normalised to sum 1; a DataError names a kind the data lacks or a bad weight."""
    if not mix:
        raise DataError("train.kind_mix is empty; leave it out (or null) to sample examples uniformly")
    out = {}
    for kind, w in mix.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or not w > 0:
            raise DataError(f"train.kind_mix: the weight of {kind!r} must be a positive number, not {w!r}")
        if kinds.get(kind, 0) == 0:
            have = ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items())) or "none"
            raise DataError(
                f"train.kind_mix asks for {kind!r} examples but the training split has none (it has: {have}); "
                "render them (`datagen render --search-share` for 'search') or drop the kind from the mix"
            )
        out[kind] = float(w)
    total = sum(out.values())
    return {k: w / total for k, w in out.items()}


def mixed_batch_indices(groups: dict, weights: dict, batch_size: int, seed: int, micro_step: int) -> np.ndarray:
    """Example indices of micro-batch `micro_step` under a kind mix (see the module docstring).

    `groups` maps each kind to the indices of its examples; `weights` (from `check_kind_mix`) to its
    share of the batches. Kinds are taken in sorted order, so the draw does not depend on dict order.
    """
    kinds = sorted(weights)
    p = np.asarray([weights[k] for k in kinds], dtype=np.float64)
    kind = kinds[int(np.random.default_rng([seed, KIND_SALT, micro_step]).choice(len(kinds), p=p / p.sum()))]
    members = groups[kind]
    # each kind gets its own permutation stream: seed mixed with the kind's position in the sorted list
    local = batch_indices(len(members), batch_size, seed * 1009 + kinds.index(kind) + 1, micro_step)
    return members[local]


# ---------------------------------------------------------------------------------------------
# MAV-LM examples


@dataclass
class LMData:
    """Tokenized LM examples of one split, packed in flat arrays."""

    tokens: np.ndarray  # int32, all sequences concatenated
    offsets: np.ndarray  # int64 [n+1]
    prompt_lens: np.ndarray  # int32 [n]: loss starts at this index of each sequence
    kinds: dict = field(default_factory=dict)  # kind -> count of kept examples
    skipped_too_long: int = 0
    skipped_empty: int = 0
    kind_of: list = field(default_factory=list)  # kind of each kept example, in order

    def kind_groups(self) -> dict:
        """kind -> int64 indices of that kind's examples."""
        arr = np.asarray(self.kind_of)
        return {k: np.flatnonzero(arr == k).astype(np.int64) for k in self.kinds}

    def __len__(self) -> int:
        return len(self.prompt_lens)

    @property
    def num_tokens(self) -> int:
        return int(self.offsets[-1])

    def seq(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i] : self.offsets[i + 1]]


def tokenize_lm(records, tokenizer, eos_id: int, source: str) -> Iterator[tuple]:
    """(sequence, prompt length, kind) of each text example: sequence = prompt ids + target ids + [eos] as an
    int64 array, tokenized in batches of 4,096; DataError names `source` and the example that lacks a text
    prompt or target."""
    chunk: list[dict] = []

    def flush():
        prompts = tokenizer.encode_batch([r["prompt"] for r in chunk], add_special_tokens=False)
        targets = tokenizer.encode_batch([r["target"] for r in chunk], add_special_tokens=False)
        out = [
            (np.asarray(p.ids + t.ids + [eos_id], dtype=np.int64), len(p.ids), rec.get("kind", "mav"))
            for rec, p, t in zip(chunk, prompts, targets)
        ]
        chunk.clear()
        return out

    for n, rec in enumerate(records, start=1):
        if not isinstance(rec.get("prompt"), str) or not isinstance(rec.get("target"), str):
            raise DataError(f"{source}: example {n} lacks a text prompt or target; re-render the data")
        chunk.append(rec)
        if len(chunk) >= 4096:
            yield from flush()
    if chunk:
        yield from flush()


def load_lm_split(path: str, tokenizer, eos_id: int, context_length: int, limit: int | None = None) -> LMData:
    """Tokenize `lm_*.jsonl[.zst]`: sequence = prompt ids + target ids + [eos], loss on target+eos."""
    seqs: list[np.ndarray] = []
    plens: list[int] = []
    kinds: dict = {}
    kind_of: list[str] = []
    too_long = 0
    empty = 0
    records = iter_jsonl(path) if limit is None else itertools.islice(iter_jsonl(path), limit)
    for seq, plen, k in tokenize_lm(records, tokenizer, eos_id, path):
        if len(seq) == plen + 1:
            empty += 1
            continue
        if len(seq) > context_length:
            too_long += 1
            continue
        seqs.append(seq.astype(np.int32))
        plens.append(plen)
        kinds[k] = kinds.get(k, 0) + 1
        kind_of.append(k)
    lens = np.asarray([len(s) for s in seqs], dtype=np.int64)
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    tokens = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int32)
    return LMData(tokens, offsets, np.asarray(plens, dtype=np.int32), kinds, too_long, empty, kind_of)


def lm_batch(data: LMData, idx: np.ndarray, pad_id: int):
    """Right-padded batch: (input_ids [B,T], labels [B,T]) with labels -100 where no loss.

    Position t predicts token t+1; labels[t] = seq[t+1] when t+1 is a target or eos index.
    """
    lens = [int(data.offsets[i + 1] - data.offsets[i]) for i in idx]
    T = max(lens) - 1
    inp = np.full((len(idx), T), pad_id, dtype=np.int64)
    lab = np.full((len(idx), T), -100, dtype=np.int64)
    for r, i in enumerate(idx):
        s = data.seq(int(i)).astype(np.int64)
        n = len(s) - 1
        inp[r, :n] = s[:-1]
        p = int(data.prompt_lens[i])
        # targets are s[p:], predicted from positions p-1 .. n-1
        start = max(p - 1, 0)
        lab[r, start:n] = s[start + 1 : n + 1]
    return inp, lab


# ---------------------------------------------------------------------------------------------
# MAV encoder examples


@dataclass
class EncData:
    """Encoder examples of one split."""

    ids: list  # list of int64 arrays
    move_pos: list
    buckets: list
    wp: list
    best: np.ndarray
    skipped_too_long: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def num_tokens(self) -> int:
        return int(sum(len(x) for x in self.ids))


def load_enc_split(path: str, num_buckets: int, max_len: int, limit: int | None = None) -> EncData:
    ids, mp, bk, wp, best = [], [], [], [], []
    too_long = 0
    for n, rec in enumerate(iter_jsonl(path)):
        if limit is not None and n >= limit:
            break
        try:
            r_ids, r_mp, r_b, r_wp, r_best = rec["ids"], rec["move_pos"], rec["buckets"], rec["wp"], rec["best"]
        except KeyError as e:
            raise DataError(f"{path}: record {n + 1} lacks {e}; re-render the data") from e
        if not (len(r_mp) == len(r_b) == len(r_wp)) or len(r_mp) == 0:
            raise DataError(
                f"{path}: record {n + 1} has move_pos/buckets/wp of lengths "
                f"{len(r_mp)}/{len(r_b)}/{len(r_wp)}; they must be equal and non-zero"
            )
        if not 0 <= r_best < len(r_mp):
            raise DataError(f"{path}: record {n + 1} has best={r_best} outside its {len(r_mp)} moves")
        if max(r_mp) >= len(r_ids) or min(r_mp) < 0:
            raise DataError(f"{path}: record {n + 1} has a move_pos outside its ids")
        if min(r_b) < 0 or max(r_b) >= num_buckets:
            raise DataError(f"{path}: record {n + 1} has a bucket outside 0..{num_buckets - 1}")
        if len(r_ids) > max_len:
            too_long += 1
            continue
        ids.append(np.asarray(r_ids, dtype=np.int64))
        mp.append(np.asarray(r_mp, dtype=np.int64))
        bk.append(np.asarray(r_b, dtype=np.int64))
        wp.append(np.clip(np.asarray(r_wp, dtype=np.float32), 0.0, 1.0))
        best.append(r_best)
    return EncData(ids, mp, bk, wp, np.asarray(best, dtype=np.int64), too_long)


def enc_batch(data: EncData, idx: np.ndarray, pad_id: int):
    """Right-padded encoder batch.

    Returns input_ids [B,T], attention_mask [B,T], move_pos [B,M] (padded with 0),
    move_mask [B,M] bool, buckets [B,M], wp [B,M], best [B].
    """
    B = len(idx)
    T = max(len(data.ids[i]) for i in idx)
    M = max(len(data.move_pos[i]) for i in idx)
    inp = np.full((B, T), pad_id, dtype=np.int64)
    att = np.zeros((B, T), dtype=np.int64)
    mpos = np.zeros((B, M), dtype=np.int64)
    mmask = np.zeros((B, M), dtype=bool)
    bk = np.zeros((B, M), dtype=np.int64)
    wp = np.zeros((B, M), dtype=np.float32)
    for r, i in enumerate(idx):
        s = data.ids[i]
        inp[r, : len(s)] = s
        att[r, : len(s)] = 1
        m = len(data.move_pos[i])
        mpos[r, :m] = data.move_pos[i]
        mmask[r, :m] = True
        bk[r, :m] = data.buckets[i]
        wp[r, :m] = data.wp[i]
    return inp, att, mpos, mmask, bk, wp, data.best[idx].astype(np.int64)


# ---------------------------------------------------------------------------------------------
# action-value examples


AV_STATE_LEN = 77


@dataclass
class AVData:
    """Action-value examples: one (state, action, bucket) triple per legal move."""

    states: np.ndarray  # int32 [positions, 77]
    pos_index: np.ndarray  # int64 [n]: row of `states`
    actions: np.ndarray  # int64 [n]
    buckets: np.ndarray  # int64 [n]

    def __len__(self) -> int:
        return len(self.actions)


def load_av_split(path: str, state_vocab: int, action_vocab: int, num_buckets: int, limit: int | None = None) -> AVData:
    states, pos, acts, bks = [], [], [], []
    for n, rec in enumerate(iter_jsonl(path)):
        if limit is not None and n >= limit:
            break
        try:
            s, a, b = rec["state_ids"], rec["action_ids"], rec["buckets"]
        except KeyError as e:
            raise DataError(f"{path}: record {n + 1} lacks {e}; re-render the data") from e
        if len(s) != AV_STATE_LEN:
            raise DataError(f"{path}: record {n + 1} has {len(s)} state ids, expected {AV_STATE_LEN}")
        if len(a) != len(b) or not a:
            raise DataError(f"{path}: record {n + 1} has {len(a)} actions but {len(b)} buckets")
        if min(s) < 0 or max(s) >= state_vocab:
            raise DataError(f"{path}: record {n + 1} has a state id outside 0..{state_vocab - 1} (meta av_state_vocab_size)")
        if min(a) < 0 or max(a) >= action_vocab:
            raise DataError(f"{path}: record {n + 1} has an action id outside 0..{action_vocab - 1}")
        if min(b) < 0 or max(b) >= num_buckets:
            raise DataError(f"{path}: record {n + 1} has a bucket outside 0..{num_buckets - 1}")
        row = len(states)
        states.append(np.asarray(s, dtype=np.int32))
        pos.extend([row] * len(a))
        acts.extend(a)
        bks.extend(b)
    st = np.stack(states) if states else np.zeros((0, AV_STATE_LEN), dtype=np.int32)
    return AVData(st, np.asarray(pos, dtype=np.int64), np.asarray(acts, dtype=np.int64), np.asarray(bks, dtype=np.int64))


def av_batch(data: AVData, idx: np.ndarray):
    """input_ids [B,78] (77 state ids then the action id) and bucket targets [B]."""
    inp = np.empty((len(idx), AV_STATE_LEN + 1), dtype=np.int64)
    inp[:, :AV_STATE_LEN] = data.states[data.pos_index[idx]]
    inp[:, AV_STATE_LEN] = data.actions[idx]
    return inp, data.buckets[idx]
