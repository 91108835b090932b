"""Pack a render dir's encoder records into compact binary files for shipping to a training machine.

`mavboard datagen render` writes encoder records as JSON lines (`enc_{split}.jsonl.zst`): easy to read
and check, but about 200 bytes per record compressed and slow to parse (Python reads ~5,000 records/s).
A packed split, `enc_{split}.pack`, holds the same records column by column in one xz-compressed NumPy
`.npz` (Python's own `lzma`, so a training machine needs no package beyond NumPy to read it) and loads in
seconds for hundreds of thousands of records:

| array | dtype | one entry per | meaning |
| --- | --- | --- | --- |
| `ids_len` | uint32 | record | number of token ids |
| `ids` | uint16 | token | all records' `ids`, concatenated |
| `moves_len` | uint32 | record | number of candidate moves |
| `move_pos` | uint16 | move | all records' `move_pos`, concatenated |
| `buckets` | uint8 | move | value bucket of each move |
| `wp` | uint16 | move | win probability × 65535, rounded (error ≤ 7.7e-6) |
| `best` | uint16 | record | index of the best move among the record's moves |

`python -m mavtrain.pack --data DIR` writes `enc_train.pack` and `enc_val.pack` beside the JSON lines
(`--out DIR2` writes them, with `meta.json` and `tokenizer.json`, to another folder, which is then a
complete data dir). Training reads a `.pack` split only when no `.jsonl[.zst]` one is there.

`--lm` packs the text examples instead (`--lm --enc` both): `lm_{split}.pack`, each example tokenized
once here with the data dir's tokenizer, as training would (prompt ids + target ids + `<eos>`), so that a
training machine loads token ids instead of tokenizing text (minutes of one core for 200,000 examples):

| array | dtype | one entry per | meaning |
| --- | --- | --- | --- |
| `seq_len` | uint32 | example | tokens of the sequence (prompt + target + `<eos>`) |
| `prompt_len` | uint32 | example | tokens of the prompt (the loss starts there) |
| `ids` | uint16 | token | all sequences, concatenated |
| `kind` | uint8 | example | index into `kinds` |
| `kinds` | str | kind | the example kinds (`mav`, `search`) |

Examples longer than the model's context and examples with an empty target are kept in the pack and left
out (and counted) when it is loaded, as the JSON lines are.
"""

from __future__ import annotations

import argparse
import io
import lzma
import os
import shutil
import sys

import numpy as np

from . import data as D

WP_SCALE = 65535
PACK_SUFFIX = ".pack"


def pack_records(records) -> dict:
    """Column arrays (see the module docstring) of an iterable of encoder records."""
    ids_len, ids, moves_len, move_pos, buckets, wp, best = [], [], [], [], [], [], []
    for n, rec in enumerate(records):
        try:
            r_ids, r_mp, r_b, r_wp, r_best = rec["ids"], rec["move_pos"], rec["buckets"], rec["wp"], rec["best"]
        except KeyError as e:
            raise D.DataError(f"record {n + 1} lacks {e}; re-render the data") from e
        if not (len(r_mp) == len(r_b) == len(r_wp)) or not r_mp:
            raise D.DataError(f"record {n + 1} has move_pos/buckets/wp of lengths {len(r_mp)}/{len(r_b)}/{len(r_wp)}")
        ids_len.append(len(r_ids))
        ids.extend(r_ids)
        moves_len.append(len(r_mp))
        move_pos.extend(r_mp)
        buckets.extend(r_b)
        wp.extend(r_wp)
        best.append(r_best)
    cols = {
        "ids_len": np.asarray(ids_len, dtype=np.int64),
        "ids": np.asarray(ids, dtype=np.int64),
        "moves_len": np.asarray(moves_len, dtype=np.int64),
        "move_pos": np.asarray(move_pos, dtype=np.int64),
        "buckets": np.asarray(buckets, dtype=np.int64),
        "wp": np.rint(np.clip(np.asarray(wp, dtype=np.float64), 0.0, 1.0) * WP_SCALE),
        "best": np.asarray(best, dtype=np.int64),
    }
    limits = {"ids": 65535, "move_pos": 65535, "buckets": 255, "best": 65535, "ids_len": 2**32 - 1, "moves_len": 2**32 - 1}
    for key, hi in limits.items():
        a = cols[key]
        if a.size and (a.min() < 0 or a.max() > hi):
            raise D.DataError(f"{key} holds {int(a.min())}..{int(a.max())}, outside what a pack stores (0..{hi})")
    types = {"ids_len": np.uint32, "ids": np.uint16, "moves_len": np.uint32, "move_pos": np.uint16, "buckets": np.uint8, "wp": np.uint16, "best": np.uint16}
    return {k: cols[k].astype(t) for k, t in types.items()}


def write_pack(cols: dict, path: str, level: int = 6) -> None:
    """Write column arrays as an xz-compressed `.npz` (atomically: a temporary file, then a rename)."""
    buf = io.BytesIO()
    np.savez(buf, **cols)
    blob = lzma.compress(buf.getvalue(), preset=level)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)


def read_columns(path: str, names: set, command: str) -> dict:
    """The column arrays of a `.pack` file, which must hold `names`; DataError names the file, and the
    `command` that writes it again, when it is not a readable pack or lacks one of them."""
    try:
        with open(path, "rb") as f:
            raw = lzma.decompress(f.read())
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            cols = {k: z[k] for k in z.files}
    except (lzma.LZMAError, ValueError, OSError) as e:
        raise D.DataError(f"{path} is not a readable pack ({e}); write it again with {command}") from e
    missing = names - set(cols)
    if missing:
        raise D.DataError(f"{path} lacks the arrays {sorted(missing)}; write it again with {command}")
    return cols


def read_pack(path: str) -> dict:
    """The column arrays of an encoder `.pack` file; DataError names the file when it is not one."""
    cols = read_columns(path, {"ids_len", "ids", "moves_len", "move_pos", "buckets", "wp", "best"}, "python -m mavtrain.pack")
    n = len(cols["ids_len"])
    if len(cols["moves_len"]) != n or len(cols["best"]) != n:
        raise D.DataError(f"{path}: ids_len, moves_len and best disagree on the number of records")
    if int(cols["ids_len"].sum(dtype=np.int64)) != len(cols["ids"]):
        raise D.DataError(f"{path}: ids_len does not sum to the number of ids")
    m = int(cols["moves_len"].sum(dtype=np.int64))
    if not (len(cols["move_pos"]) == len(cols["buckets"]) == len(cols["wp"]) == m):
        raise D.DataError(f"{path}: moves_len does not sum to the number of move_pos/buckets/wp entries")
    return cols


def load_enc_pack(path: str, num_buckets: int, max_len: int, limit: int | None = None) -> D.EncData:
    """An encoder split from a `.pack` file, checked as `data.load_enc_split` checks JSON lines."""
    c = read_pack(path)
    n = len(c["ids_len"]) if limit is None else min(limit, len(c["ids_len"]))
    id_ends = np.cumsum(c["ids_len"][:n], dtype=np.int64)
    mv_ends = np.cumsum(c["moves_len"][:n], dtype=np.int64)
    ids = np.split(c["ids"][: id_ends[-1] if n else 0].astype(np.int64), id_ends[:-1])
    mp = np.split(c["move_pos"][: mv_ends[-1] if n else 0].astype(np.int64), mv_ends[:-1])
    bk = np.split(c["buckets"][: mv_ends[-1] if n else 0].astype(np.int64), mv_ends[:-1])
    wp = np.split((c["wp"][: mv_ends[-1] if n else 0].astype(np.float32) / WP_SCALE), mv_ends[:-1])
    best = c["best"][:n].astype(np.int64)
    if n == 0:
        return D.EncData([], [], [], [], np.zeros(0, dtype=np.int64), 0)
    if (c["moves_len"][:n] == 0).any():
        r = int(np.argmax(c["moves_len"][:n] == 0))
        raise D.DataError(f"{path}: record {r + 1} has no moves")
    if (best >= c["moves_len"][:n]).any():
        r = int(np.argmax(best >= c["moves_len"][:n]))
        raise D.DataError(f"{path}: record {r + 1} has best={best[r]} outside its {c['moves_len'][r]} moves")
    if c["buckets"].size and int(c["buckets"].max()) >= num_buckets:
        raise D.DataError(f"{path}: a bucket is outside 0..{num_buckets - 1}")
    keep = []
    for i in range(n):
        if len(mp[i]) and int(mp[i].max()) >= len(ids[i]):
            raise D.DataError(f"{path}: record {i + 1} has a move_pos outside its ids")
        if len(ids[i]) <= max_len:
            keep.append(i)
    too_long = n - len(keep)
    if too_long:
        ids, mp, bk, wp = ([x[i] for i in keep] for x in (ids, mp, bk, wp))
        best = best[keep]
    return D.EncData(list(ids), list(mp), list(bk), list(wp), best, too_long)


def pack_lm_records(records, tokenizer, eos_id: int, src: str = "the data") -> dict:
    """Column arrays (see the module docstring) of an iterable of text examples, tokenized."""
    seq_len, prompt_len, ids, kind, kinds = [], [], [], [], {}
    for seq, plen, k in D.tokenize_lm(records, tokenizer, eos_id, src):
        seq_len.append(len(seq))
        prompt_len.append(plen)
        ids.append(seq)
        kind.append(kinds.setdefault(k, len(kinds)))
    flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    if flat.size and (flat.min() < 0 or flat.max() > 65535):
        raise D.DataError(f"{src}: token ids reach {int(flat.max())}, more than a pack stores (0..65535)")
    if len(kinds) > 255:
        raise D.DataError(f"{src}: {len(kinds)} example kinds, more than a pack stores (255)")
    return {
        "seq_len": np.asarray(seq_len, dtype=np.uint32),
        "prompt_len": np.asarray(prompt_len, dtype=np.uint32),
        "ids": flat.astype(np.uint16),
        "kind": np.asarray(kind, dtype=np.uint8),
        "kinds": np.asarray(list(kinds), dtype=str),
    }


def load_lm_pack(path: str, context_length: int, limit: int | None = None) -> D.LMData:
    """A text split from a `.pack` file (`--lm`), with the same examples `data.load_lm_split` keeps."""
    c = read_columns(path, {"seq_len", "prompt_len", "ids", "kind", "kinds"}, "python -m mavtrain.pack --lm")
    n = len(c["seq_len"])
    if len(c["prompt_len"]) != n or len(c["kind"]) != n:
        raise D.DataError(f"{path}: seq_len, prompt_len and kind disagree on the number of examples")
    if int(c["seq_len"].sum(dtype=np.int64)) != len(c["ids"]):
        raise D.DataError(f"{path}: seq_len does not sum to the number of ids")
    if n and (int(c["kind"].max()) >= len(c["kinds"]) or (c["prompt_len"] >= c["seq_len"]).any()):
        raise D.DataError(f"{path}: an example names a kind that is not listed, or its prompt is not shorter than its sequence")
    m = n if limit is None else min(limit, n)
    seq_len = c["seq_len"][:m].astype(np.int64)
    plen = c["prompt_len"][:m].astype(np.int64)
    starts = np.zeros(m, dtype=np.int64)
    if m > 1:
        np.cumsum(seq_len[:-1], out=starts[1:])
    empty = seq_len - plen - 1 == 0
    too_long = (seq_len > context_length) & ~empty
    keep = np.flatnonzero(~empty & ~too_long)
    lens = seq_len[keep]
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    # every kept sequence's token positions in the pack's flat array
    pos = np.repeat(starts[keep] - offsets[:-1], lens) + np.arange(int(offsets[-1]), dtype=np.int64)
    tokens = c["ids"][pos].astype(np.int32)
    names = [str(k) for k in c["kinds"]]
    kind_of = [names[k] for k in c["kind"][:m][keep]]
    kinds: dict = {}
    for k in kind_of:
        kinds[k] = kinds.get(k, 0) + 1
    return D.LMData(tokens, offsets, plen[keep].astype(np.int32), kinds, int(too_long.sum()), int(empty.sum()), kind_of)


def pack_dir(data_dir: str, out_dir: str | None = None, level: int = 6, enc: bool = True, lm: bool = False) -> dict:
    """Pack the `enc_{split}.jsonl[.zst]` (when `enc`) and `lm_{split}.jsonl[.zst]` (when `lm`) splits of a
    data dir at xz preset `level`; returns {file name: (records, bytes)}."""
    out_dir = out_dir or data_dir
    os.makedirs(out_dir, exist_ok=True)
    done = {}
    for prefix, wanted in (("enc", enc), ("lm", lm)):
        if not wanted:
            continue
        found = False
        for split in ("train", "val"):
            src = D.split_path(data_dir, prefix, split)
            if src is None:
                continue
            found = True
            if prefix == "enc":
                cols = pack_records(D.iter_jsonl(src))
                dst = os.path.join(out_dir, f"enc_{split}{PACK_SUFFIX}")
                write_pack(cols, dst, level)
                n = len(cols["ids_len"])
            else:
                meta = D.read_meta(data_dir)
                tokenizer = D.load_tokenizer(data_dir, meta)
                eos = D.special_ids(tokenizer, meta["num_buckets"])["eos"]
                cols = pack_lm_records(D.iter_jsonl(src), tokenizer, eos, src)
                dst = os.path.join(out_dir, f"lm_{split}{PACK_SUFFIX}")
                write_pack(cols, dst, level)
                n = len(cols["seq_len"])
            done[os.path.basename(dst)] = (n, os.path.getsize(dst))
        if not found:
            raise D.DataError(f"no {prefix}_train.jsonl[.zst] in {data_dir}; render it with mavboard datagen render")
    if os.path.abspath(out_dir) != os.path.abspath(data_dir):
        meta = D.read_meta(data_dir)
        for name in ("meta.json", meta["tokenizer"]):
            shutil.copyfile(os.path.join(data_dir, name), os.path.join(out_dir, name))
    return done


def main(argv=None) -> int:
    """The command line; returns the exit status (2 on a reported error)."""
    ap = argparse.ArgumentParser(prog="python -m mavtrain.pack", description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="data dir written by `mavboard datagen render`")
    ap.add_argument("--out", help="write the packs (with meta.json and the tokenizer) here instead")
    ap.add_argument("--level", type=int, default=6, help="xz preset, 0-9 (default 6)")
    ap.add_argument("--lm", action="store_true", help="pack the text examples, tokenized (lm_{split}.pack)")
    ap.add_argument("--enc", action="store_true", help="with --lm: pack the encoder records too")
    args = ap.parse_args(argv)
    enc = args.enc or not args.lm
    try:
        done = pack_dir(args.data, args.out, args.level, enc=enc, lm=args.lm)
    except (D.DataError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for name, (n, size) in done.items():
        print(f"{name}: {n:,} records, {size:,} bytes ({size / max(n, 1):.0f} bytes/record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
